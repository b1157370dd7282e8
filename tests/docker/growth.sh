# shellcheck shell=bash
# tests/docker/growth.sh — the report's memory answers on local:docker,
# where users run: the checks of tests/e2e/growth.sh (tests/helpers/
# growth.sh) — a leak of 8 MiB a round found at that rate and named with
# its callers, the other group flat; mmap'ed growth outside malloc;
# fragmentation as retention; an OOM kill with a pre-OOM profile less
# than 2 s old naming the leaking function.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh
# shellcheck source=tests/helpers/growth.sh
. tests/helpers/growth.sh

need_docker "the report's memory answers on local:docker"

check_growth local:docker
check_growth_oom local:docker
for id in growth-docker growth-oom-docker; do
    check_eq "$id: no container left" "$(containers_of_run "$id")" 0
    remove_run_containers "$id"
done
finish
