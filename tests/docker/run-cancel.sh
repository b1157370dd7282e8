# shellcheck shell=bash
# tests/docker/run-cancel.sh — Ctrl-C mid-run removes every container of
# the run; a coordinator killed outright leaves containers that
# `testyard clean` then removes, while it skips the containers of a run
# whose coordinator lives (another user's, on a shared engine); a label
# identity that names a live process with another start time counts as
# dead; the killed run is then reported interrupted.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "local:docker cancel and clean"

f=$(composition stall <<'EOF2'
global: {plan: placebo, case: stall, runner: local:docker,
         run_config: {timeout: 10m, network: bridge}}
groups: [{id: s, instances: {count: 4}}]
EOF2
)

start_bg() { # ID
    run_bg "$1" "$f" 4 30
}

check "a stalling run starts" start_bg ctrlc
check_eq "4 containers running" "$(containers_of_run ctrlc)" 4
kill -INT "$BGPID"
wait "$BGPID"
rc=$?
check_eq "Ctrl-C: exit status 130" "$rc" 130
check_eq "Ctrl-C: run canceled" "$(result ctrlc .outcome)" canceled
check_eq "Ctrl-C: no container left" "$(containers_of_run ctrlc)" 0
check_eq "Ctrl-C: no network left" "$(networks_of_run ctrlc)" 0
[ "$rc" = 130 ] || show_log ctrlc

check "a run of another coordinator starts and stays alive" start_bg live
LIVE=$BGPID
check "another stalling run starts" start_bg killed
kill -KILL "$BGPID"
wait "$BGPID" 2>/dev/null
check_eq "SIGKILL: the containers are orphaned" "$(containers_of_run killed)" 4

# fake_container RUN START — a created (never started) container whose
# labels claim this shell as its coordinator, with start time START.
fake_container() {
    local img body
    img=$(docker_api "/containers/json?$(run_filter live)" | jq -r '.[0].Image')
    body=$(jq -n --arg img "$img" --arg run "$1" --arg pid "$$" \
        --arg start "$2" --arg boot "$(cat /proc/sys/kernel/random/boot_id)" \
        --arg host "$(hostname)" \
        '{Image: $img, Labels: {"testyard.run": $run,
          "testyard.coordinator.pid": $pid, "testyard.coordinator.start": $start,
          "testyard.coordinator.boot": $boot, "testyard.coordinator.host": $host}}')
    docker_api "/containers/create?name=testyard-$1" \
        -H 'Content-Type: application/json' -d "$body" >/dev/null
}
mystart=$(sed 's/.*) //' /proc/$$/stat | awk '{print $20}')
check "a container with a fake identity (a live pid, another start time)" \
    fake_container fake "$((mystart + 1))"
check "a container whose identity is this live shell" \
    fake_container fakelive "$mystart"

"$TY" clean --runs "$RUNS" >"$RUNS/clean.log" 2>&1
rc=$?
check_eq "testyard clean: exit 0" "$rc" 0
check_eq "testyard clean: no container left" "$(containers_of_run killed)" 0
check_eq "testyard clean: no network left" "$(networks_of_run killed)" 0
check_eq "testyard clean: the live run's containers stay" \
    "$(containers_of_run live)" 4
check_eq "testyard clean: the live run's network stays" \
    "$(networks_of_run live)" 1
check "testyard clean: says it skipped the live run" \
    grep -q "skipped run live: alive: pid $LIVE on this host" "$RUNS/clean.log"
check_eq "testyard clean: the fake identity counts as dead" \
    "$(containers_of_run fake)" 0
check_eq "testyard clean: a true identity counts as alive" \
    "$(containers_of_run fakelive)" 1
check_eq "coordinator.json of the killed run says interrupted" \
    "$(jq -r .state "$RUNS/killed/coordinator.json" 2>/dev/null)" interrupted
"$TY" report "$RUNS/killed" >"$RUNS/report.log" 2>&1
check "report: the killed run was interrupted" \
    grep -q "the run was interrupted" "$RUNS/report.log"
[ "$rc" = 0 ] || sed 's/^/#   /' "$RUNS/clean.log"

"$TY" clean --runs "$RUNS" --run live >"$RUNS/clean-live.log" 2>&1
check_eq "clean --run of a live run: exit 1" "$?" 1
check_eq "clean --run of a live run: its containers stay" \
    "$(containers_of_run live)" 4
"$TY" clean --runs "$RUNS" --run fakelive --force >"$RUNS/clean-force.log" 2>&1
check_eq "clean --run --force: exit 0" "$?" 0
check_eq "clean --run --force: removes a live-looking run" \
    "$(containers_of_run fakelive)" 0

kill -INT "$LIVE"
wait "$LIVE"
check_eq "the live run then ends canceled (130)" "$?" 130
check_eq "the live run removed its own containers" "$(containers_of_run live)" 0

finish
