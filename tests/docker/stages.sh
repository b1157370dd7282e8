# shellcheck shell=bash
# tests/docker/stages.sh — a composition's stages on local:docker, where
# users run: the checks of tests/e2e/stages.sh (tests/helpers/stages.sh)
# — restarts of the same container timed to ty_ready and growing with
# the work done, its outputs kept; barriers across a restart; a packed
# black-box program's restart timed by a TCP probe of the container's
# address.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh
# shellcheck source=tests/helpers/stages.sh
. tests/helpers/stages.sh

need_docker "a composition's stages on local:docker"

check_restarts local:docker
check_round_restart local:docker
check_probe local:docker
check_pause local:docker
check_hang local:docker
check_cancel_load local:docker
check_stop local:docker
check_long_run
for id in stages-docker stages-rounds-docker stages-probe-docker \
    stages-pause-docker stages-hang-docker stages-cancel-docker stages-stop-docker long-run; do
    check_eq "$id: no container left" "$(containers_of_run "$id")" 0
    remove_run_containers "$id"
done
finish
