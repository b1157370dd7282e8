/*
 * docker_logs.c — GET /containers/{id}/logs and POST .../attach,
 * demultiplexed.
 *
 * Without a TTY the engine frames the two streams: each frame is an 8-byte
 * header (stream type: 0 stdin, 1 stdout, 2 stderr; three zero bytes; the
 * payload length, big-endian 32 bits) and the payload. Frames and headers
 * may be cut anywhere by the transport, so the parser keeps its state
 * between pieces. A container with a TTY sends one raw stream; we tell the
 * two apart by the first byte (a frame starts with 0, 1 or 2, text does
 * not) because API 1.41 labels both with the same content type.
 */
#include "docker/docker_int.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

struct demux {
    int (*out)(void *arg, int stream, const char *data, size_t len,
               struct err *err);
    void *arg;
    unsigned char hdr[8];
    size_t hdr_fill;
    uint32_t left; /* payload bytes left in this frame */
    int stream;
    int raw; /* -1 not known yet, 0 framed, 1 raw */
};

static size_t
take_header(struct demux *m, const char *data, size_t len)
{
    size_t n = sizeof(m->hdr) - m->hdr_fill;

    if (n > len)
        n = len;
    memcpy(m->hdr + m->hdr_fill, data, n);
    m->hdr_fill += n;
    if (m->hdr_fill == sizeof(m->hdr)) {
        m->stream = m->hdr[0] == 2 || m->hdr[0] == 3 ? 2 : 1;
        m->left = (uint32_t)m->hdr[4] << 24 | (uint32_t)m->hdr[5] << 16 |
                  (uint32_t)m->hdr[6] << 8 | m->hdr[7];
        m->hdr_fill = 0;
    }
    return n;
}

static int
demux_feed(void *arg, const char *data, size_t len, struct err *err)
{
    struct demux *m = arg;

    if (m->raw < 0 && len > 0)
        m->raw = (unsigned char)data[0] <= 2 ? 0 : 1;
    if (m->raw == 1)
        return m->out(m->arg, 1, data, len, err) < 0 ? -1 : 0;
    while (len > 0) {
        size_t n;

        if (m->left == 0) {
            n = take_header(m, data, len);
        } else {
            n = len < m->left ? len : m->left;
            if (m->out(m->arg, m->stream, data, n, err) < 0)
                return -1;
            m->left -= (uint32_t)n;
        }
        data += n;
        len -= n;
    }
    return 0;
}

static char *
logs_path(const char *id, const struct docker_logs_opts *o)
{
    cleanup_free char *eid = docker__esc_path(id);

    return xasprintf("/containers/%s/logs?stdout=%d&stderr=%d&follow=%d"
                     "&timestamps=%d&since=%lld",
                     eid, !o->no_stdout, !o->no_stderr, o->follow,
                     o->timestamps, (long long)o->since);
}

int
docker_container_logs(struct docker *d, const char *id,
                      const struct docker_logs_opts *o,
                      int (*out)(void *arg, int stream, const char *data,
                                 size_t len, struct err *err),
                      void *arg, struct err *err)
{
    static const struct docker_logs_opts none;
    struct demux m = {.out = out, .arg = arg, .raw = -1};
    cleanup_free char *path = logs_path(id, o ? o : &none);
    struct docker_req r = {
        .method = "GET",
        .path = path,
        .body_fd = -1,
        .stream = o && o->follow,
        .cancel = o ? o->cancel : NULL,
        .on_data = demux_feed,
        .arg = &m,
    };
    struct docker_resp resp;
    int rc = docker__call(d, &r, &resp, err);

    docker__resp_release(&resp);
    if (rc == 0 && (m.left > 0 || m.hdr_fill > 0))
        return err_set(err, EPROTO, "logs of %s: stream cut inside a frame",
                       id);
    return rc;
}

int
docker_container_attach(struct docker *d, const char *id,
                        struct docker_cancel *cancel,
                        void (*ready)(void *ready_arg), void *ready_arg,
                        int (*out)(void *arg, int stream, const char *data,
                                   size_t len, struct err *err),
                        void *arg, struct err *err)
{
    struct demux m = {.out = out, .arg = arg, .raw = -1};
    cleanup_free char *eid = docker__esc_path(id);
    cleanup_free char *path =
        xasprintf("/containers/%s/attach?stream=1&stdout=1&stderr=1", eid);
    struct docker_req r = {
        .method = "POST",
        .path = path,
        .body_fd = -1,
        .stream = true,
        .cancel = cancel,
        .on_data = demux_feed,
        .arg = &m,
        .on_ready = ready,
        .ready_arg = ready_arg,
    };
    struct docker_resp resp;
    int rc = docker__call(d, &r, &resp, err);

    docker__resp_release(&resp);
    return rc;
}

struct fds {
    int out, err;
};

static int
write_fd(void *arg, int stream, const char *data, size_t len, struct err *err)
{
    const struct fds *f = arg;

    if (fd_write_all(stream == 2 ? f->err : f->out, data, len) < 0)
        return err_sys(err, errno, "writing logs");
    return 0;
}

int
docker_container_logs_to_fds(struct docker *d, const char *id,
                             const struct docker_logs_opts *o, int out_fd,
                             int err_fd, struct err *err)
{
    struct fds f = {out_fd, err_fd};

    return docker_container_logs(d, id, o, write_fd, &f, err);
}
