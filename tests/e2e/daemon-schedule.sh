# shellcheck shell=bash
# tests/e2e/daemon-schedule.sh — schedules on the daemon, with the clock
# moved by a file the test rewrites (TESTYARD_CLOCK) and local:exec
# black-box compositions: an --every 1h schedule fires when the clock
# passes the hour and not before, its build rewrites the script the run
# executes (so each run shows the newest build), and its runs go into
# the history under its name; a daemon stopped for 5 h runs a missed
# schedule once at start; a --cron schedule fires at its minute;
# --build 'exit 3' gives a task done with outcome build-failed, whose
# build log `logs` prints; --version-from records a git commit in the
# task and the history; pause stops firings and resume fires at the next
# due time only; rm; a bad spec, a bad composition and a duplicate name
# are refused with nothing stored.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

# shellcheck source=tests/helpers/daemon.sh
. tests/helpers/daemon.sh

C=$RUNS/c
G=$RUNS/git
CLOCK=$RUNS/clock
mkdir -p "$C" "$G"

setclock() {
    echo "2026-01-01T$1Z" >"$CLOCK"
}

# count SCHEDULE — how many tasks that schedule made.
count() {
    ty tasks --json | jq "[.[] | select(.schedule == \"$1\")] | length"
}

count_is() {
    [ "$(count "$1")" = "$2" ]
}

# settled SCHEDULE N [SCHEDULE N]... — each made N tasks, all ended.
settled() {
    while [ $# -gt 0 ]; do
        count_is "$1" "$2" || return 1
        shift 2
    done
    all_ended
}

all_ended() {
    [ "$(ty tasks --json | jq '[.[] | select(.state == "queued" or
        .state == "running")] | length')" = 0 ]
}

# last SCHEDULE JQ — a field of that schedule's newest task.
last() {
    ty tasks --json |
        jq -r "[.[] | select(.schedule == \"$1\")] | last | $2"
}

# quiet CMD... — CMD with its stdout dropped.
quiet() {
    "$@" >/dev/null
}

nschedules() {
    ty schedule list --json | jq length
}

# A composition running ./prog.sh from its folder, which the build of
# "hello" rewrites: run N prints built-N.
comp() {
    cat >"$C/$1.yaml" <<EOF
metadata: {name: $1}
global:
  runner: local:exec
  run_config: {timeout: 1m}
groups:
  - id: s
    instances: {count: 1}
    resources: {memory: 64Mi}
    run: {command: [./prog.sh]}
EOF
    echo "$C/$1.yaml"
}
printf '#!/bin/sh\necho unbuilt\n' >"$C/prog.sh"
chmod +x "$C/prog.sh"
# shellcheck disable=SC2016 # expanded by the build's own shell
BUILD='n=$(cat n 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" >n;
printf "#!/bin/sh\necho built-%s\n" "$n" >prog.sh; chmod +x prog.sh;
echo "build $n done"'

git -C "$G" init -q && echo a >"$G/a" && git -C "$G" add a &&
    git -C "$G" -c user.email=t@t -c user.name=t commit -qm a
COMMIT=$(git -C "$G" rev-parse HEAD)

setclock 00:00:00
export TESTYARD_CLOCK=$CLOCK
check "the daemon starts" start_daemon

# --- refused, nothing stored
bad_composition "$C/bad.yaml" >/dev/null
ty schedule add --every 1h "$C/bad.yaml" >"$RUNS/bad.out" 2>&1
check_eq "a bad composition: exit 65" "$?" 65
check "its message is file:line:col" grep -q "$C/bad.yaml:7:[0-9]*: " \
    "$RUNS/bad.out"
ty schedule add --cron '61 * * * *' "$(comp hello)" >"$RUNS/spec.out" 2>&1
check_eq "a bad cron spec: exit 64" "$?" 64
check "it names the field" grep -q 'field 1 (minute)' "$RUNS/spec.out"
ty schedule add --every 10s "$(comp hello)" >"$RUNS/every.out" 2>&1
check_eq "an --every under a minute: exit 64" "$?" 64
ty schedule add --every 1h --tz No/Where --cron '0 * * * *' \
    "$(comp hello)" >/dev/null 2>&1
check_eq "--every and --cron together: exit 64" "$?" 64
ty schedule add --cron '0 * * * *' --tz No/Where "$(comp hello)" \
    >"$RUNS/tz.out" 2>&1
check_eq "an unknown zone: exit 64" "$?" 64
check "it names the zone" grep -q 'No/Where' "$RUNS/tz.out"
check_eq "nothing was stored" "$(nschedules)" 0

# --- the schedules
check_eq "add names the schedule after metadata.name" \
    "$(ty schedule add --every 1h --build "$BUILD" "$(comp hello)" \
        2>"$RUNS/add.err")" hello
ty schedule add --every 1h "$(comp hello)" >"$RUNS/dup.out" 2>&1
check_eq "a name taken: exit 65" "$?" 65
check "it says so" grep -q 'schedule "hello" exists' "$RUNS/dup.out"
check "--build 'exit 3' is added" quiet ty schedule add --every 1h --name bf \
    --build 'echo compiling; echo "error: boom"; exit 3' "$(comp bfc)"
check "--version-from is added" quiet ty schedule add --every 1h --name ver \
    --version-from "$G" "$(comp verc)"
check "a --cron schedule is added" quiet ty schedule add --cron '30 6 * * *' \
    --name cr "$(comp crc)"
check_eq "four schedules" "$(nschedules)" 4
check_eq "hello's next firing is at 01:00" \
    "$(ty schedule list --json | jq -r '.[] | select(.name == "hello") |
        .next')" 2026-01-01T01:00:00.000Z

setclock 00:59:58
sleep 2
check_eq "not before the hour: no task" "$(ty tasks --json | jq length)" 0

setclock 01:00:05
check "past the hour: a task each (hello, bf, ver)" \
    wait_for 60 settled hello 1 bf 1 ver 1
check_eq "hello's task succeeded" "$(last hello .outcome)" success
check "its run ran the newest build" grep -q '^built-1$' \
    "$DATA/runs/task-$(last hello .id)/s/0/run.out"
check "it carries its build time" \
    [ "$(last hello '.build_seconds >= 0')" = true ]
ty logs "$(last hello .id)" >"$RUNS/hello.log" 2>&1
check "logs prints the build log first" \
    sh -c "head -1 '$RUNS/hello.log' | grep -q '^\\\$ n='"
check "then the run's" grep -q '^result: success' "$RUNS/hello.log"

check_eq "bf: done" "$(last bf .state)" "done"
check_eq "bf: outcome build-failed" "$(last bf .outcome)" build-failed
check_eq "bf: its reason is the status and the log's last line" \
    "$(last bf .reason)" "build exited with status 3: error: boom"
check "bf: never ran" [ "$(last bf .run_id)" = null ]
ty logs "$(last bf .id)" >"$RUNS/bf.log" 2>&1
check "bf: logs shows its build log" grep -q '^compiling$' "$RUNS/bf.log"

check_eq "ver: the commit is in the task" "$(last ver .version)" "$COMMIT"
check_eq "ver: and in the history" \
    "$(ty history ver --json | jq -r '.[0].version')" "$COMMIT"
check_eq "hello's run is in the history under its name" \
    "$(ty history hello --json | jq -r '.[0].schedule + " " + .[0].outcome')" \
    "hello success"
check_eq "bf's too, build-failed" \
    "$(ty history bf --json | jq -r '.[0].outcome')" build-failed

# --- missed while the daemon was down: once
check "the daemon stops" stop_daemon
setclock 06:00:05
check "it starts again" start_daemon
check "one task for hello's five missed firings" \
    wait_for 60 settled hello 2
sleep 2
check_eq "only one" "$(count hello)" 2
check "it ran the newest build" grep -q '^built-2$' \
    "$DATA/runs/task-$(last hello .id)/s/0/run.out"
check_eq "the cron schedule has not fired" "$(count cr)" 0

# --- cron at its minute
setclock 06:29:58
sleep 2
check_eq "cron: not before 06:30" "$(count cr)" 0
setclock 06:30:05
check "cron: at 06:30" wait_for 60 settled cr 1
check_eq "cron: succeeded" "$(last cr .outcome)" success

# --- pause, resume
check "pause" quiet ty schedule pause hello
check_eq "list says paused" \
    "$(ty schedule list --json | jq -r '.[] | select(.name == "hello") |
        .paused')" true
setclock 07:00:05
check "at 07:00 the others fire" wait_for 60 settled bf 3 ver 3
check_eq "paused: hello did not" "$(count hello)" 2
check "resume" quiet ty schedule resume hello
sleep 2
check_eq "resume does not fire what was owed" "$(count hello)" 2
setclock 08:00:05
check "it fires at the next due time" \
    wait_for 60 settled hello 3

# --- rm
check "rm" quiet ty schedule rm cr
check_eq "three schedules left" "$(nschedules)" 3
ty schedule rm cr >/dev/null 2>&1
check_eq "rm of no schedule: exit 66" "$?" 66
ty schedule list >"$RUNS/list.out"
check "list shows the last task and its outcome" \
    grep -q '^hello .* [0-9]* done success$' "$RUNS/list.out"

# --- a long build holds up nothing else, and the daemon's stop kills it
build_runs() {
    pgrep -f 'slow-build-mar[k]' >/dev/null
}
build_gone() {
    ! build_runs
}
check "a schedule with a long build" quiet ty schedule add --every 1h \
    --name slow --build 'sleep 120; : slow-build-mark' "$(comp slowc)"
setclock 09:00:05
check "its build runs" wait_for 30 build_runs
Q=$(ty submit "$(sleeper q 1 64Mi)" 2>/dev/null)
check "meanwhile a submitted task runs to its end" \
    wait_for 60 state_is "${Q:-0}" "done"
check_eq "... with success" "$(field "${Q:-0}" .outcome)" success
check "the daemon stops during the build" stop_daemon
check "no build is left" wait_for 10 build_gone
check "it starts again" start_daemon
check_eq "the firing's task is canceled" "$(last slow .outcome)" canceled
check "... saying why" grep -q "the daemon is stopping" \
    <<<"$(last slow .reason)"

finish
