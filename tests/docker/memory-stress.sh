# tests/docker/memory-stress.sh — the memory-stress compositions on
# local:docker: memory-stress.yaml passes within its limits (by default a
# 64MB variant of it, to stay quick; MEMORY_STRESS_FULL=1 runs the file as
# it is, 512MB per round, and checks it ends within two minutes) and its
# report names the block store's allocation site at both groups' peaks
# and the response queue at the provider's; a small run works on a bridge
# network; and memory-stress-oom.yaml reports the provider's OOM kill, a
# requestor failure that names it within seconds of the kill, and what
# filled the provider: a profile taken shortly before the kill naming the
# block store.
# shellcheck shell=bash
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh
# shellcheck source=tests/helpers/growth.sh
. tests/helpers/growth.sh

need_docker "memory-stress on local:docker"

if [ "${MEMORY_STRESS_FULL:-0}" = 1 ]; then
    f=compositions/memory-stress.yaml
    size=512MB
else
    size=64MB
    f=$(sed "s/size: 512MB/size: $size/" compositions/memory-stress.yaml |
        composition stress)
fi

below() { # V LIMIT — 0 < V < LIMIT
    [ "${1:-0}" -gt 0 ] && [ "${1:-0}" -lt "${2:-0}" ]
}

last_count() { # GROUP NAME
    jq -s --arg n "$2" '[.[] | select(.type == "counter" and .name == $n)]
        | last | .measures.count // 0' "$RUNS/stress/$1/0/results.out" 2>/dev/null
}

start=$(date +%s)
rc=$(run_comp stress "$f")
took=$(($(date +%s) - start))
check_eq "memory-stress.yaml ($size): exit 0" "$rc" 0
check_eq "both instances succeeded" \
    "$(result stress '[.instances[] | select(.outcome == "success")] | length')" 2
made=$(last_count providers blocks_made)
check "the provider made blocks for 4 rounds ($made)" [ "${made:-0}" -gt 4 ]
check_eq "the requestor verified every one" \
    "$(last_count requestors blocks_verified)" "$made"
check "the rounds are tagged with the sweep point" \
    grep -q "round_duration_seconds,round=4,size=$size,latency=50ms,bandwidth=128MiB" \
    "$RUNS/stress/requestors/0/results.out"
snaps=("$RUNS"/stress/*/0/heap-round-[1-4]-p*-trim.pb.gz)
check_eq "pre- and post-trim heap profiles for 4 rounds × 2 instances" \
    "${#snaps[@]}" 16
snaps=("$RUNS"/stress/*/0/heap-round-[1-4]-peak.pb.gz)
check_eq "a round-N-peak heap profile for 4 rounds × 2 instances" \
    "${#snaps[@]}" 8
peak() { # GROUP FILTER — of the group's peak_sites in summary.json
    jq -r --arg g "$1" ".groups[] | select(.id == \$g) | .peak_sites | $2" \
        "$RUNS/stress/summary.json" 2>/dev/null
}
bytes=${size%MB}000000
for g in providers requestors; do
    check_eq "the report names the store's allocation site first at the $g' peak" \
        "$(peak $g '.sites[0].function')" ms_store_block_new
    snap=$(peak $g .snapshot)
    # round-N-peak, taken while the blocks are live, or the high-water
    # mark's own (peak) when the queues held more at another moment
    check "... from a profile at the peak (${snap:-none})" \
        grep -Eq '^(round-[1-4]-)?peak$' <<<"$snap"
    held=$(peak $g '.sites[0].inuse_bytes')
    check "... holding most of the round's $size (${held:-?} bytes)" \
        [ "${held:-0}" -gt $((bytes * 8 / 10)) ]
done
check_eq "the response queue is the provider's next site at its peak" \
    "$(peak providers '.sites[1].function')" response_queue_block
check "the report's table shows the sites at the peak" \
    grep -Eq "^  providers \((round-[1-4]-)?peak\):" "$RUNS/stress.log"
for i in 0 1; do
    peak=$(result stress ".instances[$i].memory.peak_bytes")
    limit=$(result stress ".instances[$i].memory.limit_bytes")
    check "instance $i peaked below its limit (${peak:-?} of ${limit:-?})" \
        below "$peak" "$limit"
done
if [ "$size" = 512MB ]; then
    check "memory-stress.yaml ran within two minutes (${took}s)" [ "$took" -lt 120 ]
fi
check_eq "no container left" "$(containers_of_run stress)" 0
[ "$rc" = 0 ] || show_log stress

f=$(composition bridge <<'EOF2'
global:
  plan: memory-stress
  case: stress
  runner: local:docker
  run: {test_params: {size: 4MB, chunk_size: 16, concurrency: 2, rounds: 1}}
  run_config: {timeout: 2m, network: bridge}
groups:
  - {id: providers, instances: {count: 1}}
  - {id: requestors, instances: {count: 2}}
EOF2
)
rc=$(run_comp bridge "$f")
check_eq "on a per-run bridge network the requestors reach the provider" \
    "$rc" 0
[ "$rc" = 0 ] || show_log bridge

rc=$(run_comp oom compositions/memory-stress-oom.yaml)
check_eq "memory-stress-oom.yaml: exit 1" "$rc" 1
check_eq "the provider was OOM-killed" "$(result oom '.instances[0].outcome')" oom
check_eq "... as the kernel says" "$(result oom '.instances[0].memory.oom_kill')" true
check_eq "the requestor failed" "$(result oom '.instances[1].outcome')" failure
check "its error names the provider and how it ended" \
    [ "$(result oom '.instances[1].error | test("providers/0 exited with status 137 \\(oom\\)")')" = true ]
gap=$(( $(date -d "$(result oom '.instances[1].ended')" +%s%3N) -
    $(date -d "$(result oom '.instances[0].ended')" +%s%3N) ))
check "the requestor ended within 3 s of the kill ($gap ms)" [ "$gap" -lt 3000 ]
check "the file (512MB) is larger than the provider's limit" \
    [ "$(result oom '.instances[0].memory.limit_bytes')" -lt 512000000 ]
check_oom_answer "memory-stress-oom.yaml" oom providers/0 ms_store_block_new
check_eq "no container left" "$(containers_of_run oom)" 0
[ "$rc" = 1 ] || show_log oom

finish
