/*
 * test_metrics.c — SDK metrics: histogram quantiles (exact, then within 1%
 * once bucketed), record bytes in Testground's shape, tags, the registry
 * under many threads, flushing rules, and diagnostics.out samples. Records
 * are captured through ty__metrics_set_sink instead of going to a
 * coordinator.
 */
#include "metrics_cap.h"
#include "th.h"
#include "ty_int.h"
#include "ty_metrics.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- histograms -------------------------------------------------------- */

static void
t_hist_exact(void)
{
    struct ty__hist h;
    struct ty__hist_summary s;

    ty__hist_init(&h);
    for (int i = 100; i >= 1; i--)
        CHECK_EQ_INT(ty__hist_add(&h, i), 0);
    ty__hist_summarize(&h, &s);
    CHECK_EQ_INT(s.count, 100);
    CHECK(s.min == 1 && s.max == 100);
    CHECK(fabs(s.mean - 50.5) < 1e-12);
    CHECK(fabs(s.variance - 833.25) < 1e-9);
    CHECK(fabs(s.stddev - sqrt(833.25)) < 1e-9);
    /* go-metrics' interpolation around q(n+1). */
    CHECK(fabs(s.q[0] - 50.5) < 1e-12);
    CHECK(fabs(s.q[1] - 75.75) < 1e-12);
    CHECK(fabs(s.q[2] - 95.95) < 1e-12);
    CHECK(fabs(s.q[3] - 99.99) < 1e-12);
    CHECK(s.q[4] == 100 && s.q[5] == 100);
    CHECK(!h.bucketed);
    CHECK_EQ_INT(ty__hist_add(&h, NAN), 0);
    CHECK_EQ_INT(ty__hist_add(&h, INFINITY), 0);
    CHECK_EQ_INT(h.count, 100);
    ty__hist_release(&h);
    ty__hist_summarize(&h, &s);
    CHECK(s.count == 0 && s.q[0] == 0 && s.max == 0);
}

static uint64_t rng = 88172645463325252ULL;

static double
uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static int
cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Feed n values from gen into a histogram and compare its quantiles with
 * the exact order statistics; returns the worst relative error. */
static double
worst_error(double (*gen)(void), size_t n)
{
    double *v = malloc(n * sizeof(*v)), worst = 0;
    const double qs[] = {0,   0.001, 0.01, 0.1,   0.25,   0.5, 0.75,
                         0.9, 0.95,  0.99, 0.999, 0.9999, 1};
    struct ty__hist h;

    ty__hist_init(&h);
    for (size_t i = 0; i < n; i++) {
        v[i] = gen();
        ty__hist_add(&h, v[i]);
    }
    CHECK(h.bucketed);
    qsort(v, n, sizeof(*v), cmp_d);
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
        double want = v[(size_t)floor(qs[i] * (double)(n - 1))];
        double got = ty__hist_quantile(&h, qs[i]);
        double err = want == 0 ? fabs(got) : fabs(got - want) / fabs(want);

        if (err > worst)
            worst = err;
    }
    CHECK(h.min == v[0] && h.max == v[n - 1]);
    ty__hist_release(&h);
    free(v);
    return worst;
}

static double
gen_latency(void)
{
    return exp(uniform() * 20 - 14); /* 1e-6 s .. 400 s, log-uniform */
}

static double
gen_signed(void)
{
    double u = uniform();

    if (u < 0.1)
        return 0;
    return (u < 0.4 ? -1 : 1) * exp(uniform() * 10);
}

static double
gen_wide(void)
{
    return exp((uniform() * 2 - 1) * 450); /* 1e-195 .. 1e195 */
}

static void
t_hist_bucketed_error(void)
{
    double e1 = worst_error(gen_latency, 200000);
    double e2 = worst_error(gen_signed, 50000);

    CHECK_MSG(e1 <= 0.01 + 1e-12, "latency: worst relative error %g", e1);
    CHECK_MSG(e2 <= 0.01 + 1e-12, "signed: worst relative error %g", e2);
    printf("# worst relative error: %.5f (log-uniform), %.5f (signed)\n", e1,
           e2);
}

static void
t_hist_bounded(void)
{
    double *v = malloc(100000 * sizeof(*v));
    struct ty__hist h;

    ty__hist_init(&h);
    for (int i = 0; i < 100000; i++) {
        v[i] = gen_wide();
        ty__hist_add(&h, v[i]);
    }
    qsort(v, 100000, sizeof(*v), cmp_d);
    CHECK(h.bucketed);
    CHECK(h.samples == NULL);
    /* 10^390 between extremes: the lowest buckets were merged. */
    CHECK_EQ_INT(h.pos.n, TY__HIST_MAX_BUCKETS);
    CHECK_EQ_INT(h.pos.total, 100000);
    /* The top 10^35 stays bucketed, so high quantiles stay within 1%. */
    for (int i = 0; i < 3; i++) {
        double q = (double[]){0.95, 0.99, 1}[i];
        double want = v[(size_t)floor(q * 99999)];

        CHECK_MSG(fabs(ty__hist_quantile(&h, q) / want - 1) <= 0.01 + 1e-12,
                  "q %g: %g vs %g", q, ty__hist_quantile(&h, q), want);
    }
    ty__hist_release(&h);
    free(v);
    /* Just past the cap, quantiles are still within 1%. */
    CHECK(worst_error(gen_latency, TY__HIST_EXACT_MAX + 1) <= 0.01 + 1e-12);
}

/* ---- records ----------------------------------------------------------- */

static void
t_records(void)
{
    struct ty__buf b = {0};
    struct ty__hist h;
    struct ty__hist_summary s;
    const double rates[4] = {1.5, 0.25, 0.125, 2};

    ty__record_counter(&b, 1690000000123456789, "requests,round=3", 42);
    ty__record_value(&b, 7, TY__M_GAUGE, "temp", 0.1);
    ty__record_value(&b, 8, TY__M_POINT, "rtt", 0.30000000000000004);
    CHECK_EQ_STR(b.buf,
                 "{\"ts\":1690000000123456789,\"type\":\"counter\","
                 "\"name\":\"requests,round=3\",\"measures\":{\"count\":42}}\n"
                 "{\"ts\":7,\"type\":\"gauge\",\"name\":\"temp\","
                 "\"measures\":{\"value\":0.1}}\n"
                 "{\"ts\":8,\"type\":\"point\",\"name\":\"rtt\","
                 "\"measures\":{\"value\":0.30000000000000004}}\n");
    ty__buf_release(&b);
    ty__hist_init(&h);
    for (int i = 1; i <= 4; i++)
        ty__hist_add(&h, i);
    ty__hist_summarize(&h, &s);
    ty__record_hist(&b, 9, "d", &s, NULL);
    CHECK_EQ_STR(b.buf,
                 "{\"ts\":9,\"type\":\"histogram\",\"name\":\"d\",\"measures\":"
                 "{\"count\":4,\"max\":4,\"mean\":2.5,\"min\":1,\"p50\":2.5,"
                 "\"p75\":3.75,\"p95\":4,\"p99\":4,\"p999\":4,\"p9999\":4,"
                 "\"stddev\":1.118033988749895,\"variance\":1.25}}\n");
    ty__buf_release(&b);
    ty__record_hist(&b, 9, "t", &s, rates);
    CHECK_CONTAINS(b.buf, "\"type\":\"timer\"");
    CHECK_CONTAINS(b.buf, "{\"count\":4,\"m1\":1.5,\"m15\":0.125,"
                          "\"m5\":0.25,\"max\":4,\"mean\":2.5,"
                          "\"meanrate\":2,\"min\":1,\"p50\":2.5,");
    ty__buf_release(&b);
    ty__hist_release(&h);
}

static void
t_json_text(void)
{
    struct ty__buf b = {0};
    const double vals[] = {3, -0.5, 1e21, 1e-7, 123456789.125, 2.5e-310};

    ty__json_quote(&b, "a\"b\\c\nd\te\x01 é");
    CHECK_EQ_STR(b.buf, "\"a\\\"b\\\\c\\nd\\te\\u0001 é\"");
    ty__buf_release(&b);
    ty__buf_add_double(&b, NAN);
    ty__buf_addf(&b, " ");
    ty__buf_add_double(&b, -INFINITY);
    CHECK_EQ_STR(b.buf, "null null");
    ty__buf_release(&b);
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        ty__buf_add_double(&b, vals[i]);
        CHECK_MSG(strtod(b.buf, NULL) == vals[i], "%s", b.buf);
        ty__buf_release(&b);
    }
    for (int i = 0; i < 10000; i++) {
        double v = (uniform() - 0.5) * pow(10, (int)(uniform() * 40) - 20);

        ty__buf_add_double(&b, v);
        CHECK_MSG(strtod(b.buf, NULL) == v, "%s", b.buf);
        ty__buf_release(&b);
    }
    ty__buf_add_double(&b, 3);
    CHECK_EQ_STR(b.buf, "3");
    ty__buf_release(&b);
}

static void
t_split_name(void)
{
    const char *base, *keys[4], *values[4];
    char buf[128];
    int n;

    n = ty__metrics_split_name("duration,round=3,size=512MB", buf, sizeof(buf),
                               &base, keys, values, 4);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_STR(base, "duration");
    CHECK_EQ_STR(keys[0], "round");
    CHECK_EQ_STR(values[0], "3");
    CHECK_EQ_STR(keys[1], "size");
    CHECK_EQ_STR(values[1], "512MB");
    n = ty__metrics_split_name("x,bad,a=b=c,k=,=v", buf, sizeof(buf), &base,
                               keys, values, 4);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_STR(base, "x");
    CHECK_EQ_STR(keys[0], "k");
    CHECK_EQ_STR(values[0], "");
    CHECK_EQ_STR(keys[1], "");
    CHECK_EQ_STR(values[1], "v");
    CHECK_EQ_INT(ty__metrics_split_name("plain", buf, sizeof(buf), &base, keys,
                                        values, 4),
                 0);
    CHECK_EQ_STR(base, "plain");
}

/* ---- through a handle -------------------------------------------------- */

#define NTHREADS 8
#define PER_THREAD 20000

static void *
hammer(void *arg)
{
    struct ty *ty = arg;

    for (int i = 0; i < PER_THREAD; i++) {
        ty_counter_add(ty, "ops,kind=put", 1);
        ty_histogram_observe(ty, "size", i % 100);
        if (i % 1000 == 0)
            ty_point(ty, "mark", i);
    }
    return NULL;
}

static void
t_threads(void)
{
    struct ty *ty = cap_handle("0");
    pthread_t th[NTHREADS];
    cJSON *rec;

    cap_reset();
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, hammer, ty);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ_INT(ty_metrics_flush(ty), 0);
    check_records(cap_results.buf);
    rec = last_record(cap_results.buf, "counter", "ops,kind=put");
    CHECK(rec != NULL && measure(rec, "count") == NTHREADS * PER_THREAD);
    cJSON_Delete(rec);
    rec = last_record(cap_results.buf, "histogram", "size");
    CHECK(rec != NULL && measure(rec, "count") == NTHREADS * PER_THREAD);
    CHECK(rec != NULL && measure(rec, "max") == 99 &&
          fabs(measure(rec, "mean") - 49.5) < 1e-9);
    /* Order statistic of rank n/2 is 49; bucketed, within 1% of it. */
    CHECK(rec != NULL && fabs(measure(rec, "p50") / 49 - 1) <= 0.0101);
    cJSON_Delete(rec);
    CHECK_EQ_INT(count_lines(cap_results.buf, "\"name\":\"mark\""),
                 NTHREADS * (PER_THREAD / 1000));
    cap_handle_free(ty);
    cap_reset();
}

static void
t_flush_rules(void)
{
    struct ty *ty = cap_handle("0");
    int64_t t0;
    double secs;
    cJSON *rec;

    cap_reset();
    ty_counter_add(ty, "a", 2);
    ty_gauge_set(ty, "g,unit=bytes", 1.5);
    ty_counter_add(ty, "", 1);
    ty_counter_add(ty, NULL, 1);
    t0 = ty_timer_start(ty);
    usleep(20000);
    secs = ty_timer_stop(ty, "phase", t0);
    CHECK(secs >= 0.02 && secs < 5);
    /* Only what changed since the last render. */
    CHECK_EQ_INT(ty__metrics_flush_changed(ty), 0);
    CHECK_EQ_INT(check_records(cap_results.buf), 3);
    CHECK_EQ_INT(ty__metrics_flush_changed(ty), 0);
    CHECK_EQ_INT(check_records(cap_results.buf), 3);
    ty_counter_add(ty, "a", 1);
    CHECK_EQ_INT(ty__metrics_flush_changed(ty), 0);
    CHECK_EQ_INT(check_records(cap_results.buf), 4);
    rec = last_record(cap_results.buf, "counter", "a");
    CHECK(rec != NULL && measure(rec, "count") == 3);
    cJSON_Delete(rec);
    rec = last_record(cap_results.buf, "timer", "phase");
    CHECK(rec != NULL && measure(rec, "count") == 1 &&
          fabs(measure(rec, "max") - secs) < 1e-9 &&
          measure(rec, "meanrate") > 0 && measure(rec, "m1") == 0);
    cJSON_Delete(rec);
    /* ty_metrics_flush writes all; so does the end of the case. */
    CHECK_EQ_INT(ty_metrics_flush(ty), 0);
    CHECK_EQ_INT(check_records(cap_results.buf), 7);
    cap_handle_free(ty);
    CHECK_EQ_INT(check_records(cap_results.buf), 10);
    rec = last_record(cap_results.buf, "gauge", "g,unit=bytes");
    CHECK(rec != NULL && measure(rec, "value") == 1.5);
    cJSON_Delete(rec);
    /* After fini (or outside ty_main) calls do nothing. */
    ty_counter_add(NULL, "a", 1);
    CHECK_EQ_INT(ty_metrics_flush(NULL), 0);
    cap_reset();
}

static void
t_results_every_second(void)
{
    struct ty *ty = cap_handle("0");

    cap_reset();
    ty_counter_add(ty, "early", 1);
    ty_point(ty, "p", 1);
    usleep(1300000);
    pthread_mutex_lock(&cap_lock);
    CHECK(cap_results.buf != NULL &&
          strstr(cap_results.buf, "\"name\":\"early\"") != NULL &&
          strstr(cap_results.buf, "\"type\":\"point\",\"name\":\"p\""));
    CHECK(cap_diag.len == 0);
    pthread_mutex_unlock(&cap_lock);
    cap_handle_free(ty);
    cap_reset();
}

static void
t_diagnostics(void)
{
    struct ty *ty = cap_handle("50ms");
    cJSON *rec;
    int n;

    cap_reset();
    usleep(330000);
    cap_handle_free(ty);
    n = count_lines(cap_diag.buf, "\"name\":\"process.rss_bytes\"");
    CHECK_MSG(n >= 3 && n <= 9, "%d samples", n);
    check_records(cap_diag.buf);
    rec = last_record(cap_diag.buf, "gauge", "process.rss_bytes");
    CHECK(rec != NULL && measure(rec, "value") > 1 << 20);
    cJSON_Delete(rec);
    rec = last_record(cap_diag.buf, "gauge", "process.threads");
    CHECK(rec != NULL && measure(rec, "value") >= 1);
    cJSON_Delete(rec);
    rec = last_record(cap_diag.buf, "gauge", "process.rss_hwm_bytes");
    CHECK(rec != NULL && measure(rec, "value") > 1 << 20);
    cJSON_Delete(rec);
    rec = last_record(cap_diag.buf, "gauge", "process.cpu_user_seconds");
    CHECK(rec != NULL && measure(rec, "value") >= 0);
    cJSON_Delete(rec);
    if (access("/proc/self/cgroup", R_OK) == 0) {
        rec = last_record(cap_diag.buf, "gauge", "cgroup.memory.usage_bytes");
        CHECK(rec != NULL && measure(rec, "value") > 0);
        cJSON_Delete(rec);
    }
    cap_reset();
}

static void
t_procstat_render(void)
{
    struct ty__procstat ps = {.rss = 1000,
                              .hwm = 2000,
                              .rss_anon = -1,
                              .threads = 3,
                              .heap_inuse = 10,
                              .cpu_user = 0.5,
                              .cpu_sys = -1,
                              .cg_usage = 4096,
                              .cg_peak = -1,
                              .cg_anon = -1,
                              .cg_file = -1,
                              .cg_limit = -1,
                              .cg_oom_kills = 0};
    struct ty__buf b = {0};

    ty__procstat_render(&b, 5, &ps);
    CHECK_EQ_INT(check_records(b.buf), 7);
    CHECK_CONTAINS(b.buf, "{\"ts\":5,\"type\":\"gauge\",\"name\":"
                          "\"process.rss_bytes\",\"measures\":"
                          "{\"value\":1000}}\n");
    CHECK(strstr(b.buf, "rss_anon") == NULL);
    CHECK(strstr(b.buf, "limit_bytes") == NULL);
    CHECK_CONTAINS(b.buf, "\"cgroup.memory.oom_kills\",\"measures\":"
                          "{\"value\":0}");
    ty__buf_release(&b);
}

static void
t_interval(void)
{
    CHECK_EQ_INT(ty__diag_interval(NULL), 5000000000LL);
    CHECK_EQ_INT(ty__diag_interval(""), 5000000000LL);
    CHECK_EQ_INT(ty__diag_interval("0"), 0);
    CHECK_EQ_INT(ty__diag_interval("250ms"), 250000000LL);
    CHECK_EQ_INT(ty__diag_interval("1m"), 60000000000LL);
    CHECK_EQ_INT(ty__diag_interval("soon"), 5000000000LL);
}

static char *
slurp(const char *dir, const char *name)
{
    char path[600];
    FILE *f;
    char *text = calloc(1, 1 << 20);
    size_t n;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "r");
    CHECK_MSG(f != NULL, "no %s", path);
    if (f == NULL)
        return text;
    n = fread(text, 1, (1 << 20) - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* Through the real sink: with no coordinator, ty__output_append appends
 * under TEST_OUTPUTS_PATH. */
static void
t_standalone_files(void)
{
    char *results, *diag;
    struct ty *ty = standalone_handle("1h");
    cJSON *rec;

    if (ty == NULL)
        return;
    ty_counter_add(ty, "msgs,peer=b", 5);
    ty_histogram_observe(ty, "rtt", 0.25);
    ty_point(ty, "step", 1);
    ty__metrics_fini(ty);
    results = slurp(th_tmpdir(), "results.out");
    diag = slurp(th_tmpdir(), "diagnostics.out");
    CHECK_EQ_INT(check_records(results), 3);
    rec = last_record(results, "counter", "msgs,peer=b");
    CHECK(rec != NULL && measure(rec, "count") == 5);
    cJSON_Delete(rec);
    /* One sample at the start, one at the end. */
    CHECK_EQ_INT(count_lines(diag, "\"process.rss_bytes\""), 2);
    CHECK(check_records(diag) >= 12);
    free(results);
    free(diag);
    ty__destroy(&ty);
}

static const struct th_case cases[] = {
    {"hist_exact", t_hist_exact},
    {"hist_bucketed_error", t_hist_bucketed_error},
    {"hist_bounded", t_hist_bounded},
    {"records", t_records},
    {"json_text", t_json_text},
    {"split_name", t_split_name},
    {"threads", t_threads},
    {"flush_rules", t_flush_rules},
    {"results_every_second", t_results_every_second},
    {"diagnostics", t_diagnostics},
    {"procstat_render", t_procstat_render},
    {"interval", t_interval},
    {"standalone_files", t_standalone_files},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
