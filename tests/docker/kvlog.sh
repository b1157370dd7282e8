# shellcheck shell=bash
# tests/docker/kvlog.sh — the plan kvlog on local:docker, where users run
# it: the serve checks of tests/helpers/kvlog.sh (the server and its
# worker in processes.csv beside docker-init, the sparse state folder in
# disk.csv through the bind of the outputs folder, puts and compactions
# counted); no container left.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh
# shellcheck source=tests/helpers/series.sh
. tests/helpers/series.sh
# shellcheck source=tests/helpers/load.sh
. tests/helpers/load.sh
# shellcheck source=tests/helpers/kvlog.sh
. tests/helpers/kvlog.sh

need_docker "the plan kvlog on local:docker"

check_kvlog_serve local:docker
for id in $kv_ids; do
    check_eq "$id: no container left" "$(containers_of_run "$id")" 0
    remove_run_containers "$id"
done
finish
