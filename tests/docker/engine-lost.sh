# shellcheck shell=bash
# tests/docker/engine-lost.sh — the Docker engine goes away mid-run and the
# run still ends: the coordinator reaches the engine through a unix-socket
# proxy (build/tests/sockproxy, DOCKER_HOST=unix://...) that the test kills
# (connections drop, new ones are refused) or stops (nothing answers).
#
#   - killed: exit 69 within the grace period plus a few seconds, one line
#     naming the engine and since when, instances "lost" in result.json,
#     no flood of reconnect lines; the containers are left, and once the
#     proxy is back `testyard clean --run ID` removes them;
#   - killed, then back while the coordinator waits for it: it removes
#     its containers itself;
#   - killed with a short deadline: the deadline does not hang either;
#   - killed, then two SIGTERMs: the run ends within seconds (exit 130),
#     long before the grace period;
#   - stopped (SIGSTOP: the engine hangs): exit 69 all the same.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

PROXY=${SOCKPROXY:-build/tests/sockproxy}
need_docker "engine lost mid-run"
ENGINE_SOCK=$(docker_socket)
if [ -z "$ENGINE_SOCK" ]; then
    skip "engine lost mid-run" "the proxy needs a unix socket; DOCKER_HOST is $DOCKER_HOST"
    finish
    exit
fi
if [ ! -x "$PROXY" ]; then
    skip "engine lost mid-run" "$PROXY is not built (make tests)"
    finish
    exit
fi

SOCK=$RUNS/engine.sock
PROXYPID=
GRACE=5 # seconds; TESTYARD_ENGINE_GRACE for these runs

start_proxy() {
    stop_proxy
    "$PROXY" "$SOCK" "$ENGINE_SOCK" >"$RUNS/proxy.out" 2>&1 &
    PROXYPID=$!
    wait_for 5 grep -q ready "$RUNS/proxy.out"
}

stop_proxy() {
    [ -n "$PROXYPID" ] || return 0
    kill -CONT "$PROXYPID" 2>/dev/null
    kill -KILL "$PROXYPID" 2>/dev/null
    wait "$PROXYPID" 2>/dev/null
    PROXYPID=
}
trap 'stop_proxy; [ -n "${BGPID:-}" ] && kill -KILL "$BGPID" 2>/dev/null; rm -rf "$RUNS"' EXIT

# stall_comp NAME TIMEOUT — two instances that sleep past the deadline.
stall_comp() {
    composition "$1" <<EOF2
global: {plan: placebo, case: stall, runner: local:docker,
         run_config: {timeout: $2}}
groups: [{id: s, instances: {count: 2}}]
EOF2
}

# start_bg ID FILE [GRACE] — start a run through the proxy; wait until
# every instance started.
start_bg() {
    DOCKER_HOST=unix://$SOCK TESTYARD_ENGINE_GRACE=${3:-$GRACE}s \
        run_bg "$1" "$2" 2 60
}

# wait_bg LIMIT — wait at most LIMIT seconds for the run; sets RC (or
# "hung", after killing it) and ELAPSED (seconds since T0).
wait_bg() {
    for _ in $(seq 1 $(($1 * 10))); do
        kill -0 "$BGPID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$BGPID" 2>/dev/null; then
        kill -KILL "$BGPID"
        wait "$BGPID" 2>/dev/null
        RC=hung
    else
        wait "$BGPID"
        RC=$?
    fi
    BGPID=
    ELAPSED=$(($(date +%s) - T0))
}

clean_run() { # ID — through the proxy, as a user would
    DOCKER_HOST=unix://$SOCK "$TY" clean --run "$1" >"$RUNS/clean-$1.log" 2>&1
}

# --- the proxy is killed and stays away ----------------------------------
f=$(stall_comp stall 10m)
check "proxy up" start_proxy
check "a run through the proxy starts" start_bg gone "$f"
stop_proxy
T0=$(date +%s)
wait_bg 40
check_eq "engine gone: exit 69" "$RC" 69
check "engine gone: ends within the grace period plus 10 s (${ELAPSED} s)" \
    [ "$ELAPSED" -le $((GRACE + 10)) ]
check "engine gone: one line names the engine and since when" \
    grep -q "^testyard: the Docker engine at unix://$SOCK has not answered since .*Z, .* ago: run gone is lost" "$RUNS/gone.log"
check_eq "engine gone: result.json says lost" "$(result gone .outcome)" lost
check_eq "engine gone: both instances lost" \
    "$(result gone '.groups[0].outcomes.lost')" 2
check_eq "engine gone: result.json exit status" "$(result gone .exit_status)" 69
check "engine gone: reconnects are not logged 5 times a second ($(grep -c 'docker events' "$RUNS/gone.log") lines)" \
    [ "$(grep -c 'docker events' "$RUNS/gone.log")" -le 2 ]
check "engine gone: says what it left and how to remove it" \
    grep -q "left 2 containers of run gone .*testyard clean --run gone" "$RUNS/gone.log"
check_eq "engine gone: the containers are left (labelled)" "$(containers_of_run gone)" 2
[ "$RC" = 69 ] || show_log gone
check "proxy back" start_proxy
check "testyard clean --run gone: exit 0" clean_run gone
check_eq "testyard clean --run gone: no container left" "$(containers_of_run gone)" 0

# --- the proxy comes back while the coordinator waits for it ----------------
check "a second run through the proxy starts" start_bg back "$f"
stop_proxy
T0=$(date +%s)
check "back: the coordinator waits for the engine" \
    wait_for $((GRACE + 10)) logged back "waiting .* for the Docker engine"
start_proxy
wait_bg 30
check_eq "back: exit 69 all the same" "$RC" 69
check "back: it removed what it started" grep -q "is back: removing" "$RUNS/back.log"
check_eq "back: no container left" "$(containers_of_run back)" 0
[ "$RC" = 69 ] || show_log back
start_proxy
clean_run back

# --- a short deadline while the engine is gone ------------------------------
f=$(stall_comp deadline 3s)
check "a run with a 3 s deadline starts" start_bg deadline "$f"
stop_proxy
T0=$(date +%s)
wait_bg 40
check_eq "deadline, engine gone: exit 69" "$RC" 69
check "deadline, engine gone: ends within the grace period plus 10 s (${ELAPSED} s)" \
    [ "$ELAPSED" -le $((GRACE + 10)) ]
[ "$RC" = 69 ] || show_log deadline
start_proxy
clean_run deadline
check_eq "deadline: clean removes the rest" "$(containers_of_run deadline)" 0

# --- two SIGTERMs while the engine is gone (a long grace) -------------------
f=$(stall_comp sigterm 10m)
check "a run for two SIGTERMs starts" start_bg sigterm "$f" 120
stop_proxy
sleep 1
T0=$(date +%s)
kill -TERM "$BGPID"
sleep 1
kill -TERM "$BGPID"
wait_bg 30
check_eq "two SIGTERMs, engine gone: exit 130" "$RC" 130
check "two SIGTERMs: the run ends within 12 s, not the 120 s grace (${ELAPSED} s)" \
    [ "$ELAPSED" -le 12 ]
check_eq "two SIGTERMs: result.json says canceled" "$(result sigterm .outcome)" canceled
[ "$RC" = 130 ] || show_log sigterm
start_proxy
clean_run sigterm
check_eq "sigterm: clean removes the rest" "$(containers_of_run sigterm)" 0

# --- the engine hangs (the proxy stopped: it accepts, never answers) --------
f=$(stall_comp hang 10m)
check "a run for a hanging engine starts" start_bg hang "$f"
kill -STOP "$PROXYPID"
T0=$(date +%s)
wait_bg 60
check_eq "engine hangs: exit 69" "$RC" 69
check "engine hangs: ends within the grace period plus 15 s (${ELAPSED} s)" \
    [ "$ELAPSED" -le $((GRACE + 15)) ]
check "engine hangs: the line names the engine" \
    grep -q "^testyard: the Docker engine at unix://$SOCK has not answered since" "$RUNS/hang.log"
[ "$RC" = 69 ] || show_log hang
stop_proxy
start_proxy
clean_run hang
check_eq "hang: clean removes the rest" "$(containers_of_run hang)" 0
stop_proxy

finish
