# shellcheck shell=bash
# tests/browser/cdp.sh — the browser driver (tests/helpers/cdp.c) against
# headless Chromium: pages from a folder, as file:// and through a tiny
# server on 127.0.0.1 (tests/helpers/pagesrv.c) that records what it is
# sent. Checks: open + expect text, eval printing JSON, open through a
# redirect that sets a cookie (the dashboard's login link), wait for
# what a timer writes, click changing the DOM, a confirm() accepted and
# dismissed, a form POST reaching the server with the header and the
# cookie set, dom and screenshot, a script file, a failing expect (exit
# 1, the rest not run), a page that never loads (bounded), usage and
# launch errors (exit 2), and a SIGTERM mid-step; after each run nothing
# of Chromium is left running and its profile is gone.
#
#   bash tests/browser/cdp.sh       (tests/browser/run runs it)
#   BUILD=build/san CHROMIUM=/usr/bin/chromium bash tests/browser/cdp.sh
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

BUILD=${BUILD:-build}
CDP=$BUILD/tests/cdp
SRV=$BUILD/tests/pagesrv
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
PAGES=$RUNS/pages
# cdp's temporary folders go here, so that what a run leaves is seen
export TMPDIR=$RUNS/tmp
mkdir -p "$PAGES" "$TMPDIR"
srv_pid=
trap '[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null; rm -rf "$RUNS"' EXIT

if [ ! -x "$CHROMIUM" ]; then
    skip "the browser driver" "no $CHROMIUM: scripts/setup browser installs Debian's chromium"
    finish
    exit
fi
if [ ! -x "$CDP" ] || [ ! -x "$SRV" ]; then
    not_ok "no $CDP or $SRV: build them first (make tests)"
    finish
    exit
fi

cat >"$PAGES/index.html" <<'EOF'
<!doctype html>
<title>cdp test</title>
<h1 id="h">Hello</h1>
<ul id="list"></ul>
<button id="add" onclick="document.getElementById('list')
  .insertAdjacentHTML('beforeend', '<li>added</li>')">add</button>
<button id="cancel" onclick="document.getElementById('answer')
  .textContent = confirm('Cancel task 3?') ? 'yes' : 'no'">cancel</button>
<p id="answer"></p>
<p id="later"></p>
<form id="f" method="post" action="/submit">
  <input name="task" value="42"><button id="go">go</button>
</form>
<script>
setTimeout(function () {
  document.getElementById('later').textContent = 'ready';
}, 300);
</script>
EOF

# cdp NAME STEP... — run the driver (90 s at most); its stdout in
# $RUNS/NAME.out, its stderr in $RUNS/NAME.err; prints the exit status.
cdp() {
    local name=$1
    shift
    timeout --kill-after=5 90 "$CDP" "$@" >"$RUNS/$name.out" \
        2>"$RUNS/$name.err"
    echo $?
}

# left — Chromium's processes and folders that cdp runs left behind.
left() {
    echo "$(pgrep -c -f -- "$TMPDIR/") processes," \
        "$(find "$TMPDIR" -mindepth 1 -maxdepth 1 | wc -l) folders"
}

# ran NAME WANT DESCRIPTION STATUS — check the exit status, then that
# nothing is left; the driver's log as comments when the status is not
# the one wanted.
ran() {
    check_eq "$3: exit status $2" "$4" "$2"
    [ "$4" = "$2" ] || sed 's/^/#   /' "$RUNS/$1.err" | tail -n 20
    check_eq "$3: nothing left" "$(left)" "0 processes, 0 folders"
}

out() { cat "$RUNS/$1.out"; }
err() { grep -q -F -- "$2" "$RUNS/$1.err"; }

"$SRV" "$PAGES" "$RUNS/requests" >"$RUNS/srv.port" 2>&1 &
srv_pid=$!
wait_for 10 grep -qs '^port ' "$RUNS/srv.port"
port=$(sed -n 's/^port //p' "$RUNS/srv.port")
check "pagesrv listens on 127.0.0.1 (port ${port:-none})" test -n "$port"
URL=http://127.0.0.1:$port

# open + expect + eval, over file:// and http://
rc=$(cdp open "open file://$PAGES/index.html" \
    'expect document.getElementById("h").textContent === "Hello"' \
    'eval document.title' 'eval ({n: document.querySelectorAll("button").length})')
ran open 0 "file:// open, expect, eval" "$rc"
check_eq "eval prints JSON values" "$(out open | tr '\n' ' ')" \
    '"cdp test" {"n":3} '
check "the log has a line per step" \
    test "$(grep -c '^cdp: ok [1-4] ' "$RUNS/open.err")" -eq 4

rc=$(cdp http "open $URL/index.html" 'wait document.getElementById("later").textContent === "ready"' \
    'eval document.getElementById("later").textContent')
ran http 0 "http:// open, wait for a timer's text" "$rc"
check_eq "the timer's text" "$(out http)" '"ready"'
check "open says the HTTP status" err http "open $URL/index.html (HTTP 200"

# the dashboard's login link: a redirect that sets an HttpOnly cookie
rc=$(cdp login "open $URL/login" 'eval location.pathname' \
    'expect document.getElementById("h").textContent === "Hello"')
ran login 0 "open through a redirect" "$rc"
check_eq "it ends on the page redirected to" "$(out login)" '"/index.html"'
check "the page was asked for with the cookie" \
    grep -q -i '^Cookie: session=fromlogin' "$RUNS/requests"

# click changes the DOM; confirm() accepted, then dismissed
rc=$(cdp click "open $URL/index.html" 'click #add' 'click #add' \
    'expect document.querySelectorAll("#list li").length === 2' \
    'click #cancel' 'eval document.getElementById("answer").textContent')
ran click 0 "click, confirm()" "$rc"
check_eq "the confirm() was accepted" "$(out click)" '"yes"'
check "the dialog is in the log" \
    err click 'confirm dialog "Cancel task 3?": accepted'
rc=$(cdp dismiss --dismiss "open $URL/index.html" 'click #cancel' \
    'eval document.getElementById("answer").textContent')
ran dismiss 0 "--dismiss" "$rc"
check_eq "the confirm() was dismissed" "$(out dismiss)" '"no"'
rc=$(cdp absent "open $URL/index.html" 'click #nothing' 'eval 1')
ran absent 1 "click on no element" "$rc"
check "it says no element matches" \
    err absent 'FAIL 2 click #nothing: no element matches #nothing'

# every_request_has LINE HEADER LOG — at least one request whose request
# line matches LINE is in LOG (pagesrv's: each request, then "--"), and
# each of them has a line matching HEADER (ERE, case-blind). Requests
# for other paths (a late one of an earlier browser, its favicon) are not
# counted.
every_request_has() {
    awk -v line="$1" -v hdr="$2" '
        BEGIN { start = 1 }
        start { mine = ($0 ~ line); has = 0; start = 0; next }
        /^--$/ { if (mine) { n++; if (!has) bad++ } start = 1; next }
        tolower($0) ~ tolower(hdr) { has = 1 }
        END { exit !(n > 0 && bad == 0) }' "$3"
}

# a form POST with a header and a cookie, from a script file
cat >"$RUNS/post.steps" <<EOF
# the dashboard's login shape: a bearer token and a cookie
header Authorization Bearer t0k3n value
cookie session abc123 $URL/

open $URL/index.html?post
submit #f
wait document.title === "posted" 10s
eval document.getElementById("body").textContent
EOF
: >"$RUNS/requests"
rc=$(cdp post -f "$RUNS/post.steps")
ran post 0 "form POST from a script file" "$rc"
check_eq "the page shows what was posted" "$(out post)" '"task=42"'
check "the server got the POST" grep -q '^POST /submit HTTP' "$RUNS/requests"
check "every request of the page carried the header" every_request_has \
    '^(GET /index[.]html[?]post|POST /submit) ' \
    '^Authorization: Bearer t0k3n value' "$RUNS/requests"
check "the POST carried the cookie" \
    grep -q -i '^Cookie: session=abc123' "$RUNS/requests"

# dom and screenshot
rc=$(cdp shot --window-size 800,600 "open $URL/index.html" dom \
    "screenshot $RUNS/shot.png")
ran shot 0 "dom, screenshot" "$rc"
check "dom prints the document" grep -q '<h1 id="h">Hello</h1>' "$RUNS/shot.out"
check "the screenshot is a PNG" \
    test "$(head -c 8 "$RUNS/shot.png" | od -An -tx1 | tr -d ' \n')" = \
    89504e470d0a1a0a
check "no temporary file beside it" \
    test "$(find "$RUNS" -maxdepth 1 -name 'shot.png.*' | wc -l)" -eq 0

# a failing expect: exit 1, the expression and its value said, the rest
# not run
rc=$(cdp fail "open $URL/index.html" 'expect document.title === "other"' \
    'eval "after"')
ran fail 1 "a failing expect" "$rc"
check "it names the expression and what it was" \
    err fail 'FAIL 2 expect document.title === "other": got false'
check "the steps after it are not run" test ! -s "$RUNS/fail.out"
rc=$(cdp throw "open $URL/index.html" 'expect nosuch.x')
ran throw 1 "an expect that throws" "$rc"
check "the exception is the reason" err throw 'ReferenceError: nosuch is not defined'
rc=$(cdp waitfail "open $URL/index.html" 'wait document.title === "never" 1s')
ran waitfail 1 "a wait that never comes true" "$rc"
check "it says it timed out and the last value" \
    err waitfail 'timed out: still false'

# a page that never loads, bounded by the step timeout
rc=$(cdp hang --step-timeout 3 "open $URL/hang" 'eval 1')
ran hang 1 "a page that never loads" "$rc"
check "it says the load timed out" err hang 'FAIL 1 open'
check "... with the reason" err hang 'timed out'
check "the server saw the request" grep -q '^GET /hang ' "$RUNS/requests"
# a port nothing listens on: the server's, once it is stopped
kill "$srv_pid"
wait "$srv_pid" 2>/dev/null
srv_pid=
rc=$(cdp refused "open $URL/" 'eval 1')
ran refused 1 "a refused connection" "$rc"
check "Chromium's error is the reason" err refused 'net::ERR_CONNECTION_REFUSED'

# usage and launch errors
rc=$(cdp usage 'open' 'frobnicate x')
ran usage 2 "a step without its argument" "$rc"
check "it says which" err usage 'open: too few arguments'
rc=$(cdp unknown 'dom' 'frobnicate x')
check_eq "an unknown step: exit status 2" "$rc" 2
check "it names it" err unknown "unknown step 'frobnicate'"
rc=$(CHROMIUM=$RUNS/no-such-chromium cdp nochrome 'eval 1')
ran nochrome 2 "no Chromium" "$rc"
check "it names the program" err nochrome "$RUNS/no-such-chromium"

# SIGTERM mid-step: Chromium killed, the profile removed, cdp ends by
# the signal
"$CDP" "open file://$PAGES/index.html" 'wait false 60s' >/dev/null 2>"$RUNS/term.err" &
cpid=$!
check "a waiting run has Chromium running" \
    wait_for 30 grep -q 'cdp: ok 1 ' "$RUNS/term.err"
kill -TERM "$cpid"
check "cdp ends after SIGTERM" wait_for 15 gone "$cpid"
wait "$cpid"
rc=$?
ran term 143 "SIGTERM" "$rc"

finish
