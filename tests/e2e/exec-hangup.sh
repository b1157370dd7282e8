# shellcheck shell=bash
# tests/e2e/exec-hangup.sh — a run whose terminal is closed (SIGHUP) or
# whose stdout pipe loses its reader is canceled like SIGTERM: every
# instance is stopped, nothing is left running and result.json says
# canceled (the run's deadline would say timeout).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

f=$(composition stall <<'EOF2'
metadata: {name: hangup}
global:
  plan: placebo
  case: stall
  runner: local:exec
  run_config: {timeout: 40s}
groups:
  - id: s
    instances: {count: 5}
EOF2
)

five_running() { [ "$(procs_of_run "$1")" -eq 5 ]; }
id=runid-hup
hangup "$id" "$f" 5 30 five_running "$id"
check "SIGHUP: no process of the run left" wait_for 5 no_procs "$id"
check "SIGHUP: no cgroup left" [ ! -e "/sys/fs/cgroup/memory/testyard/$id" ]
exec_leftovers "$id"

# stdout a pipe whose reader leaves after the first line.
id=runid-pipe
"$TY" run --plans plans --runs "$RUNS" --run-id "$id" --no-progress "$f" \
    2>"$RUNS/$id.log" | {
    read -r line
    echo "$line" >"$RUNS/pipe.first"
}
rc=${PIPESTATUS[0]}
check "pipe: the reader saw the run start" grep -q "all 5 instances started" \
    "$RUNS/pipe.first"
check_eq "pipe: exit status 130" "$rc" 130
check_eq "pipe: run outcome canceled" "$(result "$id" .outcome)" canceled
check_eq "pipe: 5 instances canceled" \
    "$(result "$id" '.groups[0].outcomes.canceled')" 5
check_eq "pipe: no process of the run left" "$(procs_of_run "$id")" 0
exec_leftovers "$id"

finish
