# shellcheck shell=bash
# tests/docker/heap-peak.sh — peak snapshots on local:docker: a plan that
# holds 96 MiB more for a while and frees them leaves heap-peak, uploaded
# from the container over the sync connection, showing its high.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "peak snapshots on local:docker"

check_peak local:docker
check_eq "no container left" "$(containers_of_run peak-docker)" 0
finish
