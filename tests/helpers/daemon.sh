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
