/*
 * test_history_fits.c — the slopes of the report's fits in the history
 * (runner/history/history_fits.c, history_fits_out.c): summary.json's
 * groups[].fits[] recorded per night (at most HISTORY_FITS_MAX a group,
 * in the report's order, a key seen twice kept once, a malformed fit
 * refused naming it), ten nights read back with a planted change of one
 * key's slope found at its night and none on a steady slope or on a flat
 * fit's wobble about zero, what `testyard history` and `--fits` print
 * and their JSON, the charts per key, and a database made before fits
 * were recorded migrated with its runs read back without fits.
 */
#include "history/history_int.h"
#include "../th_db.h"
#include "th.h"
#include "th_files.h"
#include "base/sql.h"
#include "base/strbuf.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *
migrated(void)
{
    char *path = xasprintf("%s/testyard.db", th_tmpdir());
    sqlite3 *db = NULL;
    struct err err = {0};

    CHECK_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_EQ_INT(history_migrate(db, &err), 0);
    free(path);
    return db;
}

/* A run folder rel of name with group "kvd" whose summary.json has the
 * fits text fits (a JSON array, or NULL for a report without them). */
static char *
fits_folder(const char *rel, const char *name, const char *fits)
{
    char *dir = xasprintf("%s/%s", th_tmpdir(), rel);
    char *res = xasprintf(
        "{\"run_id\": \"%s\", \"name\": \"%s\", \"started\": "
        "\"2026-12-01T08:00:00Z\", \"outcome\": \"success\", \"groups\": "
        "[{\"id\": \"kvd\", \"instances\": 2, \"outcomes\": {\"success\": "
        "2}}]}",
        rel, name);
    char *sum = xasprintf(
        "{\"run_id\": \"%s\", \"groups\": [{\"id\": \"kvd\", \"peak_bytes\":"
        " 1048576, \"final_bytes\": 1048576, \"oom_kills\": 0, \"verdict\": "
        "{\"kind\": \"flat\", \"bytes_per_round\": 0}%s%s}]}",
        rel, fits ? ", \"fits\": " : "", fits ? fits : "");

    th_write(dir, "result.json", res);
    th_write(dir, "summary.json", sum);
    free(res);
    free(sum);
    return dir;
}

static void
fit_text(struct strbuf *sb, const char *series, const char *x,
         const char *stage, double slope, const char *verdict)
{
    strbuf_addf(sb,
                "%s{\"series\": \"%s\", \"x\": \"%s\", \"stage\": %s%s%s, "
                "\"instances\": 2, \"slope\": %.9g, \"r2\": 0.98, "
                "\"points\": 40, \"verdict\": \"%s\"}",
                sb->len > 1 ? ", " : "", series, x, stage ? "\"" : "",
                stage ? stage : "null", stage ? "\"" : "", slope, verdict);
}

/* Night i (1-based) of ten: the RSS per cycle in stage load doubles
 * from night 6 (4 KiB to 8 KiB, growing), cgroup usage per round stays
 * at about 1 MiB (growing), restart seconds per cycle is a flat fit
 * wobbling about zero with its sign. */
static char *
night(int i)
{
    struct strbuf sb = {0};
    double noise = (i % 3) * 0.01;

    strbuf_adds(&sb, "[");
    fit_text(&sb, "process:kvd:rss", "cycles", "load",
             (i >= 6 ? 8192 : 4096) * (1 + noise), "growing");
    fit_text(&sb, "cgroup:usage", "rounds", NULL, 1048576 * (1 + noise),
             "growing");
    fit_text(&sb, "restart:seconds", "cycles", NULL,
             (i % 2 ? 1 : -1) * (i >= 6 ? 3e-6 : 1e-6), "flat");
    strbuf_adds(&sb, "]");
    return strbuf_detach(&sb);
}

static void
record_nights(sqlite3 *db, const char *name, int n)
{
    struct history_meta m = {.build_seconds = -1};
    struct err err = {0};

    for (int i = 1; i <= n; i++) {
        char rel[40], v[16], *fits = night(i), *dir;

        snprintf(rel, sizeof(rel), "%s-%d", name, i);
        snprintf(v, sizeof(v), "v%d", i);
        m.version = v;
        dir = fits_folder(rel, name, fits);
        CHECK_EQ_INT(history_record(db, &m, dir, &err), i);
        free(dir);
        free(fits);
    }
}

static void
t_record(void)
{
    sqlite3 *db = migrated();
    struct history_meta m = {.build_seconds = -1};
    struct err err = {0};
    struct strbuf sb = {0};
    char *dir;

    strbuf_adds(&sb, "[");
    for (int i = 0; i < 100; i++) {
        char series[32];

        snprintf(series, sizeof(series), "disk:d%d:allocated", i);
        fit_text(&sb, series, "cycles", NULL, 1000 + i, "growing");
        if (i == 3) /* the same key again: kept once */
            fit_text(&sb, series, "cycles", NULL, 1, "flat");
    }
    strbuf_adds(&sb, "]");
    dir = fits_folder("many", "many", sb.buf);
    CHECK_EQ_INT(history_record(db, &m, dir, &err), 1);
    CHECK_EQ_INT(th_db_count(db, "SELECT count(*) FROM history_fits"),
                 HISTORY_FITS_MAX);
    CHECK_EQ_INT(th_db_count(db, "SELECT max(seq) FROM history_fits"),
                 HISTORY_FITS_MAX - 1);
    CHECK_EQ_INT(th_db_count(db, "SELECT slope FROM history_fits WHERE "
                                 "series = 'disk:d3:allocated'"),
                 1003);
    CHECK_EQ_INT(th_db_count(db, "SELECT seq FROM history_fits WHERE "
                                 "series = 'disk:d63:allocated' AND stage IS "
                                 "NULL AND r2 = 0.98 AND points = 40 AND "
                                 "instances = 2 AND verdict = 'growing'"),
                 63);
    CHECK_EQ_INT(th_db_count(db, "SELECT count(*) FROM history_fits WHERE "
                                 "series = 'disk:d64:allocated'"),
                 0);
    free(dir);
    /* a report without fits: none recorded, the run is */
    dir = fits_folder("none", "many", NULL);
    CHECK_EQ_INT(history_record(db, &m, dir, &err), 2);
    CHECK_EQ_INT(th_db_count(db, "SELECT count(*) FROM history_fits"),
                 HISTORY_FITS_MAX);
    free(dir);
    strbuf_release(&sb);
    sqlite3_close(db);
}

static void
t_bad_fits(void)
{
    static const struct {
        const char *fits, *want;
    } cases[] = {
        {"\"lots\"", "summary.json: groups[0].fits: expected an array, got a "
                     "string"},
        {"[3]", "summary.json: groups[0].fits[0]: expected an object, got a "
                "number"},
        {"[{\"series\": \"cgroup:usage\", \"x\": \"rounds\", \"slope\": "
         "\"steep\"}]",
         "summary.json: groups[0].fits[0].slope: expected a number or null, "
         "got a string"},
        {"[{\"x\": \"rounds\"}]",
         "summary.json: groups[0].fits[0].series: expected a string, got "
         "nothing"},
    };
    sqlite3 *db = migrated();
    struct history_meta m = {.build_seconds = -1};

    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct err err = {0};
        char rel[16], *dir;

        snprintf(rel, sizeof(rel), "bad%zu", i);
        dir = fits_folder(rel, "bad", cases[i].fits);
        CHECK_EQ_INT(history_record(db, &m, dir, &err), -1);
        CHECK_CONTAINS(err.msg, cases[i].want);
        CHECK_EQ_INT(err.status, EXIT_DATAERR);
        free(dir);
    }
    CHECK_EQ_INT(th_db_count(db, "SELECT count(*) FROM history_runs"), 0);
    CHECK_EQ_INT(th_db_count(db, "SELECT count(*) FROM history_fits"), 0);
    sqlite3_close(db);
}

static struct history *
nights_loaded(sqlite3 *db, const char *name)
{
    struct err err = {0};
    struct history *h;

    record_nights(db, name, 10);
    h = history_load(db, name, 0, &err);
    CHECK(h != NULL);
    if (h != NULL)
        history_analyse(h, NULL);
    return h;
}

static const cJSON *
key_of(const cJSON *a, const char *series)
{
    const cJSON *o;

    cJSON_ArrayForEach (o, a) {
        const cJSON *s = cJSON_GetObjectItem(o, "series");

        if (cJSON_IsString(s) && strcmp(s->valuestring, series) == 0)
            return o;
    }
    return NULL;
}

/* The planted change of the RSS slope is found at night 6; the steady
 * cgroup slope and the wobbling restart slope give none. */
static void
t_change_points(void)
{
    sqlite3 *db = migrated();
    struct history *h = nights_loaded(db, "nightly");
    cJSON *a, *runs, *cp;
    const cJSON *rss, *cg, *rs;

    if (h == NULL)
        return;
    CHECK_EQ_INT(history_nfits(h), 3);
    a = history_fits_json(h);
    rss = key_of(a, "process:kvd:rss");
    cg = key_of(a, "cgroup:usage");
    rs = key_of(a, "restart:seconds");
    CHECK(rss != NULL && cg != NULL && rs != NULL);
    if (rss != NULL && cg != NULL && rs != NULL) {
        cp = cJSON_GetObjectItem(rss, "change_points");
        CHECK_EQ_INT(cJSON_GetArraySize(cp), 1);
        CHECK_EQ_INT(
            cJSON_GetObjectItem(cJSON_GetArrayItem(cp, 0), "run")->valuedouble,
            6);
        CHECK(fabs(cJSON_GetObjectItem(cJSON_GetArrayItem(cp, 0), "change")
                       ->valuedouble -
                   1.0) < 0.05);
        CHECK_EQ_STR(cJSON_GetObjectItem(rss, "stage")->valuestring, "load");
        CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(rss, "runs")), 10);
        CHECK_EQ_INT(cJSON_GetObjectItem(rss, "run")->valuedouble, 10);
        CHECK_EQ_INT(
            cJSON_GetArraySize(cJSON_GetObjectItem(cg, "change_points")), 0);
        CHECK_EQ_INT(
            cJSON_GetArraySize(cJSON_GetObjectItem(rs, "change_points")), 0);
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(cg, "stage")));
    }
    cJSON_Delete(a);
    /* the run's JSON carries its fits and the slope's change point */
    runs = history_json(h);
    cp = cJSON_GetObjectItem(cJSON_GetArrayItem(runs, 5), "change_points");
    CHECK_EQ_INT(cJSON_GetArraySize(cp), 1);
    CHECK_EQ_STR(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cp, 0), "figure")->valuestring,
        "slope");
    CHECK_EQ_INT(
        cJSON_GetArraySize(cJSON_GetObjectItem(
            cJSON_GetArrayItem(
                cJSON_GetObjectItem(cJSON_GetArrayItem(runs, 0), "groups"), 0),
            "fits")),
        3);
    cJSON_Delete(runs);
    history_destroy(&h);
    sqlite3_close(db);
}

static char *
printed(const struct history *h, void (*print)(const struct history *, FILE *))
{
    char *text = NULL;
    size_t len;
    FILE *f = open_memstream(&text, &len);

    print(h, f);
    fclose(f);
    return text;
}

/* What a user reads: the default view's fits part, and --fits. */
static void
t_print(void)
{
    sqlite3 *db = migrated();
    struct history *h = nights_loaded(db, "nightly");
    char *text;

    if (h == NULL)
        return;
    text = printed(h, history_print);
    CHECK_CONTAINS(text, "fits against the work done (last slope, change "
                         "since the run before, verdict):\n");
    CHECK_CONTAINS(text, "  kvd process:kvd:rss against cycles in load: "
                         "+8.1 KiB per cycle at run 10, +1.0 % since run 9, "
                         "growing (R² 0.98)\n");
    CHECK_CONTAINS(text, "  kvd process:kvd:rss against cycles in load: "
                         "+99 % at run 6 (commit v6), p = ");
    CHECK_CONTAINS(text, "(mean +4.0 KiB per cycle -> +8.1 KiB per cycle)");
    CHECK(strstr(text, "cgroup:usage against rounds in the whole run: +") !=
          NULL);
    free(text);
    text = printed(h, history_print_fits);
    CHECK_CONTAINS(text, "history of nightly: 10 runs, 3 fits against the "
                         "work done\n");
    CHECK_CONTAINS(text, "\nkvd process:kvd:rss against cycles in load\n");
    CHECK_CONTAINS(text, "   6  v6                 +8.0 KiB per cycle");
    CHECK_CONTAINS(text, "slope change points (E-Divisive means, p <= 0.05, "
                         "min effect 20 %");
    free(text);
    history_destroy(&h);
    sqlite3_close(db);
}

static void
t_charts(void)
{
    sqlite3 *db = migrated();
    struct history *h = nights_loaded(db, "nightly");
    struct strbuf sb = {0};
    const char *rss, *cg;

    if (h == NULL)
        return;
    history_svg_fits(h, 0, &sb);
    rss = strstr(sb.buf, "data-figure=\"slope\" data-fit=\"0\"");
    cg = strstr(sb.buf, "data-figure=\"slope\" data-fit=\"1\"");
    CHECK(rss != NULL && cg != NULL && rss < cg);
    CHECK(strstr(sb.buf, "data-fit=\"2\"") != NULL);
    CHECK(strstr(sb.buf, "data-fit=\"3\"") == NULL);
    CHECK_CONTAINS(sb.buf, "slope of kvd process:kvd:rss against cycles in "
                           "load</text>");
    /* one change point, on the first chart */
    if (rss != NULL && cg != NULL) {
        const char *mark = strstr(rss, "<g class=\"cp\">");

        CHECK(mark != NULL && mark < cg);
        CHECK(strstr(cg, "<g class=\"cp\">") == NULL);
        CHECK(mark != NULL && strstr(mark, "run 6, v6: +99 %") != NULL);
    }
    CHECK_CONTAINS(sb.buf, "run 6, 2026-12-01 08:00:00, v6, +8.0 KiB per "
                           "cycle, growing (R² 0.98), success");
    strbuf_release(&sb);
    history_svg_fits(h, 1, &sb);
    CHECK(strstr(sb.buf, "data-fit=\"1\"") == NULL);
    strbuf_release(&sb);
    history_destroy(&h);
    sqlite3_close(db);
}

/* The history tables as the first testyard made them (version 1). */
static const char *const v1[] = {
    "CREATE TABLE history_runs(id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
    " number INTEGER NOT NULL, schedule TEXT, task_id INTEGER, version TEXT,"
    " run_id TEXT, run_dir TEXT, started TEXT, ended TEXT, duration_s REAL,"
    " build_s REAL, outcome TEXT NOT NULL, recorded TEXT NOT NULL,"
    " UNIQUE(name, number));"
    "CREATE INDEX history_runs_started ON history_runs(name, started);"
    "CREATE TABLE history_groups(run INTEGER NOT NULL REFERENCES "
    "history_runs(id) ON DELETE CASCADE, group_id TEXT NOT NULL, instances "
    "INTEGER, peak_bytes INTEGER, final_bytes INTEGER, "
    "growth_bytes_per_round REAL, verdict TEXT, oom_kills INTEGER, success "
    "INTEGER NOT NULL DEFAULT 0, failure INTEGER NOT NULL DEFAULT 0, crash "
    "INTEGER NOT NULL DEFAULT 0, oom INTEGER NOT NULL DEFAULT 0, timeout "
    "INTEGER NOT NULL DEFAULT 0, canceled INTEGER NOT NULL DEFAULT 0, lost "
    "INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(run, group_id));",
};

static void
t_old_database(void)
{
    char *path = xasprintf("%s/old.db", th_tmpdir());
    struct history_meta m = {.build_seconds = -1};
    struct err err = {0};
    struct strbuf sb = {0};
    sqlite3 *db = NULL;
    struct history *h;
    char *dir, *text;

    CHECK_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_EQ_INT(sql_migrate(db, "history", v1, 1, &err), 0);
    dir = fits_folder("old", "old", NULL);
    CHECK_EQ_INT(history_record(db, &m, dir, &err), 1);
    CHECK_EQ_INT(history_migrate(db, &err), 0);
    CHECK_EQ_INT(th_db_count(db, "SELECT version FROM schema WHERE module = "
                                 "'history'"),
                 HISTORY_SCHEMA_VERSION);
    free(dir);
    /* a night with fits after the migration */
    text = night(1);
    dir = fits_folder("new", "old", text);
    free(text);
    CHECK_EQ_INT(history_record(db, &m, dir, &err), 2);
    free(dir);
    h = history_load(db, "old", 0, &err);
    CHECK(h != NULL);
    if (h != NULL) {
        CHECK_EQ_INT(history_nruns(h), 2);
        CHECK_EQ_INT(h->runs[0].nfits, 0);
        CHECK_EQ_INT(h->runs[0].ngroups, 1);
        CHECK_EQ_INT(h->runs[1].nfits, 3);
        history_analyse(h, NULL);
        history_svg_fits(h, 0, &sb);
        CHECK_CONTAINS(sb.buf, "run 1, 2026-12-01 08:00:00, no version: "
                               "not in this run");
        strbuf_release(&sb);
        history_destroy(&h);
    }
    sqlite3_close(db);
    /* and one that never had fits prints as before */
    CHECK_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
    dir = fits_folder("plain", "plain", NULL);
    CHECK_EQ_INT(history_record(db, &m, dir, &err), 1);
    free(dir);
    h = history_load(db, "plain", 0, &err);
    if (h != NULL) {
        history_analyse(h, NULL);
        CHECK_EQ_INT(history_nfits(h), 0);
        text = printed(h, history_print);
        CHECK(strstr(text, "fits against") == NULL);
        free(text);
        history_svg_fits(h, 0, &sb);
        CHECK(sb.buf == NULL || sb.buf[0] == '\0');
        strbuf_release(&sb);
        history_destroy(&h);
    }
    sqlite3_close(db);
    free(path);
}

static const struct th_case cases[] = {
    {"record: the first 64 fits a group, a key once", t_record},
    {"record: a malformed fit writes nothing", t_bad_fits},
    {"analyse: a planted slope change found, steady ones not", t_change_points},
    {"print: the fits' part and --fits", t_print},
    {"svg: a chart per fit key with its change point", t_charts},
    {"migrate: runs recorded before fits read without them", t_old_database},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
