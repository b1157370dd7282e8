# shellcheck shell=bash
# tests/e2e/exec-barriers.sh — barriers through local:exec: many instances
# through many rounds with nothing lost, and an instance dying mid-barrier
# makes the others fail at once instead of hanging.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

f=$(composition many <<'EOF2'
metadata: {name: many-barriers}
global:
  plan: placebo
  case: barrier
  runner: local:exec
  run: {test_params: {rounds: 20}}
  run_config: {timeout: 5m}
groups:
  - id: a
    instances: {count: 120}
  - id: b
    instances: {count: 80}
EOF2
)
rc=$(run_comp many "$f")
check_eq "200 instances x 20 barriers: exit 0" "$rc" 0
check_eq "200 successes" \
    "$(result many '[.instances[] | select(.outcome == "success")] | length')" 200
released=$(grep -c '"result":"released"' "$RUNS/many/barriers.jsonl" 2>/dev/null)
check_eq "20 barrier releases recorded" "$released" 20
check_eq "every release counted 200 instances" \
    "$(jq -s '[.[] | select(.result == "released" and .count == 200)] | length' \
        "$RUNS/many/barriers.jsonl" 2>/dev/null)" 20
check_eq "every waiter was released through the release board" \
    "$(jq -s '[.[] | select(.result == "released" and .waiters == 199 and
        .on_board == 199)] | length' "$RUNS/many/barriers.jsonl" 2>/dev/null)" 20
check "the release board is removed after the run" \
    test ! -e "$RUNS/many/.sync"
[ "$rc" = 0 ] || show_log many

f=$(composition crashmid <<'EOF2'
metadata: {name: crash-mid-barrier}
global:
  plan: placebo
  case: barrier
  runner: local:exec
  run: {test_params: {rounds: 5, crash_at_round: 3, crash_instance: 0}}
  run_config: {timeout: 2m}
groups:
  - id: g
    instances: {count: 10}
EOF2
)
start=$(date +%s%N)
rc=$(run_comp crashmid "$f")
took_ms=$((($(date +%s%N) - start) / 1000000))
check_eq "crash mid-barrier: exit 1" "$rc" 1
check_eq "the crashed instance is a crash" \
    "$(result crashmid '.instances[0].outcome')" crash
check_eq "the 9 others failed" \
    "$(result crashmid '[.instances[1:][] | select(.outcome == "failure")] | length')" 9
check "their error names the dead instance" \
    [ "$(result crashmid '[.instances[1:][] | select(.error | test("g/0 exited with status 139"))] | length')" = 9 ]
crash_end=$(result crashmid '.instances[0].ended')
last_end=$(result crashmid '[.instances[].ended] | max')
gap=$(( $(date -d "$last_end" +%s%3N) - $(date -d "$crash_end" +%s%3N) ))
check "the others ended within 1 s of the crash (${gap} ms)" [ "$gap" -lt 1000 ]
check "the whole run took well under its 2 min deadline (${took_ms} ms)" \
    [ "$took_ms" -lt 30000 ]
[ "$rc" = 1 ] || show_log crashmid

# TESTYARD_RELEASE_BOARD=0: every release is a message, and the run is the
# same otherwise.
f=$(composition noboard <<'EOF2'
metadata: {name: no-board}
global:
  plan: placebo
  case: barrier
  runner: local:exec
  run: {test_params: {rounds: 3}}
groups:
  - id: g
    instances: {count: 10}
EOF2
)
rc=$(TESTYARD_RELEASE_BOARD=0 run_comp noboard "$f")
check_eq "without the release board: exit 0" "$rc" 0
check_eq "3 releases of 9 waiters, none on the board" \
    "$(jq -s '[.[] | select(.result == "released" and .waiters == 9 and
        .on_board == 0)] | length' "$RUNS/noboard/barriers.jsonl" 2>/dev/null)" 3
[ "$rc" = 0 ] || show_log noboard

finish
