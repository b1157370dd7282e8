# shellcheck shell=bash
# tests/e2e/exec-preoom.sh — a pre-OOM snapshot request on local:exec: an
# instance that fills its 64 MiB limit gets its LD_PRELOAD profiler's
# signal with the pre-OOM value when it crosses 90 % of it, less than 2 s
# before the OOM kill, and result.json says so; instances without that
# environment or without a handler are never signalled (SIGUSR2 would
# kill them).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

if ! can_limit_memory; then
    skip "pre-OOM signal on local:exec" "needs root and a memory controller for limits"
    finish
    exit
fi
check_preoom local:exec
check "no process of the run is left" no_procs preoom-exec
finish
