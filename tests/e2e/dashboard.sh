# shellcheck shell=bash
# tests/e2e/dashboard.sh — the daemon's web pages through curl (the
# browser suite, tests/browser/dashboard.sh, drives them in Chromium):
# `testyard dashboard` prints the login link (exit 69 with no daemon);
# pages without the cookie are 401, a wrong token at /login is 401, the
# right one sets an HttpOnly SameSite cookie and sends the browser to the
# queue; every page forbids scripts (Content-Security-Policy); the queue
# shows the budget, a running task with its cancel button and a queued
# one with why it waits; a cancel without the form's CSRF value, or from
# another origin, is 403 and changes nothing; with it the task is
# canceled; a run's report.html is served, a link put in its place is
# not followed; the history index and a history page with its charts and
# change point at the version where it happened, the fits' slopes (a
# table, a chart per fit, the planted change of a slope at its run and
# none on a steady one; `testyard history` and `--fits` saying the same);
# compare's page with two runs' fits side by side; compare-two-runs by run
# number and by task; bad and unknown requests. Names an instance or a
# user chose come back escaped.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/daemon.sh
. tests/helpers/daemon.sh

JAR=$RUNS/cookies
H=$RUNS/headers
B=$RUNS/body

"$TY" dashboard --data "$RUNS/none" >"$RUNS/none.out" 2>&1
check_eq "dashboard with no daemon: exit 69" "$?" 69
check "it says how to start one" grep -q "testyard daemon --data" \
    "$RUNS/none.out"

check "the daemon starts" start_daemon --memory-budget 256Mi
URL=$(jq -r .url "$DATA/daemon.json")
TOKEN=$(cat "$DATA/token")
LINK=$(ty dashboard 2>&1)
check_eq "dashboard prints the login link" "$LINK" "$URL/login?token=$TOKEN"

# get PATH [CURL-ARGS...] — the status; headers in $H, body in $B.
get() {
    local p=$1
    shift
    curl -s -D "$H" -o "$B" -w '%{http_code}' "$@" "$URL$p"
}
# page PATH [CURL-ARGS...] — as the logged-in browser.
page() {
    local p=$1
    shift
    get "$p" -b "$JAR" "$@"
}
header() {
    grep -i "^$1:" "$H" | head -n 1 | tr -d '\r'
}

check_eq "the queue without logging in: 401" "$(get /)" 401
check "the 401 page says how to log in" grep -q "testyard dashboard" "$B"
check "it does not show the data folder" not_grep "$DATA" "$B"
check_eq "a wrong token at /login: 401" \
    "$(get "/login?token=$(printf 'a%.0s' $(seq 64))" -c "$JAR")" 401
check "no cookie was set" not_grep testyard_token "$JAR"
check_eq "the login link: 303" "$(get "/login?token=$TOKEN" -c "$JAR")" 303
check_eq "it goes on to the queue" "$(header Location)" "Location: /"
cookie=$(header Set-Cookie)
check "the cookie is the token, HttpOnly and SameSite" \
    grep -qE "testyard_token=$TOKEN; Path=/; HttpOnly; SameSite=(Lax|Strict)" \
    <<<"$cookie"
check_eq "the queue with the cookie: 200" "$(page /)" 200
check "scripts are forbidden" grep -q "default-src 'none'" \
    <<<"$(header Content-Security-Policy)"
check "the bearer header works as well" test \
    "$(get / -H "Authorization: Bearer $TOKEN")" = 200
check "the queue shows the budget" grep -q "<b>0 B</b> of 256.0 MiB" "$B"

# --- live state and cancel
A=$(ty submit "$(sleeper long 60 192Mi)" 2>/dev/null)
Q=$(ty submit --name 'q<i>"x"' "$(sleeper waits 1 192Mi)" 2>/dev/null)
N=$(ty submit "$(sleeper never 1 192Mi)" 2>/dev/null)
check "three tasks queued" test -n "$A" -a -n "$Q" -a -n "$N"
check "the first runs" wait_for 20 state_is "$A" running
ty cancel "$N" >/dev/null 2>&1
check_eq "one canceled while queued" "$(field "$N" .state)" canceled
page / >/dev/null
check "the queue lists it as running" \
    grep -q "<tr id=\"task-$A\" data-state=\"running\">" "$B"
check "the other waits, saying why" \
    grep -q "needs 192.0 MiB, 64.0 MiB free of the 256 MiB budget" "$B"
check "a name given at submit comes back escaped" \
    grep -q 'q&lt;i&gt;&quot;x&quot;' "$B"
check "the page reloads itself while tasks are active" \
    grep -q 'http-equiv="refresh"' "$B"
check "each active task has a cancel button" \
    grep -q "action=\"/tasks/$A/cancel\"" "$B"
csrf=$(grep -o 'name="csrf" value="[0-9a-f]*"' "$B" | head -n 1 |
    sed 's/.*value="\([0-9a-f]*\)"/\1/')
check_eq "the form carries a 64-digit CSRF value" "${#csrf}" 64
check_eq "the task's page: 200" "$(page "/tasks/$A")" 200
check "it shows the task running" grep -q 'id="task" data-state="running"' "$B"

check_eq "a cancel without the CSRF value: 403" \
    "$(page "/tasks/$A/cancel" -X POST -d back=queue)" 403
check_eq "a cancel from another origin: 403" \
    "$(page "/tasks/$A/cancel" -H 'Origin: http://evil.example' \
        -d "csrf=$csrf&back=queue")" 403
check_eq "a cancel without the cookie: 401" \
    "$(get "/tasks/$A/cancel" -d "csrf=$csrf&back=queue")" 401
check_eq "the task still runs" "$(field "$A" .state)" running
check_eq "a cancel from the page: 303" \
    "$(page "/tasks/$A/cancel" -H "Origin: $URL" -d "csrf=$csrf&back=queue")" \
    303
check_eq "back to the queue" "$(header Location)" "Location: /"
check "the task is canceled" wait_for 30 state_is "$A" canceled
check "the waiting task runs then and ends" wait_for 40 state_is "$Q" "done"
check_eq "the queue once all ended: 200" "$(page /)" 200
check "it no longer reloads itself" not_grep 'http-equiv="refresh"' "$B"
check "the ended task is listed" grep -q "<tr id=\"task-$Q\" data-state=\"done\">" "$B"

# --- a run's report
check_eq "the report of the task that ran: 200" "$(page "/tasks/$Q/report")" 200
check "it is the run's report.html" cmp -s "$B" "$DATA/runs/task-$Q/report.html"
check "served under the same policy" grep -q "default-src 'none'" \
    <<<"$(header Content-Security-Policy)"
check_eq "the task's log: 200" "$(page "/tasks/$Q/log")" 200
check "it is the log" cmp -s "$B" "$DATA/tasks/$Q/log"
echo "secret in a file the daemon may read" >"$RUNS/secret"
mv "$DATA/runs/task-$Q/report.html" "$RUNS/report.html"
ln -s "$RUNS/secret" "$DATA/runs/task-$Q/report.html"
check_eq "a link in place of report.html: 403" "$(page "/tasks/$Q/report")" 403
check "what it points to is not sent" not_grep secret "$B"
rm "$DATA/runs/task-$Q/report.html"
mv "$RUNS/report.html" "$DATA/runs/task-$Q/report.html"
rm -rf "$DATA/runs/task-$Q.moved"
mv "$DATA/runs/task-$Q" "$RUNS/task-moved"
ln -s "$RUNS/task-moved" "$DATA/runs/task-$Q"
check_eq "a link in place of the run folder: 403" \
    "$(page "/tasks/$Q/report")" 403
rm "$DATA/runs/task-$Q"
mv "$RUNS/task-moved" "$DATA/runs/task-$Q"
check_eq "a task that never ran has no report: 404" \
    "$(page "/tasks/$N/report")" 404

# --- history
check "ten runs recorded in the history" fake_history nightly 10 6
check_eq "the history index: 200" "$(page /history)" 200
check "it lists the name with its runs" \
    grep -q '<a href="/history?name=nightly">nightly</a>.*<td class="n">10</td>' \
    "$B"
check "and the daemon's own tasks" grep -q 'name=waits"' "$B"
check_eq "the name's page: 200" "$(page '/history?name=nightly')" 200
charts=$(grep -o 'class="hchart" data-figure="[a-z]*"' "$B" | grep -vc slope)
check_eq "one chart per figure and group (3 x 2)" "$charts" 6
charts=$(grep -o 'class="hchart" data-figure="slope"' "$B" | wc -l)
check_eq "and one per fit against the work done" "$charts" 2
check "the fits' table lists the RSS per cycle, its last slope and change" \
    grep -q '<tr class="fit-row"><td>providers</td><td>process:kvd:rss against cycles in load</td><td class="n">10</td><td class="n">+8.1 KiB per cycle</td><td class="n">+8.0 KiB per cycle</td><td class="n">+1 %</td><td>growing (R&sup2; 0.99)</td><td>run 6: +' "$B"
check "and restart seconds per cycle, steady, with no change point" \
    grep -q '<td>restart:seconds against cycles in the whole run</td><td class="n">10</td><td class="n">+250.0 ms per cycle</td><td class="n">+251.0 ms per cycle</td><td class="n">-0 %</td><td>growing (R&sup2; 0.97)</td><td></td></tr>' "$B"
check "the slope's change point is listed at run 6" \
    grep -q '<tr class="cp-row"><td>providers</td><td>slope of process:kvd:rss against cycles in load</td><td>+[0-9]* %</td><td>6</td><td>v6</td>' "$B"
check "and marked on its chart" \
    grep -q '<g class="cp"><title>change point: providers process:kvd:rss against cycles in load: +[0-9]* % at run 6 (commit v6)' "$B"
check "the change point is marked" grep -q 'class="cp"' "$B"
check "the change point's row says run 6 and its version" \
    grep -q '<tr class="cp-row"><td>providers</td><td>peak</td><td>+50 %</td><td>6</td><td>v6</td>' "$B"
check "the compare form offers the runs" grep -q '<option value="9" selected>run 9' "$B"
check_eq "an unknown name: 404" "$(page '/history?name=nosuch')" 404
ty history nightly >"$RUNS/hist.out" 2>&1
check "history prints the fits' last slopes" grep -q \
    '^  providers process:kvd:rss against cycles in load: +8.1 KiB per cycle at run 10, +0.8 % since run 9, growing (R² 0.99)$' \
    "$RUNS/hist.out"
check "and the slope's change point at run 6" grep -Eq \
    '^  providers process:kvd:rss against cycles in load: \+[0-9]+ % at run 6 \(commit v6\), p = 0\.[0-9]+ \(mean \+4\.[0-9] KiB per cycle -> \+8\.[0-9] KiB per cycle\)$' \
    "$RUNS/hist.out"
check "none on the steady restart seconds" not_grep \
    'restart:seconds.* at run [0-9]* (commit' "$RUNS/hist.out"
ty history --fits nightly >"$RUNS/fits.out" 2>&1
check "--fits lists each fit's slope per run" grep -q \
    '^   6  v6                 +8.0 KiB per cycle  0.99  growing$' "$RUNS/fits.out"
check_eq "--fits --json: the change point of the RSS slope is at run 6" \
    "$(ty history --fits --json nightly | jq -c '[.[] | [.series, [.change_points[].run]]]')" \
    '[["process:kvd:rss",[6]],["restart:seconds",[]]]'
"${BUILD:-build}/tests/test_report_work" --write-run "$RUNS/work" >/dev/null 2>&1
cp -r "$RUNS/work/work" "$RUNS/work/b"
"$TY" compare --html "$RUNS/cmp.html" "$RUNS/work/work" "$RUNS/work/b" \
    >/dev/null 2>&1
check "compare's page lists the fits' slopes side by side" grep -q \
    '<tr class="cmp-fit"><td>process:kvd:rss</td><td>cycles</td><td>load</td><td class="n">+8.0 KiB per cycle</td><td class="n">+8.0 KiB per cycle</td>' \
    "$RUNS/cmp.html"
check_eq "compare runs 5 and 6: 200" \
    "$(page '/compare?name=nightly&a=5&b=6')" 200
check "it is compare's page" grep -q '</main>' "$B"
check "it names both runs" grep -q 'nightly-5' "$B"
check_eq "compare two tasks that ran: 200" "$(page "/compare?a=$A&b=$Q")" 200
check "it names both" grep -q "task-$A.*task-$Q" <<<"$(tr -d '\n' <"$B")"
check_eq "compare two tasks (one without a run): 404" \
    "$(page "/compare?a=$Q&b=$N")" 404
check_eq "compare with a bad number: 400" "$(page '/compare?a=x&b=2')" 400
check_eq "compare runs that are not there: 404" \
    "$(page '/compare?name=nightly&a=5&b=99')" 404

# --- the rest
check_eq "an unknown page: 404" "$(page /nothing)" 404
check_eq "a POST to the queue: 405" "$(page / -X POST -d x=1)" 405
check_eq "an unknown task: 404" "$(page /tasks/999)" 404
check_eq "the API still wants its bearer token, not the cookie" \
    "$(page /api/tasks)" 401

finish
