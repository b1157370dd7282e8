/*
 * test_report_work.c — fits against the work done (report_work.c,
 * report_fits.c) on synthetic run folders: a flat memory-stress run
 * (test_report_synth.h) given a work.csv, processes.csv and disk.csv per
 * instance. RSS of "kvd" is 50 MiB + 4096 B per cycle with noise while
 * cycles come in bursts (non-linear in time): the fit against cycles must
 * find 4096 B/cycle and call it growing; the worker's flat RSS is flat;
 * disk and CPU per cycle are recovered; two stages get their own slopes;
 * a malformed work.csv names its line; a huge one is bounded; a hostile
 * process name is escaped in the page; compare's page lists two runs'
 * fits side by side, matched by series, x and stage.
 *
 * `test_report_work --write-run DIR` writes the run DIR/work and exits.
 */
#include "test_report_synth.h"

#define DUR_S 600
#define START_MS (START_NS / 1000000)

static const struct synth_group kvd_groups[] = {
    {"kvd", 2, 512 * MiB, 24.0 * MiB, 0, 40.0 * MiB, 0, 0.3 * MiB, 0, 0, 0},
};
static const struct synth kvd_run = {5, kvd_groups, 1};

/* Cycles done by t_ms: bursts of 30 a second for 50 s, then 1 a second,
 * a little faster every 100 s. */
static double
cycles_at(double t_ms)
{
    double c = 0;

    for (int k = 0; k < DUR_S && k * 1000.0 < t_ms; k++) {
        double rate = ((k / 50) % 2 == 0 ? 30 : 1) + k / 100;
        double part = t_ms - k * 1000.0 < 1000 ? (t_ms - k * 1000.0) / 1000 : 1;

        c += rate * part;
    }
    return c;
}

static double
noise(int k, double amp)
{
    static const double e[] = {0.6, -0.9, 0.3, 1.0, -0.4, -0.7, 0.8, -0.2};

    return amp * e[(k * 5) % 8];
}

/* The RSS of kvd at t: grows per cycle, or per cycle only after
 * stage_ms (0: from the start) at twice the rate. */
static double
kvd_rss(double t, int64_t stage_ms)
{
    double base = 50.0 * MiB + noise((int)(t / 1000), 20 * 1024);

    if (stage_ms == 0)
        return base + 4096 * cycles_at(t);
    return t < stage_ms ? base
                        : base + 8192 * (cycles_at(t) - cycles_at(stage_ms));
}

static void
work_csv(const char *idir)
{
    struct strbuf sb;

    strbuf_init(&sb);
    strbuf_adds(&sb, "time_ms,name,value\n");
    for (int k = 0; k <= DUR_S; k++) {
        double t = k * 1000.0 + 500;

        strbuf_addf(&sb, "%lld,cycles,%lld\n", (long long)(START_MS + t),
                    (long long)llround(cycles_at(t)));
        strbuf_addf(&sb, "%lld,errors,0\n", (long long)(START_MS + t));
        strbuf_addf(&sb, "%lld,\"load.cycles,stage=2\",%lld\n",
                    (long long)(START_MS + t),
                    (long long)llround(2 * cycles_at(t)));
    }
    put_text(idir, "work.csv", sb.buf);
    strbuf_release(&sb);
}

static void
proc_line(struct strbuf *sb, int64_t t, int pid, const char *name, double rss,
          double cpu)
{
    char ts[40];

    time_rfc3339(START_NS + t * 1000000, ts, sizeof(ts));
    strbuf_addf(sb, "%s,%lld,%d,1,%s,%lld,%lld,%lld,%.3f,%.3f\n", ts,
                (long long)t, pid, name, (long long)(rss + 100 * MiB),
                (long long)rss, (long long)rss, cpu * 0.6, cpu * 0.4);
}

static void
processes_csv(const char *idir, int64_t stage_ms)
{
    struct strbuf sb;

    strbuf_init(&sb);
    strbuf_adds(&sb, "time,t_ms,pid,ppid,name,vmsize_bytes,rss_bytes,"
                     "vmhwm_bytes,cpu_user_s,cpu_system_s\n");
    for (int64_t t = 0; t <= DUR_S * 1000; t += 1000) {
        int k = (int)(t / 1000);

        proc_line(&sb, t, 10, "kvd", kvd_rss((double)t, stage_ms),
                  0.002 * cycles_at((double)t) + noise(k, 0.05) + 0.1);
        proc_line(&sb, t, 11, "kvd-worker", 10.0 * MiB + noise(k, 64 << 10),
                  0.1);
        proc_line(&sb, t, 12, "kvd-worker", 10.0 * MiB + noise(k + 3, 64 << 10),
                  0.1);
        proc_line(&sb, t, 13, "\"<script>x\"", 2.0 * MiB, 0.01);
    }
    put_text(idir, "processes.csv", sb.buf);
    strbuf_release(&sb);
}

static void
disk_csv(const char *idir)
{
    struct strbuf sb;

    strbuf_init(&sb);
    strbuf_adds(&sb, "time,t_ms,path,allocated_bytes,apparent_bytes,files\n");
    for (int64_t t = 0; t <= DUR_S * 1000; t += 5000) {
        char ts[40];

        time_rfc3339(START_NS + t * 1000000, ts, sizeof(ts));
        strbuf_addf(&sb, "%s,%lld,state,%lld,%lld,3\n", ts, (long long)t,
                    (long long)(MiB + 1024 * cycles_at((double)t) +
                                noise((int)(t / 1000), 512)),
                    (long long)(4 * MiB));
        strbuf_addf(&sb, "%s,%lld,/missing,,,\n", ts, (long long)t);
    }
    put_text(idir, "disk.csv", sb.buf);
    strbuf_release(&sb);
}

/* The kvd run: stage_ms 0 one window, else two stages split there. */
static char *
kvd_write(const char *dir, int64_t stage_ms)
{
    synth_write(dir, &kvd_run);
    for (int i = 0; i < kvd_groups[0].ninst; i++) {
        cleanup_free char *idir = xasprintf("%s/kvd/%d", dir, i);

        work_csv(idir);
        processes_csv(idir, stage_ms);
        disk_csv(idir);
    }
    if (stage_ms > 0) {
        cleanup_free char *st = xasprintf(
            "{\"stage\": \"warm\", \"start_ms\": 0, \"end_ms\": %lld}\n"
            "{\"stage\": \"load\", \"start_ms\": %lld, \"end_ms\": null}\n",
            (long long)stage_ms, (long long)stage_ms);

        put_text(dir, "stages.jsonl", st);
    }
    return xstrdup(dir);
}

/* The fit of series against x in stage (NULL: the whole run). */
static const cJSON *
fit_of(const cJSON *s, const char *series, const char *x, const char *stage)
{
    const cJSON *f;

    cJSON_ArrayForEach (f, at(s, "groups.#kvd.fits")) {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(f, "stage");

        if (strcmp(at_str(f, "series"), series) == 0 &&
            strcmp(at_str(f, "x"), x) == 0 &&
            (stage == NULL
                 ? cJSON_IsNull(st)
                 : cJSON_IsString(st) && strcmp(st->valuestring, stage) == 0))
            return f;
    }
    th_fail(__FILE__, __LINE__, "no fit of %s against %s in %s", series, x,
            stage ? stage : "the whole run");
    return NULL;
}

static bool
near(double got, double want, double frac)
{
    return fabs(got - want) <= fabs(want) * frac;
}

static cJSON *
kvd_report(int64_t stage_ms, char **dir, char **table)
{
    cleanup_free char *d = path_join(th_tmpdir(), "kvd");
    struct err err = {0};

    *dir = kvd_write(d, stage_ms);
    CHECK_MSG(generate(*dir, table, &err) == 0, "%s", err.msg);
    return summary(*dir);
}

/* ---- cases --------------------------------------------------------------- */

static void
t_rss_per_cycle(void)
{
    cleanup_free char *dir = NULL, *table = NULL;
    cJSON *s = kvd_report(0, &dir, &table);
    const cJSON *f = fit_of(s, "process:kvd:rss", "cycles", NULL);

    CHECK_MSG(near(at_num(f, "slope"), 4096, 0.10), "slope %.1f",
              at_num(f, "slope"));
    CHECK(at_num(f, "r2") > 0.95);
    CHECK_EQ_STR(at_str(f, "verdict"), "growing");
    CHECK_EQ_INT(at_num(f, "instances"), 2);
    CHECK(at_num(f, "points") > 500);
    /* the quoted counter name, with its comma, twice as many per cycle */
    f = fit_of(s, "process:kvd:rss", "load.cycles,stage=2", NULL);
    CHECK_MSG(near(at_num(f, "slope"), 2048, 0.10), "slope %.1f",
              at_num(f, "slope"));
    f = fit_of(s, "process:kvd:vmsize", "cycles", NULL);
    CHECK(near(at_num(f, "slope"), 4096, 0.10));
    /* a counter that never moved is nothing to fit against */
    cJSON_ArrayForEach (f, at(s, "groups.#kvd.fits")) {
        CHECK(strcmp(at_str(f, "x"), "errors") != 0);
    }
    CHECK_CONTAINS(table, "per unit of work (growing fits):");
    CHECK_CONTAINS(table, "process:kvd:rss");
    CHECK_CONTAINS(table, "+4.0 KiB per cycle");
    cJSON_Delete(s);
}

static void
t_flat_worker(void)
{
    cleanup_free char *dir = NULL, *table = NULL;
    cJSON *s = kvd_report(0, &dir, &table);
    const cJSON *f = fit_of(s, "process:kvd-worker:rss", "cycles", NULL);

    CHECK_EQ_STR(at_str(f, "verdict"), "flat");
    CHECK(fabs(at_num(f, "slope")) < 200);
    /* the cgroup's usage of the flat memory-stress run, against cycles */
    CHECK_EQ_STR(at_str(fit_of(s, "cgroup:usage", "cycles", NULL), "verdict"),
                 "flat");
    cJSON_Delete(s);
}

static void
t_disk_and_cpu(void)
{
    cleanup_free char *dir = NULL, *table = NULL;
    cJSON *s = kvd_report(0, &dir, &table);
    const cJSON *f = fit_of(s, "disk:state:allocated", "cycles", NULL);
    const cJSON *e;

    CHECK_MSG(near(at_num(f, "slope"), 1024, 0.10), "slope %.1f",
              at_num(f, "slope"));
    CHECK_EQ_STR(at_str(f, "verdict"), "growing");
    f = fit_of(s, "process:kvd:cpu", "cycles", NULL);
    CHECK_MSG(near(at_num(f, "slope"), 0.002, 0.10), "slope %g",
              at_num(f, "slope"));
    CHECK_EQ_STR(at_str(f, "verdict"), "growing");
    CHECK_CONTAINS(table, "+2.0 ms CPU per cycle");
    /* a path with no values is no series */
    cJSON_ArrayForEach (e, at(s, "groups.#kvd.fits")) {
        CHECK(strstr(at_str(e, "series"), "missing") == NULL);
    }
    cJSON_Delete(s);
}

static void
t_two_stages(void)
{
    cleanup_free char *dir = NULL, *table = NULL;
    cJSON *s = kvd_report(300000, &dir, &table);
    const cJSON *w = fit_of(s, "process:kvd:rss", "cycles", "warm");
    const cJSON *l = fit_of(s, "process:kvd:rss", "cycles", "load");

    CHECK_MSG(fabs(at_num(w, "slope")) < 200, "warm slope %.1f",
              at_num(w, "slope"));
    CHECK_EQ_STR(at_str(w, "verdict"), "flat");
    CHECK_MSG(near(at_num(l, "slope"), 8192, 0.10), "load slope %.1f",
              at_num(l, "slope"));
    CHECK_EQ_STR(at_str(l, "verdict"), "growing");
    CHECK(at(s, "groups.#kvd.fits.0.stage") != NULL &&
          !cJSON_IsNull(at(s, "groups.#kvd.fits.0.stage")));
    cJSON_Delete(s);
}

/* Against rounds too: the run has five rounds on the clock. */
static void
t_rounds(void)
{
    cleanup_free char *dir = NULL, *table = NULL;
    cJSON *s = kvd_report(0, &dir, &table);
    const cJSON *f = fit_of(s, "process:kvd-worker:rss", "rounds", NULL);

    CHECK_EQ_INT(at_num(f, "points"), 5);
    CHECK_EQ_STR(at_str(f, "verdict"), "flat");
    cJSON_Delete(s);
}

static void
t_html(void)
{
    cleanup_free char *dir = NULL, *table = NULL, *html = NULL;
    cJSON *s = kvd_report(0, &dir, &table);
    const char *p;
    size_t charts = 0;

    html = slurp(dir, "report.html");
    CHECK_CONTAINS(html, "<h2>Against the work done</h2>");
    CHECK_CONTAINS(html, "+4.0 KiB per cycle");
    CHECK_CONTAINS(html, "+2.0 ms CPU per cycle");
    CHECK_CONTAINS(html, "process:&lt;script&gt;x:rss");
    CHECK(strstr(html, "<script") == NULL);
    for (p = html; (p = strstr(p, "<svg class=\"wchart\"")) != NULL; p++)
        charts++;
    CHECK(charts >= 4 && charts <= 24);
    /* the memory and round charts are still two */
    for (p = html, charts = 0; (p = strstr(p, "<svg class=\"chart\"")) != NULL;
         p++)
        charts++;
    CHECK_EQ_INT(charts, 2);
    CHECK(strlen(html) < 2u << 20);
    cJSON_Delete(s);
}

static void
t_malformed(void)
{
    cleanup_free char *d = path_join(th_tmpdir(), "bad");
    cleanup_free char *dir = kvd_write(d, 0);
    cleanup_free char *html = NULL, *sum = NULL;
    struct err err = {0};
    struct report_opts o = {0};

    put_text(dir, "kvd/1/work.csv",
             "time_ms,name,value\n1795975200000,cycles,1\n"
             "1795975201000,cycles,12x\n");
    CHECK_EQ_INT(report_generate(dir, &o, &err), -1);
    CHECK_CONTAINS(err.msg, "kvd/1/work.csv:3: value: expected a whole "
                            "number, got \"12x\"");
    CHECK_EQ_INT(err.status, EXIT_DATAERR);
    put_text(dir, "kvd/1/work.csv", "time_ms,name,value\n");
    put_text(dir, "kvd/0/processes.csv",
             "time,t_ms,pid,ppid,name,vmsize_bytes,rss_bytes,vmhwm_bytes,"
             "cpu_user_s,cpu_system_s\n,0,1,0,kvd,1,1,1,0.1,0.1\n"
             ",1000,1,0,kvd,1,1,1,lots,0.1\n");
    err = (struct err){0};
    CHECK_EQ_INT(report_generate(dir, &o, &err), -1);
    CHECK_CONTAINS(err.msg, "kvd/0/processes.csv:3: cpu_user_s: expected a "
                            "number of seconds");
    put_text(dir, "kvd/0/processes.csv", "time,pid\n");
    err = (struct err){0};
    CHECK_EQ_INT(report_generate(dir, &o, &err), -1);
    CHECK_CONTAINS(err.msg, "kvd/0/processes.csv:1: expected a header with a "
                            "t_ms column");
    put_text(dir, "kvd/0/processes.csv", "time,t_ms,name\n");
    put_text(dir, "stages.jsonl", "{\"stage\": \"a\", \"start_ms\": 0}\n{\n");
    err = (struct err){0};
    CHECK_EQ_INT(report_generate(dir, &o, &err), -1);
    CHECK_CONTAINS(err.msg, "stages.jsonl:2: not valid JSON");
    /* a last line cut short is a note, not an error */
    put_text(dir, "stages.jsonl", "{\"stage\": \"a\", \"start_ms\": 0}\n");
    put_text(dir, "kvd/1/work.csv",
             "time_ms,name,value\n1795975200000,cycles,1\n17959752");
    err = (struct err){0};
    CHECK_MSG(report_generate(dir, &o, &err) == 0, "%s", err.msg);
}

/* 10^6 rows over 50 names: read up to the bounds, said in a note. */
/* The kvd run in folder name with sb's text (a header is put first) as
 * kvd/0/work.csv, reported: its summary.json (the caller's). sb is
 * released. */
static cJSON *
with_work(const char *name, struct strbuf *sb)
{
    cleanup_free char *d = path_join(th_tmpdir(), name);
    cleanup_free char *dir = kvd_write(d, 0);
    cleanup_free char *table = NULL;
    cleanup_free char *text =
        xasprintf("time_ms,name,value\n%s", sb->buf ? sb->buf : "");
    struct err err = {0};

    strbuf_release(sb);
    put_text(dir, "kvd/0/work.csv", text);
    CHECK_MSG(generate(dir, &table, &err) == 0, "%s", err.msg);
    return summary(dir);
}

static void
t_bounded(void)
{
    struct strbuf sb;
    const cJSON *f;
    cJSON *s;
    size_t xs = 0;

    strbuf_init(&sb);
    for (long i = 0; i < 1000000; i++)
        strbuf_addf(&sb, "%lld,c%ld,%ld\n",
                    (long long)(START_MS + i * DUR_S * 1000 / 1000000), i % 50,
                    i / 50);
    s = with_work("big", &sb);
    CHECK(has_note(s, "kvd/0/work.csv: more than 200000 rows"));
    CHECK(has_note(s, "kvd/0/work.csv: more than 8 counters"));
    cJSON_ArrayForEach (f, at(s, "groups.#kvd.fits")) {
        xs += strcmp(at_str(f, "series"), "process:kvd:rss") == 0;
    }
    /* rounds, the other instance's two counters, eight of this one's */
    CHECK_EQ_INT(xs, 11);
    cJSON_Delete(s);
}

/* A run without any of the new files reads as before: no fits. */
static void
t_none(void)
{
    cleanup_free char *dir = NULL, *table = NULL, *html = NULL;
    cJSON *s = report_of("plain", &kvd_run, &dir, &table);

    CHECK_EQ_INT(cJSON_GetArraySize(at(s, "groups.#kvd.fits")), 0);
    html = slurp(dir, "report.html");
    CHECK(strstr(html, "Against the work done") == NULL);
    CHECK(strstr(table, "per unit of work") == NULL);
    cJSON_Delete(s);
}

/* Per-round counters (tagged) fill the table first; a run-wide total
 * written after them still gets a place, and no note says otherwise. */
static void
t_untagged_first(void)
{
    struct strbuf sb;
    const cJSON *f;
    cJSON *s;
    size_t against = 0;

    strbuf_init(&sb);
    for (int i = 0; i <= 20; i++) {
        long long t = START_MS + (long long)i * DUR_S * 1000 / 20;

        for (int k = 0; k < 10; k++)
            strbuf_addf(&sb, "%lld,\"made,round=%d\",%d\n", t, k, i);
        strbuf_addf(&sb, "%lld,total,%d\n", t, i * 7);
    }
    s = with_work("tags", &sb);
    CHECK(!has_note(s, "kvd/0/work.csv: more than"));
    cJSON_ArrayForEach (f, at(s, "groups.#kvd.fits")) {
        against += strcmp(at_str(f, "x"), "total") == 0;
    }
    CHECK(against > 0);
    cJSON_Delete(s);
}

/* Two runs with the same stages: their fits side by side on one row; a
 * run without stages has its own keys (stage "whole run"), A's side
 * empty. */
static void
t_compare(void)
{
    cleanup_free char *da = path_join(th_tmpdir(), "cmp-a");
    cleanup_free char *db = path_join(th_tmpdir(), "cmp-b");
    cleanup_free char *a = kvd_write(da, 300000), *b = kvd_write(db, 0);
    struct report_opts o = {.no_html = true};
    struct err err = {0};
    struct report *ra = report_build(a, &o, &err), *rb;
    char *html;

    CHECK_MSG(ra != NULL, "%s", err.msg);
    rb = report_build(a, &o, &err);
    CHECK(rb != NULL);
    if (ra == NULL || rb == NULL)
        return;
    html = report_compare_html(ra, rb);
    CHECK_CONTAINS(html, "<h3 class=\"site\">Fits against the work done, "
                         "slope per unit</h3>");
    CHECK_CONTAINS(html, "<tr class=\"cmp-fit\"><td>process:kvd:rss</td>"
                         "<td>cycles</td><td>load</td><td class=\"n\">+8.0 "
                         "KiB per cycle</td><td class=\"n\">+8.0 KiB per "
                         "cycle</td><td class=\"n \">+0%</td><td>growing</td>"
                         "<td>growing</td></tr>");
    free(html);
    report_destroy(&rb);
    rb = report_build(b, &o, &err);
    CHECK(rb != NULL);
    if (rb != NULL) {
        html = report_compare_html(ra, rb);
        CHECK_CONTAINS(html, "<tr class=\"cmp-fit\"><td>process:kvd:rss</td>"
                             "<td>cycles</td><td>whole run</td><td "
                             "class=\"n\">-</td><td class=\"n\">+");
        free(html);
    }
    report_destroy(&ra);
    report_destroy(&rb);
}

static const struct th_case cases[] = {
    {"rss_per_cycle", t_rss_per_cycle},
    {"compare", t_compare},
    {"flat_worker", t_flat_worker},
    {"disk_and_cpu", t_disk_and_cpu},
    {"two_stages", t_two_stages},
    {"rounds", t_rounds},
    {"html", t_html},
    {"malformed", t_malformed},
    {"bounded", t_bounded},
    {"untagged_first", t_untagged_first},
    {"none", t_none},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-run") == 0) {
        cleanup_free char *d = path_join(argv[2], "work");
        cleanup_free char *dir = kvd_write(d, 300000);

        return th_failures() ? 1 : 0;
    }
    return th_main(argc, argv, cases);
}
