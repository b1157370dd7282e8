# shellcheck shell=bash
# tests/e2e/lib.sh — helpers for the end-to-end suites (sourced).
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

# result ID JQ-FILTER — a value from a run's result.json.
result() {
    jq -r "$2" "$RUNS/$1/result.json" 2>/dev/null
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

# docker_api PATH — GET from the local engine's API (unix socket).
docker_api() {
    curl -sf --unix-socket /var/run/docker.sock "http://docker$1"
}

# have_docker — an engine answers.
have_docker() {
    docker_api /_ping >/dev/null 2>&1
}

# containers_of_run ID — how many containers (any state) carry the run's
# label.
containers_of_run() {
    docker_api "/containers/json?all=1&filters=%7B%22label%22%3A%5B%22testyard.run%3D$1%22%5D%7D" |
        jq length
}

# networks_of_run ID — how many networks carry the run's label.
networks_of_run() {
    docker_api "/networks?filters=%7B%22label%22%3A%5B%22testyard.run%3D$1%22%5D%7D" |
        jq length
}

# json_true FILE FILTER — the filter holds on the JSON file.
json_true() {
    jq -e "$2" "$1" >/dev/null 2>&1
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

# check_leak_stacks RUNNER — run the stacks plan on RUNNER and check that
# its heap profile names every frame of each way to a leak (TAP lines).
check_leak_stacks() {
    local id=stacks-${1#local:} f rc prof traces
    stack_plan
    f=$(composition "$id" <<EOF2
global: {plan: stacks, case: leak, runner: $1}
groups: [{id: g, instances: {count: 1}}]
EOF2
)
    rc=$(run_hostile "$id" "$f")
    check_eq "$1: the stacks plan succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log "$id"
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
