# shellcheck shell=bash
# tests/e2e/exec-fd-limit.sh — a run needs a few open files per instance:
# under a hard limit too low for it the run fails at start with the number
# it needs (exit 69) and starts nothing; with only the soft limit low it
# raises that and every instance is monitored to its end.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

f=$(composition many <<'EOF2'
metadata: {name: fd-limit}
global:
  plan: placebo
  case: barrier
  runner: local:exec
  run: {test_params: {rounds: 4, round_time: 200ms}}
groups:
  - id: g
    instances: {count: 60}
EOF2
)

# A hard limit of 300 open files: far fewer than 60 instances need.
id=runid-fdlow
(
    ulimit -n 300 || exit 99
    exec "$TY" run --plans plans --runs "$RUNS" --run-id "$id" --no-progress "$f"
) >"$RUNS/$id.log" 2>&1
rc=$?
check_eq "hard limit 300: exit status 69" "$rc" 69
check "the message gives the number needed and the limit" \
    grep -q "^testyard: this run needs 1264 open files .* the limit is 300: raise it (ulimit -n 1264)" \
    "$RUNS/$id.log"
check_eq "in one line" "$(wc -l <"$RUNS/$id.log")" 1
check "no run folder" [ ! -e "$RUNS/$id" ]
check_eq "no process of the run" "$(procs_of_run "$id")" 0
[ "$rc" = 69 ] || show_log "$id"

# Only the soft limit low: the run raises it and monitors everyone.
id=runid-fdsoft
(
    ulimit -Sn 300 && ulimit -Hn 8192 || exit 99
    exec "$TY" run --plans plans --runs "$RUNS" --run-id "$id" --no-progress "$f"
) >"$RUNS/$id.log" 2>&1
rc=$?
check_eq "soft limit 300: exit status 0" "$rc" 0
check_eq "every instance has memory samples" \
    "$(result "$id" '[.instances[] | select(.memory.samples > 0)] | length')" 60
check_eq "no instance lost by the monitor" \
    "$(result "$id" '[.instances[] | select(.monitor_lost != null)] | length')" 0
check "every instance's memory.csv is complete" \
    [ "$(find "$RUNS/$id/g" -name memory.csv | wc -l)" -eq 60 ]
[ "$rc" = 0 ] || show_log "$id"

finish
