/*
 * test_wire_flat.c — the sync protocol's fast paths
 * (sdk/common/ty_wire_flat.c), checked against cJSON: what they print, byte for
 * byte, and what they decide on thousands of mutated messages. Each message is
 * decoded as is and again with a leading form feed — whitespace to cJSON, but
 * enough to send the message down the cJSON path — and both must agree on the
 * verdict, the error phrase and every field. Malformed frames are passed
 * in buffers of their exact size, so the sanitizer build catches a scanner
 * that reads past the end.
 */
#include "th.h"
#include "ty_wire_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
decode(const char *json, const void *data, size_t len, bool payload,
       struct ty_wire_req *req, char *why, size_t whylen)
{
    return ty__wire_req_decode(json, strlen(json), data, len, payload, req, why,
                               whylen);
}

/* What cJSON prints for a response, built the slow way. */
static char *
cjson_resp(int64_t id, const char *st, const char *error, int64_t seq,
           int64_t upload, int64_t next)
{
    cJSON *o = cJSON_CreateObject();
    char *s;

    cJSON_AddNumberToObject(o, "id", (double)id);
    cJSON_AddStringToObject(o, "status", st);
    if (error != NULL)
        cJSON_AddStringToObject(o, "error", error);
    if (seq >= 0)
        cJSON_AddNumberToObject(o, "seq", (double)seq);
    if (upload >= 0)
        cJSON_AddNumberToObject(o, "upload", (double)upload);
    if (next >= 0)
        cJSON_AddNumberToObject(o, "next", (double)next);
    s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static void
check_print(const struct ty_wire_resp *r, const char *error_printed)
{
    char buf[4096], mid[4096], joined[4096];
    char *want = cjson_resp(r->id, ty__wire_status_name(r->status),
                            error_printed, r->seq, r->upload, r->next);
    size_t n = ty__wire_resp_print(r, buf, sizeof(buf));
    size_t m = ty__wire_resp_mid(r->status, r->error, mid, sizeof(mid));

    CHECK_MSG(n > 0 && strcmp(buf, want) == 0, "print: %s, want %s",
              n ? buf : "(nothing)", want);
    CHECK_EQ_INT(n, strlen(want));
    if (r->upload < 0 && r->next < 0) {
        CHECK(m > 0);
        CHECK(ty__wire_resp_join(r->id, mid, m, r->seq, joined,
                                 sizeof(joined)) == n);
        CHECK_EQ_STR(joined, want);
    }
    free(want);
}

static void
t_flat_print_responses(void)
{
    struct ty_wire_resp r;
    char err[3], buf[64];

    ty__wire_resp_init(&r, 12);
    r.seq = 37;
    check_print(&r, NULL);
    ty__wire_resp_init(&r, 0);
    r.status = TY_WIRE_INVALID;
    r.error = "\"id\": expected an integer >= 1 \\ \t\n/\x7f\xc3\xa9";
    check_print(&r, r.error);
    ty__wire_resp_init(&r, TY_WIRE_INT_MAX);
    r.status = TY_WIRE_TIMEOUT;
    check_print(&r, "timeout"); /* no error given: the status name */
    ty__wire_resp_init(&r, 3);
    r.upload = 9;
    r.next = 1000000000;
    check_print(&r, NULL);
    /* every byte, escaped the way cJSON escapes it */
    for (int c = 1; c < 256; c++) {
        err[0] = (char)c;
        err[1] = 'x';
        err[2] = '\0';
        ty__wire_resp_init(&r, c);
        r.status = TY_WIRE_FAILED;
        r.error = err;
        r.seq = c;
        check_print(&r, err);
    }
    /* too small a buffer, items, out-of-range numbers: nothing printed */
    ty__wire_resp_init(&r, 5);
    CHECK(ty__wire_resp_print(&r, buf, 10) == 0);
    r.seq = TY_WIRE_INT_MAX + 1;
    CHECK(ty__wire_resp_print(&r, buf, sizeof(buf)) == 0);
    ty__wire_resp_init(&r, -2);
    CHECK(ty__wire_resp_print(&r, buf, sizeof(buf)) == 0);
    ty__wire_resp_init(&r, 5);
    r.items = (const cJSON *)buf;
    CHECK(ty__wire_resp_print(&r, buf, sizeof(buf)) == 0);
    CHECK(ty__wire_resp_join(-1, "", 0, 1, buf, sizeof(buf)) == 0);
}

/* The flat printer writes what cJSON writes for every flat op. */
static void
t_flat_print_requests(void)
{
    struct ty_wire_req r = {.id = 5, .op = TY_WIRE_HELLO};
    const char *want = "{\"id\":5,\"op\":\"hello\",\"run\":\"r\\\"1\\u0001\","
                       "\"group\":\"g\\\\h\",\"group_index\":0,"
                       "\"global_index\":999999999999999}";
    size_t len;
    char *s;

    r.run = "r\"1\x01";
    r.group = "g\\h";
    r.global_index = TY_WIRE_INT_MAX;
    s = ty__wire_req_print_flat(&r, &len);
    CHECK_EQ_STR(s, want);
    CHECK_EQ_INT(len, strlen(want));
    free(s);
    s = ty__wire_req_encode(&r, &len);
    CHECK_EQ_STR(s, want);
    free(s);
    memset(&r, 0, sizeof(r));
    r.id = 77;
    r.op = TY_WIRE_SIGNAL_WAIT;
    r.state = "round-3";
    r.target = 1000;
    r.timeout_ms = 60000;
    s = ty__wire_req_print_flat(&r, &len);
    CHECK_EQ_STR(s, "{\"id\":77,\"op\":\"signal_and_wait\",\"state\":"
                    "\"round-3\",\"target\":1000,\"timeout_ms\":60000}");
    free(s);
    /* an optional field: printed last when set, by both printers alike */
    r.board = 9;
    s = ty__wire_req_print_flat(&r, &len);
    CHECK_EQ_STR(s, "{\"id\":77,\"op\":\"signal_and_wait\",\"state\":"
                    "\"round-3\",\"target\":1000,\"timeout_ms\":60000,"
                    "\"board\":9}");
    free(s);
    r.group = "providers"; /* an optional string, in the table's order */
    s = ty__wire_req_print_flat(&r, &len);
    CHECK_EQ_STR(s, "{\"id\":77,\"op\":\"signal_and_wait\",\"group\":"
                    "\"providers\",\"state\":\"round-3\",\"target\":1000,"
                    "\"timeout_ms\":60000,\"board\":9}");
    free(s);
    r.op = TY_WIRE_SIGNAL; /* not an op that takes them: left out */
    s = ty__wire_req_print_flat(&r, &len);
    CHECK_EQ_STR(s, "{\"id\":77,\"op\":\"signal\",\"state\":\"round-3\"}");
    free(s);
    r.op = TY_WIRE_SIGNAL_WAIT;
    r.board = 0;
    r.group = NULL;
    /* JSON values, a missing string, a negative number: cJSON's job */
    r.op = TY_WIRE_PUBLISH;
    CHECK(ty__wire_req_print_flat(&r, &len) == NULL);
    r.op = TY_WIRE_SIGNAL;
    r.state = NULL;
    CHECK(ty__wire_req_print_flat(&r, &len) == NULL);
    CHECK(ty__wire_req_encode(&r, &len) == NULL);
    r.op = TY_WIRE_HELLO;
    r.run = r.group = "x";
    r.group_index = -1;
    r.board = 1;
    CHECK(ty__wire_req_print_flat(&r, &len) == NULL);
    s = ty__wire_req_encode(&r, &len);
    CHECK_CONTAINS(s, "\"group_index\":-1");
    CHECK_CONTAINS(s, "\"global_index\":0,\"board\":1}"); /* cJSON's too */
    free(s);
}

/* The common messages take the flat path (no cJSON tree) and decode to the
 * same fields; unusual spellings of the same request take cJSON's. */
static void
t_flat_decode_taken(void)
{
    static const char *const slow[] = {
        "{\"id\":1e0,\"op\":\"signal\",\"state\":\"s\"}",
        "{\"id\":1,\"op\":\"signal\",\"state\":\"\\u0073\"}",
        "{\"id\":1,\"op\":\"signal\",\"state\":\"s\",\"x\":[1]}",
        "{\"id\":1,\"op\":\"signal\",\"state\":\"s\",\"x\":true}",
        "{\"id\":01,\"op\":\"signal\",\"state\":\"s\"}",
        "\f{\"id\":1,\"op\":\"signal\",\"state\":\"s\"}",
        "{\"id\":1,\"op\":\"signal\",\"state\":\"s\",\"state\":\"t\"}",
    };
    struct ty_wire_req req;
    struct ty_wire_resp resp;
    char why[256];
    const char *sw = " {\"id\" : 9,\"op\":\"signal_and_wait\",\"state\":"
                     "\"round-1\",\"target\":200,\"timeout_ms\":0,"
                     "\"extra\":\"ignored\"}\n";

    CHECK(decode(sw, NULL, 0, false, &req, why, sizeof(why)) == 0);
    CHECK(req.root == NULL);
    CHECK_EQ_INT(req.id, 9);
    CHECK_EQ_INT(req.op, TY_WIRE_SIGNAL_WAIT);
    CHECK_EQ_STR(req.state, "round-1");
    CHECK_EQ_INT(req.target, 200);
    CHECK_EQ_INT(req.timeout_ms, 0);
    ty__wire_req_release(&req);
    CHECK(decode("{\"id\":2,\"op\":\"append\",\"name\":\"results.out\"}", "a\n",
                 2, true, &req, why, sizeof(why)) == 0);
    CHECK(req.root == NULL);
    CHECK_EQ_STR(req.name, "results.out");
    CHECK_EQ_INT(req.len, 2);
    ty__wire_req_release(&req);
    for (size_t i = 0; i < sizeof(slow) / sizeof(slow[0]); i++) {
        CHECK_MSG(decode(slow[i], NULL, 0, false, &req, why, sizeof(why)) ==
                          0 &&
                      req.root != NULL,
                  "%s: %s", slow[i], why);
        CHECK_EQ_INT(req.id, 1);
        CHECK_EQ_STR(req.state, "s"); /* cJSON: the first "state" wins */
        ty__wire_req_release(&req);
    }
    CHECK(ty__wire_resp_decode("{\"id\":4,\"status\":\"ok\",\"seq\":3}", 31,
                               &resp, why, sizeof(why)) == 0);
    CHECK(resp.root == NULL);
    CHECK_EQ_INT(resp.id, 4);
    CHECK_EQ_INT(resp.seq, 3);
    CHECK_EQ_INT(resp.next, -1);
    ty__wire_resp_release(&resp);
}

/* Decode json as is and with a leading form feed (the cJSON path); both
 * must agree on the verdict, the phrase and every field. */
static void
same_req(const char *json, size_t len, const void *data, size_t dlen,
         bool payload)
{
    char *ff = malloc(len + 1), w1[256] = "", w2[256] = "";
    struct ty_wire_req a, b;
    int ra, rb;

    ff[0] = '\f';
    memcpy(ff + 1, json, len);
    ra =
        ty__wire_req_decode(json, len, data, dlen, payload, &a, w1, sizeof(w1));
    rb = ty__wire_req_decode(ff, len + 1, data, dlen, payload, &b, w2,
                             sizeof(w2));
    CHECK_MSG(ra == rb && a.id == b.id, "%.*s: %d/%lld vs %d/%lld", (int)len,
              json, ra, (long long)a.id, rb, (long long)b.id);
    if (ra < 0)
        CHECK_MSG(strcmp(w1, w2) == 0, "%.*s: \"%s\" vs \"%s\"", (int)len, json,
                  w1, w2);
    if (ra == 0 && rb == 0) {
        CHECK(a.op == b.op && a.target == b.target &&
              a.timeout_ms == b.timeout_ms && a.from == b.from &&
              a.max == b.max && a.group_index == b.group_index &&
              a.global_index == b.global_index && a.size == b.size &&
              a.upload == b.upload && a.offset == b.offset && a.len == b.len &&
              a.board == b.board);
        CHECK((a.state == NULL) == (b.state == NULL));
        CHECK((a.group == NULL) == (b.group == NULL));
        CHECK(!a.state || strcmp(a.state, b.state) == 0);
        CHECK(!a.run || strcmp(a.run, b.run) == 0);
        CHECK(!a.group || strcmp(a.group, b.group) == 0);
        CHECK(!a.topic || strcmp(a.topic, b.topic) == 0);
        CHECK(!a.name || strcmp(a.name, b.name) == 0);
        CHECK((a.secret == NULL) == (b.secret == NULL));
        CHECK(!a.secret || strcmp(a.secret, b.secret) == 0);
    }
    ty__wire_req_release(&a);
    ty__wire_req_release(&b);
    free(ff);
}

static void
same_resp(const char *json, size_t len)
{
    char *ff = malloc(len + 1), w1[256] = "", w2[256] = "";
    struct ty_wire_resp a, b;
    int ra, rb;

    ff[0] = '\f';
    memcpy(ff + 1, json, len);
    ra = ty__wire_resp_decode(json, len, &a, w1, sizeof(w1));
    rb = ty__wire_resp_decode(ff, len + 1, &b, w2, sizeof(w2));
    CHECK_MSG(ra == rb, "%.*s: %d vs %d", (int)len, json, ra, rb);
    if (ra == 0 && rb == 0)
        CHECK_MSG(a.id == b.id && a.status == b.status && a.seq == b.seq &&
                      a.upload == b.upload && a.next == b.next &&
                      a.board == b.board,
                  "%.*s", (int)len, json);
    else
        CHECK_EQ_STR(w1, w2);
    ty__wire_resp_release(&a);
    ty__wire_resp_release(&b);
    free(ff);
}

/* Every one-byte deletion, replacement and insertion of each seed. */
static void
mutate(const char *seed, void (*check)(const char *, size_t, const void *),
       const void *arg)
{
    static const char subst[] = "\"\\09-.e,}{: \t\x01x";
    size_t n = strlen(seed);
    char *m = malloc(n + 2);

    check(seed, n, arg);
    for (size_t i = 0; i < n; i++) {
        memcpy(m, seed, i);
        memcpy(m + i, seed + i + 1, n - i - 1);
        check(m, n - 1, arg);
        for (size_t k = 0; k < sizeof(subst); k++) {
            memcpy(m, seed, n);
            m[i] = subst[k]; /* the last one is a NUL */
            check(m, n, arg);
            memcpy(m, seed, i);
            m[i] = subst[k];
            memcpy(m + i + 1, seed + i, n - i);
            check(m, n + 1, arg);
        }
    }
    free(m);
}

static void
check_req(const char *json, size_t len, const void *payload)
{
    same_req(json, len, payload, payload ? 3 : 0, payload != NULL);
}

static void
check_resp(const char *json, size_t len, const void *arg)
{
    (void)arg;
    same_resp(json, len);
}

/* A hello whose run, group and secret are all 255 bytes: the flat
 * decoder keeps the three of them whole. */
static void
t_flat_hello_long_strings(void)
{
    char r[256], g[256], sec[256], json[1024];
    struct ty_wire_req req;
    char why[128];

    memset(r, 'r', 255);
    memset(g, 'g', 255);
    memset(sec, 's', 255);
    r[255] = g[255] = sec[255] = '\0';
    snprintf(json, sizeof(json),
             "{\"id\":1,\"op\":\"hello\",\"run\":\"%s\",\"group\":\"%s\","
             "\"group_index\":0,\"global_index\":0,\"secret\":\"%s\"}",
             r, g, sec);
    CHECK(ty__wire_req_decode(json, strlen(json), NULL, 0, false, &req, why,
                              sizeof(why)) == 0);
    CHECK(req.root == NULL); /* the flat path took it */
    CHECK_EQ_STR(req.run, r);
    CHECK_EQ_STR(req.group, g);
    CHECK_EQ_STR(req.secret, sec);
    ty__wire_req_release(&req);
}

static void
t_flat_decode_agrees(void)
{
    static const char *const reqs[] = {
        "{\"id\":12,\"op\":\"signal_and_wait\",\"state\":\"r-1\","
        "\"target\":200,\"timeout_ms\":30000}",
        "{\"id\":1,\"op\":\"hello\",\"run\":\"r\",\"group\":\"g\","
        "\"group_index\":0,\"global_index\":10}",
        "{\"id\":3,\"op\":\"barrier\",\"state\":\"s\",\"target\":1,"
        "\"timeout_ms\":999999999999999}",
        "{\"id\":4,\"op\":\"signal\",\"state\":\"s\"}",
        "{\"id\":5,\"op\":\"fetch\",\"topic\":\"t\",\"from\":1,\"max\":1000,"
        "\"timeout_ms\":0}",
        "{\"id\":6,\"op\":\"upload_begin\",\"name\":\"a/b.c\",\"size\":0}",
        "{\"id\":9,\"op\":\"signal_and_wait\",\"state\":\"r\",\"target\":2,"
        "\"timeout_ms\":5,\"board\":17}",
        "{\"id\":1,\"op\":\"hello\",\"run\":\"r\",\"group\":\"g\","
        "\"group_index\":0,\"global_index\":1,\"board\":1}",
        "{\"id\":3,\"op\":\"barrier\",\"group\":\"providers\",\"state\":"
        "\"s\",\"target\":2,\"timeout_ms\":5,\"board\":3}",
        "{\"id\":1,\"op\":\"hello\",\"run\":\"r\",\"group\":\"g\","
        "\"group_index\":0,\"global_index\":1,\"board\":1,"
        "\"secret\":\"00ff\"}",
    };
    static const char *const with_payload[] = {
        "{\"id\":7,\"op\":\"upload_chunk\",\"upload\":1,\"offset\":0}",
        "{\"id\":8,\"op\":\"append\",\"name\":\"results.out\"}",
    };
    static const char *const resps[] = {
        "{\"id\":12,\"status\":\"ok\",\"seq\":37}",
        "{\"id\":0,\"status\":\"ok\",\"upload\":1,\"next\":20}",
        "{\"id\":3,\"status\":\"failed\",\"error\":\"x\",\"seq\":2}",
        "{\"id\":1,\"status\":\"ok\",\"board\":5}",
    };

    for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++)
        mutate(reqs[i], check_req, NULL);
    for (size_t i = 0; i < sizeof(with_payload) / sizeof(with_payload[0]);
         i++) {
        mutate(with_payload[i], check_req, "abc");
        mutate(with_payload[i], check_req, NULL);
    }
    for (size_t i = 0; i < sizeof(resps) / sizeof(resps[0]); i++)
        mutate(resps[i], check_resp, NULL);
}

/* Inputs the scanner must turn away without reading past the frame. */
static void
t_flat_decode_malformed(void)
{
    static const char *const bad[] = {
        "{\"id\":1,\"op\":\"signal\",\"state\":\"s\"",
        "{\"id\":1,\"op\":\"signal\",\"state\":\"s",
        "{\"id\":1,\"op\":\"signal\",\"state\":",
        "{\"id\":1,\"op\":\"signal\",\"state\"",
        "{\"id\":1,\"op\":\"signal\",\"state\":\"s\",}",
        "{\"id\":1,\"op\":\"signal\" \"state\":\"s\"}",
        "{\"id\":1000000000000000,\"op\":\"signal\",\"state\":\"s\"}",
        "{\"id\":-1,\"op\":\"signal\",\"state\":\"s\"}",
        "{\"id\":1,\"op\":\"signal\",\"state\":\"s\"}}",
        "{\"id\":1,\"op\":\"signal\",\"state\":1}",
        "{\"id\":1,\"op\":\"signal\",\"state\":\"s\"}\x01",
        "{\"id\":1,\"op\":\"barrier\",\"state\":\"s\",\"target\":0,"
        "\"timeout_ms\":1}",
        "{\"id\":1,\"op\":\"upload_begin\",\"name\":\"x.tmp\",\"size\":1}",
        "{\"id\":1,\"op\":\"nope\",\"state\":\"s\"}",
        "{}",
        "",
    };
    char many[1024], *p = many;
    struct ty_wire_req req;
    char why[256];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t n = strlen(bad[i]);
        char *copy = malloc(n ? n : 1); /* exact size: ASan sees overreads */

        memcpy(copy, bad[i], n);
        CHECK_MSG(ty__wire_req_decode(copy, n, NULL, 0, false, &req, why,
                                      sizeof(why)) < 0,
                  "accepted %s", bad[i]);
        ty__wire_req_release(&req);
        free(copy);
    }
    /* more members than the scanner holds: cJSON decides, and accepts */
    p += sprintf(p, "{\"id\":1,\"op\":\"signal\",\"state\":\"s\"");
    for (int i = 0; i < 20; i++)
        p += sprintf(p, ",\"x%d\":%d", i, i);
    sprintf(p, "}");
    CHECK(decode(many, NULL, 0, false, &req, why, sizeof(why)) == 0);
    CHECK(req.root != NULL);
    CHECK_EQ_STR(req.state, "s");
    ty__wire_req_release(&req);
}

static const struct th_case cases[] = {
    {"flat_hello_long_strings", t_flat_hello_long_strings},
    {"print_responses", t_flat_print_responses},
    {"print_requests", t_flat_print_requests},
    {"decode_taken", t_flat_decode_taken},
    {"decode_agrees", t_flat_decode_agrees},
    {"decode_malformed", t_flat_decode_malformed},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
