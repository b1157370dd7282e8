#!/bin/bash
# bench/heap-snapshots.sh — what peak and pre-OOM snapshots add to the
# heap profiler's cost.
#
#   bench/heap-snapshots.sh [-r RUNS] [-t THREADS] [-n OPS] [-k REQUESTS]
#                           [-c CALLGRIND_OPS]
#
# Runs bench/heap_overhead.c (threads replacing blocks of mixed sizes; the
# heap ramps up to about 32 MiB per thread, then stays there) under
# LD_PRELOAD=libtestyard-heap.so at its default rate, RUNS times
# round-robin, in four configurations:
#
#   nopeak    TESTYARD_HEAP_PEAK_STEP=off: the profiler without either
#   peak      the defaults: a peak snapshot per 32 MiB of new high, at
#             most one a second
#   peak-1Mi  TESTYARD_HEAP_PEAK_STEP=1Mi TESTYARD_HEAP_PEAK_INTERVAL=0:
#             a snapshot at every new MiB of high, as fast as they come
#   preoom    peak off, and REQUESTS pre-OOM requests (SIGUSR2 queued
#             with the coordinator's value) spread over the run
#
# and prints per configuration the median and range of CPU seconds (user
# + system) and its ratio to nopeak. CPU seconds swing with the machine's
# load by more than these costs, so each configuration is also counted in
# instructions (valgrind --tool=callgrind, one run of CALLGRIND_OPS
# operations on one thread, every thread of the process counted), which
# do not; the last line gives one pre-OOM snapshot's cost from both. BUILD
# (default build) is the tree with libtestyard-heap.so.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib/heap.sh
. bench/lib/heap.sh
BUILD=${BUILD:-build}
runs=5 threads=4 ops=2000000 requests=10 cgops=300000
while getopts r:t:n:k:c:h opt; do
    case $opt in
    r) runs=$OPTARG ;;
    t) threads=$OPTARG ;;
    n) ops=$OPTARG ;;
    k) requests=$OPTARG ;;
    c) cgops=$OPTARG ;;
    *) sed -n '2,29p' "$0"; exit 64 ;;
    esac
done

lib=$PWD/$BUILD/libtestyard-heap.so
if [ ! -f "$lib" ]; then
    echo "heap-snapshots: $lib is not built (make)" >&2
    exit 70
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
heap_workload heap-snapshots "$tmp/plain" || exit
configs=(nopeak peak peak-1Mi preoom)

# run CONFIG THREADS OPS [COMMAND PREFIX...] — one run, its output line
run() {
    local c=$1 t=$2 n=$3 k=0
    shift 3
    local env=(LD_PRELOAD="$lib" TESTYARD_HEAP_AT_EXIT=0
        TESTYARD_HEAP_DIR="$tmp/out")
    case $c in
    nopeak) env+=(TESTYARD_HEAP_PEAK_STEP=off) ;;
    peak-1Mi) env+=(TESTYARD_HEAP_PEAK_STEP=1Mi TESTYARD_HEAP_PEAK_INTERVAL=0) ;;
    preoom) env+=(TESTYARD_HEAP_PEAK_STEP=off) k=$requests ;;
    esac
    rm -rf "$tmp/out" && mkdir -p "$tmp/out"
    env "${env[@]}" "$@" "$tmp/plain" "$t" "$n" 4096 "$k"
}

echo "# $threads threads x $ops operations; $runs runs of each, round-robin;" \
    "$requests pre-OOM requests; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= runs; r++)); do
    for c in "${configs[@]}"; do
        run "$c" "$threads" "$ops" >>"$tmp/$c.txt" 2>>"$tmp/$c.err" ||
            echo "heap-snapshots: $c failed (see its stderr)" >&2
    done
done
# the pre-OOM snapshots were written (each replaces the last)
compgen -G "$tmp/out/heap-*-pre-oom.json" >/dev/null ||
    echo "heap-snapshots: preoom wrote no pre-oom snapshot" >&2

have_cg=0
command -v valgrind >/dev/null && have_cg=1
for c in "${configs[@]}"; do
    if [ "$have_cg" = 1 ]; then
        run "$c" 1 "$cgops" valgrind --tool=callgrind \
            --callgrind-out-file=/dev/null >/dev/null 2>"$tmp/$c.cg"
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/$c.cg" >"$tmp/$c.ir"
    fi
    [ -s "$tmp/$c.ir" ] || echo nan >"$tmp/$c.ir"
done

printf '%-10s %22s %8s %15s %9s\n' configuration "CPU s median [range]" \
    "CPU x" instructions "instr. x"
read -r bcpu _ < <(stat "$tmp/nopeak.txt" 2)
bir=$(cat "$tmp/nopeak.ir")
for c in "${configs[@]}"; do
    read -r cpu cmin cmax < <(stat "$tmp/$c.txt" 2)
    awk -v c="$c" -v cpu="$cpu" -v cmin="$cmin" -v cmax="$cmax" \
        -v bcpu="$bcpu" -v ir="$(cat "$tmp/$c.ir")" -v bir="$bir" 'BEGIN {
        printf "%-10s %7.3f [%5.3f-%5.3f] %8.3f %15s %9.4f\n", c, cpu, cmin,
            cmax, cpu / bcpu, ir, (bir > 0 ? ir / bir : 0) }'
done
read -r pcpu _ < <(stat "$tmp/preoom.txt" 2)
awk -v k="$requests" -v cpu="$pcpu" -v bcpu="$bcpu" \
    -v ir="$(cat "$tmp/preoom.ir")" -v bir="$bir" 'BEGIN {
    printf "# one pre-OOM snapshot: %.1f ms CPU (median difference over %d), %.2f M instructions\n",
        (cpu - bcpu) * 1000 / k, k, (ir - bir) / k / 1e6 }'
