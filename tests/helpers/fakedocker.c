/*
 * fakedocker.c — the fake Docker engine (see fakedocker.h).
 *
 * One accept thread and one thread per connection. Each connection
 * carries one request (the answers say "Connection: close"), read up to
 * its Content-Length, recorded, then answered from the newest matching
 * route. A streaming ("hold") answer has no length and stays open until
 * the client goes away or the fake stops; a pipe written at stop time
 * wakes every thread out of poll().
 */
#include "fakedocker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "th.h"

struct route {
    struct fakedocker_route r;
    char *method, *path, *body, *headers;
    int seen; /* requests that matched method and pattern */
};

struct fakedocker {
    int lfd;
    int stop[2];
    char host[160];
    char sockpath[100];
    char api[16], min_api[16];
    pthread_t acceptor;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    struct route *routes;
    size_t nroutes;
    struct fakedocker_request **reqs;
    size_t nreqs;
    pthread_t *threads;
    size_t nthreads;
    int open;
    bool silent; /* read requests, answer none (a hung engine) */
};

struct conn {
    struct fakedocker *f;
    int fd;
};

static void *
xalloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);

    if (p == NULL)
        abort();
    return p;
}

static void *
xresize(void *p, size_t n)
{
    p = realloc(p, n);
    if (p == NULL)
        abort();
    return p;
}

static char *
dup_or_null(const char *s, size_t len)
{
    char *p;

    if (s == NULL)
        return NULL;
    p = xalloc(len + 1);
    memcpy(p, s, len);
    return p;
}

static char *
dup_str(const char *s)
{
    return s ? dup_or_null(s, strlen(s)) : NULL;
}

/* --- script ------------------------------------------------------------ */

void
fakedocker_route(struct fakedocker *f, const struct fakedocker_route *r)
{
    struct route *n;
    size_t blen = r->body ? (r->body_len ? r->body_len : strlen(r->body)) : 0;

    pthread_mutex_lock(&f->mu);
    f->routes = xresize(f->routes, (f->nroutes + 1) * sizeof(*f->routes));
    n = &f->routes[f->nroutes++];
    memset(n, 0, sizeof(*n));
    n->r = *r;
    n->method = dup_str(r->method);
    n->path = dup_str(r->path);
    n->body = dup_or_null(r->body, blen);
    n->r.body_len = blen;
    n->headers = dup_str(r->headers);
    pthread_mutex_unlock(&f->mu);
}

void
fakedocker_answer(struct fakedocker *f, const char *method, const char *path,
                  int status, const char *body)
{
    struct fakedocker_route r = {
        .method = method, .path = path, .status = status, .body = body};

    fakedocker_route(f, &r);
}

void
fakedocker_fail_nth(struct fakedocker *f, const char *method, const char *path,
                    int nth, int status, const char *body)
{
    struct fakedocker_route r = {.method = method,
                                 .path = path,
                                 .nth = nth,
                                 .status = status,
                                 .body = body};

    fakedocker_route(f, &r);
}

void
fakedocker_set_versions(struct fakedocker *f, const char *api,
                        const char *min_api)
{
    pthread_mutex_lock(&f->mu);
    snprintf(f->api, sizeof(f->api), "%s", api);
    snprintf(f->min_api, sizeof(f->min_api), "%s", min_api);
    pthread_mutex_unlock(&f->mu);
}

/* Pick the answer for a request (under the lock); NULL = none. Every
 * route that matches counts the request, so nth counts are per route. */
static struct route *
pick(struct fakedocker *f, const char *method, const char *path)
{
    struct route *found = NULL;

    for (size_t i = f->nroutes; i-- > 0;) {
        struct route *r = &f->routes[i];

        if ((r->method && strcmp(r->method, method) != 0) ||
            fnmatch(r->path, path, 0) != 0)
            continue;
        r->seen++;
        if (found == NULL && (r->r.nth == 0 || r->r.nth == r->seen))
            found = r;
    }
    return found;
}

/* --- i/o ----------------------------------------------------------------- */

static int
send_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void
sendf(int fd, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n > 0)
        send_all(fd, buf,
                 (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* Wait until fd is readable or hung up, or the fake stops; true when the
 * fake is stopping. ms < 0 waits without a deadline. */
static bool
wait_fd(struct fakedocker *f, int fd, int ms)
{
    struct pollfd p[2] = {{fd, POLLIN, 0}, {f->stop[0], POLLIN, 0}};

    while (poll(p, 2, ms) < 0 && errno == EINTR)
        ;
    return (p[1].revents & POLLIN) != 0;
}

/* Read the request head and body. */
static int
read_request(struct fakedocker *f, int fd, char **head, char **body,
             size_t *blen)
{
    size_t cap = 8192, len = 0, need = 0;
    char *buf = xalloc(cap), *end = NULL, *cl;

    for (;;) {
        ssize_t n;

        if (len + 4096 > cap)
            buf = xresize(buf, cap *= 2);
        if (wait_fd(f, fd, 10000))
            break;
        n = recv(fd, buf + len, cap - len - 1, 0);
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        if (end == NULL && (end = strstr(buf, "\r\n\r\n")) != NULL) {
            cl = strcasestr(buf, "\r\nContent-Length:");
            need = (size_t)(end - buf) + 4 +
                   (cl && cl < end ? strtoull(cl + 17, NULL, 10) : 0);
        }
        if (end != NULL && len >= need)
            break;
    }
    if (end == NULL || len < need) {
        free(buf);
        return -1;
    }
    *head = dup_or_null(buf, (size_t)(end - buf));
    *blen = need - (size_t)(end - buf) - 4;
    *body = dup_or_null(end + 4, *blen);
    free(buf);
    return 0;
}

static void
record(struct fakedocker *f, struct fakedocker_request *req)
{
    pthread_mutex_lock(&f->mu);
    f->reqs = xresize(f->reqs, (f->nreqs + 1) * sizeof(*f->reqs));
    f->reqs[f->nreqs++] = req;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->mu);
}

static int
api_num(const char *v)
{
    int a = 0, b = 0;

    if (sscanf(v, "%d.%d", &a, &b) != 2)
        return -1;
    return a * 1000 + b;
}

/* A path's API version prefix ("/v1.41/info": 1041, and *rest =
 * "/info"); -1 when there is none. */
static int
path_version(const char *path, const char **rest)
{
    int v = -1, n = 0, a, b;

    *rest = path;
    if (sscanf(path, "/v%d.%d%n", &a, &b, &n) == 2 && path[n] == '/') {
        v = a * 1000 + b;
        *rest = path + n;
    }
    return v;
}

static void
send_json(int fd, int status, const char *body)
{
    sendf(fd,
          "HTTP/1.1 %d X\r\nApi-Version: 1.41\r\nContent-Type: "
          "application/json\r\nContent-Length: %zu\r\nConnection: "
          "close\r\n\r\n%s",
          status, strlen(body), body);
}

/* The built-in answers: version checking and the handshake. */
static bool
builtin(struct fakedocker *f, int fd, const char *path)
{
    const char *rest;
    int v = path_version(path, &rest);
    char body[256];

    if (v >= 0 && (v > api_num(f->api) || v < api_num(f->min_api))) {
        snprintf(body, sizeof(body),
                 "{\"message\":\"client version %.10s is not supported "
                 "by this fake\"}",
                 path + 2);
        send_json(fd, 400, body);
        return true;
    }
    if (strcmp(rest, "/_ping") == 0) {
        sendf(fd,
              "HTTP/1.1 200 OK\r\nApi-Version: %s\r\nContent-Type: "
              "text/plain\r\nContent-Length: 2\r\nConnection: close"
              "\r\n\r\nOK",
              f->api);
        return true;
    }
    if (strcmp(rest, "/version") == 0) {
        snprintf(body, sizeof(body),
                 "{\"Version\":\"20.10.24-fake\",\"ApiVersion\":\"%s\","
                 "\"MinAPIVersion\":\"%s\",\"Os\":\"linux\"}",
                 f->api, f->min_api);
        send_json(fd, 200, body);
        return true;
    }
    return false;
}

static void
send_body(struct fakedocker *f, int fd, const struct route *r)
{
    size_t step = r->r.trickle ? r->r.trickle : r->r.body_len;

    for (size_t off = 0; r->body && off < r->r.body_len; off += step) {
        size_t n = r->r.body_len - off < step ? r->r.body_len - off : step;

        if (send_all(fd, r->body + off, n) < 0)
            return;
        if (r->r.trickle)
            wait_fd(f, f->stop[0], 1);
    }
}

static void
answer(struct fakedocker *f, int fd, const struct route *r)
{
    const char *ctype = r->body && (r->body[0] == '{' || r->body[0] == '[')
                            ? "application/json"
                            : "application/octet-stream";

    if (r->r.delay_ms > 0)
        wait_fd(f, f->stop[0], r->r.delay_ms);
    if (r->r.hold) {
        sendf(fd,
              "HTTP/1.1 %d X\r\nContent-Type: %s\r\nConnection: close"
              "\r\n%s\r\n",
              r->r.status, ctype, r->headers ? r->headers : "");
        send_body(f, fd, r);
        while (!wait_fd(f, fd, -1)) {
            char c[256];

            if (recv(fd, c, sizeof(c), 0) <= 0)
                break;
        }
        return;
    }
    sendf(fd,
          "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
          "Connection: close\r\n%s\r\n",
          r->r.status, ctype, r->r.body_len, r->headers ? r->headers : "");
    send_body(f, fd, r);
}

static void
not_found(int fd)
{
    static const char body[] = "{\"message\":\"page not found\"}";

    sendf(fd,
          "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
          "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
          sizeof(body) - 1, body);
}

static void
serve(struct fakedocker *f, int fd)
{
    char *head = NULL, *body = NULL, method[16], target[4096], path[4096];
    struct fakedocker_request *req;
    struct route copy, *r;
    size_t blen = 0;

    if (read_request(f, fd, &head, &body, &blen) < 0 ||
        sscanf(head, "%15s %4095s", method, target) != 2) {
        free(head);
        free(body);
        return;
    }
    free(head);
    req = xalloc(sizeof(*req));
    req->method = dup_str(method);
    req->target = dup_str(target);
    req->body = body;
    req->body_len = blen;
    record(f, req);
    snprintf(path, sizeof(path), "%.*s", (int)strcspn(target, "?"), target);
    pthread_mutex_lock(&f->mu);
    while (f->silent) {
        pthread_mutex_unlock(&f->mu);
        if (wait_fd(f, f->stop[0], 20))
            return;
        pthread_mutex_lock(&f->mu);
    }
    if (builtin(f, fd, path)) {
        pthread_mutex_unlock(&f->mu);
        return;
    }
    r = pick(f, method, path);
    if (r)
        copy = *r; /* strings stay valid: routes are freed at destroy */
    pthread_mutex_unlock(&f->mu);
    if (r)
        answer(f, fd, &copy);
    else
        not_found(fd);
}

static void *
conn_main(void *arg)
{
    struct conn *c = arg;
    struct fakedocker *f = c->f;

    serve(f, c->fd);
    close(c->fd);
    pthread_mutex_lock(&f->mu);
    f->open--;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->mu);
    free(c);
    return NULL;
}

static void *
accept_main(void *arg)
{
    struct fakedocker *f = arg;

    while (!wait_fd(f, f->lfd, -1)) {
        struct conn *c;
        int fd = accept(f->lfd, NULL, NULL);

        if (fd < 0)
            continue;
        c = xalloc(sizeof(*c));
        c->f = f;
        c->fd = fd;
        pthread_mutex_lock(&f->mu);
        f->threads =
            xresize(f->threads, (f->nthreads + 1) * sizeof(*f->threads));
        f->open++;
        if (pthread_create(&f->threads[f->nthreads], NULL, conn_main, c) == 0)
            f->nthreads++;
        pthread_mutex_unlock(&f->mu);
    }
    return NULL;
}

/* --- life ---------------------------------------------------------------- */

static int
listen_unix(struct fakedocker *f)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    snprintf(f->sockpath, sizeof(f->sockpath), "%s/docker.sock", th_tmpdir());
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", f->sockpath);
    unlink(f->sockpath);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        return -1;
    snprintf(f->host, sizeof(f->host), "unix://%s", f->sockpath);
    return fd;
}

static int
listen_tcp(struct fakedocker *f)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t alen = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) < 0)
        return -1;
    snprintf(f->host, sizeof(f->host), "tcp://127.0.0.1:%d", ntohs(a.sin_port));
    return fd;
}

struct fakedocker *
fakedocker_new(bool tcp)
{
    struct fakedocker *f = xalloc(sizeof(*f));

    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cond, NULL);
    snprintf(f->api, sizeof(f->api), "1.41");
    snprintf(f->min_api, sizeof(f->min_api), "1.12");
    f->lfd = tcp ? listen_tcp(f) : listen_unix(f);
    if (f->lfd < 0 || listen(f->lfd, 128) < 0 || pipe(f->stop) < 0 ||
        pthread_create(&f->acceptor, NULL, accept_main, f) != 0) {
        perror("fakedocker: listen");
        abort();
    }
    return f;
}

static void
free_requests(struct fakedocker *f)
{
    for (size_t i = 0; i < f->nreqs; i++) {
        free(f->reqs[i]->method);
        free(f->reqs[i]->target);
        free(f->reqs[i]->body);
        free(f->reqs[i]);
    }
    free(f->reqs);
}

void
fakedocker_destroy(struct fakedocker **fp)
{
    struct fakedocker *f = *fp;

    if (f == NULL)
        return;
    if (write(f->stop[1], "x", 1) != 1)
        abort();
    pthread_join(f->acceptor, NULL);
    for (size_t i = 0; i < f->nthreads; i++)
        pthread_join(f->threads[i], NULL);
    close(f->lfd);
    close(f->stop[0]);
    close(f->stop[1]);
    if (f->sockpath[0])
        unlink(f->sockpath);
    for (size_t i = 0; i < f->nroutes; i++) {
        free(f->routes[i].method);
        free(f->routes[i].path);
        free(f->routes[i].body);
        free(f->routes[i].headers);
    }
    free(f->routes);
    free_requests(f);
    free(f->threads);
    pthread_cond_destroy(&f->cond);
    pthread_mutex_destroy(&f->mu);
    free(f);
    *fp = NULL;
}

const char *
fakedocker_host(const struct fakedocker *f)
{
    return f->host;
}

void
fakedocker_set_silent(struct fakedocker *f, bool silent)
{
    pthread_mutex_lock(&f->mu);
    f->silent = silent;
    pthread_mutex_unlock(&f->mu);
}

size_t
fakedocker_count(struct fakedocker *f)
{
    size_t n;

    pthread_mutex_lock(&f->mu);
    n = f->nreqs;
    pthread_mutex_unlock(&f->mu);
    return n;
}

const struct fakedocker_request *
fakedocker_request(struct fakedocker *f, size_t i)
{
    const struct fakedocker_request *r = NULL;

    pthread_mutex_lock(&f->mu);
    if (i < f->nreqs)
        r = f->reqs[i];
    pthread_mutex_unlock(&f->mu);
    return r;
}

char *
fakedocker_log(struct fakedocker *f, bool skip_handshake)
{
    size_t cap = 1, len = 0;
    char *out = xalloc(cap);

    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->nreqs; i++) {
        const struct fakedocker_request *r = f->reqs[i];
        size_t add = strlen(r->method) + strlen(r->target) + 2;

        if (skip_handshake && (strcmp(r->target, "/_ping") == 0 ||
                               strcmp(r->target, "/version") == 0))
            continue;
        out = xresize(out, cap = len + add + 1);
        snprintf(out + len, add + 1, "%s %s\n", r->method, r->target);
        len += add;
    }
    pthread_mutex_unlock(&f->mu);
    out[len] = '\0';
    return out;
}

bool
fakedocker_wait_count(struct fakedocker *f, size_t n, int timeout_ms)
{
    struct timespec dl;
    bool ok;

    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (dl.tv_nsec >= 1000000000) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&f->mu);
    while (f->nreqs < n && pthread_cond_timedwait(&f->cond, &f->mu, &dl) == 0)
        ;
    ok = f->nreqs >= n;
    pthread_mutex_unlock(&f->mu);
    return ok;
}

int
fakedocker_open_connections(struct fakedocker *f)
{
    int n;

    pthread_mutex_lock(&f->mu);
    n = f->open;
    pthread_mutex_unlock(&f->mu);
    return n;
}
