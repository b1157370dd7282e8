# shellcheck shell=bash
# tests/browser/dashboard.sh — the daemon's dashboard in headless Chromium
# through the browser driver (build/tests/cdp): the login link sets the
# cookie and lands on the queue; the queue shows a running task and a
# waiting one live (the page reloads itself), and the Cancel button on
# the page cancels the running one; the task's page and its run's report
# load; the history page draws one chart per figure and group with the
# change point marked at the version it happened, and its form compares
# two runs. Screenshots are checked to be drawn (not blank). Nothing of
# Chromium is left; the daemon is stopped at exit.
#
#   bash tests/browser/dashboard.sh     (tests/browser/run runs it)
#   BUILD=build/san bash tests/browser/dashboard.sh
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/daemon.sh
. tests/helpers/daemon.sh

BUILD=${BUILD:-build}
TY=${TESTYARD:-$BUILD/testyard}
CDP=$BUILD/tests/cdp
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export TMPDIR=$RUNS/tmp
mkdir -p "$TMPDIR"

if [ ! -x "$CHROMIUM" ]; then
    skip "the dashboard in a browser" "no $CHROMIUM: scripts/setup browser installs Debian's chromium"
    finish
    exit
fi
if [ ! -x "$CDP" ] || [ ! -x "$TY" ]; then
    not_ok "no $CDP or $TY: build them first (make tests)"
    finish
    exit
fi

# cdp NAME STEP... — the driver (120 s at most); stdout in $RUNS/NAME.out,
# its step log in $RUNS/NAME.err; prints the exit status.
cdp() {
    local name=$1
    shift
    timeout --kill-after=5 150 "$CDP" --step-timeout 40 \
        --window-size 1280,1800 "$@" >"$RUNS/$name.out" 2>"$RUNS/$name.err"
    echo $?
}
# ran NAME DESCRIPTION STATUS — it passed every step; its log otherwise.
ran() {
    check_eq "$2: every step passed" "$3" 0
    [ "$3" = 0 ] || sed 's/^/#   /' "$RUNS/$1.err" | tail -n 20
}
left() {
    echo "$(pgrep -c -f -- "$TMPDIR/") processes," \
        "$(find "$TMPDIR" -mindepth 1 -maxdepth 1 | wc -l) folders"
}
# drawn PNG — bigger than a blank page's few KiB.
drawn() {
    [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
        [ "$(stat -c %s "$1")" -gt 20000 ]
}

check "the daemon starts" start_daemon --memory-budget 256Mi
LINK=$(ty dashboard 2>/dev/null)
URL=$(jq -r .url "$DATA/daemon.json")
check "ten runs recorded in the history" fake_history nightly 10 6
A=$(ty submit "$(sleeper long 60 192Mi)" 2>/dev/null)
Q=$(ty submit "$(sleeper short 1 192Mi)" 2>/dev/null)
check "the first task runs" wait_for 20 state_is "$A" running

# --- the queue, live, and a cancel from the page
cat >"$RUNS/queue.steps" <<EOF
open $LINK
expect location.pathname === "/"
expect document.cookie === ""
expect document.querySelector('#running tr#task-$A').dataset.state === "running"
expect document.querySelector('#queued tr#task-$Q .why').textContent.includes("free of the 256 MiB budget")
expect document.querySelector('meta[http-equiv="refresh"]') !== null
screenshot $RUNS/queue.png
click #cancel-$A
wait location.pathname === "/" && document.querySelector('#ended tr#task-$A') !== null 60s
expect document.querySelector('tr#task-$A').dataset.state === "canceled"
wait document.querySelector('tr#task-$Q') !== null && document.querySelector('tr#task-$Q').dataset.state === "done" 60s
expect document.querySelector('#running tr') === null
EOF
rc=$(cdp queue -f "$RUNS/queue.steps")
ran queue "the queue: login, live state, cancel from the page" "$rc"
check_eq "the daemon has the task canceled" "$(field "$A" .state)" canceled
check "the queue's screenshot is drawn" drawn "$RUNS/queue.png"

# --- a task's page and its report
cat >"$RUNS/task.steps" <<EOF
open $LINK
open $URL/tasks/$Q
expect document.getElementById("task").dataset.state === "done"
expect document.querySelector("pre.log") !== null
click #report
wait location.pathname === "/tasks/$Q/report" && document.querySelector("main") !== null 20s
expect document.title.length > 0
EOF
rc=$(cdp task -f "$RUNS/task.steps")
ran task "a task's page and its run's report" "$rc"

# --- history: charts, the change point, compare
cat >"$RUNS/history.steps" <<EOF
open $LINK
open $URL/history
click a[href="/history?name=nightly"]
wait location.search === "?name=nightly" && document.querySelectorAll("svg.hchart").length > 0 20s
expect document.querySelectorAll('svg.hchart:not([data-figure="slope"])').length === 6
expect document.querySelectorAll('svg.hchart[data-figure="slope"]').length === 2
expect [...document.querySelectorAll("svg.hchart")].every(s => s.getBoundingClientRect().width > 300 && s.querySelector("polyline") !== null)
expect document.querySelectorAll('svg.hchart[data-figure="peak"] circle').length === 20
expect document.querySelectorAll('svg.hchart[data-group="providers"][data-figure="peak"] .cp').length >= 1
expect document.querySelector('svg.hchart[data-group="providers"][data-figure="peak"]').textContent.includes("v6")
expect document.querySelector("#change-points .cp-row").textContent.includes("v6")
screenshot $RUNS/history.png
eval document.querySelector('select[name="a"]').value = "5"
eval document.querySelector('select[name="b"]').value = "6"
submit #compare
wait location.pathname === "/compare" && document.querySelector("main") !== null 30s
expect document.body.textContent.includes("nightly-5") && document.body.textContent.includes("nightly-6")
EOF
rc=$(cdp history -f "$RUNS/history.steps")
ran history "history charts, the change point, compare two runs" "$rc"
check "the history's screenshot is drawn" drawn "$RUNS/history.png"
[ -n "${DASH_OUT:-}" ] && mkdir -p "$DASH_OUT" && cp "$RUNS"/*.png "$DASH_OUT/"
check_eq "nothing of Chromium is left" "$(left)" "0 processes, 0 folders"

finish
