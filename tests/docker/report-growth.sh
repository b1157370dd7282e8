# tests/docker/report-growth.sh — the report's verdicts on local:docker:
# memory-stress with a planted leak of 8 MiB per round in the provider is
# called growing at that rate (within 20%), the leaking function first
# among its growing sites and named in the verdict, the requestor flat,
# and RSS read as the process's own (never 0) in every round.
# shellcheck shell=bash
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "the report's verdicts on local:docker"

LEAK=$((8 * 1024 * 1024))

f=$(leak_stress growth "$LEAK" local:docker)

summary() {
    jq -r "$1" "$RUNS/growth/summary.json" 2>/dev/null
}

rc=$(run_comp growth "$f")
check_eq "the run succeeds" "$rc" 0
"$TY" report "$RUNS/growth" >"$RUNS/growth.report" 2>&1
check_eq "testyard report exits 0" "$?" 0

prov='.groups[] | select(.id == "providers")'
check_eq "the provider is growing" "$(summary "$prov | .verdict.kind")" growing
rate=$(summary "$prov | .verdict.bytes_per_round")
check "at about 8 MiB per round (got $rate)" within "$rate" $LEAK 20
grow=$(summary "$prov | .growing_sites.sites[0] |
    .function + \" \" + (.bytes_per_round | tostring)")
check "leak_round_buffers grows first, about 8 MiB per round (got: $grow)" \
    within "${grow#leak_round_buffers }" $LEAK 20
check "the verdict names it" \
    grep -Eq 'providers +growing: .*most in leak_round_buffers\)' \
    "$RUNS/growth.report"
check "the table lists it among growing sites" \
    grep -Eq '^ +\+[0-9.]+ MiB/round +\+[0-9.]+ MiB +leak_round_buffers$' \
    "$RUNS/growth.report"
check_eq "the requestor is flat" \
    "$(summary '.groups[] | select(.id == "requestors") | .verdict.kind')" flat
check_eq "every round has RSS above 0" \
    "$(summary '[.groups[].rounds[] | select((.rss_post_bytes // 0) <= 0)] |
        length')" 0
check "the page shows the growing sites" \
    grep -q '<h2>Growing sites</h2>' "$RUNS/growth/report.html"
check_eq "no container left" "$(containers_of_run growth)" 0
[ "$rc" = 0 ] || show_log growth

finish
