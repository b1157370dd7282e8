# shellcheck shell=bash
# tests/e2e/exec-files.sh — local:exec keeps its own files out of an
# instance's reach and disk use bounded: links planted in the output
# folder (run.out, run.err, memory.csv.partial, a folder for uploads) take
# no write; a 500 MB stdout leaves a run.out of its head and tail with a
# marker and the run its outcome; an upload over the quota is refused.
# The plan is tests/docker/hostile_plan.c (run-files.sh does the same on
# local:docker).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

hostile_plan

plant exec-plant local:exec 1m

f=$(flood_comp flood 500MB 8Mi)
start=$(date +%s.%N)
rc=$(run_hostile exec-flood "$f")
echo "# 500 MB stdout on local:exec took $(echo "$(date +%s.%N) - $start" | bc)s"
out="$RUNS/exec-flood/f/0"
size=$(stat -c %s "$out/run.out" 2>/dev/null || echo 0)
check_eq "flood: exit 0" "$rc" 0
check_eq "flood: outcome success" "$(result exec-flood '.instances[0].outcome')" success
check "flood: run.out is bounded ($size bytes)" between "$size" 1 $((8 * 1048576 + 200))
check "flood: run.out has the head" sh -c "head -c 4096 '$out/run.out' | grep -q '^FIRST LINE$'"
check "flood: and the tail" sh -c "tail -c 4096 '$out/run.out' | grep -q '^LAST LINE$'"
cut=$(sed -n 's/^\[testyard: \([0-9]*\) bytes of stdout cut here.*/\1/p' "$out/run.out")
kept=$(grep -v '^\[testyard: ' "$out/run.out" | wc -c)
check "flood: the marker counts what was cut (${cut:-none})" \
    between "${cut:-0}" 480000000 500000000
check "flood: kept and cut add up to what was written" \
    between $((kept + ${cut:-0})) 500000022 500004096
check_eq "flood: run.err is whole" "$(cat "$out/run.err")" "stderr FIRST
stderr LAST"
[ "$rc" = 0 ] || show_log exec-flood

f=$(composition quota <<'EOF2'
global:
  plan: hostile
  case: quota
  runner: local:exec
  run:
    test_params: {upload: 2Mi}
  run_config: {timeout: 1m}
groups:
  - id: q
    instances: {count: 1}
    run: {output_quota: 1Mi}
EOF2
)
rc=$(run_hostile exec-quota "$f")
check_eq "quota: the plan saw its upload refused" "$rc" 0
check "quota: and why" \
    grep -q "output quota of 1048576 bytes (run.output_quota)" "$RUNS/exec-quota/q/0/run.err"
[ "$rc" = 0 ] || show_log exec-quota

finish
