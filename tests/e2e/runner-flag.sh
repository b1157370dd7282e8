# shellcheck shell=bash
# tests/e2e/runner-flag.sh — --runner of run and validate replaces
# global.runner before the checks: a setting the flag's runner cannot
# honour is refused with the very message a composition naming that runner
# gets, and an unknown runner is a usage error naming the ones there are.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

# refused NAME GOLDEN — GOLDEN (a composition on local:exec refused for a
# setting only local:docker honours) as NAME.yaml on local:docker is
# valid, and refused on local:exec from the flag as when it names it.
refused() {
    local f named rc
    f=$(sed 's/runner: local:exec/runner: local:docker/' "$2" |
        composition "$1")
    "$TY" validate --plans plans "$f" >/dev/null 2>"$RUNS/$1.valid"
    check_eq "$1 on local:docker: valid" "$?" 0
    sed 's/runner: local:docker/runner: local:exec/' "$2" >"$f"
    "$TY" validate --plans plans "$f" 2>"$RUNS/$1.named"
    check_eq "$1 naming local:exec: exit 65" "$?" 65
    named=$(cat "$RUNS/$1.named")
    check "$1 naming local:exec: says why ($named)" \
        grep -q 'expected .* with runner local:exec (' "$RUNS/$1.named"
    sed 's/runner: local:exec/runner: local:docker/' "$2" >"$f"
    "$TY" validate --plans plans --runner local:exec "$f" 2>"$RUNS/$1.vflag"
    check_eq "$1 validate --runner local:exec: exit 65" "$?" 65
    check_eq "$1 validate --runner local:exec: same message" \
        "$(cat "$RUNS/$1.vflag")" "$named"
    rc=$(run_comp "$1" "$f" --runner local:exec)
    check_eq "$1 run --runner local:exec: exit 65" "$rc" 65
    check_eq "$1 run --runner local:exec: same message" \
        "$(cat "$RUNS/$1.log")" "$named"
    check "$1 run --runner local:exec: no run folder" [ ! -e "$RUNS/$1" ]
}

refused bridge tests/golden/invalid/network-bridge-exec.yaml
refused root tests/golden/invalid/root-exec.yaml

# The flag's runner is the one validate resolves, with its defaults.
f=$(composition exec <<'EOF2'
global: {plan: placebo, case: ok, runner: local:exec}
groups: [{id: g, instances: {count: 1}}]
EOF2
)
check_eq "validate --runner local:docker: runner and default network" \
    "$("$TY" validate --plans plans --runner local:docker "$f" |
        jq -r '.runner + " " + .run_config.network')" \
    "local:docker bridge"

want='testyard: --runner: expected local:exec or local:docker, got "local:dokcer"'
for cmd in run validate; do
    "$TY" "$cmd" --plans plans --runner local:dokcer "$f" >/dev/null \
        2>"$RUNS/$cmd-bad.err"
    check_eq "$cmd --runner local:dokcer: exit 64" "$?" 64
    check_eq "$cmd --runner local:dokcer: names the runners there are" \
        "$(cat "$RUNS/$cmd-bad.err")" "$want"
done
"$TY" describe --runner local:exec placebo >/dev/null 2>"$RUNS/describe.err"
check_eq "describe takes no --runner: exit 64" "$?" 64
check "describe --runner: an unknown option" \
    grep -q "unknown option '--runner'" "$RUNS/describe.err"

finish
