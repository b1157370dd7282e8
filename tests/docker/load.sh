# shellcheck shell=bash
# tests/docker/load.sh — the SDK's load driver and work.csv on
# local:docker, where users run: the checks of tests/e2e/load.sh
# (tests/helpers/load.sh) — work.csv in the instance's folder rising to
# what results.out and the plan say, the tagged counter quoted, the rows
# of an instance killed mid-load kept.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh
# shellcheck source=tests/helpers/load.sh
. tests/helpers/load.sh

need_docker "the load driver and work.csv on local:docker"

check_load local:docker
check_load_killed local:docker
for id in load-docker load-killed-docker; do
    check_eq "$id: no container left" "$(containers_of_run "$id")" 0
    remove_run_containers "$id"
done
finish
