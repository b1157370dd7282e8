# tests/e2e/memory-stress.sh — the memory-stress plan on local:exec: every
# block reaches every requestor verified, a corrupted block is caught, the
# responder's memory budget bounds the provider, round and detailed
# snapshots appear, the deliberate leak shows in the heap profiles,
# round_timeout ends a round that cannot finish, a run with two providers
# fails at start, and a dead provider is named at once.
#
#   MS_SAN=path/to/sanitizer/testyard  also runs a small composition with
#   plans built under ASan+UBSan (default build/san/testyard when built)
# shellcheck shell=bash
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

# ms NAME GROUPS-YAML PARAMS-YAML — a memory-stress composition on
# local:exec; params are "key: value" lines.
ms() {
    composition "$1" <<EOF2
metadata: {name: $1}
global:
  plan: memory-stress
  case: stress
  runner: local:exec
  run:
    test_params:
$(printf '%s\n' "$3" | sed 's/^/      /')
  run_config: {timeout: 2m}
groups:
$2
EOF2
}

one_each='  - {id: providers, instances: {count: 1}}
  - {id: requestors, instances: {count: 1}}'

# between V LO HI — LO < V < HI.
between() {
    [ "${1:-0}" -gt "$2" ] && [ "${1:-0}" -lt "$3" ]
}

# last_count RUN GROUP INDEX NAME — the last value of a counter.
last_count() {
    jq -s --arg n "$4" '[.[] | select(.type == "counter" and .name == $n)]
        | last | .measures.count // 0' "$RUNS/$1/$2/$3/results.out" 2>/dev/null
}

# point RUN GROUP INDEX NAME — a point's value.
point() {
    jq -s --arg n "$4" '[.[] | select(.type == "point" and .name == $n)]
        | last | .measures.value // 0' "$RUNS/$1/$2/$3/results.out" 2>/dev/null
}

# ---- a small run: 2 requestors, 2 files of 8MB, 2 rounds, simple snapshots

f=$(ms small "  - {id: providers, instances: {count: 1}}
  - {id: requestors, instances: {count: 2}}" "size: 8MB
concurrency: 2
chunk_size: 16
links_per_level: 16
raw_leaves: false
rounds: 2
memory_snapshots: simple")
rc=$(run_comp small "$f")
check_eq "small: exit 0" "$rc" 0
check_eq "small: 3 successes" \
    "$(result small '[.instances[] | select(.outcome == "success")] | length')" 3
made=$(last_count small providers 0 blocks_made)
check "small: the provider made blocks ($made)" [ "${made:-0}" -gt 500 ]
for i in 0 1; do
    check_eq "small: requestors/$i verified every block" \
        "$(last_count small requestors $i blocks_verified)" "$made"
done
check_eq "small: the provider sent every block to both" \
    "$(last_count small providers 0 blocks_sent)" "$((made * 2))"
tags='round=2,size=8MB,latency=0,bandwidth=0'
sent=$(last_count small providers 0 "bytes_sent,$tags")
check "small: round 2's bytes sent, tagged with its sweep point ($sent)" \
    [ "${sent:-0}" -gt 16000000 ]
check_eq "small: ... are what each requestor received" \
    "$(last_count small requestors 0 "bytes_received,$tags")" "$((sent / 2))"
check "small: round durations recorded" \
    [ "$(point small requestors 1 'round_duration_seconds,round=1,size=8MB,latency=0,bandwidth=0')" != 0 ]
missing=0
for d in providers/0 requestors/0 requestors/1; do
    for n in 1 2; do
        for w in pre post; do
            [ -s "$RUNS/small/$d/heap-round-$n-$w-trim.pb.gz" ] || missing=$((missing + 1))
        done
    done
done
check_eq "small: round-N-pre/post-trim heap files in every instance folder" \
    "$missing" 0
missing=0
for d in providers/0 requestors/0 requestors/1; do
    for n in 1 2; do
        [ -s "$RUNS/small/$d/heap-round-$n-peak.pb.gz" ] || missing=$((missing + 1))
    done
done
check_eq "small: a round-N-peak heap profile per round in every instance folder" \
    "$missing" 0
peak_site() { # GROUP N — the function of the group's Nth site at the peak
    jq -r --arg g "$1" --argjson n "$2" '.groups[] | select(.id == $g)
        | .peak_sites.sites[$n].function' "$RUNS/small/summary.json" 2>/dev/null
}
check_eq "small: the report names the store's block allocation first at the requestors' peak" \
    "$(peak_site requestors 0)" ms_store_block_new
# The provider holds 16MB of blocks and up to 16Mi of queued frames per
# requestor: at its peak either may be the larger, the two lead.
check_eq "small: the store's blocks and the response queue are the provider's two sites at its peak" \
    "$( (peak_site providers 0; peak_site providers 1) | sort | tr '\n' ' ')" \
    "ms_store_block_new response_queue_block "
check_eq "small: next, ready, fetched, finish for both rounds, then done" \
    "$(jq -r 'select(.result == "released") | .state' "$RUNS/small/barriers.jsonl" 2>/dev/null | tr '\n' ' ')" \
    "next-1 ready-1 fetched-1 finish-1 next-2 ready-2 fetched-2 finish-2 done "
[ "$rc" = 0 ] || show_log small

# ---- a corrupted block fails the requestor, naming the block

f=$(ms corrupt "$one_each" "size: 4MB
chunk_size: 16
rounds: 1
corrupt_block: 20")
rc=$(run_comp corrupt "$f")
check_eq "corrupt_block: exit 1" "$rc" 1
check_eq "corrupt_block: the requestor failed" \
    "$(result corrupt '.instances[1].outcome')" failure
check "corrupt_block: its error is a hash mismatch naming the block" \
    [ "$(result corrupt '.instances[1].error | test("^hash mismatch: block [0-9a-f]{64} \\(#[0-9]+ of root 0, round 1\\) hashes to [0-9a-f]{64}")')" = true ]
check "corrupt_block: the provider said which block it flipped" \
    grep -q 'corrupt_block: flipped byte' "$RUNS/corrupt/providers/0/run.out"
[ "$rc" = 1 ] || show_log corrupt

# ---- the memory budget bounds what the responder queues

budget() { # NAME MAX_MEMORY_TOTAL
    ms "$1" "  - {id: providers, instances: {count: 1}, resources: {memory: 1Gi}}
  - {id: requestors, instances: {count: 1}, resources: {memory: 1Gi}}" \
        "size: 64MB
chunk_size: 18
rounds: 1
bandwidths: [64MiB]
unlimited_bandwidth_case: false
max_memory_per_peer: 0
max_memory_total: $2"
}
qname='queue_peak_bytes,round=1,size=64MB,latency=0,bandwidth=64MiB'
rc_free=$(run_comp unbounded "$(budget unbounded 0)")
rc_tight=$(run_comp bounded "$(budget bounded 2Mi)")
check_eq "budget: both runs pass" "$rc_free $rc_tight" "0 0"
q_free=$(point unbounded providers 0 "$qname")
q_tight=$(point bounded providers 0 "$qname")
check "budget: without one the responder queued tens of MB ($q_free)" \
    [ "${q_free%.*}" -gt 20000000 ]
check "budget: with 2Mi it queued at most 2Mi ($q_tight)" \
    [ "${q_tight%.*}" -le 2097152 ]
if can_limit_memory; then
    p_free=$(result unbounded '.instances[0].memory.peak_bytes')
    p_tight=$(result bounded '.instances[0].memory.peak_bytes')
    check "budget: the provider's peak is 20MB+ lower with it ($p_tight vs $p_free)" \
        [ $((p_free - p_tight)) -gt 20000000 ]
    check "budget: bounded peak within the 64MB store + 24Mi ($p_tight)" \
        [ "$p_tight" -lt $((64000000 + 25165824)) ]
else
    skip "budget: provider peak memory compared" "no memory cgroups here (needs root)"
fi

# ---- the deliberate leak grows the heap by leak_per_round, and is named

f=$(ms leak "$one_each" "size: 4MB
chunk_size: 16
rounds: 4
leak_per_round: 16Mi
memory_snapshots: simple")
rc=$(run_comp leak "$f")
check_eq "leak: exit 0" "$rc" 0
first=$(jq .profile.inuse_bytes "$RUNS/leak/providers/0/heap-round-1-post-trim.json" 2>/dev/null)
last=$(jq .profile.inuse_bytes "$RUNS/leak/providers/0/heap-round-4-post-trim.json" 2>/dev/null)
growth=$(((${last:-0} - ${first:-0}) / 3))
check "leak: post-trim heap grows ~16Mi per round ($growth bytes)" \
    between "$growth" 12582912 20971520
check "leak: the heap profile names leak_round_buffers" \
    sh -c "zcat '$RUNS/leak/providers/0/heap-round-4-post-trim.pb.gz' | grep -aq leak_round_buffers"
req=$(jq .profile.inuse_bytes "$RUNS/leak/requestors/0/heap-round-4-post-trim.json" 2>/dev/null)
check "leak: the requestor stays flat (${req:-?} bytes in use)" \
    [ "${req:-99999999}" -lt 8388608 ]

# ---- detailed snapshots: one every memory_snapshot_every blocks

f=$(ms detailed "$one_each" "size: 2MB
chunk_size: 16
rounds: 1
memory_snapshots: detailed
memory_snapshot_every: 8")
rc=$(run_comp detailed "$f")
check_eq "detailed: exit 0" "$rc" 0
blocks=$(last_count detailed requestors 0 blocks_verified)
for d in providers requestors; do
    ev=("$RUNS/detailed/$d/0/"heap-event-*.pb.gz)
    check_eq "detailed: $d took a snapshot every 8 of $blocks blocks" \
        "${#ev[@]}" "$((blocks / 8))"
done

# ---- round_timeout ends a round that cannot finish in time

f=$(ms slow "$one_each" "size: 4MB
chunk_size: 16
rounds: 1
bandwidths: [100KiB]
unlimited_bandwidth_case: false
round_timeout: 2s")
start=$(date +%s%N)
rc=$(run_comp slow "$f")
took_ms=$((($(date +%s%N) - start) / 1000000))
check_eq "round_timeout: exit 1" "$rc" 1
# Whichever deadline fires first, the other instance then sees it go.
check_eq "round_timeout: both instances failed" \
    "$(result slow '[.instances[] | select(.outcome == "failure")] | length')" 2
check "round_timeout: the first failure is the deadline" \
    [ "$(result slow '[.instances[].error | test("deadline passed|timed out")] | any')" = true ]
check "round_timeout: over within 10 s of a 2 s deadline (${took_ms} ms)" \
    [ "$took_ms" -lt 10000 ]

# ---- more than one provider fails at start, saying why

f=$(ms twoprov "  - {id: providers, instances: {count: 2}}
  - {id: requestors, instances: {count: 1}}" "size: 1MB")
rc=$(run_comp twoprov "$f")
check_eq "two providers: exit 1" "$rc" 1
check_eq "two providers: every instance says why" \
    "$(result twoprov '[.instances[] | select(.error // "" | test("the run has 2 providers"))] | length')" 3

f=$(ms badgroup "  - {id: providers, instances: {count: 1}}
  - {id: fetchers, instances: {count: 1}}" "size: 1MB")
"$TY" validate --plans plans "$f" >/dev/null 2>"$RUNS/badgroup.err"
check_eq "an unknown group is a composition error (exit 65)" "$?" 65
check "... naming the case's groups" \
    grep -q 'providers, requestors' "$RUNS/badgroup.err"

# ---- a dead provider is named at once: in a barrier, and mid-transfer

if can_limit_memory; then
    f=$(ms oombuild "  - {id: providers, instances: {count: 1}, resources: {memory: 64Mi}}
  - {id: requestors, instances: {count: 1}}" "size: 256MB
chunk_size: 18")
    rc=$(run_comp oombuild "$f")
    check_eq "oom while building: exit 1" "$rc" 1
    check_eq "oom while building: the provider's outcome" \
        "$(result oombuild '.instances[0].outcome')" oom
    check "oom while building: the requestor's barrier names it" \
        [ "$(result oombuild '.instances[1].error | test("^ready-1: providers/0 exited with status 137 \\(oom\\)")')" = true ]

    # The responder's budgets off: it queues copies of a 256MB file far
    # faster than 32MiB/s drains them, and dies mid-transfer.
    f=$(ms oomxfer "  - {id: providers, instances: {count: 1}, resources: {memory: 384Mi}}
  - {id: requestors, instances: {count: 1}, resources: {memory: 384Mi}}" "size: 256MB
chunk_size: 18
raw_leaves: false
bandwidths: [32MiB]
unlimited_bandwidth_case: false
rounds: 2
max_memory_per_peer: 0
max_memory_total: 0")
    rc=$(run_comp oomxfer "$f")
    check_eq "oom mid-transfer (an unbounded response queue): exit 1" "$rc" 1
    check_eq "oom mid-transfer: the provider's outcome" \
        "$(result oomxfer '.instances[0].outcome')" oom
    check "oom mid-transfer: the requestor names it and the lost connection" \
        [ "$(result oomxfer '.instances[1].error | test("providers/0 exited with status 137 \\(oom\\).*root 0: reading .*from the provider")')" = true ]
    gap=$(( $(date -d "$(result oomxfer '.instances[1].ended')" +%s%3N) -
        $(date -d "$(result oomxfer '.instances[0].ended')" +%s%3N) ))
    check "oom mid-transfer: the requestor ended within 3 s ($gap ms)" \
        [ "$gap" -lt 3000 ]
    [ "$rc" = 1 ] || show_log oomxfer
else
    skip "a provider OOM-killed is named at once" "no memory cgroups here (needs root)"
fi

# ---- under ASan and UBSan

san=${MS_SAN:-build/san/testyard}
if [ -x "$san" ]; then
    f=$(ms san "  - {id: providers, instances: {count: 1}}
  - {id: requestors, instances: {count: 2}}" "size: 2MB
concurrency: 2
chunk_size: 14
links_per_level: 8
raw_leaves: false
rounds: 2
memory_snapshots: detailed
memory_snapshot_every: 50")
    rc=$(TY=$san run_comp san "$f")
    check_eq "sanitizers ($san): exit 0" "$rc" 0
    check "sanitizers: nothing reported" \
        sh -c "! grep -l -E 'AddressSanitizer|LeakSanitizer|runtime error' '$RUNS'/san/*/*/run.err"
    [ "$rc" = 0 ] || show_log san
else
    skip "memory-stress under sanitizers" "no sanitizer build at $san (make SAN=1)"
fi

finish
