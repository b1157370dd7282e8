/*
 * client.c — how the command line talks to the daemon: the URL from
 * DATA/daemon.json, the token from DATA/token, one libcurl call a
 * request; the daemon's {"error", "status"} becomes the error and the
 * exit status.
 */
#include "daemon/daemon_int.h"

#include "base/fsat.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

struct daemon_client {
    char *data;
    char *url;
    char token[DAEMON_TOKEN_LEN + 1];
    CURL *curl;
};

static void *
no_daemon(struct err *err, const char *data, const char *why)
{
    err_set(err, ECONNREFUSED,
            "no daemon runs for %s (%s); start one with: testyard daemon "
            "--data %s",
            data, why, data);
    err_status(err, EXIT_UNAVAILABLE);
    return NULL;
}

static char *
url_of(const char *json)
{
    cJSON *o = cJSON_Parse(json);
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "url");
    char *url =
        cJSON_IsString(u) && strncmp(u->valuestring, "http://127.", 11) == 0
            ? xstrdup(u->valuestring)
            : NULL;

    cJSON_Delete(o);
    return url;
}

struct daemon_client *
daemon_client_new(const char *data_dir, struct err *err)
{
    struct daemon_client *cl;
    cleanup_close int fd = open(data_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cleanup_free char *json = NULL;
    struct err e = {0};

    if (fd < 0)
        return no_daemon(err, data_dir, "no such folder");
    json = fsat_read(fd, DAEMON_JSON, 4096, NULL, &e);
    if (json == NULL)
        return no_daemon(err, data_dir, "no " DAEMON_JSON);
    cl = xcalloc(1, sizeof(*cl));
    cl->data = xstrdup(data_dir);
    cl->url = url_of(json);
    if (cl->url == NULL || daemon__token_load(fd, false, cl->token, &e) < 0) {
        daemon_client_destroy(&cl);
        return no_daemon(err, data_dir,
                         e.msg[0] ? e.msg : DAEMON_JSON " has no url");
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    cl->curl = curl_easy_init();
    return cl;
}

void
daemon_client_destroy(struct daemon_client **cl)
{
    if (*cl == NULL)
        return;
    if ((*cl)->curl)
        curl_easy_cleanup((*cl)->curl);
    free((*cl)->data);
    free((*cl)->url);
    free(*cl);
    *cl = NULL;
}

char *
daemon_client_login_url(const struct daemon_client *cl)
{
    return xasprintf("%s/login?token=%s", cl->url, cl->token);
}

static size_t
on_body(char *p, size_t size, size_t n, void *ud)
{
    strbuf_add(ud, p, size * n);
    return size * n;
}

static size_t
on_header(char *p, size_t size, size_t n, void *ud)
{
    static const char done[] = "X-Testyard-Done: 1";

    if (size * n >= sizeof(done) - 1 &&
        strncasecmp(p, done, sizeof(done) - 1) == 0)
        *(bool *)ud = true;
    return size * n;
}

/* The daemon's error object into err. */
static int
http_error(const struct daemon_reply *r, struct err *err)
{
    cJSON *o = cJSON_Parse(r->body.buf);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "error");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "status");

    if (cJSON_IsString(m))
        err_set(err, EPROTO, "%s", m->valuestring);
    else
        err_set(err, EPROTO, "the daemon answered HTTP %ld", r->http);
    err_status(err, cJSON_IsNumber(s) && s->valueint > 0 ? s->valueint
                                                         : EXIT_SOFTWARE);
    cJSON_Delete(o);
    return -1;
}

static void
setup(struct daemon_client *cl, const char *method, const char *url,
      const char *body, struct daemon_reply *r, struct curl_slist *h)
{
    CURL *c = cl->curl;

    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 600L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r->done);
    if (body != NULL) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
}

int
daemon_client_call(struct daemon_client *cl, const char *method,
                   const char *path, const char *body, struct daemon_reply *r,
                   struct err *err)
{
    cleanup_free char *url = xasprintf("%s%s", cl->url, path);
    cleanup_free char *auth = xasprintf("Authorization: Bearer %s", cl->token);
    struct curl_slist *h = curl_slist_append(NULL, auth);
    CURLcode rc;

    h = curl_slist_append(h, "Content-Type: application/json");
    memset(r, 0, sizeof(*r));
    strbuf_init(&r->body);
    setup(cl, method, url, body ? body : (strcmp(method, "POST") ? NULL : ""),
          r, h);
    rc = curl_easy_perform(cl->curl);
    curl_slist_free_all(h);
    if (rc == CURLE_COULDNT_CONNECT)
        return no_daemon(err, cl->data,
                         "nothing answers at the url in " DAEMON_JSON),
               -1;
    if (rc != CURLE_OK) {
        err_set(err, EIO, "%s: %s", url, curl_easy_strerror(rc));
        return err_status(err, EXIT_UNAVAILABLE);
    }
    curl_easy_getinfo(cl->curl, CURLINFO_RESPONSE_CODE, &r->http);
    return r->http >= 400 ? http_error(r, err) : 0;
}
