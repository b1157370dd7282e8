# shellcheck shell=bash
# tests/docker/run-files.sh — a container cannot make the coordinator
# (root on the host) write, truncate or read host files through links it
# plants in /outputs: run.out and run.err, memory.csv.partial and
# memory.csv, a linked folder for an upload and an append, a heap sidecar
# linked to a host file for the report. And disk use is bounded: a 500 MB
# stdout leaves a run.out of the head and the tail with a marker, the
# engine's own log is capped to match, an upload over the output quota is
# refused. The plan is tests/docker/hostile_plan.c.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "local:docker file safety"

hostile_plan

# ---- links planted in /outputs --------------------------------------------

plant files-plant local:docker 2m
out="$RUNS/files-plant/h/0"
check "plant: the append through it too" \
    grep -q "^append sub/app.out: -5 .*symbolic link" "$out/run.out"
check "plant: an upload may not name memory.csv" \
    grep -q "^upload memory.csv: -22 .*written by the runner" "$out/run.out"
check "plant: nor an append memory.csv.partial" \
    grep -q "^append memory.csv.partial: -22 .*written by the runner" "$out/run.out"
check "plant: memory.csv is the runner's file" regular "$out/memory.csv"
check "plant: memory.csv has its header" grep -q "^time,t_ms" "$out/memory.csv"
check "plant: nothing is left in .runner" [ ! -e "$RUNS/files-plant/.runner" ]

# The report reads instance files without following links: a sidecar
# planted as a link to a host file is not read into report.html.
ln -s /etc/shadow "$VICTIM/shadow-link"
ln -s "$VICTIM/shadow-link" "$out/heap-evil.json"
ln -s "$VICTIM/csv" "$out/heap-evil.pb.gz"
"$TY" report "$RUNS/files-plant" >"$RUNS/report.log" 2>&1
check "report: written despite the planted links" [ -f "$RUNS/files-plant/report.html" ]
check "report: says it skipped the link" grep -q "heap-evil.json.*link" "$RUNS/report.log"
check "report: the host file is not in report.html" not_grep "host csv" "$RUNS/files-plant/report.html"

# collect: links pointing out of the run are not archived, none is
# followed.
ln -s /etc "$out/etc-link"
"$TY" collect "$RUNS/files-plant" -o "$RUNS/plant.tgz" >"$RUNS/collect.log" 2>&1
check "collect: the archive is written" [ -s "$RUNS/plant.tgz" ]
check "collect: no link in the archive" \
    sh -c "! tar -tvzf '$RUNS/plant.tgz' | grep -q '^l'"
check "collect: nothing from /etc in it" \
    sh -c "! tar -tzf '$RUNS/plant.tgz' | grep -q 'passwd'"
check "collect: says which links it left out" grep -q "etc-link" "$RUNS/collect.log"

# ---- a 500 MB stdout ---------------------------------------------------------
# In lines of 1 KiB: the engine's json-file log, which every line of a
# container passes through, takes about 30 s for 500 MB in 64-byte lines
# and 9 s in 1 KiB ones here.

f=$(composition flood <<'EOF2'
global:
  plan: hostile
  case: flood
  runner: local:docker
  run:
    test_params: {flood: 500MB, line: 1024}
  run_config: {timeout: 2m, keep_containers: true}
groups:
  - id: f
    instances: {count: 1}
    run: {log_limit: 8Mi}
EOF2
)
start=$(date +%s.%N)
rc=$(run_hostile files-flood "$f")
took=$(echo "$(date +%s.%N) - $start" | bc)
echo "# 500 MB stdout on local:docker took ${took}s"
out="$RUNS/files-flood/f/0"
size=$(stat -c %s "$out/run.out" 2>/dev/null || echo 0)
check_eq "flood: the run succeeds" "$rc" 0
check_eq "flood: outcome success" "$(result files-flood '.instances[0].outcome')" success
check "flood: run.out is bounded by the limit ($size bytes)" \
    between "$size" 1 $((8 * 1048576 + 200))
check "flood: run.out has the head" sh -c "head -c 4096 '$out/run.out' | grep -q '^FIRST LINE$'"
check "flood: and the tail" sh -c "tail -c 4096 '$out/run.out' | grep -q '^LAST LINE$'"
cut=$(sed -n 's/^\[testyard: \([0-9]*\) bytes of stdout cut here.*/\1/p' "$out/run.out")
check "flood: the marker says how much was cut (${cut:-none})" \
    between "${cut:-0}" 480000000 500000000
check_eq "flood: one marker" "$(grep -c '^\[testyard: ' "$out/run.out")" 1
check_eq "flood: run.err is whole" "$(cat "$out/run.err")" "stderr FIRST
stderr LAST"
id=$(container_of_run files-flood all)
lc=$(docker_api "/containers/$id/json" | jq -c '.HostConfig.LogConfig')
check_eq "flood: the engine's log is capped too" "$lc" \
    '{"Type":"json-file","Config":{"max-file":"2","max-size":"8388608"}}'
logpath=$(docker_api "/containers/$id/json" | jq -r '.LogPath')
if [ -e "$logpath" ]; then
    total=$(cat "$logpath"* | wc -c)
    check "flood: the engine kept at most its two files ($total bytes)" \
        [ "$total" -le $((2 * 8388608 + 65536)) ]
fi
[ "$rc" = 0 ] || show_log files-flood
"$TY" clean --run files-flood >"$RUNS/clean.log" 2>&1

# ---- an upload over the quota --------------------------------------------------

f=$(composition quota <<'EOF2'
global:
  plan: hostile
  case: quota
  runner: local:docker
  run:
    test_params: {upload: 2Mi}
    output_quota: 1Mi
  run_config: {timeout: 2m}
groups:
  - id: q
    instances: {count: 1}
EOF2
)
rc=$(run_hostile files-quota "$f")
out="$RUNS/files-quota/q/0"
check_eq "quota: the plan saw its upload refused and succeeded" "$rc" 0
check "quota: the instance was told why" \
    grep -q "^upload big.bin: -28 .*output quota of 1048576 bytes (run.output_quota)" "$out/run.err"
check "quota: nothing was written" [ ! -e "$out/big.bin" ]
[ "$rc" = 0 ] || show_log files-quota

finish
