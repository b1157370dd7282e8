/*
 * report_stats.c — from what was read to what the report says: each
 * instance's and group's figures per round, least-squares lines through
 * them, and the growth verdicts.
 *
 * A round's heap in use is the inuse_space total of the round's pre- and
 * post-trim snapshots, its RSS theirs too; its cgroup usage is the post-
 * trim sidecar's, or else the last memory sample at or before the round's
 * end barrier. A group's round is the mean over its instances that have
 * that round.
 *
 * Verdicts (docs/report.md): a series of at least REPORT_MIN_ROUNDS rounds
 * is growing (shrinking) when its fitted rise over the rounds is at least
 * REPORT_MIN_RISE_BYTES and REPORT_MIN_RISE_FRACTION of its mean, with R^2
 * at least REPORT_MIN_R2; otherwise flat. The verdict rests on post-trim
 * heap in use when there is one; heap in use flat with RSS growing is
 * retention or fragmentation; without heap snapshots, cgroup usage.
 */
#include "report/report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- least squares ------------------------------------------------------- */

int
report__fit_line(const double *x, const double *y, size_t n,
                 struct report_fit *f)
{
    double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0, lo = 0, hi = 0;

    memset(f, 0, sizeof(*f));
    f->n = n;
    if (n == 0)
        return -1;
    lo = hi = x[0];
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    mx /= (double)n;
    my /= (double)n;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
    }
    f->mean = my;
    f->span = hi - lo;
    f->slope = sxx > 0 ? sxy / sxx : 0;
    f->intercept = my - f->slope * mx;
    /* A constant series has nothing to explain: R^2 = 0, not 1. */
    f->r2 = sxx > 0 && syy > 0 ? sxy * sxy / (sxx * syy) : 0;
    f->trend = report__trend_of(f);
    return 0;
}

/* The rise the fitted line makes over the rounds must be large against
 * both an absolute and a relative floor, and the line must explain the
 * points, before a series is said to move. */
enum report_trend
report__trend_of(const struct report_fit *f)
{
    double up = fabs(f->slope * f->span);
    double floor = REPORT_MIN_RISE_FRACTION * fabs(f->mean);

    if (f->n < REPORT_MIN_ROUNDS)
        return TREND_UNKNOWN;
    if (floor < (double)REPORT_MIN_RISE_BYTES)
        floor = (double)REPORT_MIN_RISE_BYTES;
    if (up < floor || f->r2 < REPORT_MIN_R2)
        return TREND_FLAT;
    return f->slope > 0 ? TREND_GROWING : TREND_SHRINKING;
}

/* Fit a per-round series (the int64_t at offset off of each round);
 * rounds where the value is unknown are left out. */
static void
fit_rounds(const struct report_round *rd, size_t n, size_t off,
           struct report_fit *f)
{
    double *x = xcalloc(n ? n : 1, sizeof(*x));
    double *y = xcalloc(n ? n : 1, sizeof(*y));
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        int64_t v = *(const int64_t *)((const char *)&rd[i] + off);

        if (v < 0)
            continue;
        x[k] = rd[i].round;
        y[k++] = (double)v;
    }
    report__fit_line(x, y, k, f);
    free(x);
    free(y);
}

const char *
report__trend_name(enum report_trend t)
{
    static const char *const names[] = {"not enough rounds", "flat", "growing",
                                        "shrinking"};

    return names[t];
}

const char *
report__verdict_name(enum report_verdict_kind k)
{
    static const char *const names[] = {
        "not enough rounds", "not enough rounds", "flat",
        "growing",           "shrinking",         "retention"};

    return names[k];
}

/* ---- verdicts ---------------------------------------------------------- */

static void
say_fit(char *buf, size_t size, const char *word, const struct report_fit *f,
        const char *what)
{
    char rate[48];

    report__fmt_rate(f->slope, rate, sizeof(rate));
    snprintf(buf, size, "%s: %s, R\u00b2 %.2f (%s)", word, rate, f->r2, what);
}

static void
verdict_set(struct report_verdict *v, enum report_verdict_kind k,
            const char *basis, const struct report_fit *f)
{
    v->kind = k;
    v->basis = basis;
    v->rate = f ? f->slope : 0;
    v->r2 = f ? f->r2 : 0;
}

/* The verdict from post-trim heap in use, told apart from RSS. */
static void
heap_verdict(struct report_growth *g, struct report_verdict *v)
{
    const struct report_fit *h = &g->heap, *rss = &g->rss;

    if (h->trend == TREND_GROWING) {
        verdict_set(v, VERDICT_GROWING, "heap_inuse", h);
        say_fit(v->text, sizeof(v->text), "growing", h,
                "heap in use: live objects accumulate");
    } else if (rss->trend == TREND_GROWING) {
        char rate[48];

        verdict_set(v, VERDICT_RETENTION, "rss", rss);
        report__fmt_rate(rss->slope, rate, sizeof(rate));
        snprintf(v->text, sizeof(v->text),
                 "retention or fragmentation: RSS %s, R\u00b2 %.2f, while "
                 "heap in use is %s (freed memory is kept, not leaked)",
                 rate, rss->r2,
                 h->trend == TREND_SHRINKING ? "shrinking" : "flat");
    } else if (h->trend == TREND_SHRINKING) {
        verdict_set(v, VERDICT_SHRINKING, "heap_inuse", h);
        say_fit(v->text, sizeof(v->text), "shrinking", h, "heap in use");
    } else {
        verdict_set(v, VERDICT_FLAT, "heap_inuse", h);
        say_fit(v->text, sizeof(v->text), "flat", h, "heap in use");
    }
}

static void
cgroup_verdict(struct report_growth *g, struct report_verdict *v)
{
    static const enum report_verdict_kind kinds[] = {
        VERDICT_NOT_ENOUGH, VERDICT_FLAT, VERDICT_GROWING, VERDICT_SHRINKING};
    const struct report_fit *c = &g->cgroup;
    char what[96];

    if (g->heap.n == 0 && g->rss.n > 0)
        snprintf(what, sizeof(what),
                 "cgroup usage; the heap profiles are "
                 "empty");
    else if (g->heap.n == 0)
        snprintf(what, sizeof(what), "cgroup usage; no heap snapshots");
    else
        snprintf(what, sizeof(what),
                 "cgroup usage; heap snapshots in %zu round%s only", g->heap.n,
                 g->heap.n == 1 ? "" : "s");
    verdict_set(v, kinds[c->trend], "cgroup", c);
    say_fit(v->text, sizeof(v->text), report__trend_name(c->trend), c, what);
}

void
report__verdict_of(struct report_growth *g)
{
    struct report_verdict *v = &g->verdict;
    size_t most = g->heap.n > g->cgroup.n ? g->heap.n : g->cgroup.n;

    memset(v, 0, sizeof(*v));
    if (g->heap.n >= REPORT_MIN_ROUNDS) {
        heap_verdict(g, v);
    } else if (g->cgroup.n >= REPORT_MIN_ROUNDS) {
        cgroup_verdict(g, v);
    } else if (most == 0) {
        v->kind = VERDICT_NO_DATA;
        snprintf(v->text, sizeof(v->text),
                 "not enough rounds to say (no heap snapshots and no round "
                 "barriers)");
    } else {
        v->kind = VERDICT_NOT_ENOUGH;
        snprintf(v->text, sizeof(v->text),
                 "not enough rounds to say (%zu round%s; needs %d)", most,
                 most == 1 ? "" : "s", REPORT_MIN_ROUNDS);
    }
}

/* Fit heap in use (post-trim, else pre-trim), RSS likewise, and cgroup
 * usage, then decide. */
static void
growth(const struct report_round *rd, size_t n, struct report_growth *g)
{
    fit_rounds(rd, n, offsetof(struct report_round, heap_post), &g->heap);
    if (g->heap.n == 0)
        fit_rounds(rd, n, offsetof(struct report_round, heap_pre), &g->heap);
    fit_rounds(rd, n, offsetof(struct report_round, rss_post), &g->rss);
    if (g->rss.n == 0)
        fit_rounds(rd, n, offsetof(struct report_round, rss_pre), &g->rss);
    fit_rounds(rd, n, offsetof(struct report_round, cgroup), &g->cgroup);
    report__verdict_of(g);
}

/* ---- rounds ----------------------------------------------------------------
 */

struct ints {
    int *v;
    size_t n, cap;
};

static void
ints_add(struct ints *s, int x)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == x)
            return;
    xgrow(&s->v, &s->cap, s->n + 1, sizeof(*s->v));
    s->v[s->n++] = x;
}

static int
cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

/* Usage at the last sample at or before end_ms, if the instance was still
 * sampled then. */
static int64_t
usage_at(const struct report_inst *in, int64_t end_ms)
{
    int64_t v = -1;

    if (end_ms < 0 || in->nsamples == 0 ||
        in->samples[in->nsamples - 1].t_ms < end_ms)
        return -1;
    for (size_t i = 0; i < in->nsamples && in->samples[i].t_ms <= end_ms; i++)
        if (in->samples[i].usage >= 0)
            v = in->samples[i].usage;
    return v;
}

const struct report_round *
report__round_of(const struct report_group *g, int round)
{
    for (size_t i = 0; i < g->nrounds; i++)
        if (g->rounds[i].round == round)
            return &g->rounds[i];
    return NULL;
}

static const struct report_span *
span_of(const struct report *r, int round)
{
    for (size_t i = 0; i < r->nspans; i++)
        if (r->spans[i].round == round)
            return &r->spans[i];
    return NULL;
}

/* The plan's RSS: the process's less the heap profiler's own tables,
 * which grow as it meets new stacks and would otherwise read as the
 * plan's retention. The tables are mapped, not all resident, so this errs
 * towards calling RSS flat. */
static int64_t
plan_rss(const struct report_snap *s)
{
    if (s->rss < 0 || s->own <= 0)
        return s->rss;
    return s->rss > s->own ? s->rss - s->own : 0;
}

static void
round_fill(const struct report *r, const struct report_inst *in,
           struct report_round *rd)
{
    const struct report_span *sp = span_of(r, rd->round);
    int64_t any_cg = -1;

    rd->heap_pre = rd->heap_post = rd->rss_pre = rd->rss_post = -1;
    rd->cgroup = -1;
    for (size_t i = 0; i < in->nsnaps; i++) {
        const struct report_snap *s = &in->snaps[i];

        if (s->round != rd->round || s->kind == SNAP_PEAK)
            continue;
        if (s->kind == SNAP_PRE) {
            rd->heap_pre = s->inuse;
            rd->rss_pre = plan_rss(s);
        } else if (s->kind == SNAP_POST || rd->heap_post < 0) {
            rd->heap_post = s->inuse;
            rd->rss_post = plan_rss(s);
            rd->cgroup = s->kind == SNAP_POST ? s->cgroup : rd->cgroup;
        }
        if (s->cgroup >= 0)
            any_cg = s->cgroup;
    }
    if (rd->cgroup < 0)
        rd->cgroup = any_cg;
    if (rd->cgroup < 0 && sp != NULL)
        rd->cgroup = usage_at(in, sp->end_ms);
}

static bool
round_empty(const struct report_round *rd)
{
    return rd->heap_pre < 0 && rd->heap_post < 0 && rd->rss_pre < 0 &&
           rd->rss_post < 0 && rd->cgroup < 0;
}

static void
inst_rounds(const struct report *r, struct report_inst *in)
{
    struct ints rounds = {0};

    for (size_t i = 0; i < in->nsnaps; i++)
        if (in->snaps[i].round >= 0)
            ints_add(&rounds, in->snaps[i].round);
    for (size_t i = 0; i < r->nspans && in->nsamples > 0; i++)
        ints_add(&rounds, r->spans[i].round);
    if (rounds.n > 0)
        qsort(rounds.v, rounds.n, sizeof(*rounds.v), cmp_int);
    in->rounds = xcalloc(rounds.n ? rounds.n : 1, sizeof(*in->rounds));
    for (size_t i = 0; i < rounds.n; i++) {
        struct report_round *rd = &in->rounds[in->nrounds];

        rd->round = rounds.v[i];
        rd->ninst = 1;
        round_fill(r, in, rd);
        if (!round_empty(rd))
            in->nrounds++;
    }
    free(rounds.v);
    growth(in->rounds, in->nrounds, &in->growth);
}

/* The mean of each figure over the instances that have it. */
static void
mean_into(struct report_round *g, const struct report_round *x, int64_t sum[5],
          int cnt[5])
{
    const int64_t v[5] = {x->heap_pre, x->heap_post, x->rss_pre, x->rss_post,
                          x->cgroup};
    int64_t *out[5] = {&g->heap_pre, &g->heap_post, &g->rss_pre, &g->rss_post,
                       &g->cgroup};

    for (int k = 0; k < 5; k++) {
        if (v[k] >= 0) {
            sum[k] = i64_add_sat(sum[k], v[k]);
            cnt[k]++;
        }
        *out[k] = cnt[k] ? sum[k] / cnt[k] : -1;
    }
}

static void
group_rounds(const struct report *r, struct report_group *g)
{
    struct ints rounds = {0};

    for (size_t i = 0; i < g->ninst; i++) {
        const struct report_inst *in = &r->insts[g->inst[i]];

        for (size_t k = 0; k < in->nrounds; k++)
            ints_add(&rounds, in->rounds[k].round);
    }
    if (rounds.n > 0)
        qsort(rounds.v, rounds.n, sizeof(*rounds.v), cmp_int);
    g->rounds = xcalloc(rounds.n ? rounds.n : 1, sizeof(*g->rounds));
    g->nrounds = rounds.n;
    for (size_t k = 0; k < rounds.n; k++) {
        struct report_round *gr = &g->rounds[k];
        int64_t sum[5] = {0};
        int cnt[5] = {0};

        gr->round = rounds.v[k];
        for (size_t i = 0; i < g->ninst; i++) {
            const struct report_inst *in = &r->insts[g->inst[i]];

            for (size_t j = 0; j < in->nrounds; j++) {
                if (in->rounds[j].round != gr->round)
                    continue;
                mean_into(gr, &in->rounds[j], sum, cnt);
                gr->ninst++;
            }
        }
    }
    free(rounds.v);
    growth(g->rounds, g->nrounds, &g->growth);
}

/* ---- groups ----------------------------------------------------------------
 */

static void
group_figures(struct report *r, size_t gi)
{
    struct report_group *g = &r->groups[gi];

    for (size_t i = 0; i < r->ninsts; i++) {
        const struct report_inst *in = &r->insts[i];

        if (strcmp(in->group, g->id) != 0)
            continue;
        xgrow(&g->inst, &g->capinst, g->ninst + 1, sizeof(*g->inst));
        g->inst[g->ninst++] = i;
        if (in->peak > g->peak) {
            g->peak = in->peak;
            g->peak_t_ms = in->peak_t_ms;
            g->peak_inst = in->label;
        }
        if (in->final > g->final)
            g->final = in->final;
        if (g->limit < 0)
            g->limit = in->limit;
        g->noom += in->oom;
    }
}

static void
end_time(struct report *r)
{
    r->end_ms = r->duration_s > 0 ? report__i64(r->duration_s * 1000) : 0;
    for (size_t i = 0; i < r->ninsts; i++) {
        const struct report_inst *in = &r->insts[i];

        if (in->nsamples > 0 && in->samples[in->nsamples - 1].t_ms > r->end_ms)
            r->end_ms = in->samples[in->nsamples - 1].t_ms;
        if (in->oom_t_ms > r->end_ms)
            r->end_ms = in->oom_t_ms;
    }
    for (size_t i = 0; i < r->nbars; i++)
        if (r->bars[i].t_ms > r->end_ms)
            r->end_ms = r->bars[i].t_ms;
}

void
report__analyse(struct report *r)
{
    bool any_snap = false;

    for (size_t i = 0; i < r->ninsts; i++) {
        inst_rounds(r, &r->insts[i]);
        any_snap = any_snap || r->insts[i].nsnaps > 0;
    }
    for (size_t g = 0; g < r->ngroups; g++) {
        group_figures(r, g);
        group_rounds(r, &r->groups[g]);
    }
    end_time(r);
    if (!any_snap && r->ninsts > 0)
        report__note(r, "no heap snapshots (heap-<label>.json, .pb.gz): no "
                        "heap figures per round and no allocation sites; set "
                        "memory_snapshots: simple for plans that take them");
}
