/*
 * test_syncsvc_auth.c — the sync service against clients that should not
 * get in, or should not get far: hellos without or with a wrong secret
 * get one `denied` that names nothing of the run; connection slots come
 * back when their connections close; another user cannot open the
 * release board or its FIFO; topic and state bombs hit the run-wide
 * bounds and the service's memory stays within them.
 *
 * The fixture (service, clients, pump) is tests/unit/sync/svc_fixture.c.
 */
#include "svc_fixture.h"
#include "th.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#ifdef TY_SANITIZE
/* From <sanitizer/allocator_interface.h>, which gcc does not install:
 * the bytes in use, without what ASan keeps in quarantine. */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#define DENIED_REPLY(id)                                                       \
    "{\"id\":" id ",\"status\":\"denied\",\"error\":\"denied: say hello "      \
    "with the run's secret first\"}"

/* The next message on sock as bytes (NUL-terminated), pumping the
 * service; its length, or -1 after timeout_ms. */
static int
recv_raw(void *sock, char *buf, size_t size, int timeout_ms)
{
    int64_t end = now_mono_ns() / 1000000 + timeout_ms;

    do {
        int n = zmq_recv(sock, buf, size - 1, ZMQ_DONTWAIT);

        if (n >= 0) {
            buf[(size_t)n < size - 1 ? (size_t)n : size - 1] = '\0';
            return n;
        }
        pump(2);
    } while (now_mono_ns() / 1000000 < end);
    return -1;
}

static void
send_str(void *sock, const char *json)
{
    CHECK(zmq_send(sock, json, strlen(json), 0) >= 0);
}

/* Hello as instance 0 (g/0) of RUN with the given secret part
 * (`,"secret":"..."` or ""). */
static void
hello_as0(void *sock, const char *secret_part)
{
    char json[512];

    snprintf(json, sizeof(json),
             "{\"id\":1,\"op\":\"hello\",\"run\":\"" RUN "\",\"group\":\"g\","
             "\"group_index\":0,\"global_index\":0%s}",
             secret_part);
    send_str(sock, json);
}

/* Hello as g/0 on sock until the answer is not "busy" (the service frees
 * the slots of closed connections when their disconnect reaches it, a
 * moment after the close), for up to 5 s; the last answer into buf. */
static void
hello_as0_settled(void *sock, const char *secret_part, char *buf, size_t size)
{
    for (int tries = 0; tries < 250; tries++) {
        hello_as0(sock, secret_part);
        if (recv_raw(sock, buf, size, 5000) <= 0)
            buf[0] = '\0';
        if (strstr(buf, "\"status\":\"busy\"") == NULL)
            return;
        usleep(20 * 1000);
    }
}

/* Nothing in a refusal names the run, an instance or how many there are. */
static void
check_reveals_nothing(const char *reply)
{
    CHECK_MSG(strstr(reply, RUN) == NULL, "run id in %s", reply);
    CHECK_MSG(strstr(reply, "g/") == NULL, "instance name in %s", reply);
    CHECK_MSG(strchr(reply, '3') == NULL, "a count in %s", reply);
}

static void
t_forged_hello(void)
{
    char buf[4096], wrong[128];
    const char *sec;

    fix_start(3);
    sec = syncsvc_secret(F.svc);
    CHECK_EQ_INT(strlen(sec), 64);
    CHECK(strspn(sec, "0123456789abcdef") == 64);
    hello_as0(F.cli[0], "");
    CHECK(recv_raw(F.cli[0], buf, sizeof(buf), 5000) > 0);
    CHECK_EQ_STR(buf, DENIED_REPLY("1"));
    check_reveals_nothing(buf);
    /* the same length, one digit off */
    snprintf(wrong, sizeof(wrong), ",\"secret\":\"%s\"", sec);
    wrong[11] = wrong[11] == '0' ? '1' : '0';
    hello_as0(F.cli[0], wrong);
    CHECK(recv_raw(F.cli[0], buf, sizeof(buf), 5000) > 0);
    CHECK_EQ_STR(buf, DENIED_REPLY("1"));
    hello_as0(F.cli[0], ",\"secret\":\"x\"");
    CHECK(recv_raw(F.cli[0], buf, sizeof(buf), 5000) > 0);
    CHECK_EQ_STR(buf, DENIED_REPLY("1"));
    /* a wrong secret with a wrong run and instance: still nothing */
    send_str(F.cli[1], "{\"id\":7,\"op\":\"hello\",\"run\":\"guess\","
                       "\"group\":\"x\",\"group_index\":9,\"global_index\":9,"
                       "\"secret\":\"00\"}");
    CHECK(recv_raw(F.cli[1], buf, sizeof(buf), 5000) > 0);
    CHECK_EQ_STR(buf, DENIED_REPLY("7"));
    /* and no request goes through after a refused hello */
    send_str(F.cli[0], "{\"id\":2,\"op\":\"event\",\"event\":{\"type\":"
                       "\"failure\",\"error\":\"forged\"}}");
    CHECK(recv_raw(F.cli[0], buf, sizeof(buf), 5000) > 0);
    CHECK_EQ_STR(buf, DENIED_REPLY("2"));
    send_str(F.cli[0], "{\"id\":3,\"op\":\"signal\",\"state\":\"s\"}");
    CHECK(recv_raw(F.cli[0], buf, sizeof(buf), 5000) > 0);
    CHECK_EQ_STR(buf, "{\"id\":3,\"status\":\"denied\",\"error\":\"denied: "
                      "say hello with the run's secret first\"}");
    CHECK_EQ_INT(F.hellos, 0);
    CHECK_EQ_INT(F.events, 0);
    /* the right secret still works on the same connection */
    hello(0);
    expect_free(0, "ok");
    CHECK_EQ_INT(F.hellos, 1);
    fix_stop();
}

/* Connections that claim an instance's slots and close give them back:
 * the instance itself still gets in. Open ones still count. */
static void
t_slots_freed(void)
{
    void *s[9];
    char rid[32], buf[1024], part[128];

    fix_start(1);
    snprintf(part, sizeof(part), ",\"secret\":\"%s\"", syncsvc_secret(F.svc));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 8; i++) {
            snprintf(rid, sizeof(rid), "claim-%d-%d", round, i);
            s[i] = fix_dealer(rid);
            hello_as0_settled(s[i], part, buf, sizeof(buf));
            CHECK_CONTAINS(buf, "\"status\":\"ok\"");
        }
        for (int i = 0; i < 8; i++)
            zmq_close(s[i]);
    }
    for (int i = 0; i < 8; i++) {
        snprintf(rid, sizeof(rid), "open-%d", i);
        s[i] = fix_dealer(rid);
        hello_as0_settled(s[i], part, buf, sizeof(buf));
        CHECK_CONTAINS(buf, "\"status\":\"ok\"");
    }
    s[8] = fix_dealer("ninth");
    hello_as0(s[8], part);
    CHECK(recv_raw(s[8], buf, sizeof(buf), 5000) > 0);
    CHECK_CONTAINS(buf, "too many connections for g/0");
    zmq_close(s[0]);
    hello_as0_settled(s[8], part, buf, sizeof(buf));
    CHECK_CONTAINS(buf, "\"status\":\"ok\"");
    for (int i = 1; i < 9; i++)
        zmq_close(s[i]);
    hello_as0_settled(F.cli[0], part, buf, sizeof(buf));
    CHECK_CONTAINS(buf, "\"status\":\"ok\"");
    CHECK_EQ_INT(F.hellos, 34); /* 24 + 8 + the ninth + cli[0] */
    fix_stop();
}

/* A new connection that brings the routing id of one that said hello
 * and closed does not inherit its place. */
static void
t_reused_id_inherits_nothing(void)
{
    char buf[1024], part[128];
    void *a, *b;

    fix_start(1);
    snprintf(part, sizeof(part), ",\"secret\":\"%s\"", syncsvc_secret(F.svc));
    a = fix_dealer("ty-0-1234-5678");
    hello_as0(a, part);
    CHECK(recv_raw(a, buf, sizeof(buf), 5000) > 0);
    CHECK_CONTAINS(buf, "\"status\":\"ok\"");
    zmq_close(a);
    usleep(100 * 1000);
    b = fix_dealer("ty-0-1234-5678");
    send_str(b, "{\"id\":2,\"op\":\"signal\",\"state\":\"s\"}");
    CHECK(recv_raw(b, buf, sizeof(buf), 5000) > 0);
    CHECK_EQ_STR(buf, DENIED_REPLY("2"));
    zmq_close(b);
    fix_stop();
}

/* Hellos without the secret take no slot. */
static void
t_denied_take_no_slot(void)
{
    void *s[20];
    char rid[32], buf[1024];

    fix_start(1);
    for (int i = 0; i < 20; i++) {
        snprintf(rid, sizeof(rid), "knock-%d", i);
        s[i] = fix_dealer(rid);
        hello_as0(s[i], "");
        CHECK(recv_raw(s[i], buf, sizeof(buf), 5000) > 0);
        CHECK_CONTAINS(buf, "\"status\":\"denied\"");
    }
    hello(0);
    expect_free(0, "ok");
    for (int i = 0; i < 20; i++)
        zmq_close(s[i]);
    fix_stop();
}

/* In a child as uid/gid: 0 when neither the board, the FIFO nor the
 * folder could be opened, 1 when all of them could, 2 otherwise. */
static int
try_as(const char *dir, int uid, int gid)
{
    cleanup_free char *file = path_join(dir, "board");
    cleanup_free char *fifo = path_join(dir, "wake");
    pid_t pid = fork();
    int st;

    if (pid == 0) {
        int a, b, c;

        if (setgroups(0, NULL) < 0 || setgid((gid_t)gid) < 0 ||
            setuid((uid_t)uid) < 0)
            _exit(3);
        a = open(file, O_RDONLY);
        b = open(fifo, O_RDONLY | O_NONBLOCK);
        c = open(dir, O_RDONLY | O_DIRECTORY);
        if (a < 0 && b < 0 && c < 0 && errno == EACCES)
            _exit(0);
        _exit(a >= 0 && b >= 0 && c >= 0 ? 1 : 2);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

static void
t_board_owner_only(void)
{
    char dir[600];
    struct stat st;

    if (geteuid() != 0)
        th_skip("needs root to try as another user");
    CHECK(chmod(th_tmpdir(), 0755) == 0);
    snprintf(dir, sizeof(dir), "%s/.sync", th_tmpdir());
    fix_start_opts(2, 0, 0, dir);
    CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
    CHECK_EQ_INT(try_as(dir, 65534, 65534), 0);
    fix_stop();
}

/* local:docker: the containers' group may read the board, no one else. */
static void
t_board_group(void)
{
    char dir[600];
    cleanup_free char *file = NULL;
    struct stat st;

    if (geteuid() != 0)
        th_skip("needs root to try as another user");
    CHECK(chmod(th_tmpdir(), 0755) == 0);
    snprintf(dir, sizeof(dir), "%s/.sync", th_tmpdir());
    fix_board_gid = 65534;
    fix_start_opts(2, 0, 0, dir);
    file = path_join(dir, "board");
    CHECK(stat(file, &st) == 0 && st.st_gid == 65534 &&
          (st.st_mode & 0777) == 0640);
    CHECK_EQ_INT(try_as(dir, 65533, 65534), 1);
    CHECK_EQ_INT(try_as(dir, 65533, 65533), 0);
    fix_stop();
}

/* Bytes the allocator has handed out and not had back. */
static size_t
live_bytes(void)
{
#ifdef TY_SANITIZE
    return __sanitizer_get_current_allocated_bytes();
#else
    struct mallinfo2 mi = mallinfo2();

    return mi.uordblks + mi.hblkhd; /* in the heap and mapped on their own */
#endif
}

/* Client 0 publishes a value of vlen bytes to n topics of its own; how
 * many were refused as full (the first refusal's message in why). */
static int
publish_bomb(int n, size_t vlen, char *why, size_t whylen)
{
    char *json = xmalloc(vlen + 256);
    int full = 0;

    why[0] = '\0';
    for (int i = 0; i < n; i++) {
        cJSON *r;
        int k = snprintf(json, vlen + 256,
                         "{\"id\":%d,\"op\":\"publish\",\"topic\":\"t%d\","
                         "\"value\":\"",
                         i + 1, i);

        memset(json + k, 'x', vlen);
        memcpy(json + k + vlen, "\"}", 3);
        send_frames(0, json, NULL, 0, false);
        r = recv_resp(0, 5000);
        if (r != NULL && strcmp(status_of(r), "full") == 0) {
            if (full++ == 0)
                snprintf(why, whylen, "%s", error_of(r));
        }
        cJSON_Delete(r);
    }
    free(json);
    return full;
}

static void
t_topic_bomb(void)
{
    char why[1024];
    size_t before;

    fix_bounds = (struct syncsvc_bounds){.topic_bytes = 8u << 20};
    fix_start(1);
    hello_all();
    before = live_bytes();
    CHECK(publish_bomb(400, 100 << 10, why, sizeof(why)) > 300);
    CHECK_CONTAINS(why, "the bound for all of them is 8388608");
    printf("# 400 topics x 100 KiB against an 8 MiB bound: %.1f MiB held\n",
           (double)(live_bytes() - before) / (1 << 20));
    CHECK_MSG(live_bytes() < before + (12u << 20),
              "the service holds %zu bytes more", live_bytes() - before);
    fix_stop();
    fix_bounds = (struct syncsvc_bounds){.topics = 10};
    fix_start(1);
    hello_all();
    CHECK_EQ_INT(publish_bomb(15, 10, why, sizeof(why)), 5);
    CHECK_CONTAINS(why, "no new topic: the run has 10 topics");
    sendf(0, "{\"id\":99,\"op\":\"fetch\",\"topic\":\"new\",\"from\":1,"
             "\"max\":1,\"timeout_ms\":0}");
    cJSON_Delete(expect(0, "full"));
    fix_stop();
}

static void
t_state_bomb(void)
{
    size_t before;
    int full = 0;
    char why[1024] = "";

    fix_bounds = (struct syncsvc_bounds){.state_bytes = 1u << 20};
    fix_start(1);
    hello_all();
    before = live_bytes();
    for (int i = 0; i < 20000; i++) {
        cJSON *r;

        sendf(0, "{\"id\":%d,\"op\":\"signal\",\"state\":\"state-%d-%0200d\"}",
              i + 1, i, 0);
        r = recv_resp(0, 5000);
        if (r != NULL && strcmp(status_of(r), "full") == 0 && full++ == 0)
            snprintf(why, sizeof(why), "%s", error_of(r));
        cJSON_Delete(r);
    }
    CHECK(full > 15000);
    printf("# 20000 states against a 1 MiB bound: %d refused, %.2f MiB held\n",
           full, (double)(live_bytes() - before) / (1 << 20));
    CHECK_CONTAINS(why, "no new state: the run's states hold");
    CHECK_MSG(live_bytes() < before + (2u << 20),
              "the service holds %zu bytes more", live_bytes() - before);
    sendf(0,
          "{\"id\":1,\"op\":\"barrier\",\"state\":\"another-%0200d\","
          "\"target\":1,\"timeout_ms\":100}",
          0);
    cJSON_Delete(expect(0, "full"));
    fix_stop();
    fix_bounds = (struct syncsvc_bounds){.states = 3};
    fix_start(1);
    hello_all();
    for (int i = 0; i < 4; i++)
        sendf(0, "{\"id\":%d,\"op\":\"signal\",\"state\":\"s%d\"}", i + 1, i);
    for (int i = 0; i < 3; i++)
        expect_free(0, "ok");
    cJSON_Delete(expect(0, "full"));
    fix_stop();
}

static const struct th_case cases[] = {
    {"forged_hello", t_forged_hello},
    {"slots_freed", t_slots_freed},
    {"denied_take_no_slot", t_denied_take_no_slot},
    {"reused_id_inherits_nothing", t_reused_id_inherits_nothing},
    {"board_owner_only", t_board_owner_only},
    {"board_group", t_board_group},
    {"topic_bomb", t_topic_bomb},
    {"state_bomb", t_state_bomb},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
