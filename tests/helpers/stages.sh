# shellcheck shell=bash
# shellcheck disable=SC2016 # awk and jq programs, in single quotes on purpose
# tests/helpers/stages.sh — a composition's stages in a real run (sourced
# after tests/helpers/lib.sh by tests/e2e/stages.sh on local:exec and
# tests/docker/stages.sh on local:docker, which run the same checks).
#
# check_restarts: the plan tests/e2e/stages_plan.c (case steady) runs
# four stages of 1.5 s with a restart of its group between each; each
# process replays 2 ms per cycle done before it says it is ready, so
# each restart takes longer than the one before. result.json must time
# three restarts (ready by the SDK, later ones longer), the instance's
# outputs must be kept (its state folder counts 4 starts, run.out has the
# lines of every process, memory.csv runs through every stage), and
# stages.jsonl must hold the four stages in order; the report must find
# the restart time growing with put.cycles (added up across the
# processes) by about the 2 ms per cycle planted.
#
# check_round_restart: two instances run rounds (barriers end-N); three
# rounds, a restart of one of them, three more: the run succeeds, no
# barrier fails, and the restarted instance passes its old rounds again
# and catches up.
#
# check_hang: a plan waiting at a barrier when its restart comes ends on
# the SIGTERM (its wait gives up: ty_stopping), not by the SIGKILL after
# the grace.
#
# check_probe: a black-box program that listens on a port only after a
# delay, its group's run.ready a TCP probe of that port, restarted once:
# the restart is timed by the probe.
#
# Each takes the runner and prints TAP lines.

stages_plan() {
    mkdir -p "$RUNS/plans/stages"
    cp tests/e2e/stages_plan.c "$RUNS/plans/stages/main.c"
    cp tests/e2e/stages_manifest.yaml "$RUNS/plans/stages/manifest.yaml"
}

# stages_comp ID RUNNER CASE PARAMS GROUPS [STAGE...] — a composition of
# the plan "stages" running CASE with test_params PARAMS (a flow
# mapping), one instance in each of GROUPS (ids, space-separated) and the
# entries STAGE... (flow mappings) as run_config.stages (none: no
# stages); timeout 2m, processes sampled every 200 ms. Prints its path.
stages_comp() {
    local id=$1 runner=$2 tcase=$3 params=$4 groups=$5 g e
    shift 5
    {
        printf 'metadata: {name: %s}\nglobal:\n  plan: stages\n' "$id"
        printf '  case: %s\n  runner: %s\n' "$tcase" "$runner"
        printf '  run:\n    test_params: %s\n' "$params"
        printf '  run_config:\n    timeout: 2m\n    process_sample: 200ms\n'
        [ $# -eq 0 ] || printf '    stages:\n'
        for e in "$@"; do printf '      - %s\n' "$e"; done
        printf 'groups:\n'
        for g in $groups; do
            printf '  - id: %s\n    instances: {count: 1}\n' "$g"
        done
    } | composition "$id"
}

# restart_ms FILE K — the K-th (0-based) restart's seconds of the first
# instance in result.json FILE, times 1000 as an integer ("" when null).
restart_ms() {
    jq -r --argjson k "$2" '.instances[0].restarts[$k].seconds
        | if . == null then "" else . * 1000 | floor end' "$1"
}

check_restarts() {
    local id=stages-${1#local:} f rc dir res
    stages_plan
    f=$(stages_comp "$id" "$1" steady "{rate: 100, replay_per_cycle: 2ms}" node \
        "{name: one, duration: 1500ms}" "{restart: node, grace: 5s}" \
        "{name: two, duration: 1500ms}" "{restart: node, grace: 5s}" \
        "{name: three, duration: 1500ms}" "{restart: node, grace: 5s}" \
        "{name: four, duration: 1500ms}")
    rc=$(run_hostile "$id" "$f")
    check_eq "$1 restarts: the run succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log "$id"
    res=$RUNS/$id/result.json
    dir=$RUNS/$id/node/0
    check_eq "$1 restarts: result.json has three restarts" \
        "$(jq '.instances[0].restarts | length' "$res")" 3
    check_eq "$1 restarts: ... each ready by the SDK's ty_ready" \
        "$(jq -r '[.instances[0].restarts[].ready_by] | join(",")' "$res")" \
        "sdk,sdk,sdk"
    check_eq "$1 restarts: ... after the stages one, two, three" \
        "$(jq -r '[.instances[0].restarts[].stage] | join(",")' "$res")" \
        "one,two,three"
    check "$1 restarts: the first takes at least its replay (150 cycles x 2 ms)" \
        between "$(restart_ms "$res" 0)" 250 5000
    check "$1 restarts: the third takes longer than the first by 300 ms or more" \
        test "$(restart_ms "$res" 2)" -ge "$(($(restart_ms "$res" 0) + 300))"
    check_eq "$1 restarts: the instance's state folder counts 4 starts" \
        "$(cat "$dir/state/starts" 2>/dev/null)" 4
    check_eq "$1 restarts: run.out has every process's ready line" \
        "$(grep -c '"replayed [0-9]* cycles"' "$dir/run.out")" 4
    check_eq "$1 restarts: the outcome is success (stopped by the stages' end)" \
        "$(jq -r '.instances[0].outcome' "$res")" success
    check_eq "$1 restarts: stages.jsonl has the four stages in order" \
        "$(jq -r .stage "$RUNS/$id/stages.jsonl" | paste -sd,)" \
        "one,two,three,four"
    check "$1 restarts: ... each ended by its duration" \
        json_lines_all "$RUNS/$id/stages.jsonl" '.ended_by == "duration"'
    check_eq "$1 restarts: result.json's timeline has 4 stages and 3 restarts" \
        "$(jq -r '[.stages[] | .stage // .action] | join(",")' "$res")" \
        "one,restart,two,restart,three,restart,four"
    check "$1 restarts: memory.csv has samples in the last stage" \
        awk -F, -v t="$(jq '.stages[6].start_ms' "$res")" \
        'NR > 1 && $2 > t && $3 > 0 { n++ } END { exit !(n > 2) }' \
        "$dir/memory.csv"
    check "$1 restarts: processes.csv samples 4 processes of the plan, one a stage" \
        test "$(awk -F, 'NR > 1 && $5 == "stages" { print $3 }' "$dir/processes.csv" |
            sort -u | wc -l)" -eq 4
    check "$1 restarts: ... the last one in the last stage" \
        awk -F, -v t="$(jq '.stages[6].start_ms' "$res")" \
        'NR > 1 && $2 > t && $5 == "stages" && $7 > 0 { n++ } END { exit !(n > 2) }' \
        "$dir/processes.csv"
    check_eq "$1 restarts: the report finds restart time growing with put.cycles" \
        "$(jq -r '.groups[0].fits[] | select(.series == "restart:seconds"
            and .x == "put.cycles") | .verdict' "$RUNS/$id/summary.json")" \
        growing
    check "$1 restarts: ... by about the planted 2 ms per cycle (1.5 to 3)" \
        json_true "$RUNS/$id/summary.json" '.groups[0].fits[]
            | select(.series == "restart:seconds" and .x == "put.cycles")
            | .slope >= 0.0015 and .slope <= 0.003'
    check "$1 restarts: the terminal says so" \
        grep -q 'node *3 restarts, .* growing .* per cycle against put.cycles' \
        "$RUNS/$id.log"
    check "$1 restarts: put.cycles in work.csv starts again after each restart" \
        awk -F, '$2 == "put.cycles" { if ($3 < last) drops++; last = $3 }
            END { exit !(drops == 3) }' "$dir/work.csv"
}

check_round_restart() {
    local id=stages-rounds-${1#local:} f rc res
    stages_plan
    f=$(stages_comp "$id" "$1" rounds "{round_pause: 150ms}" "node peer" \
        "{name: before, rounds: 3}" "{restart: node}" \
        "{name: after, rounds: 3}")
    rc=$(run_hostile "$id" "$f")
    check_eq "$1 rounds: the run succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log "$id"
    res=$RUNS/$id/result.json
    check_eq "$1 rounds: node restarted once, peer never" \
        "$(jq -r '[.instances[] | "\(.group):\(.restarts | length)"] | join(",")' "$res")" \
        "node:1,peer:0"
    check "$1 rounds: no barrier failed" \
        json_lines_all "$RUNS/$id/barriers.jsonl" '.result == "released"'
    check_eq "$1 rounds: stages.jsonl: before and after, each by its rounds" \
        "$(jq -r '"\(.stage):\(.ended_by):\(.rounds)"' "$RUNS/$id/stages.jsonl" | paste -sd,)" \
        "before:rounds:3,after:rounds:3"
    check "$1 rounds: the rounds went on past the restart (end-6 released)" \
        grep -q '"end-6"' "$RUNS/$id/barriers.jsonl"
}

# free_port — a TCP port nothing listens on here now.
free_port() {
    local p
    for p in $(shuf -i 20000-40000 -n 20); do
        ss -Htln "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
    done
    echo 34567
}

check_probe() {
    local id=stages-probe-${1#local:} f rc res port prog=$RUNS/bin/late_listen
    mkdir -p "$RUNS/bin"
    check "$1 probe: late_listen builds" \
        cc -O1 -g -o "$prog" tests/e2e/late_listen.c
    port=$(free_port)
    f=$(composition "$id" <<EOF2
metadata: {name: $id}
global:
  runner: $1
  run_config:
    timeout: 2m
    stages:
      - {name: one, duration: 1s}
      - {restart: srv, grace: 3s}
      - {name: two, duration: 1s}
groups:
  - id: srv
    instances: {count: 1}
    run:
      command: [$prog, "$port", "700"]
      ready: {tcp: $port, interval: 50ms, timeout: 20s}
EOF2
)
    rc=$(run_hostile "$id" "$f")
    check_eq "$1 probe: the run succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log "$id"
    res=$RUNS/$id/result.json
    check_eq "$1 probe: the first start is found ready by the TCP probe" \
        "$(jq -r '.instances[0].ready_by' "$res")" tcp
    check_eq "$1 probe: the restart too" \
        "$(jq -r '.instances[0].restarts[0].ready_by' "$res")" tcp
    check "$1 probe: ... after the program's 700 ms delay, not before" \
        between "$(restart_ms "$res" 0)" 700 8000
    check_eq "$1 probe: the program started twice, in the same outputs" \
        "$(grep -c start "$RUNS/$id/srv/0/starts.log" 2>/dev/null)" 2
    check_eq "$1 probe: it was not killed (it ends on SIGTERM)" \
        "$(jq -r '.instances[0].restarts[0].killed' "$res")" false
}

# latency_max_over RESULTS SECONDS — put.latency's last record in a
# results.out has a max of SECONDS or more.
latency_max_over() {
    jq -se --argjson s "$2" '[.[] | select(.type == "histogram" and
        .name == "put.latency")] | last | .measures.max >= $s' "$1" >/dev/null
}

# check_pause RUNNER — the node paused for 1.5 s between two stages: no
# work.csv row while it is frozen (its threads are), memory still sampled,
# and the open loop's latency shows the stall (a task due in the pause
# counts from when it was due).
check_pause() {
    local id=stages-pause-${1#local:} f rc res dir p u
    stages_plan
    f=$(stages_comp "$id" "$1" steady "{rate: 100, replay_per_cycle: 0s}" node \
        "{name: before, duration: 2500ms}" "{pause: node}" \
        "{name: frozen, duration: 1500ms}" "{unpause: node}" \
        "{name: after, duration: 1s}")
    rc=$(run_hostile "$id" "$f")
    check_eq "$1 pause: the run succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log "$id"
    res=$RUNS/$id/result.json
    dir=$RUNS/$id/node/0
    check_eq "$1 pause: the timeline has the pause and the unpause" \
        "$(jq -r '[.stages[] | .stage // "\(.action) \(.group)"] | join(",")' "$res")" \
        "before,pause node,frozen,unpause node,after"
    p=$(jq '.stages[1].start_unix_ms' "$res")
    u=$(jq '.stages[3].start_unix_ms' "$res")
    check "$1 pause: no work.csv row while it was frozen" \
        awk -F, -v p="$((p + 50))" -v u="$u" \
        'NR > 1 && $1 >= p && $1 < u { n++ } END { exit n > 0 }' \
        "$dir/work.csv"
    check "$1 pause: ... but rows before and after it" \
        awk -F, -v p="$p" -v u="$u" 'NR > 1 && $1 < p { a++ }
            NR > 1 && $1 > u { b++ } END { exit !(a > 0 && b > 0) }' \
        "$dir/work.csv"
    check "$1 pause: memory.csv was sampled while it was frozen" \
        awk -F, -v p="$(jq '.stages[2].start_ms' "$res")" \
        -v u="$(jq '.stages[2].end_ms' "$res")" \
        'NR > 1 && $2 > p && $2 < u && $3 > 0 { n++ } END { exit !(n > 2) }' \
        "$dir/memory.csv"
    check "$1 pause: put.latency's worst task waited the pause (1.3 s or more)" \
        latency_max_over "$dir/results.out" 1.3
}

# check_command_probe RUNNER — run.ready.command: the shell tests for a
# file the program writes after a delay (local:exec: on the host, in the
# instance's environment).
check_command_probe() {
    local id=stages-cmd-${1#local:} f rc res
    f=$(composition "$id" <<EOF2
metadata: {name: $id}
global:
  runner: $1
  run_config:
    timeout: 1m
    stages:
      - {name: one, duration: 500ms}
      - {restart: srv, grace: 2s}
      - {name: two, duration: 500ms}
groups:
  - id: srv
    instances: {count: 1}
    run:
      command: [/bin/sh, -c, 'sleep 0.6; touch "\$TEST_OUTPUTS_PATH/up"; trap "exit 0" TERM; while :; do sleep 0.05; done']
      ready:
        command: [/bin/sh, -c, 'test -e "\$TEST_OUTPUTS_PATH/up" && rm "\$TEST_OUTPUTS_PATH/up"']
        interval: 50ms
EOF2
)
    rc=$(run_hostile "$id" "$f")
    check_eq "$1 command probe: the run succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log "$id"
    res=$RUNS/$id/result.json
    check_eq "$1 command probe: first start and restart ready by the command" \
        "$(jq -r '[.instances[0].ready_by, .instances[0].restarts[0].ready_by] | join(",")' "$res")" \
        "command,command"
    check "$1 command probe: ... the restart after the program's 0.6 s" \
        between "$(restart_ms "$res" 0)" 600 8000
}

check_hang() {
    local id=stages-hang-${1#local:} f rc res
    stages_plan
    f=$(stages_comp "$id" "$1" hang "{}" node \
        "{name: one, duration: 500ms}" "{restart: node, grace: 20s}" \
        "{name: two, duration: 500ms}")
    rc=$(run_hostile "$id" "$f")
    check_eq "$1 hang: the run succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log "$id"
    res=$RUNS/$id/result.json
    check_eq "$1 hang: the waiting process ended on SIGTERM, not killed" \
        "$(jq -r '.instances[0].restarts[0].killed' "$res")" false
    check "$1 hang: ... within 2 s of it (its grace is 20 s)" \
        json_true "$res" '.instances[0].restarts[0].down_seconds < 2'
}

# check_cancel_load RUNNER — a run canceled while its plan is in a load
# with no end (it returns normally on the SIGTERM, ty_stopping): the
# instance reads canceled, not success, though it exited 0.
check_cancel_load() {
    local id=stages-cancel-${1#local:} f rc res pid
    stages_plan
    f=$(stages_comp "$id" "$1" steady "{rate: 50, replay_per_cycle: 0s}" node)
    "$TY" run --plans "$RUNS/plans" --runs "$RUNS" --run-id "$id" \
        --no-progress "$f" >"$RUNS/$id.log" 2>&1 &
    pid=$!
    wait_for 30 grep -qs '"replayed' "$RUNS/$id/node/0/run.out"
    sleep 0.5
    kill -INT "$pid"
    wait "$pid"
    rc=$?
    res=$RUNS/$id/result.json
    check_eq "$1 cancel: the canceled run exits 130" "$rc" 130
    check_eq "$1 cancel: the plan returned normally from its load" \
        "$(jq -r '.instances[0].exit_status' "$res")" 0
    check_eq "$1 cancel: ... and still reads canceled" \
        "$(jq -r '.instances[0].outcome' "$res")" canceled
}

# check_stop RUNNER — `stop: peer` between two stages: the peer ends then
# (a success: it was asked to), the node goes on to the end.
check_stop() {
    local id=stages-stop-${1#local:} f rc res
    stages_plan
    f=$(stages_comp "$id" "$1" steady "{rate: 50, replay_per_cycle: 0s}" \
        "node peer" "{name: both, duration: 1s}" "{stop: peer, grace: 5s}" \
        "{name: alone, duration: 1500ms}")
    rc=$(run_hostile "$id" "$f")
    check_eq "$1 stop: the run succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log "$id"
    res=$RUNS/$id/result.json
    check_eq "$1 stop: both instances succeed" \
        "$(jq -r '[.instances[].outcome] | join(",")' "$res")" success,success
    check "$1 stop: the peer ended with the stop action, over 1 s before the node" \
        json_true "$res" '.stages[1].action == "stop" and
            .instances[1].duration_s < .instances[0].duration_s - 1'
    check "$1 stop: the node's load went on in the last stage" \
        awk -F, -v t="$(jq '.stages[2].start_unix_ms + 1000' "$res")" \
        'NR > 1 && $2 == "put.cycles" && $1 > t { n++ } END { exit !(n > 0) }' \
        "$RUNS/$id/node/0/work.csv"
}

# check_long_run — compositions/long-run.yaml as a user runs it: four
# stages of kvlog with three restarts, each timed, and the fits the
# report finds per stage against put.cycles.
check_long_run() {
    local id=long-run rc res sum
    rc=$("$TY" run --runs "$RUNS" --run-id "$id" --no-progress \
        compositions/long-run.yaml >"$RUNS/$id.log" 2>&1; echo $?)
    check_eq "long-run.yaml: the run succeeds" "$rc" 0
    [ "$rc" = 0 ] || show_log "$id"
    res=$RUNS/$id/result.json
    sum=$RUNS/$id/summary.json
    check_eq "long-run.yaml: three restarts, each timed to ty_ready" \
        "$(jq -r '[.instances[0].restarts[] | select(.seconds > 0) | .ready_by]
            | join(",")' "$res")" sdk,sdk,sdk
    check_eq "long-run.yaml: stages.jsonl has load-1 to load-4" \
        "$(jq -r .stage "$RUNS/$id/stages.jsonl" | paste -sd,)" \
        load-1,load-2,load-3,load-4
    check "long-run.yaml: processes.csv has the server and its compactor" \
        awk -F, 'NR > 1 { n[$5] = 1 }
            END { exit !(("kvlog" in n) && ("kvlog-compact" in n)) }' \
        "$RUNS/$id/node/0/processes.csv"
    check "long-run.yaml: the server's RSS grows per put.cycles in load-1" \
        json_true "$sum" '[.groups[0].fits[] | select(.series ==
            "process:kvlog:rss" and .x == "put.cycles" and .stage == "load-1")]
            | .[0].verdict == "growing" and .[0].slope > 512'
    check "long-run.yaml: the state folder's disk use is fitted per stage" \
        json_true "$sum" '[.groups[0].fits[] | select(.series ==
            "disk:state:allocated" and .x == "put.cycles")] | length >= 4'
    check_eq "long-run.yaml: the restarts are summed up" \
        "$(jq '.groups[0].restarts.count' "$sum")" 3
}
