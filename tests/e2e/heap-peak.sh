# shellcheck shell=bash
# tests/e2e/heap-peak.sh — peak snapshots on local:exec: a plan that holds
# 96 MiB more for a while and frees them leaves heap-peak showing its high
# (tests/docker/heap-peak.sh checks the same on local:docker), and
# profiles.heap_peak: off leaves none.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

check_peak local:exec

f=$(composition peak-off <<EOF2
global:
  plan: stacks
  case: peak
  runner: local:exec
  run: {profiles: {heap_peak: off}}
groups: [{id: g, instances: {count: 1}}]
EOF2
)
check_eq "profiles.heap_peak off: the case succeeds" \
    "$(run_hostile peak-off "$f")" 0
check "profiles.heap_peak off: no heap-peak" \
    [ ! -e "$RUNS/peak-off/g/0/heap-peak.json" ]
check "profiles.heap_peak off: heap-end is there" \
    [ -s "$RUNS/peak-off/g/0/heap-end.json" ]
finish
