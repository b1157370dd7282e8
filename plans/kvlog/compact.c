/*
 * compact.c — kvlog's compaction worker, a process of its own (the plan's
 * program run again as `kvlog compact DIR VALUE_SIZE KEYS` by the server,
 * named "kvlog-compact" so that processes.csv tells it from the server).
 *
 * It waits on its standard input, a pipe from the server: each byte asks
 * for one compaction of log.old, which the server has just renamed from
 * its log. The compaction writes snapshot.tmp — the current snapshot's
 * intact slots, then each record of log.old at its key's slot, keys never
 * written left as holes — syncs it, renames it over snapshot and removes
 * log.old; then it answers on its standard output, "done RECORDS
 * ALLOCATED_BYTES" or "fail WHY". The end of its input (the server
 * closed it or is gone) ends it, not SIGTERM: the server decides when.
 *
 * log.old is always newer than the snapshot (the snapshot holds only logs
 * compacted before it), so writing its records over the slots keeps the
 * newest of each key; a compaction cut short leaves log.old in place and
 * is simply done again.
 */
#define _GNU_SOURCE
#include "kv.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

struct compaction {
    int dirfd, out; /* the state folder, snapshot.tmp */
    const struct kv_geom *g;
    char *slot; /* kv_rec_size bytes */
    uint64_t seq;
    int64_t records;
    char err[KV_ERR_LEN];
};

static int
put_slot(void *arg, const struct kv_rec *h, const void *v)
{
    struct compaction *c = arg;

    memcpy(c->slot, h, sizeof(*h));
    memcpy(c->slot + sizeof(*h), v, h->vlen);
    if (h->seq > c->seq)
        c->seq = h->seq;
    return kv_write_full(c->out, c->slot, kv_rec_size(c->g),
                         kv_slot_offset(c->g, h->key));
}

/* The current snapshot's slots into snapshot.tmp (none without one). */
static int
copy_snapshot(struct compaction *c)
{
    char why[KV_ERR_LEN] = "";
    uint64_t seq = 0;
    int64_t n;
    int fd = openat(c->dirfd, "snapshot", O_RDONLY | O_CLOEXEC);

    if (fd < 0 && errno == ENOENT)
        return 0;
    if (fd < 0)
        return -errno;
    n = kv_snap_scan(fd, c->g, put_slot, c, &seq, why, sizeof(why));
    close(fd);
    if (n < 0 && why[0])
        snprintf(c->err, sizeof(c->err), "snapshot: %.200s", why);
    if (seq > c->seq)
        c->seq = seq;
    return n < 0 ? (int)n : 0;
}

static int
apply_old_log(struct compaction *c)
{
    off_t end;
    int64_t n;
    int fd = openat(c->dirfd, "log.old", O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -errno;
    n = kv_log_scan(fd, c->g, put_slot, c, &end);
    close(fd);
    if (n >= 0)
        c->records = n;
    return n < 0 ? (int)n : 0;
}

static int
write_header(struct compaction *c)
{
    struct kv_snap_hdr h = {KV_SNAP_MAGIC, 1, c->g->value_size,
                            c->g->keys,    0, c->seq};
    off_t size = kv_slot_offset(c->g, c->g->keys);

    if (ftruncate(c->out, size) < 0)
        return -errno;
    return kv_write_full(c->out, &h, sizeof(h), 0);
}

/* snapshot.tmp made whole, then put in place and log.old removed. */
static int
install(struct compaction *c)
{
    if (fsync(c->out) < 0 ||
        renameat(c->dirfd, "snapshot.tmp", c->dirfd, "snapshot") < 0 ||
        fsync(c->dirfd) < 0 || unlinkat(c->dirfd, "log.old", 0) < 0)
        return -errno;
    return kv_sync_dir(c->dirfd);
}

static int
compact_once(struct compaction *c)
{
    int rc;

    if (faccessat(c->dirfd, "log.old", F_OK, 0) < 0)
        return 0; /* nothing to do: an earlier one finished it */
    c->out = openat(c->dirfd, "snapshot.tmp",
                    O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (c->out < 0)
        return -errno;
    rc = copy_snapshot(c);
    if (rc == 0)
        rc = apply_old_log(c);
    if (rc == 0)
        rc = write_header(c);
    if (rc == 0)
        rc = install(c);
    close(c->out);
    return rc;
}

/* One compaction under compact.lock, answered on stdout. */
static void
serve_one(struct compaction *c)
{
    struct stat st;
    int rc, lock = openat(c->dirfd, "compact.lock",
                          O_RDWR | O_CREAT | O_CLOEXEC, 0644);

    c->err[0] = '\0';
    c->seq = 0;
    c->records = 0;
    if (lock < 0 || flock(lock, LOCK_EX) < 0)
        rc = -errno;
    else
        rc = compact_once(c);
    if (lock >= 0)
        close(lock);
    if (rc < 0 && c->err[0] == '\0')
        snprintf(c->err, sizeof(c->err), "%s", strerror(-rc));
    if (rc < 0)
        printf("fail %s\n", c->err);
    else
        printf("done %lld %lld\n", (long long)c->records,
               fstatat(c->dirfd, "snapshot", &st, 0) == 0
                   ? (long long)st.st_blocks * 512
                   : 0LL);
    fflush(stdout);
}

static int
parse_u32(const char *s, uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);

    if (*s == '\0' || *end != '\0' || v == 0 || v > max)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int
kv_compact_main(int argc, char **argv)
{
    struct kv_geom g;
    struct compaction c = {.g = &g};
    char b;
    ssize_t n;

    prctl(PR_SET_NAME, KV_COMPACT_COMM, 0, 0, 0);
    /* A stop signals the whole process group on local:exec: the server
     * ends the worker itself (closing its input) once its load is over,
     * and PR_SET_PDEATHSIG kills it if the server is killed. */
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    if (argc != 5 || parse_u32(argv[3], KV_MAX_VALUE, &g.value_size) < 0 ||
        parse_u32(argv[4], KV_MAX_KEYS, &g.keys) < 0) {
        fprintf(stderr, "usage: %s compact DIR VALUE_SIZE KEYS\n", argv[0]);
        return 64;
    }
    c.dirfd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (c.dirfd < 0) {
        fprintf(stderr, "%s: %s: %s\n", KV_COMPACT_COMM, argv[2],
                strerror(errno));
        return 1;
    }
    c.slot = malloc(kv_rec_size(&g));
    if (c.slot == NULL) {
        fprintf(stderr, "%s: out of memory\n", KV_COMPACT_COMM);
        close(c.dirfd);
        return 1;
    }
    while ((n = read(STDIN_FILENO, &b, 1)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        serve_one(&c);
    }
    free(c.slot);
    close(c.dirfd);
    return 0;
}
