/*
 * test_syncsvc.c — the sync service with many raw DEALER clients in one
 * process: hello checks, signal sequence numbers, barriers for hundreds of
 * clients, timeouts, barriers failing at once when an instance ends,
 * cursor fetches and late subscribers, topic bounds, uploads that arrive
 * whole or not at all, appends, malformed requests and the barrier log.
 *
 * The fixture (service, clients, pump) is tests/unit/sync/svc_fixture.c.
 */
#include "svc_fixture.h"
#include "th.h"
#include "base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

/* ---- tests ------------------------------------------------------------- */

static void
t_hello_checks(void)
{
    const char *sec;
    cJSON *r;

    fix_start(3);
    sec = syncsvc_secret(F.svc);
    CHECK(syncsvc_port(F.svc) > 0);
    CHECK_CONTAINS(syncsvc_endpoint(F.svc), "tcp://127.0.0.1:");
    sendf(0,
          "{\"id\":1,\"op\":\"hello\",\"run\":\"other\",\"group\":\"g\","
          "\"group_index\":0,\"global_index\":0,\"secret\":\"%s\"}",
          sec);
    r = expect(0, "denied");
    CHECK_CONTAINS(error_of(r), "unknown run \"other\"");
    cJSON_Delete(r);
    sendf(0,
          "{\"id\":1,\"op\":\"hello\",\"run\":\"" RUN "\",\"group\":\"g\","
          "\"group_index\":0,\"global_index\":3,\"secret\":\"%s\"}",
          sec);
    r = expect(0, "denied");
    CHECK_CONTAINS(error_of(r), "not in the run");
    cJSON_Delete(r);
    sendf(0,
          "{\"id\":1,\"op\":\"hello\",\"run\":\"" RUN "\",\"group\":\"h\","
          "\"group_index\":1,\"global_index\":1,\"secret\":\"%s\"}",
          sec);
    r = expect(0, "denied");
    CHECK_CONTAINS(error_of(r), "is g/1, not h/1");
    cJSON_Delete(r);
    hello(0);
    expect_free(0, "ok");
    CHECK_EQ_INT(F.hellos, 1);
    syncsvc_instance_exited(F.svc, 2, "exited with status 0");
    hello(2);
    r = expect(2, "denied");
    CHECK_CONTAINS(error_of(r), "g/2 already ended");
    cJSON_Delete(r);
    fix_stop();
}

static void
t_signal_sequence(void)
{
    bool seen[11] = {false};

    fix_start(10);
    hello_all();
    for (int i = 0; i < 10; i++)
        sendf(i, "{\"id\":2,\"op\":\"signal\",\"state\":\"leader\"}");
    for (int i = 0; i < 10; i++) {
        cJSON *r = expect(i, "ok");
        int64_t seq = int_of(r, "seq");

        CHECK_MSG(seq >= 1 && seq <= 10 && !seen[seq], "seq %lld",
                  (long long)seq);
        if (seq >= 1 && seq <= 10)
            seen[seq] = true;
        cJSON_Delete(r);
    }
    sendf(3, "{\"id\":3,\"op\":\"signal\",\"state\":\"other\"}");
    cJSON *r = expect(3, "ok");
    CHECK_EQ_INT(int_of(r, "seq"), 1);
    cJSON_Delete(r);
    fix_stop();
}

/* Hundreds of clients through one barrier; one log line records it. */
static void
t_barrier_many(void)
{
    const int n = getenv("TH_NOFORK") ? 200 : 500;
    int64_t t0;
    char *log, *path;
    size_t len;

    fix_start(n);
    hello_all();
    t0 = now_mono_ns();
    for (int i = 0; i < n; i++)
        sendf(i,
              "{\"id\":9,\"op\":\"signal_and_wait\",\"state\":\"ready\","
              "\"target\":%d,\"timeout_ms\":30000}",
              n);
    for (int i = 0; i < n; i++)
        expect_free(i, "ok");
    printf("# %d clients through one barrier in %.1f ms\n", n,
           (now_mono_ns() - t0) / 1e6);
    CHECK_EQ_INT(F.released, 1);
    CHECK_EQ_INT(F.waiting, 0);
    path = path_join(F.dir, "barriers.jsonl");
    log = read_file_str(path, &len);
    CHECK_CONTAINS(log, "\"state\":\"ready\"");
    CHECK_CONTAINS(log, "\"result\":\"released\"");
    CHECK_MSG(log && strchr(log, '\n') == log + len - 1, "one line: %s", log);
    free(log);
    free(path);
    fix_stop();
}

static void
t_barrier_timeout(void)
{
    int64_t t0;
    cJSON *r;
    char *log, *path;

    fix_start(3);
    hello_all();
    t0 = now_mono_ns();
    sendf(0, "{\"id\":4,\"op\":\"barrier\",\"state\":\"s\",\"target\":2,"
             "\"timeout_ms\":200}");
    for (int i = 0; i < 20 && F.waiting == 0; i++)
        pump(1);
    CHECK_EQ_INT(F.waiting, 1);
    CHECK(syncsvc_next_deadline_ms(F.svc) > 0);
    r = expect(0, "timeout");
    CHECK_MSG(now_mono_ns() - t0 >= 190 * 1000000LL, "too early");
    CHECK_CONTAINS(error_of(r), "timed out at 0 of 2");
    cJSON_Delete(r);
    CHECK_EQ_INT(F.waiting, 0);
    CHECK_EQ_INT(syncsvc_next_deadline_ms(F.svc), -1);
    path = path_join(F.dir, "barriers.jsonl");
    log = read_file_str(path, NULL);
    CHECK_CONTAINS(log, "\"result\":\"timeout\"");
    free(log);
    free(path);
    fix_stop();
}

/* An instance ends before signalling: every waiter fails at once. */
static void
t_barrier_fails_on_exit(void)
{
    int64_t t0;
    cJSON *r;
    char *log, *path;

    fix_start(4);
    hello_all();
    for (int i = 0; i < 3; i++)
        sendf(i, "{\"id\":6,\"op\":\"signal_and_wait\",\"state\":\"go\","
                 "\"target\":4,\"timeout_ms\":60000}");
    for (int i = 0; i < 20; i++)
        pump(1);
    CHECK_EQ_INT(F.waiting, 3);
    t0 = now_mono_ns();
    syncsvc_instance_exited(F.svc, 3, "exited with status 137 (oom)");
    for (int i = 0; i < 3; i++) {
        r = expect(i, "failed");
        CHECK_CONTAINS(error_of(r), "g/3 exited with status 137 (oom)");
        CHECK_MSG(int_of(r, "seq") >= 1, "seq kept");
        cJSON_Delete(r);
    }
    CHECK_MSG(now_mono_ns() - t0 < 1000000000LL, "failed within a second");
    CHECK_EQ_INT(F.failed, 1);
    CHECK_EQ_INT(F.waiting, 0);
    /* Asked later, the same target fails on the spot, naming g/3. */
    sendf(0, "{\"id\":7,\"op\":\"barrier\",\"state\":\"go\",\"target\":4,"
             "\"timeout_ms\":60000}");
    r = expect(0, "failed");
    CHECK_CONTAINS(error_of(r), "g/3 exited with status 137 (oom)");
    cJSON_Delete(r);
    /* Three can still be met. */
    sendf(0, "{\"id\":8,\"op\":\"barrier\",\"state\":\"go\",\"target\":3,"
             "\"timeout_ms\":60000}");
    expect_free(0, "ok");
    path = path_join(F.dir, "barriers.jsonl");
    log = read_file_str(path, NULL);
    CHECK_CONTAINS(log, "\"result\":\"failed\"");
    CHECK_CONTAINS(log, "exited with status 137 (oom)");
    free(log);
    free(path);
    fix_stop();
}

/* An instance that signalled and then ended still counts. */
static void
t_exit_after_signal_counts(void)
{
    fix_start(3);
    hello_all();
    sendf(0, "{\"id\":2,\"op\":\"signal\",\"state\":\"s\"}");
    expect_free(0, "ok");
    syncsvc_instance_exited(F.svc, 0, "exited with status 0");
    for (int i = 1; i < 3; i++)
        sendf(i, "{\"id\":3,\"op\":\"signal_and_wait\",\"state\":\"s\","
                 "\"target\":3,\"timeout_ms\":5000}");
    expect_free(1, "ok");
    expect_free(2, "ok");
    /* A target above what can ever be reached fails at once. */
    sendf(1, "{\"id\":4,\"op\":\"barrier\",\"state\":\"t\",\"target\":5,"
             "\"timeout_ms\":5000}");
    cJSON *r = expect(1, "failed");
    CHECK_CONTAINS(error_of(r), "g/0 exited with status 0");
    cJSON_Delete(r);
    fix_stop();
}

static void
t_pubsub_cursor(void)
{
    cJSON *r, *items;

    fix_start(3);
    hello_all();
    for (int i = 1; i <= 5; i++) {
        sendf(0,
              "{\"id\":%d,\"op\":\"publish\",\"topic\":\"peers\","
              "\"value\":{\"n\":%d}}",
              i, i);
        r = expect(0, "ok");
        CHECK_EQ_INT(int_of(r, "seq"), i);
        cJSON_Delete(r);
    }
    sendf(1, "{\"id\":1,\"op\":\"fetch\",\"topic\":\"peers\",\"from\":1,"
             "\"max\":3,\"timeout_ms\":0}");
    r = expect(1, "ok");
    items = cJSON_GetObjectItem(r, "items");
    CHECK_EQ_INT(cJSON_GetArraySize(items), 3);
    CHECK_EQ_INT(int_of(r, "next"), 4);
    CHECK_EQ_INT(int_of(cJSON_GetArrayItem(items, 2), "seq"), 3);
    CHECK_EQ_INT(
        int_of(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 2), "value"), "n"),
        3);
    cJSON_Delete(r);
    /* A parked fetch is answered by the next publish. */
    sendf(1, "{\"id\":2,\"op\":\"fetch\",\"topic\":\"peers\",\"from\":6,"
             "\"max\":10,\"timeout_ms\":5000}");
    for (int i = 0; i < 10; i++)
        pump(1);
    CHECK(recv_resp(1, 50) == NULL);
    sendf(2, "{\"id\":1,\"op\":\"publish\",\"topic\":\"peers\","
             "\"value\":\"six\"}");
    expect_free(2, "ok");
    r = expect(1, "ok");
    items = cJSON_GetObjectItem(r, "items");
    CHECK_EQ_INT(cJSON_GetArraySize(items), 1);
    CHECK_EQ_STR(
        cJSON_GetObjectItem(cJSON_GetArrayItem(items, 0), "value")->valuestring,
        "six");
    CHECK_EQ_INT(int_of(r, "next"), 7);
    cJSON_Delete(r);
    /* A late subscriber gets everything in one answer. */
    sendf(2, "{\"id\":2,\"op\":\"fetch\",\"topic\":\"peers\",\"from\":1,"
             "\"max\":1000,\"timeout_ms\":0}");
    r = expect(2, "ok");
    CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(r, "items")), 6);
    cJSON_Delete(r);
    sendf(2, "{\"id\":3,\"op\":\"fetch\",\"topic\":\"empty\",\"from\":1,"
             "\"max\":10,\"timeout_ms\":100}");
    expect_free(2, "timeout");
    fix_stop();
}

static void
t_topic_bounds(void)
{
    cJSON *r;

    fix_start_bounded(1, 3, 40);
    hello_all();
    for (int i = 1; i <= 3; i++) {
        sendf(0,
              "{\"id\":%d,\"op\":\"publish\",\"topic\":\"t\","
              "\"value\":%d}",
              i, i);
        expect_free(0, "ok");
    }
    sendf(0, "{\"id\":4,\"op\":\"publish\",\"topic\":\"t\",\"value\":4}");
    r = expect(0, "full");
    CHECK_CONTAINS(error_of(r), "topic \"t\" is full: it holds 3 entries");
    cJSON_Delete(r);
    sendf(0, "{\"id\":5,\"op\":\"publish\",\"topic\":\"u\","
             "\"value\":\"0123456789012345678901234567890123456789\"}");
    r = expect(0, "full");
    CHECK_CONTAINS(error_of(r), "bound of 40 bytes");
    cJSON_Delete(r);
    fix_stop();
}

static void
begin_upload(int c, const char *name, size_t size, int64_t *uid)
{
    cJSON *r;

    sendf(c,
          "{\"id\":1,\"op\":\"upload_begin\",\"name\":\"%s\","
          "\"size\":%zu}",
          name, size);
    r = expect(c, "ok");
    *uid = int_of(r, "upload");
    CHECK(*uid >= 1);
    cJSON_Delete(r);
}

static void
send_chunk(int c, int64_t uid, size_t off, const char *data, size_t len)
{
    char json[256];

    snprintf(json, sizeof(json),
             "{\"id\":2,\"op\":\"upload_chunk\",\"upload\":%lld,"
             "\"offset\":%zu}",
             (long long)uid, off);
    send_frames(c, json, data + off, len, true);
}

/* A multi-MiB upload with 8 chunks in flight arrives byte for byte. */
static void
t_upload_whole(void)
{
    const size_t size = 5 * 1024 * 1024 + 123, chunk = 256 * 1024;
    char *data = xmalloc(size), *got, *path, *tmp;
    size_t off = 0, inflight = 0, len = 0;
    int64_t uid;

    for (size_t i = 0; i < size; i++)
        data[i] = (char)((i * 2654435761u) >> 13);
    fix_start(1);
    hello_all();
    begin_upload(0, "heap/heap-1.pb.gz", size, &uid);
    while (off < size || inflight > 0) {
        if (off < size && inflight < 8) {
            size_t n = size - off < chunk ? size - off : chunk;

            send_chunk(0, uid, off, data, n);
            off += n;
            inflight++;
            continue;
        }
        expect_free(0, "ok");
        inflight--;
    }
    path = xasprintf("%s/g/0/heap/heap-1.pb.gz", F.dir);
    tmp = xasprintf("%s.tmp", path);
    CHECK(!path_exists(path));
    sendf(0, "{\"id\":3,\"op\":\"upload_end\",\"upload\":%lld}",
          (long long)uid);
    expect_free(0, "ok");
    got = read_file_str(path, &len);
    CHECK_EQ_INT(len, size);
    CHECK(got != NULL && memcmp(got, data, size) == 0);
    CHECK(!path_exists(tmp));
    free(got);
    free(path);
    free(tmp);
    free(data);
    fix_stop();
}

/* The client vanishes mid-upload: no file, no temporary. */
static void
t_upload_absent_when_client_gone(void)
{
    char data[1000];
    char *path, *tmp;
    int64_t uid;

    memset(data, 'x', sizeof(data));
    fix_start(2);
    hello_all();
    begin_upload(0, "big.bin", 100000, &uid);
    send_chunk(0, uid, 0, data, sizeof(data));
    expect_free(0, "ok");
    path = xasprintf("%s/g/0/big.bin", F.dir);
    tmp = xasprintf("%s.tmp", path);
    CHECK(path_exists(tmp));
    zmq_close(F.cli[0]);
    F.cli[0] = NULL;
    syncsvc_instance_exited(F.svc, 0, "was killed by signal 9");
    CHECK(!path_exists(tmp));
    CHECK(!path_exists(path));
    /* An upload that ends short is dropped too. */
    begin_upload(1, "short.bin", 10, &uid);
    send_chunk(1, uid, 0, data, 5);
    expect_free(1, "ok");
    sendf(1, "{\"id\":3,\"op\":\"upload_end\",\"upload\":%lld}",
          (long long)uid);
    expect_free(1, "invalid");
    free(path);
    path = xasprintf("%s/g/1/short.bin", F.dir);
    CHECK(!path_exists(path));
    free(path);
    free(tmp);
    fix_stop();
}

static void
t_upload_rules_and_append(void)
{
    char data[10] = "0123456789";
    char *got, *path;
    cJSON *r;
    int64_t uid;

    fix_start(1);
    hello_all();
    sendf(0, "{\"id\":1,\"op\":\"upload_begin\",\"name\":\"../escape\","
             "\"size\":1}");
    expect_free(0, "invalid");
    begin_upload(0, "a.bin", 10, &uid);
    sendf(0, "{\"id\":1,\"op\":\"upload_begin\",\"name\":\"a.bin\","
             "\"size\":1}");
    r = expect(0, "busy");
    CHECK_CONTAINS(error_of(r), "already being uploaded");
    cJSON_Delete(r);
    send_chunk(0, uid, 3, data, 2); /* out of order */
    expect_free(0, "invalid");
    sendf(0, "{\"id\":3,\"op\":\"upload_end\",\"upload\":%lld}",
          (long long)uid);
    expect_free(0, "notfound");
    /* Appends add whole messages to the end of the file. */
    send_frames(0, "{\"id\":1,\"op\":\"append\",\"name\":\"results.out\"}",
                "{\"a\":1}\n", 8, true);
    expect_free(0, "ok");
    send_frames(0, "{\"id\":2,\"op\":\"append\",\"name\":\"results.out\"}",
                "{\"b\":2}\n", 8, true);
    expect_free(0, "ok");
    path = xasprintf("%s/g/0/results.out", F.dir);
    got = read_file_str(path, NULL);
    CHECK_EQ_STR(got, "{\"a\":1}\n{\"b\":2}\n");
    free(got);
    free(path);
    fix_stop();
}

/* A link the instance planted in its folder takes no upload or append,
 * on any component; the runner's own names are refused. */
static void
t_upload_links_refused(void)
{
    char *outside, *p, *got;
    cJSON *r;
    int64_t uid;

    fix_start(1);
    hello_all();
    outside = xasprintf("%s/outside", F.dir);
    CHECK(mkdir(outside, 0755) == 0);
    p = xasprintf("%s/g/0", F.dir);
    CHECK(mkdir_p(p, NULL) == 0);
    free(p);
    p = xasprintf("%s/g/0/sub", F.dir);
    CHECK(symlink(outside, p) == 0);
    free(p);
    p = xasprintf("%s/g/0/results.out", F.dir);
    CHECK(symlink("../../outside/victim", p) == 0);
    free(p);
    sendf(0, "{\"id\":1,\"op\":\"upload_begin\",\"name\":\"sub/x.bin\","
             "\"size\":1}");
    r = expect(0, "ioerr");
    CHECK_CONTAINS(error_of(r), "symbolic link");
    cJSON_Delete(r);
    send_frames(0, "{\"id\":2,\"op\":\"append\",\"name\":\"sub/y\"}", "{}\n", 3,
                true);
    expect_free(0, "ioerr");
    send_frames(0, "{\"id\":3,\"op\":\"append\",\"name\":\"results.out\"}",
                "{}\n", 3, true);
    expect_free(0, "ioerr");
    got = xasprintf("%s/victim", outside);
    CHECK(!path_exists(got));
    free(got);
    got = xasprintf("%s/x.bin.tmp", outside);
    CHECK(!path_exists(got));
    free(got);
    sendf(0, "{\"id\":4,\"op\":\"upload_begin\",\"name\":\"run.out\","
             "\"size\":1}");
    r = expect(0, "invalid");
    CHECK_CONTAINS(error_of(r), "written by the runner");
    cJSON_Delete(r);
    send_frames(0, "{\"id\":5,\"op\":\"append\",\"name\":\"memory.csv\"}",
                "{}\n", 3, true);
    expect_free(0, "invalid");
    for (int i = 0; i < 2; i++) {
        cleanup_free char *req =
            xasprintf("{\"id\":%d,\"op\":\"append\",\"name\":\"%s\"}", 50 + i,
                      i == 0 ? "processes.csv" : "disk.csv");

        send_frames(0, req, "{}\n", 3, true);
        expect_free(0, "invalid");
    }
    begin_upload(0, "fine.bin", 1, &uid);
    free(outside);
    fix_stop();
}

/* What an instance sends is charged against its quota: an upload that
 * would cross it is refused at begin, one dropped gives its bytes back,
 * and appends count too. */
static void
t_output_quota(void)
{
    char data[100];
    cJSON *r;
    int64_t uid;

    memset(data, 'q', sizeof(data));
    fix_quota = 150;
    fix_start(1);
    fix_quota = 0;
    hello_all();
    sendf(0, "{\"id\":1,\"op\":\"upload_begin\",\"name\":\"big.bin\","
             "\"size\":151}");
    r = expect(0, "full");
    CHECK_CONTAINS(error_of(r), "output quota of 150 bytes");
    cJSON_Delete(r);
    begin_upload(0, "a.bin", 100, &uid);
    sendf(0, "{\"id\":2,\"op\":\"upload_abort\",\"upload\":%lld}",
          (long long)uid);
    expect_free(0, "ok");
    begin_upload(0, "b.bin", 100, &uid);
    send_chunk(0, uid, 0, data, 100);
    expect_free(0, "ok");
    sendf(0, "{\"id\":3,\"op\":\"upload_end\",\"upload\":%lld}",
          (long long)uid);
    expect_free(0, "ok");
    send_frames(0, "{\"id\":4,\"op\":\"append\",\"name\":\"r.out\"}", data, 40,
                true);
    expect_free(0, "ok");
    send_frames(0, "{\"id\":5,\"op\":\"append\",\"name\":\"r.out\"}", data, 20,
                true);
    r = expect(0, "full");
    CHECK_CONTAINS(error_of(r), "140 sent, 20 more asked");
    cJSON_Delete(r);
    fix_stop();
}

/* Upload name (size bytes of data) from begin to end; the end's status. */
static void
upload_whole(const char *name, const char *data, size_t size, const char *want)
{
    int64_t uid;

    begin_upload(0, name, (int64_t)size, &uid);
    send_chunk(0, uid, 0, data, size);
    expect_free(0, "ok");
    sendf(0, "{\"id\":9,\"op\":\"upload_end\",\"upload\":%lld}",
          (long long)uid);
    expect_free(0, want);
}

/* A file uploaded again under its name (heap-peak, heap-pre-oom) renames
 * over the old one and is charged only for what it adds: ten renewals of
 * 100 bytes fit in a quota of 250, and the folder holds the last. */
static void
t_output_quota_replace(void)
{
    char data[100], *path, *got;
    size_t len;
    cJSON *r;

    memset(data, 'r', sizeof(data));
    fix_quota = 250;
    fix_start(1);
    fix_quota = 0;
    hello_all();
    for (int i = 0; i < 10; i++) {
        data[0] = (char)('0' + i);
        upload_whole("heap-peak.json", data, sizeof(data), "ok");
    }
    path = xasprintf("%s/g/0/heap-peak.json", F.dir);
    got = read_file_str(path, &len);
    CHECK_EQ_INT(len, 100);
    CHECK(got != NULL && got[0] == '9');
    free(got);
    free(path);
    upload_whole("other.json", data, sizeof(data), "ok");
    sendf(0, "{\"id\":1,\"op\":\"upload_begin\",\"name\":\"third\","
             "\"size\":100}");
    r = expect(0, "full");
    CHECK_CONTAINS(error_of(r), "200 sent, 100 more asked");
    cJSON_Delete(r);
    fix_stop();
}

/* The next answer to client c as raw text (pumping), in buf. */
static bool
recv_raw(int c, char *buf, size_t size)
{
    for (int i = 0; i < 2000; i++) {
        int n = zmq_recv(F.cli[c], buf, size - 1, ZMQ_DONTWAIT);

        if (n >= 0) {
            buf[(size_t)n < size - 1 ? (size_t)n : size - 1] = '\0';
            return true;
        }
        pump(2);
    }
    return false;
}

/* One publish answers readers parked from different cursors and with
 * different limits, each with its own items, in exactly the bytes cJSON
 * prints for the answer. */
static void
t_pubsub_shared_answers(void)
{
    static const char *const want[4] = {
        "{\"id\":4,\"status\":\"ok\",\"next\":2,\"items\":[{\"seq\":1,"
        "\"value\":{\"a\":[1,2.5,\"x\\\"y\"]}}]}",
        "{\"id\":5,\"status\":\"ok\",\"next\":2,\"items\":[{\"seq\":1,"
        "\"value\":{\"a\":[1,2.5,\"x\\\"y\"]}}]}",
        "{\"id\":6,\"status\":\"ok\",\"next\":3,\"items\":[{\"seq\":2,"
        "\"value\":null}]}",
        "{\"id\":7,\"status\":\"ok\",\"next\":3,\"items\":[{\"seq\":1,"
        "\"value\":{\"a\":[1,2.5,\"x\\\"y\"]}},{\"seq\":2,\"value\":null}]}",
    };
    char buf[4096];

    fix_start(4);
    hello_all();
    sendf(0, "{\"id\":4,\"op\":\"fetch\",\"topic\":\"t\",\"from\":1,"
             "\"max\":10,\"timeout_ms\":5000}");
    sendf(1, "{\"id\":5,\"op\":\"fetch\",\"topic\":\"t\",\"from\":1,"
             "\"max\":1,\"timeout_ms\":5000}");
    sendf(2, "{\"id\":6,\"op\":\"fetch\",\"topic\":\"t\",\"from\":2,"
             "\"max\":10,\"timeout_ms\":5000}");
    for (int i = 0; i < 20; i++)
        pump(1);
    sendf(3, "{\"id\":1,\"op\":\"publish\",\"topic\":\"t\","
             "\"value\":{ \"a\" : [1, 2.5, \"x\\\"y\"] }}");
    expect_free(3, "ok");
    for (int c = 0; c < 2; c++) {
        CHECK(recv_raw(c, buf, sizeof(buf)));
        CHECK_EQ_STR(buf, want[c]);
    }
    CHECK(recv_resp(2, 50) == NULL); /* it waits for item 2 */
    sendf(3, "{\"id\":2,\"op\":\"publish\",\"topic\":\"t\","
             "\"value\":null}");
    expect_free(3, "ok");
    CHECK(recv_raw(2, buf, sizeof(buf)));
    CHECK_EQ_STR(buf, want[2]);
    sendf(0, "{\"id\":7,\"op\":\"fetch\",\"topic\":\"t\",\"from\":1,"
             "\"max\":10,\"timeout_ms\":0}");
    CHECK(recv_raw(0, buf, sizeof(buf)));
    CHECK_EQ_STR(buf, want[3]);
    fix_stop();
}

/* A barrier scoped to a group counts only that group's live instances as
 * signallers to come: when one of them ends it fails at once, where the
 * same barrier over the whole run keeps waiting on the other group. */
static void
t_barrier_in_group(void)
{
    cJSON *r;

    fix_split = 2; /* g/0 g/1 h/0 h/1 */
    fix_start(4);
    hello_all();
    sendf(0, "{\"id\":2,\"op\":\"signal_and_wait\",\"state\":\"p\","
             "\"target\":2,\"timeout_ms\":60000,\"group\":\"g\"}");
    sendf(2, "{\"id\":2,\"op\":\"barrier\",\"state\":\"q\",\"target\":2,"
             "\"timeout_ms\":60000}");
    sendf(3, "{\"id\":2,\"op\":\"signal\",\"state\":\"q\"}");
    expect_free(3, "ok");
    for (int i = 0; i < 20; i++)
        pump(1);
    syncsvc_instance_exited(F.svc, 1, "exited with status 137 (oom)");
    r = expect(0, "failed");
    CHECK_CONTAINS(error_of(r), "g/1 exited with status 137 (oom): barrier "
                                "\"p\" in group g can no longer reach 2");
    CHECK_EQ_INT(int_of(r, "seq"), 1);
    cJSON_Delete(r);
    /* the unscoped "q" can still be met by g/0 or h/0 */
    r = recv_resp(2, 100);
    CHECK_MSG(r == NULL, "the run-wide barrier failed too");
    cJSON_Delete(r);
    sendf(0, "{\"id\":3,\"op\":\"signal\",\"state\":\"q\"}");
    expect_free(0, "ok");
    expect_free(2, "ok");
    /* a scoped barrier met normally, and one already out of reach */
    sendf(2, "{\"id\":4,\"op\":\"signal_and_wait\",\"state\":\"s\","
             "\"target\":1,\"timeout_ms\":1000,\"group\":\"h\"}");
    expect_free(2, "ok");
    sendf(0, "{\"id\":5,\"op\":\"barrier\",\"state\":\"t\",\"target\":2,"
             "\"timeout_ms\":1000,\"group\":\"g\"}");
    r = expect(0, "failed");
    CHECK_CONTAINS(error_of(r), "g/1 exited");
    cJSON_Delete(r);
    /* an unknown group is refused before the signal counts */
    sendf(3, "{\"id\":6,\"op\":\"signal_and_wait\",\"state\":\"u\","
             "\"target\":1,\"timeout_ms\":1000,\"group\":\"x\"}");
    r = expect(3, "invalid");
    CHECK_CONTAINS(error_of(r), "the run has no group \"x\"");
    cJSON_Delete(r);
    sendf(3, "{\"id\":7,\"op\":\"signal\",\"state\":\"u\"}");
    r = expect(3, "ok");
    CHECK_EQ_INT(int_of(r, "seq"), 1);
    cJSON_Delete(r);
    fix_stop();
    fix_split = 0;
}

static void
t_malformed(void)
{
    cJSON *r;

    fix_start(1);
    hello_all();
    sendf(0, "this is not json");
    r = expect(0, "invalid");
    CHECK_EQ_INT(int_of(r, "id"), 0);
    CHECK_CONTAINS(error_of(r), "invalid JSON");
    cJSON_Delete(r);
    sendf(0, "{\"id\":12,\"op\":\"barrier\",\"state\":\"s\"}");
    r = expect(0, "invalid");
    CHECK_EQ_INT(int_of(r, "id"), 12);
    CHECK_CONTAINS(error_of(r), "missing field \"target\"");
    cJSON_Delete(r);
    for (int i = 0; i < 4; i++)
        zmq_send(F.cli[0], "{}", 2, i < 3 ? ZMQ_SNDMORE : 0);
    r = expect(0, "invalid");
    CHECK_CONTAINS(error_of(r), "at most one payload frame");
    cJSON_Delete(r);
    /* Still served after all that. */
    sendf(0, "{\"id\":13,\"op\":\"signal\",\"state\":\"s\"}");
    expect_free(0, "ok");
    fix_stop();
}

static void
t_events_and_cancel(void)
{
    cJSON *r;

    fix_start(2);
    hello_all();
    sendf(0, "{\"id\":1,\"op\":\"event\",\"event\":{\"type\":\"stage_start\","
             "\"name\":\"warmup\"}}");
    expect_free(0, "ok");
    CHECK_EQ_INT(F.events, 1);
    CHECK_EQ_STR(F.last_event, "stage_start");
    sendf(0, "{\"id\":2,\"op\":\"barrier\",\"state\":\"s\",\"target\":2,"
             "\"timeout_ms\":60000}");
    sendf(1, "{\"id\":2,\"op\":\"fetch\",\"topic\":\"t\",\"from\":1,"
             "\"max\":1,\"timeout_ms\":60000}");
    for (int i = 0; i < 20; i++)
        pump(1);
    syncsvc_cancel_all(F.svc, "the run was canceled (SIGINT)");
    r = expect(0, "canceled");
    CHECK_CONTAINS(error_of(r), "SIGINT");
    cJSON_Delete(r);
    expect_free(1, "canceled");
    CHECK_EQ_INT(syncsvc_next_deadline_ms(F.svc), -1);
    /* Waits still parked at destroy are freed (ASan/valgrind check). */
    sendf(0, "{\"id\":3,\"op\":\"barrier\",\"state\":\"s\",\"target\":2,"
             "\"timeout_ms\":60000}");
    sendf(1, "{\"id\":3,\"op\":\"fetch\",\"topic\":\"t\",\"from\":1,"
             "\"max\":1,\"timeout_ms\":60000}");
    for (int i = 0; i < 20; i++)
        pump(1);
    CHECK(syncsvc_next_deadline_ms(F.svc) > 0);
    fix_stop();
}

static const struct th_case cases[] = {
    {"hello_checks", t_hello_checks},
    {"signal_sequence", t_signal_sequence},
    {"barrier_many", t_barrier_many},
    {"barrier_timeout", t_barrier_timeout},
    {"barrier_fails_on_exit", t_barrier_fails_on_exit},
    {"exit_after_signal_counts", t_exit_after_signal_counts},
    {"pubsub_cursor", t_pubsub_cursor},
    {"topic_bounds", t_topic_bounds},
    {"upload_whole", t_upload_whole},
    {"upload_absent_when_client_gone", t_upload_absent_when_client_gone},
    {"upload_rules_and_append", t_upload_rules_and_append},
    {"upload_links_refused", t_upload_links_refused},
    {"output_quota", t_output_quota},
    {"output_quota_replace", t_output_quota_replace},
    {"pubsub_shared_answers", t_pubsub_shared_answers},
    {"barrier_in_group", t_barrier_in_group},
    {"malformed", t_malformed},
    {"events_and_cancel", t_events_and_cancel},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
