/*
 * http.c — the HTTP API on loopback (libmicrohttpd, a thread per
 * connection): every /api route wants `Authorization: Bearer TOKEN`
 * (401 otherwise), answers JSON, and errors are {"error", "status"} with
 * the exit status the command line should use. Routes are a table.
 * Every other path is the dashboard's (dash.c).
 */
#include "daemon/daemon_int.h"

#include "base/log.h"
#include "base/strbuf.h"
#include "base/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BODY_MAX ((size_t)64 << 10)
#define LOG_CHUNK ((size_t)1 << 20)

struct req {
    struct strbuf body;
    bool too_big;
};

struct ctx {
    struct daemon *d;
    struct MHD_Connection *conn;
    const struct req *rq;
    int64_t id;
};

static enum MHD_Result
send_buf(struct MHD_Connection *conn, unsigned status, char *buf, size_t len,
         const char *type, bool done)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result rc;

    MHD_add_response_header(resp, "Content-Type", type);
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    if (done)
        MHD_add_response_header(resp, "X-Testyard-Done", "1");
    rc = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result
send_json(struct MHD_Connection *conn, unsigned status, cJSON *o)
{
    char *text = cJSON_PrintUnformatted(o);
    size_t len = strlen(text);

    cJSON_Delete(o);
    text = xrealloc(text, len + 2);
    memcpy(text + len, "\n", 2);
    return send_buf(conn, status, text, len + 1, "application/json", false);
}

static enum MHD_Result
send_error(struct MHD_Connection *conn, unsigned status, const char *msg,
           int exit_status)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "error", msg);
    cJSON_AddNumberToObject(o, "status", exit_status);
    return send_json(conn, status, o);
}

static enum MHD_Result
send_err(struct MHD_Connection *conn, unsigned status, const struct err *e)
{
    if (e->code == ENOENT && e->status == EXIT_NOINPUT)
        status = 404;
    return send_error(conn, status, e->msg,
                      e->status ? e->status : EXIT_SOFTWARE);
}

static enum MHD_Result
list(const struct ctx *c)
{
    struct daemon_task *v = NULL;
    struct err err = {0};
    size_t n = 0;
    cJSON *arr;
    int rc;

    pthread_mutex_lock(&c->d->mu);
    rc = daemon__tasks_load(c->d->db, NULL, &v, &n, &err);
    pthread_mutex_unlock(&c->d->mu);
    if (rc < 0)
        return send_err(c->conn, 500, &err);
    arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON_AddItemToArray(arr, daemon__task_json(&v[i], c->d->data));
        daemon__task_release(&v[i]);
    }
    free(v);
    return send_json(c->conn, 200, arr);
}

static cJSON *
parse_body(const struct ctx *c)
{
    cJSON *req = c->rq->too_big ? NULL : cJSON_Parse(c->rq->body.buf);

    if (req != NULL && !cJSON_IsObject(req)) {
        cJSON_Delete(req);
        return NULL;
    }
    return req;
}

static enum MHD_Result
submit(const struct ctx *c)
{
    cJSON *req = parse_body(c);
    struct daemon_task t = {0};
    struct err err = {0};
    int http = 500;
    enum MHD_Result rc;

    if (req == NULL) {
        return send_error(c->conn, 400, "expected a JSON object", EXIT_USAGE);
    }
    if (daemon__submit(c->d, req, &t, &http, &err) < 0)
        rc = send_err(c->conn, (unsigned)http, &err);
    else
        rc = send_json(c->conn, 201, daemon__task_json(&t, c->d->data));
    daemon__task_release(&t);
    cJSON_Delete(req);
    return rc;
}

static enum MHD_Result
one(const struct ctx *c)
{
    struct daemon_task t = {0};
    struct err err = {0};
    int rc;

    pthread_mutex_lock(&c->d->mu);
    rc = daemon__task_get(c->d->db, c->id, &t, &err);
    pthread_mutex_unlock(&c->d->mu);
    if (rc < 0)
        return send_err(c->conn, 500, &err);
    cJSON *o = daemon__task_json(&t, c->d->data);
    daemon__task_release(&t);
    return send_json(c->conn, 200, o);
}

static enum MHD_Result
cancel(const struct ctx *c)
{
    struct daemon_task t = {0};
    struct err err = {0};
    int rc;

    pthread_mutex_lock(&c->d->mu);
    rc = daemon__cancel(c->d, c->id, &t, &err);
    pthread_mutex_unlock(&c->d->mu);
    if (rc < 0) {
        daemon__task_release(&t);
        return send_err(c->conn, 500, &err);
    }
    cJSON *o = daemon__task_json(&t, c->d->data);
    daemon__task_release(&t);
    daemon__wake(c->d);
    return send_json(c->conn, 200, o);
}

/* The size of DATA/tasks/ID/name and an open descriptor (-1, size 0 when
 * it is not there). */
static int
open_part(const struct ctx *c, const char *name, off_t *size)
{
    cleanup_free char *path =
        xasprintf("%s/tasks/%lld/%s", c->d->data, (long long)c->id, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;

    *size = 0;
    if (fd >= 0 && fstat(fd, &st) == 0)
        *size = st.st_size;
    return fd;
}

/* Bytes of the log from ?offset=N, at most LOG_CHUNK: a scheduled task's
 * build.log first, then its run's log, as one stream; done when the task
 * has ended and nothing is left after them. */
static enum MHD_Result
log_part(const struct ctx *c)
{
    const char *off =
        MHD_lookup_connection_value(c->conn, MHD_GET_ARGUMENT_KIND, "offset");
    long long from = off ? strtoll(off, NULL, 10) : 0;
    struct daemon_task t = {0};
    struct err err = {0};
    char *buf = xmalloc(LOG_CHUNK);
    ssize_t n = 0;
    bool ended;
    off_t bsize, lsize;
    int bfd, fd, rc;

    pthread_mutex_lock(&c->d->mu);
    rc = daemon__task_get(c->d->db, c->id, &t, &err);
    pthread_mutex_unlock(&c->d->mu);
    ended = daemon__state_ended(t.state);
    daemon__task_release(&t);
    if (rc < 0) {
        free(buf);
        return send_err(c->conn, 500, &err);
    }
    bfd = open_part(c, "build.log", &bsize);
    fd = open_part(c, "log", &lsize);
    if (from < 0)
        from = 0;
    if (bfd >= 0 && from < bsize)
        n = pread(bfd, buf, LOG_CHUNK, (off_t)from);
    else if (fd >= 0 && from - bsize < lsize)
        n = pread(fd, buf, LOG_CHUNK, (off_t)(from - bsize));
    if (n < 0)
        n = 0;
    ended = ended && from + n >= bsize + lsize;
    for (int *p = (int[]){bfd, fd, -2}; *p != -2; p++)
        if (*p >= 0)
            close(*p);
    return send_buf(c->conn, 200, buf, (size_t)n, "text/plain; charset=utf-8",
                    ended);
}

static enum MHD_Result
schedule_add(const struct ctx *c)
{
    cJSON *req = parse_body(c), *out = NULL;
    struct err err = {0};
    int http = 500;

    if (req == NULL)
        return send_error(c->conn, 400, "expected a JSON object", EXIT_USAGE);
    if (daemon__schedule_add(c->d, req, &out, &http, &err) < 0) {
        cJSON_Delete(req);
        return send_err(c->conn, (unsigned)http, &err);
    }
    cJSON_Delete(req);
    return send_json(c->conn, 201, out);
}

/* /api/schedules[/NAME[/pause|/resume]] */
static enum MHD_Result
schedules(const struct ctx *c, const char *method, const char *rest)
{
    char name[128];
    const char *slash, *what;
    cJSON *out = NULL;
    struct err err = {0};
    size_t len;

    if (rest[0] == '\0' && strcmp(method, "GET") == 0) {
        if (daemon__schedules_json(c->d, &out, &err) < 0)
            return send_err(c->conn, 500, &err);
        return send_json(c->conn, 200, out);
    }
    if (rest[0] == '\0' && strcmp(method, "POST") == 0)
        return schedule_add(c);
    if (rest[0] != '/' || rest[1] == '\0')
        return send_error(c->conn, 404, "no such route", EXIT_USAGE);
    rest++;
    slash = strchr(rest, '/');
    len = slash ? (size_t)(slash - rest) : strlen(rest);
    if (len >= sizeof(name))
        return send_error(c->conn, 404, "no such schedule", EXIT_NOINPUT);
    memcpy(name, rest, len);
    name[len] = '\0';
    if (slash == NULL && strcmp(method, "DELETE") == 0)
        what = "remove";
    else if (slash && strcmp(slash, "/pause") == 0 &&
             strcmp(method, "POST") == 0)
        what = "pause";
    else if (slash && strcmp(slash, "/resume") == 0 &&
             strcmp(method, "POST") == 0)
        what = "resume";
    else
        return send_error(c->conn, 404, "no such route", EXIT_USAGE);
    if (daemon__schedule_change(c->d, name, what, &err) < 0)
        return send_err(c->conn, err.code == ENOENT ? 404 : 500, &err);
    out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "name", name);
    cJSON_AddStringToObject(out, "done", what);
    return send_json(c->conn, 200, out);
}

struct route {
    const char *method;
    const char *suffix; /* after /api/tasks/ID; NULL: /api/tasks itself */
    enum MHD_Result (*fn)(const struct ctx *c);
};

static const struct route routes[] = {
    {"GET", NULL, list},       {"POST", NULL, submit},      {"GET", "", one},
    {"GET", "/log", log_part}, {"POST", "/cancel", cancel},
};

/* The route for method and url, with the task id in c->id. */
static const struct route *
route_of(const char *method, const char *url, int64_t *id)
{
    const char *rest = NULL;
    char *end;

    if (strcmp(url, "/api/tasks") != 0) {
        if (strncmp(url, "/api/tasks/", 11) != 0 || url[11] < '1' ||
            url[11] > '9')
            return NULL;
        *id = strtoll(url + 11, &end, 10);
        rest = end;
    }
    for (size_t i = 0; i < ARRAY_LEN(routes); i++)
        if (strcmp(routes[i].method, method) == 0 &&
            ((rest == NULL && routes[i].suffix == NULL) ||
             (rest != NULL && routes[i].suffix != NULL &&
              strcmp(rest, routes[i].suffix) == 0)))
            return &routes[i];
    return NULL;
}

static bool
authorized(struct daemon *d, struct MHD_Connection *conn)
{
    const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_AUTHORIZATION);

    return h != NULL && strncmp(h, "Bearer ", 7) == 0 &&
           daemon__token_equal(h + 7, d->token);
}

static enum MHD_Result
answer(struct daemon *d, struct MHD_Connection *conn, const char *url,
       const char *method, const struct req *rq)
{
    struct ctx c = {d, conn, rq, 0};
    const struct route *r;

    if (strncmp(url, "/api/", 5) != 0)
        return daemon__dash(d, conn, url, method,
                            rq->too_big || rq->body.buf == NULL ? ""
                                                                : rq->body.buf);
    if (!authorized(d, conn))
        return send_error(conn, 401,
                          "missing or wrong bearer token (see DATA/token)",
                          EXIT_USAGE);
    if (strncmp(url, "/api/schedules", 14) == 0)
        return schedules(&c, method, url + 14);
    if ((r = route_of(method, url, &c.id)) == NULL)
        return send_error(conn, 404, "no such route", EXIT_USAGE);
    return r->fn(&c);
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *conn, const char *url,
       const char *method, const char *version, const char *upload,
       size_t *upload_size, void **con_cls)
{
    struct req *rq = *con_cls;

    (void)version;
    if (rq == NULL) {
        rq = xcalloc(1, sizeof(*rq));
        strbuf_init(&rq->body);
        *con_cls = rq;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (rq->body.len + *upload_size > BODY_MAX)
            rq->too_big = true;
        else
            strbuf_add(&rq->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    return answer(cls, conn, url, method, rq);
}

static void
completed(void *cls, struct MHD_Connection *conn, void **con_cls,
          enum MHD_RequestTerminationCode toe)
{
    struct req *rq = *con_cls;

    (void)cls;
    (void)conn;
    (void)toe;
    if (rq == NULL)
        return;
    strbuf_release(&rq->body);
    free(rq);
    *con_cls = NULL;
}

struct MHD_Daemon *
daemon__http_start(struct daemon *d, const char *addr, unsigned port,
                   unsigned *bound, struct err *err)
{
    struct sockaddr_in sin = {.sin_family = AF_INET,
                              .sin_port = htons((uint16_t)port)};
    struct MHD_Daemon *mhd;
    const union MHD_DaemonInfo *info;

    inet_pton(AF_INET, addr, &sin.sin_addr);
    mhd = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
            MHD_USE_ERROR_LOG,
        (uint16_t)port, NULL, NULL, handle, d, MHD_OPTION_SOCK_ADDR, &sin,
        MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
        MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_CONNECTION_TIMEOUT, 120u,
        MHD_OPTION_END);
    if (mhd == NULL)
        return err_sys(err, errno ? errno : EADDRINUSE, "listening on %s:%u",
                       addr, port),
               NULL;
    info = MHD_get_daemon_info(mhd, MHD_DAEMON_INFO_BIND_PORT);
    *bound = info ? info->port : port;
    return mhd;
}

void
daemon__http_stop(struct MHD_Daemon **mhd)
{
    if (*mhd == NULL)
        return;
    MHD_stop_daemon(*mhd);
    *mhd = NULL;
}
