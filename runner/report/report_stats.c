/*
 * report_stats.c — from what was read to what the report says: each
 * instance's and group's figures per round, lines through them, and the
 * growth verdicts.
 *
 * A round's figures are the instance's own readings at the round's end:
 * the post-trim snapshot's sidecar, else the round's line of
 * memory-rounds.jsonl, else (cgroup usage only) the last memory sample at
 * or before the round's end barrier. Heap in use pre-trim comes from the
 * pre-trim snapshot. A group's round is the mean over its instances that
 * have that round.
 *
 * Verdicts (docs/report.md, "How verdicts are decided"): a series of at
 * least REPORT_MIN_ROUNDS rounds is growing (shrinking) when the rise of
 * its Theil-Sen line over the rounds is at least REPORT_MIN_RISE_BYTES and
 * REPORT_MIN_RISE_FRACTION of its level, the least-squares line explains
 * at least REPORT_MIN_R2 of it, and the rise holds at the end (the last
 * REPORT_HOLD_ROUNDS rounds both stand that far above the first third).
 * The verdict rests on heap in use after the trim: growing is a leak;
 * heap in use flat with RSS growing is retention when malloc's heaps grow
 * with it, growth outside malloc when they do not; without heap figures,
 * cgroup usage.
 */
#include "report/report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lines ----------------------------------------------------------- */

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double
report__median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Theil-Sen: the median of the slopes between every two rounds, which one
 * odd round cannot pull far; the intercept is the median of y - slope x.
 * Past TS_ALL_PAIRS rounds, the slopes between each round and the one
 * half the series later (n/2 of them, as robust, and not n^2). */
#define TS_ALL_PAIRS 512

static void
theil_sen(const double *x, const double *y, size_t n, struct report_fit *f)
{
    bool all = n <= TS_ALL_PAIRS;
    double *v = xcalloc(all ? n * (n - 1) / 2 + n : n, sizeof(*v));
    size_t k = 0;

    for (size_t i = 0; i < (all ? n : n / 2); i++)
        for (size_t j = all ? i + 1 : i + n / 2; j < (all ? n : i + n / 2 + 1);
             j++)
            if (x[j] != x[i])
                v[k++] = (y[j] - y[i]) / (x[j] - x[i]);
    f->slope = k > 0 ? report__median(v, k) : 0;
    for (size_t i = 0; i < n; i++)
        v[i] = y[i] - f->slope * x[i];
    f->intercept = report__median(v, n);
    for (size_t i = 0; i < n; i++)
        v[i] = y[i];
    f->median = report__median(v, n);
    free(v);
}

/* How far the last REPORT_HOLD_ROUNDS rounds all stand beyond the first
 * third of the rounds, in the direction of the slope (x ascending). */
static double
held_rise(const double *y, size_t n, double slope)
{
    size_t k = n / 3 > 0 ? n / 3 : 1,
           t = n < REPORT_HOLD_ROUNDS ? n : REPORT_HOLD_ROUNDS;
    double first_hi = y[0], first_lo = y[0], last_hi = y[n - 1];
    double last_lo = y[n - 1];

    for (size_t i = 0; i < k; i++) {
        first_hi = y[i] > first_hi ? y[i] : first_hi;
        first_lo = y[i] < first_lo ? y[i] : first_lo;
    }
    for (size_t i = n - t; i < n; i++) {
        last_hi = y[i] > last_hi ? y[i] : last_hi;
        last_lo = y[i] < last_lo ? y[i] : last_lo;
    }
    return slope >= 0 ? last_lo - first_hi : first_lo - last_hi;
}

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
    f->ls_slope = sxx > 0 ? sxy / sxx : 0;
    /* A constant series has nothing to explain: R^2 = 0, not 1. */
    f->r2 = sxx > 0 && syy > 0 ? sxy * sxy / (sxx * syy) : 0;
    theil_sen(x, y, n, f);
    f->level = fabs(f->median);
    f->held = held_rise(y, n, f->slope);
    f->trend = report__trend_of(f);
    return 0;
}

/* The rise the line makes over the rounds must be large against both an
 * absolute and a relative floor, the least-squares line must explain the
 * points, and the rise must hold in the last rounds, before a series is
 * said to move. */
enum report_trend
report__trend_of(const struct report_fit *f)
{
    return report__trend_floor(f, (double)REPORT_MIN_RISE_BYTES);
}

enum report_trend
report__trend_floor(const struct report_fit *f, double min_rise)
{
    double up = fabs(f->slope * f->span);
    double floor = REPORT_MIN_RISE_FRACTION * f->level;

    if (f->n < REPORT_MIN_ROUNDS)
        return TREND_UNKNOWN;
    if (floor < min_rise)
        floor = min_rise;
    if (up < floor || f->r2 < REPORT_MIN_R2 || f->held < floor)
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
        "not enough rounds", "not enough rounds", "flat",          "growing",
        "shrinking",         "retention",         "outside_malloc"};

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

/* RSS growing by the heap profiler's own tables (they grow as it meets
 * new stacks) while nothing of the plan's does: flat, and said why. */
static void
profiler_verdict(struct report_growth *g, const struct report_fit *f,
                 struct report_verdict *v)
{
    char rate[48], what[160];

    report__fmt_rate(f->slope, rate, sizeof(rate));
    snprintf(what, sizeof(what),
             "heap in use; RSS %s is the heap profiler's own tables", rate);
    verdict_set(v, VERDICT_FLAT, "heap_inuse", &g->heap);
    say_fit(v->text, sizeof(v->text), "flat", &g->heap, what);
}

/* Heap in use flat while RSS (or RssAnon) grows. malloc's heaps growing
 * with it (its footprint, or the free memory inside) is retention;
 * memory outside malloc growing (RssAnon less malloc's heaps and the
 * profiler's resident tables) is growth outside malloc, and so is RSS
 * growing with neither (file-backed mappings); only the profiler's tables
 * growing is the profiler's. Without mallinfo2 it cannot be told, and
 * retention stands. */
static void
rss_verdict(struct report_growth *g, struct report_verdict *v)
{
    bool rss_up = g->rss.trend == TREND_GROWING;
    const struct report_fit *f = rss_up ? &g->rss : &g->anon;
    const char *basis = rss_up ? "rss" : "rss_anon";
    const char *name = rss_up ? "RSS" : "RssAnon";
    bool known = g->malloc.n >= REPORT_MIN_ROUNDS;
    bool in_malloc =
        g->malloc.trend == TREND_GROWING || g->mfree.trend == TREND_GROWING;
    bool outside = g->outside.trend == TREND_GROWING;
    char rate[48];

    if (known && !in_malloc && !outside && g->own.trend == TREND_GROWING &&
        g->outside.n >= REPORT_MIN_ROUNDS) {
        profiler_verdict(g, f, v);
        return;
    }
    report__fmt_rate(f->slope, rate, sizeof(rate));
    if (known && !in_malloc) {
        verdict_set(v, VERDICT_OUTSIDE, basis, f);
        snprintf(v->text, sizeof(v->text),
                 "growing outside malloc: %s %s, R\u00b2 %.2f, while heap in "
                 "use and malloc's arena are %s (mmap, thread stacks or "
                 "another allocator)",
                 name, rate, f->r2,
                 g->heap.trend == TREND_SHRINKING ? "not growing" : "flat");
        return;
    }
    verdict_set(v, VERDICT_RETENTION, basis, f);
    snprintf(v->text, sizeof(v->text),
             "retention or fragmentation: %s %s, R\u00b2 %.2f, while heap in "
             "use is %s (malloc keeps freed memory, not leaked)",
             name, rate, f->r2,
             g->heap.trend == TREND_SHRINKING ? "shrinking" : "flat");
}

/* The verdict from post-trim heap in use, told apart from RSS. */
static void
heap_verdict(struct report_growth *g, struct report_verdict *v)
{
    const struct report_fit *h = &g->heap;

    if (h->trend == TREND_GROWING) {
        char what[160];

        snprintf(what, sizeof(what), "heap in use: live objects accumulate%s%s",
                 g->site ? "; most in " : "", g->site ? g->site : "");
        verdict_set(v, VERDICT_GROWING, "heap_inuse", h);
        say_fit(v->text, sizeof(v->text), "growing", h, what);
    } else if (g->rss.trend == TREND_GROWING ||
               g->anon.trend == TREND_GROWING) {
        rss_verdict(g, v);
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

/* Fit heap in use (post-trim, else pre-trim), RSS likewise, RssAnon,
 * cgroup usage and malloc's figures, then decide. Memory outside malloc
 * is a difference of two larger figures, so its floor is taken of
 * RssAnon's level: noise on RSS is not growth outside malloc. */
static void
growth(const struct report_round *rd, size_t n, struct report_growth *g)
{
    fit_rounds(rd, n, offsetof(struct report_round, heap_post), &g->heap);
    if (g->heap.n == 0)
        fit_rounds(rd, n, offsetof(struct report_round, heap_pre), &g->heap);
    fit_rounds(rd, n, offsetof(struct report_round, rss_post), &g->rss);
    if (g->rss.n == 0)
        fit_rounds(rd, n, offsetof(struct report_round, rss_pre), &g->rss);
    fit_rounds(rd, n, offsetof(struct report_round, rss_anon), &g->anon);
    fit_rounds(rd, n, offsetof(struct report_round, cgroup), &g->cgroup);
    fit_rounds(rd, n, offsetof(struct report_round, malloc), &g->malloc);
    fit_rounds(rd, n, offsetof(struct report_round, mfree), &g->mfree);
    fit_rounds(rd, n, offsetof(struct report_round, outside), &g->outside);
    fit_rounds(rd, n, offsetof(struct report_round, own_res), &g->own);
    if (g->anon.level > g->outside.level) {
        g->outside.level = g->anon.level;
        g->outside.trend = report__trend_of(&g->outside);
    }
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
    xgrow(&s->v, &s->cap, s->n + 1, sizeof(*s->v));
    s->v[s->n++] = x;
}

static int
cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

/* Sorted, each once. */
static void
ints_done(struct ints *s)
{
    size_t n = 0;

    if (s->n > 1)
        qsort(s->v, s->n, sizeof(*s->v), cmp_int);
    for (size_t i = 0; i < s->n; i++)
        if (n == 0 || s->v[n - 1] != s->v[i])
            s->v[n++] = s->v[i];
    s->n = n;
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

/* The last snapshot of the round of kind k with a figure set (inuse, or
 * for SNAP_OTHER a round's snapshot that says nothing of the trim). */
static const struct report_snap *
snap_of(const struct report_snap *v, size_t n, int round,
        enum report_snap_kind k)
{
    const struct report_snap *s = NULL;

    for (size_t i = 0; i < n; i++)
        if (v[i].round == round && v[i].kind == k)
            s = &v[i];
    return s;
}

/* The round's reading: the last line of memory-rounds.jsonl for it (the
 * readings are in order of round, then of line; report_snap.c). */
static const struct report_snap *
reading_of(const struct report_inst *in, int round)
{
    size_t lo = 0, hi = in->nreadings;

    while (lo < hi) { /* the first past the round */
        size_t mid = lo + (hi - lo) / 2;

        if (in->readings[mid].round <= round)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && in->readings[lo - 1].round == round ? &in->readings[lo - 1]
                                                         : NULL;
}

/* A figure from the first source that has it: the post-trim sidecar, the
 * round's reading, another snapshot of the round. */
static int64_t
pick(const struct report_snap *const src[3], size_t off)
{
    for (int i = 0; i < 3; i++) {
        int64_t v =
            src[i] ? *(const int64_t *)((const char *)src[i] + off) : -1;

        if (v >= 0)
            return v;
    }
    return -1;
}

#define PICK(src, field) pick(src, offsetof(struct report_snap, field))

static void
malloc_figures(const struct report_snap *const src[3], struct report_round *rd)
{
    int64_t arena = PICK(src, arena), hblk = PICK(src, hblkhd);

    rd->malloc = arena >= 0 ? i64_add_sat(arena, hblk > 0 ? hblk : 0) : -1;
    rd->mfree = PICK(src, fordblks);
    rd->own_res = PICK(src, own_res);
    rd->outside = -1;
    if (rd->rss_anon >= 0 && rd->malloc >= 0) {
        int64_t own = rd->own_res > 0 ? rd->own_res : 0;
        int64_t out = rd->rss_anon - rd->malloc - own;

        rd->outside = out > 0 ? out : 0;
    }
}

static void
round_fill(const struct report *r, const struct report_inst *in,
           struct report_round *rd)
{
    const struct report_span *sp = span_of(r, rd->round);
    const struct report_snap *pre =
        snap_of(in->snaps, in->nsnaps, rd->round, SNAP_PRE);
    const struct report_snap *src[3] = {
        snap_of(in->snaps, in->nsnaps, rd->round, SNAP_POST),
        reading_of(in, rd->round),
        snap_of(in->snaps, in->nsnaps, rd->round, SNAP_OTHER)};

    rd->heap_pre = pre ? pre->inuse : -1;
    rd->rss_pre = pre ? pre->rss : -1;
    rd->heap_post = PICK(src, inuse);
    rd->rss_post = PICK(src, rss);
    rd->rss_anon = PICK(src, rss_anon);
    rd->cgroup = PICK(src, cgroup);
    malloc_figures(src, rd);
    if (rd->cgroup < 0 && pre != NULL)
        rd->cgroup = pre->cgroup;
    if (rd->cgroup < 0 && sp != NULL)
        rd->cgroup = usage_at(in, sp->end_ms);
}

static bool
round_empty(const struct report_round *rd)
{
    return rd->heap_pre < 0 && rd->heap_post < 0 && rd->rss_pre < 0 &&
           rd->rss_post < 0 && rd->cgroup < 0 && rd->rss_anon < 0;
}

static void
inst_rounds(const struct report *r, struct report_inst *in)
{
    struct ints rounds = {0};

    for (size_t i = 0; i < in->nsnaps; i++)
        if (in->snaps[i].round >= 0)
            ints_add(&rounds, in->snaps[i].round);
    for (size_t i = 0; i < in->nreadings; i++)
        ints_add(&rounds, in->readings[i].round);
    for (size_t i = 0; i < r->nspans && in->nsamples > 0; i++)
        ints_add(&rounds, r->spans[i].round);
    ints_done(&rounds);
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

/* The figures of a round, as offsets, for the group's means. */
static const size_t round_figures[REPORT_ROUND_FIGURES] = {
    offsetof(struct report_round, heap_pre),
    offsetof(struct report_round, heap_post),
    offsetof(struct report_round, rss_pre),
    offsetof(struct report_round, rss_post),
    offsetof(struct report_round, cgroup),
    offsetof(struct report_round, rss_anon),
    offsetof(struct report_round, malloc),
    offsetof(struct report_round, mfree),
    offsetof(struct report_round, outside),
    offsetof(struct report_round, own_res),
};

/* The mean of each figure over the instances that have it. */
static void
mean_into(struct report_round *g, const struct report_round *x,
          int64_t sum[REPORT_ROUND_FIGURES], int cnt[REPORT_ROUND_FIGURES])
{
    for (int k = 0; k < REPORT_ROUND_FIGURES; k++) {
        int64_t v = *(const int64_t *)((const char *)x + round_figures[k]);
        int64_t *out = (int64_t *)((char *)g + round_figures[k]);

        if (v >= 0) {
            sum[k] = i64_add_sat(sum[k], v);
            cnt[k]++;
        }
        *out = cnt[k] ? sum[k] / cnt[k] : -1;
    }
}

static void
group_rounds(const struct report *r, struct report_group *g)
{
    struct ints rounds = {0};
    size_t *at;

    for (size_t i = 0; i < g->ninst; i++) {
        const struct report_inst *in = &r->insts[g->inst[i]];

        for (size_t k = 0; k < in->nrounds; k++)
            ints_add(&rounds, in->rounds[k].round);
    }
    ints_done(&rounds);
    g->rounds = xcalloc(rounds.n ? rounds.n : 1, sizeof(*g->rounds));
    g->nrounds = rounds.n;
    /* each instance's rounds are in order: one cursor each */
    at = xcalloc(g->ninst ? g->ninst : 1, sizeof(*at));
    for (size_t k = 0; k < rounds.n; k++) {
        struct report_round *gr = &g->rounds[k];
        int64_t sum[REPORT_ROUND_FIGURES] = {0};
        int cnt[REPORT_ROUND_FIGURES] = {0};

        gr->round = rounds.v[k];
        for (size_t i = 0; i < g->ninst; i++) {
            const struct report_inst *in = &r->insts[g->inst[i]];

            for (; at[i] < in->nrounds && in->rounds[at[i]].round <= gr->round;
                 at[i]++) {
                if (in->rounds[at[i]].round != gr->round)
                    continue;
                mean_into(gr, &in->rounds[at[i]], sum, cnt);
                gr->ninst++;
            }
        }
    }
    free(at);
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
    for (size_t i = 0; i < r->nstages; i++) {
        const struct report_stage *s = &r->stages[i];
        int64_t t = s->end_ms > s->start_ms ? s->end_ms : s->start_ms;

        if (t > r->end_ms)
            r->end_ms = t;
    }
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

/* The first of the plan's growing sites, for the verdict's words. */
static const char *
first_plan_site(const struct report_gsites *gs)
{
    for (size_t i = 0; i < gs->n; i++)
        if (!gs->v[i].testyard)
            return gs->v[i].function;
    return NULL;
}

void
report__verdicts_name_sites(struct report *r)
{
    for (size_t i = 0; i < r->ninsts; i++) {
        r->insts[i].growth.site = first_plan_site(&r->insts[i].gsites);
        report__verdict_of(&r->insts[i].growth);
    }
    for (size_t g = 0; g < r->ngroups; g++) {
        r->groups[g].growth.site = first_plan_site(&r->groups[g].gsites);
        report__verdict_of(&r->groups[g].growth);
    }
}
