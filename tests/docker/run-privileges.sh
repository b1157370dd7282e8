# shellcheck shell=bash
# tests/docker/run-privileges.sh — what a container of a local:docker run
# may do. A probe plan (written here) reports from inside its container
# who it runs as, which writes fail, whether it sees another instance's
# folder, and whether it can read the release board once that is root:<its
# gid>, 0640/0660, as the sync service makes it. While the instances wait,
# the test reads HostConfig back from the engine, the folders' owners and
# modes on the host and the address the sync service listens on. A second
# run asks for the host network and for root in one group; bad values of
# run.root are refused before anything starts.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh

need_docker "privileges on local:docker"

mkdir -p "$RUNS/plans/probe"
cat >"$RUNS/plans/probe/manifest.yaml" <<'EOF2'
name: probe
build: {sources: [main.c]}
cases:
  - name: probe
    instances: {min: 1, max: 10}
    params:
      peer: {type: string, default: /nonexistent}
EOF2
cat >"$RUNS/plans/probe/main.c" <<'EOF2'
/* probe: probe.json says who the instance is and what it can touch; it
 * then waits (at most 2 minutes) for a file "go" in its outputs folder and
 * says in board.json whether it can read the release board. */
#define _GNU_SOURCE
#include <testyard.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *
result(int rc)
{
    return rc < 0 ? strerrorname_np(errno) : "ok";
}

static const char *
try_write(const char *dir)
{
    char path[512];
    int fd;

    snprintf(path, sizeof(path), "%s/probe-%d", dir ? dir : "", getpid());
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return result(-1);
    if (write(fd, "x", 1) != 1) {
        close(fd);
        return result(-1);
    }
    close(fd);
    return result(unlink(path));
}

static const char *
try_open(const char *dir, const char *name)
{
    char path[512];
    int fd;

    snprintf(path, sizeof(path), "%s/%s", dir ? dir : "", name);
    fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return result(-1);
    close(fd);
    return "ok";
}

static int
run_probe(struct ty *ty)
{
    const char *out = getenv("TEST_OUTPUTS_PATH");
    const char *board = getenv("TESTYARD_SYNC_BOARD");
    const char *peer = "/nonexistent";
    char path[512], go[512];
    gid_t groups[64];
    int ng = getgroups(64, groups);
    FILE *f;

    ty_param_string(ty, "peer", &peer);
    snprintf(path, sizeof(path), "%s/probe.json.tmp", out);
    if ((f = fopen(path, "w")) == NULL)
        return ty_fail(ty, "%s: %s", path, strerror(errno));
    fprintf(f, "{\"uid\": %d, \"gid\": %d, \"groups\": [", (int)getuid(),
            (int)getgid());
    for (int i = 0; i < ng; i++)
        fprintf(f, "%s%d", i ? ", " : "", (int)groups[i]);
    fprintf(f, "], \"root_write\": \"%s\", \"etc_write\": \"%s\"",
            try_write(""), try_write("/etc"));
    fprintf(f, ", \"tmp_write\": \"%s\", \"outputs_write\": \"%s\"",
            try_write("/tmp"), try_write(out));
    fprintf(f, ", \"temp_write\": \"%s\", \"peer_read\": \"%s\"",
            try_write(getenv("TEST_TEMP_PATH")), try_open(peer, "."));
    fprintf(f, ", \"outputs\": \"%s\", \"temp\": \"%s\", \"sync_host\": "
               "\"%s\"}\n",
            out, getenv("TEST_TEMP_PATH"), getenv("SYNC_SERVICE_HOST"));
    fclose(f);
    snprintf(go, sizeof(go), "%s/probe.json", out);
    rename(path, go);
    snprintf(go, sizeof(go), "%s/go", out);
    for (int i = 0; i < 1200 && access(go, F_OK) < 0; i++)
        usleep(100 * 1000);
    snprintf(path, sizeof(path), "%s/board.json", out);
    if ((f = fopen(path, "w")) == NULL)
        return ty_fail(ty, "%s: %s", path, strerror(errno));
    fprintf(f, "{\"board\": \"%s\", \"wake\": \"%s\"}\n",
            try_open(board, "board"), try_open(board, "wake"));
    fclose(f);
    return 0;
}

static const struct ty_case cases[] = {{"probe", run_probe}, {NULL, NULL}};

int
main(int argc, char **argv)
{
    return ty_main(argc, argv, cases);
}
EOF2

# start ID FILE — run it in the background; $pid is the coordinator.
start() {
    "$TY" run --plans "$RUNS/plans" --runs "$RUNS" --run-id "$1" \
        --no-progress "$2" >"$RUNS/$1.log" 2>&1 &
    pid=$!
}

# wait_probes ID N — until N instances wrote probe.json (3 minutes at
# most: the image is built first).
wait_probes() {
    local i
    for ((i = 0; i < 1800; i++)); do
        [ "$(find "$RUNS/$1" -name probe.json 2>/dev/null | wc -l)" -ge "$2" ] &&
            return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# release ID — let the run's probes go on.
release() {
    local d
    for d in "$RUNS/$1"/*/*/; do touch "$d/go"; done
}

probe() { # ID GROUP INDEX FILTER
    jq -r "$4" "$RUNS/$1/$2/$3/probe.json" 2>/dev/null
}

inspect() { # ID GROUP INDEX FILTER
    docker_api "/containers/testyard-$1-$2-$3/json" | jq -r "$4"
}

# --- the default: a user of the instance's own, a bridge of the run's own
f=$(composition privs <<EOF2
global: {plan: probe, case: probe, runner: local:docker,
         run: {test_params: {peer: "$RUNS/privs/g/1"}},
         run_config: {timeout: 5m}}
groups: [{id: g, instances: {count: 2}}]
EOF2
)
start privs "$f"
if wait_probes privs 2; then
    ok "both probes reported from their containers"
else
    not_ok "both probes reported from their containers"
    show_log privs
fi
uid0=$(probe privs g 0 .uid)
uid1=$(probe privs g 1 .uid)
gid=$(probe privs g 0 .gid)
check "instance 0 does not run as root (uid $uid0)" [ "${uid0:-0}" -gt 0 ]
check "nor as any account of the host (uid $uid0)" \
    test -z "$(getent passwd "$uid0")"
check "each instance has a uid of its own ($uid0, $uid1)" \
    test -n "$uid1" -a "$uid0" != "$uid1"
check_eq "both have the run's gid, which no host group has" \
    "$(probe privs g 1 .gid):$(getent group "$gid")" "$gid:"
check_eq "and no other group" "$(probe privs g 0 '.groups | join(",")')" "$gid"
check_eq "writing under / fails with EROFS" "$(probe privs g 0 .root_write)" EROFS
check_eq "so does writing in /etc" "$(probe privs g 0 .etc_write)" EROFS
check_eq "/tmp is writable" "$(probe privs g 0 .tmp_write)" ok
check_eq "TEST_OUTPUTS_PATH is writable" "$(probe privs g 0 .outputs_write)" ok
check_eq "TEST_TEMP_PATH is writable" "$(probe privs g 0 .temp_write)" ok
check_eq "another instance's folder is not there to read" \
    "$(probe privs g 0 .peer_read)" ENOENT
check_eq "the host folders are the instance's alone while it runs" \
    "$(stat -c '%u %g %a' "$RUNS/privs/g/0" "$RUNS/privs/.tmp/g/0" |
        sort -u)" "$uid0 $gid 700"
check_eq "Config.User: its uid and the run's gid" "$(inspect privs g 1 .Config.User)" "$uid1:$gid"
check_eq "HostConfig.ReadonlyRootfs" \
    "$(inspect privs g 0 .HostConfig.ReadonlyRootfs)" true
check "HostConfig.Tmpfs: a bounded /tmp" \
    grep -q 'size=64m' <<<"$(inspect privs g 0 '.HostConfig.Tmpfs["/tmp"]')"
check_eq "HostConfig.CapDrop" "$(inspect privs g 0 '.HostConfig.CapDrop | join(",")')" ALL
check_eq "HostConfig.SecurityOpt" \
    "$(inspect privs g 0 '.HostConfig.SecurityOpt | join(",")')" no-new-privileges
check "HostConfig.PidsLimit is set" \
    [ "$(inspect privs g 0 '.HostConfig.PidsLimit // 0')" -gt 0 ]
check_eq "HostConfig.NetworkMode: the run's own bridge" \
    "$(inspect privs g 0 .HostConfig.NetworkMode)" testyard-privs
gw=$(docker_api /networks/testyard-privs | jq -r '.IPAM.Config[0].Gateway')
check_eq "instances reach the sync service at the bridge's gateway" \
    "$(probe privs g 0 .sync_host)" "$gw"
listening=$(ss -Hltnp 2>/dev/null | grep "pid=$pid," | awk '{print $4}' |
    sed 's/:[0-9]*$//' | sort -u | tr '\n' ' ')
check_eq "the sync service listens on the gateway only" "$listening" "$gw "
# The sync service gives the board to the run's gid (0640, 0660 for the
# FIFO): a container must read it through that group.
board="$RUNS/privs/.sync"
chown root:"$gid" "$board" "$board/board" "$board/wake" &&
    chmod 0750 "$board" && chmod 0640 "$board/board" && chmod 0660 "$board/wake"
release privs
wait "$pid"
rc=$?
check_eq "the probes' run: exit 0" "$rc" 0
[ "$rc" = 0 ] || show_log privs
check_eq "the release board root:gid 0640 is readable in the container" \
    "$(jq -r .board "$RUNS/privs/g/0/board.json" 2>/dev/null)" ok
check_eq "and so is its FIFO, 0660" \
    "$(jq -r .wake "$RUNS/privs/g/1/board.json" 2>/dev/null)" ok
check_eq "afterwards the folder is the coordinator's again" \
    "$(stat -c '%u %a' "$RUNS/privs/g/0")" "0 755"

# --- the host network when asked, and root for a group that asks
f=$(composition privh <<EOF2
global: {plan: probe, case: probe, runner: local:docker,
         run_config: {timeout: 5m, network: host}}
groups: [{id: admin, instances: {count: 1}, run: {root: true}},
         {id: user, instances: {count: 1}}]
EOF2
)
start privh "$f"
wait_probes privh 2 || show_log privh
check_eq "network: host is the host's" \
    "$(inspect privh admin 0 .HostConfig.NetworkMode)" host
check_eq "and the sync service is on 127.0.0.1 there" \
    "$(probe privh user 0 .sync_host)" 127.0.0.1
listening=$(ss -Hltnp 2>/dev/null | grep "pid=$pid," | awk '{print $4}' |
    sed 's/:[0-9]*$//' | sort -u | tr '\n' ' ')
check_eq "listening on 127.0.0.1 only" "$listening" "127.0.0.1 "
check_eq "run.root: true runs the group as uid 0" "$(probe privh admin 0 .uid)" 0
check_eq "with the run's gid" \
    "$(inspect privh admin 0 .Config.User)" "0:$(probe privh user 0 .gid)"
check "the other group does not" [ "$(probe privh user 0 .uid)" -gt 0 ]
check_eq "root still has a read-only root filesystem" \
    "$(probe privh admin 0 .root_write)" EROFS
release privh
wait "$pid"
rc=$?
check_eq "the root run: exit 0" "$rc" 0
[ "$rc" = 0 ] || show_log privh

# --- bad values are refused before anything starts
f=$(composition privbad <<'EOF2'
global: {plan: placebo, case: ok, runner: local:docker}
groups: [{id: g, instances: {count: 1}, run: {root: "yes"}}]
EOF2
)
rc=$(run_comp privbad "$f")
check_eq "run.root: \"yes\" is refused: exit 65" "$rc" 65
check "with the key and what was expected" \
    grep -q 'groups\[0\].run.root: expected true or false' "$RUNS/privbad.log"
check_eq "and no container was made" "$(containers_of_run privbad)" 0

finish
