# shellcheck shell=bash
# tests/docker/run-basic.sh — compositions on local:docker: the placebo and
# ping compositions pass, outcomes are told apart as on local:exec, and
# no container or network of a run is left afterwards.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "local:docker runs"

rc=$(run_comp placebo compositions/placebo.yaml)
check_eq "placebo.yaml on docker: exit 0" "$rc" 0
check_eq "placebo.yaml: 3 successes" \
    "$(result placebo '.groups[0].outcomes.success')" 3
check "placebo.yaml: run.out copied from the container" \
    grep -q '"type":"success"' "$RUNS/placebo/single/0/run.out"
check "placebo.yaml: memory.csv sampled from the container's cgroup" \
    [ "$(wc -l <"$RUNS/placebo/single/0/memory.csv")" -gt 1 ]
check_eq "placebo.yaml: no container left" "$(containers_of_run placebo)" 0
[ "$rc" = 0 ] || show_log placebo

rc=$(run_comp ping compositions/ping.yaml)
check_eq "ping.yaml on docker: exit 0" "$rc" 0
check_eq "ping.yaml: 4 successes" \
    "$(result ping '[.instances[] | select(.outcome == "success")] | length')" 4
check "ping.yaml: round trip times in results.out" \
    grep -q rtt_seconds "$RUNS/ping/west/1/results.out"
check "ping.yaml: no round trip on the bridge waits out a delayed ACK (< 20 ms)" \
    json_true <(cat "$RUNS"/ping/*/*/results.out | jq -s .) \
    '[.[] | select(.name | startswith("rtt_seconds")) | .measures.max]
        | length > 0 and max < 0.02'
check_eq "ping.yaml: containers read their releases from the board" \
    "$(jq -s '[.[] | select(.result == "released" and .waiters > 0 and
        .on_board == .waiters)] | length > 0 and
        all(.[] | select(.result == "released" and .waiters != null);
            .on_board == .waiters)' "$RUNS/ping/barriers.jsonl" 2>/dev/null)" true
[ "$rc" = 0 ] || show_log ping

# The default runs folder is relative ("runs"): bind mounts need it
# made absolute.
top=$(pwd)
(cd "$RUNS" && "$top/$TY" run --plans "$top/plans" --runs rel --run-id rel \
    --no-progress "$top/compositions/placebo.yaml" >"$RUNS/rel.log" 2>&1)
check_eq "a relative runs folder works on docker" "$?" 0
check "and the outputs land in it" [ -s "$RUNS/rel/rel/single/0/run.out" ]

tag=$(result placebo .image)
image_exists() { docker_api "/images/$1/json" >/dev/null; }
check "result.json names the plan's image ($tag)" image_exists "$tag"
f=$(composition artifact <<EOF2
global: {plan: placebo, case: ok, runner: local:docker}
groups: [{id: ready, instances: {count: 2}, run: {artifact: "$tag"}}]
EOF2
)
rc=$(run_comp artifact "$f")
check_eq "a group naming a ready image ($tag) runs it" "$rc" 0
check_eq "run.artifact: the containers used that image" \
    "$(jq -r '.groups[0].artifact' "$RUNS/artifact/composition.json")" "$tag"
[ "$rc" = 0 ] || show_log artifact

f=$(composition crash <<'EOF2'
global: {plan: placebo, case: barrier, runner: local:docker,
         run: {test_params: {rounds: 4, crash_at_round: 2, crash_instance: 1}},
         run_config: {timeout: 2m}}
groups: [{id: g, instances: {count: 4}}]
EOF2
)
rc=$(run_comp crash "$f")
check_eq "crash mid-barrier on docker: exit 1" "$rc" 1
check_eq "the crashed container is a crash" "$(result crash '.instances[1].outcome')" crash
check_eq "the others failed naming it" \
    "$(result crash '[.instances[] | select(.error // "" | test("g/1 exited with status 139"))] | length')" 3
crash_end=$(result crash '.instances[1].ended')
last_end=$(result crash '[.instances[].ended] | max')
gap=$(( $(date -d "$last_end" +%s%3N) - $(date -d "$crash_end" +%s%3N) ))
check "the others ended within 2 s of the crash (${gap} ms)" [ "$gap" -lt 2000 ]
[ "$rc" = 1 ] || show_log crash

f=$(composition bridge <<'EOF2'
global: {plan: ping, case: ping, runner: local:docker,
         run: {test_params: {rounds: 2}},
         run_config: {timeout: 2m, network: bridge}}
groups: [{id: a, instances: {count: 1}}, {id: b, instances: {count: 1}}]
EOF2
)
rc=$(run_comp bridge "$f")
check_eq "ping on a per-run bridge network: exit 0" "$rc" 0
check_eq "bridge: no network left" "$(networks_of_run bridge)" 0
[ "$rc" = 0 ] || show_log bridge

finish
