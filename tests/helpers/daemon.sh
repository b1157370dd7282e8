# shellcheck shell=bash
# tests/helpers/daemon.sh — what the daemon suites share (sourced after
# tests/helpers/lib.sh): a data folder of their own (DATA), a daemon on a
# free loopback port, always stopped at exit, and tasks read back from
# `tasks --json`.
#
#   DAEMON_LEFTOVERS  run for each task's run id at exit, after the
#                     daemon stopped (default exec_leftovers)

DATA=$(mktemp -d /tmp/testyard-daemon.XXXXXX)

daemon_pid() {
    jq -r .pid "$DATA/daemon.json" 2>/dev/null
}

# stop_daemon — SIGTERM the daemon and wait (90 s at most) for its end.
stop_daemon() {
    local pid
    pid=$(daemon_pid)
    [ -n "$pid" ] && [ "$pid" != null ] || return 0
    kill -TERM "$pid" 2>/dev/null
    wait_for 90 gone "$pid"
}

daemon_cleanup() {
    local pid id
    stop_daemon
    pid=$(daemon_pid)
    [ -n "$pid" ] && [ "$pid" != null ] && kill -KILL "$pid" 2>/dev/null
    for id in "$DATA"/runs/task-*; do
        [ -d "$id" ] && "${DAEMON_LEFTOVERS:-exec_leftovers}" "${id##*/}"
    done
    rm -rf "$DATA" "$RUNS"
}
trap daemon_cleanup EXIT

# start_daemon [ARGS...] — start (detached) on 127.0.0.1:0; its output
# in $RUNS/daemon.out.
start_daemon() {
    "$TY" daemon --data "$DATA" --listen 127.0.0.1:0 "$@" \
        >>"$RUNS/daemon.out" 2>&1
}

# ty CMD [ARGS...] — testyard CMD on this suite's daemon.
ty() {
    "$TY" "$@" --data "$DATA"
}

# field TASK JQ — a field of the task from `tasks --json`.
field() {
    ty tasks --json | jq -r ".[] | select(.id == $1) | $2"
}

state_is() {
    [ "$(field "$1" .state)" = "$2" ]
}

# sleeper NAME SECONDS MEMORY — a local:exec composition of one instance
# of sleep SECONDS under MEMORY ($RUNS/NAME.yaml); prints its path.
sleeper() {
    composition "$1" <<EOF
metadata: {name: $1}
global:
  runner: local:exec
  run_config: {timeout: 2m}
groups:
  - id: s
    instances: {count: 1}
    resources: {memory: $3}
    run: {command: [sleep, "$2"]}
EOF
}

# bad_composition FILE — a composition with a misspelt key (memroy) on
# line 7; prints FILE.
bad_composition() {
    cat >"$1" <<'EOF'
metadata: {name: bad}
global:
  runner: local:exec
groups:
  - id: s
    instances: {count: 1}
    resources: {memroy: 64Mi}
    run: {command: [sleep, "1"]}
EOF
    echo "$1"
}

# fake_history NAME N FROM — N runs of NAME recorded in DATA's history
# without running anything: copies of the synthetic leaky run of
# build/tests/test_report (a real report, so compare works on them), each
# with its own run id and version vI, the first group's peak 64 MiB up to
# run FROM - 1 and 96 MiB from FROM on (a change point at FROM), and two
# fits against the work done: process:kvd:rss per cycle in stage load,
# 4 KiB up to FROM - 1 and 8 KiB from FROM (a slope change point at
# FROM), and restart:seconds per cycle, a steady 250 ms. Their folders
# are $RUNS/hist/NAME-I. 0 when all were recorded.
fake_history() {
    local name=$1 n=$2 from=$3 i d peak rss bad=0
    local units=${BUILD:-build}/tests/test_report
    mkdir -p "$RUNS/hist"
    if [ ! -d "$RUNS/hist/synth/leaky" ]; then
        "$units" --write-run "$RUNS/hist/synth" >/dev/null 2>&1 &&
            "$TY" report -q "$RUNS/hist/synth/leaky" >/dev/null 2>&1 ||
            return 1
    fi
    for i in $(seq 1 "$n"); do
        d=$RUNS/hist/$name-$i
        cp -r "$RUNS/hist/synth/leaky" "$d"
        peak=$((64 << 20))
        [ "$i" -ge "$from" ] && peak=$((96 << 20))
        # a little noise so the series is not a perfect step
        peak=$((peak + (i % 3) * (1 << 18)))
        # one run a day, each group's instances all ended well
        jq --arg id "$name-$i" --arg n "$name" \
            --arg t "$(date -u -d "2026-10-01 +$i days" +%Y-%m-%dT18:00:00.000Z)" \
            --arg e "$(date -u -d "2026-10-01 +$i days" +%Y-%m-%dT18:00:06.300Z)" \
            '.run_id = $id | .name = $n | .started = $t | .ended = $e |
             .groups |= map(. + {outcomes: {success: .instances}})' \
            "$d/result.json" >"$d/r.tmp" && mv "$d/r.tmp" "$d/result.json"
        rss=4096
        [ "$i" -ge "$from" ] && rss=8192
        rss=$((rss + (i % 3) * 64))
        jq --arg id "$name-$i" --argjson p "$peak" --argjson rss "$rss" \
            --argjson rs "0.25$((i % 2))" \
            '.run_id = $id | .groups[0].peak_bytes = $p |
             .groups[0].fits = [
               {series: "process:kvd:rss", x: "cycles", stage: "load",
                instances: 2, slope: $rss, r2: 0.99, points: 40,
                verdict: "growing"},
               {series: "restart:seconds", x: "cycles", stage: null,
                instances: 2, slope: $rs, r2: 0.97, points: 12,
                verdict: "growing"}]' \
            "$d/summary.json" >"$d/s.tmp" && mv "$d/s.tmp" "$d/summary.json"
        "$TY" history import --data "$DATA" --version "v$i" "$d" \
            >>"$RUNS/hist/import.log" 2>&1 || bad=$((bad + 1))
    done
    [ "$bad" -eq 0 ]
}
