/*
 * test_syncsvc_board.c — the release board (runner/sync/syncsvc_board.c) with
 * its reader (sdk/common/ty_board.c): areas handed out at hello, releases
 * answered in slots with one wake-up for all, failures and timeouts still
 * sent as messages, slot checks, the board's folder made and removed, and
 * a reader that refuses anything that is not a board.
 */
#include "svc_fixture.h"
#include "th.h"
#include "ty_board.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char board_dir[600];

static void
start(int n)
{
    snprintf(board_dir, sizeof(board_dir), "%s/.sync", th_tmpdir());
    fix_start_opts(n, 0, 0, board_dir);
}

/* Hello asking for the board; returns the first slot of the area (or -1
 * when the answer has none). */
static int64_t
hello_board(int c)
{
    cJSON *r;
    int64_t first;

    sendf(c,
          "{\"id\":1,\"op\":\"hello\",\"run\":\"%s\",\"group\":\"g\","
          "\"group_index\":%d,\"global_index\":%d,\"board\":1,"
          "\"secret\":\"%s\"}",
          RUN, c, c, syncsvc_secret(F.svc));
    r = expect(c, "ok");
    first = r ? int_of(r, "board") : -1;
    cJSON_Delete(r);
    return first;
}

static void
signal_wait(int c, int id, const char *state, int target, int64_t slot,
            int timeout_ms)
{
    char board[32] = "";

    if (slot > 0)
        snprintf(board, sizeof(board), ",\"board\":%lld", (long long)slot);
    sendf(c,
          "{\"id\":%d,\"op\":\"signal_and_wait\",\"state\":\"%s\","
          "\"target\":%d,\"timeout_ms\":%d%s}",
          id, state, target, timeout_ms, board);
}

/* Pump until the reader's epoll set polls readable, up to ms. */
static bool
woken(const struct ty__board *b, int ms)
{
    for (int i = 0; i < ms; i++) {
        struct pollfd p = {.fd = ty__board_fd(b), .events = POLLIN};

        if (poll(&p, 1, 0) == 1)
            return true;
        pump(1);
    }
    return false;
}

static void
t_areas(void)
{
    struct ty_board_header h;
    struct stat st;
    cJSON *r;
    int fd;

    start(3);
    CHECK_EQ_STR(syncsvc_board_dir(F.svc), board_dir);
    int64_t a = hello_board(0), b = hello_board(1);

    CHECK_EQ_INT(a, 1);
    CHECK_EQ_INT(b, 1 + TY_BOARD_AREA);
    CHECK_EQ_INT(hello_board(0), a); /* hello again: the same area */
    hello(2);
    r = expect(2, "ok");
    CHECK_EQ_INT(int_of(r, "board"), -1);
    cJSON_Delete(r);
    cleanup_free char *file = xasprintf("%s/board", board_dir);
    cleanup_free char *fifo = xasprintf("%s/wake", board_dir);

    fd = open(file, O_RDONLY);
    CHECK(fd >= 0 && pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h));
    CHECK_EQ_STR(h.magic, TY_BOARD_MAGIC);
    CHECK_EQ_INT(h.version, TY_BOARD_VERSION);
    CHECK_EQ_INT(h.slot_bytes, 16);
    CHECK_EQ_INT(h.nslots, 3 * 2 * TY_BOARD_AREA);
    if (fd >= 0)
        close(fd);
    CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    fix_stop();
    CHECK_MSG(stat(board_dir, &st) < 0 && errno == ENOENT,
              "%s still there after the service ended", board_dir);
}

/* Two board readers and one plain client meet; the readers are answered
 * in their slots (no message), the plain one (the last to signal) by
 * message, seqs 1..3 once each, and one wake-up reaches both readers. */
static void
t_release_on_board(void)
{
    struct ty__board *rd[2];
    int64_t first[2], ids[TY_BOARD_AREA], seqs[TY_BOARD_AREA];
    bool seen[4] = {false};
    cJSON *r;

    start(3);
    for (int c = 0; c < 2; c++) {
        first[c] = hello_board(c);
        rd[c] = ty__board_open(board_dir);
        CHECK(rd[c] != NULL && ty__board_enable(rd[c], first[c]));
        if (rd[c] == NULL)
            th_skip("no board reader");
    }
    hello(2);
    expect_free(2, "ok");
    for (int c = 0; c < 2; c++) {
        int64_t slot = ty__board_reserve(rd[c], 7);

        CHECK_EQ_INT(slot, first[c]);
        CHECK_EQ_INT(ty__board_waiting(rd[c]), 1);
        signal_wait(c, 7, "s", 3, slot, 60000);
    }
    for (int i = 0; i < 20; i++)
        pump(1);
    CHECK(!woken(rd[0], 5)); /* not released yet */
    CHECK_EQ_INT(ty__board_collect(rd[0], ids, seqs), 0);
    signal_wait(2, 7, "s", 3, 0, 60000);
    r = expect(2, "ok");
    if (r != NULL && int_of(r, "seq") >= 1 && int_of(r, "seq") <= 3)
        seen[int_of(r, "seq")] = true;
    cJSON_Delete(r);
    for (int c = 0; c < 2; c++) {
        CHECK_MSG(woken(rd[c], 2000), "reader %d not woken", c);
        CHECK_EQ_INT(ty__board_collect(rd[c], ids, seqs), 1);
        CHECK_EQ_INT(ids[0], 7);
        CHECK_MSG(seqs[0] >= 1 && seqs[0] <= 3 && !seen[seqs[0]], "seq %lld",
                  (long long)seqs[0]);
        if (seqs[0] >= 1 && seqs[0] <= 3)
            seen[seqs[0]] = true;
        CHECK_EQ_INT(ty__board_waiting(rd[c]), 0);
        /* the edge is consumed: quiet until the next release */
        CHECK(!woken(rd[c], 1));
    }
    r = recv_resp(0, 100);
    CHECK_MSG(r == NULL, "a message for a release answered on the board");
    cJSON_Delete(r);
    cleanup_free char *path = path_join(F.dir, "barriers.jsonl");
    cleanup_free char *log = read_file_str(path, NULL);
    CHECK_CONTAINS(log, "\"waiters\":2,\"on_board\":2");
    /* The next release wakes them again. The last to signal finds the
     * barrier met and is answered at once, by message. */
    for (int c = 0; c < 2; c++)
        signal_wait(c, 8, "t", 3, ty__board_reserve(rd[c], 8), 60000);
    for (int i = 0; i < 20; i++)
        pump(1);
    signal_wait(2, 8, "t", 3, 0, 60000);
    r = expect(2, "ok");
    CHECK_EQ_INT(int_of(r, "seq"), 3);
    cJSON_Delete(r);
    for (int c = 0; c < 2; c++) {
        CHECK_MSG(woken(rd[c], 2000), "reader %d not woken twice", c);
        CHECK_MSG(ty__board_collect(rd[c], ids, seqs) == 1, "reader %d", c);
        CHECK_EQ_INT(ids[0], 8);
        ty__board_close(&rd[c]);
    }
    fix_stop();
}

/* Failures and timeouts come as messages even for a board slot; the
 * reader frees the slot when told the request was answered. */
static void
t_failures_are_messages(void)
{
    struct ty__board *rd;
    int64_t slot, ids[TY_BOARD_AREA], seqs[TY_BOARD_AREA];
    cJSON *r;

    start(2);
    rd = ty__board_open(board_dir);
    CHECK(rd != NULL && ty__board_enable(rd, hello_board(0)));
    if (rd == NULL)
        th_skip("no board reader");
    hello(1);
    expect_free(1, "ok");
    slot = ty__board_reserve(rd, 2);
    signal_wait(0, 2, "s", 2, slot, 60000);
    for (int i = 0; i < 20; i++)
        pump(1);
    syncsvc_instance_exited(F.svc, 1, "exited with status 137 (oom)");
    r = expect(0, "failed");
    CHECK_CONTAINS(error_of(r), "g/1 exited with status 137 (oom)");
    cJSON_Delete(r);
    ty__board_forget(rd, 2);
    CHECK_EQ_INT(ty__board_waiting(rd), 0);
    slot = ty__board_reserve(rd, 3);
    CHECK_EQ_INT(slot, 1);
    sendf(0,
          "{\"id\":3,\"op\":\"barrier\",\"state\":\"u\",\"target\":1,"
          "\"timeout_ms\":50,\"board\":%lld}",
          (long long)slot);
    r = expect(0, "timeout");
    CHECK_EQ_INT(int_of(r, "id"), 3);
    cJSON_Delete(r);
    CHECK_EQ_INT(ty__board_collect(rd, ids, seqs), 0);
    ty__board_close(&rd);
    fix_stop();
}

static void
t_slot_checks(void)
{
    cJSON *r;
    int64_t first;

    start(2);
    first = hello_board(0);
    hello(1);
    expect_free(1, "ok");
    signal_wait(0, 2, "s", 1, first + TY_BOARD_AREA, 1000);
    r = expect(0, "invalid");
    CHECK_CONTAINS(error_of(r), "not one of this connection's");
    cJSON_Delete(r);
    signal_wait(1, 2, "s", 1, 1, 1000); /* no area at all */
    expect_free(1, "invalid");
    sendf(0, "{\"id\":3,\"op\":\"barrier\",\"state\":\"s\",\"target\":1,"
             "\"timeout_ms\":10,\"board\":0}");
    r = expect(0, "invalid");
    CHECK_CONTAINS(error_of(r), "\"board\": expected an integer from 1");
    cJSON_Delete(r);
    /* The refused requests changed nothing; a barrier already met is
     * answered by message at once. */
    signal_wait(0, 4, "s", 1, first, 1000);
    r = expect(0, "ok");
    CHECK_EQ_INT(int_of(r, "seq"), 1);
    cJSON_Delete(r);
    fix_stop();
}

/* A board that cannot be made is an error, or with board_optional no
 * board: hello then gets no area. */
static void
t_unusable(void)
{
    struct syncsvc_instance in = {
        .group = "g", .group_index = 0, .outdir = th_tmpdir()};
    cleanup_free char *file = xasprintf("%s/plain", th_tmpdir());
    cleanup_free char *dir = xasprintf("%s/plain/.sync", th_tmpdir());
    struct syncsvc_config cfg = {.run_id = RUN,
                                 .bind = "tcp://127.0.0.1:0",
                                 .instances = &in,
                                 .ninstances = 1,
                                 .board_dir = dir};
    struct err err = {0};
    struct syncsvc *svc;

    CHECK(file_write_atomic(file, "x", 1, &err) == 0);
    svc = syncsvc_new(&cfg, &err);
    CHECK(svc == NULL);
    CHECK_CONTAINS(err.msg, "release board");
    syncsvc_destroy(&svc);
    cfg.board_optional = true;
    err_clear(&err);
    svc = syncsvc_new(&cfg, &err);
    CHECK(svc != NULL);
    CHECK(svc != NULL && syncsvc_board_dir(svc) == NULL);
    /* the board's failure was recovered from: no error is left behind */
    CHECK_EQ_INT(err.code, 0);
    CHECK_EQ_STR(err.msg, "");
    syncsvc_destroy(&svc);
}

static void
write_board(const char *dir, const struct ty_board_header *h, size_t size)
{
    cleanup_free char *file = path_join(dir, "board");
    struct err err = {0};
    char *buf = xcalloc(1, size);

    memcpy(buf, h, size < sizeof(*h) ? size : sizeof(*h));
    CHECK(file_write_atomic(file, buf, size, &err) == 0);
    free(buf);
}

static void
t_reader_refuses(void)
{
    cleanup_free char *dir = xasprintf("%s/fake", th_tmpdir());
    cleanup_free char *fifo = path_join(dir, "wake");
    struct ty_board_header h = {.magic = TY_BOARD_MAGIC,
                                .version = TY_BOARD_VERSION,
                                .slot_bytes = 16,
                                .nslots = 8,
                                .area_slots = TY_BOARD_AREA};
    size_t full = sizeof(h) + 8 * 16;
    struct ty__board *rd;
    struct err err = {0};

    CHECK(mkdir_p(dir, &err) == 0);
    CHECK(ty__board_open(dir) == NULL); /* nothing there */
    write_board(dir, &h, full);
    CHECK(ty__board_open(dir) == NULL); /* no FIFO */
    CHECK(mkfifo(fifo, 0644) == 0);
    rd = ty__board_open(dir);
    CHECK(rd != NULL);
    CHECK(rd != NULL && !ty__board_enabled(rd));
    CHECK(rd != NULL && ty__board_reserve(rd, 1) == 0); /* not enabled */
    CHECK(rd != NULL && !ty__board_enable(rd, 6));      /* 6..9 > 8 */
    CHECK(rd != NULL && !ty__board_enable(rd, 0));
    CHECK(rd != NULL && ty__board_enable(rd, 5));
    for (int i = 1; rd != NULL && i <= TY_BOARD_AREA; i++)
        CHECK_EQ_INT(ty__board_reserve(rd, i), 4 + i);
    CHECK(rd != NULL && ty__board_reserve(rd, 9) == 0); /* all taken */
    ty__board_close(&rd);
    write_board(dir, &h, full - 1); /* short */
    CHECK(ty__board_open(dir) == NULL);
    h.version = 2;
    write_board(dir, &h, full);
    CHECK(ty__board_open(dir) == NULL);
    h.version = TY_BOARD_VERSION;
    h.magic[0] = 'X';
    write_board(dir, &h, full);
    CHECK(ty__board_open(dir) == NULL);
}

static const struct th_case cases[] = {
    {"areas", t_areas},
    {"release_on_board", t_release_on_board},
    {"failures_are_messages", t_failures_are_messages},
    {"slot_checks", t_slot_checks},
    {"unusable", t_unusable},
    {"reader_refuses", t_reader_refuses},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
