# shellcheck shell=bash
# tests/e2e/exec-nonroot.sh — local:exec without root: no cgroups can be
# made, so the run goes on without limits, says so once, and still samples
# every instance's memory (its resident memory from /proc).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

if [ "$(id -u)" -ne 0 ]; then
    skip "local:exec as an unprivileged user" "needs root to switch to nobody (an unprivileged run is covered by the other suites)"
    finish
    exit
fi
# The checkout may sit where nobody cannot read (a 0700 temporary folder):
# give nobody its own copy of the program, the SDK it compiles plans with,
# and the placebo plan.
chmod 0755 "$RUNS"
tree="$RUNS/tree"
mkdir -p "$tree/build" "$tree/sdk/include" "$tree/plans"
cp "$TY" "$(dirname "$TY")/libtestyard.a" "$tree/build/"
cp sdk/include/testyard.h "$tree/sdk/include/"
cp -R plans/placebo "$tree/plans/"
mkdir -m 0777 "$RUNS/nobody-home"
TY="$tree/build/testyard"
as_nobody() {
    setpriv --reuid=65534 --regid=65534 --clear-groups -- \
        env HOME="$RUNS/nobody-home" TESTYARD_CACHE="$RUNS/nobody-home/cache" "$@"
}

f=$(composition nobody <<'EOF2'
global:
  plan: placebo
  case: stall
  runner: local:exec
  run: {test_params: {stall_for: 1200ms}}
groups:
  - id: n
    instances: {count: 2}
    resources: {memory: 64Mi}
EOF2
)
chmod 0644 "$f"
as_nobody "$TY" run --plans "$tree/plans" --runs "$RUNS/nobody-home/r" \
    --run-id nobody --no-progress "$f" >"$RUNS/nobody.log" 2>&1
rc=$?
check_eq "as nobody: exit 0" "$rc" 0
check_eq "one warning about the missing limits" \
    "$(grep -c "cgroup" "$RUNS/nobody.log")" 1
csv="$RUNS/nobody-home/r/nobody/n/1/memory.csv"
check "memory.csv is there" [ -f "$csv" ]
rows=$(($(wc -l <"$csv") - 1))
check "memory.csv has samples from /proc ($rows rows)" [ "$rows" -ge 3 ]
usage=$(awk -F, 'NR == 3 {print $3}' "$csv")
check "usage is the process's resident memory ($usage bytes)" \
    [ "${usage:-0}" -gt 100000 ]
check_eq "no limit is recorded" \
    "$(jq -r '.instances[0].memory.limit_bytes' "$RUNS/nobody-home/r/nobody/result.json")" null
[ "$rc" = 0 ] || sed 's/^/#   /' "$RUNS/nobody.log"

finish
