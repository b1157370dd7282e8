/*
 * dash.c — the dashboard's side of the HTTP server: every path outside
 * /api, routed to the pages (dash_queue.c, dash_history.c; what they
 * share is dash_page.c). A browser logs in once through the link
 * `testyard dashboard` prints (/login?token=...): the token becomes an
 * HttpOnly, SameSite=Lax cookie and the browser is sent on to the queue. Pages
 * want that cookie (or the API's bearer header); a form POST also wants the
 * daemon's CSRF value (made at each start, carried in every form) and, when the
 * browser says where it comes from, an Origin that is this server.
 *
 * Every answer forbids scripts, frames and outside resources
 * (Content-Security-Policy): the pages are HTML and inline SVG, and a
 * run's report.html, which holds what instances wrote, is served under
 * the same policy. Files are opened beneath DATA with no link followed.
 */
#include "daemon/daemon_int.h"

#include "base/fsat.h"
#include "base/strbuf.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COOKIE "testyard_token"
#define REPORT_MAX ((off_t)256 << 20)
#define LOG_MAX ((off_t)DAEMON_LOG_CAP + (1 << 20))

static const char policy[] =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/* ---- answers ------------------------------------------------------ */

static void
add_headers(struct MHD_Response *resp, const char *type)
{
    MHD_add_response_header(resp, "Content-Type", type);
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    MHD_add_response_header(resp, "Content-Security-Policy", policy);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    /* not no-referrer: with it a form POST says "Origin: null" */
    MHD_add_response_header(resp, "Referrer-Policy", "same-origin");
}

static enum MHD_Result
send_page(struct MHD_Connection *conn, unsigned status, struct strbuf *sb)
{
    size_t len = sb->len;
    char *html = strbuf_detach(sb);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, html, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result rc;

    add_headers(resp, "text/html; charset=utf-8");
    rc = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result
send_error_page(const struct daemon *d, struct MHD_Connection *conn,
                unsigned status, const char *msg)
{
    struct strbuf sb;

    strbuf_init(&sb);
    daemon__dash_error(&sb, d, status, msg);
    return send_page(conn, status, &sb);
}

/* 303 to location (a path of this server), with a cookie when set. */
static enum MHD_Result
send_redirect(struct MHD_Connection *conn, const char *location,
              const char *cookie)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result rc;

    add_headers(resp, "text/plain; charset=utf-8");
    MHD_add_response_header(resp, "Location", location);
    if (cookie != NULL)
        MHD_add_response_header(resp, "Set-Cookie", cookie);
    rc = MHD_queue_response(conn, 303, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* A regular file beneath DATA (rel), no link followed, at most max
 * bytes; 404 when it is not there. */
static enum MHD_Result
send_file(struct daemon *d, struct MHD_Connection *conn, const char *rel,
          const char *type, off_t max, const char *what)
{
    struct err err = {0};
    int fd = fsat_open(d->datafd, rel, O_RDONLY, 0, &err);
    struct MHD_Response *resp;
    struct stat st;
    enum MHD_Result rc;
    char msg[sizeof(err.msg) + 128];

    if (fd < 0) {
        snprintf(msg, sizeof(msg), "%s: %s", what,
                 err.code == ENOENT ? "there is none (yet)" : err.msg);
        return send_error_page(d, conn, err.code == ENOENT ? 404 : 403, msg);
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > max) {
        close(fd);
        snprintf(msg, sizeof(msg), "%s: not a regular file of at most %lld MiB",
                 what, (long long)(max >> 20));
        return send_error_page(d, conn, 403, msg);
    }
    resp = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
    if (resp == NULL) {
        close(fd);
        return MHD_NO;
    }
    add_headers(resp, type);
    rc = MHD_queue_response(conn, 200, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* ---- who may look -------------------------------------------------- */

static bool
logged_in(struct daemon *d, struct MHD_Connection *conn)
{
    const char *c = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, COOKIE);
    const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_AUTHORIZATION);

    if (c != NULL && daemon__token_equal(c, d->token))
        return true;
    return h != NULL && strncmp(h, "Bearer ", 7) == 0 &&
           daemon__token_equal(h + 7, d->token);
}

static enum MHD_Result
login(struct daemon *d, struct MHD_Connection *conn)
{
    const char *t =
        MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token");
    char cookie[DAEMON_TOKEN_LEN + 96];

    if (t == NULL || !daemon__token_equal(t, d->token))
        return send_error_page(
            d, conn, 401,
            "wrong or missing token: open the link `testyard dashboard` "
            "prints");
    snprintf(cookie, sizeof(cookie),
             COOKIE "=%s; Path=/; HttpOnly; SameSite=Lax; Max-Age=2592000",
             d->token);
    return send_redirect(conn, "/", cookie);
}

/* The value of name in an x-www-form-urlencoded body (copied into out,
 * not decoded: the values looked for are plain words), or false. */
static bool
form_value(const char *body, const char *name, char *out, size_t size)
{
    size_t nlen = strlen(name);

    for (const char *p = body; p != NULL && *p != '\0';) {
        const char *end = strchr(p, '&');
        size_t len = end ? (size_t)(end - p) : strlen(p);

        if (len > nlen && strncmp(p, name, nlen) == 0 && p[nlen] == '=') {
            len -= nlen + 1;
            if (len >= size)
                return false;
            memcpy(out, p + nlen + 1, len);
            out[len] = '\0';
            return true;
        }
        p = end ? end + 1 : NULL;
    }
    return false;
}

/* Whether a POST comes from a page of this server: its CSRF value, and
 * an Origin (when sent) naming the Host it was sent to. */
static bool
same_origin_post(struct daemon *d, struct MHD_Connection *conn,
                 const char *body)
{
    const char *origin =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
    const char *host =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
    char csrf[DAEMON_TOKEN_LEN + 2];

    if (!form_value(body, "csrf", csrf, sizeof(csrf)) ||
        !daemon__token_equal(csrf, d->csrf))
        return false;
    if (origin == NULL)
        return true;
    return host != NULL && strncmp(origin, "http://", 7) == 0 &&
           strcmp(origin + 7, host) == 0;
}

static enum MHD_Result
cancel(struct daemon *d, struct MHD_Connection *conn, int64_t id,
       const char *body)
{
    struct daemon_task t = {0};
    struct err err = {0};
    char back[16] = "", where[48];
    int rc;

    if (!same_origin_post(d, conn, body))
        return send_error_page(d, conn, 403,
                               "this form is stale or not from this "
                               "dashboard: reload the page and try again");
    pthread_mutex_lock(&d->mu);
    rc = daemon__cancel(d, id, &t, &err);
    pthread_mutex_unlock(&d->mu);
    daemon__task_release(&t);
    if (rc < 0)
        return send_error_page(d, conn, err.code == ENOENT ? 404 : 500,
                               err.msg);
    daemon__wake(d);
    form_value(body, "back", back, sizeof(back));
    if (strcmp(back, "queue") == 0)
        snprintf(where, sizeof(where), "/");
    else
        snprintf(where, sizeof(where), "/tasks/%lld", (long long)id);
    return send_redirect(conn, where, NULL);
}

/* /tasks/ID[/SUFFIX]: the id (0 when the path is not one) and *suffix. */
static int64_t
task_path(const char *url, const char **suffix)
{
    char *end;
    long long id;

    if (strncmp(url, "/tasks/", 7) != 0 || url[7] < '1' || url[7] > '9')
        return 0;
    errno = 0;
    id = strtoll(url + 7, &end, 10);
    if (errno != 0 || (*end != '\0' && *end != '/'))
        return 0;
    *suffix = end;
    return id;
}

static enum MHD_Result
task_routes(struct daemon *d, struct MHD_Connection *conn, const char *url,
            const char *method, const char *body)
{
    const char *suffix = "";
    int64_t id = task_path(url, &suffix);
    struct strbuf sb;
    unsigned status;
    char rel[64];

    if (id == 0)
        return send_error_page(d, conn, 404, "no such page");
    if (strcmp(method, "POST") == 0 && strcmp(suffix, "/cancel") == 0)
        return cancel(d, conn, id, body);
    if (strcmp(method, "GET") != 0)
        return send_error_page(d, conn, 405, "not allowed here");
    if (strcmp(suffix, "/report") == 0) {
        snprintf(rel, sizeof(rel), "runs/task-%lld/report.html", (long long)id);
        return send_file(d, conn, rel, "text/html; charset=utf-8", REPORT_MAX,
                         "the run's report.html");
    }
    if (strcmp(suffix, "/log") == 0) {
        snprintf(rel, sizeof(rel), "tasks/%lld/log", (long long)id);
        return send_file(d, conn, rel, "text/plain; charset=utf-8", LOG_MAX,
                         "the task's log");
    }
    if (suffix[0] != '\0')
        return send_error_page(d, conn, 404, "no such page");
    strbuf_init(&sb);
    status = daemon__page_task(d, id, &sb);
    return send_page(conn, status, &sb);
}

enum MHD_Result
daemon__dash(struct daemon *d, struct MHD_Connection *conn, const char *url,
             const char *method, const char *body)
{
    struct strbuf sb;
    unsigned status;

    if (strcmp(url, "/login") == 0 && strcmp(method, "GET") == 0)
        return login(d, conn);
    if (strcmp(url, "/favicon.ico") == 0)
        return send_error_page(d, conn, 404, "no icon");
    if (!logged_in(d, conn))
        return send_error_page(NULL, conn, 401,
                               "not logged in: open the link `testyard "
                               "dashboard` prints");
    if (strncmp(url, "/tasks/", 7) == 0)
        return task_routes(d, conn, url, method, body);
    if (strcmp(method, "GET") != 0)
        return send_error_page(d, conn, 405, "not allowed here");
    strbuf_init(&sb);
    if (strcmp(url, "/") == 0) {
        status = daemon__page_queue(d, &sb);
    } else if (strcmp(url, "/history") == 0) {
        status = daemon__page_history(
            d, MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "name"),
            &sb);
    } else if (strcmp(url, "/compare") == 0) {
        status = daemon__page_compare(
            d, MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "name"),
            MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "a"),
            MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "b"), &sb);
    } else {
        status = 404;
        daemon__dash_error(&sb, d, status, "no such page");
    }
    return send_page(conn, status, &sb);
}
