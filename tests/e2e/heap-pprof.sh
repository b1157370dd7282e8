#!/bin/bash
# tests/e2e/heap-pprof.sh — heap profiles as the tools users open them with.
#
# Builds two small programs against the build tree ($BUILD, default build):
# heap_prog.c, which knows nothing of testyard and is profiled through
# LD_PRELOAD=libtestyard-heap.so, and heap_plan.c, a plan that calls the
# SDK's memory functions. Their profiles must decode with protoc against
# pprof's published profile.proto and open in `go tool pprof`, with the
# allocating function named. protoc and go checks skip when the tool (or
# the schema, from golang-github-google-pprof-dev) is not installed.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
PROTO_DIR=/usr/share/gocode/src/github.com/google/pprof/proto

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() {
    local what=$1
    shift
    if "$@"; then ok "$what"; else notok "$what"; fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PPROF_TMPDIR=$tmp HOME=$tmp

lib=$PWD/$BUILD/libtestyard-heap.so
if [ ! -f "$lib" ] || [ ! -f "$BUILD/libtestyard.a" ]; then
    notok "$BUILD/libtestyard-heap.so and libtestyard.a exist (make tests)"
    exit 1
fi
CFLAGS="-O2 -g -fno-omit-frame-pointer"
# shellcheck disable=SC2086
check "heap_prog builds" cc $CFLAGS -o "$tmp/heap_prog" tests/e2e/heap_prog.c
# shellcheck disable=SC2046,SC2086
check "heap_plan builds against libtestyard.a" \
    cc $CFLAGS -Isdk/include -o "$tmp/heap_plan" tests/e2e/heap_plan.c \
    "$BUILD/libtestyard.a" \
    $(pkg-config --libs libzmq libcjson yaml-0.1 zlib libcurl) \
    -lm -ldl -pthread

have_protoc=0
command -v protoc >/dev/null && [ -f "$PROTO_DIR/profile.proto" ] &&
    have_protoc=1
have_go=0
command -v go >/dev/null && have_go=1

# decodes FILE.pb.gz — protoc against the published schema
decodes() {
    zcat "$1" | protoc --decode perftools.profiles.Profile \
        -I"$PROTO_DIR" profile.proto >"$1.txt" 2>&1
}

# pprof_raw FILE — pprof's own reader, names from the profile only
pprof_raw() {
    go tool pprof -symbolize=none -raw "$1" 2>/dev/null
}

check_tools() {
    local f=$1 fn=$2 what=$3
    if [ "$have_protoc" = 1 ]; then
        check "$what: protoc --decode against profile.proto" decodes "$f"
    else
        skip "$what: protoc --decode" "protoc or profile.proto missing"
    fi
    if [ "$have_go" = 1 ]; then
        check "$what: go tool pprof -raw names $fn" \
            bash -c "go tool pprof -symbolize=none -raw '$f' 2>/dev/null |
                grep -q ' $fn '"
        check "$what: go tool pprof -top shows $fn in inuse_space" \
            bash -c "go tool pprof -symbolize=none -top \
                -sample_index=inuse_space '$f' 2>/dev/null | grep -q '$fn\$'"
    else
        skip "$what: go tool pprof" "go missing"
        skip "$what: go tool pprof -top" "go missing"
    fi
}

# first PATH... — the first of the paths (a glob's expansion) that exists
first() {
    local f
    for f in "$@"; do [ -e "$f" ] && { echo "$f"; return; }; done
}

# count PATH... — how many of them exist
count() {
    local f c=0
    for f in "$@"; do [ -e "$f" ] && c=$((c + 1)); done
    echo "$c"
}

# json_num FILE KEY — a top-level number from a sidecar
json_num() {
    grep -o "\"$2\":[[:space:]]*[0-9]*" "$1" | head -n 1 | grep -o '[0-9]*$'
}

# json_str FILE KEY — the first string member KEY of a sidecar
json_str() {
    sed -n "s/^[[:space:]]*\"$2\":[[:space:]]*\"\([^\"]*\)\".*/\1/p" "$1" |
        head -n 1
}

# --- LD_PRELOAD, at exit -------------------------------------------------
out=$tmp/preload
mkdir -p "$out"
TESTYARD_HEAP_DIR=$out LD_PRELOAD=$lib "$tmp/heap_prog"
prof=$(first "$out"/heap-heap_prog-*-exit.pb.gz)
check "preload: exit snapshot written" test -n "$prof"
check "preload: sidecar written" test -f "${prof%.pb.gz}.json"
check "preload: exit sidecar's trigger is exit" \
    test "$(json_str "${prof%.pb.gz}.json" trigger)" = exit
check_tools "${prof:-none}" prog_keep_blocks "preload"
inuse=$(json_num "${prof%.pb.gz}.json" inuse_bytes)
# 400 blocks of 1 MiB at 512 KiB: 2% standard deviation, 12% is 6 sigma
check "preload: inuse_bytes ${inuse:-?} within 12% of 400 MiB" \
    test "${inuse:-0}" -gt 369098752 -a "${inuse:-0}" -lt 469762048
res=$(json_num "${prof%.pb.gz}.json" profiler_resident_bytes)
mapped=$(json_num "${prof%.pb.gz}.json" profiler_bytes)
check "preload: profiler_resident_bytes ${res:-?} > 0 and <= profiler_bytes ${mapped:-?}" \
    test "${res:-0}" -gt 0 -a "${res:-0}" -le "${mapped:-0}"
check "preload: no temporary files left" test "$(count "$out"/*tmp*)" = 0

# --- LD_PRELOAD, rate 1: exact -------------------------------------------
out=$tmp/rate1
mkdir -p "$out"
TESTYARD_HEAP_RATE=1 TESTYARD_HEAP_DIR=$out LD_PRELOAD=$lib "$tmp/heap_prog"
prof=$(first "$out"/heap-heap_prog-*-exit.pb.gz)
if [ "$have_go" = 1 ]; then
    check "preload, rate 1: 400 objects, 419430400 bytes exactly" \
        bash -c "go tool pprof -symbolize=none -raw '${prof:-none}' \
            2>/dev/null | grep -q ' 400  419430400        400  419430400'"
else
    skip "preload, rate 1: exact values" "go missing"
fi

# --- LD_PRELOAD, on a signal ---------------------------------------------
out=$tmp/signal
mkdir -p "$out"
TESTYARD_HEAP_AT_EXIT=0 TESTYARD_HEAP_DIR=$out LD_PRELOAD=$lib \
    "$tmp/heap_prog" signal
check "preload: SIGUSR2 snapshot written" \
    test "$(count "$out"/heap-heap_prog-*-signal-1.pb.gz)" = 1
f=$(first "$out"/heap-heap_prog-*-signal-1.json)
check "preload: signal sidecar's trigger is signal" \
    test "$(json_str "${f:-none}" trigger)" = signal
check "preload: TESTYARD_HEAP_AT_EXIT=0 writes no exit snapshot" \
    test "$(count "$out"/*exit*)" = 0

# --- LD_PRELOAD, the coordinator's pre-OOM request ----------------------
out=$tmp/preoom
mkdir -p "$out"
TESTYARD_HEAP_AT_EXIT=0 TESTYARD_HEAP_DIR=$out LD_PRELOAD=$lib \
    "$tmp/heap_prog" preoom
f=$(first "$out"/heap-heap_prog-*-pre-oom.json)
check "preload: SIGUSR2 queued with the pre-OOM value writes -pre-oom" \
    test -n "$f" -a -s "${f%.json}.pb.gz"
check "preload: its sidecar says trigger pre-oom" \
    grep -q '"trigger":[[:space:]]*"pre-oom"' "${f:-none}"
check "preload: the pre-OOM request is no signal-<k>" \
    test "$(count "$out"/*signal*)" = 0
for mode in kill queue7; do
    out=$tmp/$mode
    mkdir -p "$out"
    TESTYARD_HEAP_AT_EXIT=0 TESTYARD_HEAP_DIR=$out LD_PRELOAD=$lib \
        "$tmp/heap_prog" $mode
    f=$(first "$out"/heap-heap_prog-*-signal-1.json)
    check "preload: $mode (SIGUSR2 not from the coordinator) writes signal-1" \
        test -n "$f"
    check "preload: $mode: trigger signal, no pre-oom" \
        test "$(grep -c '"trigger":[[:space:]]*"signal"' "${f:-none}")" = 1 \
        -a "$(count "$out"/*pre-oom*)" = 0
done

# --- LD_PRELOAD, at the peak ---------------------------------------------
out=$tmp/hold
mkdir -p "$out"
TESTYARD_HEAP_DIR=$out LD_PRELOAD=$lib "$tmp/heap_prog" hold
f=$(first "$out"/heap-heap_prog-*-peak.json)
check "preload: a heap that grew by 400 MiB leaves -peak" test -n "$f"
inuse=$(json_num "${f:-none}" inuse_bytes)
check "preload: -peak in use ${inuse:-?} within 20% of 400 MiB" \
    test "${inuse:-0}" -gt 335544320 -a "${inuse:-0}" -lt 503316480
check "preload: -peak's sidecar says trigger peak" \
    grep -q '"trigger":[[:space:]]*"peak"' "${f:-none}"
check "preload: one -peak file, replaced in place" \
    test "$(count "$out"/*-peak.pb.gz)" = 1 -a "$(count "$out"/*tmp*)" = 0
f=$(first "$out"/heap-heap_prog-*-exit.json)
inuse=$(json_num "${f:-none}" inuse_bytes)
check "preload: -exit after the frees holds ${inuse:-?} < 32 MiB" \
    test "${inuse:-999999999999}" -lt 33554432
out=$tmp/peakoff
mkdir -p "$out"
TESTYARD_HEAP_PEAK_STEP=off TESTYARD_HEAP_DIR=$out LD_PRELOAD=$lib \
    "$tmp/heap_prog" hold
check "preload: TESTYARD_HEAP_PEAK_STEP=off writes no -peak" \
    test "$(count "$out"/*peak*)" = 0

# --- LD_PRELOAD, fork ----------------------------------------------------
out=$tmp/fork
mkdir -p "$out"
TESTYARD_HEAP_DIR=$out LD_PRELOAD=$lib "$tmp/heap_prog" fork
check "preload: parent and forked child each write their exit snapshot" \
    test "$(count "$out"/heap-heap_prog-*-exit.pb.gz)" = 2

# --- LD_PRELOAD, sampling off --------------------------------------------
out=$tmp/off
mkdir -p "$out"
TESTYARD_HEAP_RATE=0 TESTYARD_HEAP_DIR=$out LD_PRELOAD=$lib "$tmp/heap_prog"
f=$(first "$out"/*exit.json)
check "preload, rate 0: no samples" test "$(json_num "${f:-none}" samples)" = 0

# --- The SDK from a plan -------------------------------------------------
out=$tmp/plan
mkdir -p "$out"
TEST_CASE=snap TEST_OUTPUTS_PATH=$out TESTYARD_HEAP_PROFILE_INTERVAL=200ms \
    TESTYARD_PARAMS='{"memory_snapshots":"detailed","memory_snapshot_every":2}' \
    "$tmp/heap_plan" >"$tmp/plan.out" 2>&1
check "plan: case succeeds" grep -q '"type":"success"' "$tmp/plan.out"
for label in one round-1-pre-trim round-1-post-trim round-2-post-trim \
    event-2 event-4 periodic-1; do
    check "plan: heap-$label.pb.gz and .json written" \
        test -s "$out/heap-$label.pb.gz" -a -s "$out/heap-$label.json"
done
check "plan: no heap-event-1 (every 2nd event)" test ! -e "$out/heap-event-1.json"
check "plan: round sidecar has its round" \
    test "$(json_num "$out/heap-round-2-pre-trim.json" round)" = 2
check "plan: memory-rounds.jsonl has a line per round (1, 2)" \
    test "$(jq -s -c 'map(.round)' "$out/memory-rounds.jsonl" 2>/dev/null)" = "[1,2]"
check "plan: round 2's reading is heap-round-2-post-trim.json's figures" \
    test "$(jq -c '[.time, .rss_bytes, .profile.inuse_bytes]' \
        "$out/heap-round-2-post-trim.json")" = \
    "$(jq -s -c '.[1] | [.time, .rss_bytes, .profile.inuse_bytes]' \
        "$out/memory-rounds.jsonl" 2>/dev/null)"
for lt in one:call round-1-post-trim:round event-2:event periodic-1:periodic; do
    check "plan: heap-${lt%%:*}.json's trigger is ${lt#*:}" \
        test "$(json_str "$out/heap-${lt%%:*}.json" trigger)" = "${lt#*:}"
done
check_tools "$out/heap-one.pb.gz" plan_keep_blocks "plan"

# --- A bad value: the same line from the SDK and from LD_PRELOAD ---------
out=$tmp/bad
mkdir -p "$out"
TESTYARD_HEAP_RATE=lots TESTYARD_HEAP_DIR=$out LD_PRELOAD=$lib \
    "$tmp/heap_prog" >/dev/null 2>"$tmp/bad-preload.err"
line=$(sed -n 's/^testyard-heap: \(TESTYARD_HEAP_RATE=.*\)$/\1/p' \
    "$tmp/bad-preload.err")
check "preload: TESTYARD_HEAP_RATE=lots is refused on stderr, 512 KiB used" \
    grep -q '^TESTYARD_HEAP_RATE="lots": expected a size.*; sampling every 524288 bytes$' \
    <<<"$line"
TEST_CASE=snap TEST_OUTPUTS_PATH=$out TESTYARD_HEAP_RATE=lots \
    "$tmp/heap_plan" >"$tmp/bad-plan.out" 2>&1
check "plan: the same line as a message event" \
    grep -qF "\"message\":\"heap: ${line//\"/\\\"}\"" "$tmp/bad-plan.out"

echo "$n tests"
