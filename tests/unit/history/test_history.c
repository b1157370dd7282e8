/*
 * test_history.c — the history tables (runner/history/): migrations
 * (made once, again a no-op, a newer database refused and left alone),
 * runs recorded from run folders written here as a run and its report
 * write them (numbered per name, the figures read back as stored, one run
 * not recorded twice), a
 * missing or malformed file refused with a message naming it and nothing
 * written, a build that failed recorded without a folder, and the series
 * loaded back with a change point in the run it starts at (as JSON and
 * CSV).
 */
#include "history/history_int.h"
#include "../th_db.h"
#include "th.h"
#include "th_files.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *
open_db(void)
{
    char *path = xasprintf("%s/testyard.db", th_tmpdir());
    sqlite3 *db = NULL;

    CHECK_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
    free(path);
    return db;
}

static sqlite3 *
migrated(void)
{
    sqlite3 *db = open_db();
    struct err err = {0};

    CHECK_EQ_INT(history_migrate(db, &err), 0);
    return db;
}

/* A run folder rel as a run and its report leave it: one group
 * "providers" with peak bytes, growth per round and a verdict. */
static char *
run_folder(const char *rel, const char *name, long long peak, double growth)
{
    char *dir = xasprintf("%s/%s", th_tmpdir(), rel);
    char *res = xasprintf(
        "{\"run_id\": \"%s\", \"name\": \"%s\", \"started\": "
        "\"2026-12-01T10:00:00+02:00\", \"ended\": \"2026-12-01T08:00:05Z\","
        " \"duration_s\": 5.0, \"outcome\": \"success\", \"groups\": [{\"id\":"
        " \"providers\", \"instances\": 2, \"outcomes\": {\"success\": 1, "
        "\"failure\": 0, \"crash\": 0, \"oom\": 1, \"timeout\": 0, "
        "\"canceled\": 0, \"lost\": 0}}]}",
        rel, name);
    char *sum =
        xasprintf("{\"version\": 2, \"run_id\": \"%s\", \"groups\": [{\"id\": "
                  "\"providers\", \"peak_bytes\": %lld, \"final_bytes\": null, "
                  "\"oom_kills\": 1, \"verdict\": {\"kind\": \"%s\", "
                  "\"bytes_per_round\": %g}}]}",
                  rel, peak, growth > 1e6 ? "growing" : "flat", growth);

    th_write(dir, "result.json", res);
    th_write(dir, "summary.json", sum);
    free(res);
    free(sum);
    return dir;
}

static void
t_migrate(void)
{
    sqlite3 *db = open_db();
    struct err err = {0};

    CHECK_EQ_INT(history_migrate(db, &err), 0);
    CHECK_EQ_INT(th_db_count(db, "SELECT version FROM schema WHERE module = "
                                 "'history'"),
                 HISTORY_SCHEMA_VERSION);
    CHECK_EQ_INT(th_db_count(db, "SELECT count(*) FROM history_runs"), 0);
    CHECK_EQ_INT(history_migrate(db, &err), 0);
    CHECK_EQ_INT(th_db_count(db, "SELECT count(*) FROM schema"), 1);
    sqlite3_close(db);
}

static void
t_too_new(void)
{
    sqlite3 *db = migrated();
    struct err err = {0};

    sqlite3_exec(db,
                 "UPDATE schema SET version = 99 WHERE module = "
                 "'history'",
                 NULL, NULL, NULL);
    CHECK_EQ_INT(history_migrate(db, &err), -1);
    CHECK_EQ_INT(err.status, EXIT_DATAERR);
    CHECK_CONTAINS(err.msg, "version 99, newer than this testyard knows");
    CHECK_EQ_INT(th_db_count(db, "SELECT version FROM schema"), 99);
    sqlite3_close(db);
}

static void
t_record(void)
{
    sqlite3 *db = migrated();
    struct err err = {0};
    struct history_meta m = {.version = "abc123", .build_seconds = 2.5};
    char *a = run_folder("a", "nightly", 100 << 20, 0);
    char *b = run_folder("b", "nightly", 101 << 20, 0);
    char *c = run_folder("c", "other", 5 << 20, 0);

    CHECK_EQ_INT(history_record(db, &m, a, &err), 1);
    CHECK_EQ_INT(history_record(db, &m, b, &err), 2);
    CHECK_EQ_INT(history_record(db, &m, c, &err), 1);
    CHECK_EQ_INT(history_record(db, &m, b, &err), -1);
    CHECK_EQ_INT(err.code, EEXIST);
    CHECK_CONTAINS(err.msg, "run b is already recorded as nightly run 2");
    err_clear(&err);
    m.name = "renamed";
    CHECK_EQ_INT(history_record(db, &m, a, &err), 1);
    CHECK_EQ_INT(th_db_count(db,
                             "SELECT peak_bytes FROM history_groups g JOIN "
                             "history_runs r ON g.run = r.id WHERE r.name = "
                             "'nightly' AND r.number = 2"),
                 101 << 20);
    CHECK_EQ_INT(th_db_count(db,
                             "SELECT count(*) FROM history_groups WHERE "
                             "final_bytes IS NULL AND oom = 1 AND oom_kills = 1"
                             " AND verdict = 'flat' AND instances = 2"),
                 4);
    CHECK_EQ_INT(th_db_count(db,
                             "SELECT count(*) FROM history_runs WHERE started "
                             "= '2026-12-01T08:00:00.000Z' AND build_s = 2.5 "
                             "AND version = 'abc123' AND task_id IS NULL"),
                 4);
    free(a);
    free(b);
    free(c);
    sqlite3_close(db);
}

struct bad_case {
    const char *file, *text, *want;
    int status;
};

/* Each bad file: refused, naming it, and nothing written. */
static void
t_bad_files(void)
{
    static const struct bad_case cases[] = {
        {"summary.json", NULL, "summary.json: No such file", EXIT_NOINPUT},
        {"result.json", NULL, "not a finished run", EXIT_NOINPUT},
        {"summary.json", "{\"groups\": [", "summary.json: not a JSON object",
         EXIT_DATAERR},
        {"summary.json",
         "{\"groups\": [{\"id\": \"providers\", \"peak_bytes\": \"lots\", "
         "\"verdict\": {\"kind\": \"flat\"}}]}",
         "summary.json: groups[0].peak_bytes: expected a number or null, got "
         "a string",
         EXIT_DATAERR},
        {"summary.json", "{\"groups\": [{\"id\": \"providers\"}]}",
         "summary.json: groups[0].verdict: expected an object, got nothing",
         EXIT_DATAERR},
        {"summary.json", "{\"run_id\": \"elsewhere\", \"groups\": []}",
         "the report of run \"elsewhere\"", EXIT_DATAERR},
        {"result.json", "{\"run_id\": \"x\", \"outcome\": 3, \"groups\": []}",
         "result.json: outcome: expected a string, got a number", EXIT_DATAERR},
        {"result.json",
         "{\"run_id\": \"x\", \"outcome\": \"success\", \"started\": "
         "\"yesterday\", \"groups\": []}",
         "result.json: started: expected an RFC 3339 time", EXIT_DATAERR},
    };
    sqlite3 *db = migrated();
    struct history_meta m = {.build_seconds = -1};

    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct bad_case *k = &cases[i];
        char rel[16], *dir, *path;
        struct err err = {0};

        snprintf(rel, sizeof(rel), "bad%zu", i);
        dir = run_folder(rel, "nightly", 1 << 20, 0);
        path = path_join(dir, k->file);
        if (k->text == NULL)
            remove(path);
        else
            th_write(dir, k->file, k->text);
        CHECK_EQ_INT(history_record(db, &m, dir, &err), -1);
        CHECK_CONTAINS(err.msg, k->want);
        CHECK_MSG(err.status == k->status, "case %zu: status %d", i,
                  err.status);
        free(path);
        free(dir);
    }
    CHECK_EQ_INT(th_db_count(db, "SELECT count(*) FROM history_runs"), 0);
    CHECK_EQ_INT(th_db_count(db, "SELECT count(*) FROM history_groups"), 0);
    sqlite3_close(db);
}

static void
t_build_failed(void)
{
    sqlite3 *db = migrated();
    struct err err = {0};
    struct history_meta m = {.name = "nightly",
                             .schedule = "nightly",
                             .task_id = 7,
                             .build_seconds = 12,
                             .outcome = "build-failed"};

    CHECK_EQ_INT(history_record(db, &m, NULL, &err), 1);
    CHECK_EQ_INT(th_db_count(db,
                             "SELECT count(*) FROM history_runs WHERE outcome "
                             "= 'build-failed' AND task_id = 7 AND run_dir IS "
                             "NULL AND started IS NOT NULL"),
                 1);
    m.outcome = NULL;
    CHECK_EQ_INT(history_record(db, &m, NULL, &err), -1);
    sqlite3_close(db);
}

/* Eight runs, the peak up by half from the sixth: one change point, in
 * run 6, in the JSON of run 6; and a name never recorded. */
static void
t_series(void)
{
    sqlite3 *db = migrated();
    struct err err = {0};
    struct history_meta m = {.build_seconds = -1};
    struct history *h;
    cJSON *j, *cp;
    char *csv = NULL;
    size_t len;
    FILE *f;

    for (int i = 1; i <= 10; i++) {
        char rel[8];
        long long peak = (100LL << 20) + (i % 3) * 65536;
        char *dir;

        snprintf(rel, sizeof(rel), "r%d", i);
        dir = run_folder(rel, "nightly", i >= 6 ? peak * 3 / 2 : peak,
                         i >= 6 ? 8e6 : 1e3 * (i % 2));
        CHECK_EQ_INT(history_record(db, &m, dir, &err), i);
        free(dir);
    }
    m.outcome = "build-failed";
    CHECK_EQ_INT(history_record(db, &m, NULL, &err), -1); /* no name */
    CHECK(history_load(db, "nope", 0, &err) == NULL);
    CHECK_EQ_INT(err.status, EXIT_NOINPUT);
    h = history_load(db, "nightly", 0, &err);
    CHECK(h != NULL);
    if (h == NULL)
        return;
    CHECK_EQ_INT(history_nruns(h), 10);
    history_analyse(h, NULL);
    j = history_json(h);
    CHECK_EQ_INT(cJSON_GetArraySize(j), 10);
    cp = cJSON_GetObjectItem(cJSON_GetArrayItem(j, 5), "change_points");
    CHECK_EQ_INT(cJSON_GetArraySize(cp), 2);
    CHECK_EQ_STR(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cp, 0), "figure")->valuestring,
        "peak_bytes");
    CHECK(fabs(cJSON_GetObjectItem(cJSON_GetArrayItem(cp, 0), "change")
                   ->valuedouble -
               0.5) < 0.01);
    for (int i = 0; i < 10; i++)
        if (i != 5)
            CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(
                             cJSON_GetArrayItem(j, i), "change_points")),
                         0);
    cJSON_Delete(j);
    f = open_memstream(&csv, &len);
    history_csv(h, f);
    fclose(f);
    CHECK_CONTAINS(csv, "run,started,version,outcome,duration_s,build_s,"
                        "group,peak_bytes");
    CHECK_CONTAINS(csv, "\n6,2026-12-01T08:00:00.000Z,,success,5,,"
                        "providers,157286400,,8000000,growing,1,1,0,0,1,");
    free(csv);
    history_destroy(&h);
    h = history_load(db, "nightly", 4102444800LL * 1000000000LL, &err);
    CHECK(h != NULL && history_nruns(h) == 0);
    history_destroy(&h);
    sqlite3_close(db);
}

/* The change points of name's runs, whose peaks are lo for runs 1-5 and
 * hi for 6-10 (a step at run 6). */
static int
step_points(sqlite3 *db, const char *name, long long lo, long long hi)
{
    struct history_meta m = {.build_seconds = -1};
    struct err err = {0};
    struct history *h;
    cJSON *j, *r;
    int n = 0;

    for (int i = 1; i <= 10; i++) {
        char rel[32];
        char *dir;

        snprintf(rel, sizeof(rel), "%s%d", name, i);
        dir = run_folder(rel, name, (i >= 6 ? hi : lo) + (i % 3) * 4096, 0);
        CHECK_EQ_INT(history_record(db, &m, dir, &err), i);
        free(dir);
    }
    h = history_load(db, name, 0, &err);
    CHECK(h != NULL);
    if (h == NULL)
        return -1;
    history_analyse(h, NULL);
    j = history_json(h);
    cJSON_ArrayForEach (r, j) {
        n += cJSON_GetArraySize(cJSON_GetObjectItem(r, "change_points"));
    }
    cJSON_Delete(j);
    history_destroy(&h);
    return n;
}

static void
t_small_figures(void)
{
    sqlite3 *db = migrated();

    /* doubling, and clearly split, but 300 KiB: noise for memory */
    CHECK_EQ_INT(step_points(db, "small", 300 << 10, 600 << 10), 0);
    /* the same shape sixteen times larger is a change */
    CHECK_EQ_INT(step_points(db, "large", 300LL << 14, 600LL << 14), 1);
    sqlite3_close(db);
}

static const struct th_case cases[] = {
    {"migrate: made once, again a no-op", t_migrate},
    {"migrate: a newer database is refused", t_too_new},
    {"record: runs numbered per name, figures stored", t_record},
    {"record: a missing or malformed file writes nothing", t_bad_files},
    {"record: a failed build without a folder", t_build_failed},
    {"load: the series, its change point, JSON and CSV", t_series},
    {"analyse: a change of memory under 1 MiB is not one", t_small_figures},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
