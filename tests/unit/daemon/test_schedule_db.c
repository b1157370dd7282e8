/*
 * test_schedule_db.c — what a schedule keeps and does
 * (daemon/schedule_int.h): the database round trip (migration, add with a
 * duplicate refused, pause, resume, list, rm, firings), the build
 * (success, failure, a timeout that kills its whole process group, the
 * capped log), the git version of a folder, and the TESTYARD_CLOCK hook.
 * The times themselves are test_schedule.c's.
 */
#include "daemon/schedule_int.h"

#include "base/util.h"
#include "sched_fixture.h"
#include "../th_db.h"
#include "th.h"
#include "th_files.h"
#include "th_proc.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the clock ---- */

static void
t_clock(void)
{
    struct err err = {0};
    char *file = th_write_tmp("clock", "2026-03-01T10:00:00Z\n");
    int64_t real;

    unsetenv("TESTYARD_CLOCK");
    real = schedule__clock_now(&err);
    CHECK(real > T("2025-01-01T00:00:00Z"));
    setenv("TESTYARD_CLOCK", "2026-03-01T12:00:00+02:00", 1);
    CHECK_EQ_INT(schedule__clock_now(&err), T("2026-03-01T10:00:00Z"));
    setenv("TESTYARD_CLOCK", file, 1);
    CHECK_EQ_INT(schedule__clock_now(&err), T("2026-03-01T10:00:00Z"));
    /* read again on each call: a test moves time */
    th_write(th_tmpdir(), "clock", "2026-03-04T10:00:00.750Z");
    CHECK_EQ_INT(schedule__clock_now(&err), T("2026-03-04T10:00:00Z"));
    th_write(th_tmpdir(), "clock", "tomorrow");
    CHECK_EQ_INT(schedule__clock_now(&err), -1);
    CHECK_EQ_STR(err.msg, "TESTYARD_CLOCK: found \"tomorrow\", expected an RFC "
                          "3339 time or the path of a file holding one");
    unlink(file);
    CHECK_EQ_INT(schedule__clock_now(&err), -1);
    CHECK_CONTAINS(err.msg, "TESTYARD_CLOCK: ");
    CHECK_EQ_INT(err.code, ENOENT);
    free(file);
}

/* ---- the database ---- */

static sqlite3 *
open_db(const char *path)
{
    sqlite3 *db = NULL;

    if (sqlite3_open(path, &db) != SQLITE_OK)
        th_fail(__FILE__, __LINE__, "open %s", path);
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON;", NULL,
                 NULL, NULL);
    sqlite3_busy_timeout(db, 5000);
    return db;
}

static void
t_db_migrate(void)
{
    char *path = path_join(th_tmpdir(), "testyard.db");
    struct err err = {0};
    sqlite3 *db = open_db(path);

    CHECK_EQ_INT(schedule__migrate(db, &err), 0);
    CHECK_EQ_INT(schedule__migrate(db, &err), 0); /* again: nothing to do */
    CHECK_EQ_INT(th_db_count(db, "SELECT version FROM schema WHERE module = "
                                 "'schedules'"),
                 SCHEDULE_SCHEMA_VERSION);
    CHECK_EQ_INT(th_db_count(db,
                             "SELECT count(*) FROM sqlite_master WHERE name IN "
                             "('schedules', 'schedule_firings')"),
                 2);
    /* another module's row in the shared table is left alone */
    sqlite3_exec(db, "INSERT INTO schema VALUES ('history', 3)", NULL, NULL,
                 NULL);
    CHECK_EQ_INT(schedule__migrate(db, &err), 0);
    CHECK_EQ_INT(th_db_count(db, "SELECT version FROM schema WHERE module = "
                                 "'history'"),
                 3);
    /* from a newer testyard: refused */
    sqlite3_exec(db,
                 "UPDATE schema SET version = 3 WHERE module = "
                 "'schedules'",
                 NULL, NULL, NULL);
    CHECK_EQ_INT(schedule__migrate(db, &err), -1);
    CHECK_EQ_INT(err.code, EPROTO);
    CHECK_CONTAINS(
        err.msg,
        "schedules tables are version 3, newer than this testyard knows (2)");
    CHECK_EQ_INT(sqlite3_get_autocommit(db), 1); /* no open transaction */
    /* version 1 (no build_timeout) is brought to 2 */
    err_clear(&err);
    sqlite3_exec(db,
                 "ALTER TABLE schedules DROP COLUMN build_timeout;"
                 "UPDATE schema SET version = 1 WHERE module = 'schedules'",
                 NULL, NULL, NULL);
    CHECK_EQ_INT(schedule__migrate(db, &err), 0);
    CHECK_EQ_INT(th_db_count(db, "SELECT version FROM schema WHERE module = "
                                 "'schedules'"),
                 2);
    CHECK_EQ_INT(th_db_count(db, "SELECT count(*) FROM pragma_table_info("
                                 "'schedules') WHERE name = 'build_timeout'"),
                 1);
    sqlite3_close(db);
    free(path);
}

static struct schedule_row
sample_row(const char *name)
{
    struct schedule_row r = {0};

    r.name = (char *)name;
    r.composition = "/srv/compositions/leak.yaml";
    r.plans = "/srv/plans";
    r.spec = "cron 30 2 * * *";
    r.tz = "UTC";
    r.build = "make -C /srv/src";
    r.version_from = "/srv/src";
    r.priority = 5;
    r.created_s = T("2026-03-01T00:00:00Z");
    return r;
}

static void
t_db_roundtrip(void)
{
    char *path = path_join(th_tmpdir(), "testyard.db");
    struct err err = {0};
    sqlite3 *db = open_db(path);
    struct schedule_row r = sample_row("nightly"), got, *rows;
    int64_t id = 0, id2 = 0;
    size_t n;

    CHECK_EQ_INT(schedule__migrate(db, &err), 0);
    CHECK_EQ_INT(schedule__add(db, &r, &id, &err), 0);
    CHECK(id > 0);
    /* the name is unique */
    r.composition = "/srv/other.yaml";
    CHECK_EQ_INT(schedule__add(db, &r, NULL, &err), -1);
    CHECK_EQ_INT(err.code, EEXIST);
    CHECK_EQ_STR(err.msg, "schedule \"nightly\" exists");
    r = sample_row("hourly");
    r.spec = "every 1h";
    r.tz = NULL;
    r.plans = r.build = r.version_from = NULL;
    CHECK_EQ_INT(schedule__add(db, &r, &id2, &err), 0);

    CHECK_EQ_INT(schedule__get(db, "nightly", &got, &err), 0);
    CHECK_EQ_INT(got.id, id);
    CHECK_EQ_STR(got.composition, "/srv/compositions/leak.yaml");
    CHECK_EQ_STR(got.plans, "/srv/plans");
    CHECK_EQ_STR(got.spec, "cron 30 2 * * *");
    CHECK_EQ_STR(got.tz, "UTC");
    CHECK_EQ_STR(got.build, "make -C /srv/src");
    CHECK_EQ_STR(got.version_from, "/srv/src");
    CHECK_EQ_INT(got.priority, 5);
    CHECK_EQ_INT(got.created_s, T("2026-03-01T00:00:00Z"));
    CHECK(!got.paused);
    CHECK_EQ_INT(got.last_fired_s, -1);
    schedule__row_release(&got);

    /* pause, list (by name), resume */
    CHECK_EQ_INT(schedule__pause(db, "nightly", &err), 0);
    CHECK_EQ_INT(schedule__pause(db, "nightly", &err), 0);
    CHECK_EQ_INT(schedule__list(db, &rows, &n, &err), 0);
    CHECK_EQ_INT(n, 2);
    if (n == 2) {
        CHECK_EQ_STR(rows[0].name, "hourly");
        CHECK(rows[0].plans == NULL && rows[0].build == NULL);
        CHECK_EQ_STR(rows[0].tz, "UTC");
        CHECK(!rows[0].paused);
        CHECK_EQ_STR(rows[1].name, "nightly");
        CHECK(rows[1].paused);
    }
    schedule__rows_free(rows, n);
    CHECK_EQ_INT(
        schedule__resume(db, "nightly", T("2026-03-10T00:00:00Z"), &err), 0);
    CHECK_EQ_INT(schedule__get(db, "nightly", &got, &err), 0);
    CHECK(!got.paused);
    CHECK_EQ_INT(got.last_fired_s, T("2026-03-10T00:00:00Z"));
    schedule__row_release(&got);
    /* resuming one that runs moves nothing */
    CHECK_EQ_INT(
        schedule__resume(db, "hourly", T("2026-03-10T00:00:00Z"), &err), 0);
    CHECK_EQ_INT(schedule__get(db, "hourly", &got, &err), 0);
    CHECK_EQ_INT(got.last_fired_s, -1);
    schedule__row_release(&got);

    /* unknown names */
    CHECK_EQ_INT(schedule__get(db, "weekly", &got, &err), -1);
    CHECK_EQ_INT(err.code, ENOENT);
    CHECK_EQ_STR(err.msg, "no schedule named \"weekly\"");
    CHECK_EQ_INT(schedule__pause(db, "weekly", &err), -1);
    CHECK_EQ_INT(schedule__resume(db, "weekly", 0, &err), -1);
    CHECK_EQ_INT(schedule__remove(db, "weekly", &err), -1);
    CHECK_EQ_INT(err.code, ENOENT);

    /* rm */
    CHECK_EQ_INT(schedule__remove(db, "hourly", &err), 0);
    CHECK_EQ_INT(schedule__list(db, &rows, &n, &err), 0);
    CHECK_EQ_INT(n, 1);
    schedule__rows_free(rows, n);
    CHECK_EQ_INT(sqlite3_get_autocommit(db), 1);
    sqlite3_close(db);

    /* it is all on disk */
    db = open_db(path);
    CHECK_EQ_INT(schedule__get(db, "nightly", &got, &err), 0);
    schedule__row_release(&got);
    sqlite3_close(db);
    free(path);
}

static void
t_db_refuses(void)
{
    char *path = path_join(th_tmpdir(), "testyard.db");
    struct err err = {0};
    sqlite3 *db = open_db(path);
    static const struct {
        const char *field, *value, *msg;
    } cases[] = {
        {"name", "", "schedule name \"\": expected up to 64 letters"},
        {"name", "a b", "schedule name \"a b\""},
        {"name", "-x", "schedule name \"-x\""},
        {"composition", "rel.yaml",
         "composition \"rel.yaml\": expected an "
         "absolute path"},
        {"plans", "plans", "plans \"plans\": expected an absolute folder"},
        {"version_from", "src", "version-from \"src\": expected an absolute"},
        {"spec", "cron 61 * * * *",
         "schedule \"nightly\": --cron: field 1 "
         "(minute): found \"61\""},
        {"tz", "Nowhere/Town",
         "schedule \"nightly\": --tz: time zone "
         "\"Nowhere/Town\""},
    };

    CHECK_EQ_INT(schedule__migrate(db, &err), 0);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct schedule_row r = sample_row("nightly");
        const char *f = cases[i].field;
        char *v = (char *)cases[i].value;

        if (strcmp(f, "name") == 0)
            r.name = v;
        else if (strcmp(f, "composition") == 0)
            r.composition = v;
        else if (strcmp(f, "plans") == 0)
            r.plans = v;
        else if (strcmp(f, "version_from") == 0)
            r.version_from = v;
        else if (strcmp(f, "spec") == 0)
            r.spec = v;
        else
            r.tz = v;
        CHECK_EQ_INT(schedule__add(db, &r, NULL, &err), -1);
        CHECK_CONTAINS(err.msg, cases[i].msg);
    }
    CHECK_EQ_INT(th_db_count(db, "SELECT count(*) FROM schedules"), 0);
    sqlite3_close(db);
    free(path);
}

static void
t_db_firings(void)
{
    char *path = path_join(th_tmpdir(), "testyard.db");
    struct err err = {0};
    sqlite3 *db = open_db(path);
    struct schedule_row r = sample_row("nightly"), got;
    struct schedule_firing f = {0}, *fs;
    int64_t id = 0;
    size_t n;

    CHECK_EQ_INT(schedule__migrate(db, &err), 0);
    CHECK_EQ_INT(schedule__add(db, &r, &id, &err), 0);
    f.schedule_id = id;
    f.fire_s = T("2026-03-02T02:30:00Z");
    f.started_s = T("2026-03-02T02:30:01Z");
    f.build_seconds = -1;
    CHECK_EQ_INT(schedule__firing_add(db, &f, &err), 0);
    CHECK(f.id > 0);
    CHECK_EQ_INT(schedule__get(db, "nightly", &got, &err), 0);
    CHECK_EQ_INT(got.last_fired_s, f.fire_s);
    schedule__row_release(&got);
    /* the build and the task come after */
    f.task_id = 17;
    f.build_log = "/data/tasks/17/build.log";
    f.build_seconds = 12.5;
    f.build_status = "build-failed";
    f.version = "0123456789abcdef0123456789abcdef01234567-dirty";
    CHECK_EQ_INT(schedule__firing_update(db, &f, &err), 0);
    /* a second firing; an older time does not move last_fired back */
    struct schedule_firing g = {.schedule_id = id,
                                .fire_s = T("2026-03-03T02:30:00Z"),
                                .started_s = T("2026-03-03T02:30:00Z"),
                                .build_seconds = -1};
    CHECK_EQ_INT(schedule__firing_add(db, &g, &err), 0);
    struct schedule_firing old = {.schedule_id = id,
                                  .fire_s = T("2026-03-01T02:30:00Z"),
                                  .started_s = T("2026-03-03T02:31:00Z"),
                                  .build_seconds = -1};
    CHECK_EQ_INT(schedule__firing_add(db, &old, &err), 0);
    CHECK_EQ_INT(schedule__get(db, "nightly", &got, &err), 0);
    CHECK_EQ_INT(got.last_fired_s, T("2026-03-03T02:30:00Z"));
    schedule__row_release(&got);

    CHECK_EQ_INT(schedule__firings(db, id, 2, &fs, &n, &err), 0);
    CHECK_EQ_INT(n, 2);
    if (n == 2) {
        CHECK_EQ_INT(fs[0].id, g.id);
        CHECK_EQ_INT(fs[0].task_id, 0);
        CHECK(fs[0].build_log == NULL && fs[0].version == NULL);
        CHECK(fs[0].build_seconds < 0);
        CHECK_EQ_INT(fs[1].id, f.id);
        CHECK_EQ_INT(fs[1].task_id, 17);
        CHECK_EQ_STR(fs[1].build_log, "/data/tasks/17/build.log");
        CHECK(fs[1].build_seconds == 12.5);
        CHECK_EQ_STR(fs[1].build_status, "build-failed");
        CHECK_EQ_STR(fs[1].version,
                     "0123456789abcdef0123456789abcdef01234567-dirty");
    }
    schedule__firings_free(fs, n);
    /* a firing of no schedule is refused, and nothing is left of it */
    struct schedule_firing stray = {.schedule_id = id + 100, .fire_s = 1};
    CHECK_EQ_INT(schedule__firing_add(db, &stray, &err), -1);
    f.id = 9999;
    CHECK_EQ_INT(schedule__firing_update(db, &f, &err), -1);
    CHECK_EQ_INT(err.code, ENOENT);
    CHECK_EQ_INT(th_db_count(db, "SELECT count(*) FROM schedule_firings"), 3);
    /* rm takes its firings along */
    CHECK_EQ_INT(schedule__remove(db, "nightly", &err), 0);
    CHECK_EQ_INT(th_db_count(db, "SELECT count(*) FROM schedule_firings"), 0);
    sqlite3_close(db);
    free(path);
}

/* ---- build and version ---- */

static void
t_build_ok(void)
{
    char *log = path_join(th_tmpdir(), "build.log");
    struct schedule_build b;
    struct err err = {0};
    char *text;

    CHECK_EQ_INT(schedule__build("echo built in $(pwd); echo warn >&2",
                                 th_tmpdir(), log, 10000000000LL, NULL, &b,
                                 &err),
                 0);
    CHECK(b.ok && !b.timed_out && !b.log_cut);
    CHECK_EQ_INT(b.exit_status, 0);
    CHECK(b.seconds >= 0 && b.seconds < 10);
    CHECK_EQ_STR(b.reason, "");
    CHECK(schedule__build_outcome(&b) == NULL);
    text = th_read(log, NULL);
    CHECK_CONTAINS(text, "$ echo built in $(pwd); echo warn >&2\n");
    CHECK_CONTAINS(text, "built in ");
    CHECK_CONTAINS(text, th_tmpdir());
    CHECK_CONTAINS(text, "warn\n");
    CHECK_CONTAINS(text, "[testyard: build succeeded after ");
    free(text);
    free(log);
}

static void
t_build_failed(void)
{
    char *log = path_join(th_tmpdir(), "build.log");
    char *missing = path_join(th_tmpdir(), "no-such-src");
    struct schedule_build b;
    struct err err = {0};
    char *text;

    CHECK_EQ_INT(schedule__build("echo compiling; exit 3", th_tmpdir(), log, 0,
                                 NULL, &b, &err),
                 0);
    CHECK(!b.ok && !b.timed_out);
    CHECK_EQ_INT(b.exit_status, 3);
    CHECK_EQ_STR(b.reason, "build exited with status 3");
    CHECK_EQ_STR(schedule__build_outcome(&b), "build-failed");
    text = th_read(log, NULL);
    CHECK_CONTAINS(text, "compiling\n");
    CHECK_CONTAINS(text, "[testyard: build exited with status 3 after ");
    free(text);
    /* its folder is gone: a failed build too, said in the log */
    CHECK_EQ_INT(schedule__build("true", missing, log, 0, NULL, &b, &err), 0);
    CHECK(!b.ok);
    CHECK_EQ_INT(b.exit_status, -1);
    CHECK_CONTAINS(b.reason, "no-such-src: no such folder");
    CHECK_EQ_STR(schedule__build_outcome(&b), "build-failed");
    text = th_read(log, NULL);
    CHECK_CONTAINS(text, "no such folder");
    free(text);
    /* a log that cannot be written is the daemon's error */
    free(log);
    log = path_join(missing, "build.log");
    CHECK_EQ_INT(schedule__build("true", th_tmpdir(), log, 0, NULL, &b, &err),
                 -1);
    CHECK_EQ_INT(err.code, ENOENT);
    CHECK_CONTAINS(err.msg, "build log ");
    free(log);
    free(missing);
}

/* The process whose pid the build wrote to pidfile is gone (it is reaped
 * by init once its group was killed, so poll a bounded while). */
static void
check_gone(const char *pidfile)
{
    char *pid = th_read(pidfile, NULL);

    CHECK(pid != NULL);
    if (pid != NULL) {
        pid_t p = (pid_t)atoi(pid);
        int tries = 0;

        while (p > 0 && kill(p, 0) == 0 && tries++ < 200)
            usleep(10000);
        CHECK_MSG(p > 0 && kill(p, 0) < 0, "background sleep %d still runs",
                  (int)p);
    }
    free(pid);
}

static void
t_build_timeout(void)
{
    char *log = path_join(th_tmpdir(), "build.log");
    char *pidfile = path_join(th_tmpdir(), "bg.pid");
    char *cmd =
        xasprintf("sleep 60 & echo $! > %s; echo waiting; wait", pidfile);
    struct schedule_build b;
    struct err err = {0};
    char *text;

    CHECK_EQ_INT(
        schedule__build(cmd, th_tmpdir(), log, 300000000LL, NULL, &b, &err), 0);
    CHECK(b.timed_out && !b.ok);
    CHECK_EQ_STR(b.reason, "build timed out after 300 ms");
    CHECK_EQ_STR(schedule__build_outcome(&b), "build-failed");
    CHECK(b.seconds < 30);
    text = th_read(log, NULL);
    CHECK_CONTAINS(text, "waiting\n");
    CHECK_CONTAINS(text, "[testyard: build timed out after 300 ms after ");
    free(text);
    /* the shell's child went with it: the whole group was killed (it is
     * reaped by init, so poll a bounded while for it to be gone) */
    check_gone(pidfile);
    free(cmd);
    free(pidfile);
    free(log);
}

static void *
stop_soon(void *flag)
{
    usleep(300000);
    atomic_store((atomic_bool *)flag, true);
    return NULL;
}

/* A stop kills the build's whole group at once, long before its timeout. */
static void
t_build_stop(void)
{
    char *log = path_join(th_tmpdir(), "build.log");
    char *pidfile = path_join(th_tmpdir(), "bg.pid");
    char *cmd =
        xasprintf("sleep 60 & echo $! > %s; echo waiting; wait", pidfile);
    atomic_bool stop = false;
    struct schedule_build b;
    struct err err = {0};
    pthread_t th;
    char *text;

    CHECK_EQ_INT(pthread_create(&th, NULL, stop_soon, &stop), 0);
    CHECK_EQ_INT(
        schedule__build(cmd, th_tmpdir(), log, 600000000000LL, &stop, &b, &err),
        0);
    pthread_join(th, NULL);
    CHECK(b.stopped && !b.timed_out && !b.ok);
    CHECK_EQ_STR(b.reason, "build killed: the daemon is stopping");
    CHECK_EQ_STR(schedule__build_outcome(&b), "build-failed");
    CHECK_MSG(b.seconds < 30, "the build took %.1f s", b.seconds);
    text = th_read(log, NULL);
    CHECK_CONTAINS(text, "waiting\n");
    CHECK_CONTAINS(text, "[testyard: build killed: the daemon is stopping");
    free(text);
    check_gone(pidfile);
    free(cmd);
    free(pidfile);
    free(log);
}

static void
t_build_log_cap(void)
{
    char *log = path_join(th_tmpdir(), "build.log");
    struct schedule_build b;
    struct err err = {0};
    size_t len = 0;
    char *text;

    CHECK_EQ_INT(schedule__build("head -c 9000000 /dev/zero | tr '\\0' x",
                                 th_tmpdir(), log, 0, NULL, &b, &err),
                 0);
    CHECK(b.ok && b.log_cut);
    text = th_read(log, &len);
    CHECK(len > SCHEDULE_BUILD_LOG_MAX && len < SCHEDULE_BUILD_LOG_MAX + 4096);
    CHECK(text != NULL && strstr(text + len - 200, "output cut at 8 MiB"));
    free(text);
    free(log);
}

static void
git_in(const char *dir, const char *args)
{
    char *cmd = xasprintf("cd '%s' && git -c user.name=t -c user.email=t@t "
                          "-c init.defaultBranch=main %s >/dev/null 2>&1",
                          dir, args);

    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    free(cmd);
}

static void
t_version(void)
{
    const char *dir = th_tmpdir();
    struct err err = {0};
    char v[80], *head, *cmd;

    git_in(dir, "init -q");
    th_write(dir, "a.c", "int a;\n");
    git_in(dir, "add a.c");
    git_in(dir, "commit -q -m one");
    cmd = xasprintf("git -C '%s' rev-parse HEAD", dir);
    head = th_sh(cmd);
    free(cmd);
    CHECK_EQ_INT(schedule__version(dir, v, sizeof(v), &err), 0);
    CHECK_EQ_INT(strlen(v), 40);
    CHECK(head != NULL && strncmp(head, v, 40) == 0);
    /* a change not committed: dirty */
    th_write(dir, "a.c", "int a, b;\n");
    CHECK_EQ_INT(schedule__version(dir, v, sizeof(v), &err), 0);
    CHECK_EQ_INT(strlen(v), 46);
    CHECK_CONTAINS(v, "-dirty");
    CHECK(strncmp(head, v, 40) == 0);
    /* too small a buffer */
    CHECK_EQ_INT(schedule__version(dir, v, 41, &err), -1);
    CHECK_EQ_INT(err.code, ENOBUFS);
    free(head);
}

static void
t_version_not_git(void)
{
    char *dir = path_join(th_tmpdir(), "plain");
    struct err err = {0};
    char v[80];

    CHECK_EQ_INT(mkdir_p(dir, &err), 0);
    setenv("GIT_CEILING_DIRECTORIES", th_tmpdir(), 1);
    CHECK_EQ_INT(schedule__version(dir, v, sizeof(v), &err), -1);
    CHECK_CONTAINS(err.msg, "version-from ");
    CHECK_CONTAINS(err.msg, "git rev-parse HEAD: exit status 128: fatal:");
    free(dir);
}

static const struct th_case cases[] = {
    {"clock", t_clock},
    {"db_migrate", t_db_migrate},
    {"db_roundtrip", t_db_roundtrip},
    {"db_refuses", t_db_refuses},
    {"db_firings", t_db_firings},
    {"build_ok", t_build_ok},
    {"build_failed", t_build_failed},
    {"build_timeout", t_build_timeout},
    {"build_stop", t_build_stop},
    {"build_log_cap", t_build_log_cap},
    {"version", t_version},
    {"version_not_git", t_version_not_git},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
