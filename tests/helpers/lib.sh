# shellcheck shell=bash
# tests/helpers/lib.sh — what the shell suites (tests/e2e, tests/docker)
# share (sourced): TAP lines, runs and their results, waiting, the hostile
# plan. Suites on local:docker also source tests/helpers/docker.sh.
#
# Each suite prints TAP lines through ok / not_ok / check / skip and ends
# with `finish`, which prints the tally and sets the exit status. Runs go
# to a fresh folder under /tmp that is removed at exit.
#
#   TESTYARD   the program under test (default build/testyard)

TY=${TESTYARD:-build/testyard}
TAPN=0
TAPFAIL=0
RUNS=$(mktemp -d /tmp/testyard-e2e.XXXXXX)
trap 'rm -rf "$RUNS"' EXIT

ok() {
    TAPN=$((TAPN + 1))
    echo "ok $TAPN - $*"
}

not_ok() {
    TAPN=$((TAPN + 1))
    TAPFAIL=$((TAPFAIL + 1))
    echo "not ok $TAPN - $*"
}

skip() {
    TAPN=$((TAPN + 1))
    echo "ok $TAPN - $1 # SKIP $2"
}

# check DESCRIPTION COMMAND... — ok when the command succeeds.
check() {
    local desc=$1
    shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# check_eq DESCRIPTION GOT WANT
check_eq() {
    if [ "$2" = "$3" ]; then
        ok "$1"
    else
        not_ok "$1"
        echo "#   got:  $2"
        echo "#   want: $3"
    fi
}

finish() {
    echo "$((TAPN - TAPFAIL)) passed, $TAPFAIL failed"
    [ "$TAPFAIL" -eq 0 ]
}

# run_comp ID FILE [ARGS...] — run a composition with the repository's
# plans; stdout+stderr go to $RUNS/ID.log; prints the exit status.
run_comp() {
    local id=$1 file=$2
    shift 2
    "$TY" run --plans plans --runs "$RUNS" --run-id "$id" --no-progress \
        "$@" "$file" >"$RUNS/$id.log" 2>&1
    echo $?
}

# wait_for SECONDS COMMAND... — until the command succeeds (tried every
# 0.1 s); false when it has not within SECONDS.
wait_for() {
    local n=$(($1 * 10))
    shift
    for _ in $(seq 1 "$n"); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

# gone PID — the process has ended.
gone() {
    ! kill -0 "$1" 2>/dev/null
}

# logged ID PATTERN — the run's log holds a line matching PATTERN.
logged() {
    grep -q "$2" "$RUNS/$1.log" 2>/dev/null
}

# started ID N — the run's log says all N instances started.
started() {
    logged "$1" "all $2 instances started"
}

# run_bg ID FILE N [SECONDS] — start FILE as run ID in the background
# (BGPID; its output in $RUNS/ID.log) and wait, SECONDS at most (default
# 30), until its N instances have started; false when they have not.
# The run inherits the caller's environment (DOCKER_HOST=... run_bg ...).
run_bg() {
    "$TY" run --plans plans --runs "$RUNS" --run-id "$1" --no-progress \
        "$2" >"$RUNS/$1.log" 2>&1 &
    # shellcheck disable=SC2034 # the suites' handle on the run
    BGPID=$!
    wait_for "${4:-30}" started "$1" "$3"
}

# hangup ID FILE N SECONDS RUNNING... — run FILE (N instances) as run ID
# under script(1), the session leader of its pseudo-terminal, until
# RUNNING... succeeds (SECONDS at most); then kill script, which closes
# the terminal's master side: the kernel sends the run SIGHUP. Checks
# (TAP, "SIGHUP: ...") that the instances ran, that the coordinator ends,
# and that result.json says canceled, exit status 130, N canceled.
hangup() {
    local id=$1 f=$2 n=$3 limit=$4 spid tpid
    shift 4
    script -qec "sh -c 'echo \$\$ >$RUNS/$id.pid; exec $TY run --plans plans \
        --runs $RUNS --run-id $id $f 2>$RUNS/$id.log'" /dev/null \
        >/dev/null 2>&1 &
    spid=$!
    check "SIGHUP: $n instances run" wait_for "$limit" "$@"
    tpid=$(cat "$RUNS/$id.pid")
    kill -KILL "$spid"
    wait "$spid" 2>/dev/null
    check "SIGHUP: the coordinator ends" wait_for 60 gone "$tpid"
    check_eq "SIGHUP: run outcome canceled" "$(result "$id" .outcome)" canceled
    check_eq "SIGHUP: exit status in result.json" \
        "$(result "$id" .exit_status)" 130
    check_eq "SIGHUP: $n instances canceled" \
        "$(result "$id" '.groups[0].outcomes.canceled')" "$n"
}

# result ID JQ-FILTER — a value from a run's result.json.
result() {
    jq -r "$2" "$RUNS/$1/result.json" 2>/dev/null
}

# leak_stress ID LEAK RUNNER — a small memory-stress run on RUNNER, the
# provider leaking LEAK bytes a round: 8MB files in 256 KiB blocks, six
# rounds, heap snapshots before and after each round's trim, heap samples
# every 64 KiB so the leak's rate is measured closely.
leak_stress() {
    composition "$1" <<EOF
metadata: {name: $1}
global:
  plan: memory-stress
  case: stress
  runner: $3
  run:
    test_params:
      size: 8MB
      chunk_size: 18
      rounds: 6
      memory_snapshots: simple
      leak_per_round: $2
    profiles:
      heap_rate: 64Ki
  run_config: {timeout: 3m}
groups:
  - id: providers
    instances: {count: 1}
    resources: {memory: 512Mi}
  - id: requestors
    instances: {count: 1}
    resources: {memory: 256Mi}
EOF
}

# show_log ID — print a run's log as TAP comments (after a failure).
show_log() {
    sed 's/^/#   /' "$RUNS/$1.log" | tail -n 30
}

# composition NAME — write stdin to $RUNS/NAME.yaml and print its path.
composition() {
    cat >"$RUNS/$1.yaml"
    echo "$RUNS/$1.yaml"
}

# no_procs ID — no process of the run is left.
no_procs() {
    [ "$(procs_of_run "$1")" -eq 0 ]
}

# kill_run ID — SIGKILL what is left of run ID's processes (after a
# failed check).
kill_run() {
    grep -l -s -z -x "TEST_RUN=$1" /proc/[0-9]*/environ 2>/dev/null |
        cut -d/ -f3 | xargs -r kill -KILL 2>/dev/null
    return 0
}

# exec_leftovers ID — remove what a failed local:exec run left: its
# processes and its cgroups (only this run's).
exec_leftovers() {
    local d
    kill_run "$1"
    sleep 0.2
    for d in /sys/fs/cgroup/testyard/"$1" /sys/fs/cgroup/*/testyard/"$1"; do
        [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
    done
    return 0
}

# can_limit_memory — true when local:exec can put instances in memory
# cgroups here (root and a memory controller).
can_limit_memory() {
    [ "$(id -u)" -eq 0 ] &&
        { [ -d /sys/fs/cgroup/memory ] ||
            grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; }
}

# procs_of_run ID — how many processes have TEST_RUN=ID in their
# environment (instances of that run still alive).
procs_of_run() {
    grep -l -s -z -x "TEST_RUN=$1" /proc/[0-9]*/environ 2>/dev/null | wc -l
}

# json_true FILE FILTER — the filter holds on the JSON file.
json_true() {
    jq -e "$2" "$1" >/dev/null 2>&1
}

# json_lines_all FILE FILTER — the filter holds on every line of the JSON
# lines file (and there is one).
json_lines_all() {
    jq -s -e "length > 0 and all(.[]; $2)" "$1" >/dev/null 2>&1
}

# not_grep PATTERN FILE — the pattern does not occur in the file.
not_grep() {
    ! grep -q "$1" "$2"
}

# regular PATH — a regular file, not a link.
regular() {
    [ -f "$1" ] && [ ! -L "$1" ]
}

# between N LO HI — LO <= N <= HI.
between() {
    [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

# within V WANT PERCENT — V (a number, maybe fractional) is within PERCENT
# of WANT; an empty V or "null" is not.
within() {
    [ -n "$1" ] && [ "$1" != null ] &&
        awk -v v="$1" -v w="$2" -v p="$3" \
            'BEGIN { d = v - w; if (d < 0) d = -d; exit !(d <= w * p / 100) }'
}

# hostile_plan — tests/docker/hostile_plan.c as the plan "hostile" in
# $RUNS/plans (it plants links in its outputs, floods stdout, uploads
# past its quota: see its manifest).
hostile_plan() {
    mkdir -p "$RUNS/plans/hostile"
    cp tests/docker/hostile_plan.c "$RUNS/plans/hostile/main.c"
    cp tests/docker/hostile_manifest.yaml "$RUNS/plans/hostile/manifest.yaml"
}

# run_hostile ID FILE — run FILE with the hostile plan's folder; prints
# the exit status, the log goes to $RUNS/ID.log.
run_hostile() {
    "$TY" run --plans "$RUNS/plans" --runs "$RUNS" --run-id "$1" \
        --no-progress "$2" >"$RUNS/$1.log" 2>&1
    echo $?
}

# plant ID RUNNER TIMEOUT — the hostile plan's case "plant" as run ID on
# RUNNER (one instance, group h): first thing, it links run.out, run.err,
# memory.csv.partial, memory.csv and a folder for uploads in its own
# folder to host files and a host folder in $VICTIM. Checks (TAP,
# "plant: ...") that the run succeeds and that the runner wrote through
# none of the links, and sets RC to the run's exit status.
plant() {
    local out=$RUNS/$1/h/0 f
    VICTIM=$RUNS/victim
    mkdir -p "$VICTIM/dir"
    echo "host file" >"$VICTIM/out"
    echo "host csv" >"$VICTIM/csv"
    f=$(composition plant <<EOF2
global:
  plan: hostile
  case: plant
  runner: $2
  run:
    test_params: {victim: "$VICTIM"}
  run_config: {timeout: $3, memory_sample_interval: 20ms}
groups:
  - id: h
    instances: {count: 1}
EOF2
)
    RC=$(run_hostile "$1" "$f")
    check_eq "plant: the run succeeds (every write through a link was refused)" "$RC" 0
    check_eq "plant: the host file behind run.out is untouched" "$(cat "$VICTIM/out")" "host file"
    check "plant: the host file behind run.err was not created" [ ! -e "$VICTIM/err-new" ]
    check_eq "plant: the host file behind memory.csv.partial is untouched" "$(cat "$VICTIM/csv")" "host csv"
    check "plant: the host file behind memory.csv was not created" [ ! -e "$VICTIM/csv-final" ]
    check_eq "plant: nothing arrived in the linked folder" "$(find "$VICTIM/dir" -mindepth 1 | wc -l)" 0
    check "plant: run.out is the runner's file, not a link" regular "$out/run.out"
    check "plant: run.out holds the instance's stdout" grep -q "^to stdout 99$" "$out/run.out"
    check "plant: run.err holds its stderr" grep -q "^to stderr$" "$out/run.err"
    check "plant: the upload through the linked folder was refused" \
        grep -q "^upload sub/up.bin: -5 .*symbolic link" "$out/run.out"
    [ "$RC" = 0 ] || show_log "$1"
}

# flood_comp NAME SIZE LOG_LIMIT — a composition of the hostile plan's
# case "flood" on local:exec: one instance (group f) writes SIZE to
# stdout, with run.log_limit LOG_LIMIT; prints its path.
flood_comp() {
    composition "$1" <<EOF2
global:
  plan: hostile
  case: flood
  runner: local:exec
  run:
    test_params: {flood: $2}
    log_limit: $3
  run_config: {timeout: 1m}
groups:
  - id: f
    instances: {count: 1}
EOF2
}

# stack_plan — tests/e2e/stack_plan.c as the plan "stacks" in $RUNS/plans
# (a leak behind a helper, reached from main and from a test case, and
# one inside libc's strdup).
stack_plan() {
    mkdir -p "$RUNS/plans/stacks"
    cp tests/e2e/stack_plan.c "$RUNS/plans/stacks/main.c"
    cp tests/e2e/stack_manifest.yaml "$RUNS/plans/stacks/manifest.yaml"
}

# heap_traces FILE — the stacks of the heap profile FILE as `go tool pprof
# -traces` prints them, one a line: its functions, innermost first,
# separated by spaces.
heap_traces() {
    go tool pprof -symbolize=none -traces -sample_index=inuse_space "$1" \
        2>/dev/null | awk '
        /^-+\+/ { if (t != "") print t; t = ""; next }
        /:/ { next }
        { sub(/^ *[0-9.]+[kKMGTP]?B +/, ""); sub(/^ +/, "");
          if ($0 != "") t = t == "" ? $0 : t " " $0 }'
}

# run_stacks ID CASE RUNNER — the stacks plan's CASE as run ID on RUNNER,
# one instance in group g; checks (TAP) that it succeeds.
run_stacks() {
    local f rc
    stack_plan
    f=$(composition "$1" <<EOF2
global: {plan: stacks, case: $2, runner: $3}
groups: [{id: g, instances: {count: 1}}]
EOF2
)
    rc=$(run_hostile "$1" "$f")
    check_eq "$3: the stacks plan's $2 case succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log "$1"
}

# check_peak RUNNER — run the stacks plan's peak case on RUNNER (the
# default profiles.heap_peak, 32Mi): heap-peak holds the 128 MiB the plan
# held at its high (32 MiB from main, 96 in the case) within 20%, says it
# is a peak snapshot, and heap-end, taken after the case freed its 96, does
# not (TAP lines).
check_peak() {
    local id=peak-${1#local:} dir inuse
    run_stacks "$id" peak "$1"
    dir=$RUNS/$id/g/0
    check "$1: heap-peak.pb.gz and heap-peak.json are in the run folder" \
        [ -s "$dir/heap-peak.pb.gz" -a -s "$dir/heap-peak.json" ]
    check_eq "$1: heap-peak.json says trigger peak" \
        "$(jq -r '.trigger + " " + .label' "$dir/heap-peak.json")" "peak peak"
    inuse=$(jq '.profile.inuse_bytes' "$dir/heap-peak.json")
    check "$1: heap-peak in use ${inuse:-?} is within 20% of 128 MiB" \
        [ "${inuse:-0}" -gt 107374182 -a "${inuse:-0}" -lt 161061273 ]
    inuse=$(jq '.profile.inuse_bytes' "$dir/heap-end.json")
    check "$1: heap-end in use ${inuse:-?} is below 64 MiB (96 freed)" \
        [ "${inuse:-99999999999}" -lt 67108864 ]
    check_eq "$1: no temporary file left" \
        "$(find "$dir" -name '*.tmp*' | wc -l)" 0
}

# check_leak_stacks RUNNER — run the stacks plan on RUNNER and check that
# its heap profile names every frame of each way to a leak (TAP lines).
check_leak_stacks() {
    local id=stacks-${1#local:} prof traces
    run_stacks "$id" leak "$1"
    prof=$RUNS/$id/g/0/heap-leak.pb.gz
    check "$1: heap-leak.pb.gz is in the run folder" [ -s "$prof" ]
    check_eq "$1: the sidecar counts no stack backtrace() failed on" \
        "$(jq '.unwind.stacks_backtrace_failed' "${prof%.pb.gz}.json")" 0
    if ! command -v go >/dev/null; then
        skip "$1: whole stacks in go tool pprof -traces" "go missing"
        return
    fi
    traces=$(heap_traces "$prof")
    local want fails=$TAPFAIL
    for want in "stk_helper_alloc stk_plan_fill main" \
        "stk_helper_alloc stk_plan_fill stk_case ty_main"; do
        check "$1: -traces shows $want" \
            grep -q "^$want\\( \\|\$\\)" <<<"$traces"
    done
    check "$1: -traces shows strdup's caller: stk_dup_text stk_case ty_main" \
        grep -q "^[^ ]* stk_dup_text stk_case ty_main\\( \\|\$\\)" <<<"$traces"
    [ "$TAPFAIL" = "$fails" ] ||
        while IFS= read -r t; do echo "#   trace: $t"; done <<<"$traces"
}

# figures_plan — tests/e2e/figures_plan.c as the plan "figures" in
# $RUNS/plans (rounds that keep 8 MiB each, then a snapshot "hold" with
# memory held still on either side).
figures_plan() {
    mkdir -p "$RUNS/plans/figures"
    cp tests/e2e/figures_plan.c "$RUNS/plans/figures/main.c"
    cp tests/e2e/figures_manifest.yaml "$RUNS/plans/figures/manifest.yaml"
}

# csv_usage_near FILE TIME — usage_bytes of the row of memory.csv FILE
# nearest to TIME (RFC 3339 with milliseconds).
csv_usage_near() {
    jq -R -s -r --arg t "$2" '
        def ms: (.[0:19] + "Z" | fromdateiso8601) * 1000 + (.[20:23] | tonumber);
        ($t | ms) as $at
        | [split("\n")[1:][] | select(. != "") | split(",")
           | {d: ((.[0] | ms) - $at | fabs), u: .[2]}]
        | min_by(.d) | .u' "$1" 2>/dev/null
}

# check_figures RUNNER — run the figures plan on RUNNER, one group with
# memory_snapshots none and one with simple, 256 MiB each, and check the
# figures a user reads (TAP lines): a memory-rounds.jsonl line per round
# with RSS growing by what the plan keeps (and, in simple mode, the
# post-trim sidecar's figures), the sidecar's cgroup reading against
# memory.csv and the group's limit, the profiler's resident memory.
check_figures() {
    local id=figures-${1#local:} f rc g d sc at csv cur
    local limit=268435456 cg=1
    figures_plan
    f=$(composition "$id" <<EOF2
global:
  plan: figures
  case: rounds
  runner: $1
  run_config: {timeout: 2m, memory_sample_interval: 50ms}
groups:
  - {id: none, instances: {count: 1}, resources: {memory: 256Mi},
     run: {test_params: {memory_snapshots: none}}}
  - {id: simple, instances: {count: 1}, resources: {memory: 256Mi},
     run: {test_params: {memory_snapshots: simple}}}
EOF2
)
    rc=$(run_hostile "$id" "$f")
    check_eq "$1: the figures plan succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log "$id"
    [ "$1" = local:exec ] && ! can_limit_memory && cg=0
    for g in none simple; do
        d=$RUNS/$id/$g/0
        check_eq "$1, $g: memory-rounds.jsonl has rounds 1, 2, 3" \
            "$(jq -s -c 'map(.round)' "$d/memory-rounds.jsonl" 2>/dev/null)" "[1,2,3]"
        check "$1, $g: every reading has rss_bytes > 0 and the profiler's resident memory within its mapped" \
            json_lines_all "$d/memory-rounds.jsonl" '.rss_bytes > 0 and
                .profile.profiler_resident_bytes > 0 and
                .profile.profiler_resident_bytes <= .profile.profiler_bytes'
        check "$1, $g: RSS grows by the 16 MiB kept from round 1 to 3" \
            test "$(jq -s '(.[2].rss_bytes - .[0].rss_bytes) / 1048576 | floor' \
                "$d/memory-rounds.jsonl" 2>/dev/null)" -ge 15
        sc=$d/heap-hold.json
        check "$1, $g: the snapshot's profiler_resident_bytes is > 0 and <= profiler_bytes" \
            json_true "$sc" '.profile.profiler_resident_bytes > 0 and
                .profile.profiler_resident_bytes <= .profile.profiler_bytes'
        check_eq "$1, $g: the snapshot's trigger" "$(jq -r .trigger "$sc")" call
        if [ "$cg" = 0 ]; then
            skip "$1, $g: the sidecar's cgroup" "no memory cgroup can be created here (needs root)"
            continue
        fi
        check "$1, $g: every reading has the cgroup's usage and limit" \
            json_lines_all "$d/memory-rounds.jsonl" ".cgroup.current_bytes > 0 and
                .cgroup.limit_bytes == $limit"
        check_eq "$1, $g: the sidecar's cgroup limit_bytes is the group's 256Mi" \
            "$(jq '.cgroup.limit_bytes' "$sc")" "$limit"
        check_eq "$1, $g: diagnostics.out's cgroup.memory.limit_bytes gauge is the group's 256Mi" \
            "$(jq -s '[.[] | select(.name == "cgroup.memory.limit_bytes")]
                | last | .measures.value' "$d/diagnostics.out" 2>/dev/null)" "$limit"
        at=$(jq -r .time "$sc")
        cur=$(jq '.cgroup.current_bytes' "$sc")
        csv=$(csv_usage_near "$d/memory.csv" "$at")
        check "$1, $g: the sidecar's cgroup usage ($cur) is memory.csv's at $at ($csv) within 4 MiB" \
            test "$(((${cur:-0} - ${csv:-0}) / 4194304))" = 0 -a "${cur:-0}" -gt 0
        [ "$g" = simple ] || continue
        check "$1, simple: round 3's reading is the post-trim sidecar's figures" \
            test "$(jq -c '[.time, .rss_bytes, .cgroup.current_bytes]' \
                "$d/heap-round-3-post-trim.json")" = \
            "$(jq -s -c '.[2] | [.time, .rss_bytes, .cgroup.current_bytes]' \
                "$d/memory-rounds.jsonl" 2>/dev/null)"
    done
}

# preoom_plan — tests/e2e/preoom_plan.c as the plan "preoom" in
# $RUNS/plans (it fills its memory until it is OOM-killed; by group, it
# looks like an LD_PRELOAD'ed profiler that asked for the pre-OOM signal,
# or lacks the handler, or the environment).
preoom_plan() {
    mkdir -p "$RUNS/plans/preoom"
    cp tests/e2e/preoom_plan.c "$RUNS/plans/preoom/main.c"
    cp tests/e2e/preoom_manifest.yaml "$RUNS/plans/preoom/manifest.yaml"
}

# rfc3339_ms TIME — TIME (RFC 3339) in Unix milliseconds.
rfc3339_ms() {
    date -u -d "$1" +%s%3N
}

# check_preoom RUNNER — run the preoom plan on RUNNER, one instance per
# group under a 64 MiB limit, and check (TAP lines) that the one that
# asked for it got the pre-OOM signal with TY_WIRE_PREOOM_SIGVAL less
# than 2 s before its OOM kill, that result.json's pre_oom says so, and
# that the two that did not ask were never signalled.
check_preoom() {
    local id=preoom-${1#local:} f rc out note sig_ms kill_ms start_ms q
    local oom_ms first_ms v
    preoom_plan
    f=$(composition "$id" <<EOF2
global:
  plan: preoom
  case: grow
  runner: $1
  run_config: {timeout: 2m, memory_sample_interval: 20ms}
groups:
  - {id: asked, instances: {count: 1}, resources: {memory: 64Mi}}
  - {id: nohandler, instances: {count: 1}, resources: {memory: 64Mi}}
  - {id: noenv, instances: {count: 1}, resources: {memory: 64Mi}}
EOF2
)
    rc=$(run_hostile "$id" "$f")
    check_eq "$1: the run fails (every instance is OOM-killed)" "$rc" 1
    out=$RUNS/$id
    for g in asked nohandler noenv; do
        check_eq "$1: $g is OOM-killed (not killed by a signal)" \
            "$(result "$id" ".instances[] | select(.group == \"$g\") | .outcome")" oom
    done
    note=$out/asked/0/pre-oom-signal
    check "$1: the instance that asked wrote pre-oom-signal" [ -s "$note" ]
    check_eq "$1: it was signalled once, with the pre-OOM value, by sigqueue" \
        "$(awk '{print $2, $3}' "$note" 2>/dev/null | tr '\n' ';')" \
        "1415139149 -1;"
    q='.instances[] | select(.group == "asked") | .memory'
    start_ms=$(rfc3339_ms "$(result "$id" .started)" 2>/dev/null)
    oom_ms=$(result "$id" "$q.oom_at_ms")
    first_ms=$(result "$id" "$q.pre_oom.first_ms")
    sig_ms=$(awk 'NR == 1 {print $1}' "$note" 2>/dev/null)
    for v in start_ms oom_ms first_ms sig_ms; do
        [[ ${!v} =~ ^[0-9]+$ ]] || printf -v "$v" 0
    done
    kill_ms=$((start_ms + oom_ms))
    check "$1: the signal came before the OOM kill, less than 2 s before" \
        between "$((kill_ms - sig_ms))" 0 1999
    check_eq "$1: result.json: pre_oom asked once, by signal" \
        "$(result "$id" "$q.pre_oom | [.requests, .via] | @tsv")" "1	signal"
    check_eq "$1: result.json: pre_oom's limit is the group's" \
        "$(result "$id" "$q.pre_oom.limit_bytes")" 67108864
    check "$1: result.json: pre_oom's usage is 90 % of the limit or more" \
        json_true "$out/result.json" \
        "$q.pre_oom | .usage_bytes >= 0.9 * .limit_bytes and .usage_bytes <= .limit_bytes"
    check "$1: result.json: first_ms = last_ms, before oom_at_ms" \
        json_true "$out/result.json" \
        "$q | .pre_oom.first_ms == .pre_oom.last_ms and .pre_oom.first_ms <= .oom_at_ms"
    check "$1: the signal came after the request" \
        between "$((sig_ms - start_ms - first_ms))" -25 1999
    for g in nohandler noenv; do
        check "$1: $g was not signalled" [ ! -e "$out/$g/0/pre-oom-signal" ]
        check_eq "$1: result.json: $g's pre_oom is null" \
            "$(result "$id" ".instances[] | select(.group == \"$g\") | .memory.pre_oom")" null
    done
    [ "$TAPFAIL" = 0 ] || show_log "$id"
}

# report_of DIR PROG — the LD_PRELOAD exit snapshot of PROG in DIR
# (heap-PROG-<pid>-exit.*) as a run folder DIR/run of one instance
# (group servers); prints `testyard report`'s terminal text.
report_of() {
    mkdir -p "$1/run/servers/0"
    cp "$1"/heap-"$2"-*-exit.* "$1/run/servers/0/"
    cat >"$1/run/result.json" <<JSON
{"run_id": "servers", "plan": "$2", "case": "default",
 "runner": "local:exec", "started": "2026-12-01T20:00:00.000Z",
 "outcome": "success", "groups": [{"id": "servers", "instances": 1}],
 "instances": [{"group": "servers", "index": 0, "outcome": "success"}]}
JSON
    "$TY" report "$1/run" 2>&1
}
