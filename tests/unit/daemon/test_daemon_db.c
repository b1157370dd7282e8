/*
 * test_daemon_db.c — the database and the token: a new database gets the
 * schema table and the daemon's tables at their version, a second open
 * migrates nothing, a database whose version is newer than this program
 * knows is refused (and left as it was); a step that fails leaves its
 * version where it was (one transaction a step); tasks round-trip; the
 * token is made once, 0600, 64 hex digits, read back the same, and
 * compared right.
 */
#include "daemon/daemon_int.h"
#include "th.h"

#include "base/fsat.h"
#include "base/sql.h"
#include "base/util.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int
version(sqlite3 *db, const char *module)
{
    sqlite3_stmt *st;
    int v = -1;

    sqlite3_prepare_v2(db, "SELECT version FROM schema WHERE module = ?", -1,
                       &st, NULL);
    sqlite3_bind_text(st, 1, module, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void
t_create_and_reopen(void)
{
    sqlite3 *db;
    struct err e = {0};

    CHECK_EQ_INT(daemon_db_open(th_tmpdir(), false, &db, &e), -1);
    CHECK_CONTAINS(e.msg, "no such database");
    CHECK_EQ_INT(daemon_db_open(th_tmpdir(), true, &db, &e), 0);
    CHECK_EQ_INT(version(db, "daemon"), 2);
    sqlite3_close(db);
    CHECK_EQ_INT(daemon_db_open(th_tmpdir(), false, &db, &e), 0);
    CHECK_EQ_INT(version(db, "daemon"), 2);
    sqlite3_close(db);
}

static void
t_newer_refused(void)
{
    sqlite3 *db;
    struct err e = {0};

    CHECK_EQ_INT(daemon_db_open(th_tmpdir(), true, &db, &e), 0);
    CHECK_EQ_INT(daemon__exec(db,
                              "UPDATE schema SET version = 9 WHERE "
                              "module = 'daemon';",
                              &e),
                 0);
    sqlite3_close(db);
    CHECK_EQ_INT(daemon_db_open(th_tmpdir(), true, &db, &e), -1);
    CHECK(db == NULL);
    CHECK_CONTAINS(e.msg, "version 9, newer than this testyard knows (2)");
    CHECK_EQ_INT(e.status, EXIT_DATAERR);
}

static void
t_failed_step_rolled_back(void)
{
    static const char *const steps[] = {
        "CREATE TABLE t1(a);",
        "CREATE TABLE t2(a); CREATE TABLE t1(b);", /* fails half-way */
    };
    sqlite3 *db;
    struct err e = {0};
    sqlite3_stmt *st;
    int rc;

    CHECK_EQ_INT(daemon_db_open(th_tmpdir(), true, &db, &e), 0);
    CHECK_EQ_INT(sql_migrate(db, "x", steps, 2, &e), -1);
    CHECK_CONTAINS(e.msg, "x schema version 2");
    CHECK_EQ_INT(version(db, "x"), 1);
    rc = sqlite3_prepare_v2(db, "SELECT * FROM t2", -1, &st, NULL);
    CHECK(rc != SQLITE_OK); /* t2 went with the failed step */
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void
t_task_round_trip(void)
{
    sqlite3 *db;
    struct err e = {0};
    struct daemon_task t = {0}, got = {0};

    CHECK_EQ_INT(daemon_db_open(th_tmpdir(), true, &db, &e), 0);
    t.name = xstrdup("n");
    t.comp_name = xstrdup("c");
    t.path = xstrdup("/x/c.yaml");
    t.file = xstrdup("c.yaml");
    t.origin = xstrdup("/x");
    t.priority = -3;
    t.exit_status = -1;
    t.submitted_ns = 5;
    t.need.memory_bytes = (uint64_t)3 << 30;
    t.need.unlimited_memory = true;
    t.schedule = xstrdup("nightly");
    t.version = xstrdup("abc123");
    t.build_seconds = 1.5;
    CHECK_EQ_INT(daemon__task_insert(db, &t, &e), 0);
    CHECK_EQ_INT(t.id, 1);
    t.state = TASK_DONE;
    t.outcome = xstrdup("success");
    CHECK_EQ_INT(daemon__task_update(db, &t, &e), 0);
    CHECK_EQ_INT(daemon__task_get(db, 1, &got, &e), 0);
    CHECK_EQ_STR(got.outcome, "success");
    CHECK_EQ_INT(got.state, TASK_DONE);
    CHECK_EQ_INT(got.priority, -3);
    CHECK_EQ_INT(got.need.memory_bytes, (uint64_t)3 << 30);
    CHECK(got.need.unlimited_memory);
    CHECK_EQ_STR(got.schedule, "nightly");
    CHECK_EQ_STR(got.version, "abc123");
    CHECK(got.build_seconds == 1.5);
    daemon__task_release(&got);
    CHECK_EQ_INT(daemon__task_get(db, 2, &got, &e), -1);
    CHECK_EQ_INT(e.status, EXIT_NOINPUT);
    daemon__task_release(&t);
    sqlite3_close(db);
}

static void
t_token(void)
{
    int fd = fsat_root(th_tmpdir(), NULL);
    char a[DAEMON_TOKEN_LEN + 1], b[DAEMON_TOKEN_LEN + 1];
    struct err e = {0};
    struct stat st;

    CHECK_EQ_INT(daemon__token_load(fd, false, a, &e), -1);
    CHECK_EQ_INT(daemon__token_load(fd, true, a, &e), 0);
    CHECK_EQ_INT(strlen(a), DAEMON_TOKEN_LEN);
    CHECK_EQ_INT(strspn(a, "0123456789abcdef"), DAEMON_TOKEN_LEN);
    CHECK_EQ_INT(fstatat(fd, DAEMON_TOKEN, &st, 0), 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0600);
    CHECK_EQ_INT(daemon__token_load(fd, true, b, &e), 0);
    CHECK_EQ_STR(a, b); /* made once */
    CHECK(daemon__token_equal(a, b));
    b[10] = b[10] == 'a' ? 'b' : 'a';
    CHECK(!daemon__token_equal(b, a));
    b[DAEMON_TOKEN_LEN - 1] = '\0';
    CHECK(!daemon__token_equal(b, a)); /* a prefix */
    CHECK(!daemon__token_equal("", a));
    CHECK(!daemon__token_equal(NULL, a));
    fchmodat(fd, DAEMON_TOKEN, 0644, 0);
    CHECK_EQ_INT(daemon__token_load(fd, true, b, &e), -1);
    CHECK_CONTAINS(e.msg, "readable by others");
    close(fd);
}

static void
t_listen(void)
{
    char addr[16];
    unsigned port;
    struct err e = {0};

    CHECK_EQ_INT(daemon_parse_listen("127.0.0.1:0", addr, &port, &e), 0);
    CHECK_EQ_STR(addr, "127.0.0.1");
    CHECK_EQ_INT(daemon_parse_listen("127.0.0.1:8042", addr, &port, &e), 0);
    CHECK_EQ_INT(port, 8042);
    CHECK_EQ_INT(daemon_parse_listen("0.0.0.0:80", addr, &port, &e), -1);
    CHECK_CONTAINS(e.msg, "127.0.0.1 only");
    CHECK_EQ_INT(daemon_parse_listen("10.0.0.1:80", addr, &port, &e), -1);
    CHECK_EQ_INT(daemon_parse_listen("127.0.0.1:99999", addr, &port, &e), -1);
    CHECK_EQ_INT(daemon_parse_listen("localhost", addr, &port, &e), -1);
}

static const struct th_case cases[] = {
    {"create_and_reopen", t_create_and_reopen},
    {"newer_refused", t_newer_refused},
    {"failed_step_rolled_back", t_failed_step_rolled_back},
    {"task_round_trip", t_task_round_trip},
    {"token", t_token},
    {"listen", t_listen},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
