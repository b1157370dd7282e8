/*
 * dash_history.c — the dashboard's history: the names with runs; one
 * name's page (its change points, one chart per group and figure drawn
 * by the history module, the slopes of the report's fits against the
 * work done as a table and a chart per fit, its runs with their tasks
 * and reports, and a form comparing two of them); and compare-two-runs,
 * the page `testyard compare --html` writes, for two runs of a history
 * or two tasks.
 */
#include "daemon/daemon_int.h"

#include "history/history.h"
#include "report/report.h"

#include "base/strbuf.h"
#include "base/util.h"

#include "ty_json.h"
#include "ty_units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
history_href(struct strbuf *sb, const char *name)
{
    strbuf_adds(sb, "/history?name=");
    daemon__dash_urlarg(sb, name);
}

static unsigned
index_page(struct daemon *d, struct strbuf *sb)
{
    struct history_name *v = NULL;
    struct err err = {0};
    size_t n = 0;
    int rc;

    pthread_mutex_lock(&d->mu);
    rc = history_names(d->db, &v, &n, &err);
    pthread_mutex_unlock(&d->mu);
    if (rc < 0) {
        daemon__dash_error(sb, d, 500, err.msg);
        return 500;
    }
    daemon__dash_head(sb, d, "History", 0);
    strbuf_adds(sb, "<h1>History</h1>\n<section id=\"names\">");
    if (n == 0)
        strbuf_adds(sb, "<p class=\"note\">no run is recorded yet: every "
                        "task the daemon runs is, and <code>testyard history "
                        "import</code> adds runs made elsewhere</p>");
    else
        strbuf_adds(sb, "<table><tr><th>composition or schedule</th>"
                        "<th class=\"n\">runs</th><th>last run</th>"
                        "<th>its outcome</th></tr>\n");
    for (size_t i = 0; i < n; i++) {
        strbuf_adds(sb, "<tr><td><a href=\"");
        history_href(sb, v[i].name);
        strbuf_adds(sb, "\">");
        strbuf_add_html(sb, v[i].name);
        strbuf_adds(sb, "</a>");
        if (v[i].schedule)
            strbuf_adds(sb, " <small class=\"note\">(schedule)</small>");
        strbuf_addf(sb, "</td><td class=\"n\">%lld</td><td>",
                    (long long)v[i].runs);
        strbuf_add_html(sb, v[i].last ? v[i].last : "-");
        strbuf_adds(sb, "</td><td>");
        strbuf_add_html(sb, v[i].last_outcome ? v[i].last_outcome : "-");
        strbuf_adds(sb, "</td></tr>\n");
    }
    if (n > 0)
        strbuf_adds(sb, "</table>");
    strbuf_adds(sb, "</section>\n");
    daemon__dash_foot(sb);
    history_names_free(v, n);
    return 200;
}

/* Charts of fit slopes drawn on a name's page, at most. */
#define FIT_CHARTS 48

/* "series against x in stage" of a fit's JSON, escaped. */
static void
fit_key_html(struct strbuf *sb, const cJSON *f)
{
    const char *stage = ty__json_str(f, "stage");

    strbuf_add_html(sb, ty__json_str(f, "series"));
    strbuf_adds(sb, " against ");
    strbuf_add_html(sb, ty__json_str(f, "x"));
    strbuf_adds(sb, " in ");
    strbuf_add_html(sb, stage ? stage : "the whole run");
}

/* What the figure of a change point's JSON is called on the page. */
static void
figure_label(struct strbuf *sb, const cJSON *cp)
{
    const char *key = ty__json_str(cp, "figure");

    if (key != NULL && strcmp(key, "slope") == 0) {
        strbuf_adds(sb, "slope of ");
        fit_key_html(sb, cp);
    } else if (key != NULL && strncmp(key, "peak", 4) == 0) {
        strbuf_adds(sb, "peak");
    } else if (key != NULL && strncmp(key, "final", 5) == 0) {
        strbuf_adds(sb, "final");
    } else {
        strbuf_adds(sb, "growth per round");
    }
}

static void
fmt_signed(double v, char *buf, size_t size)
{
    char b[32];

    ty__format_bytes((uint64_t)fabs(v), b, sizeof(b));
    snprintf(buf, size, "%s%s", v < 0 ? "-" : "", b);
}

/* "+18 %" of a change point's JSON; its means when the change is not
 * relative (null: the mean before was 0), as slopes for a fit's. */
static void
change_text(const cJSON *cp, char *buf, size_t size)
{
    double rel = ty__json_num(cp, "change", NAN);
    double mb = ty__json_num(cp, "mean_before", NAN),
           ma = ty__json_num(cp, "mean_after", NAN);
    const char *series = ty__json_str(cp, "series");
    char before[64], after[64];

    if (!isnan(rel)) {
        snprintf(buf, size, "%+.0f %%", rel * 100);
        return;
    }
    if (series != NULL) {
        report_fmt_fit_slope(series, ty__json_str(cp, "x"), mb, before,
                             sizeof(before));
        report_fmt_fit_slope(series, ty__json_str(cp, "x"), ma, after,
                             sizeof(after));
    } else {
        fmt_signed(mb, before, sizeof(before));
        fmt_signed(ma, after, sizeof(after));
    }
    snprintf(buf, size, "from %s to %s", before, after);
}

static void
points_table(struct strbuf *sb, const cJSON *runs)
{
    const cJSON *r, *cp;
    size_t n = 0;

    strbuf_adds(sb, "<section id=\"change-points\"><h2>Change points</h2>");
    cJSON_ArrayForEach (r, runs) {
        cJSON_ArrayForEach (
            cp, cJSON_GetObjectItemCaseSensitive(r, "change_points")) {
            char change[128];

            if (n++ == 0)
                strbuf_adds(sb, "<table><tr><th>group</th><th>figure</th>"
                                "<th>change</th><th>at run</th>"
                                "<th>version</th><th class=\"n\">p</th>"
                                "</tr>\n");
            change_text(cp, change, sizeof(change));
            strbuf_adds(sb, "<tr class=\"cp-row\"><td>");
            strbuf_add_html(sb, ty__json_str(cp, "group"));
            strbuf_adds(sb, "</td><td>");
            figure_label(sb, cp);
            strbuf_adds(sb, "</td><td>");
            strbuf_add_html(sb, change);
            strbuf_addf(sb, "</td><td>%lld</td><td>",
                        (long long)ty__json_num(r, "run", 0));
            strbuf_add_html(sb, ty__json_str(r, "version")
                                    ? ty__json_str(r, "version")
                                    : "-");
            strbuf_addf(sb, "</td><td class=\"n\">%.3f</td></tr>\n",
                        ty__json_num(cp, "p", NAN));
        }
    }
    if (n == 0)
        strbuf_adds(sb, "<p class=\"note\">none found: each figure stayed "
                        "level, or there are too few runs to say</p>");
    else
        strbuf_adds(sb, "</table>");
    strbuf_adds(sb, "</section>\n");
}

/* One fit key's row: its last slope, the change since the run before,
 * its verdict and R², and its slope's change points. */
static void
fit_row(struct strbuf *sb, const cJSON *f)
{
    const char *series = ty__json_str(f, "series"), *x = ty__json_str(f, "x");
    double change = ty__json_num(f, "change", NAN);
    double r2 = ty__json_num(f, "r2", NAN);
    const cJSON *cp;
    char slope[64], prev[64], b[32];

    report_fmt_fit_slope(series, x, ty__json_num(f, "slope", NAN), slope,
                         sizeof(slope));
    report_fmt_fit_slope(series, x, ty__json_num(f, "previous_slope", NAN),
                         prev, sizeof(prev));
    strbuf_adds(sb, "<tr class=\"fit-row\"><td>");
    strbuf_add_html(sb, ty__json_str(f, "group"));
    strbuf_adds(sb, "</td><td>");
    fit_key_html(sb, f);
    strbuf_addf(sb, "</td><td class=\"n\">%lld</td><td class=\"n\">",
                (long long)ty__json_num(f, "run", 0));
    strbuf_add_html(sb, slope);
    strbuf_adds(sb, "</td><td class=\"n\">");
    strbuf_add_html(sb, prev);
    if (!isnan(change))
        snprintf(b, sizeof(b), "%+.0f %%", change * 100);
    else
        snprintf(b, sizeof(b), "-");
    strbuf_addf(sb, "</td><td class=\"n\">%s</td><td>", b);
    strbuf_add_html(sb, ty__json_str(f, "verdict") ? ty__json_str(f, "verdict")
                                                   : "-");
    if (!isnan(r2))
        strbuf_addf(sb, " (R&sup2; %.2f)", r2);
    strbuf_adds(sb, "</td><td>");
    cJSON_ArrayForEach (cp,
                        cJSON_GetObjectItemCaseSensitive(f, "change_points")) {
        char c[160];

        change_text(cp, c, sizeof(c));
        strbuf_addf(sb, "run %lld: ", (long long)ty__json_num(cp, "run", 0));
        strbuf_add_html(sb, c);
        strbuf_adds(sb, "<br>");
    }
    strbuf_adds(sb, "</td></tr>\n");
}

/* The fits' slopes: a table of every key, then a chart per key. */
static void
fits_section(struct strbuf *sb, const struct history *h)
{
    cJSON *fits = history_fits_json(h);
    size_t n = (size_t)cJSON_GetArraySize(fits);
    const cJSON *f;

    if (n == 0) {
        cJSON_Delete(fits);
        return;
    }
    strbuf_adds(sb, "<section id=\"fits\"><h2>Fits against the work done"
                    "</h2><p class=\"note\">each fit's slope (the report's "
                    "median over the group's instances) night after night; "
                    "a change point of a slope is a change of at least 20 % "
                    "where the fit grows or shrinks on one side of it</p>"
                    "<table id=\"fit-table\"><tr><th>group</th><th>fit</th>"
                    "<th class=\"n\">last run</th><th class=\"n\">slope"
                    "</th><th class=\"n\">the run before</th><th "
                    "class=\"n\">change</th><th>verdict</th><th>change "
                    "points</th></tr>\n");
    cJSON_ArrayForEach (f, fits) {
        fit_row(sb, f);
    }
    strbuf_adds(sb, "</table>\n");
    history_svg_fits(h, FIT_CHARTS, sb);
    if (n > FIT_CHARTS)
        strbuf_addf(sb,
                    "<p class=\"note\">the first %d fits are charted, of "
                    "%zu</p>",
                    FIT_CHARTS, n);
    strbuf_adds(sb, "</section>\n");
    cJSON_Delete(fits);
}

static void
run_options(struct strbuf *sb, const cJSON *runs, int pick)
{
    int n = cJSON_GetArraySize(runs);

    for (int i = n; i-- > 0;) {
        const cJSON *r = cJSON_GetArrayItem(runs, i);
        long long num = (long long)ty__json_num(r, "run", 0);

        strbuf_addf(sb, "<option value=\"%lld\"%s>run %lld", num,
                    i == pick ? " selected" : "", num);
        if (ty__json_str(r, "version")) {
            strbuf_adds(sb, " &middot; ");
            strbuf_add_html(sb, ty__json_str(r, "version"));
        }
        strbuf_adds(sb, "</option>");
    }
}

static void
compare_form(struct strbuf *sb, const char *name, const cJSON *runs)
{
    int n = cJSON_GetArraySize(runs);

    if (n < 2)
        return;
    strbuf_adds(sb, "<form id=\"compare\" method=\"get\" action=\"/compare\">"
                    "<h2>Compare two runs</h2><input type=\"hidden\" "
                    "name=\"name\" value=\"");
    strbuf_add_html(sb, name);
    strbuf_adds(sb, "\"><select name=\"a\">");
    run_options(sb, runs, n - 2);
    strbuf_adds(sb, "</select> with <select name=\"b\">");
    run_options(sb, runs, n - 1);
    strbuf_adds(sb, "</select> <button type=\"submit\" id=\"compare-go\" "
                    "style=\"border-color:#2563eb;color:#2563eb\">Compare"
                    "</button></form>\n");
}

static void
runs_table(struct strbuf *sb, const cJSON *runs)
{
    int n = cJSON_GetArraySize(runs);

    strbuf_adds(sb, "<table id=\"runs\"><tr><th>run</th><th>started</th>"
                    "<th>outcome</th><th>version</th><th class=\"n\">"
                    "duration</th><th>task</th></tr>\n");
    for (int i = n; i-- > 0;) {
        const cJSON *r = cJSON_GetArrayItem(runs, i);
        double task = ty__json_num(r, "task_id", NAN),
               dur = ty__json_num(r, "duration_s", NAN);
        char d[32] = "-";

        if (!isnan(dur))
            ty__format_duration((int64_t)(dur * 1e9), d, sizeof(d));
        strbuf_addf(sb, "<tr><td>%lld</td><td>",
                    (long long)ty__json_num(r, "run", 0));
        strbuf_add_html(
            sb, ty__json_str(r, "started") ? ty__json_str(r, "started") : "-");
        strbuf_adds(sb, "</td><td>");
        strbuf_add_html(sb, ty__json_str(r, "outcome"));
        strbuf_adds(sb, "</td><td>");
        strbuf_add_html(
            sb, ty__json_str(r, "version") ? ty__json_str(r, "version") : "-");
        strbuf_addf(sb, "</td><td class=\"n\">%s</td><td>", d);
        if (!isnan(task) && task > 0)
            strbuf_addf(sb,
                        "<a href=\"/tasks/%lld\">%lld</a> &middot; <a "
                        "href=\"/tasks/%lld/report\">report</a>",
                        (long long)task, (long long)task, (long long)task);
        else
            strbuf_adds(sb, "imported");
        strbuf_adds(sb, "</td></tr>\n");
    }
    strbuf_adds(sb, "</table>\n");
}

unsigned
daemon__page_history(struct daemon *d, const char *name, struct strbuf *sb)
{
    struct history *h;
    struct err err = {0};
    cJSON *runs;
    char title[160];

    if (name == NULL || name[0] == '\0')
        return index_page(d, sb);
    pthread_mutex_lock(&d->mu);
    h = history_load(d->db, name, 0, &err);
    pthread_mutex_unlock(&d->mu);
    if (h == NULL) {
        unsigned status = err.code == ENOENT ? 404 : 500;

        daemon__dash_error(sb, d, status, err.msg);
        return status;
    }
    history_analyse(h, NULL);
    runs = history_json(h);
    snprintf(title, sizeof(title), "History: %s", name);
    daemon__dash_head(sb, d, title, 0);
    strbuf_adds(sb, "<h1>");
    strbuf_add_html(sb, name);
    strbuf_addf(sb, " <small class=\"note\">%zu runs</small></h1>\n",
                history_nruns(h));
    points_table(sb, runs);
    strbuf_adds(sb, "<section id=\"charts\"><h2>Figures over the runs</h2>"
                    "<p class=\"note\">dashed lines mark change points, with "
                    "the version recorded at the run they start at</p>");
    history_svg(h, sb);
    strbuf_adds(sb, "</section>\n");
    fits_section(sb, h);
    strbuf_adds(sb, "<section id=\"runs-section\"><h2>Runs</h2>");
    compare_form(sb, name, runs);
    runs_table(sb, runs);
    strbuf_adds(sb, "</section>\n");
    daemon__dash_foot(sb);
    cJSON_Delete(runs);
    history_destroy(&h);
    return 200;
}

/* ---- compare ------------------------------------------------------- */

static bool
number(const char *s, int64_t *out)
{
    char *end;
    long long v;

    if (s == NULL || s[0] < '1' || s[0] > '9')
        return false;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}

/* The run folders of runs a and b of name's history. */
static int
history_dirs(struct daemon *d, const char *name, int64_t a, int64_t b,
             char **da, char **db, struct err *err)
{
    struct history *h;
    cJSON *runs, *r;

    pthread_mutex_lock(&d->mu);
    h = history_load(d->db, name, 0, err);
    pthread_mutex_unlock(&d->mu);
    if (h == NULL)
        return -1;
    runs = history_json(h);
    history_destroy(&h);
    cJSON_ArrayForEach (r, runs) {
        int64_t num = (int64_t)ty__json_num(r, "run", 0);
        const char *dir = ty__json_str(r, "run_dir");

        if (num == a && dir && *da == NULL)
            *da = xstrdup(dir);
        if (num == b && dir && *db == NULL)
            *db = xstrdup(dir);
    }
    cJSON_Delete(runs);
    if (*da == NULL || *db == NULL)
        return err_set(err, ENOENT, "run %lld of %s has no run folder recorded",
                       (long long)(*da == NULL ? a : b), name);
    return 0;
}

unsigned
daemon__page_compare(struct daemon *d, const char *name, const char *a,
                     const char *b, struct strbuf *sb)
{
    struct report_opts o = {.no_html = true};
    struct report *ra = NULL, *rb = NULL;
    struct err err = {0};
    cleanup_free char *da = NULL, *db = NULL;
    int64_t na, nb;
    char *html;
    unsigned status = 404;

    if (!number(a, &na) || !number(b, &nb)) {
        daemon__dash_error(sb, d, 400,
                           "compare wants a=N&b=M: two run numbers with "
                           "name=, or two task ids");
        return 400;
    }
    if (name != NULL && name[0] != '\0') {
        if (history_dirs(d, name, na, nb, &da, &db, &err) < 0)
            goto fail;
    } else {
        da = xasprintf("%s/runs/task-%lld", d->data, (long long)na);
        db = xasprintf("%s/runs/task-%lld", d->data, (long long)nb);
    }
    if ((ra = report_build(da, &o, &err)) == NULL ||
        (rb = report_build(db, &o, &err)) == NULL) {
        status = err.code == ENOENT || err.status == EXIT_NOINPUT ? 404 : 422;
        goto fail;
    }
    html = report_compare_html(ra, rb);
    strbuf_adds(sb, html);
    free(html);
    report_destroy(&ra);
    report_destroy(&rb);
    return 200;
fail:
    report_destroy(&ra);
    daemon__dash_error(sb, d, status, err.msg);
    return status;
}
