/*
 * history_load.c — a name's series read back from the history tables, and
 * the change points of each of its figures.
 *
 * A figure's series is one group's peak, final or growth per round over
 * the runs that have that group and know that figure (a build that failed
 * has no groups; an instance without memory figures gives none), oldest
 * first; its change points are mapped back to the run each starts at.
 * The fits' slopes are read and analysed in history_fits.c.
 */
#include "history/history_int.h"

#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const history__figure_names[HISTORY_NFIGURES] = {"peak", "final",
                                                             "growth"};
const char *const history__figure_keys[HISTORY_NFIGURES] = {
    "peak_bytes", "final_bytes", "growth_bytes_per_round"};

static void
read_run(sqlite3_stmt *st, struct history_run *r)
{
    r->number = sqlite3_column_int64(st, 1);
    r->schedule = sql_col_text(st, 2);
    r->task_id = history__col_i64(st, 3, 0);
    r->version = sql_col_text(st, 4);
    r->run_id = sql_col_text(st, 5);
    r->run_dir = sql_col_text(st, 6);
    r->started = sql_col_text(st, 7);
    r->ended = sql_col_text(st, 8);
    r->duration_s = history__col_double(st, 9);
    r->build_s = history__col_double(st, 10);
    r->outcome = sql_col_text(st, 11);
}

static void
read_group(sqlite3_stmt *st, struct history_group *g)
{
    g->id = sql_col_text(st, 0);
    g->instances = history__col_i64(st, 1, -1);
    for (int f = 0; f < HISTORY_NFIGURES; f++)
        g->fig[f] = history__col_double(st, 2 + f);
    g->verdict = sql_col_text(st, 5);
    g->oom_kills = history__col_i64(st, 6, -1);
    for (int k = 0; k < HISTORY_NOUTCOMES; k++)
        g->outcomes[k] = history__col_i64(st, 7 + k, 0);
}

static int
load_groups(sqlite3 *db, int64_t id, struct history_run *r, struct err *err)
{
    sqlite3_stmt *st;
    size_t cap = 0;
    int rc;

    if (history__prepare(db,
                         "SELECT group_id, instances, peak_bytes, "
                         "final_bytes, growth_bytes_per_round, verdict, "
                         "oom_kills, success, failure, crash, oom, timeout, "
                         "canceled, lost FROM history_groups WHERE run = ? "
                         "ORDER BY rowid",
                         &st, err) < 0)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        xgrow(&r->groups, &cap, r->ngroups + 1, sizeof(*r->groups));
        read_group(st, &r->groups[r->ngroups++]);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE
               ? 0
               : history__sqlerr(db, err, "history database: groups");
}

static int
load_runs(sqlite3 *db, struct history *h, const char *since, struct err *err)
{
    sqlite3_stmt *st;
    size_t cap = 0, icap = 0;
    int64_t *ids = NULL;
    int rc;

    if (history__prepare(db,
                         "SELECT id, number, schedule, task_id, version, "
                         "run_id, run_dir, started, ended, duration_s, "
                         "build_s, outcome FROM history_runs WHERE name = ? "
                         "AND started >= ? ORDER BY number",
                         &st, err) < 0)
        return -1;
    sqlite3_bind_text(st, 1, h->name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, since, -1, SQLITE_TRANSIENT);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        xgrow(&h->runs, &cap, h->nruns + 1, sizeof(*h->runs));
        xgrow(&ids, &icap, h->nruns + 1, sizeof(*ids));
        memset(&h->runs[h->nruns], 0, sizeof(*h->runs));
        ids[h->nruns] = sqlite3_column_int64(st, 0);
        read_run(st, &h->runs[h->nruns++]);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        rc = history__sqlerr(db, err, "history database: runs");
    else
        rc = 0;
    for (size_t i = 0; i < h->nruns && rc == 0; i++)
        if ((rc = load_groups(db, ids[i], &h->runs[i], err)) == 0)
            rc = history__load_fits(db, ids[i], &h->runs[i], err);
    free(ids);
    return rc;
}

static int
known_name(sqlite3 *db, const char *name, struct err *err)
{
    sqlite3_stmt *st;
    int rc;

    if (history__prepare(db, "SELECT 1 FROM history_runs WHERE name = ?", &st,
                         err) < 0)
        return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return 0;
    if (rc != SQLITE_DONE)
        return history__sqlerr(db, err, "history database: runs");
    err_set(err, ENOENT,
            "no runs of \"%s\" in the history (a composition's "
            "metadata.name or a schedule's name)",
            name);
    return err_status(err, EXIT_NOINPUT);
}

struct history *
history_load(sqlite3 *db, const char *name, int64_t since_ns, struct err *err)
{
    struct history *h;
    char since[40] = "";

    if (known_name(db, name, err) < 0)
        return NULL;
    if (since_ns > 0)
        time_rfc3339(since_ns, since, sizeof(since));
    h = xcalloc(1, sizeof(*h));
    h->name = xstrdup(name);
    history_cp_defaults(&h->opts);
    if (load_runs(db, h, since, err) < 0) {
        history_destroy(&h);
        return NULL;
    }
    history__fit_keys(h);
    return h;
}

size_t
history_nruns(const struct history *h)
{
    return h->nruns;
}

/* ---- change points --------------------------------------------------- */

const struct history_group *
history__group_of(const struct history_run *r, const char *id)
{
    for (size_t i = 0; i < r->ngroups; i++)
        if (strcmp(r->groups[i].id, id) == 0)
            return &r->groups[i];
    return NULL;
}

bool
history__seen_before(const struct history *h, size_t i, const char *id)
{
    for (size_t k = 0; k < i; k++)
        if (history__group_of(&h->runs[k], id) != NULL)
            return true;
    return false;
}

static void
add_point(struct history *h, const char *group, int figure, size_t run,
          const struct history_cp *cp)
{
    struct history_point *p;

    h->points = xrealloc(h->points, (h->npoints + 1) * sizeof(*h->points));
    p = &h->points[h->npoints++];
    p->group = xstrdup(group);
    p->figure = figure;
    p->run = run;
    p->cp = *cp;
}

static void
analyse_figure(struct history *h, const char *id, int f, double *v, size_t *at)
{
    struct history_cp_opts o = h->opts;
    struct history_cp *cp;
    size_t n = 0, found = 0;

    for (size_t i = 0; i < h->nruns; i++) {
        const struct history_group *g = history__group_of(&h->runs[i], id);

        if (g != NULL && !isnan(g->fig[f])) {
            v[n] = g->fig[f];
            at[n++] = i;
        }
    }
    if (o.min_abs <= 0)
        o.min_abs = f == HISTORY_GROWTH ? HISTORY_GROWTH_MIN_ABS
                                        : HISTORY_BYTES_MIN_ABS;
    cp = xcalloc(n + 1, sizeof(*cp));
    history_changepoints(v, n, &o, cp, n, &found);
    for (size_t k = 0; k < found && k < n; k++)
        add_point(h, id, f, at[cp[k].index], &cp[k]);
    free(cp);
}

void
history_analyse(struct history *h, const struct history_cp_opts *o)
{
    double *v = xcalloc(h->nruns + 1, sizeof(double));
    size_t *at = xcalloc(h->nruns + 1, sizeof(size_t));

    if (o != NULL)
        h->opts = *o;
    h->analysed = true;
    for (size_t i = 0; i < h->nruns; i++)
        for (size_t g = 0; g < h->runs[i].ngroups; g++) {
            const char *id = h->runs[i].groups[g].id;

            if (history__seen_before(h, i, id))
                continue;
            for (int f = 0; f < HISTORY_NFIGURES; f++)
                analyse_figure(h, id, f, v, at);
        }
    free(v);
    free(at);
    history__analyse_fits(h);
}

void
history_destroy(struct history **hp)
{
    struct history *h = *hp;

    if (h == NULL)
        return;
    for (size_t i = 0; i < h->nruns; i++) {
        struct history_run *r = &h->runs[i];

        for (size_t g = 0; g < r->ngroups; g++) {
            free(r->groups[g].id);
            free(r->groups[g].verdict);
        }
        free(r->groups);
        history__fits_release(r);
        free(r->schedule);
        free(r->version);
        free(r->run_id);
        free(r->run_dir);
        free(r->started);
        free(r->ended);
        free(r->outcome);
    }
    for (size_t i = 0; i < h->npoints; i++)
        free(h->points[i].group);
    free(h->points);
    free(h->fpoints);
    free(h->fkeys);
    free(h->runs);
    free(h->name);
    free(h);
    *hp = NULL;
}
