# shellcheck shell=bash
# tests/e2e/heap-servers.sh — the LD_PRELOAD heap profiler in programs
# shaped like servers (tests/e2e/server_prog.c):
#   - linked with another allocator (jemalloc, when its library is here):
#     the profiler forwards to it, so the allocator's own calls
#     (malloc_usable_size) see its blocks; the program runs to its end
#     and its profile names server_grab;
#   - writing its process title over its environment and changing folder
#     to /: the profile still goes where the environment said when it
#     started (TESTYARD_HEAP_DIR, or the folder it started in);
#   - Debian's redis-server (jemalloc, stripped, a process title), when
#     installed, filled by redis-cli until its 128 MiB limit kills it: the
#     pre-OOM snapshot is asked for by signal and taken, and the report's
#     OOM section names redis's allocation function.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

BUILD=${BUILD:-build}
lib=$PWD/$BUILD/libtestyard-heap.so
d=$RUNS/servers
mkdir -p "$d"
CFLAGS="-O1 -g -fno-omit-frame-pointer"

# has GLOB — some file matches GLOB.
has() {
    compgen -G "$1" >/dev/null
}
check "$lib exists (make tests)" test -f "$lib"
# shellcheck disable=SC2086 # flags
check "server_prog builds" cc $CFLAGS -o "$d/server_prog" tests/e2e/server_prog.c


# --- another allocator underneath ----------------------------------------
# shellcheck disable=SC2086 # flags
if cc $CFLAGS -o "$d/server_je" tests/e2e/server_prog.c -ljemalloc 2>/dev/null; then
    out=$d/je
    mkdir -p "$out"
    said=$(TESTYARD_HEAP_DIR=$out TESTYARD_HEAP_PEAK_STEP=off LD_PRELOAD=$lib \
        "$d/server_je" alloc 2>"$out/err")
    rc=$?
    check_eq "jemalloc: the program runs to its end under the profiler" "$rc" 0
    check "jemalloc: malloc_usable_size, jemalloc's, measured every block (${said:-nothing})" \
        test "${said#ok }" -ge $((128 * 65536)) 2>/dev/null
    check "jemalloc: its exit profile was written" \
        has "$out"/heap-server_je-*-exit.pb.gz
    check "jemalloc: the report's top site is server_grab" \
        grep -q '%  server_grab$' <<<"$(report_of "$out" server_je)"
else
    skip "a program linked with jemalloc" "no libjemalloc to link with"
fi

# --- a process title over the environment, another folder ----------------
out=$d/title
mkdir -p "$out"
said=$(TESTYARD_HEAP_DIR=$out TESTYARD_HEAP_PEAK_STEP=off LD_PRELOAD=$lib \
    "$d/server_prog" title 2>"$out/err")
check_eq "title: the program runs to its end" "${said%% *}" ok
check "title: the exit profile is in TESTYARD_HEAP_DIR as it was at the start" \
    has "$out"/heap-server_prog-*-exit.pb.gz
check "title: and names server_grab" \
    grep -q '%  server_grab$' <<<"$(report_of "$out" server_prog)"
out=$d/cwd
mkdir -p "$out"
(cd "$out" && env -u TESTYARD_HEAP_DIR -u TEST_OUTPUTS_PATH \
    TESTYARD_HEAP_PEAK_STEP=off LD_PRELOAD="$lib" "$d/server_prog" title \
    >/dev/null 2>"$out/err")
check "title: without a folder named, the profile is in the folder it started in" \
    has "$out"/heap-server_prog-*-exit.pb.gz
check "title: nothing went to /" \
    test -z "$(ls /heap-server_prog-* 2>/dev/null)"

# --- redis-server --------------------------------------------------------
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    skip "redis-server under the profiler" "redis-server or redis-cli is not installed"
    finish
    exit
fi
port=$((20000 + $$ % 20000))
f=$(composition redis <<YAML
metadata: {name: redis-oom}
global:
  runner: local:exec
  run_config: {timeout: 1m, memory_sample_interval: 20ms}
groups:
  - id: redis
    instances: {count: 1}
    resources: {memory: 128Mi}
    run:
      command: [redis-server]
      args: [--port, "$port", --bind, 127.0.0.1, --save, "", --appendonly, "no"]
      profiles: {heap: preload}
  - id: load
    instances: {count: 1}
    run:
      command: [/bin/sh, -c]
      args:
        - |
          n=0
          until redis-cli -p $port ping >/dev/null 2>&1; do
            n=\$((n+1)); [ \$n -lt 100 ] || exit 9; sleep 0.1
          done
          i=0
          while redis-cli -p $port eval "for j=1,4000 do redis.call('set', ARGV[1]..j, string.rep('x', 1024)) end" 0 k\$i >/dev/null 2>&1; do
            i=\$((i+1))
          done
          echo "redis went away after \$i batches"
YAML
)
if [ "$(id -u)" != 0 ]; then
    skip "redis-server under a 128 MiB limit" "needs root for the cgroup"
    finish
    exit
fi
rc=$(run_comp redis "$f")
check_eq "redis: the run fails (redis is OOM-killed)" "$rc" 1
res=$RUNS/redis/result.json
check_eq "redis: outcome oom" \
    "$(jq -r '.instances[] | select(.group == "redis") | .outcome' "$res")" oom
check_eq "redis: the pre-OOM snapshot was asked for by signal" \
    "$(jq -r '.instances[] | select(.group == "redis") | .memory.pre_oom.via' "$res")" signal
check "redis: its pre-OOM profile was taken" \
    has "$RUNS"/redis/redis/0/heap-redis-server-*-pre-oom.pb.gz
text=$("$TY" report "$RUNS/redis" 2>&1)
# (a peak snapshot may come after the pre-OOM one: then it is the last)
at=$(sed -n 's/.*last profile .* (redis-server-[0-9]*-\(pre-oom\|peak\)), at \([0-9]*\)\.[0-9] MiB of 128\.0 MiB limit$/\2/p' <<<"$text")
check "redis: the OOM section's last profile is the pre-OOM or a later peak one, near the limit (at ${at:-?} MiB)" \
    test "${at:-0}" -ge 100
check "redis: and names redis's allocation function (zmalloc*)" \
    grep -Eq '^ +[0-9.]+ [KMG]iB +[0-9.]+%  z(malloc|calloc|realloc)' <<<"$text"
check "redis: the loader saw redis go away" \
    grep -q 'redis went away after [1-9]' "$RUNS/redis/load/0/run.out"
[ "$TAPFAIL" = 0 ] || show_log redis
finish
