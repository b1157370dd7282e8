# shellcheck shell=bash
# tests/e2e/exec-full-disk.sh — a runs folder on a tiny tmpfs that fills up
# while the run goes: the run exits 74 with the file it could not write
# named in one line, and no file the runner owns is left half-written
# (barriers.jsonl and memory.csv end on a whole line, result.json is whole
# or absent, no temporary file is left).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

mnt=$RUNS/tiny
mkdir -p "$mnt"
if ! mount -t tmpfs -o size=2m tmpfs "$mnt" 2>"$RUNS/mount.log"; then
    skip "a full runs folder" "cannot mount a tmpfs here: $(head -1 "$RUNS/mount.log")"
    finish
    exit
fi
trap 'umount "$mnt"; rm -rf "$RUNS"' EXIT

f=$(composition rounds <<'EOF2'
metadata: {name: full-disk}
global:
  plan: placebo
  case: barrier
  runner: local:exec
  run: {test_params: {rounds: 40, round_time: 100ms}}
  run_config: {timeout: 2m}
groups:
  - id: g
    instances: {count: 3}
EOF2
)
id=runid-full
"$TY" run --plans plans --runs "$mnt" --run-id "$id" --no-progress "$f" \
    >"$RUNS/$id.log" 2>&1 &
pid=$!
wait_for 10 started "$id" 3
sleep 0.5
# Fill every last byte: whole blocks, then what is left one byte at a time.
dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
dd if=/dev/zero of="$mnt/fill2" bs=1 2>/dev/null
wait "$pid"
rc=$?
dir=$mnt/$id

check_eq "exit status 74" "$rc" 74
check "one line names the file that could not be written" \
    grep -Eq "^testyard: cannot write $dir/[a-z./0-9]+: No space left on device" \
    "$RUNS/$id.log"
check_eq "the last line is that one" \
    "$(tail -n 1 "$RUNS/$id.log" | grep -c '^testyard: cannot write')" 1
[ "$rc" = 74 ] || show_log "$id"

whole_lines() { # FILE — empty, or ends with a newline
    [ ! -s "$1" ] || [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ]
}
check "barriers.jsonl exists" [ -f "$dir/barriers.jsonl" ]
check "barriers.jsonl ends on a whole line" whole_lines "$dir/barriers.jsonl"
check "every line of barriers.jsonl is JSON" \
    eval "jq -e . '$dir/barriers.jsonl' >/dev/null"
n=0
for csv in "$dir"/g/*/memory.csv*; do
    [ -e "$csv" ] || continue
    n=$((n + 1))
    check "$(basename "$(dirname "$csv")")/$(basename "$csv") ends on a whole row" \
        whole_lines "$csv"
done
check "a memory series for each instance" [ "$n" -eq 3 ]
check "result.json is whole or absent" \
    eval "[ ! -e '$dir/result.json' ] || jq -e . '$dir/result.json' >/dev/null"
check_eq "no temporary file left" \
    "$(find "$dir" -name '*.tmp.*' | wc -l)" 0
check_eq "no process of the run left" "$(procs_of_run "$id")" 0

# The report reads the folder as it was left once there is room again.
rm -f "$mnt/fill" "$mnt/fill2"
"$TY" report "$dir" >"$RUNS/report.log" 2>&1
check_eq "the report reads the run left behind" "$?" 0
[ "$rc" = 74 ] || sed "s/^/#   /" "$RUNS/report.log"

# A log cut by a writer that had no such care: the report drops the cut
# line and says so.
printf '{"time": "2026-' >>"$dir/barriers.jsonl"
"$TY" report "$dir" >"$RUNS/report2.log" 2>&1
check_eq "a cut last line: the report still reads the run" "$?" 0
check "and says it ignored that line" \
    grep -q "barriers.jsonl:[0-9]*: the last line is cut short; ignored" \
    "$dir/summary.json"

# Full before the run starts: composition.json cannot be written; the run
# stops there, exits 74 with that file named, and removes the folder it
# made (and nothing else).
id=runid-full2
dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
dd if=/dev/zero of="$mnt/fill2" bs=1 2>/dev/null
"$TY" run --plans plans --runs "$mnt" --run-id "$id" --no-progress "$f" \
    >"$RUNS/$id.log" 2>&1
rc=$?
check_eq "full at start: exit status 74" "$rc" 74
check "full at start: composition.json named in one line" \
    grep -q "^testyard: cannot write $mnt/$id/composition.json: No space left on device$" \
    "$RUNS/$id.log"
check_eq "full at start: one line only" "$(wc -l <"$RUNS/$id.log")" 1
check "full at start: its folder is removed" [ ! -e "$mnt/$id" ]
check "full at start: the earlier run is still there" [ -d "$dir" ]
[ "$rc" = 74 ] || show_log "$id"


# run.out cannot be written whole while everything else can (a file size
# limit stands for a disk that fills with the logs alone): the instance
# succeeds, and the run still exits 74 and names the logs in its last line.
hostile_plan
f=$(flood_comp flood 20MB 64Mi)
id=runid-fsize
(
    trap '' XFSZ
    ulimit -f 2048
    exec "$TY" run --plans "$RUNS/plans" --runs "$RUNS" --run-id "$id" \
        --no-progress "$f"
) >"$RUNS/$id.log" 2>&1
rc=$?
check_eq "logs not written: exit status 74" "$rc" 74
check_eq "logs not written: the instance itself succeeded" \
    "$(result "$id" '.instances[0].outcome')" success
check "logs not written: the last line names them" \
    sh -c "tail -n 1 '$RUNS/$id.log' | grep -q '^testyard: cannot write the logs of f/0: .*File too large'"
[ "$rc" = 74 ] || show_log "$id"

finish
