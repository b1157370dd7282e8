/*
 * test_changepoint.c — E-Divisive means (runner/history/changepoint.c) on
 * synthetic series: a step at a known index is found there, two steps
 * both; flat series with gaussian noise (light to heavy, several seeds)
 * and a constant one give none, and so do a step below the minimum effect
 * (which the test alone would call significant) and a series too short
 * for two segments; the same seed gives the same answer; and the time a
 * series of 200 takes, printed as a TAP comment (no assertion on it).
 */
#include "history/history.h"
#include "th.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 200
#define MAXCP 16

/* The noise: splitmix64 for uniforms, Box-Muller for gaussians. */
static double
uniform01(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double
gaussian(uint64_t *s)
{
    double u = uniform01(s), w = uniform01(s);

    return sqrt(-2 * log(u)) * cos(2 * M_PI * w);
}

/* v[i] = level of the segment i is in (steps at at[0..nat), levels
 * level[0..nat]) + sd * gaussian noise. */
static void
steps(double *v, size_t n, const size_t *at, const double *level, size_t nat,
      double sd, uint64_t seed)
{
    uint64_t s = seed * 0x2545f4914f6cdd1dULL + 7;

    for (size_t i = 0, k = 0; i < n; i++) {
        while (k < nat && i >= at[k])
            k++;
        v[i] = level[k] + sd * gaussian(&s);
    }
}

static size_t
find(const double *v, size_t n, const struct history_cp_opts *o,
     struct history_cp *cp)
{
    size_t k = 0;

    CHECK_EQ_INT(history_changepoints(v, n, o, cp, MAXCP, &k), 0);
    return k;
}

static void
t_one_step(void)
{
    double v[N], level[] = {1000, 1180};
    size_t at[] = {120};
    struct history_cp cp[MAXCP];

    for (uint64_t seed = 1; seed <= 4; seed++) {
        steps(v, N, at, level, 1, 20, seed);
        CHECK_EQ_INT(find(v, N, NULL, cp), 1);
        CHECK_MSG(cp[0].index >= 119 && cp[0].index <= 121,
                  "seed %llu: step at %zu, want 120 +-1",
                  (unsigned long long)seed, cp[0].index);
        CHECK(cp[0].pvalue <= 0.05);
        CHECK(fabs(cp[0].mean_before - 1000) < 10);
        CHECK(fabs(cp[0].mean_after - 1180) < 10);
        CHECK(fabs(cp[0].rel_change - 0.18) < 0.02);
    }
}

static void
t_two_steps(void)
{
    double v[N], level[] = {500, 650, 540};
    size_t at[] = {70, 140};
    struct history_cp cp[MAXCP];

    for (uint64_t seed = 1; seed <= 4; seed++) {
        steps(v, N, at, level, 2, 10, seed);
        CHECK_EQ_INT(find(v, N, NULL, cp), 2);
        CHECK_MSG(cp[0].index >= 69 && cp[0].index <= 71, "first at %zu",
                  cp[0].index);
        CHECK_MSG(cp[1].index >= 139 && cp[1].index <= 141, "second at %zu",
                  cp[1].index);
        CHECK(cp[0].rel_change > 0.25 && cp[1].rel_change < -0.1);
    }
}

/* A short series as the nightly runs give: ten points, a leak from the
 * sixth on. */
static void
t_short_step(void)
{
    double v[10], level[] = {17e6, 64e6};
    size_t at[] = {5};
    struct history_cp cp[MAXCP];

    steps(v, 10, at, level, 1, 2e5, 3);
    CHECK_EQ_INT(find(v, 10, NULL, cp), 1);
    CHECK_EQ_INT(cp[0].index, 5);
}

/* Gaussian noise of sd 0.5 % (light) to 20 % (heavy) of the level, eight
 * seeds each: no alert. */
static void
t_noisy_flat(void)
{
    static const double sd[] = {5, 20, 50, 100, 200};
    double v[N], level[] = {1000};
    size_t none[] = {N};
    struct history_cp cp[MAXCP];

    for (size_t k = 0; k < sizeof(sd) / sizeof(sd[0]); k++)
        for (uint64_t seed = 1; seed <= 8; seed++) {
            size_t n;

            steps(v, N, none, level, 0, sd[k], seed);
            n = find(v, N, NULL, cp);
            CHECK_MSG(n == 0,
                      "sd %.0f seed %llu: %zu change points, the first at "
                      "%zu (%+.1f %%)",
                      sd[k], (unsigned long long)seed, n, n ? cp[0].index : 0,
                      n ? 100 * cp[0].rel_change : 0);
        }
}

/* +3 % at index 100 with little noise: significant, but below the
 * default 5 %; found with a minimum effect of 2 %. */
static void
t_small_step(void)
{
    double v[N], level[] = {1000, 1030};
    size_t at[] = {100};
    struct history_cp cp[MAXCP];
    struct history_cp_opts o;

    steps(v, N, at, level, 1, 3, 1);
    CHECK_EQ_INT(find(v, N, NULL, cp), 0);
    history_cp_defaults(&o);
    o.min_effect = 0.02;
    CHECK_EQ_INT(find(v, N, &o, cp), 1);
    CHECK(cp[0].index >= 99 && cp[0].index <= 101);
}

/* Around zero (growth per round of flat runs): a relative change means
 * nothing there; min_abs is what keeps noise out. */
static void
t_min_abs(void)
{
    double v[40], level[] = {0, 8e6};
    size_t at[] = {20};
    struct history_cp cp[MAXCP];
    struct history_cp_opts o;

    history_cp_defaults(&o);
    o.min_abs = 65536;
    steps(v, 40, at, level, 1, 1e4, 2);
    CHECK_EQ_INT(find(v, 40, &o, cp), 1);
    CHECK_EQ_INT(cp[0].index, 20);
    CHECK(isinf(cp[0].rel_change) || cp[0].rel_change > 10);
    level[1] = 3e4; /* a step of 30 KiB: below min_abs */
    steps(v, 40, at, level, 1, 1e3, 2);
    CHECK_EQ_INT(find(v, 40, &o, cp), 0);
}

/* Fewer than two segments of min_size: nothing, however large the step. */
static void
t_too_short(void)
{
    double v[] = {1, 1, 100, 100, 100};
    struct history_cp cp[MAXCP];
    struct history_cp_opts o;

    CHECK_EQ_INT(find(v, 5, NULL, cp), 0);
    history_cp_defaults(&o);
    o.min_size = 4;
    double w[] = {1, 1, 1, 1, 100, 100, 100};
    CHECK_EQ_INT(find(w, 7, &o, cp), 0);
    CHECK_EQ_INT(find(v, 0, NULL, cp), 0);
    CHECK_EQ_INT(find(v, 1, NULL, cp), 0);
}

static void
t_constant(void)
{
    double v[N];
    struct history_cp cp[MAXCP];

    for (size_t i = 0; i < N; i++)
        v[i] = 4096;
    CHECK_EQ_INT(find(v, N, NULL, cp), 0);
    for (size_t i = 0; i < N; i++)
        v[i] = 0;
    CHECK_EQ_INT(find(v, N, NULL, cp), 0);
}

static void
t_deterministic(void)
{
    double v[60], level[] = {100, 104, 100};
    size_t at[] = {20, 40};
    struct history_cp a[MAXCP], b[MAXCP];
    size_t na, nb;
    struct history_cp_opts o;

    history_cp_defaults(&o);
    o.min_effect = 0;
    o.min_sd = 0;
    steps(v, 60, at, level, 2, 3, 5);
    na = find(v, 60, &o, a);
    nb = find(v, 60, &o, b);
    CHECK_EQ_INT(na, nb);
    CHECK(na > 0);
    for (size_t i = 0; i < na && i < nb && i < MAXCP; i++) {
        CHECK_EQ_INT(a[i].index, b[i].index);
        CHECK(a[i].pvalue == b[i].pvalue);
    }
}

static void
t_bad_input(void)
{
    double v[] = {1, 2, NAN, 4, 5, 6};
    size_t k = 9;

    CHECK_EQ_INT(history_changepoints(v, 6, NULL, NULL, 0, &k), -1);
    CHECK_EQ_INT(k, 0);
}

/* The time a series of 200 with two steps takes (every permutation of
 * every accepted split, and the last, rejected, test): printed only. */
static void
t_time_200(void)
{
    double v[N], level[] = {500, 650, 540};
    size_t at[] = {70, 140};
    struct history_cp cp[MAXCP];
    struct timespec t0, t1;
    double ms;

    steps(v, N, at, level, 2, 10, 1);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_EQ_INT(find(v, N, NULL, cp), 2);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
         (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("# n=200, two steps, 199 permutations: %.1f ms\n", ms);
}

static const struct th_case cases[] = {
    {"a step at a known index is found there", t_one_step},
    {"two steps are both found", t_two_steps},
    {"a step in ten points is found", t_short_step},
    {"noisy flat series: none", t_noisy_flat},
    {"a step below the minimum effect: none", t_small_step},
    {"around zero: the minimum absolute change", t_min_abs},
    {"too short for two segments: none", t_too_short},
    {"a constant series: none", t_constant},
    {"the same seed, the same answer", t_deterministic},
    {"a value that is not finite is refused", t_bad_input},
    {"the time of a series of 200", t_time_200},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
