/*
 * report_svg.c — the report's two charts as inline SVG, readable without
 * JavaScript and without the network:
 *
 *   memory over time   every instance's cgroup usage (memory.csv), one
 *                      colour per group, with the groups' limits, the
 *                      rounds as shaded bands between their barriers,
 *                      the stages as a strip along the bottom and the
 *                      actions between them as dashed lines,
 *                      other barriers as ticks, each heap snapshot as a
 *                      marker whose shape says why it was taken (a
 *                      round's end, a peak, the coordinator's pre-OOM
 *                      request, anything else), and OOM kills;
 *   per round          each group's heap in use after trim (solid) and
 *                      RSS after trim (dashed) against rounds, with the
 *                      fitted line when the heap is said to grow.
 *
 * Each drawn thing carries a <title>, which browsers show on hover. Long
 * series are thinned to a few hundred points per instance, keeping each
 * bucket's lowest and highest value so peaks survive.
 */
#include "report/report_int.h"

#include "base/strbuf.h"
#include "ty_units.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHART_W 1000
#define MEM_H 420
#define ROUND_H 320
#define PAD_L 78
#define PAD_R 24
#define PAD_T 26
#define PAD_B 44
#define POINT_BUDGET 240000

static const char *const palette[] = {
    "#2563eb", "#ea580c", "#16a34a", "#9333ea",
    "#db2777", "#0891b2", "#ca8a04", "#4b5563",
};

const char *
report__group_color(size_t g)
{
    return palette[g % ARRAY_LEN(palette)];
}

struct plot {
    double x0, y0, w, h;
    double xmin, xmax, ymax;
};

static double
px(const struct plot *p, double x)
{
    double span = p->xmax - p->xmin;

    return p->x0 + (span > 0 ? (x - p->xmin) / span : 0.5) * p->w;
}

static double
py(const struct plot *p, double y)
{
    return p->y0 + p->h - (p->ymax > 0 ? y / p->ymax : 0) * p->h;
}

static size_t
group_of(const struct report *r, const char *id)
{
    for (size_t g = 0; g < r->ngroups; g++)
        if (strcmp(r->groups[g].id, id) == 0)
            return g;
    return 0;
}

/* ---- axes ---------------------------------------------------------------- */

/* A power-of-two byte step giving at most about six lines. */
static double
byte_step(double max)
{
    double step = 1;

    while (max / step > 6)
        step *= 2;
    return step;
}

/* The horizontal grid, a line per step up to ymax. */
static void
axis_bytes(struct strbuf *sb, struct plot *p)
{
    double step;

    if (p->ymax <= 0)
        p->ymax = 1;
    step = byte_step(p->ymax);
    for (double v = 0; v <= p->ymax; v += step) {
        char lab[32];

        ty__format_bytes_tick(v, lab, sizeof(lab));
        strbuf_addf(sb,
                    "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" "
                    "x2=\"%.1f\" y2=\"%.1f\"/>"
                    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
                    "text-anchor=\"end\">%s</text>\n",
                    p->x0, py(p, v), p->x0 + p->w, py(p, v), p->x0 - 8,
                    py(p, v) + 4, lab);
    }
}

/* 1, 2 or 5 times a power of ten, in ms, giving at most about 8 ticks. */
static double
time_step(double span_ms)
{
    static const double m[] = {1, 2, 5};

    for (double e = 1;; e *= 10)
        for (size_t i = 0; i < ARRAY_LEN(m); i++)
            if (span_ms / (m[i] * e) <= 8)
                return m[i] * e;
}

static void
axis_time(struct strbuf *sb, const struct plot *p)
{
    double step = time_step(p->xmax - p->xmin);

    for (double t = 0; t <= p->xmax + 0.5; t += step) {
        char lab[32];

        if (step >= 60000)
            snprintf(lab, sizeof(lab), "%.0fm", t / 60000);
        else
            snprintf(lab, sizeof(lab), "%g s", t / 1000);
        strbuf_addf(sb,
                    "<line class=\"xtick\" x1=\"%.1f\" y1=\"%.1f\" "
                    "x2=\"%.1f\" y2=\"%.1f\"/><text class=\"tick\" "
                    "x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                    px(p, t), p->y0 + p->h, px(p, t), p->y0 + p->h + 5,
                    px(p, t), p->y0 + p->h + 20, lab);
    }
    strbuf_addf(sb,
                "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" "
                "text-anchor=\"middle\">time since the run started</text>\n",
                p->x0 + p->w / 2, p->y0 + p->h + 38);
}

static void
svg_open(struct strbuf *sb, int h, const char *label)
{
    strbuf_addf(sb,
                "<svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\" "
                "aria-label=\"%s\" xmlns=\"http://www.w3.org/2000/svg\">\n",
                CHART_W, h, label);
}

/* ---- memory over time ------------------------------------------------------
 */

static void
round_bands(struct strbuf *sb, const struct report *r, const struct plot *p)
{
    double last = -1e9; /* where the last label went */

    for (size_t i = 0; i < r->nspans; i++) {
        const struct report_span *s = &r->spans[i];
        double a = s->start_ms >= 0 ? (double)s->start_ms : 0;
        double b = s->end_ms >= 0 ? (double)s->end_ms : p->xmax;
        double x = px(p, a), w = px(p, b) - x;
        char from[32], to[32];

        report__fmt_ms(report__i64(a), from, sizeof(from));
        report__fmt_ms(report__i64(b), to, sizeof(to));
        strbuf_addf(sb,
                    "<g class=\"round\"><title>round %d: %s to "
                    "%s%s</title><rect class=\"band%zu\" x=\"%.1f\" "
                    "y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/><line "
                    "class=\"rline\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                    "y2=\"%.1f\"/>",
                    s->round, from, to,
                    s->failed ? " (its end barrier failed)" : "", i % 2, x,
                    p->y0, w > 0 ? w : 0, p->h, x, p->y0, x, p->y0 + p->h);
        if (s->failed)
            strbuf_addf(sb,
                        "<line class=\"rfail\" x1=\"%.1f\" y1=\"%.1f\" "
                        "x2=\"%.1f\" y2=\"%.1f\"/>",
                        x + w, p->y0, x + w, p->y0 + p->h);
        /* Label a round when its label clears the one before. */
        if (x + w / 2 - last >= 30) {
            last = x + w / 2;
            strbuf_addf(sb,
                        "<text class=\"rlabel%s\" x=\"%.1f\" y=\"%.1f\" "
                        "text-anchor=\"middle\">R%d%s</text>",
                        s->failed ? " failed" : "", x + w / 2, p->y0 - 8,
                        s->round, s->failed ? " \u2717" : "");
        }
        strbuf_adds(sb, "</g>\n");
    }
}

/* The stages as a strip along the bottom, named where the name fits,
 * and each action between them as a dashed line. */
static void
stage_bands(struct strbuf *sb, const struct report *r, const struct plot *p)
{
    double y = p->y0 + p->h - 14;
    size_t k = 0;

    for (size_t i = 0; i < r->nstages; i++) {
        const struct report_stage *s = &r->stages[i];
        double a = (double)s->start_ms, x = px(p, a), w;
        char from[32], to[32];

        if (s->start_ms < 0)
            continue;
        w = px(p, s->end_ms >= 0 ? (double)s->end_ms : p->xmax) - x;
        report__fmt_ms(s->start_ms, from, sizeof(from));
        report__fmt_ms(s->end_ms >= 0 ? s->end_ms : report__i64(p->xmax), to,
                       sizeof(to));
        strbuf_adds(sb, "<g><title>");
        if (s->action != NULL) {
            report__html_esc(sb, s->action);
            strbuf_adds(sb, " ");
            report__html_esc(sb, s->group);
            strbuf_addf(sb,
                        " at %s</title><line class=\"act\" x1=\"%.1f\" "
                        "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/></g>\n",
                        from, x, p->y0, x, p->y0 + p->h);
            continue;
        }
        strbuf_adds(sb, "stage ");
        report__html_esc(sb, s->name);
        strbuf_addf(sb,
                    ": %s to %s</title><rect class=\"stage%zu\" x=\"%.1f\" "
                    "y=\"%.1f\" width=\"%.1f\" height=\"14\"/>",
                    from, to, k++ % 2, x, y, w > 0 ? w : 0);
        if (w >= 8.0 * (double)strlen(s->name)) {
            strbuf_addf(sb, "<text class=\"slabel\" x=\"%.1f\" y=\"%.1f\">",
                        x + 3, y + 10);
            report__html_esc(sb, s->name);
            strbuf_adds(sb, "</text>");
        }
        strbuf_adds(sb, "</g>\n");
    }
}

/* Barriers that are not round boundaries, and failed ones, as ticks on
 * the time axis. */
static void
barrier_ticks(struct strbuf *sb, const struct report *r, const struct plot *p)
{
    for (size_t i = 0; i < r->nbars; i++) {
        const struct report_barrier *b = &r->bars[i];
        bool failed = strcmp(b->result, "released") != 0;
        double x = px(p, (double)b->t_ms);
        char at[32];

        if (b->kind != BAR_OTHER && !failed)
            continue;
        strbuf_addf(sb, "<g class=\"%s\"><title>barrier ",
                    failed ? "bfail" : "bmark");
        report__html_esc(sb, b->state);
        report__fmt_ms(b->t_ms, at, sizeof(at));
        strbuf_addf(sb, " %s at %s", b->result, at);
        if (b->error != NULL) {
            strbuf_adds(sb, ": ");
            report__html_esc(sb, b->error);
        }
        strbuf_addf(sb, "</title><path d=\"M%.1f %.1f l-5 -9 h10 z\"/></g>\n",
                    x, p->y0 + p->h - 1);
    }
}

/* Where each group's limit label goes: just above its line, or stacked
 * at the top edge when the limit is above the chart; labels closer than
 * a line of text are pushed apart, top to bottom. */
struct label_at {
    size_t g;
    double y;
};

static int
cmp_label(const void *a, const void *b)
{
    const struct label_at *x = a, *y = b;

    return (x->y > y->y) - (x->y < y->y);
}

static size_t
limit_labels(const struct report *r, const struct plot *p, struct label_at *at)
{
    size_t n = 0;

    for (size_t g = 0; g < r->ngroups; g++) {
        double lim = (double)r->groups[g].limit;

        if (lim <= 0)
            continue;
        at[n].g = g;
        at[n++].y = lim > p->ymax ? p->y0 + 14 : py(p, lim) - 6;
    }
    if (n > 1)
        qsort(at, n, sizeof(*at), cmp_label);
    for (size_t i = 1; i < n; i++)
        if (at[i].y < at[i - 1].y + 13)
            at[i].y = at[i - 1].y + 13;
    return n;
}

/* A limit inside the chart is a dashed line; one far above the data (see
 * mem_ymax) is only named at the top edge, with an arrow. */
static void
limit_lines(struct strbuf *sb, const struct report *r, const struct plot *p)
{
    struct label_at *at = xcalloc(r->ngroups + 1, sizeof(*at));
    size_t n = limit_labels(r, p, at);

    for (size_t i = 0; i < n; i++) {
        const struct report_group *gr = &r->groups[at[i].g];
        const char *color = report__group_color(at[i].g);
        bool above = (double)gr->limit > p->ymax;
        double y = py(p, (double)gr->limit);
        char lab[32];

        report__fmt_bytes(gr->limit, lab, sizeof(lab));
        strbuf_adds(sb, "<g><title>");
        report__html_esc(sb, gr->id);
        strbuf_addf(sb, " limit: %s</title>", lab);
        if (!above)
            strbuf_addf(sb,
                        "<line class=\"limit\" stroke=\"%s\" x1=\"%.1f\" "
                        "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                        color, p->x0, y, p->x0 + p->w, y);
        strbuf_addf(sb,
                    "<text class=\"llabel\" fill=\"%s\" x=\"%.1f\" "
                    "y=\"%.1f\" text-anchor=\"end\">",
                    color, p->x0 + p->w - 4, at[i].y);
        report__html_esc(sb, gr->id);
        strbuf_addf(sb, " limit %s%s</text></g>\n", lab,
                    above ? " \u2191 (above the chart)" : "");
    }
    free(at);
}

/* Keep the first and last point and, per bucket of the rest, the lowest
 * and highest usage in time order. */
static void
series(struct strbuf *sb, const struct report_inst *in, const struct plot *p,
       size_t budget)
{
    size_t n = in->nsamples, per = n / (budget / 2 + 1) + 1;

    for (size_t i = 0; i < n; i += per) {
        size_t lo = i, hi = i, end = i + per < n ? i + per : n;

        for (size_t k = i; k < end; k++) {
            if (in->samples[k].usage < 0)
                continue;
            if (in->samples[lo].usage < 0 ||
                in->samples[k].usage < in->samples[lo].usage)
                lo = k;
            if (in->samples[k].usage > in->samples[hi].usage)
                hi = k;
        }
        for (int j = 0; j < 2; j++) {
            size_t k = (lo < hi) == (j == 0) ? lo : hi;

            if (in->samples[k].usage >= 0 && (j == 0 || lo != hi))
                strbuf_addf(sb, "%.1f,%.1f ",
                            px(p, (double)in->samples[k].t_ms),
                            py(p, (double)in->samples[k].usage));
        }
    }
}

static void
all_series(struct strbuf *sb, const struct report *r, const struct plot *p)
{
    size_t budget = POINT_BUDGET / (r->ninsts ? r->ninsts : 1);

    budget = budget < 100 ? 100 : budget > 1200 ? 1200 : budget;
    for (size_t i = 0; i < r->ninsts; i++) {
        const struct report_inst *in = &r->insts[i];
        size_t g = group_of(r, in->group);

        if (in->nsamples == 0)
            continue;
        strbuf_addf(sb, "<g class=\"series%s\"><title>",
                    r->groups[g].ninst > 20 ? " many" : "");
        report__html_esc(sb, in->label);
        strbuf_addf(sb, "</title><polyline stroke=\"%s\" points=\"",
                    report__group_color(g));
        series(sb, in, p, budget);
        strbuf_adds(sb, "\"/></g>\n");
    }
}

static void
oom_marks(struct strbuf *sb, const struct report *r, const struct plot *p)
{
    for (size_t i = 0; i < r->ninsts; i++) {
        const struct report_inst *in = &r->insts[i];
        int64_t y = in->before_oom >= 0 ? in->before_oom : in->peak;
        double cx, cy;
        char at[32], b[32];

        if (!in->oom || in->oom_t_ms < 0 || y < 0)
            continue;
        cx = px(p, (double)in->oom_t_ms);
        cy = py(p, (double)y);
        report__fmt_ms(in->oom_t_ms, at, sizeof(at));
        report__fmt_bytes(y, b, sizeof(b));
        strbuf_adds(sb, "<g class=\"oom\"><title>");
        report__html_esc(sb, in->label);
        strbuf_addf(sb,
                    " OOM-killed at %s, %s before</title><circle cx=\"%.1f\" "
                    "cy=\"%.1f\" r=\"7\"/><path d=\"M%.1f %.1f l8 8 m0 -8 "
                    "l-8 8\"/><text x=\"%.1f\" y=\"%.1f\">OOM ",
                    at, b, cx, cy, cx - 4, cy - 4, cx + 10, cy - 9);
        report__html_esc(sb, in->label);
        strbuf_adds(sb, "</text></g>\n");
    }
}

/* ---- snapshot markers ------------------------------------------------- */

enum mark { MARK_ROUND, MARK_PEAK, MARK_PREOOM, MARK_OTHER };

static const struct {
    const char *cls;
    const char *legend;
} marks[] = {
    [MARK_ROUND] = {"round", "round-end snapshot"},
    [MARK_PEAK] = {"peak", "peak snapshot"},
    [MARK_PREOOM] = {"preoom", "pre-OOM snapshot"},
    [MARK_OTHER] = {"other", "other snapshot (periodic, event, signal, exit, "
                             "the plan's own)"},
};

/* At most this many markers per instance (peaks and pre-OOM ones are
 * always drawn; round-end and other ones are thinned evenly). */
#define MARKS_PER_INST 300
#define MARKS_TOTAL 6000

static enum mark
mark_of(enum report_trigger t)
{
    return t == TRIG_ROUND    ? MARK_ROUND
           : t == TRIG_PEAK   ? MARK_PEAK
           : t == TRIG_PREOOM ? MARK_PREOOM
                              : MARK_OTHER;
}

/* The shape centred on (x, y): a square, a triangle pointing up, a
 * diamond, a dot. */
static void
mark_shape(struct strbuf *sb, enum mark m, double x, double y)
{
    if (m == MARK_ROUND)
        strbuf_addf(sb,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" "
                    "height=\"7\"/>",
                    x - 3.5, y - 3.5);
    else if (m == MARK_PEAK)
        strbuf_addf(sb, "<path d=\"M%.1f %.1f l5.5 9.5 h-11 z\"/>", x, y - 6);
    else if (m == MARK_PREOOM)
        strbuf_addf(sb,
                    "<path d=\"M%.1f %.1f l6.5 6.5 l-6.5 6.5 l-6.5 -6.5 z\"/>",
                    x, y - 6.5);
    else
        strbuf_addf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>", x, y);
}

/* Where a snapshot sits: its sidecar's cgroup usage, else the nearest
 * memory.csv sample's; -1 when neither is known. */
static int64_t
snap_usage(const struct report_inst *in, const struct report_snap *s)
{
    const struct report_sample *near;

    if (s->cgroup >= 0)
        return s->cgroup;
    near = report__sample_near(in, s->t_ms);
    return near != NULL ? near->usage : -1;
}

static bool
drawable(const struct report_inst *in, const struct report_snap *s,
         const struct plot *p)
{
    return s->t_ms >= 0 && (p == NULL || (double)s->t_ms <= p->xmax) &&
           snap_usage(in, s) >= 0;
}

static void
snap_title(struct strbuf *sb, const struct report_inst *in,
           const struct report_snap *s, int64_t usage)
{
    char at[32], u[32], h[32], age[32];

    report__fmt_ms(s->t_ms, at, sizeof(at));
    report__fmt_bytes(usage, u, sizeof(u));
    report__fmt_bytes(s->inuse, h, sizeof(h));
    strbuf_adds(sb, "<title>");
    report__html_esc(sb, in->label);
    strbuf_adds(sb, " heap-");
    report__html_esc(sb, s->label);
    strbuf_addf(sb, " (%s) at %s: %s in the cgroup, %s heap in use",
                report__trigger_name(s->trigger), at, u, h);
    if (in->oom && in->oom_t_ms >= 0) {
        int64_t d = in->oom_t_ms - s->t_ms;

        report__fmt_ms(d > 0 ? d : 0, age, sizeof(age));
        strbuf_addf(sb, "; %s before the kill", age);
    }
    strbuf_adds(sb, "</title>");
}

static void
inst_marks(struct strbuf *sb, const struct report_inst *in, size_t gi,
           const struct plot *p, size_t budget)
{
    size_t thin = 0, every, k = 0;

    for (size_t i = 0; i < in->nsnaps; i++) {
        enum mark m = mark_of(in->snaps[i].trigger);

        thin += m == MARK_ROUND || m == MARK_OTHER;
    }
    every = thin / budget + 1;
    for (size_t i = 0; i < in->nsnaps; i++) {
        const struct report_snap *s = &in->snaps[i];
        enum mark m = mark_of(s->trigger);
        int64_t y;

        if ((m == MARK_ROUND || m == MARK_OTHER) && k++ % every != 0)
            continue;
        if (!drawable(in, s, p))
            continue;
        y = snap_usage(in, s);
        strbuf_addf(sb, "<g class=\"snap %s\" fill=\"%s\">", marks[m].cls,
                    report__group_color(gi));
        snap_title(sb, in, s, y);
        mark_shape(sb, m, px(p, (double)s->t_ms), py(p, (double)y));
        strbuf_adds(sb, "</g>\n");
    }
}

static void
snap_marks(struct strbuf *sb, const struct report *r, const struct plot *p)
{
    size_t budget = MARKS_TOTAL / (r->ninsts ? r->ninsts : 1);

    budget = budget < 20               ? 20
             : budget > MARKS_PER_INST ? MARKS_PER_INST
                                       : budget;
    for (size_t i = 0; i < r->ninsts; i++)
        inst_marks(sb, &r->insts[i], group_of(r, r->insts[i].group), p, budget);
}

void
report__svg_snap_legend(struct strbuf *sb, const struct report *r)
{
    bool seen[ARRAY_LEN(marks)] = {false};

    for (size_t i = 0; i < r->ninsts; i++)
        for (size_t k = 0; k < r->insts[i].nsnaps; k++)
            if (drawable(&r->insts[i], &r->insts[i].snaps[k], NULL))
                seen[mark_of(r->insts[i].snaps[k].trigger)] = true;
    for (size_t m = 0; m < ARRAY_LEN(marks); m++) {
        if (!seen[m])
            continue;
        strbuf_addf(sb,
                    "<li><svg class=\"snap %s\" viewBox=\"-8 -8 16 16\" "
                    "width=\"14\" height=\"14\" fill=\"#475569\">",
                    marks[m].cls);
        mark_shape(sb, (enum mark)m, 0, 0);
        strbuf_addf(sb, "</svg>%s</li>", marks[m].legend);
    }
}

/* The top of the chart: the highest usage or limit, but when the limits
 * are far above every sample (over 2.5 times), the samples' top, so the
 * series stay readable; the limits are then named at the top edge. */
static double
mem_ymax(const struct report *r)
{
    double use = 0, lim = 0;

    for (size_t i = 0; i < r->ninsts; i++) {
        const struct report_inst *in = &r->insts[i];

        for (size_t k = 0; k < in->nsamples; k++)
            if (in->samples[k].usage > use)
                use = (double)in->samples[k].usage;
        if (in->limit > lim && in->limit < ((int64_t)1 << 50))
            lim = (double)in->limit;
    }
    for (size_t g = 0; g < r->ngroups; g++)
        if (r->groups[g].limit > lim && r->groups[g].limit < ((int64_t)1 << 50))
            lim = (double)r->groups[g].limit;
    if (use > 0 && lim > 2.5 * use)
        return use * 1.15;
    return (use > lim ? use : lim) * 1.04;
}

void
report__svg_memory(struct strbuf *sb, const struct report *r)
{
    struct plot p = {
        PAD_L, PAD_T,      CHART_W - PAD_L - PAD_R, MEM_H - PAD_T - PAD_B, 0,
        0,     mem_ymax(r)};

    p.xmax = r->end_ms > 0 ? (double)r->end_ms * 1.01 : 1000;
    svg_open(sb, MEM_H, "memory usage of every instance over time");
    round_bands(sb, r, &p);
    stage_bands(sb, r, &p);
    axis_bytes(sb, &p);
    axis_time(sb, &p);
    limit_lines(sb, r, &p);
    all_series(sb, r, &p);
    barrier_ticks(sb, r, &p);
    snap_marks(sb, r, &p);
    oom_marks(sb, r, &p);
    strbuf_addf(sb,
                "<line class=\"frame\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
                "y2=\"%.1f\"/>\n</svg>\n",
                PAD_L, p.y0 + p.h, CHART_W - PAD_R, p.y0 + p.h);
}

/* ---- per round -------------------------------------------------------------
 */

/* The per-round series a chart draws: offset into struct report_round,
 * stroke pattern, marker shape and name. */
static const struct {
    size_t off;
    const char *cls;
    const char *name;
} round_lines[] = {
    {offsetof(struct report_round, heap_post), "heap", "heap in use"},
    {offsetof(struct report_round, rss_post), "rss", "RSS"},
    {offsetof(struct report_round, cgroup), "cg", "cgroup usage"},
};

static int64_t
rval(const struct report_round *rd, size_t line)
{
    int64_t v = *(const int64_t *)((const char *)rd + round_lines[line].off);

    /* Without post-trim snapshots, the pre-trim figures stand in. */
    if (v < 0 && line == 0)
        v = rd->heap_pre;
    if (v < 0 && line == 1)
        v = rd->rss_pre;
    return v;
}

/* Which lines a group gets: heap and RSS when it has them, else cgroup. */
static bool
draws(const struct report_group *g, size_t line)
{
    bool heap = g->growth.heap.n > 0 || g->growth.rss.n > 0;

    return line < 2 ? heap : !heap;
}

static void
round_marker(struct strbuf *sb, size_t line, double x, double y)
{
    if (line == 0)
        strbuf_addf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\"/>", x, y);
    else if (line == 1)
        strbuf_addf(sb,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" "
                    "height=\"7\"/>",
                    x - 3.5, y - 3.5);
    else
        strbuf_addf(sb, "<path d=\"M%.1f %.1f l5 5 l-5 5 l-5 -5 z\"/>", x,
                    y - 5);
}

static void
round_line(struct strbuf *sb, const struct report_group *g, size_t gi,
           size_t line, const struct plot *p)
{
    strbuf_addf(sb, "<g class=\"rl %s\" stroke=\"%s\" fill=\"%s\"><title>",
                round_lines[line].cls, report__group_color(gi),
                report__group_color(gi));
    report__html_esc(sb, g->id);
    strbuf_addf(sb, ": %s per round</title><polyline points=\"",
                round_lines[line].name);
    for (size_t k = 0; k < g->nrounds; k++)
        if (rval(&g->rounds[k], line) >= 0)
            strbuf_addf(sb, "%.1f,%.1f ", px(p, g->rounds[k].round),
                        py(p, (double)rval(&g->rounds[k], line)));
    strbuf_adds(sb, "\"/>");
    for (size_t k = 0; k < g->nrounds; k++)
        if (rval(&g->rounds[k], line) >= 0)
            round_marker(sb, line, px(p, g->rounds[k].round),
                         py(p, (double)rval(&g->rounds[k], line)));
    strbuf_adds(sb, "</g>\n");
}

/* The fitted line of a group whose heap in use (or cgroup usage) is
 * said to grow or shrink. */
static void
fit_line(struct strbuf *sb, const struct report_group *g, size_t gi,
         const struct plot *p)
{
    const struct report_fit *f =
        draws(g, 0) ? &g->growth.heap : &g->growth.cgroup;
    double a, b;
    char rate[48];

    if ((f->trend != TREND_GROWING && f->trend != TREND_SHRINKING) ||
        g->nrounds < 2)
        return;
    a = g->rounds[0].round;
    b = g->rounds[g->nrounds - 1].round;
    report__fmt_rate(f->slope, rate, sizeof(rate));
    strbuf_adds(sb, "<g class=\"fit\"><title>");
    report__html_esc(sb, g->id);
    strbuf_addf(sb,
                ": least-squares line, %s</title><line stroke=\"%s\" "
                "x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/></g>\n",
                rate, report__group_color(gi), px(p, a),
                py(p, f->intercept + f->slope * a), px(p, b),
                py(p, f->intercept + f->slope * b));
}

static void
round_range(const struct report *r, double *lo, double *hi, double *ymax)
{
    bool any = false;

    *ymax = 0;
    for (size_t g = 0; g < r->ngroups; g++) {
        const struct report_group *gr = &r->groups[g];

        for (size_t k = 0; k < gr->nrounds; k++) {
            double x = gr->rounds[k].round;

            *lo = any && *lo < x ? *lo : x;
            *hi = any && *hi > x ? *hi : x;
            any = true;
            for (size_t l = 0; l < ARRAY_LEN(round_lines); l++)
                if (draws(gr, l) && rval(&gr->rounds[k], l) > *ymax)
                    *ymax = (double)rval(&gr->rounds[k], l);
        }
    }
    *ymax *= 1.1;
}

static void
round_axis(struct strbuf *sb, const struct plot *p, int lo, int hi)
{
    int every = (hi - lo) / 24 + 1;

    for (int k = lo; k <= hi; k += every)
        strbuf_addf(sb,
                    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
                    "text-anchor=\"middle\">R%d</text>\n",
                    px(p, k), p->y0 + p->h + 20, k);
    strbuf_addf(sb,
                "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" "
                "text-anchor=\"middle\">round (figures after each round's "
                "malloc_trim)</text>\n",
                p->x0 + p->w / 2, p->y0 + p->h + 38);
}

void
report__svg_rounds(struct strbuf *sb, const struct report *r)
{
    struct plot p = {
        PAD_L, PAD_T, CHART_W - PAD_L - PAD_R, ROUND_H - PAD_T - PAD_B, 0,
        0,     0};
    double lo = 0, hi = 0;

    round_range(r, &lo, &hi, &p.ymax);
    p.xmin = lo - 0.5;
    p.xmax = hi + 0.5;
    svg_open(sb, ROUND_H, "heap in use and RSS per round, per group");
    axis_bytes(sb, &p);
    round_axis(sb, &p, (int)lo, (int)hi);
    for (size_t g = 0; g < r->ngroups; g++) {
        for (size_t l = 0; l < ARRAY_LEN(round_lines); l++)
            if (draws(&r->groups[g], l))
                round_line(sb, &r->groups[g], g, l, &p);
        fit_line(sb, &r->groups[g], g, &p);
    }
    strbuf_addf(sb,
                "<line class=\"frame\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
                "y2=\"%.1f\"/>\n</svg>\n",
                PAD_L, p.y0 + p.h, CHART_W - PAD_R, p.y0 + p.h);
}
