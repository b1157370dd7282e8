# shellcheck shell=bash
# tests/e2e/daemon.sh — the scheduling daemon on local:exec, with
# black-box compositions (sleep under a memory limit) so admission has
# something to count: the API wants the token (401 without); a bad
# composition is refused with file:line:col and exit 65, one larger than
# the budget with 65 too, and nothing is queued; with --memory-budget
# 256Mi two 192Mi tasks run one after the other in priority, then
# submission order, while two 96Mi ones overlap; a waiting task says why;
# logs -f follows a run to its end; cancel of a queued and of a running
# task; a relative ./prog keeps resolving from the submitted file's
# folder; SIGTERM cancels what runs and keeps the queue, which runs after
# a restart; kill -9 mid-run, then a start: the task is interrupted, its
# processes and cgroups gone, and the queue resumes. Each daemon has its
# own data folder and port, and is stopped at exit.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

# shellcheck source=tests/helpers/daemon.sh
. tests/helpers/daemon.sh

C=$RUNS/c
mkdir -p "$C"

ntasks() {
    ty tasks --json | jq length
}

check "the daemon starts" start_daemon --memory-budget 256Mi
URL=$(jq -r .url "$DATA/daemon.json")
check "daemon.json names a loopback URL" grep -q '"url":"http://127.0.0.1:' \
    "$DATA/daemon.json"
check_eq "the token is 0600" "$(stat -c %a "$DATA/token")" 600

# --- the token
code() {
    curl -s -o /dev/null -w '%{http_code}' "$@" "$URL/api/tasks"
}
check_eq "no token: 401" "$(code)" 401
check_eq "a wrong token: 401" \
    "$(code -H "Authorization: Bearer $(printf '0%.0s' $(seq 64))")" 401
check_eq "the token: 200" \
    "$(code -H "Authorization: Bearer $(cat "$DATA/token")")" 200

# --- start-up refusals
"$TY" daemon --data "$DATA" --listen 127.0.0.1:0 >"$RUNS/second.out" 2>&1
check_eq "a second daemon for the same data folder: exit 1" "$?" 1
check "it says one already runs" grep -q "a daemon already runs for $DATA" \
    "$RUNS/second.out"
"$TY" daemon --data "$RUNS/other" --listen 0.0.0.0:0 >"$RUNS/any.out" 2>&1
check_eq "--listen 0.0.0.0: refused (exit 64)" "$?" 64
check "it says loopback only" grep -q "127.0.0.1 only" "$RUNS/any.out"

# --- refused at submit, nothing queued
bad_composition "$C/bad.yaml" >/dev/null
ty submit "$C/bad.yaml" >"$RUNS/bad.out" 2>&1
check_eq "a bad composition: exit 65" "$?" 65
check "its message is file:line:col" grep -q "$C/bad.yaml:7:[0-9]*: " \
    "$RUNS/bad.out"
ty submit "$(sleeper big 1 512Mi)" >"$RUNS/big.out" 2>&1
check_eq "larger than the budget: exit 65" "$?" 65
check "it says so" grep -q "larger than the daemon's whole budget" \
    "$RUNS/big.out"
check_eq "nothing was queued" "$(ntasks)" 0
check_eq "no snapshot was left" "$(find "$DATA/tasks" -mindepth 1 | wc -l)" 0

# --- one after the other, priority, then submission order
A=$(ty submit "$(sleeper a 3 192Mi)" 2>/dev/null)
B=$(ty submit "$(sleeper b 1 192Mi)" 2>/dev/null)
Cq=$(ty submit "$(sleeper c 1 192Mi)" 2>/dev/null)
E=$(ty submit --priority 5 --name e-first "$(sleeper e 1 192Mi)" \
    2>/dev/null)
check "four tasks queued" test -n "$A" -a -n "$B" -a -n "$Cq" -a -n "$E"
check "the first runs" wait_for 20 state_is "$A" running
check "a waiting task says why" \
    grep -q "needs 192.0 MiB, 64.0 MiB free of the 256 MiB budget" \
    <<<"$(field "$E" .reason)"
check "the ones behind say what they wait for" \
    grep -q "waits for task $E" <<<"$(field "$B" .reason)"
X=$(ty submit "$(sleeper x 1 192Mi)" 2>/dev/null)
check_eq "cancel of a queued task" "$(ty cancel "$X")" "task $X: canceled"
check_eq "it never started" "$(field "$X" .started)" null
check "all four end" wait_for 60 state_is "$Cq" "done"
order=$(ty tasks --json | jq -r '[.[] | select(.started != null)] |
    sort_by(.started) | map(.id) | join(" ")')
check_eq "start order: first, then priority 5, then submission order" \
    "$order" "$A $E $B $Cq"
serial=$(ty tasks --json | jq '[.[] | select(.started != null)] |
    sort_by(.started) | [range(1; length) as $i |
    (.[$i].started >= .[$i - 1].ended)] | all')
check_eq "each started after the one before ended" "$serial" true
check_eq "outcomes success" \
    "$(ty tasks --json | jq -r '[.[] | select(.started != null) |
    .outcome] | unique | join(",")')" success
check "tasks shows the peak per group" grep -q "^$A .*done success .* s " \
    <<<"$(ty tasks)"

# --- two that fit run at once
F=$(ty submit "$(sleeper f 3 96Mi)" 2>/dev/null)
G=$(ty submit "$(sleeper g 3 96Mi)" 2>/dev/null)
check "both end" wait_for 60 state_is "$G" "done"
overlap=$(ty tasks --json | jq --argjson f "$F" --argjson g "$G" '
    (.[] | select(.id == $f)) as $x | (.[] | select(.id == $g)) as $y |
    $x.started < $y.ended and $y.started < $x.ended')
check_eq "two 96Mi tasks overlap in a 256Mi budget" "$overlap" true

# --- logs -f, status, report
L=$(ty submit "$(sleeper l 2 64Mi)" 2>/dev/null)
timeout 60 "$TY" logs -f "$L" --data "$DATA" >"$RUNS/follow.out" 2>&1
check_eq "logs -f ends with the task" "$?" 0
check "it followed the progress lines" \
    grep -q "run task-$L: all 1 instances started" "$RUNS/follow.out"
check "and the summary" grep -q "^result: success" "$RUNS/follow.out"
check "status names the run folder" \
    grep -q "^run: *$DATA/runs/task-$L" <<<"$(ty status "$L")"
check "report TASK prints the report's path" \
    test -s "$(ty report "$L" 2>/dev/null)"

# --- cancel of a running task
R=$(ty submit "$(sleeper r 60 64Mi)" 2>/dev/null)
check "the long task runs" wait_for 30 grep -q "all 1 instances started" \
    "$DATA/tasks/$R/log"
check "cancel of a running task" grep -q "canceling" <<<"$(ty cancel "$R")"
check "it ends canceled" wait_for 60 state_is "$R" canceled
check_eq "the run's outcome canceled, exit 130" \
    "$(field "$R" '"\(.outcome) \(.exit_status)"')" "canceled 130"
check "no process of it is left" no_procs "task-$R"

# --- a relative program, from the submitted file's folder
mkdir -p "$C/rel"
printf '#!/bin/sh\necho from-prog\n' >"$C/rel/prog"
chmod +x "$C/rel/prog"
cat >"$C/rel/rel.yaml" <<'EOF'
metadata: {name: rel}
global:
  runner: local:exec
groups:
  - id: p
    instances: {count: 1}
    resources: {memory: 64Mi}
    run: {command: [./prog]}
EOF
P=$(ty submit "$C/rel/rel.yaml" 2>/dev/null)
check "./prog runs from the snapshot" wait_for 30 state_is "$P" "done"
check_eq "with success" "$(field "$P" .outcome)" success
check "it printed" grep -q from-prog "$DATA/runs/task-$P/p/0/run.out"
check "the snapshot holds the composition" test -f "$DATA/tasks/$P/rel.yaml"

# --- SIGTERM keeps the queue
S1=$(ty submit "$(sleeper s1 60 192Mi)" 2>/dev/null)
S2=$(ty submit "$(sleeper s2 1 192Mi)" 2>/dev/null)
S3=$(ty submit "$(sleeper s3 1 192Mi)" 2>/dev/null)
check "the first of three runs" wait_for 30 grep -q \
    "all 1 instances started" "$DATA/tasks/$S1/log"
old=$(daemon_pid)
kill -TERM "$old"
check "SIGTERM: the daemon ends" wait_for 90 gone "$old"
check "its run is gone too" no_procs "task-$S1"
check "daemon.json is removed" test ! -e "$DATA/daemon.json"
ty tasks >"$RUNS/down.out" 2>&1
check_eq "no daemon: exit 69" "$?" 69
check "the message names the data folder and how to start one" \
    grep -q "no daemon runs for $DATA .*testyard daemon --data $DATA" \
    "$RUNS/down.out"
check "the daemon starts again" start_daemon --memory-budget 256Mi
check_eq "the running one was canceled" "$(field "$S1" .state)" canceled
check "the queue runs after the restart" wait_for 60 state_is "$S3" "done"
check_eq "both queued tasks succeeded" \
    "$(field "$S2" .outcome) $(field "$S3" .outcome)" "success success"

# --- kill -9 mid-run
K1=$(ty submit "$(sleeper k1 60 192Mi)" 2>/dev/null)
K2=$(ty submit "$(sleeper k2 1 192Mi)" 2>/dev/null)
check "a long task runs" wait_for 30 grep -q "all 1 instances started" \
    "$DATA/tasks/$K1/log"
old=$(daemon_pid)
kill -KILL "$old"
check "kill -9: the daemon is gone" wait_for 10 gone "$old"
check "the daemon starts after kill -9" start_daemon --memory-budget 256Mi
check_eq "the task is interrupted" "$(field "$K1" .state)" interrupted
check "no process of its run is left" no_procs "task-$K1"
check "no cgroup of its run is left" \
    test -z "$(find /sys/fs/cgroup -maxdepth 3 -name "task-$K1" 2>/dev/null)"
check "clean ran for it" grep -q "clean --run task-$K1" "$DATA/tasks/$K1/log"
check "the queue resumes" wait_for 60 state_is "$K2" "done"
check_eq "and the next task succeeds" "$(field "$K2" .outcome)" success

stop_daemon
finish
