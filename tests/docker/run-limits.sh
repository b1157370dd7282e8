# shellcheck shell=bash
# tests/docker/run-limits.sh — resource limits are real on local:docker:
# an instance that allocates past `memory: 64Mi` is OOM-killed and
# reported as oom; the container's limits read back as 64 MiB with no swap
# and the CPU quota asked for.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "local:docker limits"

f=$(composition oom <<'EOF2'
global:
  plan: placebo
  case: oom
  runner: local:docker
  run_config: {timeout: 2m, keep_containers: true}
groups:
  - id: hog
    instances: {count: 1}
    resources: {memory: 64Mi, cpu: 500m}
EOF2
)
rc=$(run_comp oom "$f")
check_eq "oom: exit status 1" "$rc" 1
check_eq "oom: outcome oom" "$(result oom '.instances[0].outcome')" oom
check_eq "oom: oom_killed" "$(result oom '.instances[0].oom_killed')" true
peak=$(result oom '.instances[0].memory.peak_bytes')
check "oom: peak near the limit ($peak)" [ "${peak:-0}" -gt 50000000 ]
[ "$rc" = 1 ] || show_log oom

id=$(container_of_run oom all)
hc=$(docker_api "/containers/$id/json" | jq -c '.HostConfig | {Memory, MemorySwap, NanoCpus, PidsLimit}')
check_eq "limits read back on inspect" "$hc" \
    '{"Memory":67108864,"MemorySwap":67108864,"NanoCpus":500000000,"PidsLimit":4096}'
labels=$(docker_api "/containers/$id/json" | jq -c '.Config.Labels | {"testyard.run", "testyard.plan", "testyard.group", "testyard.index"}')
check_eq "labels on the container" "$labels" \
    '{"testyard.run":"oom","testyard.plan":"placebo","testyard.group":"hog","testyard.index":"0"}'

"$TY" clean --run oom >"$RUNS/clean.log" 2>&1
check_eq "clean --run removes the kept container" "$(containers_of_run oom)" 0

finish
