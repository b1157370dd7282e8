/*
 * history_svg.c — a name's series as charts for the daemon's dashboard:
 * per group one inline SVG per figure (peak, final, growth per round)
 * over the runs, in the style of the report's charts (report_svg.c) and
 * like them readable without JavaScript and without the network.
 *
 * x is the run, oldest first, one slot per run of the series (labelled
 * with its number, thinned), with the version marked under the axis
 * where it changes from the run before; y the figure, from 0 for bytes,
 * through 0 (drawn) for the signed growth. Each known value is a circle
 * with a <title>, hollow and red when its run did not succeed; polylines
 * join neighbouring known values, so an unknown one or a run without
 * the group (a failed build) leaves a gap, marked by a cross at the
 * bottom. Each change point history_analyse found is a dashed line at
 * the run it starts, labelled above with the run, its version and the
 * change. Every string comes from files instances or users wrote and is
 * escaped.
 */
#include "history/history_int.h"

#include "ty_units.h"
#include "base/strbuf.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CHART_W 1000
#define CHART_H 262
#define PAD_L 84
#define PAD_R 24
#define PAD_T 62
#define PAD_B 62
/* Room a label needs per character (11 px text), and the rows of change
 * point labels above the plot that are tried before one overlaps. */
#define CHAR_W 6.4
#define CP_ROWS 2

const char history_svg_css[] =
    "svg.hchart{width:100%;height:auto;display:block;margin:4px 0 14px;"
    "--c:#2563eb}"
    "svg.hchart[data-figure=final]{--c:#16a34a}"
    "svg.hchart[data-figure=growth]{--c:#ea580c}"
    "svg.hchart[data-figure=slope]{--c:#0891b2}"
    ".hchart .hname{fill:#111827;font-size:14px;font-weight:600}"
    ".hchart .hgrid{stroke:#e5e7eb}.hchart .hzero{stroke:#6b7280}"
    ".hchart .htick{fill:#6b7280;font-size:12px}"
    ".hchart .haxis{fill:#4b5563;font-size:12px}"
    ".hchart .hframe{stroke:#9ca3af}"
    ".hchart .hline{fill:none;stroke:var(--c);stroke-width:2;"
    "stroke-linejoin:round}"
    ".hchart .pt{fill:var(--c);stroke:#fff;stroke-width:1.2}"
    ".hchart .pt.bad{fill:#fff;stroke:#dc2626;stroke-width:2.2}"
    ".hchart .nov{stroke:#9ca3af;stroke-width:1.6}"
    ".hchart .ver line{stroke:#7c3aed;stroke-width:1.5}"
    ".hchart .ver text{fill:#7c3aed;font-size:11px;"
    "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}"
    ".hchart .cp line{stroke:#b45309;stroke-width:1.6;"
    "stroke-dasharray:6 4}"
    ".hchart .cp text{fill:#b45309;font-size:11px;font-weight:600;"
    "paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}"
    ".hchart .empty{fill:#9ca3af;font-size:13px}"
    "p.hkey{color:#4b5563;font-size:13px;margin:6px 0 10px}"
    "p.hkey i{display:inline-block;width:10px;height:10px;"
    "border-radius:50%;background:#2563eb;vertical-align:middle;"
    "margin:0 5px 0 12px}p.hkey i.kbad{background:#fff;"
    "border:2px solid #dc2626;width:7px;height:7px}"
    "p.hkey i.kcp{border-radius:0;width:0;height:14px;background:none;"
    "border-left:2px dashed #b45309}"
    "p.hkey i.kver{border-radius:0;width:0;height:10px;background:none;"
    "border-left:2px solid #7c3aed}";

static const char *const figure_titles[HISTORY_NFIGURES] = {
    "peak memory", "final memory", "growth per round"};

/* One chart: a group's figure over the runs of h, or (fk set) a fit
 * key's slope. */
struct chart {
    const struct history *h;
    const char *group;
    int fig;
    const struct history_fit *fk; /* the key, NULL for a figure */
    size_t fkey;                  /* its index in h->fkeys */
    double x0, y0, w, ht;
    double ymin, ymax;
};

static double
cx(const struct chart *c, size_t i)
{
    return c->x0 + ((double)i + 0.5) / (double)c->h->nruns * c->w;
}

static double
cy(const struct chart *c, double v)
{
    return c->y0 + c->ht - (v - c->ymin) / (c->ymax - c->ymin) * c->ht;
}

/* Run i's value of the figure, false when unknown or the run has not
 * the group. */
static bool
value(const struct chart *c, size_t i, double *v)
{
    const struct history_group *g;

    if (c->fk != NULL) {
        const struct history_fit *f = history__fit_of(&c->h->runs[i], c->fk);

        if (f == NULL || isnan(f->slope))
            return false;
        *v = f->slope;
        return true;
    }
    g = history__group_of(&c->h->runs[i], c->group);

    if (g == NULL || isnan(g->fig[c->fig]))
        return false;
    *v = g->fig[c->fig];
    return true;
}

/* A version as the charts name it: 12 characters, or "no version". */
static void
short_version(const char *v, char *buf, size_t size)
{
    snprintf(buf, size, "%.12s", v != NULL ? v : "no version");
}

static bool
succeeded(const struct history_run *r)
{
    return r->outcome != NULL && strcmp(r->outcome, "success") == 0;
}

/* ---- the y axis ---------------------------------------------------------- */

/* The figure's range, 0 included, with a margin; growth spans at least
 * the smallest change the analysis reports either side of 0, so noise
 * about 0 does not fill the chart; a flat or empty one gets 1 KiB so the
 * axis still has ticks. */
static void
y_range(struct chart *c)
{
    double lo = 0, hi = 0, v, span;

    if (c->fig == HISTORY_GROWTH) {
        lo = -HISTORY_GROWTH_MIN_ABS;
        hi = HISTORY_GROWTH_MIN_ABS;
    }
    for (size_t i = 0; i < c->h->nruns; i++)
        if (value(c, i, &v)) {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    span = hi - lo;
    if (span <= 0 && c->fk != NULL)
        span = hi = 1;
    else if (span <= 0)
        span = hi = 1024;
    c->ymax = hi + 0.08 * span;
    c->ymin = lo < 0 ? lo - 0.08 * span : 0;
}

/* A power-of-two step giving at most about six lines. */
static double
y_step(const struct chart *c)
{
    double step = 1;

    if (c->fk != NULL) { /* a slope: 1, 2 or 5 times a power of ten */
        double span = c->ymax - c->ymin;
        double p = pow(10, floor(log10(span / 6)));

        for (int k = 0; k < 3; k++) {
            double m = k == 0 ? 1 : k == 1 ? 2 : 5;

            if (span / (m * p) <= 6)
                return m * p;
        }
        return 10 * p;
    }

    while ((c->ymax - c->ymin) / step > 6)
        step *= 2;
    return step;
}

static void
tick_label(const struct chart *c, double v, char *buf, size_t size)
{
    char b[32];

    if (c->fk != NULL) { /* "+4.0 KiB per cycle" -> "+4.0 KiB" */
        char *per;

        history__fmt_slope(c->fk, v, buf, size);
        if ((per = strstr(buf, " per ")) != NULL)
            *per = '\0';
        return;
    }

    ty__format_bytes_tick(fabs(v), b, sizeof(b));
    snprintf(buf, size, "%s%s",
             v < 0                               ? "-"
             : v > 0 && c->fig == HISTORY_GROWTH ? "+"
                                                 : "",
             b);
}

static void
y_axis(struct strbuf *sb, const struct chart *c)
{
    double step = y_step(c);

    for (double k = ceil(c->ymin / step); k * step <= c->ymax; k++) {
        double y = cy(c, k * step);
        char lab[40];

        tick_label(c, k * step, lab, sizeof(lab));
        strbuf_addf(sb,
                    "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                    "y2=\"%.1f\"/><text class=\"htick\" x=\"%.1f\" "
                    "y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                    fabs(k) < 0.5 && (c->fig == HISTORY_GROWTH || c->fk)
                        ? "hzero"
                        : "hgrid",
                    c->x0, y, c->x0 + c->w, y, c->x0 - 8, y + 4, lab);
    }
}

/* ---- the x axis ---------------------------------------------------------- */

/* Run numbers, thinned to about twenty. */
static void
x_axis(struct strbuf *sb, const struct chart *c)
{
    size_t n = c->h->nruns, every = n / 20 + 1;
    double base = c->y0 + c->ht;

    for (size_t i = 0; i < n; i += every)
        strbuf_addf(sb,
                    "<text class=\"htick\" x=\"%.1f\" y=\"%.1f\" "
                    "text-anchor=\"middle\">%lld</text>\n",
                    cx(c, i), base + 16, (long long)c->h->runs[i].number);
    strbuf_addf(sb,
                "<text class=\"haxis\" x=\"%.1f\" y=\"%.1f\" "
                "text-anchor=\"middle\">run, and the version where it "
                "changes</text>\n",
                c->x0 + c->w / 2, base + 52);
}

/* A tick under the axis at each run whose version differs from the run
 * before (the first run's too), labelled when the label clears the one
 * before it; the full version is in the tick's <title>. */
static void
version_marks(struct strbuf *sb, const struct chart *c)
{
    double base = c->y0 + c->ht, last = -1e9;

    for (size_t i = 0; i < c->h->nruns; i++) {
        const struct history_run *r = &c->h->runs[i];
        double x = cx(c, i);
        char v[16];

        if (i == 0 ? r->version == NULL
                   : history__same_str(r->version, c->h->runs[i - 1].version))
            continue;
        short_version(r->version, v, sizeof(v));
        strbuf_adds(sb, "<g class=\"ver\"><title>version ");
        strbuf_add_html(sb, r->version != NULL ? r->version : "unknown");
        strbuf_addf(sb,
                    " from run %lld</title><line x1=\"%.1f\" y1=\"%.1f\" "
                    "x2=\"%.1f\" y2=\"%.1f\"/>",
                    (long long)r->number, x, base + 21, x, base + 34);
        if (x - last >= (double)strlen(v) * CHAR_W + 8) {
            last = x;
            strbuf_addf(sb, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, base + 32);
            strbuf_add_html(sb, v);
            strbuf_adds(sb, "</text>");
        }
        strbuf_adds(sb, "</g>\n");
    }
}

/* ---- the series ---------------------------------------------------------- */

/* Polylines through runs of neighbouring known values; a lone value is
 * only its circle. */
static void
lines(struct strbuf *sb, const struct chart *c)
{
    size_t i = 0, n = c->h->nruns;
    double v;

    while (i < n) {
        size_t end = i;

        while (end < n && value(c, end, &v))
            end++;
        if (end - i >= 2) {
            strbuf_adds(sb, "<polyline class=\"hline\" points=\"");
            for (size_t k = i; k < end; k++) {
                value(c, k, &v);
                strbuf_addf(sb, "%.1f,%.1f ", cx(c, k), cy(c, v));
            }
            strbuf_adds(sb, "\"/>\n");
        }
        i = end > i ? end : i + 1;
    }
}

/* "run 6, 2026-12-01 08:00:00, abc123def456": what every mark of a run
 * says first. */
static void
run_title(struct strbuf *sb, const struct history_run *r)
{
    char date[32], v[16];

    history__fmt_date(r->started != NULL ? r->started : r->ended, date,
                      sizeof(date));
    short_version(r->version, v, sizeof(v));
    strbuf_addf(sb, "run %lld, %s, ", (long long)r->number, date);
    strbuf_add_html(sb, v);
}

static void
point(struct strbuf *sb, const struct chart *c, size_t i, double v)
{
    const struct history_run *r = &c->h->runs[i];
    const struct history_fit *f =
        c->fk != NULL ? history__fit_of(r, c->fk) : NULL;
    char val[80];

    if (f != NULL)
        history__fmt_slope(f, v, val, sizeof(val));
    else
        history__fmt_figure(c->fig, v, val, sizeof(val));
    strbuf_addf(sb,
                "<circle class=\"pt%s\" cx=\"%.1f\" cy=\"%.1f\" "
                "r=\"%s\"><title>",
                succeeded(r) ? "" : " bad", cx(c, i), cy(c, v),
                c->h->nruns > 150 ? "2.5" : "4");
    run_title(sb, r);
    strbuf_addf(sb, ", %s%s, ", val,
                f == NULL && c->fig == HISTORY_GROWTH ? " a round" : "");
    if (f != NULL) {
        strbuf_add_html(sb, f->verdict ? f->verdict : "no verdict");
        if (!isnan(f->r2))
            strbuf_addf(sb, " (R² %.2f)", f->r2);
        strbuf_adds(sb, ", ");
    }
    strbuf_add_html(sb, r->outcome);
    strbuf_adds(sb, "</title></circle>\n");
}

/* A run without the value: a small cross on the axis, saying why. */
static void
no_value(struct strbuf *sb, const struct chart *c, size_t i)
{
    const struct history_run *r = &c->h->runs[i];
    bool has = c->fk != NULL ? history__fit_of(r, c->fk) != NULL
                             : history__group_of(r, c->group) != NULL;

    strbuf_addf(sb,
                "<path class=\"nov\" d=\"M%.1f %.1f l6 6 m0 -6 l-6 6\">"
                "<title>",
                cx(c, i) - 3, c->y0 + c->ht - 3);
    run_title(sb, r);
    strbuf_addf(sb, ": %s (", has ? "no value" : "not in this run");
    strbuf_add_html(sb, r->outcome);
    strbuf_adds(sb, ")</title></path>\n");
}

static size_t
points(struct strbuf *sb, const struct chart *c)
{
    size_t known = 0;
    double v;

    for (size_t i = 0; i < c->h->nruns; i++) {
        if (value(c, i, &v)) {
            point(sb, c, i, v);
            known++;
        } else {
            no_value(sb, c, i);
        }
    }
    return known;
}

/* ---- change points ------------------------------------------------------- */

/* "run 6, abc123def456: +50 %", or the absolute change when the figure
 * was 0 before or the change is over 1000 % (growth about zero), where
 * a percentage says little. */
static void
cp_label(struct strbuf *sb, const struct history *h,
         const struct history_point *p)
{
    const struct history_run *r = &h->runs[p->run];
    bool absolute = isinf(p->cp.rel_change) || fabs(p->cp.rel_change) > 10;
    char v[16], change[40];

    short_version(r->version, v, sizeof(v));
    if (absolute)
        history__fmt_rate(p->cp.mean_after - p->cp.mean_before, change,
                          sizeof(change));
    else
        history__fmt_change(&p->cp, change, sizeof(change));
    strbuf_addf(sb, "run %lld, ", (long long)r->number);
    strbuf_add_html(sb, v);
    strbuf_addf(sb, ": %s%s", change,
                absolute && p->figure == HISTORY_GROWTH ? " a round" : "");
}

/* The first label row (from the top) where a label of width w at x
 * clears the one before; the top row when none does. */
static int
cp_row(double *right, double x, double w)
{
    for (int k = 0; k < CP_ROWS; k++)
        if (x - w / 2 > right[k]) {
            right[k] = x + w / 2;
            return k;
        }
    return 0;
}

/* "run 6, abc123def456: +100 %" of a slope, or the change as an amount
 * when the slope was 0 before or moved by more than 1000 %. */
static void
fcp_label(struct strbuf *sb, const struct history *h,
          const struct history_fpoint *p)
{
    const struct history_run *r = &h->runs[p->run];
    char v[16], change[80];

    short_version(r->version, v, sizeof(v));
    if (isinf(p->cp.rel_change) || fabs(p->cp.rel_change) > 10)
        history__fmt_slope(h->fkeys[p->key].first,
                           p->cp.mean_after - p->cp.mean_before, change,
                           sizeof(change));
    else
        history__fmt_change(&p->cp, change, sizeof(change));
    strbuf_addf(sb, "run %lld, ", (long long)r->number);
    strbuf_add_html(sb, v);
    strbuf_addf(sb, ": %s", change);
}

/* A change point at run index run: lab (escaped) above the plot, line
 * (not escaped) its <title>; both released. */
static void
cp_mark(struct strbuf *sb, const struct chart *c, size_t run,
        struct strbuf *lab, struct strbuf *line, double *right)
{
    double x = cx(c, run), w, ly;
    bool end;
    int row;

    w = (double)strlen(lab->buf) * CHAR_W + 8;
    end = x + w > c->x0 + c->w;
    row = cp_row(right, end ? x - w / 2 : x + w / 2, w);
    ly = c->y0 - 8 - 13 * row;
    strbuf_adds(sb, "<g class=\"cp\"><title>change point: ");
    strbuf_add_html(sb, line->buf);
    strbuf_addf(sb,
                "</title><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                "y2=\"%.1f\"/><text x=\"%.1f\" y=\"%.1f\" "
                "text-anchor=\"%s\">%s</text></g>\n",
                x, ly - 9, x, c->y0 + c->ht, end ? x - 4 : x + 4, ly,
                end ? "end" : "start", lab->buf);
    strbuf_release(lab);
    strbuf_release(line);
}

static void
cp_marks(struct strbuf *sb, const struct chart *c)
{
    double right[CP_ROWS];

    for (int k = 0; k < CP_ROWS; k++)
        right[k] = -1e9;
    for (size_t i = 0; i < c->h->npoints && c->fk == NULL; i++) {
        const struct history_point *p = &c->h->points[i];
        struct strbuf lab = {0}, line = {0};

        if (p->figure != c->fig || strcmp(p->group, c->group) != 0)
            continue;
        cp_label(&lab, c->h, p);
        history__point_line(c->h, p, &line);
        cp_mark(sb, c, p->run, &lab, &line, right);
    }
    for (size_t i = 0; i < c->h->nfpoints && c->fk != NULL; i++) {
        const struct history_fpoint *p = &c->h->fpoints[i];
        struct strbuf lab = {0}, line = {0};

        if (p->key != c->fkey)
            continue;
        fcp_label(&lab, c->h, p);
        history__fpoint_line(c->h, p, &line);
        cp_mark(sb, c, p->run, &lab, &line, right);
    }
}

/* ---- the charts ---------------------------------------------------------- */

static void
chart_open(struct strbuf *sb, const struct chart *c)
{
    if (c->fk != NULL) {
        struct strbuf name = {0};

        history__fit_name(c->fk, &name);
        strbuf_addf(sb,
                    "<svg class=\"hchart\" data-figure=\"slope\" "
                    "data-fit=\"%zu\" data-group=\"",
                    c->fkey);
        strbuf_add_html(sb, c->group);
        strbuf_addf(sb, "\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
                    CHART_W, CHART_H);
        strbuf_add_html(sb, name.buf);
        strbuf_addf(sb,
                    ": slope per run\" xmlns=\"http://www.w3.org/2000/svg\">\n"
                    "<text class=\"hname\" x=\"%d\" y=\"18\">slope of ",
                    PAD_L);
        strbuf_add_html(sb, name.buf);
        strbuf_adds(sb, "</text>\n");
        strbuf_release(&name);
        return;
    }
    strbuf_addf(sb, "<svg class=\"hchart\" data-figure=\"%s\" data-group=\"",
                history__figure_names[c->fig]);
    strbuf_add_html(sb, c->group);
    strbuf_addf(sb, "\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
                CHART_W, CHART_H);
    strbuf_add_html(sb, c->group);
    strbuf_addf(sb,
                " %s per run\" xmlns=\"http://www.w3.org/2000/svg\">\n"
                "<text class=\"hname\" x=\"%d\" y=\"18\">%s%s</text>\n",
                figure_titles[c->fig], PAD_L, figure_titles[c->fig],
                c->fig == HISTORY_GROWTH ? " (bytes a round)" : "");
}

static void
chart(struct strbuf *sb, const struct history *h, const char *group, int fig,
      size_t fkey)
{
    struct chart c = {.h = h,
                      .group = group,
                      .fig = fig,
                      .fkey = fkey,
                      .x0 = PAD_L,
                      .y0 = PAD_T,
                      .w = CHART_W - PAD_L - PAD_R,
                      .ht = CHART_H - PAD_T - PAD_B};

    if (fig < 0) {
        c.fk = h->fkeys[fkey].first;
        c.group = c.fk->group;
    }
    y_range(&c);
    chart_open(sb, &c);
    y_axis(sb, &c);
    x_axis(sb, &c);
    version_marks(sb, &c);
    cp_marks(sb, &c);
    lines(sb, &c);
    if (points(sb, &c) == 0)
        strbuf_addf(sb,
                    "<text class=\"empty\" x=\"%.1f\" y=\"%.1f\" "
                    "text-anchor=\"middle\">no run recorded this "
                    "%s</text>\n",
                    c.x0 + c.w / 2, c.y0 + c.ht / 2, c.fk ? "slope" : "figure");
    strbuf_addf(sb,
                "<line class=\"hframe\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                "y2=\"%.1f\"/>\n</svg>\n",
                c.x0, c.y0 + c.ht, c.x0 + c.w, c.y0 + c.ht);
}

static void
group_section(struct strbuf *sb, const struct history *h, const char *group)
{
    strbuf_adds(sb, "<section class=\"hgroup\" id=\"g-");
    strbuf_add_html(sb, group);
    strbuf_adds(sb, "\">\n<h2>");
    strbuf_add_html(sb, group);
    strbuf_adds(sb, "</h2>\n");
    for (int f = 0; f < HISTORY_NFIGURES; f++)
        chart(sb, h, group, f, 0);
    strbuf_adds(sb, "</section>\n");
}

static void
key(struct strbuf *sb, const struct history *h)
{
    strbuf_adds(sb, "<p class=\"hkey\"><i></i>a run (its date, version and "
                    "value on hover)<i class=\"kbad\"></i>a run that did not "
                    "succeed");
    if (h->analysed)
        strbuf_addf(sb,
                    "<i class=\"kcp\"></i>a change point (E-Divisive means, "
                    "p &le; %.3g)",
                    h->opts.pvalue);
    strbuf_adds(sb,
                "<i class=\"kver\"></i>the version, where it changes</p>\n");
}

void
history_svg(const struct history *h, struct strbuf *sb)
{
    size_t drawn = 0;

    if (h->nruns == 0) {
        strbuf_adds(sb, "<p class=\"note\">There are no runs of ");
        strbuf_add_html(sb, h->name);
        strbuf_adds(sb, " to chart.</p>\n");
        return;
    }
    key(sb, h);
    for (size_t i = 0; i < h->nruns; i++)
        for (size_t g = 0; g < h->runs[i].ngroups; g++) {
            const char *id = h->runs[i].groups[g].id;

            if (history__seen_before(h, i, id))
                continue;
            group_section(sb, h, id);
            drawn++;
        }
    if (drawn == 0)
        strbuf_addf(sb,
                    "<p class=\"note\">No memory figures in the %zu run%s "
                    "(a run whose build failed records none).</p>\n",
                    h->nruns, h->nruns == 1 ? "" : "s");
}

void
history_svg_fits(const struct history *h, size_t max, struct strbuf *sb)
{
    if (h->nfkeys == 0)
        return;
    key(sb, h);
    for (size_t k = 0; k < h->nfkeys && (max == 0 || k < max); k++)
        chart(sb, h, NULL, -1, k);
}
