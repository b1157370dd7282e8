# shellcheck shell=bash
# tests/e2e/heap-stacks.sh — whole heap stacks on local:exec: a leak
# reached through main (or a test case) → stk_plan_fill → stk_helper_alloc
# → malloc names every one of those frames in `go tool pprof -traces`
# (tests/docker/heap-stacks.sh checks the same on local:docker).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

check_leak_stacks local:exec
finish
