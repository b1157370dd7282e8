# shellcheck shell=bash
# tests/docker/daemon.sh — a local:docker task through the daemon: one
# runs to success (its plan built from the snapshot taken at submit);
# then the daemon is killed with -9 while a task's containers run, and
# after a restart the task is interrupted and no container or network of
# its run is left. The dashboard shows the docker task's report and, on
# its history page, the group's real peak (not 0). The daemon has its
# own data folder and port and is stopped at exit.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "the daemon on local:docker"

# shellcheck disable=SC2034 # read by tests/helpers/daemon.sh
DAEMON_LEFTOVERS=remove_run_containers
# shellcheck source=tests/helpers/daemon.sh
. tests/helpers/daemon.sh

# placebo NAME CASE — two placebo instances of CASE under 64Mi each.
placebo() {
    composition "$1" <<EOF
metadata: {name: $1}
global: {plan: placebo, case: $2, runner: local:docker,
         run_config: {timeout: 5m, network: bridge}}
groups: [{id: s, instances: {count: 2}, resources: {memory: 64Mi}}]
EOF
}

check "the daemon starts" start_daemon --plans plans
# rounds of a second each: long enough for the monitor's samples, so
# the history has a real peak to draw
rounds_comp() {
    composition ok <<EOF
metadata: {name: ok}
global: {plan: placebo, case: barrier, runner: local:docker,
         run: {test_params: {rounds: 3, round_time: 1s}},
         run_config: {timeout: 5m, network: bridge}}
groups: [{id: s, instances: {count: 2}, resources: {memory: 64Mi}}]
EOF
}
OK=$(ty submit "$(rounds_comp)" 2>/dev/null)
check "a local:docker task runs to its end" wait_for 240 state_is "$OK" "done"
check_eq "with success" "$(field "$OK" .outcome)" success
check "the plan was built from the snapshot" \
    test -f "$DATA/tasks/$OK/plans/placebo/manifest.yaml"
check_eq "no container of it is left" "$(containers_of_run "task-$OK")" 0

# the dashboard, as the bearer header (the browser suite logs in)
URL=$(jq -r .url "$DATA/daemon.json")
dash() {
    curl -s -o "$RUNS/page.html" -w '%{http_code}' \
        -H "Authorization: Bearer $(cat "$DATA/token")" "$URL$1"
}
check_eq "the dashboard serves its report" "$(dash "/tasks/$OK/report")" 200
check "it is the run's report.html" \
    cmp -s "$RUNS/page.html" "$DATA/runs/task-$OK/report.html"
check_eq "its history page" "$(dash "/history?name=ok")" 200
check_eq "three charts for the group" \
    "$(grep -c '<svg class="hchart" data-figure="[a-z]*" data-group="s"' \
        "$RUNS/page.html")" 3
peak=$(sed -n '/data-figure="peak" data-group="s"/,/<\/svg>/p' \
    "$RUNS/page.html" | grep -o '<circle class="pt"[^>]*><title>[^<]*' |
    sed 's/.*<title>//')
check "the peak chart's point is the container's real peak ($peak)" \
    grep -qE '^run 1, .*, [0-9.]+ (KiB|MiB), success$' <<<"$peak"

ST=$(ty submit "$(placebo stall stall)" 2>/dev/null)
check "a stalling task's containers run" wait_for 240 grep -q \
    "all 2 instances started" "$DATA/tasks/$ST/log"
check_eq "2 containers running" "$(containers_of_run "task-$ST")" 2
old=$(daemon_pid)
kill -KILL "$old"
check "kill -9: the daemon is gone" wait_for 10 gone "$old"
check "the daemon starts after kill -9" start_daemon --plans plans
check_eq "the task is interrupted" "$(field "$ST" .state)" interrupted
check_eq "no container of its run is left" \
    "$(containers_of_run "task-$ST")" 0
check_eq "no network of its run is left" "$(networks_of_run "task-$ST")" 0

finish
