# shellcheck shell=bash
# tests/e2e/exec-errors.sh — errors of the coordinator's own and of
# starting an instance say what happened: a run loop that fails mid-run
# (zmq_poll made to fail by tests/e2e/fault_poll.c) stops every instance
# and exits 70 with the error in one line and in result.json, not 130 as
# if canceled; an artifact that cannot be executed fails its instance with
# the exec's own errno (EACCES for a file without the x bit, ENOENT for a
# missing one).
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

lib=$RUNS/fault_poll.so
if ! cc -shared -fPIC -o "$lib" tests/e2e/fault_poll.c -ldl \
    2>"$RUNS/cc.log"; then
    not_ok "fault_poll.so builds: $(head -1 "$RUNS/cc.log")"
    finish
    exit
fi

f=$(composition rounds <<'EOF2'
metadata: {name: loop-error}
global:
  plan: placebo
  case: barrier
  runner: local:exec
  run: {test_params: {rounds: 100, round_time: 100ms}}
  run_config: {timeout: 2m}
groups:
  - id: g
    instances: {count: 2}
EOF2
)
id=runid-loop
flag=$RUNS/fail-now
TY_FAULT_POLL=$flag LD_PRELOAD=$lib "$TY" run --plans plans --runs "$RUNS" \
    --run-id "$id" --no-progress "$f" >"$RUNS/$id.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    grep -q "all 2 instances started" "$RUNS/$id.log" 2>/dev/null && break
    sleep 0.1
done
touch "$flag"
wait "$pid"
rc=$?
check_eq "a failed run loop: exit 70" "$rc" 70
check "the error in one line, with the run it stopped" \
    grep -qx "testyard: zmq_poll: Bad address: run $id stopped" "$RUNS/$id.log"
check_eq "said once" "$(grep -c "Bad address" "$RUNS/$id.log")" 1
check_eq "its instances: canceled, with why" \
    "$(result "$id" '[.instances[] | .outcome + ": " + .error] | unique | .[]')" \
    "canceled: stopped by an internal error of the coordinator"
check_eq "result.json: outcome error" "$(result "$id" .outcome)" error
check_eq "result.json: exit_status 70" "$(result "$id" .exit_status)" 70
check_eq "result.json: the error" "$(result "$id" .error)" \
    "zmq_poll: Bad address"
check "the summary says so" grep -qx "result: error" "$RUNS/$id.log"
check "no instance is left running" \
    test -z "$(pgrep -f "$RUNS/$id/" || true)"
[ "$TAPFAIL" -gt 0 ] && show_log "$id"

# An artifact that exists without the x bit, and one that does not exist.
printf '#!/bin/sh\nexit 0\n' >"$RUNS/noexec"
chmod 0644 "$RUNS/noexec"
for art in noexec missing; do
    f=$(composition "art-$art" <<EOF2
metadata: {name: artifact-$art}
global:
  plan: placebo
  case: ok
  runner: local:exec
  run: {artifact: $RUNS/$art}
groups:
  - id: single
    instances: {count: 1}
EOF2
)
    rc=$(run_comp "art-$art" "$f")
    check_eq "artifact $art: the plan failed (exit 1)" "$rc" 1
done
check_eq "no x bit: the instance's error is the exec's EACCES" \
    "$(result art-noexec '.instances[0].error')" \
    "$RUNS/noexec: could not be run: Permission denied"
check_eq "missing: ENOENT" "$(result art-missing '.instances[0].error')" \
    "$RUNS/missing: could not be run: No such file or directory"
check "the run's log names the errno" \
    grep -q "could not be run: Permission denied" "$RUNS/art-noexec.log"
finish
