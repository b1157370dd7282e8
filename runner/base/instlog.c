/*
 * instlog.c — capped run.out and run.err kept out of the instance's reach
 * until it ended (see base/instlog.h).
 *
 * A stream's file is written in place: its first head bytes as they come,
 * then the next tail bytes, and from then on the tail region is a ring,
 * each byte going to head + (offset - head) % tail. Nothing is held in
 * memory, so a thousand instances with 64 MiB limits cost no more than
 * their files. When the stream ends past its limit the file is rewritten
 * once: the head (cut back to its last newline, so JSON lines stay whole),
 * the marker line, then the ring from its oldest byte (cut forward past
 * its first newline), written to a new file in the runner's folder that
 * is renamed over the old one.
 */
#include "base/instlog.h"

#include "base/fsat.h"
#include "base/util.h"
#include "ty_io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CUT_SEARCH (64 * 1024) /* how far a cut looks for a newline */
#define COPY_CHUNK (256 * 1024)

struct capfile {
    const char *name;   /* "run.out" */
    const char *stream; /* "stdout" */
    int fd;             /* -1 once closed */
    uint64_t head, tail;
    uint64_t total; /* bytes offered */
    int error;      /* errno of the first failed write, 0 */
};

struct instlog {
    int run_fd;
    char *inst; /* "<group>/<index>" */
    char *priv; /* ".runner/<group>/<index>" */
    uint64_t limit;
    struct capfile f[2];
    bool finished;
};

static int
pwrite_all(int fd, const char *p, size_t n, uint64_t off)
{
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

static int
cap_write(struct capfile *c, const char *data, size_t len)
{
    while (len > 0 && c->error == 0) {
        uint64_t cap = c->head + c->tail, off, room;
        size_t n;

        if (c->total < cap) {
            off = c->total;
            room = cap - c->total;
        } else {
            off = c->head + (c->total - c->head) % c->tail;
            room = c->head + c->tail - off;
        }
        n = len < room ? len : (size_t)room;
        if (pwrite_all(c->fd, data, n, off) < 0)
            c->error = errno ? errno : EIO;
        c->total += n;
        data += n;
        len -= n;
    }
    return c->error ? -1 : 0;
}

/* ---- laying out a cut file ---------------------------------------------- */

/* File offset of byte i (0 = oldest) of the ring. */
static uint64_t
ring_off(const struct capfile *c, uint64_t i)
{
    uint64_t q = c->head + (c->total - c->head) % c->tail;
    uint64_t first = c->head + c->tail - q;

    return i < first ? q + i : c->head + (i - first);
}

/* Bytes [from, to) of the ring into out; buf holds COPY_CHUNK. */
static int
copy_ring(const struct capfile *c, uint64_t from, uint64_t to, int out,
          char *buf)
{
    while (from < to) {
        uint64_t off = ring_off(c, from);
        uint64_t run = c->head + c->tail - off;
        size_t n = (size_t)(to - from < COPY_CHUNK ? to - from : COPY_CHUNK);
        ssize_t r;

        if (n > run)
            n = (size_t)run;
        r = pread(c->fd, buf, n, (off_t)off);
        if (r <= 0 || fd_write_all(out, buf, (size_t)r) < 0)
            return -1;
        from += (uint64_t)r;
    }
    return 0;
}

static int
copy_head(const struct capfile *c, uint64_t len, int out, char *buf)
{
    for (uint64_t at = 0; at < len;) {
        size_t n = (size_t)(len - at < COPY_CHUNK ? len - at : COPY_CHUNK);
        ssize_t r = pread(c->fd, buf, n, (off_t)at);

        if (r <= 0 || fd_write_all(out, buf, (size_t)r) < 0)
            return -1;
        at += (uint64_t)r;
    }
    return 0;
}

/* The head's length cut back to just after its last newline (when one is
 * within CUT_SEARCH of its end); *nl tells whether it then ends in one. */
static uint64_t
head_keep(const struct capfile *c, char *buf, bool *nl)
{
    size_t n = c->head < CUT_SEARCH ? (size_t)c->head : CUT_SEARCH;
    ssize_t r = pread(c->fd, buf, n, (off_t)(c->head - n));

    *nl = true;
    for (ssize_t i = r - 1; i >= 0; i--)
        if (buf[i] == '\n')
            return c->head - n + (uint64_t)i + 1;
    *nl = c->head == 0;
    return c->head;
}

/* How many of the ring's oldest bytes to skip: through its first newline
 * when one is within CUT_SEARCH. */
static uint64_t
tail_skip(const struct capfile *c, char *buf)
{
    uint64_t limit = c->tail < CUT_SEARCH ? c->tail : CUT_SEARCH;

    for (uint64_t i = 0; i < limit;) {
        uint64_t off = ring_off(c, i);
        uint64_t run = c->head + c->tail - off;
        size_t n = (size_t)(limit - i < run ? limit - i : run);
        ssize_t r = pread(c->fd, buf, n, (off_t)off);
        const char *nl = r > 0 ? memchr(buf, '\n', (size_t)r) : NULL;

        if (r <= 0)
            break;
        if (nl != NULL) {
            uint64_t skip = i + (uint64_t)(nl - buf) + 1;

            return skip < c->tail ? skip : 0;
        }
        i += (uint64_t)r;
    }
    return 0;
}

static int
write_cut(const struct capfile *c, int out, char *buf, uint64_t limit)
{
    bool nl;
    uint64_t keep = head_keep(c, buf, &nl), skip = tail_skip(c, buf);
    uint64_t cut = c->total - keep - (c->tail - skip);
    char marker[256];
    int n;

    if (copy_head(c, keep, out, buf) < 0)
        return -1;
    n = snprintf(marker, sizeof(marker),
                 "%s[testyard: %" PRIu64 " bytes of %s cut here; "
                 "run.log_limit is %" PRIu64 " bytes]\n",
                 nl ? "" : "\n", cut, c->stream, limit);
    if (fd_write_all(out, marker, (size_t)n) < 0)
        return -1;
    return copy_ring(c, skip, c->tail, out, buf);
}

/* Replace the capped file by its laid-out form, in the runner's folder. */
static int
lay_out(struct instlog *l, struct capfile *c, int priv, struct err *err)
{
    cleanup_free char *tmp = xasprintf("%s.cut", c->name);
    cleanup_free char *buf = xmalloc(COPY_CHUNK);
    int out = fsat_open(priv, tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644, err);
    int rc;

    if (out < 0)
        return -1;
    rc = write_cut(c, out, buf, l->limit);
    if (rc < 0) {
        err_sys(err, errno ? errno : EIO, "%s/%s", l->priv, tmp);
        close(out);
        (void)unlinkat(priv, tmp, 0);
        return rc;
    }
    /* Not synced, as the capped file it replaces never is. */
    if ((rc = ty__commit_at(out, priv, tmp, c->name, false)) < 0)
        return err_sys(err, -rc, "%s/%s", l->priv, c->name);
    return 0;
}

/* ---- the interface ------------------------------------------------------ */

static int
cap_open(struct instlog *l, struct capfile *c, struct err *err)
{
    cleanup_free char *rel = xasprintf("%s/%s", l->priv, c->name);

    c->head = l->limit / 2;
    c->tail = l->limit - c->head;
    c->fd = fsat_open(l->run_fd, rel, O_RDWR | O_CREAT | O_TRUNC, 0644, err);
    return c->fd < 0 ? -1 : 0;
}

struct instlog *
instlog_open(int run_fd, const char *group, int index, uint64_t limit,
             struct err *err)
{
    struct instlog *l = xcalloc(1, sizeof(*l));
    int d;

    l->run_fd = run_fd;
    l->inst = xasprintf("%s/%d", group, index);
    l->priv = xasprintf(INSTLOG_RUNNER_DIR "/%s/%d", group, index);
    l->limit = limit ? limit : INSTLOG_DEFAULT_LIMIT;
    if (l->limit < INSTLOG_MIN_LIMIT)
        l->limit = INSTLOG_MIN_LIMIT;
    l->f[0] = (struct capfile){.name = "run.out", .stream = "stdout", .fd = -1};
    l->f[1] = (struct capfile){.name = "run.err", .stream = "stderr", .fd = -1};
    d = fsat_dir(run_fd, l->priv, true, 0700, err);
    if (d < 0 || close(d) < 0 || cap_open(l, &l->f[0], err) < 0 ||
        cap_open(l, &l->f[1], err) < 0) {
        instlog_destroy(&l);
        return err_prefix(err, "the logs of %s", group), NULL;
    }
    return l;
}

int
instlog_write(struct instlog *l, int stream, const void *data, size_t len,
              struct err *err)
{
    struct capfile *c = &l->f[stream == 2 ? 1 : 0];

    if (c->fd < 0 || l->finished)
        return err_set(err, EBADF, "%s/%s: closed", l->inst, c->name);
    if (cap_write(c, data, len) < 0)
        return err_sys(err, c->error, "%s/%s", l->priv, c->name);
    return 0;
}

uint64_t
instlog_total(const struct instlog *l, int stream)
{
    return l->f[stream == 2 ? 1 : 0].total;
}

static int
finish_one(struct instlog *l, struct capfile *c, int priv, int inst,
           struct err *err)
{
    if (c->error != 0)
        return err_sys(err, c->error, "%s/%s: incomplete after a write error",
                       l->priv, c->name);
    if (c->total > c->head + c->tail && lay_out(l, c, priv, err) < 0)
        return -1;
    if (fsat_move(priv, c->name, inst, c->name, err) < 0)
        return err_prefix(err, "moving %s into %s", c->name, l->inst);
    return 0;
}

int
instlog_finish(struct instlog *l, struct err *err)
{
    cleanup_close int priv = -1;
    cleanup_close int inst = -1;
    int rc = 0;

    if (l->finished)
        return 0;
    l->finished = true;
    priv = fsat_dir(l->run_fd, l->priv, false, 0, err);
    inst = priv < 0 ? -1 : fsat_dir(l->run_fd, l->inst, true, 0755, err);
    if (inst < 0)
        return -1;
    for (int i = 0; i < 2; i++)
        if (finish_one(l, &l->f[i], priv, inst, rc < 0 ? NULL : err) < 0)
            rc = -1;
    return rc;
}

/* A file in the runner's folder again for the stream, holding what its
 * descriptor holds: the file now in the instance's folder, or the ring a
 * cut file was laid out from (replaced by its laid-out form, it is still
 * open here), so its offsets still work. */
static int
cap_resume(struct instlog *l, struct capfile *c, int priv, struct err *err)
{
    uint64_t cap = c->head + c->tail;
    uint64_t len = c->total < cap ? c->total : cap;
    cleanup_free char *buf = xmalloc(COPY_CHUNK);
    int fd = fsat_open(priv, c->name, O_RDWR | O_CREAT | O_TRUNC, 0644, err);

    if (fd < 0)
        return -1;
    if (copy_head(c, len, fd, buf) < 0) {
        err_sys(err, errno ? errno : EIO, "%s/%s", l->priv, c->name);
        close(fd);
        return -1;
    }
    close(c->fd);
    c->fd = fd;
    return 0;
}

int
instlog_resume(struct instlog *l, struct err *err)
{
    cleanup_close int priv = -1;

    if (!l->finished)
        return 0;
    priv = fsat_dir(l->run_fd, l->priv, true, 0700, err);
    if (priv < 0)
        return err_prefix(err, "the logs of %s", l->inst);
    for (int i = 0; i < 2; i++)
        if (l->f[i].error == 0 && cap_resume(l, &l->f[i], priv, err) < 0)
            return err_prefix(err, "the logs of %s", l->inst);
    l->finished = false;
    return 0;
}

void
instlog_destroy(struct instlog **lp)
{
    struct instlog *l = lp ? *lp : NULL;

    if (l == NULL)
        return;
    for (int i = 0; i < 2; i++)
        if (l->f[i].fd >= 0)
            close(l->f[i].fd);
    free(l->inst);
    free(l->priv);
    free(l);
    *lp = NULL;
}
