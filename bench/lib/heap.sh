# shellcheck shell=bash
# bench/lib/heap.sh — what bench/heap-overhead.sh and
# bench/heap-snapshots.sh share: the workload built unprofiled, and the
# median of a column.

# heap_workload NAME OUT — build bench/heap_overhead.c alone into OUT, or
# say why not on stderr and return 70.
heap_workload() {
    cc -O2 -g -fno-omit-frame-pointer -pthread -o "$2" bench/heap_overhead.c &&
        return 0
    echo "$1: cannot build the workload" >&2
    return 70
}

# stat FILE COLUMN — "median min max" of a column
stat() {
    sort -g -k "$2,$2" "$1" | awk -v c="$2" '{ v[NR] = $c }
        END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf "%.3f %.3f %.3f", m, v[1], v[NR] }'
}
