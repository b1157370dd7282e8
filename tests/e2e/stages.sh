# shellcheck shell=bash
# tests/e2e/stages.sh — a composition's stages on local:exec: restarts
# timed to the SDK's ty_ready and growing with the work done, the
# instance's outputs kept; barriers across a restart; a black-box
# program's restart timed by a TCP probe (tests/helpers/stages.sh;
# tests/docker/stages.sh checks the same on local:docker).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/stages.sh
. tests/helpers/stages.sh

check_restarts local:exec
check_round_restart local:exec
check_probe local:exec
check_pause local:exec
check_hang local:exec
check_cancel_load local:exec
check_stop local:exec
check_eq "long-run.yaml: validate reads its stages" \
    "$("$TY" validate compositions/long-run.yaml | jq -c '[.stages[] | .stage // .action]')" \
    '["load-1","restart","load-2","restart","load-3","restart","load-4"]'
check_command_probe local:exec
for id in stages-exec stages-rounds-exec stages-probe-exec stages-pause-exec \
    stages-hang-exec stages-cancel-exec stages-stop-exec \
    stages-cmd-exec; do
    check "$id: no process left" no_procs "$id"
    exec_leftovers "$id"
done
finish
