# shellcheck shell=bash
# tests/docker/sync-auth.sh — a container of another run cannot join a
# run's sync service: while run A (placebo barriers) runs, run B, started
# beside it, has a container (tests/docker/intruder) say hello to A's
# endpoint as A's instance 0 with B's own secret and then report a
# failure. A's service answers `denied`, logs the refusal with the
# peer's address, and A succeeds.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "another run's container against the sync service"

mkdir -p "$RUNS/plans"
cp -R tests/docker/intruder "$RUNS/plans/"

fa=$(composition victim <<'EOF2'
global: {plan: placebo, case: barrier, runner: local:docker,
         run: {test_params: {rounds: 12, round_time: 2s}},
         run_config: {timeout: 3m}}
groups: [{id: g, instances: {count: 2}}]
EOF2
)
"$TY" run --plans plans --runs "$RUNS" --run-id auth-victim --no-progress \
    "$fa" >"$RUNS/auth-victim.log" 2>&1 &
victim=$!

# A's endpoint, as its containers got it.
url=""
for _ in $(seq 1 240); do
    cid=$(container_of_run auth-victim)
    if [ -n "$cid" ]; then
        url=$(docker_api "/containers/$cid/json" |
            jq -r '.Config.Env[] | select(startswith("TESTYARD_SYNC_URL=")) |
                sub("^TESTYARD_SYNC_URL="; "")' 2>/dev/null)
        [ -n "$url" ] && break
    fi
    sleep 0.25
done
check "the victim run's containers are up (endpoint ${url:-none})" [ -n "$url" ]

fb=$(composition intruder <<EOF2
global: {plan: intruder, case: intrude, runner: local:docker,
         run: {test_params: {target_url: "$url", target_run: auth-victim}},
         run_config: {timeout: 2m}}
groups: [{id: x, instances: {count: 1}}]
EOF2
)
"$TY" run --plans "$RUNS/plans" --runs "$RUNS" --run-id auth-intruder \
    --no-progress "$fb" >"$RUNS/auth-intruder.log" 2>&1
rcb=$?
wait "$victim"
rca=$?

check_eq "the intruding run: its hello was denied (exit 0)" "$rcb" 0
check "what it was told is the generic refusal" \
    grep -q "denied: say hello with the run's secret first" \
    "$RUNS/auth-intruder/x/0/run.out"
check_eq "the victim run succeeds (exit 0)" "$rca" 0
check_eq "with 2 successes" "$(result auth-victim '.groups[0].outcomes.success')" 2
check "the victim's coordinator logged the refusal with the peer's address" \
    grep -q "sync service: refused a client at [0-9a-f.:]*: hello with a wrong secret" \
    "$RUNS/auth-victim.log"
[ "$rca" = 0 ] || show_log auth-victim
[ "$rcb" = 0 ] || show_log auth-intruder

finish
