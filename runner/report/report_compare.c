/*
 * report_compare.c — two reports side by side, A (before) and B (after),
 * for `testyard compare`: per group the peak, the final usage, the growth
 * slopes and verdicts and the OOM kills, the top allocation sites of
 * both with what changed (B - A), the growing sites' bytes per round, and
 * (on the page) the slopes of the fits against the work done side by side.
 * Groups are matched by id; a group in only one run is shown with the other
 * side empty.
 *
 * The same rows feed the terminal table, the JSON and the HTML page, so
 * the three always agree.
 */
#include "report/report_int.h"

#include "base/jsonpretty.h"
#include "base/strbuf.h"
#include "ty_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMP_SITES 10
/* Fits listed per group on the page, at most. */
#define CMP_FITS 64

enum unit { U_BYTES, U_RATE, U_COUNT };

/* One figure of a group in both runs; -1 (or NAN for rates) unknown. */
struct cmp_row {
    const char *name; /* "peak" */
    const char *key;  /* "peak_bytes" */
    enum unit unit;
    double a, b;
};

struct cmp_site {
    const char *function;
    int64_t a, b;
};

static const struct report_group *
find_group(const struct report *r, const char *id)
{
    for (size_t g = 0; g < r->ngroups; g++)
        if (strcmp(r->groups[g].id, id) == 0)
            return &r->groups[g];
    return NULL;
}

static double
rate_of(const struct report_fit *f)
{
    return f->n >= 2 ? f->slope : NAN;
}

/* The rows of a group; either side may be NULL. Returns the count. */
static size_t
rows_of(const struct report_group *a, const struct report_group *b,
        struct cmp_row *rows)
{
    const struct {
        const char *name, *key;
        enum unit unit;
    } defs[] = {
        {"peak", "peak_bytes", U_BYTES},
        {"final", "final_bytes", U_BYTES},
        {"heap in use growth", "heap_bytes_per_round", U_RATE},
        {"RSS growth", "rss_bytes_per_round", U_RATE},
        {"cgroup growth", "cgroup_bytes_per_round", U_RATE},
        {"OOM kills", "oom_kills", U_COUNT},
    };
    const struct report_group *side[2] = {a, b};
    double v[2][6];

    for (int s = 0; s < 2; s++) {
        const struct report_group *g = side[s];

        v[s][0] = g ? (double)g->peak : -1;
        v[s][1] = g ? (double)g->final : -1;
        v[s][2] = g ? rate_of(&g->growth.heap) : NAN;
        v[s][3] = g ? rate_of(&g->growth.rss) : NAN;
        v[s][4] = g ? rate_of(&g->growth.cgroup) : NAN;
        v[s][5] = g ? (double)g->noom : -1;
    }
    for (size_t i = 0; i < ARRAY_LEN(defs); i++)
        rows[i] = (struct cmp_row){defs[i].name, defs[i].key, defs[i].unit,
                                   v[0][i], v[1][i]};
    return ARRAY_LEN(defs);
}

static bool
known(const struct cmp_row *row, double v)
{
    return row->unit == U_RATE ? !isnan(v) : v >= 0;
}

static void
fmt_value(const struct cmp_row *row, double v, bool diff, char *buf,
          size_t size)
{
    char b[48];

    if (!known(row, v) && !diff) {
        snprintf(buf, size, "-");
    } else if (row->unit == U_COUNT) {
        snprintf(buf, size, diff ? "%+.0f" : "%.0f", v);
    } else if (row->unit == U_RATE || diff) {
        report__fmt_rate(v, b, sizeof(b));
        if (row->unit == U_BYTES)
            b[strlen(b) - strlen("/round")] = '\0';
        snprintf(buf, size, "%s", b);
    } else {
        report__fmt_bytes(report__i64(v), buf, size);
    }
}

/* B - A as text, with the change in percent for byte figures. */
static void
fmt_diff(const struct cmp_row *row, char *buf, size_t size)
{
    char d[48];

    if (!known(row, row->a) || !known(row, row->b)) {
        snprintf(buf, size, "-");
        return;
    }
    fmt_value(row, row->b - row->a, true, d, sizeof(d));
    if (row->unit == U_BYTES && row->a > 0)
        snprintf(buf, size, "%s (%+.0f%%)", d,
                 100.0 * (row->b - row->a) / row->a);
    else
        snprintf(buf, size, "%s", d);
}

/* ---- sites -----------------------------------------------------------------
 */

static int
cmp_delta(const void *x, const void *y)
{
    const struct cmp_site *p = x, *q = y;
    int64_t dp = llabs(p->b - p->a), dq = llabs(q->b - q->a);

    if (dp != dq)
        return dp > dq ? -1 : 1;
    return strcmp(p->function, q->function);
}

static struct cmp_site *
site_slot(struct cmp_site *v, size_t *n, const char *f)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(v[i].function, f) == 0)
            return &v[i];
    v[*n] = (struct cmp_site){f, 0, 0};
    return &v[(*n)++];
}

/* A site's figure: in-use at the last snapshot, or for growing sites
 * bytes per round (0 when the rounds are unknown). */
static int64_t
site_value(const struct report_site *s, bool growing)
{
    if (!growing)
        return s->flat;
    return isnan(s->rate) ? 0 : report__i64(s->rate);
}

/* The union of both sides' top (or growing) sites, largest change first.
 * *out is the caller's (free). */
static size_t
sites_of(const struct report_group *a, const struct report_group *b,
         bool growing, struct cmp_site **out)
{
    const struct report_group *side[2] = {a, b};
    size_t max = 0, n = 0;
    struct cmp_site *v;

    for (int k = 0; k < 2; k++)
        if (side[k] != NULL)
            max += growing ? side[k]->gsites.n : side[k]->nsites;
    v = xcalloc(max ? max : 1, sizeof(*v));
    for (int k = 0; k < 2; k++) {
        const struct report_group *g = side[k];
        const struct report_site *sv = g == NULL ? NULL
                                       : growing ? g->gsites.v
                                                 : g->sites;
        size_t ns = g == NULL ? 0 : growing ? g->gsites.n : g->nsites;

        for (size_t i = 0; i < ns; i++) {
            struct cmp_site *c = site_slot(v, &n, sv[i].function);

            *(k == 0 ? &c->a : &c->b) = site_value(&sv[i], growing);
        }
    }
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_delta);
    *out = v;
    return n < CMP_SITES ? n : CMP_SITES;
}

/* Every group id of a, then those only in b. */
static size_t
group_ids(const struct report *a, const struct report *b, const char ***ids)
{
    size_t n = 0;

    *ids = xcalloc(a->ngroups + b->ngroups + 1, sizeof(**ids));
    for (size_t g = 0; g < a->ngroups; g++)
        (*ids)[n++] = a->groups[g].id;
    for (size_t g = 0; g < b->ngroups; g++)
        if (find_group(a, b->groups[g].id) == NULL)
            (*ids)[n++] = b->groups[g].id;
    return n;
}

static const char *
verdict_of(const struct report_group *g)
{
    return g ? report__verdict_name(g->growth.verdict.kind) : "-";
}

static void
fmt_site(int64_t v, bool growing, char *buf, size_t size)
{
    if (growing)
        report__fmt_rate((double)v, buf, size);
    else
        report__fmt_bytes(v, buf, size);
}

/* ---- terminal --------------------------------------------------------------
 */

static void
print_run(const char *side, const struct report *r, FILE *out)
{
    fprintf(out, "%s: %s  %s/%s  %s  %s\n", side,
            r->run_id ? r->run_id : report_run_dir(r),
            r->plan   ? r->plan
            : r->name ? r->name
                      : "?",
            r->case_name ? r->case_name : "?", r->runner ? r->runner : "?",
            r->outcome ? r->outcome : "outcome unknown");
}

static void
print_sites(const struct cmp_site *s, size_t ns, bool growing, FILE *out)
{
    if (ns > 0)
        fprintf(out, "  %s:\n",
                growing ? "growing sites (bytes per round)"
                        : "top sites (heap in use at the last snapshot)");
    for (size_t i = 0; i < ns; i++) {
        char va[32], vb[32], d[48];
        /* A long name eats into A's column before it pushes the rest. */
        int len = (int)strlen(s[i].function), w = len > 40 ? 40 : len;
        int wa = w > 16 ? 18 - (w - 16) : 18;

        fmt_site(s[i].a, growing, va, sizeof(va));
        fmt_site(s[i].b, growing, vb, sizeof(vb));
        report__fmt_rate((double)(s[i].b - s[i].a), d, sizeof(d));
        if (!growing)
            d[strlen(d) - strlen("/round")] = '\0';
        fprintf(out, "    %-16.40s %*s %18s  %s\n", s[i].function,
                wa < 9 ? 9 : wa, va, vb, d);
    }
}

static void
print_group(const char *id, const struct report_group *a,
            const struct report_group *b, FILE *out)
{
    struct cmp_row rows[8];
    size_t n = rows_of(a, b, rows);
    struct cmp_site *s = NULL, *gs = NULL;
    size_t ns = sites_of(a, b, false, &s), ngs = sites_of(a, b, true, &gs);

    fprintf(out, "\n%-20s %18s %18s  %s\n", id, "A", "B", "B - A");
    for (size_t i = 0; i < n; i++) {
        char va[48], vb[48], d[64];

        fmt_value(&rows[i], rows[i].a, false, va, sizeof(va));
        fmt_value(&rows[i], rows[i].b, false, vb, sizeof(vb));
        fmt_diff(&rows[i], d, sizeof(d));
        fprintf(out, "  %-18s %18s %18s  %s\n", rows[i].name, va, vb, d);
    }
    fprintf(out, "  %-18s %18s %18s\n", "verdict", verdict_of(a),
            verdict_of(b));
    print_sites(s, ns, false, out);
    print_sites(gs, ngs, true, out);
    free(s);
    free(gs);
}

void
report_compare_print(const struct report *a, const struct report *b, FILE *out)
{
    const char **ids;
    size_t n = group_ids(a, b, &ids);

    fputc('\n', out);
    print_run("A", a, out);
    print_run("B", b, out);
    for (size_t i = 0; i < n; i++)
        print_group(ids[i], find_group(a, ids[i]), find_group(b, ids[i]), out);
    free(ids);
    fflush(out);
}

/* ---- JSON ------------------------------------------------------------------
 */

static void
add_value(cJSON *o, const char *key, const struct cmp_row *row, double v)
{
    if (!known(row, v))
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, round(v));
}

static cJSON *
run_json(const struct report *r)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "run_dir", report_run_dir(r));
    ty__json_string(o, "run_id", r->run_id);
    cJSON_AddStringToObject(o, "outcome", r->outcome ? r->outcome : "unknown");
    return o;
}

static cJSON *
sites_json(const struct report_group *a, const struct report_group *b,
           bool growing)
{
    static const char *const keys[2][3] = {
        {"a_bytes", "b_bytes", "diff_bytes"},
        {"a_bytes_per_round", "b_bytes_per_round", "diff_bytes_per_round"}};
    cJSON *arr = cJSON_CreateArray();
    struct cmp_site *s = NULL;
    size_t ns = sites_of(a, b, growing, &s);

    for (size_t i = 0; i < ns; i++) {
        cJSON *x = cJSON_CreateObject();

        cJSON_AddStringToObject(x, "function", s[i].function);
        cJSON_AddNumberToObject(x, keys[growing][0], (double)s[i].a);
        cJSON_AddNumberToObject(x, keys[growing][1], (double)s[i].b);
        cJSON_AddNumberToObject(x, keys[growing][2], (double)(s[i].b - s[i].a));
        cJSON_AddItemToArray(arr, x);
    }
    free(s);
    return arr;
}

static cJSON *
group_json(const char *id, const struct report_group *a,
           const struct report_group *b)
{
    cJSON *o = cJSON_CreateObject();
    struct cmp_row rows[8];
    size_t n = rows_of(a, b, rows);

    cJSON_AddStringToObject(o, "id", id);
    cJSON_AddBoolToObject(o, "in_a", a != NULL);
    cJSON_AddBoolToObject(o, "in_b", b != NULL);
    for (size_t i = 0; i < n; i++) {
        cJSON *f = cJSON_AddObjectToObject(o, rows[i].key);

        add_value(f, "a", &rows[i], rows[i].a);
        add_value(f, "b", &rows[i], rows[i].b);
        if (known(&rows[i], rows[i].a) && known(&rows[i], rows[i].b))
            cJSON_AddNumberToObject(f, "diff", round(rows[i].b - rows[i].a));
        else
            cJSON_AddNullToObject(f, "diff");
    }
    cJSON_AddStringToObject(o, "verdict_a", verdict_of(a));
    cJSON_AddStringToObject(o, "verdict_b", verdict_of(b));
    cJSON_AddItemToObject(o, "sites", sites_json(a, b, false));
    cJSON_AddItemToObject(o, "growing_sites", sites_json(a, b, true));
    return o;
}

char *
report_compare_json(const struct report *a, const struct report *b)
{
    cJSON *o = cJSON_CreateObject(), *arr;
    const char **ids;
    size_t n = group_ids(a, b, &ids);
    char *text;

    cJSON_AddItemToObject(o, "a", run_json(a));
    cJSON_AddItemToObject(o, "b", run_json(b));
    arr = cJSON_AddArrayToObject(o, "groups");
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, group_json(ids[i], find_group(a, ids[i]),
                                             find_group(b, ids[i])));
    free(ids);
    text = jsonpretty_print(o);
    cJSON_Delete(o);
    return text;
}

/* ---- HTML ------------------------------------------------------------------
 */

/* "up" when B is worse (more memory, faster growth), "down" when better. */
static const char *
change_class(double a, double b)
{
    return b > a ? "up" : b < a ? "down" : "";
}

static void
html_run(struct strbuf *sb, const char *side, const struct report *r)
{
    strbuf_addf(sb, "<tr><td><b>%s</b></td><td>", side);
    report__html_esc(sb, r->run_id ? r->run_id : report_run_dir(r));
    strbuf_adds(sb, "</td><td>");
    report__html_esc(sb, r->plan ? r->plan : r->name ? r->name : "?");
    strbuf_adds(sb, " / ");
    report__html_esc(sb, r->case_name ? r->case_name : "?");
    strbuf_adds(sb, "</td><td>");
    report__html_esc(sb, r->outcome ? r->outcome : "unknown");
    strbuf_adds(sb, "</td><td>");
    report__html_esc(sb, report_run_dir(r));
    strbuf_adds(sb, "</td></tr>\n");
}

static void
html_rows(struct strbuf *sb, const struct report_group *a,
          const struct report_group *b)
{
    struct cmp_row rows[8];
    size_t n = rows_of(a, b, rows);

    for (size_t i = 0; i < n; i++) {
        char va[48], vb[48], d[64];
        bool both = known(&rows[i], rows[i].a) && known(&rows[i], rows[i].b);

        fmt_value(&rows[i], rows[i].a, false, va, sizeof(va));
        fmt_value(&rows[i], rows[i].b, false, vb, sizeof(vb));
        fmt_diff(&rows[i], d, sizeof(d));
        strbuf_addf(sb,
                    "<tr><td>%s</td><td class=\"n\">%s</td><td class=\"n\">"
                    "%s</td><td class=\"n %s\">%s</td></tr>\n",
                    rows[i].name, va, vb,
                    both ? change_class(rows[i].a, rows[i].b) : "", d);
    }
    strbuf_addf(sb,
                "<tr><td>verdict</td><td class=\"n\">%s</td><td "
                "class=\"n\">%s</td><td></td></tr>\n",
                verdict_of(a), verdict_of(b));
}

static void
html_sites(struct strbuf *sb, const struct report_group *a,
           const struct report_group *b, bool growing)
{
    struct cmp_site *s = NULL;
    size_t ns = sites_of(a, b, growing, &s);

    if (ns > 0)
        strbuf_addf(sb,
                    "<h3 class=\"site\">%s, largest change first</h3>\n"
                    "<div class=\"scroll\"><table>\n<tr><th>function</th>"
                    "<th class=\"n\">A</th><th class=\"n\">B</th><th "
                    "class=\"n\">B &minus; A</th></tr>\n",
                    growing ? "Growing sites, bytes per round"
                            : "Top allocation sites");
    for (size_t i = 0; i < ns; i++) {
        char va[48], vb[48], d[48];

        fmt_site(s[i].a, growing, va, sizeof(va));
        fmt_site(s[i].b, growing, vb, sizeof(vb));
        report__fmt_rate((double)(s[i].b - s[i].a), d, sizeof(d));
        if (!growing)
            d[strlen(d) - strlen("/round")] = '\0';
        strbuf_adds(sb, "<tr><td class=\"fn\">");
        report__html_esc(sb, s[i].function);
        strbuf_addf(sb,
                    "</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                    "<td class=\"n %s\">%s</td></tr>\n",
                    va, vb, change_class((double)s[i].a, (double)s[i].b), d);
    }
    if (ns > 0)
        strbuf_adds(sb, "</table></div>\n");
    free(s);
}

/* g's fit with the key of w, NULL when g (or it) has none. */
static const struct report_wfit *
wfit_like(const struct report_group *g, const struct report_wfit *w)
{
    for (size_t i = 0; g != NULL && i < g->nwfits; i++) {
        const struct report_wfit *o = &g->wfits[i];

        if (strcmp(o->series, w->series) == 0 && strcmp(o->x, w->x) == 0 &&
            (o->stage == w->stage ||
             (o->stage && w->stage && strcmp(o->stage, w->stage) == 0)))
            return o;
    }
    return NULL;
}

static void
html_fit_row(struct strbuf *sb, const struct report_wfit *fa,
             const struct report_wfit *fb)
{
    const struct report_wfit *k = fa ? fa : fb;
    char va[64] = "-", vb[64] = "-", d[32] = "-";

    if (fa)
        report__fmt_per(fa, fa->fit.slope, va, sizeof(va));
    if (fb)
        report__fmt_per(fb, fb->fit.slope, vb, sizeof(vb));
    if (fa && fb && fa->fit.slope != 0)
        snprintf(d, sizeof(d), "%+.0f%%",
                 100 * (fb->fit.slope - fa->fit.slope) / fabs(fa->fit.slope));
    strbuf_adds(sb, "<tr class=\"cmp-fit\"><td>");
    report__html_esc(sb, k->series);
    strbuf_adds(sb, "</td><td>");
    report__html_esc(sb, k->x);
    strbuf_adds(sb, "</td><td>");
    report__html_esc(sb, k->stage ? k->stage : "whole run");
    strbuf_addf(sb,
                "</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                "<td class=\"n %s\">%s</td><td>%s</td><td>%s</td></tr>\n",
                va, vb,
                fa && fb ? change_class(fa->fit.slope, fb->fit.slope) : "", d,
                fa ? report__wfit_verdict(fa) : "-",
                fb ? report__wfit_verdict(fb) : "-");
}

/* The fits of both sides, matched by series, x and stage: A's in its
 * order, then those only in B. */
static void
html_fits(struct strbuf *sb, const struct report_group *a,
          const struct report_group *b)
{
    size_t na = a ? a->nwfits : 0, nb = b ? b->nwfits : 0, shown = 0;

    if (na + nb == 0)
        return;
    strbuf_adds(sb, "<h3 class=\"site\">Fits against the work done, slope "
                    "per unit</h3>\n<div class=\"scroll\"><table>\n<tr><th>"
                    "series</th><th>against</th><th>stage</th><th class=\"n\">"
                    "A</th><th class=\"n\">B</th><th class=\"n\">B &minus; "
                    "A</th><th>verdict A</th><th>verdict B</th></tr>\n");
    for (size_t i = 0; i < na && shown < CMP_FITS; i++, shown++)
        html_fit_row(sb, &a->wfits[i], wfit_like(b, &a->wfits[i]));
    for (size_t i = 0; i < nb && shown < CMP_FITS; i++)
        if (wfit_like(a, &b->wfits[i]) == NULL) {
            html_fit_row(sb, NULL, &b->wfits[i]);
            shown++;
        }
    strbuf_adds(sb, "</table></div>\n");
}

char *
report_compare_html(const struct report *a, const struct report *b)
{
    struct strbuf sb;
    const char **ids;
    size_t n = group_ids(a, b, &ids);

    strbuf_init(&sb);
    report__html_head(&sb, "testyard compare");
    strbuf_adds(&sb, "<header><h1>Comparison of two runs</h1><p "
                     "class=\"meta\">A is before, B after; B &minus; A in "
                     "red where B uses more memory or grows faster, in "
                     "green where it uses less.</p></header>\n<section>\n"
                     "<div class=\"scroll\"><table>\n<tr><th></th><th>run"
                     "</th><th>plan / case</th><th>outcome</th><th>folder"
                     "</th></tr>\n");
    html_run(&sb, "A", a);
    html_run(&sb, "B", b);
    strbuf_adds(&sb, "</table></div>\n</section>\n");
    for (size_t i = 0; i < n; i++) {
        const struct report_group *ga = find_group(a, ids[i]);
        const struct report_group *gb = find_group(b, ids[i]);

        strbuf_adds(&sb, "<section>\n<h2>");
        report__html_esc(&sb, ids[i]);
        strbuf_addf(&sb,
                    "%s</h2>\n<div class=\"scroll\"><table>\n<tr><th>"
                    "figure</th><th class=\"n\">A</th><th class=\"n\">"
                    "B</th><th class=\"n\">B &minus; A</th></tr>\n",
                    ga == NULL   ? " (only in B)"
                    : gb == NULL ? " (only in A)"
                                 : "");
        html_rows(&sb, ga, gb);
        strbuf_adds(&sb, "</table></div>\n");
        html_sites(&sb, ga, gb, false);
        html_sites(&sb, ga, gb, true);
        html_fits(&sb, ga, gb);
        strbuf_adds(&sb, "</section>\n");
    }
    free(ids);
    report__html_foot(&sb);
    return strbuf_detach(&sb);
}
