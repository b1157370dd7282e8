# shellcheck shell=bash
# tests/e2e/docker-unavailable.sh — a local:docker run with no engine to
# talk to exits 69 with a message that says how to get one, and leaves no
# run folder behind.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

mkdir -p "$RUNS/none"
DOCKER_HOST="unix://$RUNS/no-engine.sock" "$TY" run --plans plans \
    --runs "$RUNS/none" compositions/placebo.yaml >"$RUNS/none.log" 2>&1
rc=$?
check_eq "no engine: exit status 69" "$rc" 69
check "the message names the socket and how to start an engine" \
    grep -q "cannot reach the Docker engine at unix://$RUNS/no-engine.sock.*dockerd" "$RUNS/none.log"
check_eq "no run folder is left" "$(find "$RUNS/none" -mindepth 1 | wc -l)" 0

DOCKER_HOST="unix://$RUNS/no-engine.sock" "$TY" doctor >"$RUNS/doctor.log" 2>&1
check_eq "doctor without an engine: exit status 69" "$?" 69

finish
