/*
 * test_docker_stream.c — the Docker client's streaming endpoints against
 * the fake engine: logs demultiplexed across arbitrary cuts, build
 * progress and errorDetail, the events stream stopped from another thread,
 * a wait canceled mid-call, and many threads sharing one client.
 */
#include "base/strbuf.h"
#include "docker/docker.h"
#include "fakedocker.h"
#include "fakedocker_client.h"
#include "th.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Append one multiplexed frame to sb. */
static void
frame(struct strbuf *sb, int stream, const char *data, size_t len)
{
    unsigned char h[8] = {(unsigned char)stream,
                          0,
                          0,
                          0,
                          (unsigned char)(len >> 24),
                          (unsigned char)(len >> 16),
                          (unsigned char)(len >> 8),
                          (unsigned char)len};

    strbuf_add(sb, h, sizeof(h));
    strbuf_add(sb, data, len);
}

struct two {
    struct strbuf out, err;
    struct strbuf order; /* "1" or "2" per piece boundary change */
};

static int
collect(void *arg, int stream, const char *data, size_t len, struct err *err)
{
    struct two *t = arg;

    (void)err;
    strbuf_add(stream == 2 ? &t->err : &t->out, data, len);
    if (t->order.len == 0 || t->order.buf[t->order.len - 1] != '0' + stream)
        strbuf_addc(&t->order, (char)('0' + stream));
    return 0;
}

static void
t_logs_demux(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = fakedocker_client(f);
    struct two t;
    struct strbuf body, big;
    struct err err = {0};
    struct docker_logs_opts o = {.timestamps = true};

    strbuf_init(&body);
    strbuf_init(&big);
    strbuf_init(&t.out);
    strbuf_init(&t.err);
    strbuf_init(&t.order);
    for (int i = 0; i < 20000; i++)
        strbuf_addf(&big, "line %d\n", i);
    frame(&body, 1, "hello\n", 6);
    frame(&body, 2, "oops\n", 5);
    frame(&body, 1, "", 0);
    frame(&body, 1, big.buf, big.len);
    frame(&body, 2, "bye\n", 4);
    /* 7-byte pieces cut headers and payloads everywhere */
    fakedocker_route(
        f, &(struct fakedocker_route){.method = "GET",
                                      .path = "/v1.41/containers/*/logs",
                                      .status = 200,
                                      .body = body.buf,
                                      .body_len = 200,
                                      .trickle = 7});
    fakedocker_route(
        f, &(struct fakedocker_route){.method = "GET",
                                      .path = "/v1.41/containers/c1/logs",
                                      .status = 200,
                                      .body = body.buf,
                                      .body_len = body.len,
                                      .trickle = 4096});
    CHECK_MSG(docker_container_logs(d, "c1", &o, collect, &t, &err) == 0, "%s",
              err.msg);
    CHECK_EQ_INT(t.out.len, 6 + big.len);
    CHECK(t.out.len > 6 && memcmp(t.out.buf, "hello\n", 6) == 0 &&
          memcmp(t.out.buf + 6, big.buf, big.len) == 0);
    CHECK_EQ_STR(t.err.buf, "oops\nbye\n");
    CHECK_EQ_STR(t.order.buf, "1212");
    CHECK_EQ_STR(fakedocker_request(f, 2)->target,
                 "/v1.41/containers/c1/logs?stdout=1&stderr=1&follow=0"
                 "&timestamps=1&since=0");
    /* a stream cut inside a frame is an error, not silence */
    CHECK(docker_container_logs(d, "c2", NULL, collect, &t, &err) < 0);
    CHECK_CONTAINS(err.msg, "cut inside a frame");
    strbuf_release(&t.out);
    strbuf_release(&t.err);
    strbuf_release(&t.order);
    strbuf_release(&body);
    strbuf_release(&big);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

static void
t_logs_to_fds_and_tty(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = fakedocker_client(f);
    struct strbuf body;
    struct err err = {0};
    char *out_path = path_join(th_tmpdir(), "run.out");
    char *err_path = path_join(th_tmpdir(), "run.err");
    int ofd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int efd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char *o, *e;
    size_t len;

    strbuf_init(&body);
    frame(&body, 1, "{\"event\":\"start\"}\n", 18);
    frame(&body, 2, "warning\n", 8);
    fakedocker_route(
        f, &(struct fakedocker_route){.method = "GET",
                                      .path = "/v1.41/containers/c1/logs",
                                      .status = 200,
                                      .body = body.buf,
                                      .body_len = body.len});
    fakedocker_answer(f, "GET", "/v1.41/containers/tty/logs", 200,
                      "plain tty text\n");
    CHECK(docker_container_logs_to_fds(d, "c1", NULL, ofd, efd, &err) == 0);
    CHECK(docker_container_logs_to_fds(d, "tty", NULL, ofd, efd, &err) == 0);
    close(ofd);
    close(efd);
    o = file_read(out_path, 1 << 20, &len, &err);
    e = file_read(err_path, 1 << 20, &len, &err);
    CHECK_EQ_STR(o, "{\"event\":\"start\"}\nplain tty text\n");
    CHECK_EQ_STR(e, "warning\n");
    free(o);
    free(e);
    free(out_path);
    free(err_path);
    strbuf_release(&body);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

static void
progress(void *arg, const char *line)
{
    struct strbuf *sb = arg;

    strbuf_addf(sb, "[%s]", line);
}

static int
context_fd(const char *content)
{
    char *path = path_join(th_tmpdir(), "ctx.tar");
    struct err err = {0};
    int fd;

    CHECK(file_write_atomic(path, content, strlen(content), &err) == 0);
    fd = open(path, O_RDONLY);
    free(path);
    return fd;
}

static void
t_build_progress(void)
{
    static const char stream[] =
        "{\"stream\":\"Step 1/2 : FROM scratch\\n\"}\r\n"
        "{\"stream\":\"\\n\"}\r\n"
        "{\"stream\":\" ---\\u003e Running\\nStep 2/2 : COPY rootfs/ /\\n\"}"
        "\r\n{\"aux\":{\"ID\":\"sha256:feedbeef\"}}\r\n"
        "{\"stream\":\"Successfully built feedbeef\\n\"}\r\n";
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = fakedocker_client(f);
    struct strbuf lines;
    struct docker_build_opts o = {
        .tag = "testyard/ping:0123456789abcdef",
        .labels = (const char *const[]){"testyard.plan=ping", NULL},
        .progress = progress,
        .arg = &lines};
    const struct fakedocker_request *r;
    struct err err = {0};
    char *id = NULL;
    int fd = context_fd("pretend this is a tar");

    strbuf_init(&lines);
    fakedocker_route(f, &(struct fakedocker_route){.method = "POST",
                                                   .path = "/v1.41/build",
                                                   .status = 200,
                                                   .body = stream,
                                                   .trickle = 5});
    CHECK_MSG(docker_build(d, fd, &o, &id, &err) == 0, "%s", err.msg);
    CHECK_EQ_STR(id, "sha256:feedbeef");
    CHECK_EQ_STR(lines.buf, "[Step 1/2 : FROM scratch][ ---> Running]"
                            "[Step 2/2 : COPY rootfs/ /]"
                            "[Successfully built feedbeef]");
    r = fakedocker_request(f, 2);
    CHECK_EQ_STR(r->target, "/v1.41/build?rm=1&forcerm=1&t=testyard%2Fping"
                            "%3A0123456789abcdef&labels=%7B%22testyard.plan"
                            "%22%3A%22ping%22%7D");
    CHECK_EQ_STR(r->body, "pretend this is a tar");
    free(id);
    close(fd);
    strbuf_release(&lines);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

static void
t_build_error_detail(void)
{
    static const char stream[] =
        "{\"stream\":\"Step 1/2 : FROM scratch\\n\"}\r\n"
        "{\"errorDetail\":{\"message\":\"COPY failed: file not found in "
        "build context\"},\"error\":\"COPY failed: file not found in build "
        "context\"}\r\n";
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = fakedocker_client(f);
    struct docker_build_opts o = {.tag = "testyard/x:1"};
    struct err err = {0};
    char *id = NULL;
    int fd = context_fd("tar");

    fakedocker_answer(f, "POST", "/v1.41/build", 200, stream);
    CHECK(docker_build(d, fd, &o, &id, &err) < 0);
    CHECK(id == NULL);
    CHECK_EQ_STR(err.msg, "image build of testyard/x:1 failed: COPY failed: "
                          "file not found in build context");
    close(fd);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

struct evrun {
    struct docker *d;
    struct docker_events_opts o;
    struct strbuf seen;
    int stop_after; /* callback returns 1 after this many; 0 = never */
    int n, ready, rc;
    struct err err;
};

static int
on_event(void *arg, const struct docker_event *ev)
{
    struct evrun *e = arg;
    const cJSON *run = cJSON_GetObjectItem(ev->attributes, "testyard.run");

    strbuf_addf(&e->seen, "%s %s %s %s %lld\n", ev->type, ev->action, ev->id,
                cJSON_IsString(run) ? run->valuestring : "-",
                (long long)ev->time_ns);
    e->n++;
    return e->stop_after && e->n >= e->stop_after;
}

static void
on_ready(void *arg)
{
    ((struct evrun *)arg)->ready++;
}

static void *
events_thread(void *arg)
{
    struct evrun *e = arg;

    e->rc = docker_events(e->d, &e->o, on_event, e, &e->err);
    return NULL;
}

static const char two_events[] =
    "{\"status\":\"die\",\"id\":\"c1\",\"Type\":\"container\",\"Action\":"
    "\"die\",\"Actor\":{\"ID\":\"c1\",\"Attributes\":{\"exitCode\":\"137\","
    "\"testyard.run\":\"r1\"}},\"time\":1795978535,\"timeNano\":"
    "1795978535123456789}\n"
    "{\"Type\":\"container\",\"Action\":\"oom\",\"Actor\":{\"ID\":\"c2\","
    "\"Attributes\":{\"testyard.run\":\"r1\"}},\"time\":1795978536}\n";

static void
t_events_stop_from_thread(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct evrun e = {.d = fakedocker_client(f)};
    pthread_t th;
    int64_t t0;

    strbuf_init(&e.seen);
    e.o.labels = (const char *const[]){"testyard.run=r1", NULL};
    e.o.types = (const char *const[]){"container", NULL};
    e.o.ready = on_ready;
    e.o.cancel = docker_cancel_new();
    fakedocker_route(f, &(struct fakedocker_route){.method = "GET",
                                                   .path = "/v1.41/events",
                                                   .status = 200,
                                                   .body = two_events,
                                                   .trickle = 9,
                                                   .hold = true});
    pthread_create(&th, NULL, events_thread, &e);
    CHECK(fakedocker_wait_count(f, 3, 5000));
    for (int i = 0; i < 500 && fakedocker_open_connections(f) == 0; i++)
        usleep(2000);
    usleep(300000); /* both events delivered, stream still open */
    CHECK_EQ_INT(fakedocker_open_connections(f), 1);
    t0 = now_mono_ns();
    docker_cancel_fire(e.o.cancel);
    pthread_join(th, NULL);
    CHECK_MSG(now_mono_ns() - t0 < 500000000LL, "stop took %lld ms",
              (long long)((now_mono_ns() - t0) / 1000000));
    CHECK_MSG(e.rc == 0, "%s", e.err.msg);
    CHECK_EQ_INT(e.ready, 1);
    CHECK_EQ_STR(e.seen.buf, "container die c1 r1 1795978535123456789\n"
                             "container oom c2 r1 1795978536000000000\n");
    CHECK_EQ_STR(fakedocker_request(f, 2)->target,
                 "/v1.41/events?filters=%7B%22label%22%3A%5B%22testyard.run"
                 "%3Dr1%22%5D%2C%22type%22%3A%5B%22container%22%5D%7D");
    for (int i = 0; i < 500 && fakedocker_open_connections(f) > 0; i++)
        usleep(2000);
    CHECK_EQ_INT(fakedocker_open_connections(f), 0);
    docker_cancel_destroy(&e.o.cancel);
    strbuf_release(&e.seen);
    docker_destroy(&e.d);
    fakedocker_destroy(&f);
}

static void
t_events_callback_stop_and_end(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct evrun e = {.d = fakedocker_client(f), .stop_after = 1};

    strbuf_init(&e.seen);
    e.o.since = 1795978000;
    fakedocker_route(f, &(struct fakedocker_route){.method = "GET",
                                                   .path = "/v1.41/events",
                                                   .status = 200,
                                                   .body = two_events,
                                                   .hold = true});
    events_thread(&e);
    CHECK_MSG(e.rc == 0, "%s", e.err.msg);
    CHECK_EQ_INT(e.n, 1);
    CHECK_EQ_STR(fakedocker_request(f, 2)->target,
                 "/v1.41/events?filters=%7B%7D&since=1795978000");
    /* an engine that ends the stream is an error the backend must see */
    fakedocker_answer(f, "GET", "/v1.41/events", 200, two_events);
    e.stop_after = 0;
    e.n = 0;
    events_thread(&e);
    CHECK_EQ_INT(e.rc, -1);
    CHECK_EQ_INT(e.n, 2);
    CHECK_CONTAINS(e.err.msg, "ended the stream");
    strbuf_release(&e.seen);
    docker_destroy(&e.d);
    fakedocker_destroy(&f);
}

struct waitrun {
    struct docker *d;
    struct docker_cancel *c;
    int rc;
    struct err err;
};

static void *
wait_thread(void *arg)
{
    struct waitrun *w = arg;
    int code;

    w->rc = docker_container_wait(w->d, "c1", DOCKER_WAIT_NOT_RUNNING, w->c,
                                  &code, &w->err);
    return NULL;
}

static void
t_wait_canceled(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct waitrun w = {.d = fakedocker_client(f), .c = docker_cancel_new()};
    pthread_t th;

    fakedocker_route(
        f, &(struct fakedocker_route){.method = "POST",
                                      .path = "/v1.41/containers/*/wait",
                                      .status = 200,
                                      .hold = true});
    pthread_create(&th, NULL, wait_thread, &w);
    CHECK(fakedocker_wait_count(f, 3, 5000));
    usleep(100000);
    docker_cancel_fire(w.c);
    pthread_join(th, NULL);
    CHECK_EQ_INT(w.rc, -1);
    CHECK_EQ_INT(w.err.code, ECANCELED);
    CHECK(docker_cancel_fired(w.c));
    /* a token that already fired stops the next call at once */
    wait_thread(&w);
    CHECK_EQ_INT(w.err.code, ECANCELED);
    docker_cancel_destroy(&w.c);
    docker_destroy(&w.d);
    fakedocker_destroy(&f);
}

struct worker {
    struct docker *d;
    int index, failures;
};

static void *
create_start(void *arg)
{
    struct worker *w = arg;
    cJSON *cfg = cJSON_CreateObject();

    for (int i = 0; i < 10; i++) {
        struct err err = {0};
        char name[32], *id = NULL;

        snprintf(name, sizeof(name), "w%d-%d", w->index, i);
        if (docker_container_create(w->d, name, cfg, &id, &err) < 0 ||
            docker_container_start(w->d, id, &err) < 0)
            w->failures++;
        free(id);
    }
    cJSON_Delete(cfg);
    return NULL;
}

static void
t_threads_share_client(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = fakedocker_client(f);
    struct worker w[8];
    pthread_t th[8];
    char *log;

    fakedocker_route(
        f, &(struct fakedocker_route){.method = "POST",
                                      .path = "/v1.41/containers/create",
                                      .status = 201,
                                      .body = "{\"Id\":\"x\"}",
                                      .delay_ms = 5});
    fakedocker_answer(f, "POST", "/v1.41/containers/x/start", 204, NULL);
    for (int i = 0; i < 8; i++) {
        w[i] = (struct worker){d, i, 0};
        pthread_create(&th[i], NULL, create_start, &w[i]);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_INT(w[i].failures, 0);
    }
    CHECK_EQ_INT(fakedocker_count(f), 2 + 8 * 10 * 2);
    log = fakedocker_log(f, true);
    CHECK_CONTAINS(log, "POST /v1.41/containers/create?name=w7-9\n");
    free(log);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

static const struct th_case cases[] = {
    {"logs_demux", t_logs_demux},
    {"logs_to_fds_and_tty", t_logs_to_fds_and_tty},
    {"build_progress", t_build_progress},
    {"build_error_detail", t_build_error_detail},
    {"events_stop_from_thread", t_events_stop_from_thread},
    {"events_callback_stop_and_end", t_events_callback_stop_and_end},
    {"wait_canceled", t_wait_canceled},
    {"threads_share_client", t_threads_share_client},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
