# shellcheck shell=bash
# tests/e2e/exec-killed.sh — a local:exec coordinator killed with kill -9:
# its instances, and what they forked, are gone within two seconds; the
# report says the run was interrupted; `clean --run` removes its cgroups
# and scratch (following no link planted there) and marks it; a live
# run's `clean --run` is refused and leaves it running.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

# An instance that forks: the child is in the instance's process group.
forker=$RUNS/forker.sh
printf '#!/bin/sh\nsleep 600 &\nexec sleep 601\n' >"$forker"
chmod +x "$forker"

f=$(composition stall <<EOF2
global: {plan: placebo, case: stall, runner: local:exec,
         run_config: {timeout: 10m}}
groups:
  - {id: s, instances: {count: 2}}
  - {id: f, instances: {count: 2}, run: {artifact: $forker}}
EOF2
)

six_running() { [ "$(procs_of_run "$1")" -eq 6 ]; }
# start_bg ID — a stalling run in the background; BGPID is its pid.
start_bg() {
    "$TY" run --plans plans --runs "$RUNS" --run-id "$1" --no-progress "$f" \
        >"$RUNS/$1.log" 2>&1 &
    BGPID=$!
    wait_for 30 six_running "$1"
}

no_scratch() { [ ! -e "$RUNS/$1/.sync" ] && [ ! -e "$RUNS/$1/.tmp" ]; }
# A killed run's series is still in the runner's own folder (.runner), where
# the report finds it.
has_series() {
    [ -e "$RUNS/$1/.runner/s/0/memory.csv.partial" ] ||
        [ -e "$RUNS/$1/s/0/memory.csv" ]
}

cg=/sys/fs/cgroup/memory/testyard
check "a stalling run starts (4 instances, 2 of them forked)" start_bg exk-dead
{
    kill -KILL "$BGPID"
    wait "$BGPID"
} 2>/dev/null
check "kill -9: every process of the run is gone within 2 s" \
    wait_for 2 no_procs exk-dead
no_procs exk-dead || kill_run exk-dead
check_eq "kill -9: coordinator.json still says running" \
    "$(jq -r .state "$RUNS/exk-dead/coordinator.json" 2>/dev/null)" running

"$TY" report "$RUNS/exk-dead" >"$RUNS/report1.log" 2>&1
check "report before clean: the run was interrupted" \
    grep -q "the run was interrupted" "$RUNS/report1.log"
check_eq "summary.json: outcome interrupted" \
    "$(jq -r .outcome "$RUNS/exk-dead/summary.json" 2>/dev/null)" interrupted

# Links an instance could plant in its scratch: clean must not follow them.
mkdir -p "$RUNS/outside"
echo precious >"$RUNS/outside/keep.txt"
ln -s "$RUNS/outside" "$RUNS/exk-dead/.tmp/s/0/escape"
ln -s "$RUNS/outside/keep.txt" "$RUNS/exk-dead/.tmp/s/1/keep.txt"

check "a second run starts and stays alive" start_bg exk-live
ALIVE=$BGPID

"$TY" clean --runs "$RUNS" --run exk-live >"$RUNS/clean-exk-live.log" 2>&1
rc=$?
check_eq "clean --run of a live run: exit 1" "$rc" 1
check "clean --run of a live run: says it is alive" \
    grep -q "alive: pid $ALIVE on this host" "$RUNS/clean-exk-live.log"
check_eq "clean --run of a live run: its instances still run" \
    "$(procs_of_run exk-live)" 6

"$TY" clean --runs "$RUNS" --run exk-dead >"$RUNS/clean.log" 2>&1
rc=$?
check_eq "clean --run exk-dead: exit 0" "$rc" 0
check "clean says what it removed" \
    grep -q "cleaned run exk-dead (its coordinator is gone" "$RUNS/clean.log"
if can_limit_memory; then
    check "clean: the run's cgroups are gone" [ ! -e "$cg/exk-dead" ]
    check "clean: the live run's cgroups stay" [ -d "$cg/exk-live" ]
else
    skip "clean removes cgroups" "not root or no memory cgroup controller"
    skip "clean keeps a live run's cgroups" "no cgroups here"
fi
check "clean: .sync and .tmp are gone" no_scratch exk-dead
check_eq "clean: a planted link was not followed" \
    "$(cat "$RUNS/outside/keep.txt")" precious
check_eq "clean: coordinator.json says interrupted" \
    "$(jq -r .state "$RUNS/exk-dead/coordinator.json" 2>/dev/null)" interrupted
check "clean: the memory series are kept" has_series exk-dead

"$TY" report "$RUNS/exk-dead" >"$RUNS/report2.log" 2>&1
check "report after clean: the run was interrupted" \
    grep -q "the run was interrupted" "$RUNS/report2.log"
check "report.html says interrupted" \
    grep -q "the run was interrupted" "$RUNS/exk-dead/report.html"

"$TY" clean --runs "$RUNS" --run exk-dead >"$RUNS/clean2.log" 2>&1
check "clean again: nothing to clean" grep -qx "nothing to clean" \
    "$RUNS/clean2.log"

kill -INT "$ALIVE"
wait "$ALIVE"
check_eq "the live run then ends as canceled" "$(result exk-live .outcome)" \
    canceled
check_eq "its coordinator.json says finished" \
    "$(jq -r .state "$RUNS/exk-live/coordinator.json" 2>/dev/null)" finished
[ "$rc" = 0 ] || sed 's/^/#   /' "$RUNS/clean.log"

finish
