# shellcheck shell=bash
# tests/e2e/exec-heap.sh — heap profiles reach the run folder: an instance
# OOM-killed after three snapshots leaves all three (they were sent to the
# coordinator before the kill), and `profiles: {heap: ...}` in a
# composition takes periodic snapshots with no code in the plan.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

if can_limit_memory; then
    f=$(composition snaps <<'EOF2'
global:
  plan: placebo
  case: oom
  runner: local:exec
  run: {test_params: {alloc_step: 1Mi, snapshot_every: 16Mi, max_snapshots: 3}}
  run_config: {timeout: 2m}
groups:
  - id: hog
    instances: {count: 1}
    resources: {memory: 96Mi}
EOF2
)
    rc=$(run_comp snaps "$f")
    check_eq "oom after snapshots: exit 1" "$rc" 1
    check_eq "oom after snapshots: outcome oom" \
        "$(result snaps '.instances[0].outcome')" oom
    for k in 1 2 3; do
        check "heap-oom-$k.pb.gz is in the run folder" \
            [ -s "$RUNS/snaps/hog/0/heap-oom-$k.pb.gz" ]
        check "heap-oom-$k.json is in the run folder" \
            json_true "$RUNS/snaps/hog/0/heap-oom-$k.json" ".label == \"oom-$k\""
    done
    check "the profiles are whole gzip files" \
        gzip -t "$RUNS"/snaps/hog/0/heap-oom-*.pb.gz
    check "no temporary file is left" \
        [ -z "$(find "$RUNS/snaps" -name '*.tmp*')" ]
    inuse=$(jq '.profile.inuse_bytes // .profile.inuse_space // 0' \
        "$RUNS/snaps/hog/0/heap-oom-3.json")
    check "the third snapshot saw ~48 MiB in use ($inuse)" \
        [ "${inuse%.*}" -gt 30000000 ]
    [ "$rc" = 1 ] || show_log snaps
else
    skip "oom after three snapshots" "no memory cgroup can be created here (needs root)"
fi

f=$(composition periodic <<'EOF2'
global:
  plan: placebo
  case: stall
  runner: local:exec
  run: {test_params: {stall_for: 1500ms}, profiles: {heap: 200ms}}
groups:
  - id: p
    instances: {count: 2}
EOF2
)
rc=$(run_comp periodic "$f")
check_eq "periodic profiles: exit 0" "$rc" 0
n=$(find "$RUNS/periodic/p/1" -name 'heap-periodic-*.pb.gz' | wc -l)
check "periodic profiles every 200ms for 1.5 s ($n files)" [ "$n" -ge 4 ]
[ "$rc" = 0 ] || show_log periodic

finish
