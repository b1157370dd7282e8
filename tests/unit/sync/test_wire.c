/*
 * test_wire.c — the sync protocol's encoding: every op round-trips, and
 * malformed frames (bad JSON, missing or mistyped fields, inexact numbers,
 * oversized frames, misplaced payloads, bad file names) are refused with a
 * phrase rather than accepted or crashed on. The fast paths for flat
 * messages have their own checks in test_wire_flat.c.
 */
#include "th.h"
#include "ty_wire.h"
#include "sync/wire_zmq_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int
decode(const char *json, const void *data, size_t len, bool payload,
       struct ty_wire_req *req, char *why, size_t whylen)
{
    return ty__wire_req_decode(json, strlen(json), data, len, payload, req, why,
                               whylen);
}

/* Encode req, decode it back into out (caller releases out). */
static void
roundtrip(const struct ty_wire_req *req, struct ty_wire_req *out)
{
    char why[256] = "";
    size_t len = 0;
    char *json = ty__wire_req_encode(req, &len);

    CHECK_MSG(json != NULL, "encode %s", ty__wire_op_name(req->op));
    if (json == NULL) {
        memset(out, 0, sizeof(*out));
        return;
    }
    CHECK_EQ_INT(len, strlen(json));
    CHECK_MSG(ty__wire_req_decode(json, len, req->data, req->len,
                                  ty__wire_op_has_payload(req->op), out, why,
                                  sizeof(why)) == 0,
              "decode %s: %s", json, why);
    CHECK_EQ_INT(out->id, req->id);
    CHECK_EQ_INT(out->op, req->op);
    free(json);
}

static void
t_roundtrip_sync_ops(void)
{
    struct ty_wire_req r = {.id = 7, .op = TY_WIRE_HELLO}, o;

    r.run = "run-1";
    r.group = "providers";
    r.group_index = 3;
    r.global_index = 9;
    roundtrip(&r, &o);
    CHECK_EQ_STR(o.run, "run-1");
    CHECK_EQ_STR(o.group, "providers");
    CHECK_EQ_INT(o.group_index, 3);
    CHECK_EQ_INT(o.global_index, 9);
    ty__wire_req_release(&o);

    memset(&r, 0, sizeof(r));
    r.id = 8;
    r.op = TY_WIRE_SIGNAL_WAIT;
    r.state = "round-1 start";
    r.target = 200;
    r.timeout_ms = 30000;
    roundtrip(&r, &o);
    CHECK_EQ_STR(o.state, "round-1 start");
    CHECK_EQ_INT(o.target, 200);
    CHECK_EQ_INT(o.timeout_ms, 30000);
    ty__wire_req_release(&o);

    memset(&r, 0, sizeof(r));
    r.id = TY_WIRE_INT_MAX;
    r.op = TY_WIRE_FETCH;
    r.topic = "peers";
    r.from = 12;
    r.max = 1000;
    r.timeout_ms = 0;
    roundtrip(&r, &o);
    CHECK_EQ_STR(o.topic, "peers");
    CHECK_EQ_INT(o.from, 12);
    CHECK_EQ_INT(o.max, 1000);
    CHECK_EQ_INT(o.id, TY_WIRE_INT_MAX);
    ty__wire_req_release(&o);
}

static void
t_roundtrip_values(void)
{
    cJSON *v = cJSON_Parse("{\"addr\":\"127.0.0.1:4001\",\"n\":[1,2.5,null]}");
    cJSON *ev = cJSON_Parse("{\"type\":\"message\",\"message\":\"hi\"}");
    struct ty_wire_req r = {.id = 1, .op = TY_WIRE_PUBLISH}, o;
    char *s;

    r.topic = "addrs";
    r.value = v;
    roundtrip(&r, &o);
    s = cJSON_PrintUnformatted(o.value);
    CHECK_EQ_STR(s, "{\"addr\":\"127.0.0.1:4001\",\"n\":[1,2.5,null]}");
    free(s);
    ty__wire_req_release(&o);

    memset(&r, 0, sizeof(r));
    r.id = 2;
    r.op = TY_WIRE_EVENT;
    r.event = ev;
    roundtrip(&r, &o);
    CHECK_EQ_STR(cJSON_GetObjectItem(o.event, "message")->valuestring, "hi");
    ty__wire_req_release(&o);
    cJSON_Delete(v);
    cJSON_Delete(ev);
}

static void
t_roundtrip_uploads(void)
{
    static const char bytes[] = {0, 1, 2, '\n', (char)0xff};
    struct ty_wire_req r = {.id = 3, .op = TY_WIRE_UPLOAD_BEGIN}, o;

    r.name = "heap/heap-round-1.pb.gz";
    r.size = 5000000;
    roundtrip(&r, &o);
    CHECK_EQ_STR(o.name, "heap/heap-round-1.pb.gz");
    CHECK_EQ_INT(o.size, 5000000);
    ty__wire_req_release(&o);

    memset(&r, 0, sizeof(r));
    r.id = 4;
    r.op = TY_WIRE_UPLOAD_CHUNK;
    r.upload = 17;
    r.offset = 262144;
    r.data = bytes;
    r.len = sizeof(bytes);
    roundtrip(&r, &o);
    CHECK_EQ_INT(o.upload, 17);
    CHECK_EQ_INT(o.offset, 262144);
    CHECK_EQ_INT(o.len, sizeof(bytes));
    CHECK(o.data == bytes);
    ty__wire_req_release(&o);

    memset(&r, 0, sizeof(r));
    r.id = 5;
    r.op = TY_WIRE_APPEND;
    r.name = "results.out";
    r.data = "a\n";
    r.len = 2;
    roundtrip(&r, &o);
    CHECK_EQ_STR(o.name, "results.out");
    ty__wire_req_release(&o);
}

static void
t_roundtrip_responses(void)
{
    cJSON *items = cJSON_Parse("[{\"seq\":4,\"value\":{\"a\":1}},"
                               "{\"seq\":5,\"value\":\"x\"}]");
    struct ty_wire_resp r, o;
    char why[256] = "";
    size_t len;
    char *json;

    ty__wire_resp_init(&r, 42);
    r.items = items;
    r.next = 6;
    json = ty__wire_resp_encode(&r, &len);
    CHECK(json != NULL);
    CHECK_MSG(ty__wire_resp_decode(json, len, &o, why, sizeof(why)) == 0, "%s",
              why);
    CHECK_EQ_INT(o.id, 42);
    CHECK_EQ_INT(o.status, TY_WIRE_OK);
    CHECK_EQ_INT(o.next, 6);
    CHECK_EQ_INT(o.seq, -1);
    CHECK_EQ_INT(cJSON_GetArraySize(o.items), 2);
    ty__wire_resp_release(&o);
    free(json);

    ty__wire_resp_init(&r, 9);
    r.status = TY_WIRE_FAILED;
    r.error = "requestors/0 exited with status 137 (oom)";
    r.seq = 3;
    json = ty__wire_resp_encode(&r, &len);
    CHECK(ty__wire_resp_decode(json, len, &o, why, sizeof(why)) == 0);
    CHECK_EQ_INT(o.status, TY_WIRE_FAILED);
    CHECK_EQ_STR(o.error, "requestors/0 exited with status 137 (oom)");
    CHECK_EQ_INT(o.seq, 3);
    CHECK_EQ_INT(ty__wire_status_errno(o.status), -EPIPE);
    ty__wire_resp_release(&o);
    free(json);
    cJSON_Delete(items);
}

/* Each malformed request is refused and the phrase says what was wrong. */
static void
t_malformed_requests(void)
{
    static const struct {
        const char *json, *phrase;
    } bad[] = {
        {"{", "invalid JSON"},
        {"[1,2]", "one JSON object"},
        {"{\"id\":1,\"op\":\"signal\",\"state\":\"s\"} x", "one JSON object"},
        {"{\"op\":\"signal\",\"state\":\"s\"}", "\"id\""},
        {"{\"id\":0,\"op\":\"signal\",\"state\":\"s\"}", "\"id\""},
        {"{\"id\":1.5,\"op\":\"signal\",\"state\":\"s\"}", "\"id\""},
        {"{\"id\":\"1\",\"op\":\"signal\",\"state\":\"s\"}", "\"id\""},
        {"{\"id\":1e300,\"op\":\"signal\",\"state\":\"s\"}", "\"id\""},
        {"{\"id\":1,\"state\":\"s\"}", "\"op\""},
        {"{\"id\":1,\"op\":\"launch\"}", "unknown op \"launch\""},
        {"{\"id\":1,\"op\":\"barrier\",\"state\":\"s\",\"timeout_ms\":5}",
         "missing field \"target\""},
        {"{\"id\":1,\"op\":\"barrier\",\"state\":\"s\",\"target\":\"3\","
         "\"timeout_ms\":5}",
         "\"target\": expected an integer"},
        {"{\"id\":1,\"op\":\"barrier\",\"state\":\"s\",\"target\":0,"
         "\"timeout_ms\":5}",
         "\"target\": expected an integer from 1"},
        {"{\"id\":1,\"op\":\"barrier\",\"state\":\"s\",\"target\":2,"
         "\"timeout_ms\":-1}",
         "\"timeout_ms\""},
        {"{\"id\":1,\"op\":\"signal\",\"state\":\"\"}", "\"state\""},
        {"{\"id\":1,\"op\":\"signal\",\"state\":7}", "\"state\""},
        {"{\"id\":1,\"op\":\"fetch\",\"topic\":\"t\",\"from\":1,\"max\":1001,"
         "\"timeout_ms\":0}",
         "\"max\""},
        {"{\"id\":1,\"op\":\"publish\",\"topic\":\"t\"}", "\"value\""},
        {"{\"id\":1,\"op\":\"event\",\"event\":{\"message\":\"x\"}}",
         "\"type\""},
        {"{\"id\":1,\"op\":\"event\",\"event\":\"start\"}", "\"type\""},
        {"{\"id\":1,\"op\":\"upload_begin\",\"name\":\"../etc/passwd\","
         "\"size\":1}",
         "relative file name"},
        {"{\"id\":1,\"op\":\"hello\",\"run\":\"r\",\"group\":\"g\","
         "\"group_index\":-1,\"global_index\":0}",
         "\"group_index\""},
    };
    struct ty_wire_req req;
    char why[256];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = '\0';
        CHECK_MSG(decode(bad[i].json, NULL, 0, false, &req, why, sizeof(why)) <
                      0,
                  "accepted %s", bad[i].json);
        CHECK_MSG(strstr(why, bad[i].phrase) != NULL,
                  "%s: why \"%s\" lacks \"%s\"", bad[i].json, why,
                  bad[i].phrase);
        ty__wire_req_release(&req);
    }
}

static void
t_id_kept_for_answers(void)
{
    struct ty_wire_req req;
    char why[256];

    CHECK(decode("{\"id\":77,\"op\":\"nope\"}", NULL, 0, false, &req, why,
                 sizeof(why)) < 0);
    CHECK_EQ_INT(req.id, 77);
    ty__wire_req_release(&req);
    CHECK(decode("garbage", NULL, 0, false, &req, why, sizeof(why)) < 0);
    CHECK_EQ_INT(req.id, 0);
    ty__wire_req_release(&req);
}

static void
t_payload_rules(void)
{
    struct ty_wire_req req;
    char why[256];
    const char *chunk = "{\"id\":1,\"op\":\"upload_chunk\",\"upload\":1,"
                        "\"offset\":0}";
    char *big;

    CHECK(decode(chunk, NULL, 0, false, &req, why, sizeof(why)) < 0);
    CHECK_CONTAINS(why, "expected a binary second frame");
    ty__wire_req_release(&req);
    CHECK(decode("{\"id\":1,\"op\":\"signal\",\"state\":\"s\"}", "x", 1, true,
                 &req, why, sizeof(why)) < 0);
    CHECK_CONTAINS(why, "unexpected second frame");
    ty__wire_req_release(&req);
    CHECK(decode(chunk, "x", TY_WIRE_PAYLOAD_MAX + 1, true, &req, why,
                 sizeof(why)) < 0);
    CHECK_CONTAINS(why, "over the");
    ty__wire_req_release(&req);
    CHECK(decode(chunk, "", 0, true, &req, why, sizeof(why)) == 0);
    CHECK_EQ_INT(req.len, 0);
    ty__wire_req_release(&req);

    big = malloc(TY_WIRE_JSON_MAX + 2);
    memset(big, ' ', TY_WIRE_JSON_MAX + 1);
    memcpy(big, "{}", 2);
    big[TY_WIRE_JSON_MAX + 1] = '\0';
    CHECK(decode(big, NULL, 0, false, &req, why, sizeof(why)) < 0);
    CHECK_CONTAINS(why, "over the");
    ty__wire_req_release(&req);
    free(big);
}

static void
t_long_strings(void)
{
    struct ty_wire_req req;
    char why[256], json[700], name[300];

    memset(name, 'a', 256);
    name[256] = '\0';
    snprintf(json, sizeof(json),
             "{\"id\":1,\"op\":\"signal\",\"state\":\"%s\"}", name);
    CHECK(decode(json, NULL, 0, false, &req, why, sizeof(why)) < 0);
    CHECK_CONTAINS(why, "at most 255");
    ty__wire_req_release(&req);
    name[255] = '\0';
    snprintf(json, sizeof(json),
             "{\"id\":1,\"op\":\"signal\",\"state\":\"%s\"}", name);
    CHECK(decode(json, NULL, 0, false, &req, why, sizeof(why)) == 0);
    ty__wire_req_release(&req);
}

static void
t_malformed_responses(void)
{
    static const char *const bad[] = {
        "{\"status\":\"ok\"}",
        "{\"id\":1}",
        "{\"id\":1,\"status\":\"maybe\"}",
        "{\"id\":1,\"status\":\"timeout\"}",
        "{\"id\":1,\"status\":\"ok\",\"seq\":0}",
        "{\"id\":1,\"status\":\"ok\",\"items\":{}}",
        "{\"id\":1,\"status\":\"ok\",\"items\":[{\"value\":1}]}",
        "{\"id\":1,\"status\":\"ok\",\"items\":[{\"seq\":1}]}",
        "not json",
    };
    struct ty_wire_resp resp;
    char why[256];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_MSG(ty__wire_resp_decode(bad[i], strlen(bad[i]), &resp, why,
                                       sizeof(why)) < 0,
                  "accepted %s", bad[i]);
        ty__wire_resp_release(&resp);
    }
}

static void
t_names(void)
{
    static const char *const good[] = {"results.out", "heap/heap-1.pb.gz",
                                       "a.b.c", ".hidden", "x..y"};
    static const char *const badn[] = {"",     "/etc/passwd", "../x", "a/../b",
                                       "a//b", "./x",         "a/.",  "x.tmp",
                                       "a\\b", "a\nb",        "dir/", ".."};
    char longname[300];

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        CHECK_MSG(ty__wire_name_ok(good[i]), "refused %s", good[i]);
    for (size_t i = 0; i < sizeof(badn) / sizeof(badn[0]); i++)
        CHECK_MSG(!ty__wire_name_ok(badn[i]), "accepted \"%s\"", badn[i]);
    memset(longname, 'n', 256);
    longname[256] = '\0';
    CHECK(!ty__wire_name_ok(longname));
    CHECK(!ty__wire_name_ok(NULL));
}

static void
t_statuses(void)
{
    CHECK_EQ_INT(ty__wire_status_errno(TY_WIRE_OK), 0);
    CHECK_EQ_INT(ty__wire_status_errno(TY_WIRE_TIMEOUT), -ETIMEDOUT);
    CHECK_EQ_INT(ty__wire_status_errno(TY_WIRE_FULL), -ENOSPC);
    CHECK_EQ_INT(ty__wire_status_errno(TY_WIRE_DENIED), -EACCES);
    CHECK_EQ_INT(ty__wire_status_errno(TY_WIRE_CANCELED), -ECANCELED);
    CHECK_EQ_STR(ty__wire_status_name(TY_WIRE_NOTFOUND), "notfound");
    CHECK(ty__wire_status_name(TY_WIRE_NSTATUS) == NULL);
    for (int i = 0; i < TY_WIRE_NOPS; i++)
        for (int j = i + 1; j < TY_WIRE_NOPS; j++)
            CHECK(strcmp(ty__wire_op_name(i), ty__wire_op_name(j)) != 0);
}

/* Frames over a real socket pair: parts arrive as sent; extras flagged. */
static void
t_frames(void)
{
    void *ctx = zmq_ctx_new();
    void *a = zmq_socket(ctx, ZMQ_DEALER), *b = zmq_socket(ctx, ZMQ_ROUTER);
    struct ty_wire_msg m;
    int linger = 0;

    zmq_setsockopt(a, ZMQ_ROUTING_ID, "cli", 3);
    zmq_setsockopt(a, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_setsockopt(b, ZMQ_LINGER, &linger, sizeof(linger));
    CHECK(zmq_bind(b, "inproc://wire") == 0);
    CHECK(zmq_connect(a, "inproc://wire") == 0);
    CHECK(ty__wire_send(a, NULL, 0, "{}", 2, "pay", 3, true, 0) == 0);
    CHECK(ty__wire_recv(b, &m, 0) == 0);
    CHECK_EQ_INT(m.nparts, 3);
    CHECK(!m.more_parts);
    CHECK_EQ_INT(zmq_msg_size(&m.part[0]), 3);
    CHECK(memcmp(zmq_msg_data(&m.part[2]), "pay", 3) == 0);
    ty__wire_msg_close(&m);
    for (int i = 0; i < 5; i++)
        zmq_send(a, "x", 1, i < 4 ? ZMQ_SNDMORE : 0);
    CHECK(ty__wire_recv(b, &m, 0) == 0);
    CHECK_EQ_INT(m.nparts, TY_WIRE_PARTS);
    CHECK(m.more_parts);
    ty__wire_msg_close(&m);
    CHECK(ty__wire_send(b, "cli", 3, "{\"id\":1}", 8, NULL, 0, false, 0) == 0);
    CHECK(ty__wire_recv(a, &m, 0) == 0);
    CHECK_EQ_INT(m.nparts, 1);
    ty__wire_msg_close(&m);
    CHECK(ty__wire_recv(a, &m, ZMQ_DONTWAIT) < 0 && errno == EAGAIN);
    zmq_close(a);
    zmq_close(b);
    zmq_ctx_term(ctx);
}

static const struct th_case cases[] = {
    {"roundtrip_sync_ops", t_roundtrip_sync_ops},
    {"roundtrip_values", t_roundtrip_values},
    {"roundtrip_uploads", t_roundtrip_uploads},
    {"roundtrip_responses", t_roundtrip_responses},
    {"malformed_requests", t_malformed_requests},
    {"id_kept_for_answers", t_id_kept_for_answers},
    {"payload_rules", t_payload_rules},
    {"long_strings", t_long_strings},
    {"malformed_responses", t_malformed_responses},
    {"names", t_names},
    {"statuses", t_statuses},
    {"frames", t_frames},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
