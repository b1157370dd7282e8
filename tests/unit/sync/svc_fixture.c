/*
 * svc_fixture.c — the sync service and its raw clients for the service's
 * unit tests (see svc_fixture.h).
 */
#include "svc_fixture.h"

#include "th.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

struct svc_fixture F;

/* ---- observer ---------------------------------------------------------- */

static void
on_event(void *arg, int inst, const cJSON *ev)
{
    (void)arg;
    (void)inst;
    F.events++;
    snprintf(F.last_event, sizeof(F.last_event), "%s",
             cJSON_GetObjectItem(ev, "type")->valuestring);
}

static void
on_hello(void *arg, int inst)
{
    (void)arg;
    (void)inst;
    F.hellos++;
}

static void
on_barrier(void *arg, const char *state, int64_t target, bool ok)
{
    (void)arg;
    (void)state;
    (void)target;
    if (ok)
        F.released++;
    else
        F.failed++;
}

static void
on_waiting(void *arg, int inst, bool waiting)
{
    (void)arg;
    (void)inst;
    F.waiting += waiting ? 1 : -1;
}

static const struct syncsvc_observer observer = {on_event, on_hello, on_barrier,
                                                 on_waiting};

/* ---- fixture ----------------------------------------------------------- */

int fix_split;
uint64_t fix_quota;
struct syncsvc_bounds fix_bounds;
int fix_board_gid;

static const char *
group_of(int i)
{
    return fix_split > 0 && i >= fix_split ? "h" : "g";
}

static int
index_in_group(int i)
{
    return fix_split > 0 && i >= fix_split ? i - fix_split : i;
}

void *
fix_dealer(const char *rid)
{
    void *s = zmq_socket(F.ctx, ZMQ_DEALER);
    int linger = 0;

    zmq_setsockopt(s, ZMQ_ROUTING_ID, rid, strlen(rid));
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
    CHECK(zmq_connect(s, syncsvc_endpoint(F.svc)) == 0);
    return s;
}

void *
fix_replace(int c, const char *rid)
{
    void *old = F.cli[c];

    F.cli[c] = fix_dealer(rid);
    return old;
}

void
fix_start_opts(int n, size_t max_entries, size_t max_bytes,
               const char *board_dir)
{
    struct syncsvc_instance *inst = xcalloc((size_t)n, sizeof(*inst));
    char **dirs = xcalloc((size_t)n, sizeof(char *));
    struct syncsvc_config cfg = {0};
    struct err err = {0};

    memset(&F, 0, sizeof(F));
    snprintf(F.dir, sizeof(F.dir), "%s", th_tmpdir());
    for (int i = 0; i < n; i++) {
        dirs[i] = xasprintf("%s/%s/%d", F.dir, group_of(i), index_in_group(i));
        inst[i].group = group_of(i);
        inst[i].group_index = index_in_group(i);
        inst[i].outdir = dirs[i];
        inst[i].output_quota = fix_quota;
    }
    cfg.run_id = RUN;
    cfg.run_dir = F.dir;
    cfg.bind = "tcp://127.0.0.1:0";
    cfg.instances = inst;
    cfg.ninstances = (size_t)n;
    cfg.topic_max_entries = max_entries;
    cfg.topic_max_bytes = max_bytes;
    cfg.observer = &observer;
    cfg.board_dir = board_dir;
    cfg.board_gid = fix_board_gid;
    cfg.bounds = fix_bounds;
    F.svc = syncsvc_new(&cfg, &err);
    CHECK_MSG(F.svc != NULL, "syncsvc_new: %s", err.msg);
    for (int i = 0; i < n; i++)
        free(dirs[i]);
    free(dirs);
    free(inst);
    if (F.svc == NULL)
        th_skip("no service");
    F.ctx = zmq_ctx_new();
    zmq_ctx_set(F.ctx, ZMQ_MAX_SOCKETS, 4096);
    F.n = n;
    F.cli = xcalloc((size_t)n, sizeof(void *));
    for (int i = 0; i < n; i++) {
        char rid[32];

        snprintf(rid, sizeof(rid), "c%d", i);
        F.cli[i] = fix_dealer(rid);
    }
}

void
fix_start_bounded(int n, size_t max_entries, size_t max_bytes)
{
    fix_start_opts(n, max_entries, max_bytes, NULL);
}

void
fix_start(int n)
{
    fix_start_opts(n, 0, 0, NULL);
}

void
fix_stop(void)
{
    for (int i = 0; i < F.n; i++)
        if (F.cli[i] != NULL)
            zmq_close(F.cli[i]);
    free(F.cli);
    zmq_ctx_term(F.ctx);
    syncsvc_destroy(&F.svc);
    CHECK(F.svc == NULL);
    /* the next case (in the same process under valgrind) starts afresh */
    fix_quota = 0;
    fix_bounds = (struct syncsvc_bounds){0};
    fix_board_gid = 0;
}

void
pump(int ms)
{
    zmq_pollitem_t it = {syncsvc_socket(F.svc), 0, ZMQ_POLLIN, 0};
    struct err err = {0};

    zmq_poll(&it, 1, ms);
    CHECK_MSG(syncsvc_handle(F.svc, &err) == 0, "handle: %s", err.msg);
    if (syncsvc_next_deadline_ms(F.svc) >= 0 &&
        syncsvc_next_deadline_ms(F.svc) <= now_mono_ns() / 1000000)
        syncsvc_tick(F.svc);
}

void
send_frames(int c, const char *json, const void *data, size_t len, bool payload)
{
    CHECK(zmq_send(F.cli[c], json, strlen(json), payload ? ZMQ_SNDMORE : 0) >=
          0);
    if (payload)
        CHECK(zmq_send(F.cli[c], data, len, 0) >= 0);
}

void
sendf(int c, const char *fmt, ...)
{
    char json[2048];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(json, sizeof(json), fmt, ap);
    va_end(ap);
    send_frames(c, json, NULL, 0, false);
}

cJSON *
recv_resp(int c, int timeout_ms)
{
    int64_t end = now_mono_ns() / 1000000 + timeout_ms;
    static char buf[1 << 20];

    do {
        int n = zmq_recv(F.cli[c], buf, sizeof(buf) - 1, ZMQ_DONTWAIT);

        if (n >= 0) {
            buf[n < (int)sizeof(buf) - 1 ? n : (int)sizeof(buf) - 1] = '\0';
            return cJSON_Parse(buf);
        }
        pump(2);
    } while (now_mono_ns() / 1000000 < end);
    return NULL;
}

const char *
status_of(const cJSON *r)
{
    const cJSON *s = cJSON_GetObjectItem(r, "status");

    return cJSON_IsString(s) ? s->valuestring : "(none)";
}

const char *
error_of(const cJSON *r)
{
    const cJSON *s = cJSON_GetObjectItem(r, "error");

    return cJSON_IsString(s) ? s->valuestring : "";
}

int64_t
int_of(const cJSON *r, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(r, key);

    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
}

cJSON *
expect(int c, const char *st)
{
    cJSON *r = recv_resp(c, 5000);

    CHECK_MSG(r != NULL, "client %d: no response", c);
    if (r != NULL)
        CHECK_MSG(strcmp(status_of(r), st) == 0,
                  "client %d: status %s, want %s (%s)", c, status_of(r), st,
                  error_of(r));
    return r;
}

void
expect_free(int c, const char *st)
{
    cJSON_Delete(expect(c, st));
}

void
hello(int c)
{
    sendf(c,
          "{\"id\":1,\"op\":\"hello\",\"run\":\"%s\",\"group\":\"%s\","
          "\"group_index\":%d,\"global_index\":%d,\"secret\":\"%s\"}",
          RUN, group_of(c), index_in_group(c), c, syncsvc_secret(F.svc));
}

void
hello_all(void)
{
    for (int i = 0; i < F.n; i++)
        hello(i);
    for (int i = 0; i < F.n; i++)
        expect_free(i, "ok");
}

char *
read_file_str(const char *path, size_t *len)
{
    struct err err;

    return file_read(path, 64u << 20, len, &err);
}
