# shellcheck shell=bash
# tests/docker/figures.sh — the memory figures a user reads, on
# local:docker, where the cgroup mount's root is the container's own
# cgroup: the sidecar's cgroup is there and agrees with memory.csv and the
# group's limit, and memory-rounds.jsonl has a line per round
# (check_figures in tests/helpers/lib.sh).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "memory figures on local:docker"

check_figures local:docker
left=$(containers_of_run figures-docker)
check_eq "no container left" "$left" 0
[ "$left" = 0 ] || remove_run_containers figures-docker
finish
