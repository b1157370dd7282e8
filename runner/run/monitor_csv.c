/*
 * monitor_csv.c — the coordinator's series files (memory.csv, processes.csv,
 * disk.csv): rows appended to a .partial file, one whole row per write(2),
 * made durable and renamed into the instance's folder when the instance
 * ends, so the run folder holds each file complete or not at all (see
 * run/monitor_int.h). Every name is relative to a folder descriptor and
 * opened with no link followed.
 */
#include "run/monitor_int.h"

#include "base/fsat.h"
#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
monitor__csv_write(struct monitor_csv *c, const char *row, size_t len)
{
    if (c->fd < 0)
        return;
    if (fd_append_whole(c->fd, row, len) == 0)
        return;
    log_warn("%s: series stops: %s", c->label, c->partial);
    close(c->fd);
    c->fd = -1;
    c->failed = true;
}

int
monitor__csv_open(struct monitor_csv *c, const struct monitor_file *f,
                  const char *label, const char *header, struct err *err)
{
    memset(c, 0, sizeof(*c));
    c->dirfd = f->dirfd;
    c->label = xstrdup(label);
    c->final = xstrdup(f->final);
    c->partial = xstrdup(f->partial);
    c->fd = fsat_open(c->dirfd, c->partial,
                      O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644, err);
    if (c->fd < 0)
        return -1;
    monitor__csv_write(c, header, strlen(header));
    if (c->fd < 0)
        return err_sys(err, EIO, "%s: write", c->partial);
    return 0;
}

/* partial → final, each in its folder opened link-free; a link left
 * under the final name is replaced, never followed. */
static int
csv_rename(const struct monitor_csv *c, struct err *err)
{
    const char *pbase, *fbase;
    cleanup_close int pdir =
        fsat_parent(c->dirfd, c->partial, false, 0, &pbase, err);
    cleanup_close int fdir =
        pdir < 0 ? -1 : fsat_parent(c->dirfd, c->final, false, 0, &fbase, err);

    if (fdir < 0 || fsat_move(pdir, pbase, fdir, fbase, err) < 0)
        return err_prefix(err, "putting %s in place", c->final);
    return 0;
}

int
monitor__csv_finish(struct monitor_csv *c, struct err *err)
{
    int fd = c->fd;

    if (c->partial == NULL)
        return 0;
    if (c->failed)
        return err_set(err, EIO, "%s: incomplete after a write error",
                       c->partial);
    c->fd = -1;
    if (fdatasync(fd) < 0 && errno != EINVAL) {
        int e = errno;

        close(fd);
        c->failed = true;
        return err_sys(err, e, "%s", c->partial);
    }
    close(fd);
    if (csv_rename(c, err) < 0)
        return -1;
    free(c->partial);
    c->partial = NULL;
    return 0;
}

void
monitor__csv_release(struct monitor_csv *c, bool discard)
{
    const char *base;

    if (discard && c->partial != NULL && c->fd >= 0) {
        cleanup_close int dir =
            fsat_parent(c->dirfd, c->partial, false, 0, &base, NULL);

        if (dir >= 0)
            (void)unlinkat(dir, base, 0);
    }
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->label);
    free(c->final);
    free(c->partial);
    c->label = c->final = c->partial = NULL;
}

void
monitor__csv_int(char *buf, size_t size, size_t *len, int64_t v)
{
    if (*len >= size)
        return;
    if (v >= 0)
        *len +=
            (size_t)snprintf(buf + *len, size - *len, ",%lld", (long long)v);
    else
        *len += (size_t)snprintf(buf + *len, size - *len, ",");
    if (*len >= size)
        *len = size;
}
