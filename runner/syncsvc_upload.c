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
 */
#include "syncsvc_int.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* <outdir>/<name> with its parent folders made; NULL and errno on error. */
static char *
out_path(const struct svc_inst *in, const char *name)
{
    char *path = path_join(in->outdir, name);
    cleanup_free char *dir = path_dirname(path);
    struct err err;

    if (mkdir_p(dir, &err) < 0) {
        free(path);
        errno = err.code;
        return NULL;
    }
    return path;
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
    svc_heap_remove(&svc->timers, &u->timer);
    if (u->fd >= 0) {
        close(u->fd);
        unlink(u->tmp);
    }
    free(u->path);
    free(u->tmp);
    free(u);
}

static int
begin_check(struct syncsvc *svc, const struct svc_ctx *c,
            const struct ty_wire_req *req)
{
    struct svc_inst *in = &svc->inst[c->inst];
    cleanup_free char *path = path_join(in->outdir, req->name);

    if (in->nuploads >= SVC_MAX_UPLOADS)
        return svc_reply_status(svc, &c->peer, req->id, TY_WIRE_BUSY,
                                "too many uploads in progress (%d)",
                                SVC_MAX_UPLOADS),
               -1;
    for (struct svc_upload *u = in->uploads; u != NULL; u = u->next) {
        if (strcmp(u->path, path) == 0)
            return svc_reply_status(svc, &c->peer, req->id, TY_WIRE_BUSY,
                                    "\"%s\" is already being uploaded",
                                    req->name),
                   -1;
    }
    return 0;
}

void
svc_op_upload_begin(struct syncsvc *svc, const struct svc_ctx *c,
                    const struct ty_wire_req *req)
{
    struct svc_inst *in = &svc->inst[c->inst];
    struct svc_upload *u;
    struct ty_wire_resp r;
    char *path;

    if (begin_check(svc, c, req) < 0)
        return;
    path = out_path(in, req->name);
    if (path == NULL) {
        svc_reply_status(svc, &c->peer, req->id, TY_WIRE_IOERR,
                         "%s: cannot make its folder: %s", req->name,
                         strerror(errno));
        return;
    }
    u = xcalloc(1, sizeof(*u));
    u->path = path;
    u->tmp = xasprintf("%s.tmp", path);
    u->fd = open(u->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                 0644);
    if (u->fd < 0) {
        svc_reply_status(svc, &c->peer, req->id, TY_WIRE_IOERR, "%s: %s",
                         u->tmp, strerror(errno));
        free(u->path);
        free(u->tmp);
        free(u);
        return;
    }
    u->uid = ++svc->next_upload;
    u->inst = c->inst;
    u->size = req->size;
    u->timer.kind = SVC_T_UPLOAD;
    u->timer.at = svc_deadline(SVC_UPLOAD_IDLE_MS);
    svc_heap_push(&svc->timers, &u->timer);
    u->next = in->uploads;
    in->uploads = u;
    in->nuploads++;
    ty__wire_resp_init(&r, req->id);
    r.upload = u->uid;
    svc_reply(svc, &c->peer, &r);
}

static struct svc_upload *
upload_lookup(struct syncsvc *svc, const struct svc_ctx *c,
              const struct ty_wire_req *req)
{
    struct svc_upload *u = upload_find(&svc->inst[c->inst], req->upload);

    if (u == NULL)
        svc_reply_status(svc, &c->peer, req->id, TY_WIRE_NOTFOUND,
                         "no upload %lld in progress", (long long)req->upload);
    return u;
}

void
svc_op_upload_chunk(struct syncsvc *svc, const struct svc_ctx *c,
                    const struct ty_wire_req *req)
{
    struct svc_upload *u = upload_lookup(svc, c, req);

    if (u == NULL)
        return;
    if (req->offset != u->received ||
        u->received + (int64_t)req->len > u->size) {
        svc_reply_status(svc, &c->peer, req->id, TY_WIRE_INVALID,
                         "upload %lld: chunk at %lld of %zu bytes does not "
                         "follow %lld of %lld bytes; upload dropped",
                         (long long)u->uid, (long long)req->offset, req->len,
                         (long long)u->received, (long long)u->size);
        upload_drop(svc, u);
        return;
    }
    if (fd_write_all(u->fd, req->data, req->len) < 0) {
        svc_reply_status(svc, &c->peer, req->id, TY_WIRE_IOERR,
                         "%s: write: %s; upload dropped", u->tmp,
                         strerror(errno));
        upload_drop(svc, u);
        return;
    }
    u->received += (int64_t)req->len;
    svc_heap_remove(&svc->timers, &u->timer);
    u->timer.at = svc_deadline(SVC_UPLOAD_IDLE_MS);
    svc_heap_push(&svc->timers, &u->timer);
    svc_reply_status(svc, &c->peer, req->id, TY_WIRE_OK, NULL);
}

void
svc_op_upload_end(struct syncsvc *svc, const struct svc_ctx *c,
                  const struct ty_wire_req *req)
{
    struct svc_upload *u = upload_lookup(svc, c, req);
    int fd;

    if (u == NULL)
        return;
    if (u->received != u->size) {
        svc_reply_status(svc, &c->peer, req->id, TY_WIRE_INVALID,
                         "upload %lld ended at %lld of %lld bytes; dropped",
                         (long long)u->uid, (long long)u->received,
                         (long long)u->size);
        upload_drop(svc, u);
        return;
    }
    fd = u->fd;
    u->fd = -1;
    if (close(fd) < 0 || rename(u->tmp, u->path) < 0) {
        svc_reply_status(svc, &c->peer, req->id, TY_WIRE_IOERR, "%s: %s",
                         u->path, strerror(errno));
        unlink(u->tmp);
    } else {
        svc_reply_status(svc, &c->peer, req->id, TY_WIRE_OK, NULL);
    }
    upload_drop(svc, u);
}

void
svc_op_upload_abort(struct syncsvc *svc, const struct svc_ctx *c,
                    const struct ty_wire_req *req)
{
    struct svc_upload *u = upload_lookup(svc, c, req);

    if (u == NULL)
        return;
    upload_drop(svc, u);
    svc_reply_status(svc, &c->peer, req->id, TY_WIRE_OK, NULL);
}

void
svc_op_append(struct syncsvc *svc, const struct svc_ctx *c,
              const struct ty_wire_req *req)
{
    cleanup_free char *path = out_path(&svc->inst[c->inst], req->name);
    cleanup_close int fd = -1;

    if (path != NULL)
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                  0644);
    if (fd < 0 || fd_write_all(fd, req->data, req->len) < 0) {
        svc_reply_status(svc, &c->peer, req->id, TY_WIRE_IOERR, "%s: %s",
                         req->name, strerror(errno));
        return;
    }
    svc_reply_status(svc, &c->peer, req->id, TY_WIRE_OK, NULL);
}

void
svc_upload_timeout(struct syncsvc *svc, struct svc_upload *u)
{
    upload_drop(svc, u);
}

void
svc_upload_drop_all(struct syncsvc *svc, int inst)
{
    while (svc->inst[inst].uploads != NULL)
        upload_drop(svc, svc->inst[inst].uploads);
}
