# shellcheck shell=bash
# tests/e2e/kvlog.sh — the plan kvlog (plans/kvlog) on local:exec, without
# stages: the case "serve" for 3 s at 100 puts a second of 16 KiB values,
# compacting every 50 puts, says ready after its replay; processes.csv has
# the server ("kvlog") and its worker ("kvlog-compact", the server's
# child); disk.csv's state/ grows to the values written, sparse (far less
# allocated than apparent); put.cycles and compactions are counted; the
# state folder is left whole (no log.old, no snapshot.tmp). The case
# "replay" reads a state folder back after a compaction cut short and a
# torn write, within one process (restarts themselves need stages).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/series.sh
. tests/helpers/series.sh
# shellcheck source=tests/helpers/load.sh
. tests/helpers/load.sh

# kv_comp ID CASE PARAMS — one instance of kvlog's CASE with test_params
# PARAMS (a flow map), processes every 200 ms, state/ every 300 ms.
kv_comp() {
    composition "$1" <<EOF
metadata: {name: $1}
global:
  plan: kvlog
  case: $2
  runner: local:exec
  run:
    test_params: $3
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

f=$(kv_comp kv-serve serve \
    "{rate: 100, duration: 3s, value_size: 16Ki, keys: 10000, compact_every: 50}")
rc=$(run_comp kv-serve "$f")
dir=$RUNS/kv-serve/node/0
check_eq "serve: the run succeeds" "$rc" 0
check "serve: ready after the replay of an empty state folder" \
    ready_after_replay "$dir"
check "serve: ... which held nothing" \
    grep -q '^replayed 0 keys' <<<"$(messages "$dir")"
csv=$dir/processes.csv
check "serve: processes.csv has the server (kvlog) in 3 samples or more" \
    test "$(rows "$csv" kvlog)" -ge 3
check "serve: ... and the worker (kvlog-compact) in 3 or more" \
    test "$(rows "$csv" kvlog-compact)" -ge 3
check_eq "serve: the worker is the server's child" "$(worker_parent_ok "$csv")" yes
a=$(proc_col "$csv" kvlog 7 first)
b=$(proc_col "$csv" kvlog 7 max)
check "serve: the server's RSS grows by 3 MiB or more with the keys ($a → $b)" \
    test $((${b:-0} - ${a:-0})) -ge $((3 * MiB))
cycles=$(last_count "$dir/results.out" put.cycles)
check "serve: put.cycles is about 100 a second for 3 s (got ${cycles:-none})" \
    between "${cycles:-0}" 250 330
check_eq "serve: ... as the plan said" "$(said_cycles "$dir" put)" "$cycles"
check_eq "serve: puts (across lives) is put.cycles in a first life" \
    "$(last_count "$dir/results.out" puts)" "$cycles"
check "serve: two compactions or more" \
    test "$(last_count "$dir/results.out" compactions)" -ge 2
row=$(disk_last "$dir/disk.csv" state)
alloc=${row%%,*}
apparent=$(cut -d, -f2 <<<"$row")
check "serve: disk.csv: state/ grew by 3 MiB or more ($(first_alloc "$dir/disk.csv") → $alloc)" \
    test $((${alloc:-0} - $(first_alloc "$dir/disk.csv"))) -ge $((3 * MiB))
check "serve: ... sparse: allocated $alloc of $apparent apparent, under a tenth" \
    test $((${alloc:-0} * 10)) -lt "${apparent:-0}"
check "serve: state/ holds snapshot and log" \
    test -f "$dir/state/snapshot" -a -f "$dir/state/log"
check "serve: ... and no log.old or snapshot.tmp (the last compaction ended)" \
    test ! -e "$dir/state/log.old" -a ! -e "$dir/state/snapshot.tmp"
[ "$TAPFAIL" = 0 ] || show_log kv-serve

f=$(kv_comp kv-replay replay "{puts: 400}")
rc=$(run_comp kv-replay "$f")
dir=$RUNS/kv-replay/node/0
said=$(messages "$dir")
check_eq "replay: the case succeeds" "$rc" 0
check "replay: the second life finds a compaction to finish" \
    grep -q 'records of log.old, .* (a compaction to finish)' <<<"$said"
check "replay: the third cuts the torn half record (140 bytes) off" \
    grep -q ' 140 torn bytes cut off; puts so far 800$' <<<"$said"
check "replay: every key read back whole" \
    grep -q '^replay: [0-9]* keys read back whole' <<<"$said"
[ "$TAPFAIL" = 0 ] || show_log kv-replay
exec_leftovers kv-serve
exec_leftovers kv-replay
finish
