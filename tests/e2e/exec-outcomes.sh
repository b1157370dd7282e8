# shellcheck shell=bash
# tests/e2e/exec-outcomes.sh — local:exec tells every outcome apart:
# success, failure, crash, timeout (the run's deadline) and OOM kill.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

placebo() { # NAME CASE COUNT [extra global/run_config yaml] [group extra]
    composition "$1" <<EOF2
metadata: {name: $1}
global:
  plan: placebo
  case: $2
  runner: local:exec
  run_config: {timeout: ${4:-2m}}
groups:
  - id: single
    instances: {count: $3}
$5
EOF2
}

f=$(placebo ok ok 3)
rc=$(run_comp ok "$f")
check_eq "ok: exit status 0" "$rc" 0
check_eq "ok: run outcome" "$(result ok .outcome)" success
check_eq "ok: 3 successes" "$(result ok '.groups[0].outcomes.success')" 3
check "ok: every instance has run.out with its start event" \
    grep -q '"type":"start"' "$RUNS/ok/single/2/run.out"
[ "$rc" = 0 ] || show_log ok

f=$(placebo fail fail 2)
rc=$(run_comp fail "$f")
check_eq "fail: exit status 1" "$rc" 1
check_eq "fail: outcome" "$(result fail '.instances[1].outcome')" failure
check_eq "fail: the plan's message is kept" \
    "$(result fail '.instances[0].error')" "placebo failed on purpose"

f=$(placebo crash crash 1)
rc=$(run_comp crash "$f")
check_eq "crash: exit status 1" "$rc" 1
check_eq "crash: outcome" "$(result crash '.instances[0].outcome')" crash
check_eq "crash: signal 11" "$(result crash '.instances[0].signal')" 11

start=$(date +%s)
f=$(placebo stall stall 2 2s)
rc=$(run_comp stall "$f")
took=$(($(date +%s) - start))
check_eq "stall: exit status 1" "$rc" 1
check_eq "stall: outcome timeout" "$(result stall '.instances[0].outcome')" timeout
check_eq "stall: deadline_hit" "$(result stall .deadline_hit)" true
check "stall: ended within 20 s of a 2 s deadline (took ${took}s)" \
    [ "$took" -lt 20 ]

if can_limit_memory; then
    f=$(placebo oom oom 1 1m "    resources: {memory: 64Mi}")
    rc=$(run_comp oom "$f")
    check_eq "oom: exit status 1" "$rc" 1
    check_eq "oom: outcome oom" "$(result oom '.instances[0].outcome')" oom
    check_eq "oom: limit recorded" \
        "$(result oom '.instances[0].memory.limit_bytes')" 67108864
    peak=$(result oom '.instances[0].memory.peak_bytes')
    near_limit() { [ "${1:-0}" -gt 50000000 ] && [ "${1:-0}" -le 67108864 ]; }
    check "oom: peak near the 64 MiB limit ($peak)" near_limit "$peak"
    check "oom: memory.csv has rows" \
        [ "$(wc -l <"$RUNS/oom/single/0/memory.csv")" -gt 1 ]
    [ "$rc" = 1 ] || show_log oom
else
    skip "oom under a 64Mi limit" "no memory cgroup can be created here (needs root)"
fi

top=$(pwd)
(cd "$RUNS" && "$top/$TY" run --plans "$top/plans" --runs rel --run-id rel \
    --no-progress "$RUNS/ok.yaml" >"$RUNS/rel.log" 2>&1)
check_eq "a relative runs folder works on exec" "$?" 0
check "and the outputs land in it" [ -s "$RUNS/rel/rel/single/0/run.out" ]

mkdir -p "$RUNS/plans/broken" "$RUNS/broken-runs"
cat >"$RUNS/plans/broken/manifest.yaml" <<'EOF2'
name: broken
build: {sources: [main.c]}
cases: [{name: ok, instances: {min: 1, max: 1}}]
EOF2
echo 'int main(void) { return undeclared; }' >"$RUNS/plans/broken/main.c"
f=$(composition broken <<'EOF2'
global: {plan: broken, case: ok, runner: local:exec}
groups: [{id: g, instances: {count: 1}}]
EOF2
)
TESTYARD_CACHE="$RUNS/cache" "$TY" run --plans "$RUNS/plans" \
    --runs "$RUNS/broken-runs" "$f" >"$RUNS/broken.log" 2>&1
rc=$?
check_eq "a plan that does not compile: exit status 65" "$rc" 65
check "its error names the compiler's complaint and the log" \
    grep -q "plan broken failed to compile: .*undeclared.*full output in .*build.log" "$RUNS/broken.log"
check_eq "and no run folder is left" \
    "$(find "$RUNS/broken-runs" -mindepth 1 | wc -l)" 0

finish
