/*
 * changepoint.c — change points of a series by E-Divisive means.
 *
 * The method of Matteson and James ("A Nonparametric Approach for
 * Multiple Change Point Analysis of Multivariate Data", 2014) as MongoDB's
 * performance work uses it (Daly et al., ICPE 2020): over a segment, the
 * split that maximises the energy statistic (alpha = 1)
 *
 *     Q(tau) = m k / (m + k) * ( 2/(m k)  sum |x_i - y_j|
 *                              - 1/C(m,2) sum |x_i - x_i'|
 *                              - 1/C(k,2) sum |y_j - y_j'| )
 *
 * (x the m points before tau, y the k after) is the candidate; of the
 * candidates of all current segments the strongest is tested with a
 * permutation test (the points shuffled within each segment, the same
 * maximum taken; p = (1 + #at least as strong) / (R + 1)), and when
 * significant the segment is split and the search goes on; the first
 * split that is not significant ends it. Significant splits whose change
 * of mean is below the minimum effect are then dropped, the smallest
 * first, their neighbours' segments merged: real but negligible shifts
 * (below min_effect of the level, or min_abs), and noise the test lets
 * through, which it does at rate p: a split is kept only when its change
 * is also at least min_sd standard deviations of the points about their
 * segments' means, which a split of gaussian noise seldom is (measured
 * over 1000 flat series of 200 points with noise of 5 to 20 %: 0.6 %
 * raise an alert, 3 % without it; none at 2 % noise).
 *
 * Q over every tau of a segment costs O(n^2) with running sums: moving
 * point t from the right part to the left adds its distances to the
 * points before it to the left sum and takes those to the points after it
 * from the right sum. The permutations use a splitmix64 generator seeded
 * from the options, so a series always gives the same answer.
 */
#include "history/history.h"

#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CP_DEFAULT_SEED 0x7e57ad5eedULL

void
history_cp_defaults(struct history_cp_opts *o)
{
    o->pvalue = 0.05;
    o->permutations = 199;
    o->min_size = 3;
    o->min_effect = 0.05;
    o->min_abs = 0;
    o->min_sd = 1.5;
    o->seed = CP_DEFAULT_SEED;
}

/* ---- the generator -------------------------------------------------- */

static uint64_t
rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n): values below 2^64 mod n are drawn again. */
static uint64_t
rng_below(uint64_t *s, uint64_t n)
{
    uint64_t lim = (0 - n) % n, x;

    do
        x = rng_next(s);
    while (x < lim);
    return x % n;
}

static void
shuffle(double *x, size_t n, uint64_t *s)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rng_below(s, i);
        double t = x[i - 1];

        x[i - 1] = x[j];
        x[j] = t;
    }
}

/* ---- the statistic -------------------------------------------------- */

struct cp_work {
    const struct history_cp_opts *o;
    double *r, *s; /* per point: distances to the points before, after */
};

/* The best split of x[0..n) (its left part's size in *tau) and its Q;
 * -1 when no split leaves min_size points each side. */
static double
best_split(struct cp_work *w, const double *x, size_t n, size_t *tau)
{
    size_t min = w->o->min_size;
    double wl = 0, wr = 0, b = 0, best = -1;

    if (n < 2 * min)
        return -1;
    memset(w->r, 0, n * sizeof(double));
    memset(w->s, 0, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double d = fabs(x[i] - x[j]);

            w->r[j] += d;
            w->s[i] += d;
            wr += d;
        }
    for (size_t t = 0; t + min < n; t++) {
        double m = (double)(t + 1), k = (double)(n - t - 1), q;

        wl += w->r[t];
        wr -= w->s[t];
        b += w->s[t] - w->r[t];
        if (t + 1 < min)
            continue;
        q = m * k / (m + k) *
            (2 * b / (m * k) - 2 * wl / (m * (m - 1)) - 2 * wr / (k * (k - 1)));
        if (q > best) {
            best = q;
            *tau = t + 1;
        }
    }
    return best;
}

/* ---- the hierarchical search ---------------------------------------- */

struct cp_state {
    struct cp_work w;
    const double *v;
    size_t n;
    size_t *cut; /* segment boundaries: 0, points..., n (sorted) */
    double *pv;  /* per boundary: the p-value that made it */
    size_t ncut;
    double *perm; /* the permuted copy */
    uint64_t rng;
};

/* The strongest split over every segment of x (cut as in st); its
 * position in *at and its Q, or -1 when none. */
static double
strongest(struct cp_state *st, const double *x, size_t *at)
{
    double best = -1;

    for (size_t c = 0; c + 1 < st->ncut; c++) {
        size_t lo = st->cut[c], tau = 0;
        double q = best_split(&st->w, x + lo, st->cut[c + 1] - lo, &tau);

        if (q > best) {
            best = q;
            *at = lo + tau;
        }
    }
    return best;
}

/* The permutation test's p-value for a strongest split of strength q; it
 * stops counting once p can no longer reach the significance asked. */
static double
permutation_p(struct cp_state *st, double q)
{
    int rounds = st->w.o->permutations, hits = 0;
    double stop = st->w.o->pvalue * (rounds + 1);
    size_t at;

    for (int r = 0; r < rounds; r++) {
        memcpy(st->perm, st->v, st->n * sizeof(double));
        for (size_t c = 0; c + 1 < st->ncut; c++)
            shuffle(st->perm + st->cut[c], st->cut[c + 1] - st->cut[c],
                    &st->rng);
        /* within rounding of q counts as reaching it */
        if (strongest(st, st->perm, &at) >= q * (1 - 1e-9))
            hits++;
        if (hits + 1 > stop)
            return 1.0;
    }
    return (double)(hits + 1) / (rounds + 1);
}

static void
add_cut(struct cp_state *st, size_t at, double p)
{
    size_t i = st->ncut;

    while (i > 0 && st->cut[i - 1] > at) {
        st->cut[i] = st->cut[i - 1];
        st->pv[i] = st->pv[i - 1];
        i--;
    }
    st->cut[i] = at;
    st->pv[i] = p;
    st->ncut++;
}

static void
remove_cut(struct cp_state *st, size_t i)
{
    memmove(st->cut + i, st->cut + i + 1, (st->ncut - i - 1) * sizeof(size_t));
    memmove(st->pv + i, st->pv + i + 1, (st->ncut - i - 1) * sizeof(double));
    st->ncut--;
}

static void
search(struct cp_state *st)
{
    size_t at = 0;
    double q, p;

    while ((q = strongest(st, st->v, &at)) > 0) {
        p = permutation_p(st, q);
        if (p > st->w.o->pvalue)
            return;
        add_cut(st, at, p);
    }
}

/* ---- the minimum effect --------------------------------------------- */

static double
mean_of(const double *v, size_t lo, size_t hi)
{
    double sum = 0;

    for (size_t i = lo; i < hi; i++)
        sum += v[i];
    return sum / (double)(hi - lo);
}

static void
describe_cut(const struct cp_state *st, size_t i, struct history_cp *cp)
{
    double d;

    cp->index = st->cut[i];
    cp->pvalue = st->pv[i];
    cp->mean_before = mean_of(st->v, st->cut[i - 1], st->cut[i]);
    cp->mean_after = mean_of(st->v, st->cut[i], st->cut[i + 1]);
    d = cp->mean_after - cp->mean_before;
    if (cp->mean_before != 0)
        cp->rel_change = d / fabs(cp->mean_before);
    else
        cp->rel_change = d > 0 ? HUGE_VAL : d < 0 ? -HUGE_VAL : 0;
}

/* The spread of the points of both segments about their own means. */
static double
pooled_sd(const double *v, size_t lo, size_t mid, size_t hi, double ma,
          double mb)
{
    double ss = 0;

    for (size_t i = lo; i < hi; i++) {
        double d = v[i] - (i < mid ? ma : mb);

        ss += d * d;
    }
    return sqrt(ss / (double)(hi - lo - 2));
}

static bool
large_enough(const struct cp_state *st, size_t i, const struct history_cp *cp)
{
    const struct history_cp_opts *o = st->w.o;
    double d = fabs(cp->mean_after - cp->mean_before);

    return fabs(cp->rel_change) >= o->min_effect && d >= o->min_abs &&
           d >= o->min_sd * pooled_sd(st->v, st->cut[i - 1], st->cut[i],
                                      st->cut[i + 1], cp->mean_before,
                                      cp->mean_after);
}

/* Drop the weakest point below the minimum effect, until none is. */
static void
prune(struct cp_state *st)
{
    for (;;) {
        size_t weakest = 0;
        double least = HUGE_VAL;

        for (size_t i = 1; i + 1 < st->ncut; i++) {
            struct history_cp cp;
            double d;

            describe_cut(st, i, &cp);
            d = fabs(cp.mean_after - cp.mean_before);
            if (!large_enough(st, i, &cp) && d < least) {
                least = d;
                weakest = i;
            }
        }
        if (weakest == 0)
            return;
        remove_cut(st, weakest);
    }
}

static int
check_input(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) {
            errno = EINVAL;
            return -1;
        }
    return 0;
}

int
history_changepoints(const double *v, size_t n, const struct history_cp_opts *o,
                     struct history_cp *out, size_t max, size_t *nout)
{
    struct history_cp_opts opts;
    struct cp_state st = {.v = v, .n = n};

    *nout = 0;
    if (check_input(v, n) < 0)
        return -1;
    if (o == NULL)
        history_cp_defaults(&opts);
    else
        opts = *o;
    if (opts.min_size < 2)
        opts.min_size = 2;
    if (n < 2 * opts.min_size)
        return 0;
    st.w.o = &opts;
    st.rng = opts.seed;
    st.w.r = xcalloc(n, sizeof(double));
    st.w.s = xcalloc(n, sizeof(double));
    st.perm = xcalloc(n, sizeof(double));
    st.cut = xcalloc(n + 1, sizeof(size_t));
    st.pv = xcalloc(n + 1, sizeof(double));
    st.cut[st.ncut++] = 0;
    st.cut[st.ncut++] = n;
    search(&st);
    prune(&st);
    for (size_t i = 1; i + 1 < st.ncut; i++, (*nout)++)
        if (*nout < max)
            describe_cut(&st, i, &out[*nout]);
    free(st.w.r);
    free(st.w.s);
    free(st.perm);
    free(st.cut);
    free(st.pv);
    return 0;
}
