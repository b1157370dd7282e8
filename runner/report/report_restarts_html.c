/*
 * report_restarts_html.c — report.html's "Stages and restarts"
 * (docs/report.md): the run's stages and the actions between them as a
 * timeline table (each restart action with the time each instance it
 * restarted took to be ready again), then per group with restarts its
 * one-line summary, a table of every restart (stage before it, when it
 * was stopped, how long until ready and how that was known, whether it
 * was killed after its grace, the counters' totals so far) and the fits
 * of restart time against cycles so far and against the restart's
 * number with their verdicts. The memory chart shades the stages
 * (report_svg.c). Bounded like the other sections: at most HTML_MAX_ROWS
 * rows per table; summary.json has all.
 */
#include "report/report_int.h"

#include "base/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define HTML_MAX_ROWS 200
#define HTML_MAX_COUNTERS 4 /* totals so far shown per restart */

static void
cell_ms(struct strbuf *sb, int64_t ms)
{
    char t[32] = "-";

    if (ms >= 0)
        report__fmt_ms(ms, t, sizeof(t));
    report__html_cell(sb, "n", t);
}

static void
cell_s(struct strbuf *sb, double s)
{
    char t[32] = "-";

    if (!isnan(s))
        report__fmt_ms(report__i64(round(s * 1000)), t, sizeof(t));
    report__html_cell(sb, "n", t);
}

/* ---- the timeline ------------------------------------------------------ */

/* Whether restart x of in happened at action a. */
static bool
at_action(const struct report_inst *in, const struct report_restart *x,
          const struct report_stage *a)
{
    return strcmp(in->group, a->group) == 0 && a->start_ms >= 0 &&
           x->stop_ms >= a->start_ms &&
           (a->end_ms < 0 || x->stop_ms <= a->end_ms);
}

/* "node/0 410 ms, node/1 never ready" for the restarts at action a. */
static void
action_restarts(struct strbuf *sb, const struct report *r,
                const struct report_stage *a)
{
    size_t shown = 0;

    for (size_t i = 0; i < r->ninsts; i++) {
        const struct report_inst *in = &r->insts[i];

        for (size_t k = 0; k < in->nrestarts; k++) {
            const struct report_restart *x = &in->restarts[k];
            char t[32] = "never ready";

            if (!at_action(in, x, a))
                continue;
            if (shown++ >= 8)
                continue;
            if (!isnan(x->seconds))
                report__fmt_ms(report__i64(round(x->seconds * 1000)), t,
                               sizeof(t));
            strbuf_adds(sb, shown > 1 ? ", " : "");
            report__html_esc(sb, in->label);
            strbuf_adds(sb, " ");
            report__html_esc(sb, t);
        }
    }
    if (shown > 8)
        strbuf_addf(sb, ", and %zu more", shown - 8);
}

static void
timeline_row(struct strbuf *sb, const struct report *r, size_t i)
{
    const struct report_stage *s = &r->stages[i];
    int64_t d = s->start_ms >= 0 && s->end_ms >= s->start_ms
                    ? s->end_ms - s->start_ms
                    : -1;

    strbuf_addf(sb, "<tr><td class=\"n\">%zu</td>", i + 1);
    if (s->action != NULL) {
        cleanup_free char *what = xasprintf("%s %s", s->action, s->group);

        report__html_cell(sb, "act", what);
    } else {
        report__html_cell(sb, "fn", s->name);
    }
    cell_ms(sb, s->start_ms);
    cell_ms(sb, s->end_ms);
    cell_ms(sb, d);
    strbuf_adds(sb, "<td class=\"wrap\">");
    if (s->action != NULL && strcmp(s->action, "restart") == 0)
        action_restarts(sb, r, s);
    else if (s->action == NULL)
        report__html_esc(sb, s->ended_by[0] ? s->ended_by : "-");
    strbuf_adds(sb, "</td></tr>\n");
}

static void
timeline(struct strbuf *sb, const struct report *r)
{
    if (r->nstages == 0)
        return;
    strbuf_addf(sb,
                "<p class=\"note\">The stages in order (from %s) and the "
                "actions between them; times since the run started.</p>\n"
                "<div class=\"scroll\"><table>\n<tr><th class=\"n\">#</th>"
                "<th>stage or action</th><th class=\"n\">start</th>"
                "<th class=\"n\">end</th><th class=\"n\">took</th>"
                "<th>ended by, or each restart's time to ready</th></tr>\n",
                r->stages_result ? "result.json" : "stages.jsonl");
    for (size_t i = 0; i < r->nstages && i < HTML_MAX_ROWS; i++)
        timeline_row(sb, r, i);
    strbuf_adds(sb, "</table></div>\n");
}

/* ---- a group's restarts ------------------------------------------------- */

/* "cycles 1200, errors 0" at the stop. */
static void
so_far(struct strbuf *sb, const struct report_inst *in,
       const struct report_restart *x)
{
    size_t shown = 0;

    for (size_t i = 0; i < in->work.ncounters; i++) {
        const struct report_points *p = &in->work.counters[i];
        double v = report__total_at(p, x->stop_unix);

        if (isnan(v) || shown >= HTML_MAX_COUNTERS)
            continue;
        strbuf_adds(sb, shown++ > 0 ? ", " : "");
        report__html_esc(sb, p->name);
        strbuf_addf(sb, " %.0f", v);
    }
    if (shown == 0)
        strbuf_adds(sb, "-");
}

static void
restart_row(struct strbuf *sb, const struct report_inst *in,
            const struct report_restart *x)
{
    strbuf_adds(sb, "<tr>");
    report__html_cell(sb, NULL, in->label);
    strbuf_addf(sb, "<td class=\"n\">%d</td>", x->number);
    report__html_cell(sb, NULL, x->stage ? x->stage : "-");
    cell_ms(sb, x->stop_ms);
    cell_s(sb, x->seconds);
    cell_s(sb, x->down_seconds);
    report__html_cell(sb, NULL, x->ready_by[0] ? x->ready_by : "-");
    report__html_cell(sb, x->killed ? "up" : NULL, x->killed ? "yes" : "no");
    strbuf_adds(sb, "<td class=\"wrap\">");
    so_far(sb, in, x);
    strbuf_adds(sb, "</td></tr>\n");
}

static void
restarts_table(struct strbuf *sb, const struct report *r,
               const struct report_group *g)
{
    size_t rows = 0;

    strbuf_adds(sb, "<div class=\"scroll\"><table>\n<tr><th>instance</th>"
                    "<th class=\"n\">#</th><th>after stage</th>"
                    "<th class=\"n\">stopped at</th><th class=\"n\">ready "
                    "after</th><th class=\"n\">down</th><th>ready by</th>"
                    "<th>killed</th><th>cycles so far</th></tr>\n");
    for (size_t i = 0; i < g->ninst; i++) {
        const struct report_inst *in = &r->insts[g->inst[i]];

        for (size_t k = 0; k < in->nrestarts; k++)
            if (rows++ < HTML_MAX_ROWS)
                restart_row(sb, in, &in->restarts[k]);
    }
    strbuf_adds(sb, "</table></div>\n");
    if (rows > HTML_MAX_ROWS)
        strbuf_addf(sb,
                    "<p class=\"note\">... and %zu more restarts in "
                    "summary.json.</p>\n",
                    rows - HTML_MAX_ROWS);
}

static void
fits_table(struct strbuf *sb, const struct report_group *g)
{
    bool any = false;

    for (size_t i = 0; i < g->nwfits; i++) {
        const struct report_wfit *w = &g->wfits[i];
        char per[160], r2[16];

        if (!w->restart)
            continue;
        if (!any)
            strbuf_adds(sb, "<div class=\"scroll\"><table>\n<tr><th>restart "
                            "time against</th><th class=\"n\">slope</th>"
                            "<th class=\"n\">R&sup2;</th><th class=\"n\">"
                            "restarts</th><th class=\"n\">instances</th>"
                            "<th>verdict</th></tr>\n");
        any = true;
        report__fmt_per(w, w->fit.slope, per, sizeof(per));
        snprintf(r2, sizeof(r2), "%.2f", w->fit.r2);
        strbuf_adds(sb, "<tr>");
        report__html_cell(
            sb, "fn", strcmp(w->x, "restarts") == 0 ? "restart number" : w->x);
        report__html_cell(sb, "n", per);
        report__html_cell(sb, "n", r2);
        strbuf_addf(sb, "<td class=\"n\">%zu</td><td class=\"n\">%zu</td>",
                    w->fit.n, w->ninst);
        report__html_cell(sb, w->fit.trend == TREND_GROWING ? "up" : NULL,
                          report__wfit_verdict(w));
        strbuf_adds(sb, "</tr>\n");
    }
    if (any)
        strbuf_adds(sb, "</table></div>\n");
}

static void
group(struct strbuf *sb, const struct report *r, size_t gi)
{
    const struct report_group *g = &r->groups[gi];
    char line[512];

    report__restart_line(r, g, line, sizeof(line));
    report__html_group_h3(sb, g->id, gi);
    strbuf_adds(sb, "</h3>\n<p>");
    report__html_esc(sb, line);
    strbuf_adds(sb, "</p>\n");
    restarts_table(sb, r, g);
    fits_table(sb, g);
}

static bool
has_restarts(const struct report *r, const struct report_group *g)
{
    for (size_t i = 0; i < g->ninst; i++)
        if (r->insts[g->inst[i]].nrestarts > 0)
            return true;
    return false;
}

void
report__html_restarts(struct strbuf *sb, const struct report *r)
{
    bool any = r->nstages > 0;

    for (size_t g = 0; g < r->ngroups && !any; g++)
        any = has_restarts(r, &r->groups[g]);
    if (!any)
        return;
    strbuf_adds(sb, "<section id=\"stages\">\n<h2>Stages and restarts</h2>\n");
    timeline(sb, r);
    strbuf_addf(sb,
                "<p class=\"note\">A restart's time runs from the runner's "
                "stop to the new process being ready (its ty_ready, its "
                "group's ready probe, or its start); cycles so far are "
                "each counter's total across the instance's processes at "
                "the stop. Restart time is fitted against them and "
                "against the restart's number; with at least %d timed "
                "restarts it grows when it rises by at least %.0f ms and "
                "%.0f%% of its median, with R&sup2; &ge; %.1f.</p>\n",
                REPORT_MIN_ROUNDS, REPORT_MIN_RISE_RESTART_S * 1000,
                REPORT_MIN_RISE_FRACTION * 100, REPORT_MIN_R2);
    for (size_t g = 0; g < r->ngroups; g++)
        if (has_restarts(r, &r->groups[g]))
            group(sb, r, g);
    strbuf_adds(sb, "</section>\n");
}
