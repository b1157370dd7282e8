# shellcheck shell=bash
# tests/e2e/exec-ping.sh — the ping plan on local:exec: two groups find
# each other over a topic and exchange messages over TCP every round; an
# unshaped round trip is well under a millisecond (no 40 ms stall of
# Nagle's algorithm meeting a delayed ACK).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

rc=$(run_comp ping compositions/ping.yaml --runner local:exec)
check_eq "ping: exit status 0" "$rc" 0
check_eq "ping: every instance succeeded" \
    "$(result ping '[.instances[] | select(.outcome == "success")] | length')" \
    "$(result ping '.instances | length')"
check "ping: round trip times in results.out" \
    grep -q 'rtt_seconds' "$RUNS/ping/east/0/results.out"
check "ping: no round trip waits out a delayed ACK (all under 20 ms unshaped)" \
    json_true <(cat "$RUNS"/ping/*/*/results.out | jq -s .) \
    '[.[] | select(.name | startswith("rtt_seconds")) | .measures.max]
        | length > 0 and max < 0.02'
[ "$rc" = 0 ] || show_log ping

finish
