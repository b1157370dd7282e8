# shellcheck shell=bash
# tests/e2e/history.sh — history and change points over real runs on
# local:exec: ten runs of the growth plan (tests/e2e/growth_plan.c), flat
# in runs 1-5 and leaking 8 MiB a round from run 6 on, each recorded with
# `history import` under its own version; `history NAME --json` must put
# a change point of the peak (and of the growth per round) in run 6 and
# nowhere else, and eight flat runs must give none. Also: the table's
# line for it, the CSV's rows, a run folder without summary.json refused
# with nothing recorded, a run imported twice, usage errors, a damaged
# database, and an unknown name. TESTYARD=build/san/testyard
# runs it with the sanitizer build.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/growth.sh
. tests/helpers/growth.sh

DATA=$RUNS/data
LEAK_FROM=6

# history_comp NAME GROW — the case "rounds" of the growth plan, one
# group "providers" growing GROW a round over four rounds; prints the
# composition's path.
history_comp() {
    composition "$1-$2" <<EOF
metadata: {name: $1}
global:
  plan: growth
  case: rounds
  runner: local:exec
  run:
    test_params: {rounds: 4, base: 16Mi, grow: $2, memory_snapshots: simple}
  run_config: {timeout: 1m}
groups:
  - id: providers
    instances: {count: 1}
    resources: {memory: 256Mi}
EOF
}

# run_and_import NAME I GROW — run I of NAME, recorded as version vI;
# prints the run's exit status and the import's. The plan keeps what it
# allocates on purpose, which LeakSanitizer would call a failure when
# TESTYARD is a sanitizer build (the history commands keep it on).
run_and_import() {
    local id="$1-$2" f
    f=$(history_comp "$1" "$3")
    ASAN_OPTIONS=detect_leaks=0 "$TY" run --plans "$RUNS/plans" --runs "$RUNS" --run-id "$id" \
        --no-progress -q "$f" >"$RUNS/$id.log" 2>&1
    echo -n "$? "; cp "$RUNS/$id.log" /tmp/hist-last.log
    "$TY" history import --data "$DATA" --version "v$2" "$RUNS/$id" \
        >>"$RUNS/$id.log" 2>&1
    echo $?
}

# points JSON-FILE FILTER — the change points matching FILTER, as
# "run:figure" words.
points() {
    jq -r ".[] | .run as \$r | .change_points[] | select($2) |
        \"\(\$r):\(.figure)\"" "$1" | tr '\n' ' '
}

growth_plan
bad=0
for i in $(seq 1 10); do
    grow=0
    [ "$i" -ge "$LEAK_FROM" ] && grow=8Mi
    [ "$(run_and_import leaky "$i" "$grow")" = "0 0" ] || bad=$((bad + 1))
done
check_eq "ten runs of leaky ran and were recorded" "$bad" 0
bad=0
for i in $(seq 1 8); do
    [ "$(run_and_import flat "$i" 0)" = "0 0" ] || bad=$((bad + 1))
done
check_eq "eight flat runs ran and were recorded" "$bad" 0

"$TY" history --data "$DATA" --json leaky >"$RUNS/leaky.json" 2>&1
check_eq "leaky: ten runs in the JSON" \
    "$(jq length "$RUNS/leaky.json" 2>/dev/null)" 10
check_eq "leaky: the peak changes at run $LEAK_FROM, nowhere else" \
    "$(points "$RUNS/leaky.json" '.figure == "peak_bytes"')" \
    "$LEAK_FROM:peak_bytes "
check_eq "leaky: the growth per round changes at run $LEAK_FROM" \
    "$(points "$RUNS/leaky.json" '.figure == "growth_bytes_per_round"')" \
    "$LEAK_FROM:growth_bytes_per_round "
check "leaky: the peak's change is up, p <= 0.05" json_true \
    "$RUNS/leaky.json" ".[$((LEAK_FROM - 1))].change_points[] |
        select(.figure == \"peak_bytes\") | .change > 0.5 and .p <= 0.05"
check_eq "leaky: run $LEAK_FROM's version" \
    "$(jq -r ".[$((LEAK_FROM - 1))].version" "$RUNS/leaky.json")" \
    "v$LEAK_FROM"

"$TY" history --data "$DATA" --json flat >"$RUNS/flat.json" 2>&1
check_eq "flat: eight runs" "$(jq length "$RUNS/flat.json" 2>/dev/null)" 8
check_eq "flat: no change point" "$(points "$RUNS/flat.json" true)" ""

"$TY" history --data "$DATA" leaky >"$RUNS/leaky.txt" 2>&1
check "the table names the change: peak, run, commit, p" grep -Eq \
    "^  providers peak: \+[0-9]+ % at run $LEAK_FROM \(commit v$LEAK_FROM\), p = 0\.[0-9]{3}" \
    "$RUNS/leaky.txt"
check_eq "CSV: a header and a row per run and group" \
    "$("$TY" history --data "$DATA" --csv flat | wc -l)" 9

mkdir -p "$RUNS/halfrun"
cp "$RUNS/flat-1/result.json" "$RUNS/halfrun/"
"$TY" history import --data "$DATA" "$RUNS/halfrun" >"$RUNS/half.log" 2>&1
check_eq "a run folder without summary.json: exit 66" "$?" 66
check "... saying which file" grep -q "halfrun/summary.json" "$RUNS/half.log"
check_eq "... and nothing recorded" \
    "$("$TY" history --data "$DATA" --json flat | jq length)" 8

"$TY" history --data "$DATA" nosuch >"$RUNS/nosuch.log" 2>&1
check_eq "an unknown name: exit 66" "$?" 66
check "... saying so" grep -q 'no runs of "nosuch"' "$RUNS/nosuch.log"
"$TY" history import --data "$DATA" "$RUNS/flat-1" >"$RUNS/again.log" 2>&1
check_eq "a run imported again: exit 65" "$?" 65
check "... saying it is recorded" grep -q "already recorded as flat run 1" \
    "$RUNS/again.log"

for bad in "--csv --json flat" "--since yesterday flat" \
    "--min-effect lots flat" "flat leaky"; do
    # shellcheck disable=SC2086 # the options are words
    "$TY" history --data "$DATA" $bad >/dev/null 2>&1
    check_eq "usage: history $bad: exit 64" "$?" 64
done
mkdir -p "$RUNS/baddata"
echo "not a database, not at all, but long enough to be read as one" \
    >"$RUNS/baddata/testyard.db"
"$TY" history --data "$RUNS/baddata" flat >"$RUNS/baddata.log" 2>&1
check_eq "a file that is not a database: exit 65" "$?" 65
check "... naming it" grep -q "baddata/testyard.db: file is not a database" \
    "$RUNS/baddata.log"
finish
