# shellcheck shell=bash
# tests/helpers/load.sh — the SDK's load driver and work.csv in a real run
# (sourced after tests/helpers/lib.sh by tests/e2e/load.sh on local:exec
# and tests/docker/load.sh on local:docker, which run the same checks):
# the plan tests/e2e/load_plan.c runs "load" at 40 tasks a second for 3 s
# and "load,stage=closed" with two workers for 400 tasks of 10 ms, and the
# instance's work.csv (beside results.out) must have a header, each
# counter's total rising row after row, at most one row a second but the
# last, the tagged name quoted, and last rows that agree with
# results.out and with what the plan said it did; an instance killed in
# the middle of its load keeps the rows it had. check_load and
# check_load_killed take the runner and print TAP lines.

# load_plan — the plan "load" in $RUNS/plans.
load_plan() {
    mkdir -p "$RUNS/plans/load"
    cp tests/e2e/load_plan.c "$RUNS/plans/load/main.c"
    cp tests/e2e/load_manifest.yaml "$RUNS/plans/load/manifest.yaml"
}

# load_comp ID RUNNER CASE — one group "kv" of one instance running CASE;
# prints the composition's path.
load_comp() {
    composition "$1" <<EOF2
metadata: {name: $1}
global:
  plan: load
  case: $3
  runner: $2
  run:
    test_params: {rate: 40, duration: 3s, concurrency: 2, cycles: 400, pause: 10ms, kill_at: 100}
  run_config: {timeout: 1m}
groups:
  - id: kv
    instances: {count: 1}
EOF2
}

# work_series FILE FIELD — the rows of work.csv FILE whose name field is
# FIELD as written (quotes and all), as "time_ms value" lines. Time and
# value hold no comma, so the name is what lies between the first and
# the last.
work_series() {
    awk -v want="$2" 'NR > 1 {
        first = index($0, ","); rest = substr($0, first + 1)
        last = match(rest, /,[0-9-]+$/)
        if (last && substr(rest, 1, last - 1) == want)
            print substr($0, 1, first - 1), substr(rest, last + 1) }' "$1"
}

# series_ok MIN — stdin ("time_ms value" lines) has at least MIN rows, times
# and values never go down, all but the last row are 999 ms apart or more,
# and at least MIN distinct values: "rising".
series_ok() {
    awk -v min="$1" '{
        if (NR > 1 && ($1 < t || $2 < v)) bad = 1
        if (NR > 1) gap[NR] = $1 - t
        if (!($2 in seen)) { seen[$2] = 1; distinct++ }
        t = $1; v = $2 }
      END { for (i = 2; i < NR; i++) if (gap[i] < 999) bad = 1
            exit !(NR >= min && distinct >= min && !bad) }'
}

# last_count FILE NAME — the count of the last counter record NAME in a
# results.out.
last_count() {
    jq -rs --arg n "$2" '[.[] | select(.type == "counter" and .name == $n)]
        | last | .measures.count // empty' "$1" 2>/dev/null
}

# said_cycles DIR NAME — the cycles the plan's message says load NAME did.
said_cycles() {
    jq -r --arg n "$2: " 'select(.event.type == "message") | .event.message
        | select(startswith($n)) | ltrimstr($n) | split(" ")[0]' \
        "$1/run.out" 2>/dev/null
}

# check_load RUNNER — the case "steady" on RUNNER (TAP lines).
check_load() {
    local id=load-${1#local:} f rc dir csv rows
    load_plan
    f=$(load_comp "$id" "$1" steady)
    rc=$(run_hostile "$id" "$f")
    check_eq "$1: the load run succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log "$id"
    dir=$RUNS/$id/kv/0
    csv=$dir/work.csv
    check "$1: work.csv is beside results.out" regular "$csv"
    check_eq "$1: work.csv starts with its header" "$(head -n 1 "$csv")" \
        "time_ms,name,value"
    rows=$(work_series "$csv" load.cycles)
    check "$1: load.cycles rises over at least 3 rows, one a second at most" \
        series_ok 3 <<<"$rows"
    check_eq "$1: load.cycles' last row is results.out's count" \
        "$(tail -n 1 <<<"$rows" | cut -d' ' -f2)" \
        "$(last_count "$dir/results.out" load.cycles)"
    check_eq "$1: ... and what the plan said it did" \
        "$(tail -n 1 <<<"$rows" | cut -d' ' -f2)" "$(said_cycles "$dir" load)"
    check "$1: ... about 40 a second for 3 s (84 to 121)" \
        between "$(tail -n 1 <<<"$rows" | cut -d' ' -f2)" 84 121
    rows=$(work_series "$csv" '"load.cycles,stage=closed"')
    check "$1: the tagged counter is quoted and rises" series_ok 2 <<<"$rows"
    check_eq "$1: ... to the closed loop's 400 cycles" \
        "$(tail -n 1 <<<"$rows" | cut -d' ' -f2)" 400
    check_eq "$1: ... as results.out has it" \
        "$(last_count "$dir/results.out" load.cycles,stage=closed)" 400
    check_eq "$1: load.errors ends at 0" \
        "$(work_series "$csv" load.errors | tail -n 1 | cut -d' ' -f2)" 0
    check_eq "$1: results.out's latency histogram has every task" \
        "$(jq -rs '[.[] | select(.type == "histogram" and
            .name == "load.latency")] | last | .measures.count // empty' \
            "$dir/results.out" 2>/dev/null)" \
        "$(last_count "$dir/results.out" load.cycles)"
}

# check_load_killed RUNNER — the case "killed" on RUNNER: SIGKILL at cycle
# 100, 2.5 s in (TAP lines).
check_load_killed() {
    local id=load-killed-${1#local:} f rc csv rows
    load_plan
    f=$(load_comp "$id" "$1" killed)
    rc=$(run_hostile "$id" "$f")
    check_eq "$1 killed: the run fails" "$rc" 1
    csv=$RUNS/$id/kv/0/work.csv
    check_eq "$1 killed: work.csv keeps its header" "$(head -n 1 "$csv")" \
        "time_ms,name,value"
    rows=$(work_series "$csv" load.cycles)
    check "$1 killed: ... and rows of load.cycles rising from before the kill" \
        series_ok 2 <<<"$rows"
    check "$1 killed: ... the last between 1 and 100" \
        between "$(tail -n 1 <<<"$rows" | cut -d' ' -f2)" 1 100
}
