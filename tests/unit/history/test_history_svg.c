/*
 * test_history_svg.c — the history's charts and names for the dashboard
 * (runner/history/history_svg.c, history_names.c): series built here run
 * by run, analysed, and drawn; the marks counted (three charts a group,
 * a circle a known value, a polyline a stretch of them, a change point
 * line where history_analyse found one and none on flat series, the
 * version under the axis where it changes), a hostile group id, version
 * and outcome only escaped, unknown values and runs without the group
 * as gaps, no runs as a note; and the names listed from a database with
 * their run counts and newest runs.
 */
#include "history/history_int.h"
#include "../th_db.h"
#include "th.h"
#include "base/strbuf.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

#define V1 "aaaaaaaaaaaaaaaa1111"
#define V2 "bbbbbbbbbbbbbbbb2222"
#define HOSTILE "<script>\"&'x"

static struct history *
new_history(const char *name)
{
    struct history *h = xcalloc(1, sizeof(*h));

    h->name = xstrdup(name);
    history_cp_defaults(&h->opts);
    return h;
}

static struct history_run *
add_run(struct history *h, const char *version, const char *outcome)
{
    struct history_run *r;

    h->runs = xrealloc(h->runs, (h->nruns + 1) * sizeof(*h->runs));
    r = &h->runs[h->nruns++];
    memset(r, 0, sizeof(*r));
    r->number = (int64_t)h->nruns;
    r->version = version != NULL ? xstrdup(version) : NULL;
    r->outcome = xstrdup(outcome);
    r->started = xasprintf("2026-11-%02zuT03:00:00.000Z", h->nruns % 28 + 1);
    r->duration_s = NAN;
    r->build_s = NAN;
    return r;
}

static void
add_group(struct history_run *r, const char *id, double peak, double final,
          double growth)
{
    struct history_group *g;

    r->groups = xrealloc(r->groups, (r->ngroups + 1) * sizeof(*r->groups));
    g = &r->groups[r->ngroups++];
    memset(g, 0, sizeof(*g));
    g->id = xstrdup(id);
    g->instances = 1;
    g->fig[HISTORY_PEAK] = peak;
    g->fig[HISTORY_FINAL] = final;
    g->fig[HISTORY_GROWTH] = growth;
    g->oom_kills = 0;
}

/* n runs of group id: the peak about 100 MiB, half as much again from
 * run step on (never when step is 0) and the version V2 from there;
 * final and growth flat with noise. */
static struct history *
stepped(const char *id, int n, int step)
{
    struct history *h = new_history("nightly");

    for (int i = 1; i <= n; i++) {
        bool after = step > 0 && i >= step;
        double peak = 100 * MIB + (i % 3) * 65536.0;
        struct history_run *r = add_run(h, after ? V2 : V1, "success");

        add_group(r, id, after ? peak * 1.5 : peak,
                  80 * MIB + (i % 2) * 32768.0, 1000.0 * (i % 2));
    }
    return h;
}

static char *
draw(const struct history *h)
{
    struct strbuf sb = {0};

    history_svg(h, &sb);
    return strbuf_detach(&sb);
}

static int
count(const char *s, const char *end, const char *what)
{
    int n = 0;

    for (const char *p = s; (p = strstr(p, what)) != NULL && (!end || p < end);
         p += strlen(what))
        n++;
    return n;
}

/* The chart of figure fig in html, [*end is its </svg>]; NULL when none. */
static const char *
chart_of(const char *html, const char *fig, const char **end)
{
    char key[64];
    const char *s;

    snprintf(key, sizeof(key), "data-figure=\"%s\"", fig);
    s = strstr(html, key);
    *end = s != NULL ? strstr(s, "</svg>") : NULL;
    return s;
}

static int
count_in(const char *html, const char *fig, const char *what)
{
    const char *end, *s = chart_of(html, fig, &end);

    CHECK_MSG(s != NULL && end != NULL, "no %s chart", fig);
    return s != NULL && end != NULL ? count(s, end, what) : -1;
}

/* How many of what a figure's chart should hold. */
struct want {
    const char *fig, *what;
    int n;
};

static void
check_counts(const char *html, const struct want *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int got = count_in(html, w[i].fig, w[i].what);

        CHECK_MSG(got == w[i].n, "%s chart: %d of %s, not %d", w[i].fig, got,
                  w[i].what, w[i].n);
    }
}

/* A step in the peak and in the growth at run 7: a change point in each
 * of those charts and none in the final one, labelled with run 7's
 * version and the change (relative for the peak; absolute for the
 * growth, from about 0). */
static void
t_step(void)
{
    static const struct want want[] = {
        {"peak", "class=\"cp\"", 1},
        {"final", "class=\"cp\"", 0},
        {"growth", "class=\"cp\"", 1},
        {"peak", "<g class=\"ver\">", 2}, /* at run 1 and run 7 */
    };
    struct history *h = stepped("providers", 12, 7);
    char *html;

    for (size_t i = 6; i < h->nruns; i++)
        h->runs[i].groups[0].fig[HISTORY_GROWTH] = 8 * MIB;
    history_analyse(h, NULL);
    CHECK_EQ_INT(h->npoints, 2);
    html = draw(h);
    CHECK_EQ_INT(count(html, NULL, "class=\"hchart\""), 3);
    CHECK_EQ_INT(
        count(html, NULL, "<section class=\"hgroup\" id=\"g-providers\">"), 1);
    CHECK_EQ_INT(count(html, NULL, "class=\"cp\""), 2);
    CHECK_CONTAINS(html, ">run 7, bbbbbbbbbbbb: +50 %</text>");
    CHECK_CONTAINS(html, ">run 7, bbbbbbbbbbbb: +8.0 MiB a round</text>");
    CHECK_CONTAINS(html, "<title>change point: providers peak: +50 % at run 7 "
                         "(commit bbbbbbbbbbbb), p = ");
    CHECK_EQ_INT(count(html, NULL, "<circle"), 3 * 12);
    CHECK_EQ_INT(count(html, NULL, "<polyline"), 3);
    CHECK_EQ_INT(count(html, NULL, "version " V2 " from run 7</title>"), 3);
    CHECK_EQ_INT(count(html, NULL, ">bbbbbbbbbbbb</text>"), 3);
    CHECK_CONTAINS(html, "<title>run 7, 2026-11-08 03:00:00, bbbbbbbbbbbb, "
                         "150.1 MiB, success</title>");
    CHECK_CONTAINS(html, "data-group=\"providers\"");
    CHECK_EQ_INT(count(html, NULL, "<p class=\"note\">"), 0);
    check_counts(html, want, ARRAY_LEN(want));
    free(html);
    history_destroy(&h);
}

/* Flat series, with the group's growth around zero: no change point,
 * zero drawn in the growth chart only, which spans the smallest change
 * reported (64 KiB) either side; a failed run marked as such. */
static void
t_flat(void)
{
    static const struct want want[] = {
        {"growth", "class=\"hzero\"", 1},
        {"peak", "class=\"hzero\"", 0},
        {"growth", ">-64 KiB</text>", 1},
        {"growth", ">+64 KiB</text>", 1},
        {"growth", ", -4.0 KiB a round, success<", 1},
        {"peak", "<g class=\"ver\">", 1},
    };
    struct history *h = stepped("providers", 12, 0);
    char *html;

    free(h->runs[2].outcome);
    h->runs[2].outcome = xstrdup("failure");
    h->runs[5].groups[0].fig[HISTORY_GROWTH] = -4096;
    history_analyse(h, NULL);
    CHECK_EQ_INT(h->npoints, 0);
    html = draw(h);
    CHECK_EQ_INT(count(html, NULL, "class=\"hchart\""), 3);
    CHECK_EQ_INT(count(html, NULL, "class=\"cp\""), 0);
    CHECK_EQ_INT(count(html, NULL, "class=\"pt bad\""), 3);
    CHECK_EQ_INT(count(html, NULL, "<circle"), 36);
    CHECK_CONTAINS(html, "<title>run 3, 2026-11-04 03:00:00, aaaaaaaaaaaa, "
                         "100.0 MiB, failure</title>");
    check_counts(html, want, ARRAY_LEN(want));
    free(html);
    history_destroy(&h);
}

/* Two groups: a section each, in the order they first appear. */
static void
t_groups(void)
{
    struct history *h = stepped("providers", 6, 0);
    char *html;
    const char *a, *b;

    for (size_t i = 2; i < h->nruns; i++)
        add_group(&h->runs[i], "requestors", 10 * MIB, 9 * MIB, 0);
    history_analyse(h, NULL);
    html = draw(h);
    CHECK_EQ_INT(count(html, NULL, "class=\"hchart\""), 6);
    a = strstr(html, "id=\"g-providers\"");
    b = strstr(html, "id=\"g-requestors\"");
    CHECK(a != NULL && b != NULL && a < b);
    /* requestors is not in runs 1 and 2: crosses, not circles */
    CHECK_EQ_INT(count(b ? b : html, NULL, "<circle"), 3 * 4);
    CHECK_EQ_INT(count(b ? b : html, NULL, "not in this run"), 3 * 2);
    free(html);
    history_destroy(&h);
}

/* A value unknown at run 4 and no groups at run 6 (a failed build):
 * the line breaks there, each gap a cross saying why. */
static void
t_gaps(void)
{
    static const struct want want[] = {
        {"peak", "<circle", 6},       {"peak", "<polyline", 2},
        {"peak", "class=\"nov\"", 2}, {"final", "<circle", 7},
        {"final", "<polyline", 2},
    };
    struct history *h = stepped("providers", 8, 0);
    struct history_run *r = &h->runs[5];
    char *html;

    h->runs[3].groups[0].fig[HISTORY_PEAK] = NAN;
    free(r->groups[0].id);
    free(r->groups);
    r->groups = NULL;
    r->ngroups = 0;
    free(r->outcome);
    r->outcome = xstrdup("build-failed");
    history_analyse(h, NULL);
    html = draw(h);
    CHECK_CONTAINS(html, "run 4, 2026-11-05 03:00:00, aaaaaaaaaaaa: no "
                         "value (success)</title>");
    CHECK_CONTAINS(html, "run 6, 2026-11-07 03:00:00, aaaaaaaaaaaa: not in "
                         "this run (build-failed)</title>");
    check_counts(html, want, ARRAY_LEN(want));
    free(html);
    history_destroy(&h);
}

/* Every string from the database, hostile: only ever escaped. */
static void
t_escaped(void)
{
    struct history *h = stepped(HOSTILE, 12, 7);
    char *html;

    for (size_t i = 6; i < h->nruns; i++) {
        free(h->runs[i].version);
        h->runs[i].version = xstrdup(HOSTILE "tail");
    }
    free(h->runs[1].outcome);
    h->runs[1].outcome = xstrdup("<b>o'k</b>");
    free(h->name);
    h->name = xstrdup(HOSTILE);
    history_analyse(h, NULL);
    CHECK_EQ_INT(h->npoints, 1);
    html = draw(h);
    CHECK(strstr(html, "<script") == NULL);
    CHECK(strstr(html, "<b>") == NULL);
    CHECK(strstr(html, "\"&'") == NULL);
    CHECK(strchr(html, '\'') == NULL);
    CHECK_CONTAINS(html, "id=\"g-&lt;script&gt;&quot;&amp;&#39;x\"");
    CHECK_CONTAINS(html, "<h2>&lt;script&gt;&quot;&amp;&#39;x</h2>");
    CHECK_CONTAINS(html, "data-group=\"&lt;script&gt;&quot;&amp;&#39;x\"");
    CHECK_CONTAINS(html, ">run 7, &lt;script&gt;&quot;&amp;&#39;x: +50 %<");
    CHECK_CONTAINS(html, "version &lt;script&gt;&quot;&amp;&#39;xtail from");
    CHECK_CONTAINS(html, "&lt;b&gt;o&#39;k&lt;/b&gt;</title>");
    free(html);
    history_destroy(&h);
}

/* No runs: a note and no chart; runs without groups: a note too. */
static void
t_empty(void)
{
    struct history *h = new_history("nightly<");
    char *html = draw(h);

    CHECK_EQ_STR(html, "<p class=\"note\">There are no runs of nightly&lt; "
                       "to chart.</p>\n");
    free(html);
    add_run(h, NULL, "build-failed");
    add_run(h, NULL, "build-failed");
    history_analyse(h, NULL);
    html = draw(h);
    CHECK_EQ_INT(count(html, NULL, "class=\"hchart\""), 0);
    CHECK_CONTAINS(html, "<p class=\"note\">No memory figures in the 2 runs");
    free(html);
    history_destroy(&h);
}

/* Many runs: run labels and version labels thinned, every run still a
 * circle and every version change still a tick. */
static void
t_thinned(void)
{
    struct history *h = new_history("nightly");
    char *html;

    for (int i = 1; i <= 200; i++) {
        char v[16];

        snprintf(v, sizeof(v), "v%03d", i);
        add_group(add_run(h, v, "success"), "p", 100 * MIB, 90 * MIB, 0);
    }
    history_analyse(h, NULL);
    html = draw(h);
    CHECK_EQ_INT(count_in(html, "peak", "<circle"), 200);
    CHECK_EQ_INT(count_in(html, "peak", "<g class=\"ver\">"), 200);
    CHECK_MSG(count_in(html, "peak", "</text></g>") < 40,
              "version labels not thinned");
    CHECK_MSG(count_in(html, "peak", "text-anchor=\"middle\">") < 30,
              "run labels not thinned");
    free(html);
    history_destroy(&h);
}

static void
t_css(void)
{
    static const char *const classes[] = {
        ".hchart", ".hline", ".pt.bad", ".cp line", ".ver", ".hzero", ".nov"};

    for (size_t i = 0; i < ARRAY_LEN(classes); i++)
        CHECK_CONTAINS(history_svg_css, classes[i]);
    CHECK(strchr(history_svg_css, '<') == NULL);
}

/* ---- names ------------------------------------------------------------- */

static sqlite3 *
migrated(void)
{
    char *path = xasprintf("%s/testyard.db", th_tmpdir());
    sqlite3 *db = NULL;
    struct err err = {0};

    CHECK_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_EQ_INT(history_migrate(db, &err), 0);
    free(path);
    return db;
}

static void
record(sqlite3 *db, const char *name, const char *schedule, const char *outcome)
{
    struct history_meta m = {.name = name,
                             .schedule = schedule,
                             .build_seconds = -1,
                             .outcome = outcome};
    struct err err = {0};

    CHECK_MSG(history_record(db, &m, NULL, &err) > 0, "record: %s", err.msg);
}

static void
t_names(void)
{
    sqlite3 *db = migrated();
    struct history_name *v = NULL;
    struct err err = {0};
    size_t n = 99;

    CHECK_EQ_INT(history_names(db, &v, &n, &err), 0);
    CHECK(v == NULL && n == 0);
    record(db, "beta", NULL, "interrupted");
    record(db, "beta", NULL, "interrupted");
    record(db, "beta", "nightly", "build-failed");
    record(db, "alpha", NULL, "interrupted");
    CHECK_EQ_INT(history_names(db, &v, &n, &err), 0);
    CHECK_EQ_INT(n, 2);
    if (n == 2) {
        CHECK_EQ_STR(v[0].name, "alpha");
        CHECK_EQ_INT(v[0].runs, 1);
        CHECK_EQ_STR(v[0].last_outcome, "interrupted");
        CHECK(v[0].schedule == NULL);
        CHECK_EQ_STR(v[1].name, "beta");
        CHECK_EQ_INT(v[1].runs, 3);
        CHECK_EQ_STR(v[1].last_outcome, "build-failed");
        CHECK_EQ_STR(v[1].schedule, "nightly");
        CHECK(v[1].last != NULL && strncmp(v[1].last, "20", 2) == 0);
    }
    history_names_free(v, n);
    history_names_free(NULL, 0);
    sqlite3_close(db);
}

/* A database without the history tables: SQLite's error, nothing
 * returned. */
static void
t_names_fail(void)
{
    sqlite3 *db = NULL;
    struct history_name one, *v = &one;
    struct err err = {0};
    size_t n = 5;

    CHECK_EQ_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
    CHECK_EQ_INT(history_names(db, &v, &n, &err), -1);
    CHECK(v == NULL && n == 0);
    CHECK_CONTAINS(err.msg, "history database: no such table: history_runs");
    sqlite3_close(db);
}

/* From the database to the page: recorded runs loaded and drawn. */
static void
t_loaded(void)
{
    sqlite3 *db = migrated();
    struct err err = {0};
    struct history *h;
    char *html;

    record(db, "nightly", NULL, "build-failed");
    h = history_load(db, "nightly", 0, &err);
    CHECK(h != NULL);
    if (h != NULL) {
        history_analyse(h, NULL);
        html = draw(h);
        CHECK_CONTAINS(html, "No memory figures in the 1 run (");
        free(html);
        history_destroy(&h);
    }
    sqlite3_close(db);
}

static const struct th_case cases[] = {
    {"svg: a step, its change point and the version there", t_step},
    {"svg: a flat series has no change point", t_flat},
    {"svg: a section per group, in order", t_groups},
    {"svg: unknown values and missing groups are gaps", t_gaps},
    {"svg: every recorded string is escaped", t_escaped},
    {"svg: no runs, no groups: a note", t_empty},
    {"svg: many runs, labels thinned", t_thinned},
    {"svg: the CSS names the classes", t_css},
    {"names: sorted, with counts and the newest run", t_names},
    {"names: an SQLite error fills err", t_names_fail},
    {"svg: runs loaded from the database", t_loaded},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
