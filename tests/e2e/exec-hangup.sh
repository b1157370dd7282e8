# shellcheck shell=bash
# tests/e2e/exec-hangup.sh — a run whose terminal is closed (SIGHUP) or
# whose stdout pipe loses its reader is canceled like SIGTERM: every
# instance is stopped, nothing is left running and result.json says
# canceled (the run's deadline would say timeout).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/e2e/lib.sh
. tests/e2e/lib.sh

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

# wait_for SECONDS COMMAND... — until the command succeeds, bounded.
wait_for() {
    local n=$(($1 * 10))
    shift
    for _ in $(seq 1 "$n"); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}
five_running() { [ "$(procs_of_run "$1")" -eq 5 ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }
# leftovers ID — remove what a failed run left (only this run's processes
# and cgroups).
leftovers() {
    grep -l -s -z -x "TEST_RUN=$1" /proc/[0-9]*/environ 2>/dev/null |
        cut -d/ -f3 | xargs -r kill -KILL 2>/dev/null
    sleep 0.2
    for d in /sys/fs/cgroup/testyard/"$1" /sys/fs/cgroup/*/testyard/"$1"; do
        [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
    done
    return 0
}

# The run is the session leader on script(1)'s pseudo-terminal; killing
# script closes the terminal's master side, and the kernel sends SIGHUP.
id=runid-hup
script -qec "sh -c 'echo \$\$ >$RUNS/hup.pid; exec $TY run --plans plans \
    --runs $RUNS --run-id $id $f 2>$RUNS/$id.log'" /dev/null \
    >/dev/null 2>&1 &
spid=$!
check "SIGHUP: five instances run" wait_for 30 five_running "$id"
tpid=$(cat "$RUNS/hup.pid")
kill -KILL "$spid"
wait "$spid" 2>/dev/null
check "SIGHUP: the coordinator ends" wait_for 30 gone "$tpid"
check_eq "SIGHUP: run outcome canceled" "$(result "$id" .outcome)" canceled
check_eq "SIGHUP: exit status in result.json" "$(result "$id" .exit_status)" 130
check_eq "SIGHUP: 5 instances canceled" \
    "$(result "$id" '.groups[0].outcomes.canceled')" 5
check "SIGHUP: no process of the run left" wait_for 5 eval \
    "[ \$(procs_of_run $id) -eq 0 ]"
check "SIGHUP: no cgroup left" [ ! -e "/sys/fs/cgroup/memory/testyard/$id" ]
leftovers "$id"

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
leftovers "$id"

finish
