# shellcheck shell=bash
# tests/docker/run-hangup.sh — a local:docker run whose terminal is closed
# (SIGHUP) is canceled like SIGTERM: no container of the run is left and
# result.json says canceled.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "local:docker hangup"

f=$(composition stall <<'EOF2'
global: {plan: placebo, case: stall, runner: local:docker,
         run_config: {timeout: 60s}}
groups: [{id: s, instances: {count: 3}}]
EOF2
)
id=runid-dhup
three_running() { [ "$(containers_of_run "$id")" -eq 3 ]; }

hangup "$id" "$f" 3 120 three_running
check_eq "no container left" "$(containers_of_run "$id")" 0
remove_run_containers "$id"

finish
