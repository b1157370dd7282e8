/*
 * report_fits_html.c — report.html's "Against the work done": per group a
 * table of every fit of report_fits.c (series, what it is fitted against,
 * stage, slope per unit of work, R², verdict), then one small chart per
 * (series, counter) of the first instance that has it: its points
 * (thinned to at most a few hundred) and each stage's fitted line. The
 * page stays bounded: at most HTML_MAX_ROWS rows and HTML_MAX_CHARTS
 * charts per group; summary.json has every fit.
 */
#include "report/report_int.h"

#include "base/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define HTML_MAX_ROWS 200
#define HTML_MAX_CHARTS 24
#define W_W 330
#define W_H 170
#define W_L 52
#define W_R 10
#define W_T 22
#define W_B 30

static void
fit_row(struct strbuf *sb, const struct report_wfit *w)
{
    char per[160], r2[16];

    report__fmt_per(w, w->fit.slope, per, sizeof(per));
    snprintf(r2, sizeof(r2), "%.2f", w->fit.r2);
    strbuf_adds(sb, "<tr>");
    report__html_cell(sb, "fn", w->series);
    report__html_cell(sb, NULL, w->x);
    report__html_cell(sb, NULL, w->stage ? w->stage : "whole run");
    report__html_cell(sb, "n", w->fit.n >= 2 ? per : "-");
    report__html_cell(sb, "n", w->fit.n >= 2 ? r2 : "-");
    strbuf_addf(sb, "<td class=\"n\">%zu</td><td class=\"n\">%zu</td>",
                w->fit.n, w->ninst);
    report__html_cell(sb, w->fit.trend == TREND_GROWING ? "up" : NULL,
                      report__wfit_verdict(w));
    strbuf_adds(sb, "</tr>\n");
}

/* ---- charts ------------------------------------------------------------ */

struct box {
    double xmin, xmax, ymin, ymax;
};

static double
bx(const struct box *b, double x)
{
    double span = b->xmax - b->xmin;

    return W_L + (span > 0 ? (x - b->xmin) / span : 0.5) * (W_W - W_L - W_R);
}

static double
by(const struct box *b, double y)
{
    double span = b->ymax - b->ymin;

    return W_H - W_B -
           (span > 0 ? (y - b->ymin) / span : 0.5) * (W_H - W_T - W_B);
}

/* The fits of one (series, x): wfits[first..end) share them (they are
 * made stage after stage for each key). */
static size_t
same_key(const struct report_group *g, size_t first)
{
    size_t end = first + 1;

    while (end < g->nwfits &&
           strcmp(g->wfits[end].series, g->wfits[first].series) == 0 &&
           strcmp(g->wfits[end].x, g->wfits[first].x) == 0)
        end++;
    return end;
}

static void
chart_box(const struct report_group *g, size_t a, size_t b, struct box *bo)
{
    bool any = false;

    for (size_t i = a; i < b; i++)
        for (size_t k = 0; k < g->wfits[i].npts; k++) {
            double x = g->wfits[i].px[k], y = g->wfits[i].py[k];

            bo->xmin = any && bo->xmin < x ? bo->xmin : x;
            bo->xmax = any && bo->xmax > x ? bo->xmax : x;
            bo->ymin = any && bo->ymin < y ? bo->ymin : y;
            bo->ymax = any && bo->ymax > y ? bo->ymax : y;
            any = true;
        }
    /* from 0, as the page's other charts: noise on a flat series is not
     * blown up to the chart's height */
    if (bo->ymin > 0)
        bo->ymin = 0;
}

/* A y-axis label: bytes, or CPU seconds. */
static void
ylabel(const struct report_wfit *w, double v, char *buf, size_t size)
{
    if (w->seconds)
        snprintf(buf, size, "%.1f s", v);
    else
        report__fmt_bytes(report__i64(v), buf, size);
}

static void
chart_axes(struct strbuf *sb, const struct report_wfit *w, const struct box *b)
{
    char lo[32], hi[32];

    ylabel(w, b->ymin, lo, sizeof(lo));
    ylabel(w, b->ymax, hi, sizeof(hi));
    strbuf_addf(sb,
                "<line class=\"frame\" x1=\"%d\" y1=\"%d\" x2=\"%d\" "
                "y2=\"%d\"/><line class=\"frame\" x1=\"%d\" y1=\"%d\" "
                "x2=\"%d\" y2=\"%d\"/>"
                "<text class=\"k\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">"
                "%s</text><text class=\"k\" x=\"%d\" y=\"%.1f\" "
                "text-anchor=\"end\">%s</text>"
                "<text class=\"k\" x=\"%d\" y=\"%d\">%.0f</text>"
                "<text class=\"k\" x=\"%d\" y=\"%d\" text-anchor=\"end\">"
                "%.0f ",
                W_L, W_H - W_B, W_W - W_R, W_H - W_B, W_L, W_T, W_L, W_H - W_B,
                W_L - 4, by(b, b->ymin) + 3, lo, W_L - 4, by(b, b->ymax) + 3,
                hi, W_L, W_H - W_B + 14, b->xmin, W_W - W_R, W_H - W_B + 14,
                b->xmax);
    report__html_esc(sb, w->x);
    strbuf_adds(sb, "</text>");
}

static void
chart(struct strbuf *sb, const struct report_group *g, size_t gi, size_t a,
      size_t b)
{
    const struct report_wfit *w0 = &g->wfits[a];
    const char *color = report__group_color(gi);
    struct box bo = {0, 0, 0, 0};

    chart_box(g, a, b, &bo);
    strbuf_addf(sb,
                "<svg class=\"wchart\" viewBox=\"0 0 %d %d\" role=\"img\" "
                "xmlns=\"http://www.w3.org/2000/svg\"><title>",
                W_W, W_H);
    report__html_esc(sb, w0->first_inst);
    strbuf_adds(sb, ": ");
    report__html_esc(sb, w0->series);
    strbuf_adds(sb, " against ");
    report__html_esc(sb, w0->x);
    strbuf_addf(sb, "</title><text class=\"t\" x=\"%d\" y=\"14\">", W_L);
    report__html_esc(sb, w0->series);
    strbuf_adds(sb, "</text>");
    chart_axes(sb, w0, &bo);
    for (size_t i = a; i < b; i++) {
        const struct report_wfit *w = &g->wfits[i];
        const struct report_fit *f = &w->first;
        double x0 = w->npts ? w->px[0] : 0, x1 = x0;

        strbuf_addf(sb, "<g fill=\"%s\">", color);
        for (size_t k = 0; k < w->npts; k++) {
            x0 = w->px[k] < x0 ? w->px[k] : x0;
            x1 = w->px[k] > x1 ? w->px[k] : x1;
            strbuf_addf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.8\"/>",
                        bx(&bo, w->px[k]), by(&bo, w->py[k]));
        }
        strbuf_adds(sb, "</g>");
        if (w->npts >= 2)
            strbuf_addf(sb,
                        "<line class=\"fitl\" stroke=\"#111827\" x1=\"%.1f\" "
                        "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                        bx(&bo, x0), by(&bo, f->intercept + f->slope * x0),
                        bx(&bo, x1), by(&bo, f->intercept + f->slope * x1));
    }
    strbuf_adds(sb, "</svg>\n");
}

static void
charts(struct strbuf *sb, const struct report_group *g, size_t gi)
{
    size_t shown = 0, more = 0;

    strbuf_adds(sb, "<div class=\"wcharts\">\n");
    for (size_t i = 0; i < g->nwfits; i = same_key(g, i)) {
        if (strcmp(g->wfits[i].x, "rounds") == 0)
            continue;
        if (shown >= HTML_MAX_CHARTS) {
            more++;
            continue;
        }
        chart(sb, g, gi, i, same_key(g, i));
        shown++;
    }
    strbuf_adds(sb, "</div>\n");
    if (more > 0)
        strbuf_addf(sb,
                    "<p class=\"note\">... and %zu more charts' fits in the "
                    "table and summary.json.</p>\n",
                    more);
}

static void
group(struct strbuf *sb, const struct report_group *g, size_t gi)
{
    report__html_group_h3(sb, g->id, gi);
    strbuf_adds(sb, "</h3>\n<div class=\"scroll\"><table>\n<tr><th>series"
                    "</th><th>against</th><th>stage</th><th class=\"n\">"
                    "slope</th><th class=\"n\">R&sup2;</th><th class=\"n\">"
                    "points</th><th class=\"n\">instances</th><th>verdict"
                    "</th></tr>\n");
    for (size_t i = 0; i < g->nwfits && i < HTML_MAX_ROWS; i++)
        fit_row(sb, &g->wfits[i]);
    strbuf_adds(sb, "</table></div>\n");
    if (g->nwfits > HTML_MAX_ROWS)
        strbuf_addf(sb,
                    "<p class=\"note\">... and %zu more fits in "
                    "summary.json.</p>\n",
                    g->nwfits - HTML_MAX_ROWS);
    charts(sb, g, gi);
}

void
report__html_fits(struct strbuf *sb, const struct report *r)
{
    bool any = false;

    for (size_t g = 0; g < r->ngroups; g++)
        any = any || r->groups[g].nwfits > 0;
    if (!any)
        return;
    strbuf_adds(sb, "<section id=\"work\">\n<h2>Against the work done</h2>\n"
                    "<p class=\"note\">Each series (cgroup usage, heap in "
                    "use, each process's RSS, VmSize and CPU, each disk "
                    "path's allocated bytes) fitted against each counter "
                    "of work.csv, at the counter's value when each sample "
                    "was taken, and against rounds, per stage; the slope is "
                    "the median over the group's instances; restart time "
                    "(restart:seconds) is fitted over the whole run against "
                    "each counter's total at each restart's stop and "
                    "against the restart's number. The charts show the "
                    "first instance's points and its line in each "
                    "stage.</p>\n");
    for (size_t g = 0; g < r->ngroups; g++)
        if (r->groups[g].nwfits > 0)
            group(sb, &r->groups[g], g);
    strbuf_adds(sb, "</section>\n");
}
