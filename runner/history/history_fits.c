/*
 * history_fits.c — the slopes of the report's fits against the work done
 * over a name's runs: read back from history_fits, keyed by (group,
 * series, x, stage), and their change points.
 *
 * A key's series is its slope in the runs that have the key and know the
 * slope, oldest first, analysed with E-Divisive means as the memory
 * figures are (changepoint.c), with a minimum effect suited to a slope.
 * A slope has no unit a floor could be set in (bytes per cycle, bytes per
 * byte of traffic, CPU seconds per request, seconds of restart per cycle),
 * and a flat fit's slope is noise about zero whose relative changes are
 * large, so a change point must change the slope's mean by at least
 * HISTORY_SLOPE_MIN_EFFECT of it, and the fit's usual verdict (the most
 * common, the later on a tie) must be growing or shrinking on one side
 * of it at least: a cost that doubled, or a fit that went from flat to
 * growing, is one; a flat fit's wobble, whatever its sign, is not.
 */
#include "history/history_int.h"

#include "report/report.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading ----------------------------------------------------------- */

static void
read_fit(sqlite3_stmt *st, struct history_fit *f)
{
    f->group = sql_col_text(st, 0);
    f->series = sql_col_text(st, 1);
    f->x = sql_col_text(st, 2);
    f->stage = sql_col_text(st, 3);
    f->slope = history__col_double(st, 4);
    f->r2 = history__col_double(st, 5);
    f->verdict = sql_col_text(st, 6);
    f->instances = history__col_i64(st, 7, -1);
    f->points = history__col_i64(st, 8, -1);
}

int
history__load_fits(sqlite3 *db, int64_t id, struct history_run *r,
                   struct err *err)
{
    sqlite3_stmt *st;
    size_t cap = 0;
    int rc;

    if (history__prepare(db,
                         "SELECT group_id, series, x, stage, slope, r2, "
                         "verdict, instances, points FROM history_fits "
                         "WHERE run = ? ORDER BY rowid",
                         &st, err) < 0)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        xgrow(&r->fits, &cap, r->nfits + 1, sizeof(*r->fits));
        read_fit(st, &r->fits[r->nfits++]);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE
               ? 0
               : history__sqlerr(db, err, "history database: fits");
}

void
history__fits_release(struct history_run *r)
{
    for (size_t i = 0; i < r->nfits; i++) {
        struct history_fit *f = &r->fits[i];

        free(f->group);
        free(f->series);
        free(f->x);
        free(f->stage);
        free(f->verdict);
    }
    free(r->fits);
    r->fits = NULL;
    r->nfits = 0;
}

/* ---- keys -------------------------------------------------------------- */

bool
history__same_str(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

bool
history__same_key(const struct history_fit *a, const struct history_fit *b)
{
    return strcmp(a->group, b->group) == 0 &&
           strcmp(a->series, b->series) == 0 && strcmp(a->x, b->x) == 0 &&
           history__same_str(a->stage, b->stage);
}

const struct history_fit *
history__fit_of(const struct history_run *r, const struct history_fit *k)
{
    for (size_t i = 0; i < r->nfits; i++)
        if (history__same_key(&r->fits[i], k))
            return &r->fits[i];
    return NULL;
}

void
history__fit_keys(struct history *h)
{
    size_t cap = 0;

    for (size_t i = 0; i < h->nruns; i++)
        for (size_t f = 0; f < h->runs[i].nfits; f++) {
            const struct history_fit *fit = &h->runs[i].fits[f];
            bool seen = false;

            for (size_t k = 0; k < h->nfkeys && !seen; k++)
                seen = history__same_key(h->fkeys[k].first, fit);
            if (seen)
                continue;
            xgrow(&h->fkeys, &cap, h->nfkeys + 1, sizeof(*h->fkeys));
            h->fkeys[h->nfkeys++].first = fit;
        }
}

size_t
history_nfits(const struct history *h)
{
    return h->nfkeys;
}

size_t
history__fit_last(const struct history *h, size_t k, size_t before)
{
    for (size_t i = before; i-- > 0;) {
        const struct history_fit *f =
            history__fit_of(&h->runs[i], h->fkeys[k].first);

        if (f != NULL && !isnan(f->slope))
            return i;
    }
    return (size_t)-1;
}

/* ---- words ------------------------------------------------------------- */

void
history__fit_name(const struct history_fit *f, struct strbuf *sb)
{
    strbuf_addf(sb, "%s %s against %s in %s", f->group, f->series, f->x,
                f->stage ? f->stage : "the whole run");
}

void
history__fmt_slope(const struct history_fit *f, double v, char *buf,
                   size_t size)
{
    report_fmt_fit_slope(f->series, f->x, v, buf, size);
}

void
history__fpoint_line(const struct history *h, const struct history_fpoint *p,
                     struct strbuf *sb)
{
    const struct history_fit *k = h->fkeys[p->key].first;
    const struct history_run *r = &h->runs[p->run];
    char before[64], after[64], change[32];

    history__fmt_slope(k, p->cp.mean_before, before, sizeof(before));
    history__fmt_slope(k, p->cp.mean_after, after, sizeof(after));
    history__fit_name(k, sb);
    if (isinf(p->cp.rel_change)) {
        strbuf_addf(sb, ": from %s to %s at run %lld", before, after,
                    (long long)r->number);
    } else {
        history__fmt_change(&p->cp, change, sizeof(change));
        strbuf_addf(sb, ": %s at run %lld", change, (long long)r->number);
    }
    if (r->version != NULL)
        strbuf_addf(sb, " (commit %.12s)", r->version);
    strbuf_addf(sb, ", p = %.3f", p->cp.pvalue);
    if (!isinf(p->cp.rel_change))
        strbuf_addf(sb, " (mean %s -> %s)", before, after);
    if (!history__same_str(p->before, p->after))
        strbuf_addf(sb, ", %s -> %s", p->before ? p->before : "-",
                    p->after ? p->after : "-");
}

/* ---- change points ----------------------------------------------------- */

/* The most common verdict of key k over the runs at[lo..hi), the later
 * on a tie; NULL when none is known. The report has a handful of
 * verdicts; one it has not is not counted past the first eight. */
static const char *
usual_verdict(const struct history *h, const struct history_fit *k,
              const size_t *at, size_t lo, size_t hi)
{
    const char *name[8] = {0}, *best = NULL;
    size_t count[8] = {0}, nv = 0, most = 0;

    for (size_t i = lo; i < hi; i++) {
        const struct history_fit *f = history__fit_of(&h->runs[at[i]], k);
        size_t v = 0;

        if (f == NULL || f->verdict == NULL)
            continue;
        while (v < nv && strcmp(name[v], f->verdict) != 0)
            v++;
        if (v == nv && nv == ARRAY_LEN(name))
            continue;
        if (v == nv)
            name[nv++] = f->verdict;
        if (++count[v] >= most) {
            most = count[v];
            best = name[v];
        }
    }
    return best;
}

static bool
moving(const char *verdict)
{
    return verdict != NULL && (strcmp(verdict, "growing") == 0 ||
                               strcmp(verdict, "shrinking") == 0);
}

static void
add_fpoint(struct history *h, size_t key, size_t run,
           const struct history_cp *cp, const char *before, const char *after)
{
    struct history_fpoint *p;

    h->fpoints = xrealloc(h->fpoints, (h->nfpoints + 1) * sizeof(*h->fpoints));
    p = &h->fpoints[h->nfpoints++];
    *p = (struct history_fpoint){key, run, *cp, before, after};
}

static void
analyse_key(struct history *h, size_t key, double *v, size_t *at)
{
    const struct history_fit *k = h->fkeys[key].first;
    struct history_cp_opts o = h->opts;
    struct history_cp *cp;
    size_t n = 0, found = 0;

    for (size_t i = 0; i < h->nruns; i++) {
        const struct history_fit *f = history__fit_of(&h->runs[i], k);

        if (f != NULL && !isnan(f->slope)) {
            v[n] = f->slope;
            at[n++] = i;
        }
    }
    if (o.min_effect < HISTORY_SLOPE_MIN_EFFECT)
        o.min_effect = HISTORY_SLOPE_MIN_EFFECT;
    o.min_abs = 0;
    cp = xcalloc(n + 1, sizeof(*cp));
    history_changepoints(v, n, &o, cp, n, &found);
    for (size_t c = 0; c < found && c < n; c++) {
        size_t lo = c > 0 ? cp[c - 1].index : 0;
        size_t hi = c + 1 < found ? cp[c + 1].index : n;
        const char *before = usual_verdict(h, k, at, lo, cp[c].index);
        const char *after = usual_verdict(h, k, at, cp[c].index, hi);

        if (moving(before) || moving(after))
            add_fpoint(h, key, at[cp[c].index], &cp[c], before, after);
    }
    free(cp);
}

void
history__analyse_fits(struct history *h)
{
    double *v = xcalloc(h->nruns + 1, sizeof(double));
    size_t *at = xcalloc(h->nruns + 1, sizeof(size_t));

    h->nfpoints = 0;
    free(h->fpoints);
    h->fpoints = NULL;
    for (size_t k = 0; k < h->nfkeys; k++)
        analyse_key(h, k, v, at);
    free(v);
    free(at);
}
