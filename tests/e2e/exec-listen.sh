# shellcheck shell=bash
# tests/e2e/exec-listen.sh — on local:exec the sync service listens on
# 127.0.0.1 and on no other address: instances are processes of this
# host, so nothing else needs to reach it.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

if ! command -v ss >/dev/null; then
    skip "the sync service's address on local:exec" "ss (iproute2) is not installed"
    finish
    exit
fi

f=$(composition listen <<'EOF2'
global: {plan: placebo, case: stall, runner: local:exec,
         run: {test_params: {stall_for: 1m}}, run_config: {timeout: 2m}}
groups: [{id: g, instances: {count: 2}}]
EOF2
)
"$TY" run --plans plans --runs "$RUNS" --run-id listen --no-progress "$f" \
    >"$RUNS/listen.log" 2>&1 &
pid=$!
addrs=""
for ((i = 0; i < 600; i++)); do
    # run.out is the runner's own until the instance ends (.runner)
    grep -q stalling "$RUNS/listen/.runner/g/1/run.out" 2>/dev/null && break
    sleep 0.1
done
addrs=$(ss -Hltnp | grep "pid=$pid," | awk '{print $4}' | sed 's/:[0-9]*$//' |
    sort -u | tr '\n' ' ')
kill -TERM "$pid"
wait "$pid"
check_eq "the sync service listens on 127.0.0.1 only" "$addrs" "127.0.0.1 "
[ "$addrs" = "127.0.0.1 " ] || show_log listen

finish
