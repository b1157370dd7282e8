/*
 * docker.c — the Docker client's core: the handle (host parsing, API
 * version negotiation), cancellation tokens, and docker__call(), through
 * which every endpoint in docker_*.c sends its request.
 *
 * Each call makes its own curl easy handle and runs it in its own multi
 * handle, so the struct docker is shared read-only between threads and a
 * cancellation token can wake a call blocked in curl_multi_poll() with
 * curl_multi_wakeup(). The engine answers on a unix socket
 * (CURLOPT_UNIX_SOCKET_PATH, with a placeholder host in the URL) or on TCP.
 */
#include "docker/docker_int.h"

#include "base/log.h"
#include "base/strbuf.h"
#include "ty_units.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define CONNECT_TIMEOUT_MS 10000
#define CALL_TIMEOUT_MS 60000         /* short calls; a stream's headers */
#define MAX_BODY (256u * 1024 * 1024) /* a collected answer */

struct docker {
    char *host;     /* unix:///path or tcp://host:port */
    char *sockpath; /* the unix socket, NULL for tcp */
    char *base;     /* http://docker or http://host:port */
    char api[16];   /* negotiated */
    char engine[64];
    char engine_api[16];
    char engine_min_api[16];
    int64_t call_ms;             /* overall bound of a short call */
    int64_t connect_ms;          /* bound of a connect */
    struct docker_cancel *abort; /* docker_abort(): every call, for good */
};

struct docker_cancel {
    pthread_mutex_t mu;
    bool fired;
    CURLM **waiting; /* multi handles of calls in progress */
    size_t n, cap;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void
curl_init_once(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        fatalx("curl_global_init failed");
}

/* --- cancellation ------------------------------------------------------ */

struct docker_cancel *
docker_cancel_new(void)
{
    struct docker_cancel *c = xcalloc(1, sizeof(*c));

    pthread_mutex_init(&c->mu, NULL);
    return c;
}

void
docker_cancel_destroy(struct docker_cancel **cp)
{
    struct docker_cancel *c = *cp;

    if (c == NULL)
        return;
    pthread_mutex_destroy(&c->mu);
    free(c->waiting);
    free(c);
    *cp = NULL;
}

void
docker_cancel_fire(struct docker_cancel *c)
{
    pthread_mutex_lock(&c->mu);
    c->fired = true;
    for (size_t i = 0; i < c->n; i++)
        curl_multi_wakeup(c->waiting[i]);
    pthread_mutex_unlock(&c->mu);
}

bool
docker_cancel_fired(struct docker_cancel *c)
{
    bool fired;

    pthread_mutex_lock(&c->mu);
    fired = c->fired;
    pthread_mutex_unlock(&c->mu);
    return fired;
}

static void
cancel_watch(struct docker_cancel *c, CURLM *m)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    xgrow(&c->waiting, &c->cap, c->n + 1, sizeof(*c->waiting));
    c->waiting[c->n++] = m;
    pthread_mutex_unlock(&c->mu);
}

static void
cancel_unwatch(struct docker_cancel *c, CURLM *m)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n; i++) {
        if (c->waiting[i] == m) {
            c->waiting[i] = c->waiting[--c->n];
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
}

/* --- one call ------------------------------------------------------------ */

struct call {
    const struct docker_req *req;
    struct docker_resp *resp;
    CURL *h;
    int cb_rc; /* what on_data last returned */
    struct err cb_err;
    bool ready_sent;
    bool headers_done; /* the answer's headers arrived */
};

static void
trim_value(char *dst, size_t size, const char *p, size_t len)
{
    while (len > 0 && (*p == ' ' || *p == '\t')) {
        p++;
        len--;
    }
    while (len > 0 &&
           (p[len - 1] == '\r' || p[len - 1] == '\n' || p[len - 1] == ' '))
        len--;
    if (len >= size)
        len = size - 1;
    memcpy(dst, p, len);
    dst[len] = '\0';
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
    struct call *c = arg;
    size_t len = size * n;
    static const char api[] = "api-version:";

    if (len > sizeof(api) - 1 && strncasecmp(p, api, sizeof(api) - 1) == 0)
        trim_value(c->resp->api_version, sizeof(c->resp->api_version),
                   p + sizeof(api) - 1, len - (sizeof(api) - 1));
    if (len <= 2 && (p[0] == '\r' || p[0] == '\n')) {
        c->headers_done = true;
        curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &c->resp->status);
        if (c->resp->status >= 200 && c->resp->status < 300 &&
            c->req->on_ready && !c->ready_sent) {
            c->ready_sent = true;
            c->req->on_ready(c->req->ready_arg);
        }
    }
    return len;
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
    struct call *c = arg;
    size_t len = size * n;

    if (c->resp->status == 0)
        curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &c->resp->status);
    if (c->req->on_data && c->resp->status >= 200 && c->resp->status < 300) {
        c->cb_rc = c->req->on_data(c->req->arg, p, len, &c->cb_err);
        return c->cb_rc == 0 ? len : 0;
    }
    if (c->resp->body.len + len > MAX_BODY) {
        c->cb_rc = err_set(&c->cb_err, EFBIG, "answer over %u bytes", MAX_BODY);
        return 0;
    }
    strbuf_add(&c->resp->body, p, len);
    return len;
}

static size_t
on_upload(char *p, size_t size, size_t n, void *arg)
{
    const struct docker_req *r = arg;
    ssize_t got;

    do
        got = read(r->body_fd, p, size * n);
    while (got < 0 && errno == EINTR);
    return got < 0 ? CURL_READFUNC_ABORT : (size_t)got;
}

static char *
call_url(const struct docker *d, const struct docker_req *r)
{
    if (r->unversioned)
        return xasprintf("%s%s", d->base, r->path);
    return xasprintf("%s/v%s%s", d->base, d->api, r->path);
}

static void
set_body(CURL *h, const struct docker_req *r)
{
    if (r->body_fd >= 0) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, on_upload);
        curl_easy_setopt(h, CURLOPT_READDATA, r);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                         (curl_off_t)r->body_size);
    } else if (strcmp(r->method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body ? r->body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                         (curl_off_t)r->body_len);
    } else if (strcmp(r->method, "GET") != 0) {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
    }
}

static long
call_timeout_ms(const struct docker *d, const struct docker_req *r)
{
    if (r->stream)
        return 0;
    if (r->timeout_ms > 0 && r->timeout_ms < d->call_ms)
        return (long)r->timeout_ms;
    return (long)d->call_ms;
}

static struct curl_slist *
call_setup(struct docker *d, struct call *c, const char *url)
{
    const struct docker_req *r = c->req;
    struct curl_slist *hdrs = curl_slist_append(NULL, "Expect:");
    CURL *h = c->h;

    if (r->ctype) {
        char line[128];

        snprintf(line, sizeof(line), "Content-Type: %s", r->ctype);
        hdrs = curl_slist_append(hdrs, line);
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    if (d->sockpath)
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, d->sockpath);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)d->connect_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, call_timeout_ms(d, r));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
    set_body(h, r);
    return hdrs;
}

/* A stream whose headers have not come by then is given up on. */
static bool
headers_late(const struct call *c, int64_t until_ns)
{
    return c->req->stream && !c->headers_done && now_mono_ns() > until_ns;
}

static bool
call_canceled(const struct docker *d, const struct docker_req *r)
{
    return (r->cancel && docker_cancel_fired(r->cancel)) ||
           docker_cancel_fired(d->abort);
}

/* Drive the transfer until it ends, the token (or the handle's abort)
 * fires, or a stream's headers are late. Returns 0 with *result set, 1
 * when canceled. */
static int
run_multi(struct docker *d, struct call *c, CURLcode *result)
{
    CURLM *m = curl_multi_init();
    int64_t until = now_mono_ns() + d->call_ms * 1000000;
    int running = 1, canceled = 0;
    CURLMsg *msg;
    int left;

    if (m == NULL)
        fatalx("curl_multi_init failed");
    curl_multi_add_handle(m, c->h);
    cancel_watch(c->req->cancel, m);
    cancel_watch(d->abort, m);
    *result = CURLE_OK;
    while (running) {
        if (curl_multi_perform(m, &running) != CURLM_OK) {
            *result = CURLE_RECV_ERROR;
            break;
        }
        if (call_canceled(d, c->req)) {
            canceled = 1;
            break;
        }
        if (running && headers_late(c, until)) {
            *result = CURLE_OPERATION_TIMEDOUT;
            break;
        }
        if (running)
            curl_multi_poll(m, NULL, 0, 1000, NULL);
    }
    while ((msg = curl_multi_info_read(m, &left)) != NULL)
        if (msg->msg == CURLMSG_DONE && !canceled)
            *result = msg->data.result;
    cancel_unwatch(d->abort, m);
    cancel_unwatch(c->req->cancel, m);
    curl_multi_remove_handle(m, c->h);
    curl_multi_cleanup(m);
    return canceled;
}

/* How to fix a connection failure, from the socket's errno. */
static const char *
connect_hint(long oserr)
{
    static const struct {
        long code;
        const char *hint;
    } hints[] = {
        {ENOENT, " (no socket there: start the engine with dockerd or "
                 "scripts/docker-up, or point DOCKER_HOST at one)"},
        {ECONNREFUSED, " (nothing listens: start dockerd, or point "
                       "DOCKER_HOST at a running engine)"},
        {EACCES, " (permission denied on the socket: run as root or join "
                 "the docker group: usermod -aG docker $USER, then log in "
                 "again)"},
        {EPERM, " (not permitted: run as root or join the docker group)"},
    };

    for (size_t i = 0; i < ARRAY_LEN(hints); i++)
        if (hints[i].code == oserr)
            return hints[i].hint;
    return "";
}

/* The path without its query, for messages. */
static int
path_len(const char *path)
{
    const char *q = strchr(path, '?');

    return q ? (int)(q - path) : (int)strlen(path);
}

static int
transport_error(const struct docker *d, struct call *c, CURLcode rc,
                struct err *err)
{
    long oserr = 0;
    int code = EIO;

    curl_easy_getinfo(c->h, CURLINFO_OS_ERRNO, &oserr);
    if (rc == CURLE_OPERATION_TIMEDOUT)
        code = ETIMEDOUT;
    else if (oserr > 0)
        code = (int)oserr;
    if (rc == CURLE_COULDNT_CONNECT)
        err_set(err, code, "cannot reach the Docker engine at %s: %s%s",
                d->host, oserr ? strerror((int)oserr) : "connection failed",
                connect_hint(oserr));
    else if (rc == CURLE_OPERATION_TIMEDOUT)
        err_set(err, code, "Docker engine at %s: %s %.*s: no answer in time",
                d->host, c->req->method, path_len(c->req->path), c->req->path);
    else
        err_set(err, code, "Docker engine at %s: %s %.*s: %s", d->host,
                c->req->method, path_len(c->req->path), c->req->path,
                curl_easy_strerror(rc));
    return err_status(err, EXIT_UNAVAILABLE);
}

static int
http_errno(long status)
{
    static const struct {
        long status;
        int code;
    } map[] = {
        {400, EINVAL}, {401, EACCES}, {403, EACCES},
        {404, ENOENT}, {409, EBUSY},  {304, EALREADY},
    };

    for (size_t i = 0; i < ARRAY_LEN(map); i++)
        if (map[i].status == status)
            return map[i].code;
    return EIO;
}

static int
http_error(const struct call *c, struct err *err)
{
    const struct docker_resp *resp = c->resp;
    cJSON *j = cJSON_ParseWithLength(resp->body.buf ? resp->body.buf : "",
                                     resp->body.len);
    const char *msg = docker__str(j, "message");
    char raw[256];

    if (msg == NULL) {
        trim_value(raw, sizeof(raw), resp->body.buf ? resp->body.buf : "",
                   resp->body.len);
        msg = raw[0] ? raw : "(no message)";
    }
    err_set(err, http_errno(resp->status),
            "Docker engine: %s %.*s: HTTP %ld: %s", c->req->method,
            path_len(c->req->path), c->req->path, resp->status, msg);
    cJSON_Delete(j);
    return -1;
}

/* Turn the outcome of a transfer into 0 / -1. */
static int
call_result(struct docker *d, struct call *c, int canceled, CURLcode rc,
            struct err *err)
{
    if (canceled)
        return err_set(err, ECANCELED, "%s %.*s: canceled%s", c->req->method,
                       path_len(c->req->path), c->req->path,
                       docker_cancel_fired(d->abort)
                           ? " (the engine was given up on)"
                           : "");
    if (c->cb_rc < 0) {
        *err = c->cb_err;
        return -1;
    }
    if (c->cb_rc > 0) /* the consumer stopped the stream */
        return 0;
    if (rc != CURLE_OK)
        return transport_error(d, c, rc, err);
    curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &c->resp->status);
    if (c->resp->status >= 400)
        return http_error(c, err);
    return 0;
}

int
docker__call(struct docker *d, const struct docker_req *r,
             struct docker_resp *resp, struct err *err)
{
    struct call c = {.req = r, .resp = resp};
    cleanup_free char *url = call_url(d, r);
    struct curl_slist *hdrs;
    CURLcode rc;
    int canceled, ret;

    memset(resp, 0, sizeof(*resp));
    strbuf_init(&resp->body);
    if ((c.h = curl_easy_init()) == NULL)
        fatalx("curl_easy_init failed");
    hdrs = call_setup(d, &c, url);
    canceled = run_multi(d, &c, &rc);
    ret = call_result(d, &c, canceled, rc, err);
    curl_easy_cleanup(c.h);
    curl_slist_free_all(hdrs);
    return ret;
}

void
docker__resp_release(struct docker_resp *resp)
{
    strbuf_release(&resp->body);
}

static int
call_body(struct docker *d, const char *method, const char *path,
          const cJSON *body, struct docker_resp *resp, struct err *err)
{
    cleanup_free char *text = body ? cJSON_PrintUnformatted(body) : NULL;
    struct docker_req r = {
        .method = method,
        .path = path,
        .body_fd = -1,
        .ctype = body ? "application/json" : NULL,
        .body = text,
        .body_len = text ? strlen(text) : 0,
    };

    return docker__call(d, &r, resp, err);
}

cJSON *
docker__call_json(struct docker *d, const char *method, const char *path,
                  const cJSON *body, struct err *err)
{
    struct docker_resp resp;
    cJSON *j = NULL;

    if (call_body(d, method, path, body, &resp, err) == 0) {
        j = cJSON_ParseWithLength(resp.body.buf ? resp.body.buf : "",
                                  resp.body.len);
        if (j == NULL)
            err_set(err, EPROTO, "Docker engine: %s %.*s: answer is not JSON",
                    method, path_len(path), path);
    }
    docker__resp_release(&resp);
    return j;
}

int
docker__call_simple(struct docker *d, const char *method, const char *path,
                    const cJSON *body, struct err *err)
{
    struct docker_resp resp;
    int rc = call_body(d, method, path, body, &resp, err);

    docker__resp_release(&resp);
    return rc;
}

/* --- the handle ---------------------------------------------------------- */

/* Split host into the socket path or the base URL. */
static int
parse_host(struct docker *d, const char *host, struct err *err)
{
    if (strncmp(host, "unix://", 7) == 0 && host[7] != '\0') {
        d->sockpath = xstrdup(host + 7);
        d->base = xstrdup("http://docker");
    } else if (strncmp(host, "tcp://", 6) == 0 && host[6] != '\0') {
        const char *hp = host + 6;
        size_t len = strcspn(hp, "/");

        if (memchr(hp, ':', len) != NULL)
            d->base = xasprintf("http://%.*s", (int)len, hp);
        else
            d->base = xasprintf("http://%.*s:2375", (int)len, hp);
    } else {
        return err_set(err, EINVAL,
                       "DOCKER_HOST \"%s\": expected unix:///path/to/socket "
                       "or tcp://host:port",
                       host);
    }
    d->host = xstrdup(host);
    return 0;
}

/* "1.41" as 1041; -1 when it is not a version. */
static int
api_num(const char *v)
{
    int major, minor;
    char extra;

    if (v == NULL || sscanf(v, "%d.%d%c", &major, &minor, &extra) != 2 ||
        major < 0 || minor < 0 || minor > 999)
        return -1;
    return major * 1000 + minor;
}

/* min(ours, engine's), raised to the engine's minimum. */
static void
pick_api(struct docker *d)
{
    int ours = api_num(DOCKER_API_NEWEST);
    int theirs = api_num(d->engine_api);
    int min = api_num(d->engine_min_api);
    int v = theirs > 0 && theirs < ours ? theirs : ours;

    if (min > v)
        v = min;
    snprintf(d->api, sizeof(d->api), "%d.%d", v / 1000, v % 1000);
}

static void
copy_field(char *dst, size_t size, const char *src)
{
    size_t n = src ? strnlen(src, size - 1) : 0;

    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

static int
negotiate(struct docker *d, struct err *err)
{
    struct docker_req r = {
        .method = "GET", .path = "/_ping", .unversioned = true, .body_fd = -1};
    struct docker_resp resp;
    cJSON *v;

    if (docker__call(d, &r, &resp, err) < 0) {
        docker__resp_release(&resp);
        return -1;
    }
    copy_field(d->engine_api, sizeof(d->engine_api), resp.api_version);
    docker__resp_release(&resp);
    r.path = "/version";
    if (docker__call(d, &r, &resp, err) < 0) {
        docker__resp_release(&resp);
        return -1;
    }
    v = cJSON_ParseWithLength(resp.body.buf ? resp.body.buf : "",
                              resp.body.len);
    docker__resp_release(&resp);
    if (docker__str(v, "ApiVersion"))
        copy_field(d->engine_api, sizeof(d->engine_api),
                   docker__str(v, "ApiVersion"));
    copy_field(d->engine_min_api, sizeof(d->engine_min_api),
               docker__str(v, "MinAPIVersion"));
    copy_field(d->engine, sizeof(d->engine), docker__str(v, "Version"));
    cJSON_Delete(v);
    pick_api(d);
    return 0;
}

/* TESTYARD_DOCKER_TIMEOUT (a duration) bounds short calls and a
 * stream's wait for its headers; a connect gets at most 10 s of it. */
static int
set_timeouts(struct docker *d, int64_t max_ms, struct err *err)
{
    const char *v = getenv("TESTYARD_DOCKER_TIMEOUT");
    int64_t ns;
    char why[128];

    d->call_ms = CALL_TIMEOUT_MS;
    if (v != NULL && v[0] != '\0') {
        if (ty__parse_duration(v, &ns, why, sizeof(why)) < 0 || ns < 1000000)
            return err_set(err, EINVAL,
                           "TESTYARD_DOCKER_TIMEOUT \"%s\": expected a "
                           "duration like 60s",
                           v);
        d->call_ms = ns / 1000000;
    }
    if (max_ms > 0 && max_ms < d->call_ms)
        d->call_ms = max_ms;
    d->connect_ms =
        d->call_ms < CONNECT_TIMEOUT_MS ? d->call_ms : CONNECT_TIMEOUT_MS;
    return 0;
}

struct docker *
docker_new(const char *host, struct err *err)
{
    return docker_new_within(host, 0, err);
}

struct docker *
docker_new_within(const char *host, int64_t max_call_ms, struct err *err)
{
    struct docker *d = xcalloc(1, sizeof(*d));

    pthread_once(&curl_once, curl_init_once);
    d->abort = docker_cancel_new();
    if (set_timeouts(d, max_call_ms, err) < 0) {
        docker_destroy(&d);
        return NULL;
    }
    if (host == NULL || host[0] == '\0')
        host = getenv("DOCKER_HOST");
    if (host == NULL || host[0] == '\0')
        host = DOCKER_DEFAULT_HOST;
    if (parse_host(d, host, err) < 0 || negotiate(d, err) < 0) {
        docker_destroy(&d);
        return NULL;
    }
    log_debug("docker: %s, engine %s (API %s..%s), speaking %s", d->host,
              d->engine, d->engine_min_api, d->engine_api, d->api);
    return d;
}

void
docker_destroy(struct docker **dp)
{
    struct docker *d = *dp;

    if (d == NULL)
        return;
    free(d->host);
    free(d->sockpath);
    free(d->base);
    docker_cancel_destroy(&d->abort);
    free(d);
    *dp = NULL;
}

void
docker_abort(struct docker *d)
{
    docker_cancel_fire(d->abort);
}

bool
docker_aborted(struct docker *d)
{
    return docker_cancel_fired(d->abort);
}

int64_t
docker_call_timeout_ms(const struct docker *d)
{
    return d->call_ms;
}

const char *
docker_host(const struct docker *d)
{
    return d->host;
}

const char *
docker_api_version(const struct docker *d)
{
    return d->api;
}

const char *
docker_engine_version(const struct docker *d)
{
    return d->engine;
}

const char *
docker_engine_api(const struct docker *d)
{
    return d->engine_api;
}

const char *
docker_engine_min_api(const struct docker *d)
{
    return d->engine_min_api;
}

/* --- system -------------------------------------------------------------- */

int
docker_ping(struct docker *d, struct err *err)
{
    return docker__call_simple(d, "GET", "/_ping", NULL, err);
}

cJSON *
docker_version(struct docker *d, struct err *err)
{
    return docker__call_json(d, "GET", "/version", NULL, err);
}

cJSON *
docker_info(struct docker *d, struct err *err)
{
    return docker__call_json(d, "GET", "/info", NULL, err);
}
