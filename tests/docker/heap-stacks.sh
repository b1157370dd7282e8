# shellcheck shell=bash
# tests/docker/heap-stacks.sh — whole heap stacks on local:docker, whose
# FROM scratch image holds only what the plan resolves to: a leak reached
# through main (or a test case) → stk_plan_fill → stk_helper_alloc →
# malloc names every one of those frames in `go tool pprof -traces`, and
# the sidecar says backtrace() could be used (libgcc_s.so.1 is in the
# image).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "heap stacks on local:docker"

check_leak_stacks local:docker
check_eq "local:docker: the sidecar says backtrace() was usable" \
    "$(jq -r '.unwind.backtrace' "$RUNS/stacks-docker/g/0/heap-leak.json")" usable
check_eq "no container left" "$(containers_of_run stacks-docker)" 0
finish
