# shellcheck shell=bash
# tests/docker/preoom.sh — a pre-OOM snapshot request on local:docker: the
# container's main process (seen from the host) that fills its 64 MiB
# limit gets its LD_PRELOAD profiler's signal with the pre-OOM value when
# it crosses 90 % of it, less than 2 s before the OOM kill, and
# result.json says so; containers without that environment or without a
# handler are never signalled.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "pre-OOM signal on local:docker"

check_preoom local:docker
check_eq "no container left" "$(containers_of_run preoom-docker)" 0
finish
