# shellcheck shell=bash
# tests/e2e/exec-cancel.sh — SIGINT and SIGTERM stop a local:exec run:
# every instance is stopped, nothing is left running, the run is marked
# canceled and testyard exits 130.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

f=$(composition stall <<'EOF2'
metadata: {name: cancel-me}
global:
  plan: placebo
  case: stall
  runner: local:exec
  run_config: {timeout: 10m}
groups:
  - id: s
    instances: {count: 5}
EOF2
)

for sig in INT TERM; do
    id=cancel-$sig
    "$TY" run --plans plans --runs "$RUNS" --run-id "$id" --no-progress "$f" \
        >"$RUNS/$id.log" 2>&1 &
    pid=$!
    wait_for 10 started "$id" 5
    kill -"$sig" "$pid"
    wait "$pid"
    rc=$?
    check_eq "SIG$sig: exit status 130" "$rc" 130
    check_eq "SIG$sig: run outcome canceled" "$(result "$id" .outcome)" canceled
    check_eq "SIG$sig: 5 instances canceled" \
        "$(result "$id" '.groups[0].outcomes.canceled')" 5
    sleep 0.2
    check_eq "SIG$sig: no process of the run left" "$(procs_of_run "$id")" 0
    check "SIG$sig: no cgroup left" [ ! -e "/sys/fs/cgroup/memory/testyard/$id" ]
    [ "$rc" = 130 ] || show_log "$id"
done

finish
