/*
 * test_report_stats.c — the report's least squares, trends and verdicts
 * (runner/report/report_stats.c) on synthetic series: exact lines, flat series
 * with noise (which must never be called growing), a leak of 16 MiB per
 * round, RSS growing over a flat heap (retention, not a leak), too few
 * rounds, and the thresholds' edges. Thousands of flat series with 3 to
 * 10% noise and an occasional spike are never called growing; a leak of
 * 8 MiB per round is found within 20%; RSS growing with malloc's free
 * memory is retention, RSS growing over a flat heap and a flat malloc is
 * growth outside malloc. Also the formatting helpers the verdicts are
 * written with.
 */
#include "base/strbuf.h"
#include "report/report_int.h"
#include "th.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1024.0 * 1024.0)

/* A deterministic generator for noise: uniform in [-1, 1]. */
static double
noise(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) / (double)(1ULL << 52) - 1.0;
}

/* y = base + per_round * round + amp * noise over rounds 1..n. */
static void
series(double *x, double *y, size_t n, double base, double per_round,
       double amp, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;

    for (size_t i = 0; i < n; i++) {
        x[i] = (double)(i + 1);
        y[i] = base + per_round * x[i] + amp * noise(&s);
    }
}

static void
t_fit_exact(void)
{
    double x[] = {1, 2, 3, 4, 5}, y[5];
    struct report_fit f;

    for (int i = 0; i < 5; i++)
        y[i] = 3 + 2 * x[i];
    CHECK_EQ_INT(report__fit_line(x, y, 5, &f), 0);
    CHECK(fabs(f.slope - 2) < 1e-12);
    CHECK(fabs(f.intercept - 3) < 1e-12);
    CHECK(fabs(f.r2 - 1) < 1e-12);
    CHECK(fabs(f.mean - 9) < 1e-12);
    CHECK(fabs(f.span - 4) < 1e-12);
    CHECK_EQ_INT(f.n, 5);
}

/* A textbook example: least squares gives slope 0.6, intercept 2.2,
 * R^2 0.6; Theil-Sen the median of the ten pairwise slopes, (2/3 + 3/4)
 * / 2 = 17/24, and the median of y - 17/24 x, 35/24. */
static void
t_fit_known(void)
{
    double x[] = {1, 2, 3, 4, 5}, y[] = {2, 4, 5, 4, 5};
    struct report_fit f;

    report__fit_line(x, y, 5, &f);
    CHECK(fabs(f.ls_slope - 0.6) < 1e-12);
    CHECK(fabs(f.r2 - 0.6) < 1e-12);
    CHECK(fabs(f.slope - 17.0 / 24) < 1e-12);
    CHECK(fabs(f.intercept - 35.0 / 24) < 1e-12);
    CHECK(fabs(f.median - 4) < 1e-12);
    /* the lower of the last two (4) less the first (2) */
    CHECK(fabs(f.held - 2) < 1e-12);
}

/* Thousands of rounds: slopes between rounds half the series apart, so
 * the fit stays fast, and as exact on a line. */
static void
t_fit_long(void)
{
    static double x[3001], y[3001];
    struct report_fit f;

    for (int i = 0; i < 3001; i++) {
        x[i] = i + 1;
        y[i] = 7 * MiB + 3 * x[i] * 1024 + (i == 1500 ? 900 * MiB : 0);
    }
    report__fit_line(x, y, 3001, &f);
    CHECK(fabs(f.slope - 3 * 1024) < 1e-6);
    CHECK(fabs(f.intercept - 7 * MiB) < 1);
}

/* One wild round moves a least-squares line a lot and Theil-Sen's
 * little. */
static void
t_fit_robust(void)
{
    double x[] = {1, 2, 3, 4, 5, 6}, y[] = {10, 10, 10, 10, 10, 40};
    struct report_fit f;

    report__fit_line(x, y, 6, &f);
    CHECK(f.slope == 0);
    CHECK(f.ls_slope > 3);
    CHECK(f.held == 0);
    CHECK_EQ_INT(f.trend, TREND_FLAT);
}

static void
t_fit_degenerate(void)
{
    double x[] = {1, 2, 3, 4}, y[] = {7, 7, 7, 7}, same[] = {2, 2, 2, 2};
    struct report_fit f;

    CHECK_EQ_INT(report__fit_line(x, y, 0, &f), -1);
    CHECK_EQ_INT(f.n, 0);
    CHECK_EQ_INT(f.trend, TREND_UNKNOWN);
    report__fit_line(x, y, 4, &f);
    CHECK(f.slope == 0 && f.r2 == 0);
    CHECK_EQ_INT(f.trend, TREND_FLAT);
    report__fit_line(same, x, 4, &f); /* one round, four values */
    CHECK(f.slope == 0 && f.span == 0);
    CHECK_EQ_INT(f.trend, TREND_FLAT);
}

/* A flat series of n rounds with noise of a fraction amp of its level
 * (and at least 256 KiB on small heaps), one round in three of them
 * spiking by 20 to 60%. */
static void
noisy_flat(double *x, double *y, size_t n, double base, double frac,
           uint64_t seed)
{
    uint64_t s = seed * 0x2545f4914f6cdd1dULL + 7;
    double amp = base * frac > 256 * 1024 ? base * frac : 256 * 1024;

    series(x, y, n, base, 0, amp, seed);
    if (noise(&s) > 1.0 / 3) {
        size_t k = (size_t)((noise(&s) + 1) / 2 * (double)n) % n;

        y[k] *= 1.4 + 0.2 * noise(&s);
    }
}

/* Flat series with 3 to 10% noise and a spike now and then, over 3 to 12
 * rounds, on heaps of 2 MiB to 1 GiB, twenty thousand times: never
 * growing. */
static void
t_flat_noise_never_grows(void)
{
    static const double bases[] = {2 * MiB,   8 * MiB,   40 * MiB,
                                   100 * MiB, 512 * MiB, 1024 * MiB};
    double x[12], y[12];
    int grew = 0;

    for (uint64_t seed = 1; seed <= 20000; seed++) {
        size_t n = 3 + seed % 10;
        double base = bases[seed % ARRAY_LEN(bases)];
        double frac = 0.03 + 0.07 * (double)((seed / 10) % 8) / 7;
        struct report_fit f;

        noisy_flat(x, y, n, base, frac, seed);
        report__fit_line(x, y, n, &f);
        if (f.trend == TREND_GROWING && grew++ < 3)
            printf("#   seed %llu: %zu rounds, %.0f%% noise, slope %.0f, "
                   "R2 %.2f\n",
                   (unsigned long long)seed, n, frac * 100, f.slope, f.r2);
    }
    CHECK_EQ_INT(grew, 0);
}

/* A leak of 8 MiB per round over a working set of 24 to 64 MiB with 3%
 * noise: growing from the fifth round, the rate within 20%. */
static void
t_leak_8mib_within_20pct(void)
{
    static const double bases[] = {24 * MiB, 40 * MiB, 64 * MiB};
    int missed = 0, off = 0;

    for (uint64_t seed = 1; seed <= 3000; seed++) {
        size_t n = 5 + seed % 8;
        double base = bases[seed % 3], x[12], y[12];
        struct report_fit f;

        series(x, y, n, base, 8 * MiB, base * 0.03, seed);
        report__fit_line(x, y, n, &f);
        missed += f.trend != TREND_GROWING;
        off += fabs(f.slope - 8 * MiB) > 0.2 * 8 * MiB;
    }
    CHECK_EQ_INT(missed, 0);
    CHECK_EQ_INT(off, 0);
}

static void
t_leak_16mib(void)
{
    struct report_growth g = {0};
    double x[6], y[6], rss[6];

    series(x, y, 6, 40 * MiB, 16 * MiB, 1 * MiB, 7);
    report__fit_line(x, y, 6, &g.heap);
    series(x, rss, 6, 60 * MiB, 16.5 * MiB, 1 * MiB, 8);
    report__fit_line(x, rss, 6, &g.rss);
    report__verdict_of(&g);
    CHECK_EQ_INT(g.heap.trend, TREND_GROWING);
    CHECK_MSG(fabs(g.heap.slope - 16 * MiB) < 0.5 * MiB, "slope %.0f",
              g.heap.slope);
    CHECK(g.heap.r2 > 0.98);
    CHECK_EQ_INT(g.verdict.kind, VERDICT_GROWING);
    CHECK_EQ_STR(g.verdict.basis, "heap_inuse");
    CHECK_CONTAINS(g.verdict.text, "growing: +1");
    CHECK_CONTAINS(g.verdict.text, " MiB/round, R\u00b2 ");
    CHECK_CONTAINS(g.verdict.text, "heap in use");
    CHECK_EQ_STR(report__verdict_name(g.verdict.kind), "growing");
}

/* The verdict's text reads as docs/report.md shows. The noise (+a, -a,
 * -a, +a) is uncorrelated with the rounds, so the slope is exactly 16 MiB
 * and R^2 = 1280 / (1280 + 4 * 1.8^2) = 0.990. */
static void
t_leak_text(void)
{
    static const double e[4] = {1.8, -1.8, -1.8, 1.8};
    struct report_growth g = {0};
    double x[4] = {1, 2, 3, 4}, y[4];

    for (int i = 0; i < 4; i++)
        y[i] = 10 * MiB + 16 * MiB * x[i] + e[i] * MiB;
    report__fit_line(x, y, 4, &g.heap);
    report__verdict_of(&g);
    CHECK_CONTAINS(g.verdict.text, "growing: +16.0 MiB/round, R\u00b2 0.99");
}

/* Fragmentation: RSS and malloc's free memory grow together over a flat
 * heap. */
static void
t_retention(void)
{
    struct report_growth g = {0};
    double x[5], heap[5], rss[5], arena[5], fordblks[5];

    series(x, heap, 5, 30 * MiB, 0, 0.5 * MiB, 3);
    series(x, rss, 5, 50 * MiB, 8 * MiB, 0.5 * MiB, 4);
    series(x, arena, 5, 32 * MiB, 8 * MiB, 0.5 * MiB, 5);
    series(x, fordblks, 5, 2 * MiB, 8 * MiB, 0.2 * MiB, 6);
    report__fit_line(x, heap, 5, &g.heap);
    report__fit_line(x, rss, 5, &g.rss);
    report__fit_line(x, arena, 5, &g.malloc);
    report__fit_line(x, fordblks, 5, &g.mfree);
    report__verdict_of(&g);
    CHECK_EQ_INT(g.heap.trend, TREND_FLAT);
    CHECK_EQ_INT(g.rss.trend, TREND_GROWING);
    CHECK_EQ_INT(g.verdict.kind, VERDICT_RETENTION);
    CHECK_EQ_STR(g.verdict.basis, "rss");
    CHECK_CONTAINS(g.verdict.text, "retention or fragmentation");
    CHECK_CONTAINS(g.verdict.text, "RSS +");
    CHECK(fabs(g.verdict.rate - 8 * MiB) < 0.5 * MiB);
    CHECK_CONTAINS(g.verdict.text, "heap in use is flat (malloc keeps "
                                   "freed memory, not leaked)");
    CHECK_EQ_STR(report__verdict_name(g.verdict.kind), "retention");
    /* free memory growing alone says the same */
    series(x, arena, 5, 40 * MiB, 0, 0.5 * MiB, 5);
    report__fit_line(x, arena, 5, &g.malloc);
    report__verdict_of(&g);
    CHECK_EQ_INT(g.verdict.kind, VERDICT_RETENTION);
    /* without mallinfo2 there is no telling: retention, as before */
    memset(&g.malloc, 0, sizeof(g.malloc));
    memset(&g.mfree, 0, sizeof(g.mfree));
    report__verdict_of(&g);
    CHECK_EQ_INT(g.verdict.kind, VERDICT_RETENTION);
}

/* An mmap'ed buffer growing 8 MiB a round: RSS and RssAnon up, heap in
 * use, malloc's arena and its free memory flat. */
static void
t_outside_malloc(void)
{
    struct report_growth g = {0};
    double x[6], heap[6], rss[6], arena[6], fordblks[6], out[6];

    series(x, heap, 6, 30 * MiB, 0, 0.6 * MiB, 3);
    series(x, rss, 6, 50 * MiB, 8 * MiB, 0.8 * MiB, 4);
    series(x, arena, 6, 33 * MiB, 0, 0.5 * MiB, 5);
    series(x, fordblks, 6, 2 * MiB, 0, 0.1 * MiB, 6);
    for (int i = 0; i < 6; i++)
        out[i] = rss[i] - 1 * MiB - arena[i];
    report__fit_line(x, heap, 6, &g.heap);
    report__fit_line(x, rss, 6, &g.rss);
    report__fit_line(x, rss, 6, &g.anon);
    report__fit_line(x, arena, 6, &g.malloc);
    report__fit_line(x, fordblks, 6, &g.mfree);
    report__fit_line(x, out, 6, &g.outside);
    report__verdict_of(&g);
    CHECK_EQ_INT(g.verdict.kind, VERDICT_OUTSIDE);
    CHECK_EQ_STR(report__verdict_name(g.verdict.kind), "outside_malloc");
    CHECK_EQ_STR(g.verdict.basis, "rss");
    CHECK(fabs(g.verdict.rate - 8 * MiB) < 1.6 * MiB);
    CHECK_CONTAINS(g.verdict.text, "growing outside malloc: RSS +");
    CHECK_CONTAINS(g.verdict.text,
                   "while heap in use and malloc's arena are flat (mmap, "
                   "thread stacks or another allocator)");
    /* the same growth in the profiler's own tables alone is not the plan's */
    series(x, out, 6, 3 * MiB, 0, 0.3 * MiB, 7);
    report__fit_line(x, out, 6, &g.outside);
    report__fit_line(x, rss, 6, &g.own);
    report__verdict_of(&g);
    CHECK_EQ_INT(g.verdict.kind, VERDICT_FLAT);
    CHECK_CONTAINS(g.verdict.text, "is the heap profiler's own tables");
}

/* The verdict names the first plan site among the growing ones. */
static void
t_leak_names_site(void)
{
    struct report_growth g = {0};
    double x[5], heap[5];

    series(x, heap, 5, 30 * MiB, 8 * MiB, 0.5 * MiB, 3);
    report__fit_line(x, heap, 5, &g.heap);
    g.site = "leak_round_buffers";
    report__verdict_of(&g);
    CHECK_CONTAINS(g.verdict.text, "(heap in use: live objects accumulate; "
                                   "most in leak_round_buffers)");
}

/* Both growing: a leak (the live heap grows), not retention. */
static void
t_leak_wins_over_retention(void)
{
    struct report_growth g = {0};
    double x[5], heap[5], rss[5];

    series(x, heap, 5, 30 * MiB, 4 * MiB, 0, 1);
    series(x, rss, 5, 50 * MiB, 20 * MiB, 0, 1);
    report__fit_line(x, heap, 5, &g.heap);
    report__fit_line(x, rss, 5, &g.rss);
    report__verdict_of(&g);
    CHECK_EQ_INT(g.verdict.kind, VERDICT_GROWING);
}

static void
t_not_enough(void)
{
    struct report_growth g = {0};
    double x[] = {1, 2}, y[] = {10 * MiB, 100 * MiB};

    report__fit_line(x, y, 2, &g.heap);
    report__verdict_of(&g);
    CHECK_EQ_INT(g.heap.trend, TREND_UNKNOWN);
    CHECK_EQ_INT(g.verdict.kind, VERDICT_NOT_ENOUGH);
    CHECK_EQ_STR(g.verdict.text, "not enough rounds to say (2 rounds; "
                                 "needs 3)");
    memset(&g, 0, sizeof(g));
    report__verdict_of(&g);
    CHECK_EQ_INT(g.verdict.kind, VERDICT_NO_DATA);
    CHECK_CONTAINS(g.verdict.text, "not enough rounds to say (no heap");
    CHECK_EQ_STR(report__verdict_name(g.verdict.kind), "not enough rounds");
    CHECK(g.verdict.basis == NULL);
}

static void
t_cgroup_only(void)
{
    struct report_growth g = {0};
    double x[4], y[4];

    series(x, y, 4, 20 * MiB, 5 * MiB, 0.2 * MiB, 9);
    report__fit_line(x, y, 4, &g.cgroup);
    report__verdict_of(&g);
    CHECK_EQ_INT(g.verdict.kind, VERDICT_GROWING);
    CHECK_EQ_STR(g.verdict.basis, "cgroup");
    CHECK_CONTAINS(g.verdict.text, "cgroup usage; no heap snapshots");
    /* Heap snapshots in two rounds only: cgroup decides, and says so. */
    report__fit_line(x, y, 2, &g.heap);
    report__verdict_of(&g);
    CHECK_EQ_INT(g.verdict.kind, VERDICT_GROWING);
    CHECK_CONTAINS(g.verdict.text, "heap snapshots in 2 rounds only");
}

static void
t_shrinking(void)
{
    struct report_growth g = {0};
    double x[4], y[4];

    series(x, y, 4, 200 * MiB, -20 * MiB, 0, 1);
    report__fit_line(x, y, 4, &g.heap);
    report__verdict_of(&g);
    CHECK_EQ_INT(g.verdict.kind, VERDICT_SHRINKING);
    CHECK_CONTAINS(g.verdict.text, "shrinking: -20.0 MiB/round");
}

/* The floors: a rise under 1 MiB over the rounds is flat (small heap);
 * so is one whose last two rounds do not both stand 1 MiB above the first
 * third; on a large heap 20% of the median rules. */
static void
t_thresholds(void)
{
    static const struct {
        double base, per_round;
        size_t n;
        enum report_trend want;
    } cases[] = {
        {2 * MiB, 0.32 * MiB, 4, TREND_FLAT},      /* rise 0.96 MiB */
        {2 * MiB, 0.45 * MiB, 4, TREND_FLAT},      /* held 0.90 MiB */
        {2 * MiB, 0.52 * MiB, 4, TREND_GROWING},   /* held 1.04 MiB */
        {1024 * MiB, 30 * MiB, 5, TREND_FLAT},     /* 90 MiB < 20% */
        {1024 * MiB, 100 * MiB, 5, TREND_GROWING}, /* 300 MiB > 265 */
        {1024 * MiB, 5 * MiB, 30, TREND_FLAT},     /* 95 MiB < 20% */
        {1024 * MiB, 12 * MiB, 40, TREND_GROWING}, /* 312 MiB > 254 */
        {10 * MiB, -0.2 * MiB, 4, TREND_FLAT},
        {200 * MiB, -20 * MiB, 6, TREND_SHRINKING}, /* held 80 MiB > 26 */
    };

    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        double x[64], y[64];
        struct report_fit f;

        series(x, y, cases[i].n, cases[i].base, cases[i].per_round, 0, 1);
        report__fit_line(x, y, cases[i].n, &f);
        CHECK_MSG(f.trend == cases[i].want, "case %zu: %s, want %s", i,
                  report__trend_name(f.trend),
                  report__trend_name(cases[i].want));
    }
}

/* A jumpy series: big rise at the end but a poor fit stays flat. */
static void
t_poor_fit_is_flat(void)
{
    double x[] = {1, 2, 3, 4, 5, 6}, y[6];
    double v[] = {50, 10, 60, 5, 55, 70};
    struct report_fit f;

    for (int i = 0; i < 6; i++)
        y[i] = v[i] * MiB;
    report__fit_line(x, y, 6, &f);
    CHECK(f.r2 < REPORT_MIN_R2);
    CHECK_EQ_INT(f.trend, TREND_FLAT);
}

static void
t_formatting(void)
{
    char b[64];
    struct strbuf sb;

    report__fmt_rate(16 * MiB, b, sizeof(b));
    CHECK_EQ_STR(b, "+16.0 MiB/round");
    report__fmt_rate(-512 * 1024, b, sizeof(b));
    CHECK_EQ_STR(b, "-512.0 KiB/round");
    report__fmt_rate(0, b, sizeof(b));
    CHECK_EQ_STR(b, "+0 B/round");
    report__fmt_bytes(-1, b, sizeof(b));
    CHECK_EQ_STR(b, "-");
    report__fmt_bytes(268435456, b, sizeof(b));
    CHECK_EQ_STR(b, "256.0 MiB");
    report__fmt_ms(850, b, sizeof(b));
    CHECK_EQ_STR(b, "850 ms");
    report__fmt_ms(12345, b, sizeof(b));
    CHECK_EQ_STR(b, "12.3 s");
    report__fmt_ms(3723000, b, sizeof(b));
    CHECK_EQ_STR(b, "62m03s");
    report__fmt_ms(-1, b, sizeof(b));
    CHECK_EQ_STR(b, "-");
    strbuf_init(&sb);
    report__html_esc(&sb, "<a href=\"x\">&'</a>");
    CHECK_EQ_STR(sb.buf, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
    strbuf_release(&sb);
}

static void
t_parse_time(void)
{
    CHECK_EQ_INT(time_parse_rfc3339("1970-01-01T00:00:01.5Z"), 1500000000LL);
    CHECK_EQ_INT(time_parse_rfc3339("2026-11-29T18:45:29.123Z"),
                 1795977929123000000LL);
    CHECK_EQ_INT(time_parse_rfc3339("2026-11-29T18:45:29Z"),
                 1795977929000000000LL);
    CHECK_EQ_INT(time_parse_rfc3339("2026-11-29 18:45"), 0);
    CHECK_EQ_INT(time_parse_rfc3339("2026-11-29T18:45:29.1+02:00"),
                 time_parse_rfc3339("2026-11-29T16:45:29.1Z"));
    CHECK_EQ_INT(time_parse_rfc3339("0001-01-01T00:00:00Z"), 0);
    CHECK_EQ_INT(time_parse_rfc3339(NULL), 0);
}

static const struct th_case cases[] = {
    {"fit_exact", t_fit_exact},
    {"fit_known", t_fit_known},
    {"fit_robust", t_fit_robust},
    {"fit_long", t_fit_long},
    {"fit_degenerate", t_fit_degenerate},
    {"flat_noise_never_grows", t_flat_noise_never_grows},
    {"leak_8mib_within_20pct", t_leak_8mib_within_20pct},
    {"leak_16mib", t_leak_16mib},
    {"leak_text", t_leak_text},
    {"retention", t_retention},
    {"outside_malloc", t_outside_malloc},
    {"leak_names_site", t_leak_names_site},
    {"leak_wins_over_retention", t_leak_wins_over_retention},
    {"not_enough", t_not_enough},
    {"cgroup_only", t_cgroup_only},
    {"shrinking", t_shrinking},
    {"thresholds", t_thresholds},
    {"poor_fit_is_flat", t_poor_fit_is_flat},
    {"formatting", t_formatting},
    {"parse_time", t_parse_time},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
