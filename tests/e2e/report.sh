#!/bin/bash
# tests/e2e/report.sh — `testyard report` and `testyard compare` on real
# runs of memory-stress through local:exec: once with the provider leaking
# 16 MiB per round on purpose (leak_per_round), once without. The report
# must say "growing" at about 16 MiB per round for the providers and name
# the leaking function among their top allocation sites, and "flat"
# without the leak; compare must show the difference.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

if [ ! -f plans/memory-stress/manifest.yaml ]; then
    skip "report on memory-stress" "plans/memory-stress does not exist yet"
    finish
    exit $?
fi

LEAK=$((16 * 1024 * 1024))

# summary ID JQ-FILTER — a value from a run's summary.json.
summary() {
    jq -r "$2" "$RUNS/$1/summary.json" 2>/dev/null
}

# within VALUE WANT PERCENT — VALUE is within PERCENT% of WANT.
for id in leak flat; do
    n=$LEAK
    [ $id = flat ] && n=0
    rc=$(run_comp $id "$(leak_stress $id $n local:exec)")
    check_eq "$id: the run succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log $id
    "$TY" report "$RUNS/$id" >"$RUNS/$id.report" 2>&1
    check_eq "$id: testyard report exits 0" "$?" 0
    check "$id: summary.json and report.html written" \
        test -s "$RUNS/$id/summary.json" -a -s "$RUNS/$id/report.html"
done

kind=$(summary leak '.groups[] | select(.id == "providers") | .verdict.kind')
rate=$(summary leak \
    '.groups[] | select(.id == "providers") | .verdict.bytes_per_round')
check_eq "leak: the providers are growing" "$kind" growing
check "leak: at about 16 MiB per round (got $rate)" within "$rate" $LEAK 15
check "leak: the table says growing at about +16 MiB/round" \
    grep -Eq 'providers +growing: \+1[5-7]\.[0-9] MiB/round' \
    "$RUNS/leak.report"
top=$(summary leak '.groups[] | select(.id == "providers") |
    [.top_sites.sites[0:3][].function] | join(" ")')
check "leak: leak_round_buffers is a top site (got: $top)" \
    grep -qw leak_round_buffers <<<"$top"
check "leak: the page names it too" \
    grep -q 'leak_round_buffers' "$RUNS/leak/report.html"
grow=$(summary leak '.groups[] | select(.id == "providers") |
    .growing_sites.sites[0] | .function + " " + (.bytes_per_round | tostring)')
check "leak: leak_round_buffers grows first, about 16 MiB per round (got: $grow)" \
    within "${grow#leak_round_buffers }" $LEAK 20
check "leak: the verdict names it" \
    grep -Eq 'providers +growing: .*most in leak_round_buffers\)' \
    "$RUNS/leak.report"
check "leak: the table lists growing sites" \
    grep -Eq '^ +\+1[5-7]\.[0-9] MiB/round +\+[0-9.]+ MiB +leak_round_buffers$' \
    "$RUNS/leak.report"
check "leak: RSS is the process's, not 0" \
    test "$(summary leak '.groups[] | select(.id == "requestors") |
        .rounds[0].rss_post_bytes')" -gt 0
check_eq "leak: the requestors are flat" \
    "$(summary leak '.groups[] | select(.id == "requestors") | .verdict.kind')" \
    flat
check_eq "leak: six rounds on the clock" "$(summary leak '.rounds | length')" 6

check_eq "flat: the providers are flat" \
    "$(summary flat '.groups[] | select(.id == "providers") | .verdict.kind')" \
    flat
check "flat: the table says flat" \
    grep -Eq 'providers +flat: ' "$RUNS/flat.report"
check "flat: leak_round_buffers is not a site" \
    test -z "$(summary flat '.. | .function? // empty' | grep -w leak_round_buffers)"

"$TY" compare "$RUNS/leak" "$RUNS/flat" --json "$RUNS/cmp.json" \
    --html "$RUNS/cmp.html" >"$RUNS/cmp.txt" 2>&1
check_eq "compare: exits 0" "$?" 0
check_eq "compare: verdicts growing then flat" \
    "$(jq -r '.groups[] | select(.id == "providers") |
        .verdict_a + " " + .verdict_b' "$RUNS/cmp.json")" "growing flat"
diff=$(jq -r '.groups[] | select(.id == "providers") |
    -.heap_bytes_per_round.diff' "$RUNS/cmp.json")
check "compare: the heap grows about 16 MiB per round less (got $diff)" \
    within "$diff" $LEAK 15
check "compare: the table and the page are written" \
    grep -q 'B - A' "$RUNS/cmp.txt"
check "compare: the page lists leak_round_buffers" \
    grep -q leak_round_buffers "$RUNS/cmp.html"

"$TY" report "$RUNS/no-such-run" >/dev/null 2>&1
check_eq "report: a missing folder is status 66" "$?" 66
"$TY" compare "$RUNS/leak" "$RUNS/no-such-run" >/dev/null 2>&1
check_eq "compare: a missing folder is status 66" "$?" 66
cp -r "$RUNS/flat" "$RUNS/bad"
printf 't_ms,usage_bytes\n0,12\n50,many\n' >"$RUNS/bad/providers/0/memory.csv"
err=$("$TY" report "$RUNS/bad" 2>&1 >/dev/null)
check_eq "report: a malformed memory.csv is status 65" "$?" 65
check "report: the error names the file and line ($err)" \
    grep -q 'providers/0/memory.csv:3: usage_bytes' <<<"$err"

finish
