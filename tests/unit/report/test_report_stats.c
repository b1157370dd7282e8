/*
 * test_report_stats.c — the report's least squares, trends and verdicts
 * (runner/report/report_stats.c) on synthetic series: exact lines, flat series
 * with noise (which must never be called growing), a leak of 16 MiB per
 * round, RSS growing over a flat heap (retention, not a leak), too few
 * rounds, and the thresholds' edges. Also the formatting helpers the
 * verdicts are written with.
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

/* A textbook example: slope 0.8, intercept 0.4, R^2 = 0.64 / 0.8 ... */
static void
t_fit_known(void)
{
    double x[] = {1, 2, 3, 4, 5}, y[] = {2, 4, 5, 4, 5};
    struct report_fit f;

    report__fit_line(x, y, 5, &f);
    CHECK(fabs(f.slope - 0.6) < 1e-12);
    CHECK(fabs(f.intercept - 2.2) < 1e-12);
    CHECK(fabs(f.r2 - 0.6) < 1e-12);
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

/* Flat series with noise of up to 3% (and up to 256 KiB on small heaps)
 * over 3 to 12 rounds, a thousand times: never growing nor shrinking. */
static void
t_flat_noise_never_grows(void)
{
    static const double bases[] = {2 * MiB, 40 * MiB, 512 * MiB};
    double x[12], y[12];
    int moved = 0;

    for (uint64_t seed = 1; seed <= 1000; seed++) {
        size_t n = 3 + seed % 10;
        double base = bases[seed % 3];
        double amp = base * 0.03 > 256 * 1024 ? base * 0.03 : 256 * 1024;
        struct report_fit f;

        series(x, y, n, base, 0, amp, seed);
        report__fit_line(x, y, n, &f);
        if (f.trend != TREND_FLAT) {
            if (moved++ < 3)
                printf("#   seed %llu: %zu rounds, slope %.0f, R2 %.2f\n",
                       (unsigned long long)seed, n, f.slope, f.r2);
        }
    }
    CHECK_EQ_INT(moved, 0);
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

static void
t_retention(void)
{
    struct report_growth g = {0};
    double x[5], heap[5], rss[5];

    series(x, heap, 5, 30 * MiB, 0, 0.5 * MiB, 3);
    series(x, rss, 5, 50 * MiB, 8 * MiB, 0.5 * MiB, 4);
    report__fit_line(x, heap, 5, &g.heap);
    report__fit_line(x, rss, 5, &g.rss);
    report__verdict_of(&g);
    CHECK_EQ_INT(g.heap.trend, TREND_FLAT);
    CHECK_EQ_INT(g.rss.trend, TREND_GROWING);
    CHECK_EQ_INT(g.verdict.kind, VERDICT_RETENTION);
    CHECK_EQ_STR(g.verdict.basis, "rss");
    CHECK_CONTAINS(g.verdict.text, "retention or fragmentation");
    CHECK_CONTAINS(g.verdict.text, "RSS +");
    CHECK(fabs(g.verdict.rate - 8 * MiB) < 0.5 * MiB);
    CHECK_CONTAINS(g.verdict.text, "heap in use is flat");
    CHECK_EQ_STR(report__verdict_name(g.verdict.kind), "retention");
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

/* The floors: a rise just under 1 MiB over the rounds is flat, just over
 * is growing (small heap); on a large heap 10% of the mean rules. */
static void
t_thresholds(void)
{
    static const struct {
        double base, per_round;
        size_t n;
        enum report_trend want;
    } cases[] = {
        {2 * MiB, 0.32 * MiB, 4, TREND_FLAT},     /* 0.96 MiB */
        {2 * MiB, 0.34 * MiB, 4, TREND_GROWING},  /* 1.02 MiB */
        {1024 * MiB, 5 * MiB, 5, TREND_FLAT},     /* 20 MiB < 102 */
        {1024 * MiB, 30 * MiB, 5, TREND_GROWING}, /* 120 MiB */
        {1024 * MiB, 5 * MiB, 30, TREND_GROWING}, /* 145 MiB */
        {10 * MiB, -0.2 * MiB, 4, TREND_FLAT},
    };

    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        double x[32], y[32];
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
    {"fit_degenerate", t_fit_degenerate},
    {"flat_noise_never_grows", t_flat_noise_never_grows},
    {"leak_16mib", t_leak_16mib},
    {"leak_text", t_leak_text},
    {"retention", t_retention},
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
