# shellcheck shell=bash
# tests/helpers/kvlog.sh — the plan kvlog (plans/kvlog) in a real run,
# without stages (sourced after tests/helpers/lib.sh, series.sh and
# load.sh by tests/e2e/kvlog.sh on local:exec and tests/docker/kvlog.sh on
# local:docker, which run the same checks). check_kvlog_serve: the case
# "serve" for 3 s at 100 puts a second of 16 KiB values, compacting every
# 50 puts, says ready after its replay; processes.csv has the server
# ("kvlog") and its worker ("kvlog-compact", the server's child), the
# server's RSS growing with the keys; disk.csv's state/ grows to the
# values written, sparse (far less allocated than apparent); put.cycles,
# puts and compactions are counted; the state folder is left whole (no
# log.old, no snapshot.tmp). check_kvlog_replay: the case "replay" reads
# a state folder back after a compaction cut short and a torn write,
# within one process (restarts themselves need stages). Both take the
# runner and print TAP lines; $kv_ids lists the runs made.

kv_ids=""

# kv_comp ID RUNNER CASE PARAMS — one instance of kvlog's CASE on RUNNER
# with test_params PARAMS (a flow map), processes every 200 ms, state/
# every 300 ms.
kv_comp() {
    composition "$1" <<EOF
metadata: {name: $1}
global:
  plan: kvlog
  case: $3
  runner: $2
  run:
    test_params: $4
    disk: [state]
  run_config: {timeout: 1m, process_sample: 200ms, disk_sample: 300ms}
groups:
  - id: node
    instances: {count: 1}
EOF
}

# messages DIR — the instance's messages, one a line.
messages() {
    jq -r 'select(.event.type == "message") | .event.message' \
        "$1/run.out" 2>/dev/null
}

# ready_after_replay DIR — run.out's "ready" event comes after the
# replay's message.
ready_after_replay() {
    jq -rs '[.[] | .event | select(.type == "ready" or
        (.type == "message" and (.message | startswith("replayed"))))
        | .type] == ["message", "ready"]' "$1/run.out" 2>/dev/null |
        grep -qx true
}

# rows CSV NAME — processes.csv rows of command NAME.
rows() {
    awk -F, -v n="$2" 'NR > 1 && $5 == n { k++ } END { print k + 0 }' "$1"
}

# worker_parent_ok CSV — every kvlog-compact row's ppid is a kvlog pid.
worker_parent_ok() {
    awk -F, 'NR == FNR { if ($5 == "kvlog") p[$3] = 1; next }
        FNR > 1 && $5 == "kvlog-compact" { if (!($4 in p)) bad++; n++ }
        END { print (n > 0 && bad == 0) ? "yes" : "no" }' "$1" "$1"
}

# first_alloc CSV — the first non-empty allocated_bytes of state.
first_alloc() {
    awk -F, '$3 == "state" && $4 != "" { print $4; exit }' "$1"
}

# check_kvlog_serve RUNNER — the case "serve" on RUNNER (TAP lines).
check_kvlog_serve() {
    local id=kv-serve-${1#local:} w="$1 serve" f rc dir csv a b cycles
    local row alloc apparent first
    kv_ids="$kv_ids $id"
    f=$(kv_comp "$id" "$1" serve \
        "{rate: 100, duration: 3s, value_size: 16Ki, keys: 10000, compact_every: 50}")
    rc=$(run_comp "$id" "$f")
    dir=$RUNS/$id/node/0
    check_eq "$w: the run succeeds" "$rc" 0
    check "$w: ready after the replay of an empty state folder" \
        ready_after_replay "$dir"
    check "$w: ... which held nothing" \
        grep -q '^replayed 0 keys' <<<"$(messages "$dir")"
    csv=$dir/processes.csv
    check "$w: processes.csv has the server (kvlog) in 3 samples or more" \
        test "$(rows "$csv" kvlog)" -ge 3
    check "$w: ... and the worker (kvlog-compact) in 3 or more" \
        test "$(rows "$csv" kvlog-compact)" -ge 3
    check_eq "$w: the worker is the server's child" "$(worker_parent_ok "$csv")" yes
    a=$(proc_col "$csv" kvlog 7 first)
    b=$(proc_col "$csv" kvlog 7 max)
    check "$w: the server's RSS grows by 3 MiB or more with the keys ($a → $b)" \
        test $((${b:-0} - ${a:-0})) -ge $((3 << 20))
    cycles=$(last_count "$dir/results.out" put.cycles)
    check "$w: put.cycles is about 100 a second for 3 s (got ${cycles:-none})" \
        between "${cycles:-0}" 250 330
    check_eq "$w: ... as the plan said" "$(said_cycles "$dir" put)" "$cycles"
    check_eq "$w: puts (across lives) is put.cycles in a first life" \
        "$(last_count "$dir/results.out" puts)" "$cycles"
    check "$w: two compactions or more" \
        test "$(last_count "$dir/results.out" compactions)" -ge 2
    row=$(disk_last "$dir/disk.csv" state)
    alloc=${row%%,*}
    apparent=$(cut -d, -f2 <<<"$row")
    first=$(first_alloc "$dir/disk.csv")
    check "$w: disk.csv: state/ grew by 3 MiB or more (${first:-none} → ${alloc:-none})" \
        test $((${alloc:-0} - ${first:-0})) -ge $((3 << 20))
    check "$w: ... sparse: allocated $alloc of $apparent apparent, under a tenth" \
        test $((${alloc:-0} * 10)) -lt "${apparent:-0}"
    check "$w: state/ holds snapshot and log" \
        test -f "$dir/state/snapshot" -a -f "$dir/state/log"
    check "$w: ... and no log.old or snapshot.tmp (the last compaction ended)" \
        test ! -e "$dir/state/log.old" -a ! -e "$dir/state/snapshot.tmp"
    [ "$TAPFAIL" = 0 ] || show_log "$id"
}

# check_kvlog_replay RUNNER — the case "replay" on RUNNER (TAP lines).
check_kvlog_replay() {
    local id=kv-replay-${1#local:} w="$1 replay" f rc dir said
    kv_ids="$kv_ids $id"
    f=$(kv_comp "$id" "$1" replay "{puts: 400}")
    rc=$(run_comp "$id" "$f")
    dir=$RUNS/$id/node/0
    said=$(messages "$dir")
    check_eq "$w: the case succeeds" "$rc" 0
    check "$w: the second life finds a compaction to finish" \
        grep -q 'records of log.old, .* (a compaction to finish)' <<<"$said"
    check "$w: the third cuts the torn half record (140 bytes) off" \
        grep -q ' 140 torn bytes cut off; puts so far 800$' <<<"$said"
    check "$w: every key read back whole" \
        grep -q '^replay: [0-9]* keys read back whole' <<<"$said"
    [ "$TAPFAIL" = 0 ] || show_log "$id"
}
