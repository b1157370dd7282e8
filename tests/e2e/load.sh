# shellcheck shell=bash
# tests/e2e/load.sh — the SDK's load driver and work.csv on local:exec: a
# fixed rate and a fixed concurrency counted into work.csv, rising row
# after row to what results.out and the plan say, the tagged counter
# quoted; an instance killed mid-load keeps its rows
# (tests/helpers/load.sh; tests/docker/load.sh checks the same on
# local:docker).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/load.sh
. tests/helpers/load.sh

check_load local:exec
check_load_killed local:exec
exec_leftovers load-exec
exec_leftovers load-killed-exec
finish
