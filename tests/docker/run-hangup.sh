# shellcheck shell=bash
# tests/docker/run-hangup.sh — a local:docker run whose terminal is closed
# (SIGHUP) is canceled like SIGTERM: no container of the run is left and
# result.json says canceled.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/e2e/lib.sh
. tests/e2e/lib.sh

if ! have_docker; then
    skip "local:docker hangup" "no Docker engine answers on /var/run/docker.sock"
    finish
    exit
fi

f=$(composition stall <<'EOF2'
global: {plan: placebo, case: stall, runner: local:docker,
         run_config: {timeout: 60s}}
groups: [{id: s, instances: {count: 3}}]
EOF2
)
id=runid-dhup

wait_for() { # SECONDS COMMAND...
    local n=$(($1 * 10))
    shift
    for _ in $(seq 1 "$n"); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}
three_running() { [ "$(containers_of_run "$id")" -eq 3 ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }
# Remove this run's containers if the coordinator left any (a failure).
leftovers() {
    docker_api "/containers/json?all=1&filters=%7B%22label%22%3A%5B%22testyard.run%3D$id%22%5D%7D" |
        jq -r '.[].Id' | while read -r c; do
        curl -sf -X DELETE --unix-socket /var/run/docker.sock \
            "http://docker/containers/$c?force=1" >/dev/null
    done
}

# Killing script(1) closes the pseudo-terminal the run leads: SIGHUP.
script -qec "sh -c 'echo \$\$ >$RUNS/hup.pid; exec $TY run --plans plans \
    --runs $RUNS --run-id $id $f 2>$RUNS/$id.log'" /dev/null \
    >/dev/null 2>&1 &
spid=$!
check "three containers run" wait_for 120 three_running
tpid=$(cat "$RUNS/hup.pid")
kill -KILL "$spid"
wait "$spid" 2>/dev/null
check "the coordinator ends" wait_for 60 gone "$tpid"
check_eq "run outcome canceled" "$(result "$id" .outcome)" canceled
check_eq "3 instances canceled" \
    "$(result "$id" '.groups[0].outcomes.canceled')" 3
check_eq "no container left" "$(containers_of_run "$id")" 0
leftovers

finish
