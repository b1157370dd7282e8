# shellcheck shell=bash
# tests/e2e/kvlog.sh — the plan kvlog on local:exec: the checks of
# tests/helpers/kvlog.sh — its server and worker in processes.csv, its
# sparse state in disk.csv, puts and compactions counted, its state read
# back after a compaction cut short and a torn write
# (tests/docker/kvlog.sh runs the first on local:docker).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/series.sh
. tests/helpers/series.sh
# shellcheck source=tests/helpers/load.sh
. tests/helpers/load.sh
# shellcheck source=tests/helpers/kvlog.sh
. tests/helpers/kvlog.sh

check_kvlog_serve local:exec
check_kvlog_replay local:exec
for id in $kv_ids; do
    exec_leftovers "$id"
done
finish
