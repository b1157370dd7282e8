#!/bin/bash
# bench/heap-overhead.sh — what sampling heap profilers cost, side by side.
#
#   bench/heap-overhead.sh [-r RUNS] [-t THREADS] [-n OPS] [-s SLOTS]
#
# Runs bench/heap_overhead.c (threads replacing blocks of mixed sizes)
# under each configuration, RUNS times round-robin so that drifting load
# hits all alike, and prints per configuration the median and range of CPU
# seconds (user + system) and wall seconds, the median max RSS, and the
# cost of profiling against the same allocator unprofiled:
#
#   glibc             glibc malloc, no profiler (the workload built alone)
#   testyard          + libtestyard-heap.so by LD_PRELOAD, default 512 KiB
#   testyard-linked   the workload linked with libtestyard.a, as plans are
#   testyard-off      the same with TESTYARD_HEAP_RATE=0 (the wrappers only)
#   jemalloc          libjemalloc.so.2, prof:false
#   jemalloc-prof     prof:true,lg_prof_sample:19 (a sample per 512 KiB)
#   tcmalloc          libtcmalloc.so.4, TCMALLOC_SAMPLE_PARAMETER=0
#   tcmalloc-sample   TCMALLOC_SAMPLE_PARAMETER=524288
#
# A configuration whose library is missing is left out. BUILD (default
# build) is the tree with libtestyard-heap.so and bench/heap_overhead.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib/heap.sh
. bench/lib/heap.sh
BUILD=${BUILD:-build}
runs=7 threads=4 ops=2000000 slots=4096
while getopts r:t:n:s:h opt; do
    case $opt in
    r) runs=$OPTARG ;;
    t) threads=$OPTARG ;;
    n) ops=$OPTARG ;;
    s) slots=$OPTARG ;;
    *) sed -n '2,24p' "$0"; exit 64 ;;
    esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
heap_workload heap-overhead "$tmp/plain" || exit

libdir=/usr/lib/x86_64-linux-gnu
ours=$PWD/$BUILD/libtestyard-heap.so
linked=$BUILD/bench/heap_overhead
je=$libdir/libjemalloc.so.2
tc=$libdir/libtcmalloc.so.4

configs=(glibc)
[ -f "$ours" ] && configs+=(testyard)
[ -x "$linked" ] && configs+=(testyard-linked testyard-off)
[ -f "$je" ] && configs+=(jemalloc jemalloc-prof)
[ -f "$tc" ] && configs+=(tcmalloc tcmalloc-sample)

# baseline NAME — the unprofiled configuration NAME is compared with
baseline() {
    case $1 in
    jemalloc*) echo jemalloc ;;
    tcmalloc*) echo tcmalloc ;;
    *) echo glibc ;;
    esac
}

run() {
    local a=("$threads" "$ops" "$slots")
    case $1 in
    glibc) "$tmp/plain" "${a[@]}" ;;
    testyard) env LD_PRELOAD="$ours" TESTYARD_HEAP_AT_EXIT=0 \
        TESTYARD_HEAP_DIR="$tmp" "$tmp/plain" "${a[@]}" ;;
    testyard-linked) "$linked" "${a[@]}" ;;
    testyard-off) env TESTYARD_HEAP_RATE=0 "$linked" "${a[@]}" ;;
    jemalloc) env LD_PRELOAD="$je" MALLOC_CONF=prof:false \
        "$tmp/plain" "${a[@]}" ;;
    jemalloc-prof) env LD_PRELOAD="$je" MALLOC_CONF=prof:true,lg_prof_sample:19 \
        "$tmp/plain" "${a[@]}" ;;
    tcmalloc) env LD_PRELOAD="$tc" TCMALLOC_SAMPLE_PARAMETER=0 \
        "$tmp/plain" "${a[@]}" ;;
    tcmalloc-sample) env LD_PRELOAD="$tc" TCMALLOC_SAMPLE_PARAMETER=524288 \
        "$tmp/plain" "${a[@]}" ;;
    esac
}

echo "# $threads threads x $ops operations, $slots live blocks each;" \
    "$runs runs of each, round-robin; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= runs; r++)); do
    for c in "${configs[@]}"; do
        run "$c" >>"$tmp/$c.txt" 2>>"$tmp/$c.err" ||
            echo "heap-overhead: $c failed (see its stderr)" >&2
    done
done

printf '%-16s %22s %22s %9s %8s %10s\n' configuration \
    "CPU s median [range]" "wall s median [range]" "RSS MiB" \
    "CPU x" "+RSS MiB"
for c in "${configs[@]}"; do
    read -r cpu cmin cmax < <(stat "$tmp/$c.txt" 2)
    read -r wall wmin wmax < <(stat "$tmp/$c.txt" 1)
    read -r rss _ < <(stat "$tmp/$c.txt" 3)
    b=$(baseline "$c")
    read -r bcpu _ < <(stat "$tmp/$b.txt" 2)
    read -r brss _ < <(stat "$tmp/$b.txt" 3)
    awk -v c="$c" -v cpu="$cpu" -v cmin="$cmin" -v cmax="$cmax" \
        -v wall="$wall" -v wmin="$wmin" -v wmax="$wmax" -v rss="$rss" \
        -v bcpu="$bcpu" -v brss="$brss" 'BEGIN {
        printf "%-16s %7.3f [%5.3f-%5.3f] %7.3f [%5.3f-%5.3f] %9.1f %8.3f %+10.1f\n",
            c, cpu, cmin, cmax, wall, wmin, wmax, rss / 1024, cpu / bcpu,
            (rss - brss) / 1024 }'
done
echo "# CPU x and +RSS: against the same allocator unprofiled" \
    "(glibc for testyard)"
