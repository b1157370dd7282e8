# shellcheck shell=bash
# tests/helpers/series.sh — what tests/e2e/procdisk.sh and
# tests/docker/procdisk.sh share (sourced after tests/helpers/lib.sh):
# tests/e2e/procs_prog.c built, a composition that runs it, and the checks
# of the processes.csv and disk.csv it leaves.

PROCS_PROG=$RUNS/bin/procs_prog
MiB=1048576

# build_procs_prog — the program, dynamically linked (TAP line).
build_procs_prog() {
    mkdir -p "$RUNS/bin"
    check "procs_prog builds" \
        cc -O1 -g -o "$PROCS_PROG" tests/e2e/procs_prog.c
}

# procdisk_comp ID RUNNER DISK ARGS [RUN] — one instance of procs_prog
# under 512 MiB with run.disk DISK (a flow list), the program's ARGS
# (flow list items after the command) and more keys of its run (RUN,
# ", key: value"); processes every 200 ms, disks every 500 ms.
procdisk_comp() {
    composition "$1" <<EOF
metadata: {name: $1}
global:
  runner: $2
  run_config: {timeout: 2m, process_sample: 200ms, disk_sample: 500ms}
  run: {disk: $3}
groups:
  - id: pd
    instances: {count: 1}
    resources: {memory: 512Mi}
    run: {command: [$PROCS_PROG, --hold-ms, "3000", $4]${5:-}}
EOF
}

# proc_col CSV NAME COL AGG — AGG (max, first, last) of column COL of the
# rows of process NAME in a processes.csv.
proc_col() {
    awk -F, -v n="$2" -v c="$3" -v a="$4" '
        NR > 1 && $5 == n { v = $c; if (k++ == 0) f = v; if (v + 0 > m) m = v; l = v }
        END { if (k == 0) exit; print (a == "max" ? m : a == "first" ? f : l) }' "$1" 2>/dev/null
}

# disk_last CSV PATH — the last row's allocated,apparent,files of PATH in
# a disk.csv.
disk_last() {
    awk -F, -v p="$2" '$3 == p { r = $4 "," $5 "," $6 } END { print r }' "$1" 2>/dev/null
}

# full_samples CSV — how many samples (t_ms) list all three processes.
full_samples() {
    awk -F, 'NR > 1 && $5 ~ /^pd-/ { n[$2]++ }
        END { for (t in n) if (n[t] == 3) k++; print k + 0 }' "$1" 2>/dev/null
}

# parents_ok CSV — yes when every child row's ppid is the pid of the
# pd-parent rows (the file read twice: a first sample may list the
# children before the parent has renamed itself).
parents_ok() {
    awk -F, 'NR == FNR { if ($5 == "pd-parent") p[$3] = 1; next }
        FNR > 1 && ($5 == "pd-small" || $5 == "pd-busy") { if (!($4 in p)) bad++; n++ }
        END { print (n > 0 && bad == 0) ? "yes" : "no" }' "$1" "$1" 2>/dev/null
}

# bad_rows CSV — rows whose VmHWM or VmSize is below their RSS.
bad_rows() {
    awk -F, 'NR > 1 && $7 != "" && ($8 + 0 < $7 + 0 || $6 + 0 < $7 + 0) { b++ }
        END { print b + 0 }' "$1" 2>/dev/null
}

# check_processes WHAT CSV — the three processes with the RSS each
# touched (±20 %), VmHWM ≥ RSS, the busy one's CPU rising (TAP lines).
check_processes() {
    local what=$1 csv=$2 name want rss a b
    check "$what: processes.csv is there, a regular file" regular "$csv"
    check_eq "$what: processes.csv's header" "$(head -n 1 "$csv" 2>/dev/null)" \
        "time,t_ms,pid,ppid,name,vmsize_bytes,rss_bytes,vmhwm_bytes,cpu_user_s,cpu_system_s"
    for name in pd-parent:20 pd-small:40 pd-busy:60; do
        want=$((${name#*:} * MiB))
        rss=$(proc_col "$csv" "${name%:*}" 7 max)
        check "$what: ${name%:*}'s RSS is ${name#*:} MiB ±20 % (got ${rss:-none})" \
            within "$rss" "$want" 20
    done
    check "$what: more than 3 samples list all three" \
        test "$(full_samples "$csv")" -gt 3
    check_eq "$what: the children's parent is pd-parent" "$(parents_ok "$csv")" yes
    check_eq "$what: VmHWM and VmSize >= RSS on every row" "$(bad_rows "$csv")" 0
    a=$(proc_col "$csv" pd-busy 9 first)
    b=$(proc_col "$csv" pd-busy 9 last)
    check "$what: pd-busy's CPU rises by over a second ($a → $b s)" \
        awk -v a="$a" -v b="$b" 'BEGIN { exit !(a != "" && b - a > 1) }'
    b=$(proc_col "$csv" pd-small 9 last)
    check "$what: pd-small's CPU stays under half a second ($b s)" \
        awk -v b="$b" 'BEGIN { exit !(b != "" && b < 0.5) }'
}

# check_disk WHAT CSV PATH — PATH holds procs_prog's sparse file and its
# hard link: 4 MiB allocated (not the 1 GiB apparent), one file.
check_disk() {
    local what=$1 csv=$2 p=$3 row alloc
    row=$(disk_last "$csv" "$p")
    alloc=${row%%,*}
    check "$what: disk.csv $p: allocated is the 4 MiB written, not 1 GiB (got ${alloc:-none})" \
        between "${alloc:-0}" $((4 * MiB)) $((4 * MiB + 256 * 1024))
    check_eq "$what: disk.csv $p: apparent 1 GiB, the hard link counted once" \
        "${row#*,}" "$((1024 * MiB)),1"
}

# procdisk_run WHAT ID RUNNER DISK ARGS — build procs_prog, run it
# (procdisk_comp ID RUNNER DISK ARGS) with outputs/state among DISK and
# --sparse state among ARGS, and check what every runner shows (TAP
# lines): the run succeeds, its processes, its disk.csv's header and
# state's figures. $out is the instance's folder.
procdisk_run() {
    local what=$1 id=$2 f rc
    build_procs_prog
    f=$(procdisk_comp "$id" "$3" "$4" "$5")
    rc=$(run_comp "$id" "$f")
    out=$RUNS/$id/pd/0
    check_eq "$what: the run succeeds" "$rc" 0
    check_processes "$what" "$out/processes.csv"
    check "$what: disk.csv is there, a regular file" regular "$out/disk.csv"
    check_eq "$what: disk.csv's header" "$(head -n 1 "$out/disk.csv" 2>/dev/null)" \
        "time,t_ms,path,allocated_bytes,apparent_bytes,files"
    check_disk "$what" "$out/disk.csv" state
}
