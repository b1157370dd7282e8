/*
 * syncsvc_upload.c — files and lines an instance sends to its folder.
 *
 * An upload is begin (name, size) → chunks (offset, bytes in frame 2, each
 * acknowledged once written) → end. The sender keeps a small window of
 * chunks in flight and waits for acknowledgements, so a slow coordinator
 * slows the sender and neither side holds more than the window. Bytes go to
 * <outdir>/<name>.tmp as they arrive; end checks the size and renames, so
 * the file is whole or absent. An upload whose instance ends, that stalls
 * past SVC_UPLOAD_IDLE_MS, or that the service is destroyed under, is
 * removed. Appends write whole messages to <outdir>/<name> with O_APPEND.
 *
 * The instance can write its folder too (a container's /outputs), so every
 * file here is opened beneath the folder's descriptor with no link followed
 * on any component (base/fsat.h), the folder itself opened with O_NOFOLLOW; the
 * upload keeps its folder's descriptor and renames within it. Names the
 * runner writes itself (run.out, run.err, memory.csv) are refused, and
 * what an instance sends is charged against its output quota
 * (run.output_quota): an upload's size when it begins (given back if it is
 * dropped), an append's bytes when they come. An upload that replaces a
 * file (the heap profiler's heap-peak and heap-pre-oom are sent again and
 * again) gives back the size of the file it replaces, up to what was
 * charged before it: the quota bounds what the folder holds, not how often
 * a file is renewed.
 */
#include "sync/syncsvc_int.h"

#include "base/fsat.h"
#include "base/util.h"
#include "ty_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files the runner owns in an instance's folder. */
static const char *const reserved[] = {
    "run.out",       "run.err",  "memory.csv", "memory.csv.partial",
    "processes.csv", "disk.csv", NULL};

static bool
is_reserved(const char *name)
{
    for (size_t i = 0; reserved[i] != NULL; i++)
        if (strcmp(name, reserved[i]) == 0)
            return true;
    return false;
}

/* The instance's folder, not through a link (made when missing). */
static int
open_outdir(const struct svc_inst *in, struct err *err)
{
    int fd = open(in->outdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0 && errno == ENOENT && mkdir_p(in->outdir, err) == 0)
        fd = open(in->outdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, errno == ELOOP ? ELOOP : errno,
                       "its output folder cannot be opened (%s)",
                       strerror(errno));
    return fd;
}

/* The folder that gets name (made, link-free), and its last component. */
static int
open_parent(const struct svc_inst *in, const char *name, const char **base,
            struct err *err)
{
    cleanup_close int root = open_outdir(in, err);

    if (root < 0)
        return -1;
    return fsat_parent(root, name, true, 0755, base, err);
}

/* "run.out" is the runner's, and the quota holds: 0, else the reply went
 * out and -1. */
static int
check_name_quota(struct syncsvc *svc, const struct svc_ctx *c,
                 const struct ty_wire_req *req, uint64_t bytes)
{
    const struct svc_inst *in = &svc->inst[c->inst];

    if (is_reserved(req->name))
        return svc__reply_status(svc, &c->peer, req->id, TY_WIRE_INVALID,
                                 "\"%s\" is written by the runner; choose "
                                 "another name",
                                 req->name),
               -1;
    if (bytes > in->quota || in->charged > in->quota - bytes)
        return svc__reply_status(
                   svc, &c->peer, req->id, TY_WIRE_FULL,
                   "%s: output quota of %llu bytes (run.output_quota) "
                   "would be exceeded: %llu sent, %llu more asked",
                   req->name, (unsigned long long)in->quota,
                   (unsigned long long)in->charged, (unsigned long long)bytes),
               -1;
    return 0;
}

static struct svc_upload *
upload_find(struct svc_inst *in, int64_t uid)
{
    for (struct svc_upload *u = in->uploads; u != NULL; u = u->next)
        if (u->uid == uid)
            return u;
    return NULL;
}

/* Unlink u from its instance, close and remove its partial file. */
static void
upload_drop(struct syncsvc *svc, struct svc_upload *u)
{
    struct svc_inst *in = &svc->inst[u->inst];

    for (struct svc_upload **pp = &in->uploads; *pp; pp = &(*pp)->next) {
        if (*pp == u) {
            *pp = u->next;
            break;
        }
    }
    in->nuploads--;
    if (!u->done)
        in->charged -= (uint64_t)u->size;
    svc__heap_remove(&svc->timers, &u->timer);
    if (u->fd >= 0) {
        close(u->fd);
        (void)unlinkat(u->dirfd, u->tmp, 0);
    }
    if (u->dirfd >= 0)
        close(u->dirfd);
    free(u->path);
    free(u->base);
    free(u->tmp);
    free(u);
}

static int
begin_check(struct syncsvc *svc, const struct svc_ctx *c,
            const struct ty_wire_req *req)
{
    struct svc_inst *in = &svc->inst[c->inst];

    if (req->size < 0)
        return svc__reply_status(svc, &c->peer, req->id, TY_WIRE_INVALID,
                                 "upload of a negative size"),
               -1;
    if (check_name_quota(svc, c, req, (uint64_t)req->size) < 0)
        return -1;
    if (in->nuploads >= SVC_MAX_UPLOADS)
        return svc__reply_status(svc, &c->peer, req->id, TY_WIRE_BUSY,
                                 "too many uploads in progress (%d)",
                                 SVC_MAX_UPLOADS),
               -1;
    for (struct svc_upload *u = in->uploads; u != NULL; u = u->next) {
        if (strcmp(u->path, req->name) == 0)
            return svc__reply_status(svc, &c->peer, req->id, TY_WIRE_BUSY,
                                     "\"%s\" is already being uploaded",
                                     req->name),
                   -1;
    }
    return 0;
}

/* A new upload with its folder and partial file open; NULL after the
 * error reply. */
static struct svc_upload *
upload_open(struct syncsvc *svc, const struct svc_ctx *c,
            const struct ty_wire_req *req)
{
    struct svc_upload *u = xcalloc(1, sizeof(*u));
    struct err e = {0};
    const char *base;

    u->fd = -1;
    u->dirfd = open_parent(&svc->inst[c->inst], req->name, &base, &e);
    if (u->dirfd >= 0) {
        u->base = xstrdup(base);
        u->tmp = xasprintf("%s.tmp", base);
        u->fd =
            openat(u->dirfd, u->tmp,
                   O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (u->fd < 0)
            err_sys(&e, errno, "%s.tmp", req->name);
    }
    if (u->fd >= 0)
        return u;
    svc__reply_status(svc, &c->peer, req->id, TY_WIRE_IOERR, "%s: %s",
                      req->name, e.msg);
    if (u->dirfd >= 0)
        close(u->dirfd);
    free(u->base);
    free(u->tmp);
    free(u);
    return NULL;
}

void
svc__op_upload_begin(struct syncsvc *svc, const struct svc_ctx *c,
                     const struct ty_wire_req *req)
{
    struct svc_inst *in = &svc->inst[c->inst];
    struct svc_upload *u;
    struct ty_wire_resp r;

    if (begin_check(svc, c, req) < 0 || (u = upload_open(svc, c, req)) == NULL)
        return;
    u->path = xstrdup(req->name);
    u->uid = ++svc->next_upload;
    u->inst = c->inst;
    u->size = req->size;
    in->charged += (uint64_t)req->size;
    u->timer.kind = SVC_T_UPLOAD;
    u->timer.at = svc__deadline(SVC_UPLOAD_IDLE_MS);
    svc__heap_push(&svc->timers, &u->timer);
    u->next = in->uploads;
    in->uploads = u;
    in->nuploads++;
    ty__wire_resp_init(&r, req->id);
    r.upload = u->uid;
    svc__reply(svc, &c->peer, &r);
}

static struct svc_upload *
upload_lookup(struct syncsvc *svc, const struct svc_ctx *c,
              const struct ty_wire_req *req)
{
    struct svc_upload *u = upload_find(&svc->inst[c->inst], req->upload);

    if (u == NULL)
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_NOTFOUND,
                          "no upload %lld in progress", (long long)req->upload);
    return u;
}

void
svc__op_upload_chunk(struct syncsvc *svc, const struct svc_ctx *c,
                     const struct ty_wire_req *req)
{
    struct svc_upload *u = upload_lookup(svc, c, req);

    if (u == NULL)
        return;
    if (req->offset != u->received ||
        u->received + (int64_t)req->len > u->size) {
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_INVALID,
                          "upload %lld: chunk at %lld of %zu bytes does not "
                          "follow %lld of %lld bytes; upload dropped",
                          (long long)u->uid, (long long)req->offset, req->len,
                          (long long)u->received, (long long)u->size);
        upload_drop(svc, u);
        return;
    }
    if (fd_write_all(u->fd, req->data, req->len) < 0) {
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_IOERR,
                          "%s: write: %s; upload dropped", u->path,
                          strerror(errno));
        upload_drop(svc, u);
        return;
    }
    u->received += (int64_t)req->len;
    svc__heap_remove(&svc->timers, &u->timer);
    u->timer.at = svc__deadline(SVC_UPLOAD_IDLE_MS);
    svc__heap_push(&svc->timers, &u->timer);
    svc__reply_status(svc, &c->peer, req->id, TY_WIRE_OK, NULL);
}

/* Bytes of the regular file u is about to replace (no link followed),
 * at most what the instance was charged besides u itself. */
static uint64_t
replaced_bytes(const struct svc_inst *in, const struct svc_upload *u)
{
    struct stat st;
    uint64_t before = in->charged - (uint64_t)u->size;

    if (fstatat(u->dirfd, u->base, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
        !S_ISREG(st.st_mode) || st.st_size <= 0)
        return 0;
    return (uint64_t)st.st_size < before ? (uint64_t)st.st_size : before;
}

void
svc__op_upload_end(struct syncsvc *svc, const struct svc_ctx *c,
                   const struct ty_wire_req *req)
{
    struct svc_inst *in = &svc->inst[c->inst];
    uint64_t replaced;
    struct svc_upload *u = upload_lookup(svc, c, req);
    int fd, rc;

    if (u == NULL)
        return;
    if (u->received != u->size) {
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_INVALID,
                          "upload %lld ended at %lld of %lld bytes; dropped",
                          (long long)u->uid, (long long)u->received,
                          (long long)u->size);
        upload_drop(svc, u);
        return;
    }
    fd = u->fd;
    u->fd = -1;
    replaced = replaced_bytes(in, u);
    /* Not synced: the event loop must not wait on the disk. */
    if ((rc = ty__commit_at(fd, u->dirfd, u->tmp, u->base, false)) < 0) {
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_IOERR, "%s: %s",
                          u->path, strerror(-rc));
    } else {
        u->done = true;
        in->charged -= replaced;
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_OK, NULL);
    }
    upload_drop(svc, u);
}

void
svc__op_upload_abort(struct syncsvc *svc, const struct svc_ctx *c,
                     const struct ty_wire_req *req)
{
    struct svc_upload *u = upload_lookup(svc, c, req);

    if (u == NULL)
        return;
    upload_drop(svc, u);
    svc__reply_status(svc, &c->peer, req->id, TY_WIRE_OK, NULL);
}

static int
append_open(const struct svc_inst *in, const char *name, struct err *err)
{
    const char *base;
    cleanup_close int dir = open_parent(in, name, &base, err);
    int fd;

    if (dir < 0)
        return -1;
    fd = openat(dir, base,
                O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return err_sys(err, errno, "%s", name);
    return fd;
}

void
svc__op_append(struct syncsvc *svc, const struct svc_ctx *c,
               const struct ty_wire_req *req)
{
    struct svc_inst *in = &svc->inst[c->inst];
    cleanup_close int fd = -1;
    struct err e = {0};

    if (check_name_quota(svc, c, req, req->len) < 0)
        return;
    fd = append_open(in, req->name, &e);
    if (fd >= 0 && fd_write_all(fd, req->data, req->len) < 0)
        err_sys(&e, errno, "%s", req->name);
    if (fd < 0 || e.code != 0) {
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_IOERR, "%s", e.msg);
        return;
    }
    in->charged += req->len;
    svc__reply_status(svc, &c->peer, req->id, TY_WIRE_OK, NULL);
}

void
svc__upload_timeout(struct syncsvc *svc, struct svc_upload *u)
{
    upload_drop(svc, u);
}

void
svc__upload_drop_all(struct syncsvc *svc, int inst)
{
    while (svc->inst[inst].uploads != NULL)
        upload_drop(svc, svc->inst[inst].uploads);
}
