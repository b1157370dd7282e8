# shellcheck shell=bash
# tests/helpers/growth.sh — the report's memory answers on a real run
# (sourced after tests/helpers/lib.sh by tests/e2e/growth.sh on local:exec
# and tests/docker/growth.sh on local:docker, which run the same checks):
# the plan tests/e2e/growth_plan.c grows in a known way in each group of
# one run while group "steady" holds its working set, and summary.json
# must say so:
#
#   leaks   verdict growing at 8 MiB/round ±20 %, grow_alloc first among
#           growing_sites, its callers on the stack
#   maps    verdict outside_malloc
#   frags   verdict retention
#   steady  verdict flat
#
# and in a run of its own, an instance leaking into its limit: outcome
# oom, a heap-pre-oom profile less than 2 s before the kill, and the OOM
# section naming grow_alloc. check_growth and check_growth_oom take the
# runner and print TAP lines.

GROW_MIB=8

# growth_plan — the plan "growth" in $RUNS/plans.
growth_plan() {
    mkdir -p "$RUNS/plans/growth"
    cp tests/e2e/growth_plan.c "$RUNS/plans/growth/main.c"
    cp tests/e2e/growth_manifest.yaml "$RUNS/plans/growth/manifest.yaml"
}

# growth_comp ID RUNNER — the case "rounds" with a group of one instance
# per way to grow (grow: 8Mi a round): "leaks" (kind leak), "maps" (mmap),
# "frags" (frag), and "steady" (grow: 0); six rounds, simple snapshots,
# heap samples every 64 KiB; prints the composition's path.
growth_comp() {
    local g groups=""
    for g in leaks:leak maps:mmap frags:frag steady:leak; do
        groups+="  - id: ${g%%:*}
    instances: {count: 1}
    resources: {memory: 512Mi}
    run: {test_params: {kind: ${g#*:}, grow: $([ "${g%%:*}" = steady ] && echo 0 || echo "${GROW_MIB}Mi")}}
"
    done
    composition "$1" <<EOF2
metadata: {name: $1}
global:
  plan: growth
  case: rounds
  runner: $2
  run:
    test_params: {rounds: 6, base: 16Mi, memory_snapshots: simple}
    profiles: {heap_rate: 64Ki}
  run_config: {timeout: 1m}
groups:
$groups
EOF2
}

# summary_of ID JQ-FILTER — a value from the run's summary.json.
summary_of() {
    jq -r "$2" "$RUNS/$1/summary.json" 2>/dev/null
}

# group_of ID GROUP JQ-FILTER — a value of one group in summary.json.
group_of() {
    summary_of "$1" ".groups[] | select(.id == \"$2\") | $3"
}

# within PCT GOT WANT — |GOT - WANT| <= PCT % of WANT (numbers, any form).
within() {
    awk -v g="$2" -v w="$3" -v p="$1" 'BEGIN {
        d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= w * p / 100) }'
}

# check_growth RUNNER — run the case "rounds" on RUNNER and check every
# group's verdict (TAP lines).
check_growth() {
    local id=growth-${1#local:} f rc
    growth_plan
    f=$(growth_comp "$id" "$1")
    rc=$(run_hostile "$id" "$f")
    check_eq "$1: the growth run succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log "$id"
    check "$1: summary.json is written" [ -s "$RUNS/$id/summary.json" ]
    check_eq "$1: the group that grows nowhere is flat" \
        "$(group_of "$id" steady .verdict.kind)" flat
    check_eq "$1: ... and has growing_sites, none of the plan's over 1 MiB/round" \
        "$(group_of "$id" steady 'if (.growing_sites | type) != "object"
            then "no growing_sites" else [.growing_sites.sites[] |
            select(.testyard != true and .bytes_per_round > 1048576)]
            | length end')" 0
    check_growth_leak "$1" "$id"
    check_growth_mmap "$1" "$id"
    check_growth_frag "$1" "$id"
}

# check_growth_leak RUNNER ID — the group "leaks" of run ID.
check_growth_leak() {
    local id=$2 want=$((GROW_MIB << 20)) got prof traces
    check_eq "$1 leak: the leaking group's verdict is growing" \
        "$(group_of "$id" leaks .verdict.kind)" growing
    got=$(group_of "$id" leaks .verdict.bytes_per_round)
    check "$1 leak: at ${got:-?} bytes/round, within 20% of $want" \
        within 20 "$got" "$want"
    check "$1 leak: the verdict's words say growing: +N MiB/round" \
        grep -q '^growing: +[0-9.]* MiB/round' \
        <<<"$(group_of "$id" leaks .verdict.text)"
    check_eq "$1 leak: grow_alloc is first among the growing sites" \
        "$(group_of "$id" leaks '.growing_sites.sites[0].function')" grow_alloc
    got=$(group_of "$id" leaks '.growing_sites.sites[0].bytes_per_round')
    check "$1 leak: grow_alloc grows ${got:-?} bytes/round, within 20% of $want" \
        within 20 "$got" "$want"
    prof=$RUNS/$id/leaks/0/heap-round-6-post-trim.pb.gz
    check "$1 leak: heap-round-6-post-trim.pb.gz is in the run folder" [ -s "$prof" ]
    if ! command -v go >/dev/null; then
        skip "$1 leak: grow_alloc's callers in go tool pprof -traces" "go missing"
        return
    fi
    traces=$(heap_traces "$prof")
    check "$1 leak: -traces shows grow_alloc grow_leak_round grow_rounds grow_case ty_main main" \
        grep -q "^grow_alloc grow_leak_round grow_rounds grow_case ty_main main\\( \\|\$\\)" \
        <<<"$traces"
}

# check_growth_mmap RUNNER ID — the group "maps" of run ID.
check_growth_mmap() {
    check_eq "$1 mmap: the mmap'ed group's verdict is outside_malloc" \
        "$(group_of "$2" maps .verdict.kind)" outside_malloc
    check "$1 mmap: the verdict's words say growing outside malloc" \
        grep -q '^growing outside malloc: RSS +[0-9.]* MiB/round' \
        <<<"$(group_of "$2" maps .verdict.text)"
}

# check_growth_frag RUNNER ID — the group "frags" of run ID.
check_growth_frag() {
    check_eq "$1 frag: the fragmented group's verdict is retention" \
        "$(group_of "$2" frags .verdict.kind)" retention
    check "$1 frag: the verdict's words say retention or fragmentation" \
        grep -q '^retention or fragmentation: RSS +[0-9.]* MiB/round' \
        <<<"$(group_of "$2" frags .verdict.text)"
}

# both_there FILE FILE — both files exist and are not empty.
both_there() {
    [ -s "$1" ] && [ -s "$2" ]
}

# age_ok OOM_AT_MS AGE — the kill time is known and the profile was taken
# less than 2 s before it (up to half a second after the kill is the
# kill's detection lagging the memory samples).
age_ok() {
    [ "${1:-null}" != null ] && [ "$2" -gt -500 ] 2>/dev/null &&
        [ "$2" -lt 2000 ]
}

# ms_of RFC3339 — milliseconds since the epoch.
ms_of() {
    date -u -d "$1" +%s%3N 2>/dev/null
}

# check_oom_answer WHAT ID LABEL FUNCTION — what the run ID says of its
# OOM-killed instance LABEL (group/index): heap-pre-oom taken at the
# coordinator's request less than 2 s before the kill, a peak profile on
# the way up, and an OOM section in summary.json and in the table whose
# first site (testyard's own left out) is FUNCTION. TAP lines start with
# WHAT.
check_oom_answer() {
    local what=$1 id=$2 label=$3 fn=$4 d side started oom_ms age said inst
    inst=".instances[] | select(.label == \"$label\")"
    d=$RUNS/$id/$label
    side=$d/heap-pre-oom.json
    check "$what: heap-pre-oom.pb.gz and .json are in $label's folder" \
        both_there "$d/heap-pre-oom.pb.gz" "$side"
    check_eq "$what: its sidecar's trigger is pre-oom" \
        "$(jq -r .trigger "$side" 2>/dev/null)" pre-oom
    check_eq "$what: a peak profile (heap-peak) was taken on the way up" \
        "$(jq -r .trigger "$d/heap-peak.json" 2>/dev/null)" peak
    started=$(ms_of "$(result "$id" .started)")
    oom_ms=$(summary_of "$id" "$inst | .oom_at_ms")
    age=none said="no pre-OOM profile"
    if [ -s "$side" ]; then
        age=$((started + ${oom_ms:-0} - $(ms_of "$(jq -r .time "$side")")))
        said="$age ms before the kill at ${oom_ms:-?} ms"
    fi
    check "$what: the pre-OOM profile is less than 2 s older than the kill ($said)" \
        age_ok "$oom_ms" "$age"
    check "$what: summary.json's OOM section has the last profile" \
        json_true "$RUNS/$id/summary.json" "$inst | .oom.last_profile != null"
    check_eq "$what: the OOM section's first site is $fn" \
        "$(summary_of "$id" "[$inst | .oom | .. | objects | .sites? | arrays |
            .[] | select(.testyard != true) | .function] | first")" "$fn"
    check "$what: the table says how old the last profile was" \
        grep -q "last profile [0-9.]* \\(ms\\|s\\) before the kill" \
        "$RUNS/$id.log"
}

check_growth_oom() {
    local id=growth-oom-${1#local:} f rc
    growth_plan
    f=$(composition "$id" <<EOF2
metadata: {name: $id}
global:
  plan: growth
  case: oom
  runner: $1
  run: {test_params: {grow: 4Mi, every_ms: 100, base: 0}}
  run_config: {timeout: 1m}
groups:
  - id: victim
    instances: {count: 1}
    resources: {memory: 128Mi}
EOF2
)
    rc=$(run_hostile "$id" "$f")
    check_eq "$1 oom: the run fails (exit 1)" "$rc" 1
    check_eq "$1 oom: the instance was OOM-killed" \
        "$(result "$id" '.instances[0].outcome')" oom
    check_oom_answer "$1 oom" "$id" victim/0 grow_alloc
    [ "$rc" = 1 ] || show_log "$id"
}
