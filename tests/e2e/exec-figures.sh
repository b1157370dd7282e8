# shellcheck shell=bash
# tests/e2e/exec-figures.sh — the memory figures a user reads, on
# local:exec: memory-rounds.jsonl (a line per round, in every
# memory_snapshots mode), the sidecar's cgroup reading against memory.csv
# and the group's limit, the profiler's resident memory (check_figures in
# tests/helpers/lib.sh; tests/docker/figures.sh runs it on local:docker).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

check_figures local:exec
finish
