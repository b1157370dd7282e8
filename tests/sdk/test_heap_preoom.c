/*
 * test_heap_preoom.c — pre-OOM snapshots from the SDK's side: a handle
 * connected to a coordinator keeps one snapshot_wait pending from its
 * snapshot thread; the coordinator's "ok" makes heap-pre-oom arrive
 * within a second (sidecar trigger "pre-oom"), after which the thread
 * asks again; "timeout" makes it ask again; "invalid" (a coordinator that
 * does not serve the op) stops it asking; the handle's end gives the
 * pending request up. The coordinator is a fake here: a libzmq ROUTER on
 * a thread of the test that answers hello and uploads and holds each
 * snapshot_wait until the test says how to answer it.
 */
#include "sdk_fixture.h"
#include "th.h"
#include "ty_conn.h"
#include "ty_wire.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#define NAMES_MAX 8192

static struct {
    void *ctx, *sock;
    char url[64];
    pthread_t th;
    pthread_mutex_t mu;
    bool stop;
    unsigned char peer[256];
    size_t peerlen;
    int64_t held;       /* the id of the snapshot_wait held, 0: none */
    int64_t held_ms;    /* its timeout_ms */
    int waits;          /* snapshot_waits received */
    const char *answer; /* the status to answer the held one with */
    int64_t answered_ms;
    char names[NAMES_MAX];  /* uploads ended, ",name" each */
    int64_t preoom_json_ms; /* when heap-pre-oom.json was uploaded */
    char preoom_json[4096];
    int64_t next_upload;
    int64_t upload_name_id[64];
    char upload_name[64][128];
} C;

static void
reply(const unsigned char *peer, size_t peerlen, int64_t id,
      enum ty_wire_status st, int64_t upload)
{
    struct ty_wire_resp r;
    size_t len;
    char *json;

    ty__wire_resp_init(&r, id);
    r.status = st;
    r.error = st == TY_WIRE_OK ? NULL : "as the test asked";
    r.upload = upload;
    json = ty__wire_resp_encode(&r, &len);
    zmq_send(C.sock, peer, peerlen, ZMQ_SNDMORE);
    zmq_send(C.sock, json, len, 0);
    free(json);
}

static void
upload_begin(const struct ty_wire_req *q)
{
    int64_t uid = ++C.next_upload;
    size_t slot = (size_t)uid % 64;

    C.upload_name_id[slot] = uid;
    snprintf(C.upload_name[slot], sizeof(C.upload_name[slot]), "%s", q->name);
    reply(C.peer, C.peerlen, q->id, TY_WIRE_OK, uid);
}

/* Keeps the last chunk of heap-pre-oom.json (sidecars are one chunk). */
static void
upload_chunk(const struct ty_wire_req *q)
{
    size_t slot = (size_t)q->upload % 64;

    if (strcmp(C.upload_name[slot], "heap-pre-oom.json") == 0 &&
        q->len < sizeof(C.preoom_json)) {
        memcpy(C.preoom_json, q->data, q->len);
        C.preoom_json[q->len] = '\0';
    }
    reply(C.peer, C.peerlen, q->id, TY_WIRE_OK, -1);
}

static void
upload_end(const struct ty_wire_req *q)
{
    size_t slot = (size_t)q->upload % 64, n = strlen(C.names);

    snprintf(C.names + n, sizeof(C.names) - n, ",%s", C.upload_name[slot]);
    if (strcmp(C.upload_name[slot], "heap-pre-oom.json") == 0)
        C.preoom_json_ms = ty__now_ms();
    reply(C.peer, C.peerlen, q->id, TY_WIRE_OK, -1);
}

/* One request, under C.mu. */
static void
serve(const struct ty_wire_req *q)
{
    switch (q->op) {
    case TY_WIRE_UPLOAD_BEGIN:
        upload_begin(q);
        break;
    case TY_WIRE_UPLOAD_CHUNK:
        upload_chunk(q);
        break;
    case TY_WIRE_UPLOAD_END:
        upload_end(q);
        break;
    case TY_WIRE_SNAPSHOT_WAIT:
        C.waits++;
        C.held = q->id;
        C.held_ms = q->timeout_ms;
        break;
    default: /* hello, events */
        reply(C.peer, C.peerlen, q->id, TY_WIRE_OK, -1);
    }
}

static void
receive(void)
{
    zmq_msg_t part[3];
    int n = 0, more = 1;
    struct ty_wire_req q;
    char why[256];

    while (more && n < 3) {
        zmq_msg_init(&part[n]);
        if (zmq_msg_recv(&part[n], C.sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&part[n]);
            break;
        }
        more = zmq_msg_more(&part[n++]);
    }
    if (n >= 2 && zmq_msg_size(&part[0]) <= sizeof(C.peer)) {
        C.peerlen = zmq_msg_size(&part[0]);
        memcpy(C.peer, zmq_msg_data(&part[0]), C.peerlen);
        if (ty__wire_req_decode(zmq_msg_data(&part[1]), zmq_msg_size(&part[1]),
                                n == 3 ? zmq_msg_data(&part[2]) : NULL,
                                n == 3 ? zmq_msg_size(&part[2]) : 0, n == 3, &q,
                                why, sizeof(why)) == 0)
            serve(&q);
        ty__wire_req_release(&q);
    }
    while (n > 0)
        zmq_msg_close(&part[--n]);
}

static void *
coordinator(void *arg)
{
    (void)arg;
    for (;;) {
        zmq_pollitem_t it = {C.sock, 0, ZMQ_POLLIN, 0};

        zmq_poll(&it, 1, 10);
        pthread_mutex_lock(&C.mu);
        if (C.stop) {
            pthread_mutex_unlock(&C.mu);
            return NULL;
        }
        if (it.revents & ZMQ_POLLIN)
            receive();
        if (C.answer != NULL && C.held != 0) {
            enum ty_wire_status st = TY_WIRE_OK;

            for (int i = 0; i < TY_WIRE_NSTATUS; i++)
                if (strcmp(ty__wire_status_name(i), C.answer) == 0)
                    st = (enum ty_wire_status)i;
            reply(C.peer, C.peerlen, C.held, st, -1);
            C.held = 0;
            C.answer = NULL;
            C.answered_ms = ty__now_ms();
        }
        pthread_mutex_unlock(&C.mu);
    }
}

static void
coordinator_start(void)
{
    size_t len = sizeof(C.url);
    int linger = 0;

    memset(&C, 0, sizeof(C));
    pthread_mutex_init(&C.mu, NULL);
    C.ctx = zmq_ctx_new();
    C.sock = zmq_socket(C.ctx, ZMQ_ROUTER);
    zmq_setsockopt(C.sock, ZMQ_LINGER, &linger, sizeof(linger));
    CHECK(zmq_bind(C.sock, "tcp://127.0.0.1:*") == 0);
    zmq_getsockopt(C.sock, ZMQ_LAST_ENDPOINT, C.url, &len);
    CHECK(pthread_create(&C.th, NULL, coordinator, NULL) == 0);
}

static void
coordinator_stop(void)
{
    pthread_mutex_lock(&C.mu);
    C.stop = true;
    pthread_mutex_unlock(&C.mu);
    pthread_join(C.th, NULL);
    zmq_close(C.sock);
    zmq_ctx_term(C.ctx);
    pthread_mutex_destroy(&C.mu);
}

/* The environment of instance 0 of 1, connected to url (NULL: none). */
static void
env(const char *url)
{
    static const char *const unset[] = {
        "TESTYARD_SYNC_BOARD",  "TESTYARD_DEADLINE_MS", "TESTYARD_PARAMS",
        "TEST_INSTANCE_PARAMS", "SYNC_SERVICE_HOST",    "TESTYARD_SYNC_URL"};

    for (size_t i = 0; i < sizeof(unset) / sizeof(unset[0]); i++)
        unsetenv(unset[i]);
    setenv("TEST_RUN", RUN, 1);
    setenv("TEST_PLAN", "sdkplan", 1);
    setenv("TEST_GROUP_ID", "g", 1);
    setenv("TESTYARD_GROUP_INDEX", "0", 1);
    setenv("TESTYARD_GLOBAL_INDEX", "0", 1);
    setenv("TEST_INSTANCE_COUNT", "1", 1);
    setenv("TESTYARD_SYNC_SECRET", SDK_SECRET, 1);
    setenv("TEST_OUTPUTS_PATH", th_tmpdir(), 1);
    if (url != NULL)
        setenv("TESTYARD_SYNC_URL", url, 1);
}

/* A handle connected to the fake, with its snapshot thread running. */
static struct ty *
instance(void)
{
    char why[256];
    struct ty *ty;

    env(C.url);
    ty = ty__new_from_env(why, sizeof(why));
    if (ty == NULL)
        th_skip(why);
    CHECK_MSG(ty__sync_connect(ty) == 0, "connect: %s", ty_errmsg(ty));
    ty__heapctl_init(ty);
    return ty;
}

static void
instance_end(struct ty **ty)
{
    ty__heapctl_fini(*ty);
    ty__destroy(ty);
}

/* Wait up to ms for the count of snapshot_waits to reach n with one held;
 * the count. */
static int
waits_reach(int n, int64_t ms)
{
    int64_t end = ty__now_ms() + ms;
    int got;

    for (;;) {
        pthread_mutex_lock(&C.mu);
        got = C.held != 0 ? C.waits : C.waits - 1;
        pthread_mutex_unlock(&C.mu);
        if (got >= n || ty__now_ms() >= end)
            return got;
        usleep(5000);
    }
}

static void
answer(const char *status)
{
    pthread_mutex_lock(&C.mu);
    C.answer = status;
    pthread_mutex_unlock(&C.mu);
}

/* "ok": heap-pre-oom (profile first, then sidecar) within a second, its
 * sidecar saying so, and a new snapshot_wait pending after it. */
static void
t_ok_takes_preoom(void)
{
    struct ty *ty;
    int64_t took;
    cJSON *j;

    coordinator_start();
    ty = instance();
    CHECK_EQ_INT(waits_reach(1, 5000), 1);
    pthread_mutex_lock(&C.mu);
    CHECK(C.held_ms >= 1000); /* a long wait, asked again at its end */
    pthread_mutex_unlock(&C.mu);
    answer("ok");
    CHECK_EQ_INT(waits_reach(2, 5000), 2);
    pthread_mutex_lock(&C.mu);
    took = C.preoom_json_ms - C.answered_ms;
    CHECK_MSG(C.preoom_json_ms > 0 && took <= 1000,
              "heap-pre-oom.json %lld ms after the answer (uploads:%s)",
              (long long)took, C.names);
    CHECK_CONTAINS(C.names, ",heap-pre-oom.pb.gz,heap-pre-oom.json");
    j = cJSON_Parse(C.preoom_json);
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "trigger")),
                 "pre-oom");
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "label")),
                 "pre-oom");
    cJSON_Delete(j);
    pthread_mutex_unlock(&C.mu);
    /* again: the file is replaced, not numbered */
    answer("ok");
    CHECK_EQ_INT(waits_reach(3, 5000), 3);
    pthread_mutex_lock(&C.mu);
    CHECK(strstr(C.names, "pre-oom-") == NULL);
    pthread_mutex_unlock(&C.mu);
    instance_end(&ty);
    coordinator_stop();
}

/* "timeout" asks again; "invalid" (an older coordinator) stops asking. */
static void
t_timeout_again_invalid_stops(void)
{
    struct ty *ty;

    coordinator_start();
    ty = instance();
    CHECK_EQ_INT(waits_reach(1, 5000), 1);
    answer("timeout");
    CHECK_EQ_INT(waits_reach(2, 5000), 2);
    answer("invalid");
    usleep(300 * 1000);
    pthread_mutex_lock(&C.mu);
    CHECK_EQ_INT(C.waits, 2);
    CHECK_EQ_INT(C.held, 0);
    CHECK(strstr(C.names, "pre-oom") == NULL);
    pthread_mutex_unlock(&C.mu);
    instance_end(&ty);
    coordinator_stop();
}

/* The handle's end with a snapshot_wait pending returns at once. */
static void
t_end_gives_up(void)
{
    struct ty *ty;
    int64_t t0;

    coordinator_start();
    ty = instance();
    CHECK_EQ_INT(waits_reach(1, 5000), 1);
    t0 = ty__now_ms();
    ty__heapctl_fini(ty);
    CHECK_MSG(ty__now_ms() - t0 < 1000, "fini took %lld ms",
              (long long)(ty__now_ms() - t0));
    ty__destroy(&ty);
    coordinator_stop();
}

/* Not connected: no snapshot_wait and no error, the thread still runs. */
static void
t_standalone(void)
{
    char why[256];
    struct ty *ty;

    env(NULL);
    ty = ty__new_from_env(why, sizeof(why));
    CHECK(ty != NULL);
    if (ty == NULL)
        return;
    CHECK_EQ_INT(ty__sync_connect(ty), 0);
    ty__heapctl_init(ty);
    CHECK(ty->heapctl != NULL);
    ty__heapctl_fini(ty);
    ty__destroy(&ty);
}

static const struct th_case cases[] = {
    {"ok_takes_preoom", t_ok_takes_preoom},
    {"timeout_again_invalid_stops", t_timeout_again_invalid_stops},
    {"end_gives_up", t_end_gives_up},
    {"standalone", t_standalone},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
