# shellcheck shell=bash
# tests/e2e/run-id.sh — a run id names one new folder right under the runs
# folder: `.`, `..`, `../x`, an over-long id and an id already in use are
# refused, and nothing testyard did not create is ever removed (the earlier
# run, the runs folder and its parent stay).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

f=$(composition ok <<'EOF2'
metadata: {name: run-id}
global:
  plan: placebo
  case: ok
  runner: local:exec
groups:
  - id: single
    instances: {count: 1}
EOF2
)
parent=$RUNS/parent
runs=$parent/runs
mkdir -p "$runs"
echo keep >"$parent/sentinel"

# try ID — a run with --run-id ID; its output goes to $RUNS/try.log.
try() {
    "$TY" run --plans plans --runs "$runs" --run-id "$1" --no-progress "$f" \
        >"$RUNS/try.log" 2>&1
    echo $?
}

rc=$(try runid-earlier)
check_eq "a first run: exit status 0" "$rc" 0
check "it wrote its result" [ -f "$runs/runid-earlier/result.json" ]

rc=$(try runid-earlier)
check_eq "the same id again: exit status 73" "$rc" 73
check "the message names the folder that exists" \
    grep -q "run folder $runs/runid-earlier already exists" "$RUNS/try.log"
check_eq "in one line" "$(wc -l <"$RUNS/try.log")" 1
check "the earlier run is still there" [ -f "$runs/runid-earlier/result.json" ]

for id in . .. ../x .hidden a/b ""; do
    rc=$(try "$id")
    check_eq "--run-id '$id': exit status 64" "$rc" 64
    check "--run-id '$id': one line saying what is expected" \
        grep -q "^testyard: --run-id: expected" "$RUNS/try.log"
    check "--run-id '$id': the earlier run is still there" \
        [ -f "$runs/runid-earlier/result.json" ]
    check "--run-id '$id': the runs folder's parent is still there" \
        [ -f "$parent/sentinel" ]
done
check "../x made no folder beside the runs folder" [ ! -e "$parent/x" ]

long=$(printf 'a%.0s' $(seq 1 65))
rc=$(try "$long")
check_eq "a 65-character id: exit status 64" "$rc" 64
check "the message gives the bound" grep -q "at most 64 characters" "$RUNS/try.log"
check "no folder for it" [ ! -e "$runs/$long" ]
rc=$(try "${long:1}")
check_eq "a 64-character id is fine" "$rc" 0
rc=$(try "v1.2_x-y")
check_eq "letters, digits, '.', '_' and '-' are fine" "$rc" 0

# A generated id carries 32 random bits, and two at once never collide.
"$TY" run --plans plans --runs "$RUNS/gen" --no-progress -q "$f" &
"$TY" run --plans plans --runs "$RUNS/gen" --no-progress -q "$f"
rc1=$?
wait $!
rc2=$?
check_eq "two runs with generated ids: both exit 0" "$rc1 $rc2" "0 0"
check_eq "two folders" "$(find "$RUNS/gen" -mindepth 1 -maxdepth 1 | wc -l)" 2
check "a generated id ends in 8 hex digits" \
    test -n "$(find "$RUNS/gen" -mindepth 1 -maxdepth 1 -regextype egrep \
        -regex '.*/[0-9]{8}-[0-9]{6}-[0-9a-f]{8}' | head -1)"

# A set-up failure removes the folder it created, and only that one.
DOCKER_HOST="unix://$RUNS/no-engine.sock" "$TY" run --plans plans \
    --runs "$runs" --run-id runid-fresh --runner local:docker "$f" \
    >"$RUNS/fresh.log" 2>&1
check_eq "a set-up failure: exit status 69" "$?" 69
check "its own folder is removed" [ ! -e "$runs/runid-fresh" ]
check "the earlier run is still there" [ -f "$runs/runid-earlier/result.json" ]

finish
