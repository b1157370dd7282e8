# shellcheck shell=bash
# tests/docker/run-cancel.sh — Ctrl-C mid-run removes every container of
# the run; a coordinator killed outright leaves containers that
# `testyard clean` then removes.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/e2e/lib.sh
. tests/e2e/lib.sh

if ! have_docker; then
    skip "local:docker cancel and clean" "no Docker engine answers on /var/run/docker.sock"
    finish
    exit
fi

f=$(composition stall <<'EOF2'
global: {plan: placebo, case: stall, runner: local:docker,
         run_config: {timeout: 10m, network: bridge}}
groups: [{id: s, instances: {count: 4}}]
EOF2
)

start_bg() { # ID
    "$TY" run --plans plans --runs "$RUNS" --run-id "$1" --no-progress "$f" \
        >"$RUNS/$1.log" 2>&1 &
    BGPID=$!
    for _ in $(seq 1 300); do
        grep -q "all 4 instances started" "$RUNS/$1.log" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
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

check "another stalling run starts" start_bg killed
kill -KILL "$BGPID"
wait "$BGPID" 2>/dev/null
check_eq "SIGKILL: the containers are orphaned" "$(containers_of_run killed)" 4
"$TY" clean >"$RUNS/clean.log" 2>&1
rc=$?
check_eq "testyard clean: exit 0" "$rc" 0
check_eq "testyard clean: no container left" "$(containers_of_run killed)" 0
check_eq "testyard clean: no network left" "$(networks_of_run killed)" 0
[ "$rc" = 0 ] || sed 's/^/#   /' "$RUNS/clean.log"

finish
