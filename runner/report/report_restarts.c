/*
 * report_restarts.c — long runs in stages (docs/report.md, "Stages and
 * restarts"): result.json's top-level "stages" (the stages that ran and
 * the actions between them) and each instance's "restarts" (when the
 * runner stopped it, when its next process was ready and how that was
 * known); each counter of work.csv made the running total across the
 * instance's processes, since a restarted process counts from 0 again
 * and appends to the same file; and restart time fitted, per group,
 * against cycles so far (each counter's total at the stop) and against
 * the restart's number, as the series restart:seconds among the fits
 * against the work done (report_fits.c).
 *
 * result.json is the runner's: a member of the wrong type is an error
 * naming its key (status 65), as everywhere in that file. A restart
 * whose stop has no time, or whose seconds are negative, can be neither
 * placed nor counted: it is left out with a note.
 */
#include "report/report_int.h"

#include "ty_json.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- result.json ------------------------------------------------------- */

static void
copy_word(char *buf, size_t size, const char *s)
{
    char clean[REPORT_NAME_MAX];
    bool cut;

    buf[0] = '\0';
    if (s == NULL)
        return;
    report__clean_name(s, clean, &cut);
    snprintf(buf, size, "%.*s", (int)size - 1, clean);
}

static char *
dup_clean(const char *s)
{
    char clean[REPORT_NAME_MAX];
    bool cut;

    if (s == NULL)
        return NULL;
    report__clean_name(s, clean, &cut);
    return xstrdup(clean);
}

/* A number member as it is: NAN when absent or null. */
static double
jreal(struct report_jctx *c, const cJSON *o, const char *where, const char *key)
{
    const cJSON *v = report__jitem(c, o, where, key, cJSON_Number);

    return v ? v->valuedouble : NAN;
}

static int
not_object(struct report_jctx *c, const char *where, const char *what)
{
    if (!c->failed) {
        err_set(c->err, EINVAL, "%s: %s: expected %s", c->path, where, what);
        err_status(c->err, EXIT_DATAERR);
    }
    c->failed = true;
    return -1;
}

/* Restart number k (from 1) of in, read into x; 1 when it is left out
 * (noted), -1 on a malformed member. */
static int
restart_read(struct report *r, struct report_jctx *c, struct report_inst *in,
             const cJSON *e, const char *w, int k, struct report_restart *x)
{
    memset(x, 0, sizeof(*x));
    if (!cJSON_IsObject(e))
        return not_object(c, w, "an object");
    x->number = k;
    x->action_index = report__jnum(c, e, w, "action_index");
    x->stop_ms = report__jnum(c, e, w, "stop_ms");
    x->stop_unix = report__jnum(c, e, w, "stop_unix_ms");
    x->exit_ms = report__jnum(c, e, w, "exit_ms");
    x->start_ms = report__jnum(c, e, w, "start_ms");
    x->ready_ms = report__jnum(c, e, w, "ready_ms");
    x->seconds = jreal(c, e, w, "seconds");
    x->down_seconds = jreal(c, e, w, "down_seconds");
    copy_word(x->ready_by, sizeof(x->ready_by),
              report__jstr(c, e, w, "ready_by"));
    x->killed = report__jbool(c, e, w, "killed");
    x->stage = dup_clean(report__jstr(c, e, w, "stage"));
    if (c->failed)
        return -1;
    if (x->stop_ms < 0 || x->stop_unix < 0) {
        report__note(r,
                     "%s: restart %d in result.json has no stop_ms or "
                     "stop_unix_ms: left out",
                     in->label, k);
        return 1;
    }
    if (x->seconds < 0 || x->down_seconds < 0) {
        report__note(r,
                     "%s: restart %d in result.json has negative seconds: "
                     "left out",
                     in->label, k);
        return 1;
    }
    /* the new process's start on the unix clock, through the stop's */
    x->start_unix = x->start_ms >= x->stop_ms
                        ? x->stop_unix + (x->start_ms - x->stop_ms)
                        : x->stop_unix;
    return 0;
}

/* In stop order (the runner writes them so): insertion sort. */
static void
restarts_sort(struct report_inst *in)
{
    for (size_t i = 1; i < in->nrestarts; i++)
        for (size_t j = i;
             j > 0 && in->restarts[j - 1].stop_unix > in->restarts[j].stop_unix;
             j--) {
            struct report_restart t = in->restarts[j];

            in->restarts[j] = in->restarts[j - 1];
            in->restarts[j - 1] = t;
        }
}

int
report__restarts_load(struct report *r, struct report_jctx *c,
                      struct report_inst *in, const cJSON *o, const char *where)
{
    const cJSON *arr = report__jitem(c, o, where, "restarts", cJSON_Array);
    const cJSON *e;
    size_t cap = 0;
    int k = 0;

    in->ready_ms = report__jnum(c, o, where, "ready_ms");
    copy_word(in->ready_by, sizeof(in->ready_by),
              report__jstr(c, o, where, "ready_by"));
    cJSON_ArrayForEach (e, arr) {
        char w[96];
        struct report_restart x;
        int rc;

        snprintf(w, sizeof(w), "%s.restarts[%d]", where, k++);
        if (in->nrestarts == REPORT_MAX_RESTARTS) {
            report__note(r, "%s: more than %d restarts: the rest are left out",
                         in->label, REPORT_MAX_RESTARTS);
            break;
        }
        rc = restart_read(r, c, in, e, w, k, &x);
        if (rc != 0) {
            free(x.stage);
            if (rc < 0)
                return -1;
            continue;
        }
        xgrow(&in->restarts, &cap, in->nrestarts + 1, sizeof(*in->restarts));
        in->restarts[in->nrestarts++] = x;
    }
    restarts_sort(in);
    return c->failed ? -1 : 0;
}

/* One entry of result.json's "stages"; the counts bound them. */
static int
stage_entry(struct report *r, struct report_jctx *c, const cJSON *e,
            const char *w, size_t *counts)
{
    const char *name, *action, *group, *by;
    int64_t start, end;
    struct report_stage *s;

    if (!cJSON_IsObject(e))
        return not_object(c, w, "an object");
    name = report__jstr(c, e, w, "stage");
    action = report__jstr(c, e, w, "action");
    group = report__jstr(c, e, w, "group");
    by = report__jstr(c, e, w, "ended_by");
    start = report__jnum(c, e, w, "start_ms");
    end = report__jnum(c, e, w, "end_ms");
    if (c->failed)
        return -1;
    if ((name == NULL) == (action == NULL) || (action && group == NULL))
        return not_object(c, w,
                          "a stage (\"stage\") or an action (\"action\" "
                          "and \"group\")");
    if (counts[action != NULL]++ >= REPORT_MAX_STAGES)
        return 0;
    xgrow(&r->stages, &r->capstages, r->nstages + 1, sizeof(*r->stages));
    s = &r->stages[r->nstages++];
    memset(s, 0, sizeof(*s));
    s->name = dup_clean(name);
    s->action = dup_clean(action);
    s->group = dup_clean(group);
    s->start_ms = start;
    s->end_ms = end;
    copy_word(s->ended_by, sizeof(s->ended_by), by);
    return 0;
}

int
report__result_stages(struct report *r, struct report_jctx *c, const cJSON *j)
{
    const cJSON *arr = report__jitem(c, j, "", "stages", cJSON_Array);
    const cJSON *e;
    size_t counts[2] = {0, 0}, k = 0;

    if (arr == NULL)
        return c->failed ? -1 : 0;
    r->stages_result = true;
    cJSON_ArrayForEach (e, arr) {
        char w[48];

        snprintf(w, sizeof(w), "stages[%zu]", k++);
        if (stage_entry(r, c, e, w, counts) < 0)
            return -1;
    }
    if (counts[0] > REPORT_MAX_STAGES || counts[1] > REPORT_MAX_STAGES)
        report__note(r,
                     "result.json: more than %d stages or actions: only the "
                     "first %d of each are shown and fitted",
                     REPORT_MAX_STAGES, REPORT_MAX_STAGES);
    return 0;
}

void
report__restarts_release(struct report_inst *in)
{
    for (size_t i = 0; i < in->nrestarts; i++)
        free(in->restarts[i].stage);
    free(in->restarts);
    in->restarts = NULL;
    in->nrestarts = 0;
}

void
report__stages_release(struct report *r)
{
    for (size_t i = 0; i < r->nstages; i++) {
        free(r->stages[i].name);
        free(r->stages[i].action);
        free(r->stages[i].group);
    }
    free(r->stages);
    r->stages = NULL;
    r->nstages = r->capstages = 0;
}

/* ---- counters across restarts ------------------------------------------ */

/* The first drop of a counter not at a restart result.json lists. */
struct drops {
    int n;
    const char *name;
    double from, to;
    int64_t wall;
};

/* The row of p where restart k shows: the first after its stop (up to
 * the next restart's stop) whose value is below the one before; without
 * one, the first at or after the new process's start (the old one may
 * write a last row as it stops); SIZE_MAX when no row is. */
static size_t
boundary(const struct report_points *p, const struct report_inst *in, size_t k)
{
    const struct report_restart *x = &in->restarts[k];
    int64_t to =
        k + 1 < in->nrestarts ? in->restarts[k + 1].stop_unix : INT64_MAX;
    size_t start = SIZE_MAX;

    for (size_t i = 1; i < p->n && p->wall_ms[i] <= to; i++) {
        if (p->wall_ms[i] <= x->stop_unix)
            continue;
        if (p->v[i] < p->v[i - 1])
            return i;
        if (start == SIZE_MAX && p->wall_ms[i] >= x->start_unix)
            start = i;
    }
    return start;
}

static void
counter_total(const struct report_inst *in, struct report_points *p,
              struct drops *d)
{
    size_t *at = xcalloc(in->nrestarts + 1, sizeof(*at));
    size_t k = 0;
    double offset = 0, prev = 0;

    for (size_t j = 0; j < in->nrestarts; j++)
        at[j] = boundary(p, in, j);
    for (size_t i = 0; i < p->n; i++) {
        double raw = p->v[i];
        bool listed;

        while (k < in->nrestarts && (at[k] == SIZE_MAX || at[k] < i))
            k++;
        listed = k < in->nrestarts && at[k] == i;
        if (i > 0 && (listed || raw < prev)) {
            if (!listed && d->n++ == 0)
                *d = (struct drops){1, p->name, prev, raw, p->wall_ms[i]};
            offset += prev;
        }
        prev = raw;
        p->v[i] = raw + offset;
    }
    free(at);
}

void
report__counter_totals(struct report *r, struct report_inst *in)
{
    struct drops d = {0, NULL, 0, 0, 0};
    char at[48], more[48] = "";

    for (size_t i = 0; i < in->work.ncounters; i++)
        counter_total(in, &in->work.counters[i], &d);
    if (d.n == 0)
        return;
    if (r->start_ns > 0)
        report__fmt_ms(d.wall - r->start_ns / 1000000, at, sizeof(at));
    else
        snprintf(at, sizeof(at), "unix ms %lld", (long long)d.wall);
    if (d.n > 1)
        snprintf(more, sizeof(more), " (and %d more such drops)", d.n - 1);
    report__note(r,
                 "%s/work.csv: %s went down from %.0f to %.0f at %s with no "
                 "restart listed in result.json there: taken as a restart, "
                 "counted on from %.0f%s",
                 in->label, d.name, d.from, d.to, at, d.from, more);
}

/* ---- restart time against the work done -------------------------------- */

/* in's timed restarts against counter (NULL: their number) into x, y. */
static size_t
restart_points(const struct report_inst *in, const char *counter, double *x,
               double *y)
{
    const struct report_points *c =
        counter ? report__points_find(in->work.counters, in->work.ncounters,
                                      counter)
                : NULL;
    size_t n = 0;

    if (counter != NULL && c == NULL)
        return 0;
    for (size_t k = 0; k < in->nrestarts; k++) {
        const struct report_restart *rs = &in->restarts[k];
        double v = c ? report__total_at(c, rs->stop_unix) : rs->number;

        if (isnan(rs->seconds) || isnan(v))
            continue;
        x[n] = v;
        y[n++] = rs->seconds;
    }
    return n;
}

/* Restart time of g's instances against counter (NULL: restarts). */
static void
restart_fit(const struct report *r, struct report_group *g, const char *counter,
            size_t most)
{
    struct report_fit *fits = xcalloc(g->ninst, sizeof(*fits));
    double *x = xcalloc(most, sizeof(*x)), *y = xcalloc(most, sizeof(*y));
    double *fx = xcalloc(most, sizeof(*fx)), *fy = xcalloc(most, sizeof(*fy));
    const char *first = NULL;
    size_t n = 0, fn = 0;

    for (size_t i = 0; i < g->ninst; i++) {
        const struct report_inst *in = &r->insts[g->inst[i]];
        size_t m = restart_points(in, counter, x, y);

        if (m < 2 || report__fit_line(x, y, m, &fits[n]) < 0 ||
            fits[n].span <= 0)
            continue;
        if (n++ == 0) {
            memcpy(fx, x, m * sizeof(*x));
            memcpy(fy, y, m * sizeof(*y));
            fn = m;
            first = in->label;
        }
    }
    if (n > 0)
        report__wfit_add(g, "restart:seconds", counter ? counter : "restarts",
                         NULL, true, REPORT_MIN_RISE_RESTART_S, fits, n, first,
                         fx, fy, fn);
    free(fits);
    free(x);
    free(y);
    free(fx);
    free(fy);
}

/* The counters of g's instances that restarted, first seen first. */
static size_t
restart_counters(const struct report *r, const struct report_group *g,
                 const char ***names, size_t *most)
{
    size_t n = 0, cap = 0;

    *names = NULL;
    *most = 0;
    for (size_t i = 0; i < g->ninst; i++) {
        const struct report_inst *in = &r->insts[g->inst[i]];

        *most = in->nrestarts > *most ? in->nrestarts : *most;
        for (size_t c = 0; c < in->work.ncounters && in->nrestarts > 0; c++) {
            const char *name = in->work.counters[c].name;
            bool seen = false;

            for (size_t j = 0; j < n && !seen; j++)
                seen = strcmp((*names)[j], name) == 0;
            if (seen)
                continue;
            xgrow(names, &cap, n + 1, sizeof(**names));
            (*names)[n++] = name;
        }
    }
    return n;
}

void
report__restart_fits(struct report *r)
{
    for (size_t gi = 0; gi < r->ngroups; gi++) {
        struct report_group *g = &r->groups[gi];
        const char **names;
        size_t most, n = restart_counters(r, g, &names, &most);

        for (size_t k = 0; k < n && most >= 2; k++)
            restart_fit(r, g, names[k], most);
        if (most >= 2)
            restart_fit(r, g, NULL, most);
        free(names);
    }
}

/* ---- figures and words ----------------------------------------------- */

void
report__restart_stats(const struct report *r, const struct report_group *g,
                      struct report_rstats *st)
{
    double *tmp;

    memset(st, 0, sizeof(*st));
    st->median = st->max = NAN;
    for (size_t i = 0; i < g->ninst; i++)
        st->count += r->insts[g->inst[i]].nrestarts;
    st->secs = xcalloc(st->count + 1, sizeof(*st->secs));
    for (size_t i = 0; i < g->ninst; i++) {
        const struct report_inst *in = &r->insts[g->inst[i]];

        for (size_t k = 0; k < in->nrestarts; k++) {
            const struct report_restart *x = &in->restarts[k];

            st->killed += x->killed;
            if (isnan(x->seconds))
                continue;
            st->secs[st->timed++] = x->seconds;
            st->max =
                isnan(st->max) || x->seconds > st->max ? x->seconds : st->max;
        }
    }
    if (st->timed == 0)
        return;
    tmp = xcalloc(st->timed, sizeof(*tmp));
    memcpy(tmp, st->secs, st->timed * sizeof(*tmp));
    st->median = report__median(tmp, st->timed);
    free(tmp);
}

const struct report_wfit *
report__restart_fit(const struct report_group *g)
{
    const struct report_wfit *pick[4] = {NULL, NULL, NULL, NULL};

    for (size_t i = 0; i < g->nwfits; i++) {
        const struct report_wfit *w = &g->wfits[i];
        bool counter = strcmp(w->x, "restarts") != 0;
        bool growing = w->fit.trend == TREND_GROWING;

        if (!w->restart)
            continue;
        if (growing && counter && pick[0] == NULL)
            pick[0] = w;
        if (growing && pick[1] == NULL)
            pick[1] = w;
        if (counter && pick[2] == NULL)
            pick[2] = w;
        if (pick[3] == NULL)
            pick[3] = w;
    }
    for (size_t k = 0; k < 4; k++)
        if (pick[k] != NULL)
            return pick[k];
    return NULL;
}

static void
fmt_s(double s, char *buf, size_t size)
{
    report__fmt_ms(report__i64(round(s * 1000)), buf, size);
}

void
report__restart_line(const struct report *r, const struct report_group *g,
                     char *buf, size_t size)
{
    struct report_rstats st;
    const struct report_wfit *w = report__restart_fit(g);
    char med[32], max[32], per[160];
    size_t n;

    report__restart_stats(r, g, &st);
    fmt_s(st.median, med, sizeof(med));
    fmt_s(st.max, max, sizeof(max));
    n = (size_t)snprintf(buf, size, "%zu restart%s", st.count,
                         st.count == 1 ? "" : "s");
    if (st.timed == 1 && n < size)
        n += (size_t)snprintf(buf + n, size - n, ", %s", med);
    else if (st.timed > 1 && n < size)
        n += (size_t)snprintf(buf + n, size - n, ", %s median (max %s)", med,
                              max);
    if (st.count > st.timed && n < size)
        n += (size_t)snprintf(buf + n, size - n, ", %zu never ready",
                              st.count - st.timed);
    if (st.killed > 0 && n < size)
        n += (size_t)snprintf(buf + n, size - n, ", %zu killed after %s grace",
                              st.killed, st.killed == 1 ? "its" : "their");
    free(st.secs);
    if (w == NULL || n >= size)
        return;
    report__fmt_per(w, w->fit.slope, per, sizeof(per));
    snprintf(buf + n, size - n, "; %s %s against %s (R\u00b2 %.2f)",
             report__wfit_verdict(w), per, w->x, w->fit.r2);
}

/* ---- summary.json ---------------------------------------------------- */

static void
json_seconds(cJSON *o, const char *key, double s)
{
    if (isnan(s))
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, round(s * 1000) / 1000);
}

cJSON *
report__restarts_group_json(const struct report *r,
                            const struct report_group *g)
{
    cJSON *o = cJSON_CreateObject(), *a;
    struct report_rstats st;

    report__restart_stats(r, g, &st);
    cJSON_AddNumberToObject(o, "count", (double)st.count);
    a = cJSON_AddArrayToObject(o, "seconds");
    for (size_t i = 0; i < st.timed; i++)
        cJSON_AddItemToArray(
            a, cJSON_CreateNumber(round(st.secs[i] * 1000) / 1000));
    json_seconds(o, "median_s", st.median);
    json_seconds(o, "max_s", st.max);
    cJSON_AddNumberToObject(o, "never_ready", (double)(st.count - st.timed));
    cJSON_AddNumberToObject(o, "killed", (double)st.killed);
    free(st.secs);
    return o;
}

static cJSON *
restart_json(const struct report_inst *in, const struct report_restart *x)
{
    cJSON *o = cJSON_CreateObject(), *c;

    cJSON_AddNumberToObject(o, "number", x->number);
    ty__json_string(o, "stage", x->stage);
    ty__json_count(o, "action_index", x->action_index);
    ty__json_count(o, "stop_ms", x->stop_ms);
    ty__json_count(o, "exit_ms", x->exit_ms);
    ty__json_count(o, "start_ms", x->start_ms);
    ty__json_count(o, "ready_ms", x->ready_ms);
    json_seconds(o, "seconds", x->seconds);
    json_seconds(o, "down_seconds", x->down_seconds);
    ty__json_string(o, "ready_by", x->ready_by[0] ? x->ready_by : NULL);
    cJSON_AddBoolToObject(o, "killed", x->killed);
    c = cJSON_AddObjectToObject(o, "cycles_so_far");
    for (size_t i = 0; i < in->work.ncounters; i++) {
        const struct report_points *p = &in->work.counters[i];
        double v = report__total_at(p, x->stop_unix);

        if (!isnan(v))
            cJSON_AddNumberToObject(c, p->name, round(v));
    }
    return o;
}

cJSON *
report__restarts_inst_json(const struct report_inst *in)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t k = 0; k < in->nrestarts; k++)
        cJSON_AddItemToArray(a, restart_json(in, &in->restarts[k]));
    return a;
}

cJSON *
report__stages_json(const struct report *r)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t i = 0; i < r->nstages; i++) {
        const struct report_stage *s = &r->stages[i];
        cJSON *o = cJSON_CreateObject();

        if (s->action != NULL) {
            cJSON_AddStringToObject(o, "action", s->action);
            cJSON_AddStringToObject(o, "group", s->group);
        } else {
            cJSON_AddStringToObject(o, "stage", s->name);
        }
        ty__json_count(o, "start_ms", s->start_ms);
        ty__json_count(o, "end_ms", s->end_ms);
        if (s->action == NULL)
            ty__json_string(o, "ended_by", s->ended_by[0] ? s->ended_by : NULL);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}
