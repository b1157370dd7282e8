# shellcheck shell=bash
# tests/e2e/validate-stages.sh — what `testyard validate` prints for a
# composition with stages and run.ready (a plan group and a program
# group, on both runners), and the one line it prints for a stage list
# it refuses.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

f=$(composition stages <<'EOF2'
global:
  plan: placebo
  case: ok
  runner: local:exec
  run: {ready: {tcp: 7000}}
  run_config:
    stages:
      - {name: warm, duration: 30s}
      - {restart: node, grace: 2s}
      - {name: load-1, rounds: 3}
      - {pause: prog}
      - {name: paused, duration: 5s}
      - {unpause: prog}
      - {stop: prog}
      - {name: tail, duration: 1m}
groups:
  - id: node
    instances: {count: 2}
  - id: prog
    instances: {count: 1}
    run: {command: /bin/true, ready: {command: [/bin/true, -q], timeout: 5s}}
EOF2
)

for runner in local:exec local:docker; do
    "$TY" validate --plans plans --runner "$runner" "$f" >"$RUNS/out" \
        2>"$RUNS/err"
    check_eq "$runner: validate exits 0" "$?" 0
    check_eq "$runner: the stages in order" \
        "$(jq -c '.stages[]' "$RUNS/out")" \
        '{"stage":"warm","duration_ns":30000000000,"rounds":null}
{"action":"restart","group":"node","grace_ns":2000000000}
{"stage":"load-1","duration_ns":null,"rounds":3}
{"action":"pause","group":"prog","grace_ns":null}
{"stage":"paused","duration_ns":5000000000,"rounds":null}
{"action":"unpause","group":"prog","grace_ns":null}
{"action":"stop","group":"prog","grace_ns":10000000000}
{"stage":"tail","duration_ns":60000000000,"rounds":null}'
    check_eq "$runner: the plan group's ready is global.run's" \
        "$(jq -c '.groups[0].ready' "$RUNS/out")" \
        '{"tcp":7000,"command":null,"interval_ns":100000000,"timeout_ns":60000000000}'
    check_eq "$runner: the program group's own ready" \
        "$(jq -c '.groups[1].ready' "$RUNS/out")" \
        '{"tcp":null,"command":["/bin/true","-q"],"interval_ns":100000000,"timeout_ns":5000000000}'
    check "$runner: nothing on stderr" [ ! -s "$RUNS/err" ]
done

# The ids of the groups a refusal names are the composition's.
sed 's/{unpause: prog}/{unpause: node}/' "$f" >"$RUNS/bad.yaml"
"$TY" validate --plans plans "$RUNS/bad.yaml" >"$RUNS/out" 2>"$RUNS/err"
check_eq "unpause of a running group: exit 65" "$?" 65
check_eq "unpause of a running group: one line" "$(cat "$RUNS/err")" \
    "testyard: $RUNS/bad.yaml:13:19: global.run_config.stages[5].unpause: expected a paused group; \"node\" is not paused (pause it first)"
check "unpause of a running group: nothing on stdout" [ ! -s "$RUNS/out" ]
finish
