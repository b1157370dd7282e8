/*
 * history_record.c — one finished run into the history tables.
 *
 * A run folder's result.json (written last by the run: the run's
 * identity, timings, outcome and per group how its instances ended) and
 * summary.json (the report: per group peak, final, OOM kills and the
 * growth verdict with its rate per round, and the fits against the work
 * done: the first HISTORY_FITS_MAX of each group, a key seen twice kept
 * once) are read and checked whole
 * before anything is written, and the run and its groups go in within one
 * transaction that also numbers the run (one more than the name's last),
 * so a bad file or a failure half-way leaves the tables as they were.
 * Both files are opened beneath the run folder without following links.
 */
#include "history/history_int.h"

#include "base/fsat.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JSON_MAX ((size_t)64 << 20)

const char *const history__outcome_names[HISTORY_NOUTCOMES] = {
    "success", "failure", "crash", "oom", "timeout", "canceled", "lost"};

/* A fit of summary.json, its strings borrowed from the parsed file. */
struct rec_fit {
    const char *series, *x, *stage, *verdict;
    double slope, r2, instances, points; /* NAN unknown */
};

struct rec_group {
    const char *id;
    int64_t instances;
    double peak, final, growth; /* NAN unknown */
    const char *verdict;
    int64_t ooms; /* -1 unknown */
    int64_t outcomes[HISTORY_NOUTCOMES];
    struct rec_fit *fits;
    size_t nfits;
};

struct rec {
    const char *dir;
    cJSON *result, *summary;
    const char *run_id, *name, *outcome;
    char started[40], ended[40];
    double duration;
    struct rec_group *g;
    size_t ng;
};

/* ---- reading the files ---------------------------------------------- */

static cJSON *
read_json(int dirfd, const char *dir, const char *file, bool *absent,
          struct err *err)
{
    struct err e = {0};
    size_t len;
    cleanup_free char *text = fsat_read(dirfd, file, JSON_MAX, &len, &e);
    cJSON *o;

    *absent = text == NULL && e.code == ENOENT;
    if (text == NULL) {
        err_set(err, e.code, "%s/%s", dir, e.msg);
        return NULL;
    }
    o = cJSON_ParseWithLength(text, len);
    if (o == NULL || !cJSON_IsObject(o)) {
        const char *at = cJSON_GetErrorPtr();

        cJSON_Delete(o);
        err_set(err, EPROTO, "%s/%s: not a JSON object (near byte %zu)", dir,
                file,
                at && at >= text && at <= text + len ? (size_t)(at - text) : 0);
        err_status(err, EXIT_DATAERR);
        return NULL;
    }
    return o;
}

static const char *
type_of(const cJSON *v)
{
    return v == NULL           ? "nothing"
           : cJSON_IsString(v) ? "a string"
           : cJSON_IsNumber(v) ? "a number"
           : cJSON_IsBool(v)   ? "a boolean"
           : cJSON_IsNull(v)   ? "null"
           : cJSON_IsArray(v)  ? "an array"
                               : "an object";
}

static int
bad(const struct rec *r, const char *file, const char *where, const char *key,
    const char *want, const cJSON *got, struct err *err)
{
    err_set(err, EPROTO, "%s/%s: %s%s%s: expected %s, got %s", r->dir, file,
            where, *where ? "." : "", key, want, type_of(got));
    return err_status(err, EXIT_DATAERR);
}

/* o[key] as a string (NULL allowed for null when nullable). */
static int
get_str(const struct rec *r, const char *file, const cJSON *o,
        const char *where, const char *key, bool nullable, const char **out,
        struct err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    *out = NULL;
    if (cJSON_IsString(v)) {
        *out = v->valuestring;
        return 0;
    }
    if (nullable && (v == NULL || cJSON_IsNull(v)))
        return 0;
    return bad(r, file, where, key, nullable ? "a string or null" : "a string",
               v, err);
}

/* o[key] as a number; NAN for null or absent. */
static int
get_num(const struct rec *r, const char *file, const cJSON *o,
        const char *where, const char *key, double *out, struct err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    *out = NAN;
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
        *out = v->valuedouble;
        return 0;
    }
    if (v == NULL || cJSON_IsNull(v))
        return 0;
    return bad(r, file, where, key, "a number or null", v, err);
}

/* A time as RFC 3339, rewritten in the one form (UTC, milliseconds) so
 * the stored times sort as text; "" for null. */
static int
get_time(const struct rec *r, const cJSON *o, const char *key, char *buf,
         size_t size, struct err *err)
{
    const char *s;
    int64_t ns;

    buf[0] = '\0';
    if (get_str(r, "result.json", o, "", key, true, &s, err) < 0)
        return -1;
    if (s == NULL)
        return 0;
    if ((ns = time_parse_rfc3339(s)) <= 0) {
        err_set(err, EPROTO,
                "%s/result.json: %s: expected an RFC 3339 time, "
                "got \"%.64s\"",
                r->dir, key, s);
        return err_status(err, EXIT_DATAERR);
    }
    time_rfc3339(ns, buf, size);
    return 0;
}

static int
result_group(struct rec *r, const cJSON *o, size_t i, struct err *err)
{
    struct rec_group *g = &r->g[i];
    const cJSON *oc;
    char where[48];
    double v;

    snprintf(where, sizeof(where), "groups[%zu]", i);
    if (!cJSON_IsObject(o))
        return bad(r, "result.json", "", where, "an object", o, err);
    if (get_str(r, "result.json", o, where, "id", false, &g->id, err) < 0 ||
        get_num(r, "result.json", o, where, "instances", &v, err) < 0)
        return -1;
    g->instances = isnan(v) ? -1 : (int64_t)v;
    oc = cJSON_GetObjectItemCaseSensitive(o, "outcomes");
    if (!cJSON_IsObject(oc))
        return bad(r, "result.json", where, "outcomes", "an object", oc, err);
    for (int k = 0; k < HISTORY_NOUTCOMES; k++) {
        char at[64];

        snprintf(at, sizeof(at), "%s.outcomes", where);
        if (get_num(r, "result.json", oc, at, history__outcome_names[k], &v,
                    err) < 0)
            return -1;
        g->outcomes[k] = isnan(v) || v < 0 ? 0 : (int64_t)v;
    }
    g->peak = g->final = g->growth = NAN;
    g->ooms = -1;
    return 0;
}

static int
load_result(struct rec *r, struct err *err)
{
    const cJSON *gs = cJSON_GetObjectItemCaseSensitive(r->result, "groups");
    const cJSON *o = r->result;

    if (get_str(r, "result.json", o, "", "run_id", false, &r->run_id, err) <
            0 ||
        get_str(r, "result.json", o, "", "name", true, &r->name, err) < 0 ||
        get_str(r, "result.json", o, "", "outcome", false, &r->outcome, err) <
            0 ||
        get_time(r, o, "started", r->started, sizeof(r->started), err) < 0 ||
        get_time(r, o, "ended", r->ended, sizeof(r->ended), err) < 0 ||
        get_num(r, "result.json", o, "", "duration_s", &r->duration, err) < 0)
        return -1;
    if (!cJSON_IsArray(gs))
        return bad(r, "result.json", "", "groups", "an array", gs, err);
    r->ng = (size_t)cJSON_GetArraySize(gs);
    r->g = xcalloc(r->ng ? r->ng : 1, sizeof(*r->g));
    for (size_t i = 0; i < r->ng; i++)
        if (result_group(r, cJSON_GetArrayItem(gs, (int)i), i, err) < 0)
            return -1;
    return 0;
}

static bool
fit_seen(const struct rec_group *g, const struct rec_fit *f)
{
    for (size_t i = 0; i < g->nfits; i++)
        if (strcmp(g->fits[i].series, f->series) == 0 &&
            strcmp(g->fits[i].x, f->x) == 0 &&
            history__same_str(g->fits[i].stage, f->stage))
            return true;
    return false;
}

static int
summary_fit(struct rec *r, struct rec_fit *f, const cJSON *o, const char *where,
            struct err *err)
{
    const char *s = "summary.json";

    if (!cJSON_IsObject(o))
        return bad(r, s, "", where, "an object", o, err);
    return get_str(r, s, o, where, "series", false, &f->series, err) < 0 ||
                   get_str(r, s, o, where, "x", false, &f->x, err) < 0 ||
                   get_str(r, s, o, where, "stage", true, &f->stage, err) < 0 ||
                   get_num(r, s, o, where, "slope", &f->slope, err) < 0 ||
                   get_num(r, s, o, where, "r2", &f->r2, err) < 0 ||
                   get_str(r, s, o, where, "verdict", true, &f->verdict, err) <
                       0 ||
                   get_num(r, s, o, where, "instances", &f->instances, err) <
                       0 ||
                   get_num(r, s, o, where, "points", &f->points, err) < 0
               ? -1
               : 0;
}

/* The first HISTORY_FITS_MAX fits of summary.json's group o (where
 * names it); none when the report has none (an older report). */
static int
summary_fits(struct rec *r, struct rec_group *g, const cJSON *o,
             const char *where, struct err *err)
{
    const cJSON *fs = cJSON_GetObjectItemCaseSensitive(o, "fits");
    int n;

    if (fs == NULL || cJSON_IsNull(fs))
        return 0;
    if (!cJSON_IsArray(fs))
        return bad(r, "summary.json", where, "fits", "an array", fs, err);
    n = cJSON_GetArraySize(fs);
    free(g->fits);
    g->nfits = 0;
    g->fits = xcalloc(HISTORY_FITS_MAX, sizeof(*g->fits));
    for (int i = 0; i < n && g->nfits < HISTORY_FITS_MAX; i++) {
        struct rec_fit *f = &g->fits[g->nfits];
        char at[80];

        snprintf(at, sizeof(at), "%s.fits[%d]", where, i);
        if (summary_fit(r, f, cJSON_GetArrayItem(fs, i), at, err) < 0)
            return -1;
        if (!fit_seen(g, f))
            g->nfits++;
    }
    return 0;
}

/* The figures of group g from summary.json's group o. */
static int
summary_group(struct rec *r, struct rec_group *g, const cJSON *o, size_t i,
              struct err *err)
{
    const char *f = "summary.json";
    const cJSON *vd = cJSON_GetObjectItemCaseSensitive(o, "verdict");
    char where[48], at[64];
    double ooms;

    snprintf(where, sizeof(where), "groups[%zu]", i);
    snprintf(at, sizeof(at), "%s.verdict", where);
    if (get_num(r, f, o, where, "peak_bytes", &g->peak, err) < 0 ||
        get_num(r, f, o, where, "final_bytes", &g->final, err) < 0 ||
        get_num(r, f, o, where, "oom_kills", &ooms, err) < 0 ||
        summary_fits(r, g, o, where, err) < 0)
        return -1;
    g->ooms = isnan(ooms) ? -1 : (int64_t)ooms;
    if (!cJSON_IsObject(vd))
        return bad(r, f, where, "verdict", "an object", vd, err);
    return get_str(r, f, vd, at, "kind", false, &g->verdict, err) < 0 ||
                   get_num(r, f, vd, at, "bytes_per_round", &g->growth, err) < 0
               ? -1
               : 0;
}

static struct rec_group *
group_named(struct rec *r, const char *id)
{
    for (size_t i = 0; i < r->ng; i++)
        if (strcmp(r->g[i].id, id) == 0)
            return &r->g[i];
    return NULL;
}

static int
load_summary(struct rec *r, struct err *err)
{
    const cJSON *gs = cJSON_GetObjectItemCaseSensitive(r->summary, "groups");
    const char *run_id, *id;
    char where[48];

    if (get_str(r, "summary.json", r->summary, "", "run_id", true, &run_id,
                err) < 0)
        return -1;
    if (run_id != NULL && strcmp(run_id, r->run_id) != 0) {
        err_set(err, EPROTO,
                "%s/summary.json: the report of run \"%.100s\", not of "
                "\"%.100s\" (testyard report %s writes it anew)",
                r->dir, run_id, r->run_id, r->dir);
        return err_status(err, EXIT_DATAERR);
    }
    if (!cJSON_IsArray(gs))
        return bad(r, "summary.json", "", "groups", "an array", gs, err);
    for (int i = 0; i < cJSON_GetArraySize(gs); i++) {
        const cJSON *o = cJSON_GetArrayItem(gs, i);
        struct rec_group *g;

        snprintf(where, sizeof(where), "groups[%d]", i);
        if (!cJSON_IsObject(o))
            return bad(r, "summary.json", "", where, "an object", o, err);
        if (get_str(r, "summary.json", o, where, "id", false, &id, err) < 0)
            return -1;
        if ((g = group_named(r, id)) != NULL &&
            summary_group(r, g, o, (size_t)i, err) < 0)
            return -1;
    }
    return 0;
}

/* Both files of dir, checked. With allow_absent, a folder without
 * result.json gives a run without groups. */
static int
load_files(struct rec *r, bool allow_absent, struct err *err)
{
    int fd = fsat_root(r->dir, err);
    bool absent;
    int rc = -1;

    if (fd < 0)
        return err_status(err, EXIT_NOINPUT);
    r->result = read_json(fd, r->dir, "result.json", &absent, err);
    if (r->result == NULL && absent && allow_absent) {
        err_clear(err);
        rc = 0;
    } else if (r->result == NULL && absent) {
        err_prefix(err, "not a finished run");
        err_status(err, EXIT_NOINPUT);
    } else if (r->result != NULL && load_result(r, err) == 0) {
        r->summary = read_json(fd, r->dir, "summary.json", &absent, err);
        if (r->summary == NULL && absent)
            err_status(err, EXIT_NOINPUT);
        rc = r->summary != NULL ? load_summary(r, err) : -1;
    }
    close(fd);
    return rc;
}

/* ---- writing them ---------------------------------------------------- */

static int64_t
next_number(sqlite3 *db, const char *name, struct err *err)
{
    sqlite3_stmt *st;
    int64_t n = -1;

    if (history__prepare(db,
                         "SELECT COALESCE(MAX(number), 0) + 1 FROM "
                         "history_runs WHERE name = ?",
                         &st, err) < 0)
        return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    else
        history__sqlerr(db, err, "history database: numbering the run");
    sqlite3_finalize(st);
    return n;
}

/* A run already recorded under name (by its run id) is refused: an
 * import run twice would otherwise count it twice in the series. */
static int
check_new(sqlite3 *db, const char *name, const struct rec *r, struct err *err)
{
    sqlite3_stmt *st;
    int rc;

    if (r->run_id == NULL)
        return 0;
    if (history__prepare(db,
                         "SELECT number FROM history_runs WHERE name = ? AND "
                         "run_id = ?",
                         &st, err) < 0)
        return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, r->run_id, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        err_set(err, EEXIST, "%s: run %s is already recorded as %s run %lld",
                r->dir ? r->dir : "", r->run_id, name,
                (long long)sqlite3_column_int64(st, 0));
        err_status(err, EXIT_DATAERR);
    } else if (rc != SQLITE_DONE) {
        history__sqlerr(db, err, "history database: runs");
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int
step_done(sqlite3 *db, sqlite3_stmt *st, const char *what, struct err *err)
{
    int rc =
        sqlite3_step(st) == SQLITE_DONE ? 0 : history__sqlerr(db, err, what);

    sqlite3_finalize(st);
    return rc;
}

static int
insert_run(sqlite3 *db, const struct history_meta *m, const struct rec *r,
           const char *name, int64_t number, struct err *err)
{
    sqlite3_stmt *st;
    char now[40];

    time_rfc3339(now_wall_ns(), now, sizeof(now));
    if (history__prepare(db,
                         "INSERT INTO history_runs(name, number, schedule, "
                         "task_id, version, run_id, run_dir, started, ended, "
                         "duration_s, build_s, outcome, recorded) VALUES(?, "
                         "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         &st, err) < 0)
        return -1;
    sql_bind_text(st, 1, name);
    sqlite3_bind_int64(st, 2, number);
    sql_bind_text(st, 3, m->schedule);
    history__bind_i64(st, 4, m->task_id, m->task_id != 0);
    sql_bind_text(st, 5, m->version);
    sql_bind_text(st, 6, r->run_id);
    sql_bind_text(st, 7, r->result ? r->dir : NULL);
    sql_bind_text(st, 8, r->started[0] ? r->started : now);
    sql_bind_text(st, 9, r->ended[0] ? r->ended : NULL);
    history__bind_double(st, 10, r->duration);
    history__bind_double(st, 11,
                         m->build_seconds >= 0 ? m->build_seconds : NAN);
    sql_bind_text(st, 12, m->outcome ? m->outcome : r->outcome);
    sql_bind_text(st, 13, now);
    return step_done(db, st, "history database: recording the run", err);
}

static int
insert_group(sqlite3 *db, int64_t run, const struct rec_group *g,
             struct err *err)
{
    sqlite3_stmt *st;

    if (history__prepare(
            db,
            "INSERT INTO history_groups(run, group_id, instances, "
            "peak_bytes, final_bytes, growth_bytes_per_round, verdict, "
            "oom_kills, success, failure, crash, oom, timeout, canceled, "
            "lost) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            &st, err) < 0)
        return -1;
    sqlite3_bind_int64(st, 1, run);
    sql_bind_text(st, 2, g->id);
    history__bind_i64(st, 3, g->instances, g->instances >= 0);
    history__bind_i64(st, 4, (int64_t)g->peak, !isnan(g->peak));
    history__bind_i64(st, 5, (int64_t)g->final, !isnan(g->final));
    history__bind_double(st, 6, g->growth);
    sql_bind_text(st, 7, g->verdict);
    history__bind_i64(st, 8, g->ooms, g->ooms >= 0);
    for (int k = 0; k < HISTORY_NOUTCOMES; k++)
        sqlite3_bind_int64(st, 9 + k, g->outcomes[k]);
    return step_done(db, st, "history database: recording a group", err);
}

static int
insert_fits(sqlite3 *db, int64_t run, const struct rec_group *g,
            struct err *err)
{
    for (size_t i = 0; i < g->nfits; i++) {
        const struct rec_fit *f = &g->fits[i];
        sqlite3_stmt *st;

        if (history__prepare(db,
                             "INSERT INTO history_fits(run, group_id, seq, "
                             "series, x, stage, slope, r2, verdict, "
                             "instances, points) VALUES(?, ?, ?, ?, ?, ?, ?, "
                             "?, ?, ?, ?)",
                             &st, err) < 0)
            return -1;
        sqlite3_bind_int64(st, 1, run);
        sql_bind_text(st, 2, g->id);
        sqlite3_bind_int64(st, 3, (int64_t)i);
        sql_bind_text(st, 4, f->series);
        sql_bind_text(st, 5, f->x);
        sql_bind_text(st, 6, f->stage);
        history__bind_double(st, 7, f->slope);
        history__bind_double(st, 8, f->r2);
        sql_bind_text(st, 9, f->verdict);
        history__bind_i64(st, 10, (int64_t)f->instances, !isnan(f->instances));
        history__bind_i64(st, 11, (int64_t)f->points, !isnan(f->points));
        if (step_done(db, st, "history database: recording a fit", err) < 0)
            return -1;
    }
    return 0;
}

static int64_t
write_run(sqlite3 *db, const struct history_meta *m, const struct rec *r,
          const char *name, struct err *err)
{
    int64_t number, id;

    if (history__exec(db, "BEGIN IMMEDIATE", err) < 0)
        return -1;
    if (check_new(db, name, r, err) < 0 ||
        (number = next_number(db, name, err)) < 0 ||
        insert_run(db, m, r, name, number, err) < 0)
        goto fail;
    id = sqlite3_last_insert_rowid(db);
    for (size_t i = 0; i < r->ng; i++)
        if (insert_group(db, id, &r->g[i], err) < 0 ||
            insert_fits(db, id, &r->g[i], err) < 0)
            goto fail;
    if (history__exec(db, "COMMIT", err) < 0)
        goto fail;
    return number;
fail:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

int64_t
history_record(sqlite3 *db, const struct history_meta *m, const char *run_dir,
               struct err *err)
{
    struct rec r = {.dir = run_dir, .duration = NAN};
    const char *name;
    int64_t n = -1;

    if (run_dir == NULL && m->outcome == NULL) {
        err_set(err, EINVAL, "recording a run: no run folder and no outcome");
        return err_status(err, EXIT_SOFTWARE);
    }
    if (run_dir != NULL && load_files(&r, m->outcome != NULL, err) < 0)
        goto done;
    name = m->name ? m->name : r.name;
    if (name == NULL || *name == '\0') {
        err_set(err, EINVAL, "%s/result.json: the run has no name (give one)",
                run_dir ? run_dir : "");
        err_status(err, EXIT_DATAERR);
        goto done;
    }
    n = write_run(db, m, &r, name, err);
done:
    cJSON_Delete(r.result);
    cJSON_Delete(r.summary);
    for (size_t i = 0; i < r.ng; i++)
        free(r.g[i].fits);
    free(r.g);
    return n;
}
