/*
 * report_fits.c — every series of an instance against the work it did
 * (docs/report.md, "Against the work done"): cgroup usage, heap in use,
 * each process name's RSS, VmSize and CPU, each disk path's allocated
 * bytes, fitted against every counter of work.csv and against rounds,
 * within each stage window of stages.jsonl (the whole run without one).
 *
 * Against a counter, x is the counter's value interpolated at each
 * sample's wall-clock time (work.csv has unix milliseconds, the samples
 * their RFC 3339 time), samples before the counter's first row or after
 * its last are left out, and a counter that did not move within the
 * window (an error count of 0) gives no fit; against rounds, y is the
 * series' last sample at
 * or before each round's end barrier, within the round. A stage takes the
 * samples whose t_ms lies in [start_ms, end_ms). The line is the report's
 * own (report__fit_line: Theil-Sen, R² of least squares) and the verdict
 * its trend, with an absolute floor in the series' unit (bytes, or CPU
 * seconds). A group's figure is the median over its instances of each
 * instance's fit.
 */
#include "report/report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Points kept of the first instance's for its chart (evenly thinned). */
#define CHART_POINTS 160

struct window {
    const char *name;
    int64_t start, end;
};

/* The stages that have a start (not the actions between them); none:
 * the whole run. */
static size_t
windows(const struct report *r, struct window *w)
{
    size_t n = 0;

    for (size_t i = 0; i < r->nstages; i++) {
        const struct report_stage *s = &r->stages[i];

        if (s->action == NULL && s->start_ms >= 0)
            w[n++] = (struct window){s->name, s->start_ms,
                                     s->end_ms >= 0 ? s->end_ms : INT64_MAX};
    }
    if (n == 0)
        w[n++] = (struct window){NULL, INT64_MIN, INT64_MAX};
    return n;
}

/* ---- series the report already has ------------------------------------ */

static struct report_points *
series_new(struct report_work *w, const char *name)
{
    struct report_points *p;

    w->series = xrealloc(w->series, (w->nseries + 1) * sizeof(*w->series));
    p = &w->series[w->nseries++];
    memset(p, 0, sizeof(*p));
    p->name = xstrdup(name);
    return p;
}

/* cgroup:usage from memory.csv and heap:inuse from the post-trim
 * snapshots (and round readings) at their times, when the instance has
 * counters to fit them against or rounds. */
static void
own_series(const struct report *r, struct report_inst *in)
{
    int64_t start = r->start_ns > 0 ? r->start_ns / 1000000 : -1;
    struct report_points *p;

    if (in->nsamples > 0) {
        p = series_new(&in->work, "cgroup:usage");
        for (size_t i = 0; i < in->nsamples; i++)
            if (in->samples[i].usage >= 0)
                report__points_add(
                    p, start >= 0 ? start + in->samples[i].t_ms : -1,
                    in->samples[i].t_ms, (double)in->samples[i].usage);
    }
    p = NULL;
    for (size_t i = 0; i < in->nsnaps && in->work.ncounters > 0; i++) {
        const struct report_snap *s = &in->snaps[i];

        if (s->kind != SNAP_POST || s->inuse < 0 || s->t_ms < 0 ||
            s->time_ns <= 0)
            continue;
        if (p == NULL)
            p = series_new(&in->work, "heap:inuse");
        report__points_add(p, s->time_ns / 1000000, s->t_ms, (double)s->inuse);
    }
}

/* ---- x at each sample ------------------------------------------------- */

/* Counter c interpolated at wall; false outside its rows. */
static bool
interp(const struct report_points *c, int64_t wall, double *x)
{
    size_t lo = 0, hi = c->n;

    if (wall < 0 || c->n == 0 || wall < c->wall_ms[0] ||
        wall > c->wall_ms[c->n - 1])
        return false;
    while (lo < hi) { /* the first row at or after wall */
        size_t mid = lo + (hi - lo) / 2;

        if (c->wall_ms[mid] < wall)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (c->wall_ms[lo] == wall || lo == 0) {
        *x = c->v[lo];
        return true;
    }
    *x = c->v[lo - 1] + (c->v[lo] - c->v[lo - 1]) *
                            (double)(wall - c->wall_ms[lo - 1]) /
                            (double)(c->wall_ms[lo] - c->wall_ms[lo - 1]);
    return true;
}

double
report__total_at(const struct report_points *c, int64_t wall)
{
    double x;

    if (c->n == 0 || wall < 0)
        return NAN;
    if (wall < c->wall_ms[0])
        return 0;
    if (wall > c->wall_ms[c->n - 1])
        return c->v[c->n - 1];
    return interp(c, wall, &x) ? x : NAN;
}

/* The series' last sample at or before the round's end, within it. */
static bool
at_round(const struct report_points *s, const struct report_span *sp, double *y)
{
    size_t lo = 0, hi = s->n;

    if (sp->end_ms < 0)
        return false;
    while (lo < hi) { /* the first past the end */
        size_t mid = lo + (hi - lo) / 2;

        if (s->t_ms[mid] <= sp->end_ms)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || (sp->start_ms >= 0 && s->t_ms[lo - 1] < sp->start_ms))
        return false;
    *y = s->v[lo - 1];
    return true;
}

struct xy {
    double *x, *y;
    size_t n, cap;
};

static void
xy_add(struct xy *p, double x, double y)
{
    xgrow(&p->x, &p->cap, p->n + 1, sizeof(*p->x));
    p->y = xrealloc(p->y, p->cap * sizeof(*p->y));
    p->x[p->n] = x;
    p->y[p->n++] = y;
}

/* The points of series s against counter c (NULL: rounds) in window w. */
static void
gather(const struct report *r, const struct report_points *s,
       const struct report_points *c, const struct window *w, struct xy *out)
{
    out->n = 0;
    if (c == NULL) {
        for (size_t i = 0; i < r->nspans; i++) {
            const struct report_span *sp = &r->spans[i];
            double y;

            if (sp->end_ms >= w->start && sp->end_ms < w->end &&
                at_round(s, sp, &y))
                xy_add(out, sp->round, y);
        }
        return;
    }
    for (size_t i = 0; i < s->n; i++) {
        double x;

        if (s->t_ms[i] >= w->start && s->t_ms[i] < w->end &&
            interp(c, s->wall_ms[i], &x))
            xy_add(out, x, s->v[i]);
    }
}

/* ---- fits ------------------------------------------------------------ */

const struct report_points *
report__points_find(const struct report_points *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

static double
floor_of(bool seconds)
{
    return seconds ? REPORT_MIN_RISE_SECONDS : (double)REPORT_MIN_RISE_BYTES;
}

/* The median of the double at offset off of each fit. */
static double
median_of(const struct report_fit *f, size_t n, size_t off, double *tmp)
{
    for (size_t i = 0; i < n; i++)
        memcpy(&tmp[i], (const char *)&f[i] + off, sizeof(*tmp));
    return report__median(tmp, n);
}

#define MEDIAN(f, n, field, tmp)                                               \
    median_of(f, n, offsetof(struct report_fit, field), tmp)

/* The group's line: each figure the median of its instances'. */
static void
group_fit(const struct report_fit *f, size_t n, double min_rise,
          struct report_fit *out)
{
    double *tmp = xcalloc(n, sizeof(*tmp));

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < n; i++)
        tmp[i] = (double)f[i].n;
    out->n = (size_t)report__median(tmp, n);
    out->slope = MEDIAN(f, n, slope, tmp);
    out->intercept = MEDIAN(f, n, intercept, tmp);
    out->r2 = MEDIAN(f, n, r2, tmp);
    out->mean = MEDIAN(f, n, mean, tmp);
    out->span = MEDIAN(f, n, span, tmp);
    out->ls_slope = MEDIAN(f, n, ls_slope, tmp);
    out->median = MEDIAN(f, n, median, tmp);
    out->held = MEDIAN(f, n, held, tmp);
    out->level = MEDIAN(f, n, level, tmp);
    out->trend = report__trend_floor(out, min_rise);
    free(tmp);
}

/* Keep at most CHART_POINTS of (px, py), evenly, for the chart. */
static void
keep_points(struct report_wfit *w, const double *px, const double *py, size_t n)
{
    size_t every = n / CHART_POINTS + 1;

    w->px = xcalloc(n / every + 1, sizeof(*w->px));
    w->py = xcalloc(n / every + 1, sizeof(*w->py));
    for (size_t i = 0; i < n; i += every) {
        w->px[w->npts] = px[i];
        w->py[w->npts++] = py[i];
    }
}

struct report_wfit *
report__wfit_add(struct report_group *g, const char *series, const char *x,
                 const char *stage, bool seconds, double min_rise,
                 const struct report_fit *fits, size_t n,
                 const char *first_inst, const double *px, const double *py,
                 size_t npts)
{
    struct report_wfit *w;

    if (g->nwfits >= REPORT_MAX_WFITS)
        return NULL;
    xgrow(&g->wfits, &g->capwfits, g->nwfits + 1, sizeof(*g->wfits));
    w = &g->wfits[g->nwfits++];
    memset(w, 0, sizeof(*w));
    w->series = xstrdup(series);
    w->x = xstrdup(x);
    w->stage = stage ? xstrdup(stage) : NULL;
    w->seconds = seconds;
    w->restart = strncmp(series, "restart:", 8) == 0;
    w->ninst = n;
    w->first = fits[0];
    w->first.trend = report__trend_floor(&w->first, min_rise);
    w->first_inst = first_inst;
    keep_points(w, px, py, npts);
    group_fit(fits, n, min_rise, &w->fit);
    return w;
}

struct key {
    const char *series, *x; /* x NULL: rounds */
    bool seconds;
};

/* One fit of the group: key in window w over its instances. */
static void
fit_one(struct report *r, struct report_group *g, const struct key *k,
        const struct window *w)
{
    struct report_fit *fits = xcalloc(g->ninst, sizeof(*fits));
    struct xy p = {0}, first = {0};
    const char *first_inst = NULL;
    size_t n = 0;

    for (size_t i = 0; i < g->ninst; i++) {
        const struct report_inst *in = &r->insts[g->inst[i]];
        const struct report_points *s =
            report__points_find(in->work.series, in->work.nseries, k->series);
        const struct report_points *c =
            k->x ? report__points_find(in->work.counters, in->work.ncounters,
                                       k->x)
                 : NULL;

        if (s == NULL || (k->x != NULL && c == NULL))
            continue;
        gather(r, s, c, w, &p);
        if (p.n < 2)
            continue;
        report__fit_line(p.x, p.y, p.n, &fits[n]);
        if (fits[n].span <= 0) /* a counter that never moved here */
            continue;
        if (n++ > 0)
            continue;
        first = p; /* the first instance's points, for the chart */
        first_inst = in->label;
        p = (struct xy){0};
    }
    if (n > 0)
        report__wfit_add(g, k->series, k->x ? k->x : "rounds", w->name,
                         k->seconds, floor_of(k->seconds), fits, n, first_inst,
                         first.x, first.y, first.n);
    free(first.x);
    free(first.y);
    free(p.x);
    free(p.y);
    free(fits);
}

/* Every (series, x) some instance of g has, in the order first seen. */
static size_t
group_keys(const struct report *r, const struct report_group *g,
           struct key **keys)
{
    size_t n = 0, cap = 0;

    *keys = NULL;
    for (size_t i = 0; i < g->ninst; i++) {
        const struct report_work *wk = &r->insts[g->inst[i]].work;

        for (size_t s = 0; s < wk->nseries; s++) {
            const struct report_points *sp = &wk->series[s];
            bool heap = strcmp(sp->name, "heap:inuse") == 0;

            /* x = -1: rounds; heap in use per round is the verdicts' */
            for (long x = heap || r->nspans == 0 ? 0 : -1;
                 x < (long)wk->ncounters; x++) {
                struct key k = {sp->name, x < 0 ? NULL : wk->counters[x].name,
                                sp->seconds};
                bool seen = false;

                for (size_t j = 0; j < n && !seen; j++)
                    seen = strcmp((*keys)[j].series, k.series) == 0 &&
                           ((*keys)[j].x == k.x ||
                            ((*keys)[j].x && k.x &&
                             strcmp((*keys)[j].x, k.x) == 0));
                if (seen)
                    continue;
                xgrow(keys, &cap, n + 1, sizeof(**keys));
                (*keys)[n++] = k;
            }
        }
    }
    return n;
}

static bool
has_work(const struct report *r, const struct report_group *g)
{
    for (size_t i = 0; i < g->ninst; i++) {
        const struct report_work *w = &r->insts[g->inst[i]].work;

        if (w->ncounters > 0 || w->nseries > 1)
            return true;
    }
    return false;
}

static void
group_fits(struct report *r, struct report_group *g)
{
    struct window *w = xcalloc(r->nstages + 1, sizeof(*w));
    size_t nw = windows(r, w);
    struct key *keys = NULL;
    size_t nk = group_keys(r, g, &keys);
    bool cut = false;

    for (size_t k = 0; k < nk; k++)
        for (size_t i = 0; i < nw; i++) {
            if (g->nwfits >= REPORT_MAX_WFITS) {
                cut = true;
                break;
            }
            fit_one(r, g, &keys[k], &w[i]);
        }
    if (cut)
        report__note(r,
                     "%s: more than %d fits against the work done; "
                     "the rest are left out",
                     g->id, REPORT_MAX_WFITS);
    free(keys);
    free(w);
}

/* Fits only where there is something beyond cgroup usage to fit or
 * something to fit against: a run without work.csv, processes.csv or
 * disk.csv reads as before. Then restart time (report_restarts.c). */
void
report__fits(struct report *r)
{
    for (size_t i = 0; i < r->ninsts; i++) {
        struct report_inst *in = &r->insts[i];

        if (in->work.ncounters > 0 || in->work.nseries > 0)
            own_series(r, in);
    }
    for (size_t g = 0; g < r->ngroups; g++)
        if (has_work(r, &r->groups[g]))
            group_fits(r, &r->groups[g]);
    report__restart_fits(r);
}

void
report__wfits_release(struct report_group *g)
{
    for (size_t i = 0; i < g->nwfits; i++) {
        free(g->wfits[i].series);
        free(g->wfits[i].x);
        free(g->wfits[i].stage);
        free(g->wfits[i].px);
        free(g->wfits[i].py);
    }
    free(g->wfits);
    g->wfits = NULL;
    g->nwfits = g->capwfits = 0;
}

/* ---- words and JSON ---------------------------------------------------- */

const char *
report__wfit_verdict(const struct report_wfit *w)
{
    if (w->fit.trend != TREND_UNKNOWN)
        return report__trend_name(w->fit.trend);
    return strcmp(w->x, "rounds") == 0 ? "not enough rounds"
                                       : "not enough points";
}

/* A unit of x: "cycles" -> "cycle", "load.cycles,stage=2" -> "cycle";
 * plural: "cycles" as it is. */
static void
unit_of(const char *x, bool plural, char *buf, size_t size)
{
    const char *dot, *s = x;
    size_t n = strcspn(s, ",");

    dot = memrchr(s, '.', n);
    if (dot != NULL && (size_t)(dot + 1 - s) < n) {
        n -= (size_t)(dot + 1 - s);
        s = dot + 1;
    }
    if (!plural && n > 3 && s[n - 1] == 's' && s[n - 2] != 's')
        n--;
    snprintf(buf, size, "%.*s", (int)(n < 60 ? n : 60), s);
}

/* CPU seconds a person reads: "3.1 ms", "850.0 us", "1.25 s", "2.4 ns",
 * "0.0031 ns" (per byte of traffic). */
static void
fmt_seconds(double s, char *buf, size_t size)
{
    if (s == 0)
        snprintf(buf, size, "0 s");
    else if (s < 1e-9)
        snprintf(buf, size, "%.2g ns", s * 1e9);
    else if (s < 1e-6)
        snprintf(buf, size, "%.1f ns", s * 1e9);
    else if (s < 1e-3)
        snprintf(buf, size, "%.1f us", s * 1e6);
    else if (s < 1)
        snprintf(buf, size, "%.1f ms", s * 1e3);
    else
        snprintf(buf, size, "%.2f s", s);
}

/* Restart time per unit: per 1000 (or a million...) units when per one
 * it would read in microseconds ("+20.0 ms per 1000 cycles"). */
static void
fmt_restart_per(const struct report_wfit *w, double slope, char *buf,
                size_t size)
{
    double a = fabs(slope), per = 1;
    char v[32], unit[64];

    while (a > 0 && a * per < 1e-3 && per < 1e12)
        per *= 1000;
    fmt_seconds(a * per, v, sizeof(v));
    unit_of(w->x, per > 1, unit, sizeof(unit));
    if (per > 1)
        snprintf(buf, size, "%s%s per %.0f %s", slope < 0 ? "-" : "+", v, per,
                 unit);
    else
        snprintf(buf, size, "%s%s per %s", slope < 0 ? "-" : "+", v, unit);
}

void
report__fmt_per(const struct report_wfit *w, double slope, char *buf,
                size_t size)
{
    char v[32], unit[64];
    const char *colon;
    double a = fabs(slope);
    bool cpu;

    if (w->restart) {
        fmt_restart_per(w, slope, buf, size);
        return;
    }
    unit_of(w->x, false, unit, sizeof(unit));
    if (w->seconds)
        fmt_seconds(a, v, sizeof(v));
    else if (a > 0 && a < 10) /* bytes per byte of traffic: 0.25 B */
        snprintf(v, sizeof(v), "%.2g B", a);
    else
        report__fmt_bytes(report__i64(llround(a)), v, sizeof(v));
    /* seconds of CPU, unless the series is itself a time (restart:seconds) */
    cpu = w->seconds &&
          !(w->series != NULL && (colon = strrchr(w->series, ':')) != NULL &&
            strcmp(colon, ":seconds") == 0);
    snprintf(buf, size, "%s%s%s per %s", slope < 0 ? "-" : "+", v,
             cpu ? " CPU" : "", unit);
}

void
report_fmt_fit_slope(const char *series, const char *x, double slope, char *buf,
                     size_t size)
{
    const char *colon = strrchr(series, ':');
    struct report_wfit w = {.series = (char *)series, .x = (char *)x};

    if (isnan(slope)) {
        snprintf(buf, size, "-");
        return;
    }
    w.seconds = colon != NULL &&
                (strcmp(colon, ":cpu") == 0 || strcmp(colon, ":seconds") == 0);
    report__fmt_per(&w, slope, buf, size);
}

cJSON *
report__wfits_json(const struct report_group *g)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t i = 0; i < g->nwfits; i++) {
        const struct report_wfit *w = &g->wfits[i];
        cJSON *o = cJSON_CreateObject();
        double scale = w->seconds ? 1e9 : 1e3;

        cJSON_AddStringToObject(o, "series", w->series);
        cJSON_AddStringToObject(o, "x", w->x);
        if (w->stage != NULL)
            cJSON_AddStringToObject(o, "stage", w->stage);
        else
            cJSON_AddNullToObject(o, "stage");
        cJSON_AddNumberToObject(o, "instances", (double)w->ninst);
        cJSON_AddNumberToObject(o, "slope",
                                round(w->fit.slope * scale) / scale);
        cJSON_AddNumberToObject(o, "r2", round(w->fit.r2 * 10000) / 10000);
        cJSON_AddNumberToObject(o, "points", (double)w->fit.n);
        cJSON_AddStringToObject(o, "verdict", report__wfit_verdict(w));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}
