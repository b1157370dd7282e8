# shellcheck shell=bash
# tests/e2e/blackbox.sh — groups that run their own program on local:exec
# (run.command, args, env, workdir, profiles.heap: preload), with no plan:
# blackbox_hog.c, a program that knows nothing of testyard, fills a
# 64 MiB limit. Its arguments and environment reach it; it is OOM-killed
# (outcome oom) with memory.csv kept; with the preload profiler it leaves
# a profile taken before the kill whose top site is hog_alloc, without it
# no profile and the report's figures from memory.csv. Programs that never
# connect to the sync service and exit 0 end the run at once, with
# success, "connected": false and the report's never-connected line; a
# plan's barriers beside such a program are met by the plan's instances;
# a statically linked program gets the warning; a command that does not
# exist is refused at load (exit 65, nothing in the runs folder).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

HOG=$RUNS/bin/blackbox_hog
mkdir -p "$RUNS/bin" "$RUNS/work"
check "blackbox_hog builds (dynamically linked)" \
    cc -O1 -g -fno-omit-frame-pointer -o "$HOG" tests/e2e/blackbox_hog.c

# The hog with args, env and a workdir (the keys of a group's run).
HOG_RUN="command: [$HOG, --tag, from-args], args: [--step, 1M, --pause-ms, \"20\"],
      env: {HOG_TAG: from-env, HOME: $RUNS/home, LD_PRELOAD: libm.so.6},
      workdir: $RUNS/work"

# hog_comp ID RUN — one group "hog" under 64 MiB whose run is RUN (a
# flow mapping).
hog_comp() {
    composition "$1" <<EOF
metadata: {name: $1}
global:
  runner: local:exec
  run_config: {timeout: 2m, memory_sample_interval: 20ms}
groups:
  - id: hog
    instances: {count: 1}
    resources: {memory: 64Mi}
    run: $2
EOF
}

# inst ID JQ — a value of the run's only instance in summary.json.
inst() {
    jq -r ".instances[0] | $2" "$RUNS/$1/summary.json" 2>/dev/null
}

# csv_rows FILE — data rows of a memory.csv.
csv_rows() {
    tail -n +2 "$1" 2>/dev/null | grep -c .
}

# check_hog ID WHAT PRELOAD — what every OOM-killed hog run shows (TAP
# lines); PRELOAD is what LD_PRELOAD starts with before run.env's.
check_hog() {
    local id=$1 what=$2 out=$RUNS/$1/hog/0
    check_eq "$what: the run fails (exit 1)" "$rc" 1
    check_eq "$what: the outcome is oom" \
        "$(result "$id" '.instances[0].outcome')" oom
    check_eq "$what: stdout shows the args, the env (HOME replaced) and the workdir" \
        "$(head -n 1 "$out/run.out" 2>/dev/null)" \
        "hog: tag=from-args env=from-env home=$RUNS/home step=1048576 cwd=$RUNS/work argc=7"
    check_eq "$what: LD_PRELOAD is the profiler (with preload) and run.env's" \
        "$(sed -n 2p "$out/run.out" 2>/dev/null)" "hog: preload=$3libm.so.6"
    check "$what: memory.csv has rows" \
        test "$(csv_rows "$out/memory.csv")" -gt 3
    check_eq "$what: result.json: plan null, case default, connected false" \
        "$(result "$id" '[.plan, .case, .instances[0].connected] | @json')" \
        '[null,"default",false]'
    check_eq "$what: result.json: the group ran a command" \
        "$(result "$id" '.groups[0].program')" command
    check_eq "$what: the report says oom" "$(inst "$id" .outcome)" oom
    check "$what: the table says the hog never connected" \
        grep -q "never connected to the sync service: hog 0 (they ran" \
        "$RUNS/$id.log"
    check "$what: nothing of the run is left" no_procs "$id"
    [ "$TAPFAIL" = 0 ] || show_log "$id"
}

if can_limit_memory; then
    f=$(hog_comp bb-preload "{$HOG_RUN, profiles: {heap: preload}}")
    rc=$(run_comp bb-preload "$f")
    check_hog bb-preload preload \
        "$(realpath "$(dirname "$TY")")/libtestyard-heap.so:"
    out=$RUNS/bb-preload/hog/0
    prof=$(find "$out" -name 'heap-blackbox_hog-*-pre-oom.pb.gz' | head -n 1)
    [ -n "$prof" ] ||
        prof=$(find "$out" -name 'heap-blackbox_hog-*-peak.pb.gz' | head -n 1)
    check "preload: a pre-oom (or peak) profile of the hog is there" \
        test -s "$prof"
    side=${prof%.pb.gz}.json
    started=$(rfc3339_ms "$(result bb-preload .started)" 2>/dev/null)
    oom_ms=$(result bb-preload '.instances[0].memory.oom_at_ms')
    taken=$(rfc3339_ms "$(jq -r .time "$side" 2>/dev/null)" 2>/dev/null)
    check "preload: it was taken before the kill" \
        test "${taken:-0}" -gt 0 -a "${taken:-0}" -le "$((${started:-0} + ${oom_ms:-0}))"
    check_eq "preload: the coordinator asked by signal" \
        "$(result bb-preload '.instances[0].memory.pre_oom.via')" signal
    check_eq "preload: the OOM section's first site is hog_alloc" \
        "$(inst bb-preload '[.oom.sites[] |
            select(.testyard != true) | .function] | first')" hog_alloc
    check "preload: the OOM section has the last profile" \
        json_true "$RUNS/bb-preload/summary.json" \
        '.instances[0].oom.last_profile != null'

    # Under a shell wrapper, the hog itself (not only the shell, the
    # instance's main process) is asked for its pre-OOM snapshot.
    f=$(hog_comp bb-wrapper "{command: [/bin/sh, -c,
      \"$HOG --step 1M --pause-ms 20; echo after\"], profiles: {heap: preload}}")
    rc=$(run_comp bb-wrapper "$f")
    check_eq "wrapper: the outcome is oom (the shell outlived the hog)" \
        "$(result bb-wrapper '.instances[0].outcome')" oom
    check "wrapper: the hog under the shell left a pre-oom profile" \
        test -n "$(find "$RUNS/bb-wrapper/hog/0" \
            -name 'heap-blackbox_hog-*-pre-oom.pb.gz')"
    [ "$TAPFAIL" = 0 ] || show_log bb-wrapper

    f=$(hog_comp bb-plain "{$HOG_RUN}")
    rc=$(run_comp bb-plain "$f")
    check_hog bb-plain "no preload" ""
    check_eq "no preload: no heap profile" \
        "$(find "$RUNS/bb-plain/hog/0" -name 'heap-*' | wc -l)" 0
    check "no preload: the report has memory.csv's peak" \
        test "$(inst bb-plain .peak_bytes)" -gt 50000000
    check_eq "no preload: the report's series is memory.csv" \
        "$(inst bb-plain .series)" memory.csv
    check "no preload: the OOM section says how to get a profile" \
        grep -qF "set run.profiles: {heap: preload} on its group" \
        "$RUNS/bb-plain.log"
else
    skip "black-box programs under a memory limit" \
        "no memory cgroup can be created here (needs root)"
fi

# Four daemons that never connect and exit 0 at once.
f=$(composition bb-quick <<EOF
metadata: {name: bb-quick}
global: {runner: local:exec, case: smoke}
groups:
  - id: providers
    instances: {count: 4}
    run: {command: [$HOG], args: [--steps, "3", --pause-ms, "1"]}
EOF
)
t0=$(date +%s%N)
rc=$(run_comp bb-quick "$f")
t1=$(date +%s%N)
check_eq "never connecting: the run succeeds" "$rc" 0
check "never connecting: it ends at once ($(((t1 - t0) / 1000000)) ms)" \
    test "$(((t1 - t0) / 1000000))" -lt 10000
check_eq "never connecting: 4 successes, none connected" \
    "$(result bb-quick '[.instances[] | select(.outcome == "success" and
        .connected == false)] | length')" 4
check_eq "never connecting: TEST_CASE is global.case" \
    "$(result bb-quick .case)" smoke
check_eq "never connecting: summary.json lists them" \
    "$(jq -c .never_connected "$RUNS/bb-quick/summary.json" 2>/dev/null)" \
    '["providers/0","providers/1","providers/2","providers/3"]'
line="never connected to the sync service: providers 0-3 (they ran their own program: expected for run.command/run.image groups)"
check "never connecting: the table's line" grep -qF "$line" "$RUNS/bb-quick.log"
check "never connecting: report.html's line" \
    grep -qF "$line" "$RUNS/bb-quick/report.html"
check "never connecting: the run is headed by the composition's name" \
    grep -q "^run bb-quick  bb-quick/smoke  local:exec" "$RUNS/bb-quick.log"
[ "$TAPFAIL" = 0 ] || show_log bb-quick

# The plan's barriers beside a program that never signals them: the plan
# instances meet (their target is the plan's instances), the daemon runs
# on and exits 0.
f=$(composition bb-mixed <<EOF
metadata: {name: bb-mixed}
global: {plan: placebo, case: barrier, runner: local:exec,
         run_config: {timeout: 1m}}
groups:
  - id: plan
    instances: {count: 2}
    run: {test_params: {rounds: 3}}
  - id: daemon
    instances: {count: 1}
    run: {command: [$HOG, --steps, "150", --pause-ms, "10", --step, 4K]}
EOF
)
rc=$(run_comp bb-mixed "$f")
check_eq "beside the plan: the run succeeds" "$rc" 0
check_eq "beside the plan: the plan's instances connected, the daemon not" \
    "$(result bb-mixed '[.instances[] | .group + "=" +
        (.connected | tostring)] | join(" ")')" \
    "plan=true plan=true daemon=false"
check "beside the plan: the barriers were released" \
    json_lines_all "$RUNS/bb-mixed/barriers.jsonl" \
    '.result == "released" and .target == 2'
[ "$TAPFAIL" = 0 ] || show_log bb-mixed

# A statically linked program cannot have the profiler preloaded.
if cc -static -O1 -o "$RUNS/bin/hog-static" tests/e2e/blackbox_hog.c \
    2>/dev/null; then
    f=$(composition bb-static <<EOF
metadata: {name: bb-static}
global: {runner: local:exec}
groups:
  - id: s
    instances: {count: 1}
    run: {command: [$RUNS/bin/hog-static, --steps, "2"],
          profiles: {heap: preload}}
EOF
)
    rc=$(run_comp bb-static "$f")
    check_eq "static: the run succeeds" "$rc" 0
    check "static: the warning says only cgroup figures are available" \
        grep -qF "group s: $RUNS/bin/hog-static is statically linked: the heap profiler cannot be preloaded; only cgroup figures (memory.csv) are available" \
        "$RUNS/bb-static.log"
else
    skip "a statically linked program's warning" "cc -static fails here"
fi

# Bad input: a command that does not exist.
f=$(composition bb-missing <<EOF
global: {runner: local:exec}
groups:
  - id: g
    instances: {count: 1}
    run: {command: [$RUNS/bin/no-such-program]}
EOF
)
rc=$(run_comp bb-missing "$f")
check_eq "a missing command: exit 65" "$rc" 65
check "a missing command: the message names the file and the key" \
    grep -q "bb-missing.yaml:[0-9]*:[0-9]*: groups\[0\]\.run\.command" \
    "$RUNS/bb-missing.log"
check "a missing command: nothing in the runs folder" \
    test ! -e "$RUNS/bb-missing"
finish
