# shellcheck shell=bash
# tests/e2e/exec-progress.sh — on a terminal, `testyard run` draws one
# progress line per group (started, at a barrier, finished) and notes an
# instance that ends badly above them; without a terminal it prints plain
# lines only.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

f=$(composition prog <<'EOF2'
global:
  plan: placebo
  case: barrier
  runner: local:exec
  run: {test_params: {rounds: 3, crash_at_round: 2, crash_instance: 3}}
groups:
  - id: alpha
    instances: {count: 2}
  - id: beta
    instances: {count: 2}
EOF2
)
# script(1) gives the program a pseudo-terminal as its stdout.
script -qec "$TY run --plans plans --runs $RUNS --run-id tty $f" \
    "$RUNS/tty.typescript" >/dev/null 2>&1
out=$(tr -d '\r' <"$RUNS/tty.typescript")
check "a progress line for alpha" \
    grep -q "alpha *started 2/2  at barrier [0-9]  finished [0-9]/2" <<<"$out"
check "a progress line for beta, with the bad ending counted" \
    grep -q "beta *started 2/2  at barrier [0-9]  finished 2/2  (2 not ok)" <<<"$out"
check "the lines are redrawn in place (cursor up)" \
    grep -q $'\033\\[1A' <<<"$out"
check "the crash is noted" \
    grep -q "beta/1 exited with status 139 (crash" <<<"$out"

run_comp notty "$f" >/dev/null
check "without a terminal: no cursor movement" \
    not_grep $'\033' "$RUNS/notty.log"
check "without a terminal: the crash is a plain line" \
    grep -q "^testyard: beta/1 exited with status 139" "$RUNS/notty.log"

finish
