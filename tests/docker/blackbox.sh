# shellcheck shell=bash
# tests/docker/blackbox.sh — programs that are not plans on local:docker,
# under a 64 MiB limit that kills them (tests/e2e/blackbox_hog.c
# allocates until it is OOM-killed and prints its arguments, environment,
# working folder and LD_PRELOAD):
#   a. run.command alone: the host program packed into an image, with
#      args and env; with profiles.heap: preload a pre-OOM or peak profile
#      taken before the kill whose top site is hog_alloc; without, none;
#      statically linked with preload: a warning, and it runs all the same;
#   b. run.image: an image made here through the engine's /build (FROM
#      scratch: the program, /bin/sh and two wrapper scripts), with
#      command, args and workdir replacing its entrypoint, command and
#      folder, with args alone, with neither (its own ENTRYPOINT, CMD,
#      WORKDIR and ENV), through a script that execs the program and one
#      that forks it: the pre-OOM signal reaches the program in each;
#   c. run.image that is not in the engine and cannot be pulled: exit 69,
#      one line naming file:line:col and groups[0].run.image, no container
#      or network left;
#   d. programs that end at once: no figure of another cgroup (the root's)
#      is taken for theirs.
# The images made here are removed at the end.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "black-box programs on local:docker"

HOG=$RUNS/bin/blackbox_hog
SHIMG=testyard-test/blackbox-sh:1
PACKED_FILTER='filters=%7B%22label%22%3A%5B%22testyard.plan%3Dcmd-blackbox_hog%22%5D%7D'
STATIC_FILTER='filters=%7B%22label%22%3A%5B%22testyard.plan%3Dcmd-static_hog%22%5D%7D'

# remove_images — the test's image and the packed program's.
remove_images() {
    local t
    docker_api "/images/$SHIMG?force=1" -X DELETE >/dev/null 2>&1
    { docker_api "/images/json?$PACKED_FILTER"; docker_api "/images/json?$STATIC_FILTER"; } |
        jq -r '.[].Id' 2>/dev/null | while read -r t; do
            docker_api "/images/$t?force=1" -X DELETE >/dev/null 2>&1
        done
}

# copy_root FILE... — each host file at its own path under $CTX/rootfs.
copy_root() {
    local f
    for f in "$@"; do
        mkdir -p "$CTX/rootfs$(dirname "$f")"
        cp -L "$f" "$CTX/rootfs$f"
    done
}

# libs_of FILE — the libraries and loader FILE resolves to, one a line.
libs_of() {
    ldd "$1" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'
}

# build_shimg — $SHIMG: the hog at /plan/blackbox_hog, /bin/sh, the
# libraries of both and libm (as any glibc image has it: the profiler
# needs it, and glibc's libraries are never mounted), /hog-exec.sh (execs
# the hog) as ENTRYPOINT with CMD --step 1M, /hog-fork.sh (runs it as a
# child and waits), ENV HOG_TAG.
build_shimg() {
    CTX=$RUNS/shimg
    mkdir -p "$CTX/rootfs/plan" "$CTX/rootfs/tmp"
    cp "$HOG" "$CTX/rootfs/plan/blackbox_hog"
    # shellcheck disable=SC2046 # one path a word
    copy_root /bin/sh $(libs_of /bin/sh) $(libs_of "$HOG") \
        $(libs_of build/libtestyard-heap.so | grep '/libm\.so')
    printf '#!/bin/sh\nexec /plan/blackbox_hog "$@"\n' >"$CTX/rootfs/hog-exec.sh"
    printf '#!/bin/sh\n/plan/blackbox_hog "$@" &\nwait $!\n' >"$CTX/rootfs/hog-fork.sh"
    chmod 755 "$CTX/rootfs/hog-exec.sh" "$CTX/rootfs/hog-fork.sh"
    cat >"$CTX/Dockerfile" <<'EOF'
FROM scratch
COPY rootfs/ /
ENV PATH=/bin:/plan HOG_TAG=fromimage
WORKDIR /plan
ENTRYPOINT ["/hog-exec.sh"]
CMD ["--step", "1M"]
EOF
    tar -C "$CTX" -cf "$RUNS/shimg.tar" Dockerfile rootfs
    docker_api "/build?t=testyard-test%2Fblackbox-sh%3A1&rm=1&forcerm=1" \
        -X POST -H 'Content-Type: application/x-tar' \
        --data-binary @"$RUNS/shimg.tar" >"$RUNS/shimg.log" 2>&1
    docker_api "/images/$SHIMG/json" >/dev/null
}

# top_site FILE — the function holding the most heap in use in a profile.
top_site() {
    go tool pprof -symbolize=none -top -sample_index=inuse_space "$1" \
        2>/dev/null | awk '/flat%/ { getline; print $NF; exit }'
}

# check_profile ID GROUP WHAT — the group's instance left a preload
# profile heap-blackbox_hog-<pid>-<WHAT> taken before its OOM kill, whose
# top site is hog_alloc.
check_profile() {
    local dir=$RUNS/$1/$2/0 prof sc at kill
    prof=$(find "$dir" -name "heap-blackbox_hog-*-$3.pb.gz" 2>/dev/null | head -1)
    check "$2: a $3 profile of the program is in its folder" [ -s "$prof" ]
    sc=${prof%.pb.gz}.json
    at=$(rfc3339_ms "$(jq -r .time "$sc" 2>/dev/null)" 2>/dev/null)
    kill=$(($(rfc3339_ms "$(result "$1" .started)" 2>/dev/null) +
        $(result "$1" ".instances[] | select(.group == \"$2\") | .memory.oom_at_ms // 0")))
    check "$2: it was taken before the OOM kill" test "${at:-0}" -gt 0 -a "${at:-0}" -le "$kill"
    if command -v go >/dev/null; then
        check_eq "$2: its top site is hog_alloc" "$(top_site "$prof")" hog_alloc
    else
        skip "$2: its top site is hog_alloc" "go missing (go tool pprof)"
    fi
}

# check_oom ID GROUP LINE PRELOAD — the group's instance was OOM-killed,
# its run.out starts with LINE (arguments, environment, folder) and
# "hog: preload=PRELOAD", and memory.csv has samples.
check_oom() {
    local dir=$RUNS/$1/$2/0
    check_eq "$2: OOM-killed" \
        "$(result "$1" ".instances[] | select(.group == \"$2\") | .outcome")" oom
    check_eq "$2: its stdout shows its arguments, environment and folder" \
        "$(head -1 "$dir/run.out" 2>/dev/null)" "$3"
    check_eq "$2: its LD_PRELOAD" \
        "$(sed -n 2p "$dir/run.out" 2>/dev/null)" "hog: preload=$4"
    check "$2: memory.csv has samples" test "$(wc -l <"$dir/memory.csv" 2>/dev/null || echo 0)" -gt 3
}

PRELOAD=/.testyard/heap/libtestyard-heap.so

mkdir -p "$RUNS/bin"
if ! cc -O1 -g -fno-omit-frame-pointer -o "$HOG" tests/e2e/blackbox_hog.c ||
    ! cc -O1 -g -static -o "$RUNS/bin/static_hog" tests/e2e/blackbox_hog.c; then
    not_ok "tests/e2e/blackbox_hog.c compiles (dynamic and static)"
    finish
    exit
fi

# --- a: run.command alone ---------------------------------------------------
f=$(composition bb-command <<EOF
metadata: {name: bb-command}
global:
  runner: local:docker
  run_config: {timeout: 1m, memory_sample_interval: 20ms}
groups:
  - id: preload
    instances: {count: 1}
    resources: {memory: 64Mi}
    run:
      command: [$HOG, --step, 1M]
      args: [--tag, dockerA, --pause-ms, 20]
      env: {HOG_TAG: envA}
      profiles: {heap: preload}
  - id: plain
    instances: {count: 1}
    resources: {memory: 64Mi}
    run:
      command: [$HOG]
      args: [--tag, plainA]
  - id: static
    instances: {count: 1}
    resources: {memory: 64Mi}
    run:
      command: [$RUNS/bin/static_hog, --tag, staticA, --pause-ms, 20]
      profiles: {heap: preload}
EOF
)
rc=$(run_comp bb-command "$f")
check_eq "command: the run fails (its instances are OOM-killed)" "$rc" 1
check_oom bb-command preload \
    "hog: tag=dockerA env=envA home=/temp step=1048576 cwd=/temp argc=7" "$PRELOAD"
check_oom bb-command plain \
    "hog: tag=plainA env=- home=/temp step=1048576 cwd=/temp argc=3" -
check_oom bb-command static \
    "hog: tag=staticA env=- home=/temp step=1048576 cwd=/temp argc=5" "$PRELOAD"
check "command: a statically linked program with preload is warned of" \
    grep -q "static_hog is statically linked: the heap profiler cannot be preloaded" "$RUNS/bb-command.log"
check_eq "command: and leaves no profile" \
    "$(find "$RUNS/bb-command/static/0" -name 'heap-*' | wc -l)" 0
check_profile bb-command preload pre-oom
check_eq "command: result.json: the pre-OOM snapshot was asked by signal" \
    "$(result bb-command '.instances[] | select(.group == "preload") | .memory.pre_oom.via')" signal
check_eq "command: without preload, no profile" \
    "$(find "$RUNS/bb-command/plain/0" -name 'heap-*' | wc -l)" 0
check_eq "command: no container left" "$(containers_of_run bb-command)" 0
[ "$TAPFAIL" = 0 ] || show_log bb-command

# --- b: run.image -------------------------------------------------------------
if ! build_shimg; then
    not_ok "image $SHIMG built through /build"
    sed 's/^/#   /' "$RUNS/shimg.log" | tail -5
else
    f=$(composition bb-image <<EOF
metadata: {name: bb-image}
global:
  runner: local:docker
  run_config: {timeout: 1m, memory_sample_interval: 20ms}
  run:
    image: $SHIMG
    profiles: {heap: preload}
groups:
  - id: override
    instances: {count: 1}
    resources: {memory: 64Mi}
    run:
      command: [/plan/blackbox_hog, --step, 2M]
      args: [--tag, dockerB, --pause-ms, 40]
      env: {HOG_TAG: envB}
      workdir: /tmp
  - id: viaexec
    instances: {count: 1}
    resources: {memory: 64Mi}
    run:
      args: [--step, 1M, --tag, viaexec, --pause-ms, 20]
  - id: viafork
    instances: {count: 1}
    resources: {memory: 64Mi}
    run:
      command: [/hog-fork.sh]
      args: [--tag, viafork, --pause-ms, 20]
  - id: own
    instances: {count: 1}
    resources: {memory: 64Mi}
    run:
      profiles: {heap: "off"}
EOF
)
    rc=$(run_comp bb-image "$f")
    check_eq "image: the run fails (its instances are OOM-killed)" "$rc" 1
    check_oom bb-image override \
        "hog: tag=dockerB env=envB home=/temp step=2097152 cwd=/tmp argc=7" "$PRELOAD"
    check_oom bb-image viaexec \
        "hog: tag=viaexec env=fromimage home=/temp step=1048576 cwd=/plan argc=7" "$PRELOAD"
    check_oom bb-image viafork \
        "hog: tag=viafork env=fromimage home=/temp step=1048576 cwd=/plan argc=5" "$PRELOAD"
    check_oom bb-image own \
        "hog: tag=- env=fromimage home=/temp step=1048576 cwd=/plan argc=3" -
    for g in override viaexec viafork; do
        check_profile bb-image "$g" pre-oom
    done
    check_eq "image: profiles.heap: off, no profile" \
        "$(find "$RUNS/bb-image/own/0" -name 'heap-*' | wc -l)" 0
    check_eq "image: no container left" "$(containers_of_run bb-image)" 0
    [ "$TAPFAIL" = 0 ] || show_log bb-image
fi

# --- c: an image the engine does not have and cannot pull -----------------
f=$(composition bb-absent <<EOF
metadata: {name: bb-absent}
global:
  runner: local:docker
  run_config: {timeout: 1m}
groups:
  - id: g
    instances: {count: 1}
    run:
      image: 127.0.0.1:9/testyard-absent:1
EOF
)
rc=$(run_comp bb-absent "$f")
check_eq "absent image: exit 69" "$rc" 69
check "absent image: one line names file:line:col and groups[0].run.image" \
    grep -q "^testyard: $f:[0-9]*:[0-9]*: groups\[0\]\.run\.image: image \"127.0.0.1:9/testyard-absent:1\" is not in the engine and could not be pulled (.*); build or load it first$" "$RUNS/bb-absent.log"
check_eq "absent image: no container" "$(containers_of_run bb-absent)" 0
check_eq "absent image: no network" "$(networks_of_run bb-absent)" 0
[ "$TAPFAIL" = 0 ] || show_log bb-absent

# --- d: programs that end at once ----------------------------------------
# A container whose program has already ended when its cgroup is looked up
# shows the root cgroup in /proc/<pid>/cgroup (cgroup v1 moves an exiting
# task there): its figures must not be taken for the container's.
SHFILTER='filters=%7B%22label%22%3A%5B%22testyard.plan%3Dcmd-sh%22%5D%7D'
f=$(composition bb-brief <<EOF
metadata: {name: bb-brief}
global:
  runner: local:docker
  run_config: {timeout: 1m, memory_sample_interval: 10ms}
groups:
  - id: brief
    instances: {count: 4}
    resources: {memory: 32Mi}
    run:
      command: [/bin/sh, -c, 'echo brief']
EOF
)
over=0
for k in 1 2 3; do
    rc=$(run_comp "bb-brief$k" "$f")
    check_eq "brief programs ($k): the run succeeds" "$rc" 0
    n=$(cat "$RUNS/bb-brief$k"/brief/*/memory.csv 2>/dev/null |
        awk -F, 'NR > 1 && $3 ~ /^[0-9]+$/ && $3 > 33554432' | wc -l)
    over=$((over + n))
    peak=$(jq '.groups[0].peak_bytes // 0' "$RUNS/bb-brief$k/summary.json" 2>/dev/null)
    check "brief programs ($k): the report's peak is within the 32 MiB limit (got ${peak:-none})" \
        test "${peak:-0}" -le 33554432
done
check_eq "brief programs: no memory.csv row above the limit (the root cgroup's figures)" "$over" 0
docker_api "/images/json?$SHFILTER" | jq -r '.[].Id' 2>/dev/null | while read -r t; do
    docker_api "/images/$t?force=1" -X DELETE >/dev/null 2>&1
done

remove_images
check_eq "the images made here are gone" \
    "$(docker_api "/images/json?$PACKED_FILTER" | jq length)/$(docker_api "/images/json?$STATIC_FILTER" | jq length)/$(docker_api "/images/$SHIMG/json" >/dev/null 2>&1 && echo there)" "0/0/"
finish
