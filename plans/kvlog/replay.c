/*
 * replay.c — what a kvlog server does before it is ready: read the state
 * folder the last process left into the table. The snapshot first, then
 * log.old (a compaction that had not finished: its records may or may not
 * be in the snapshot already, which does not matter, the newest record of
 * a key wins), then the log, whose end a crash may have torn: the torn
 * record is cut off, so the next put follows the last intact one (and a
 * snapshot.tmp left by a compaction cut short is removed). The
 * time it takes grows with the data, which is what a long run's restart
 * times show against the puts done so far.
 */
#define _GNU_SOURCE
#include "kv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct replay_ctx {
    struct kv_table *t;
    uint64_t seq;
};

static int
take(void *arg, const struct kv_rec *h, const void *v)
{
    struct replay_ctx *c = arg;

    if (h->seq > c->seq)
        c->seq = h->seq;
    return kv_table_put(c->t, h->key, h->seq, v);
}

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Open name in dirfd; -ENOENT quietly when it is not there. */
static int
open_in(int dirfd, const char *name, int flags, char *err, size_t errlen)
{
    int fd = openat(dirfd, name, flags | O_CLOEXEC | O_NOFOLLOW);

    if (fd < 0 && errno != ENOENT)
        snprintf(err, errlen, "open %s: %s", name, strerror(errno));
    return fd < 0 ? -errno : fd;
}

static int
replay_snapshot(int dirfd, const struct kv_geom *g, struct replay_ctx *c,
                struct kv_replay *r, char *err, size_t errlen)
{
    char why[KV_ERR_LEN] = "";
    uint64_t seq = 0;
    int fd = open_in(dirfd, "snapshot", O_RDONLY, err, errlen);

    if (fd == -ENOENT)
        return 0;
    if (fd < 0)
        return fd;
    r->snap_slots = kv_snap_scan(fd, g, take, c, &seq, why, sizeof(why));
    close(fd);
    if (r->snap_slots < 0) {
        snprintf(err, errlen, "snapshot: %s",
                 why[0] ? why : strerror((int)-r->snap_slots));
        return (int)r->snap_slots;
    }
    if (seq > c->seq)
        c->seq = seq;
    return 0;
}

/* Replay log file name; with cut, cut a torn end off it. */
static int
replay_log(int dirfd, const char *name, bool cut, const struct kv_geom *g,
           struct replay_ctx *c, int64_t *records, off_t *torn, char *err,
           size_t errlen)
{
    int fd = open_in(dirfd, name, cut ? O_RDWR : O_RDONLY, err, errlen);
    struct stat st;
    off_t end = 0;
    int rc = 0;

    if (fd == -ENOENT)
        return 0;
    if (fd < 0)
        return fd;
    *records = kv_log_scan(fd, g, take, c, &end);
    if (*records < 0)
        rc = (int)*records;
    else if (fstat(fd, &st) < 0)
        rc = -errno;
    else if (cut && st.st_size > end) {
        *torn = st.st_size - end;
        if (ftruncate(fd, end) < 0 || fsync(fd) < 0)
            rc = -errno;
    }
    if (rc < 0)
        snprintf(err, errlen, "%s: %s", name, strerror(-rc));
    close(fd);
    return rc;
}

int
kv_replay(int dirfd, const struct kv_geom *g, struct kv_table *t,
          struct kv_replay *r, char *err, size_t errlen)
{
    struct replay_ctx c = {t, 0};
    double t0 = now_s();
    int lock, rc;

    memset(r, 0, sizeof(*r));
    lock = openat(dirfd, "compact.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0 || flock(lock, LOCK_EX) < 0) {
        rc = -errno;
        snprintf(err, errlen, "compact.lock: %s", strerror(-rc));
        if (lock >= 0)
            close(lock);
        return rc;
    }
    r->lock_seconds = now_s() - t0;
    /* a compaction cut short; the next one starts it again anyway */
    if (unlinkat(dirfd, "snapshot.tmp", 0) < 0 && errno != ENOENT) {
        rc = -errno;
        snprintf(err, errlen, "snapshot.tmp: %s", strerror(-rc));
        close(lock);
        return rc;
    }
    r->old_log = faccessat(dirfd, "log.old", F_OK, 0) == 0;
    rc = replay_snapshot(dirfd, g, &c, r, err, errlen);
    if (rc == 0)
        rc = replay_log(dirfd, "log.old", false, g, &c, &r->old_records,
                        &r->torn_bytes, err, errlen);
    if (rc == 0)
        rc = replay_log(dirfd, "log", true, g, &c, &r->log_records,
                        &r->torn_bytes, err, errlen);
    close(lock);
    r->seq = c.seq;
    r->seconds = now_s() - t0;
    return rc;
}
