# shellcheck shell=bash
# tests/e2e/growth.sh — the report's memory answers on local:exec: a leak
# of 8 MiB a round found at that rate and named by function with its
# callers, the other group flat; mmap'ed growth called growth outside
# malloc; fragmentation called retention; an OOM-killed instance with a
# pre-OOM profile less than 2 s old naming the leaking function
# (tests/helpers/growth.sh; tests/docker/growth.sh checks the same on
# local:docker).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/growth.sh
. tests/helpers/growth.sh

check_growth local:exec
if can_limit_memory; then
    check_growth_oom local:exec
else
    skip "local:exec oom: an OOM kill with a pre-OOM profile" \
        "local:exec cannot put instances in a memory cgroup here (needs root and a memory controller)"
fi
exec_leftovers growth-oom-exec
finish
