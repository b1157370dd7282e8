/*
 * pagesrv.c — a tiny HTTP/1.0 server for the browser driver's tests
 * (tests/browser/cdp.sh): it serves the files of one folder, answers a
 * POST with a page that shows its body, records every request it gets
 * and never answers /hang, which is how a page that never loads is made.
 * /login is the shape of the dashboard's login link: a cookie set and a
 * redirect to /index.html.
 *
 *     pagesrv DIR LOG
 *
 * Listens on 127.0.0.1 on a port the kernel picks and prints "port N"
 * on stdout once it does. Each request is appended to LOG as its head
 * (request line and headers, as sent) and its body, then a line "--".
 * One thread per connection; one request per connection. A program of
 * its own, not one of the helpers linked into the tests.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ty_io.h"

#define MAX_REQ 65536

static const char *root;
static FILE *reqlog;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* One answer: code, a body of type, and extra header lines (each ended
 * by \r\n, or ""). */
static void
reply(int fd, int code, const char *type, const char *extra, const char *body,
      size_t len)
{
    char head[512];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.0 %d %s\r\nContent-Type: %s\r\n%s"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     code,
                     code == 200   ? "OK"
                     : code == 303 ? "See Other"
                                   : "Not Found",
                     type, extra, len);

    if (ty__write_all(fd, head, (size_t)n) == 0)
        ty__write_all(fd, body, len);
}

/* The whole request (head and Content-Length bytes of body) into buf:
 * its length, or -1. *body is where the body starts. */
static ssize_t
read_request(int fd, char *buf, char **body)
{
    size_t len = 0, want = 0;
    char *end = NULL;

    while (!end || len < want) {
        ssize_t n = read(fd, buf + len, MAX_REQ - 1 - len);

        if (n <= 0)
            return -1;
        len += (size_t)n;
        buf[len] = '\0';
        if (!end && (end = strstr(buf, "\r\n\r\n"))) {
            const char *cl = strcasestr(buf, "\r\nContent-Length:");

            *body = end + 4;
            want =
                (size_t)(*body - buf) + (cl ? strtoul(cl + 17, NULL, 10) : 0);
            if (want >= MAX_REQ)
                return -1;
        }
    }
    return (ssize_t)len;
}

static void
serve_file(int fd, const char *path)
{
    char file[4096], data[MAX_REQ];
    const char *dot = strrchr(path, '.');
    int f;
    ssize_t n;

    if (strstr(path, "..") ||
        snprintf(file, sizeof(file), "%s%s", root, path) >= (int)sizeof(file) ||
        (f = open(file, O_RDONLY | O_CLOEXEC)) < 0) {
        reply(fd, 404, "text/plain", "", "not found\n", 10);
        return;
    }
    n = read(f, data, sizeof(data));
    close(f);
    reply(fd, 200,
          dot && strcmp(dot, ".html") == 0 ? "text/html" : "text/plain", "",
          data, n > 0 ? (size_t)n : 0);
}

static void *
serve(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char buf[MAX_REQ], method[16], path[2048], page[MAX_REQ + 128];
    char *body = NULL;
    ssize_t len = read_request(fd, buf, &body);

    if (len > 0 && sscanf(buf, "%15s %2047s", method, path) == 2) {
        pthread_mutex_lock(&log_lock);
        fprintf(reqlog, "%.*s\n--\n", (int)len, buf);
        fflush(reqlog);
        pthread_mutex_unlock(&log_lock);
        path[strcspn(path, "?")] = '\0';
        if (strcmp(path, "/login") == 0) {
            reply(fd, 303, "text/plain",
                  "Location: /index.html\r\n"
                  "Set-Cookie: session=fromlogin; Path=/; HttpOnly\r\n",
                  "", 0);
        } else if (strcmp(path, "/hang") == 0) {
            struct pollfd p = {fd, POLLIN, 0};

            poll(&p, 1, -1); /* until the browser gives up */
        } else if (strcmp(method, "POST") == 0) {
            int n = snprintf(page, sizeof(page),
                             "<!doctype html><title>posted</title>"
                             "<pre id=\"body\">%s</pre>",
                             body);

            reply(fd, 200, "text/html", "", page, (size_t)n);
        } else {
            serve_file(fd, path);
        }
    }
    close(fd);
    return NULL;
}

int
main(int argc, char **argv)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t salen = sizeof(sa);
    pthread_attr_t detached;
    int lfd;

    if (argc != 3) {
        fprintf(stderr, "usage: pagesrv DIR LOG\n");
        return 64;
    }
    root = argv[1];
    reqlog = fopen(argv[2], "a");
    signal(SIGPIPE, SIG_IGN);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (!reqlog || lfd < 0 || bind(lfd, (struct sockaddr *)&sa, salen) < 0 ||
        listen(lfd, 64) < 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &salen) < 0) {
        fprintf(stderr, "pagesrv: %s\n", strerror(errno));
        return 1;
    }
    printf("port %d\n", ntohs(sa.sin_port));
    fflush(stdout);
    pthread_attr_init(&detached);
    pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
    for (;;) {
        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        pthread_t t;

        if (c >= 0 &&
            pthread_create(&t, &detached, serve, (void *)(intptr_t)c) != 0)
            close(c);
    }
}
