/*
 * report_html.c — report.html: one self-contained page (inline CSS and
 * SVG, no script, no fetch) that a browser opens from the run folder or
 * from a CI artifact. Top to bottom: the verdicts, the OOM kills (what
 * each killed instance held before it died), memory over time, the
 * groups, per round, the fits behind the verdicts, the fits against the
 * work done (report_fits_html.c), the stages and restarts
 * (report_restarts_html.c), the top allocation
 * sites, every instance, and what is missing. The charts are drawn by
 * report_svg.c; the page's head and style are shared with compare.
 */
#include "report/report_int.h"

#include "base/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char css[] =
    ":root{--fg:#1f2937;--muted:#6b7280;--line:#e5e7eb;--bg:#f6f7f9}"
    "*{box-sizing:border-box}"
    "body{margin:0;font:14px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,"
    "'Helvetica Neue',Arial,sans-serif;color:var(--fg);background:var(--bg)}"
    "main{max-width:1120px;margin:0 auto;padding:24px 28px 40px}"
    "h1{font-size:22px;margin:0 0 4px}h1 small{font-weight:400;"
    "color:var(--muted);font-size:15px;margin-left:8px}"
    ".meta{color:var(--muted);margin:0}"
    ".badge{display:inline-block;padding:1px 9px;border-radius:999px;"
    "font-size:12px;font-weight:600;color:#fff;vertical-align:1px}"
    ".ok{background:#16a34a}.bad{background:#dc2626}.warn{background:#d97706}"
    ".info{background:#2563eb}.none{background:#9ca3af}"
    "section{background:#fff;border:1px solid var(--line);border-radius:10px;"
    "padding:18px 20px;margin:18px 0}"
    "h2{font-size:16px;margin:0 0 4px}"
    "p.note{color:var(--muted);font-size:13px;margin:0 0 12px}"
    ".cards{display:grid;grid-template-columns:repeat(auto-fill,"
    "minmax(330px,1fr));gap:12px}"
    ".card{border:1px solid var(--line);border-left:5px solid var(--c);"
    "border-radius:8px;padding:12px 14px}"
    ".card h3{margin:0 0 6px;font-size:15px}"
    ".card .v{font-size:14px;font-weight:600;margin:6px 0 0}"
    ".figs{display:flex;flex-wrap:wrap;gap:4px 18px;color:var(--muted);"
    "font-size:13px;margin-top:8px}.figs b{color:var(--fg);font-weight:600}"
    ".meter{height:8px;background:#eef2f7;border-radius:4px;overflow:hidden;"
    "margin-top:8px}.meter span{display:block;height:100%;"
    "background:var(--c)}"
    "svg.chart{width:100%;height:auto;display:block;margin-top:8px}"
    ".grid{stroke:#e5e7eb}.tick{fill:#6b7280;font-size:12px}"
    ".axis{fill:#4b5563;font-size:12px}.xtick,.frame{stroke:#9ca3af}"
    ".band0{fill:#f1f5f9}.band1{fill:#e6edf5}"
    ".stage0{fill:#ede9fe}.stage1{fill:#ddd6fe}"
    ".slabel{fill:#5b21b6;font-size:10px}"
    ".act{stroke:#7c3aed;stroke-width:1.2;stroke-dasharray:5 3}"
    "td.act{color:#5b21b6;font-weight:600}"
    ".rline{stroke:#94a3b8;stroke-dasharray:3 3}"
    ".rlabel{fill:#64748b;font-size:11px;font-weight:600}"
    ".rlabel.failed{fill:#dc2626}.rfail{stroke:#dc2626;stroke-width:1.5;"
    "stroke-dasharray:4 3}"
    ".limit{stroke-width:1.5;stroke-dasharray:8 4}"
    ".llabel{font-size:11px;font-weight:600}"
    ".llabel,.oom text,.rlabel{paint-order:stroke;stroke:#fff;"
    "stroke-width:3px;stroke-linejoin:round}"
    ".series polyline{fill:none;stroke-width:1.8;stroke-linejoin:round;"
    "stroke-opacity:.9}.series.many polyline{stroke-width:1;"
    "stroke-opacity:.4}"
    ".bmark path{fill:#64748b}.bfail path{fill:#dc2626}"
    ".oom circle{fill:#fff;stroke:#dc2626;stroke-width:2.5}"
    ".oom path{stroke:#dc2626;stroke-width:2.5}"
    ".oom text{fill:#dc2626;font-size:12px;font-weight:700}"
    ".snap rect,.snap path,.snap circle{stroke:#fff;stroke-width:1.2}"
    ".snap.preoom path{stroke:#dc2626;stroke-width:1.6}"
    ".legend svg{vertical-align:middle;margin-right:6px}"
    "ul.facts{margin:0 0 8px;padding-left:20px}ul.facts li{margin:2px 0}"
    "ul.facts li.none{color:#b45309}"
    ".rl polyline{fill:none;stroke-width:2.2}"
    ".rl.rss polyline{stroke-dasharray:7 4}.rl.cg polyline{"
    "stroke-dasharray:2 4}.rl.rss rect{fill:#fff;stroke-width:2}"
    ".fit line{stroke-width:1.5;stroke-dasharray:1 5;stroke-linecap:round}"
    ".legend{display:flex;flex-wrap:wrap;gap:6px 20px;margin:10px 0 0;"
    "padding:0;list-style:none;color:#374151;font-size:13px}"
    ".legend i{display:inline-block;width:24px;border-top:3px solid;"
    "vertical-align:middle;margin-right:6px}"
    ".legend i.dash{border-top-style:dashed}.legend i.dot{border-top-style:"
    "dotted}.legend i.band{height:12px;border:0;background:#e6edf5}"
    ".legend i.stage{height:8px;border:0;background:#ddd6fe}"
    ".legend i.oomk{width:12px;height:12px;border:2.5px solid #dc2626;"
    "border-radius:50%}"
    ".scroll{overflow-x:auto}"
    "table{border-collapse:collapse;width:100%;font-size:13px}"
    "th,td{padding:6px 10px;border-bottom:1px solid var(--line);"
    "text-align:left;white-space:nowrap}"
    "th{color:#4b5563;font-weight:600;background:#f9fafb}"
    "th.grp{text-align:center;border-bottom:3px solid var(--c)}"
    "th.blank{background:none;border-bottom:0}"
    ".n{text-align:right;font-variant-numeric:tabular-nums}"
    "td.fn{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;"
    "white-space:normal;word-break:break-all;width:45%}"
    "td.wrap{white-space:normal;color:#4b5563;min-width:180px}"
    "h3 small,h1 small{font-weight:400}"
    ".bar{display:inline-block;height:9px;background:var(--c);"
    "border-radius:2px;vertical-align:middle;margin-right:6px}"
    ".sw{display:inline-block;width:10px;height:10px;border-radius:2px;"
    "background:var(--c);margin-right:6px}"
    "h3.site{font-size:14px;margin:14px 0 6px}"
    "ul.missing{margin:0;padding-left:20px}ul.missing li{margin:3px 0}"
    ".up{color:#dc2626}.down{color:#16a34a}"
    ".wcharts{display:flex;flex-wrap:wrap;gap:10px;margin-top:10px}"
    "svg.wchart{width:330px;height:170px;border:1px solid var(--line);"
    "border-radius:6px}.wchart circle{fill-opacity:.55}"
    ".wchart .fitl{stroke-width:1.6;stroke-opacity:.7}.wchart "
    ".t{fill:#374151;font-size:11px;"
    "font-weight:600}.wchart .k{fill:#6b7280;font-size:10px}"
    "footer{color:var(--muted);font-size:12px;text-align:center}";

void
report__html_head(struct strbuf *sb, const char *title)
{
    strbuf_adds(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                    "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
                    "content=\"width=device-width, initial-scale=1\">\n"
                    "<title>");
    report__html_esc(sb, title);
    strbuf_addf(sb, "</title>\n<style>%s</style>\n</head>\n<body>\n<main>\n",
                css);
}

void
report__html_foot(struct strbuf *sb)
{
    char lim[32];

    report__fmt_bytes(REPORT_MIN_RISE_BYTES, lim, sizeof(lim));
    strbuf_addf(sb,
                "<footer>testyard report &middot; a series is growing when "
                "its fitted rise over at least %d rounds is at least %s "
                "and %.0f%% of its median, with R&sup2; &ge; %.1f, and "
                "its last %d rounds stand that far above its first third "
                "&middot; details in docs/report.md</footer>\n"
                "</main>\n</body>\n</html>\n",
                REPORT_MIN_ROUNDS, lim, REPORT_MIN_RISE_FRACTION * 100,
                REPORT_MIN_R2, REPORT_HOLD_ROUNDS);
}

static void
cell_bytes(struct strbuf *sb, int64_t v)
{
    char b[32];

    report__fmt_bytes(v, b, sizeof(b));
    strbuf_addf(sb, "<td class=\"n\">%s</td>", b);
}

static void
cell_ms(struct strbuf *sb, int64_t v)
{
    char b[32];

    report__fmt_ms(v, b, sizeof(b));
    strbuf_addf(sb, "<td class=\"n\">%s</td>", b);
}

/* The function, marked when testyard's own or resting on one sample. */
static void
cell_site(struct strbuf *sb, const struct report_site *s)
{
    strbuf_adds(sb, "<td class=\"fn\">");
    report__html_esc(sb, s->function);
    if (s->testyard)
        strbuf_adds(sb, " <small class=\"note\">(testyard)</small>");
    if (s->samples == 1)
        strbuf_adds(sb, " <small class=\"note\" title=\"the estimate "
                        "rests on a single sampled allocation\">(1 sample)"
                        "</small>");
    strbuf_adds(sb, "</td>");
}

static const char *
verdict_class(enum report_verdict_kind k)
{
    static const char *const cls[] = {"none", "none", "ok", "bad",
                                      "info", "warn", "bad"};

    return cls[k];
}

static const char *
outcome_class(const char *o)
{
    if (o == NULL)
        return "none";
    if (strcmp(o, "success") == 0)
        return "ok";
    return strcmp(o, "oom") == 0 || strcmp(o, "crash") == 0 ? "bad" : "warn";
}

static void
badge(struct strbuf *sb, const char *cls, const char *text)
{
    strbuf_addf(sb, "<span class=\"badge %s\">", cls);
    report__html_esc(sb, text);
    strbuf_adds(sb, "</span>");
}

/* ---- header and verdicts ------------------------------------------------- */

static void
header(struct strbuf *sb, const struct report *r)
{
    char dur[32] = "-";

    if (r->duration_s >= 0)
        report__fmt_ms(report__i64(r->duration_s * 1000), dur, sizeof(dur));
    strbuf_adds(sb, "<header>\n<h1>");
    report__html_esc(sb, r->plan ? r->plan : r->name ? r->name : "run");
    strbuf_adds(sb, " / ");
    report__html_esc(sb, r->case_name ? r->case_name : "?");
    strbuf_adds(sb, "<small>run ");
    report__html_esc(sb, r->run_id ? r->run_id : "(unknown)");
    strbuf_adds(sb, "</small></h1>\n<p class=\"meta\">");
    report__html_esc(sb, r->runner ? r->runner : "runner unknown");
    strbuf_adds(sb, " &middot; started ");
    report__html_esc(sb, r->started ? r->started : "-");
    strbuf_addf(sb, " &middot; %s &middot; ", dur);
    badge(sb, outcome_class(r->outcome),
          r->outcome ? r->outcome : "outcome unknown");
    strbuf_adds(sb, "</p>\n</header>\n");
}

static void
card(struct strbuf *sb, const struct report *r, size_t gi)
{
    const struct report_group *g = &r->groups[gi];
    const struct report_verdict *v = &g->growth.verdict;
    char peak[32], lim[32], at[32];
    double pct = g->limit > 0 && g->peak >= 0
                     ? 100.0 * (double)g->peak / (double)g->limit
                     : 0;

    report__fmt_bytes(g->peak, peak, sizeof(peak));
    report__fmt_bytes(g->limit, lim, sizeof(lim));
    report__fmt_ms(g->peak_t_ms, at, sizeof(at));
    strbuf_addf(sb, "<div class=\"card\" style=\"--c:%s\"><h3>",
                report__group_color(gi));
    report__html_esc(sb, g->id);
    strbuf_addf(sb, " <small class=\"note\">%zu instance%s</small> ", g->ninst,
                g->ninst == 1 ? "" : "s");
    badge(sb, verdict_class(v->kind), report__verdict_name(v->kind));
    strbuf_adds(sb, "</h3><p class=\"v\">");
    report__html_esc(sb, v->text);
    strbuf_addf(sb,
                "</p><div class=\"figs\"><span>peak <b>%s</b> at %s</span>"
                "<span>limit <b>%s</b></span><span>OOM kills <b>%zu</b>"
                "</span></div>",
                peak, at, lim, g->noom);
    if (pct > 0)
        strbuf_addf(sb,
                    "<div class=\"meter\" title=\"peak is %.0f%% of the "
                    "limit\"><span style=\"width:%.1f%%\"></span></div>",
                    pct, pct > 100 ? 100 : pct);
    strbuf_adds(sb, "</div>\n");
}

static void
verdicts(struct strbuf *sb, const struct report *r)
{
    strbuf_adds(sb, "<section id=\"verdicts\">\n<h2>Memory growth, round "
                    "after round</h2>\n<p class=\"note\">One verdict per "
                    "group, from a line through heap in use after each "
                    "round's trim, told apart from RSS and malloc's own "
                    "figures (or cgroup usage when there are no heap "
                    "figures).</p>\n<div class=\"cards\">\n");
    for (size_t g = 0; g < r->ngroups; g++)
        card(sb, r, g);
    if (r->ngroups == 0)
        strbuf_adds(sb, "<p class=\"note\">No groups.</p>");
    strbuf_adds(sb, "</div>\n</section>\n");
}

/* ---- charts ----------------------------------------------------------------
 */

static void
legend_groups(struct strbuf *sb, const struct report *r, const char *style)
{
    for (size_t g = 0; g < r->ngroups; g++) {
        strbuf_addf(sb, "<li><i class=\"%s\" style=\"color:%s\"></i>", style,
                    report__group_color(g));
        report__html_esc(sb, r->groups[g].id);
        strbuf_addf(sb, " (%zu)</li>", r->groups[g].ninst);
    }
}

static void
memory_chart(struct strbuf *sb, const struct report *r)
{
    size_t samples = 0;

    for (size_t i = 0; i < r->ninsts; i++)
        samples += r->insts[i].nsamples;
    if (samples == 0) {
        strbuf_adds(sb, "<section id=\"memory\">\n<h2>Memory over time</h2>"
                        "\n<p class=\"note\">No memory samples: no "
                        "instance has a memory.csv.</p>\n</section>\n");
        return;
    }
    strbuf_adds(sb, "<section id=\"memory\">\n<h2>Memory over time</h2>\n"
                    "<p class=\"note\">cgroup usage of every instance "
                    "(memory.csv), coloured by group; shaded bands are "
                    "rounds (from their barriers), the strip along the "
                    "bottom the stages and violet dashed lines the actions "
                    "between them (when the run has stages), dashed lines the "
                    "groups' limits; markers are heap snapshots at their "
                    "time and usage, shaped by why they were taken "
                    "(hover for the label and, for an OOM-killed "
                    "instance, how long before the kill).</p>\n");
    report__svg_memory(sb, r);
    strbuf_adds(sb, "<ul class=\"legend\">");
    legend_groups(sb, r, "");
    strbuf_adds(sb, "<li><i class=\"dash\" style=\"color:#64748b\"></i>"
                    "limit</li><li><i class=\"band\"></i>round</li>");
    if (r->nstages > 0)
        strbuf_adds(sb, "<li><i class=\"stage\"></i>stage</li><li><i "
                        "class=\"dash\" style=\"color:#7c3aed\"></i>"
                        "action (restart, pause, stop)</li>");
    report__svg_snap_legend(sb, r);
    strbuf_adds(sb, "<li><i class=\"oomk\"></i>OOM kill</li></ul>\n"
                    "</section>\n");
}

/* ---- groups ----------------------------------------------------------------
 */

static void
outcome_counts(struct strbuf *sb, const struct report *r,
               const struct report_group *g)
{
    static const char *const names[] = {"success", "failure", "crash",
                                        "oom",     "timeout", "canceled"};
    size_t unknown = g->ninst;

    strbuf_adds(sb, "<td>");
    for (size_t k = 0; k < ARRAY_LEN(names); k++) {
        size_t n = 0;

        for (size_t i = 0; i < g->ninst; i++) {
            const char *o = r->insts[g->inst[i]].outcome;

            n += o != NULL && strcmp(o, names[k]) == 0;
        }
        unknown -= n;
        if (n > 0)
            strbuf_addf(sb, "%zu %s ", n, names[k]);
    }
    if (unknown > 0)
        strbuf_addf(sb, "%zu unknown", unknown);
    strbuf_adds(sb, "</td>");
}

static void
never_connected(struct strbuf *sb, const struct report *r)
{
    cleanup_free char *line = report__never_connected_line(r);

    if (line == NULL)
        return;
    strbuf_adds(sb, "<p class=\"note\" id=\"never-connected\">");
    report__html_esc(sb, line);
    strbuf_adds(sb, "</p>\n");
}

static void
groups_table(struct strbuf *sb, const struct report *r)
{
    strbuf_adds(sb, "<section id=\"groups\">\n<h2>Groups</h2>\n<p "
                    "class=\"note\">Peak is the highest usage any instance "
                    "of the group reached (the kernel's own peak included); "
                    "final is the highest usage when instances ended.</p>\n"
                    "<div class=\"scroll\"><table>\n<tr><th>group</th>"
                    "<th class=\"n\">instances</th><th>outcomes</th>"
                    "<th class=\"n\">limit</th><th class=\"n\">peak</th>"
                    "<th class=\"n\">at</th><th>peak instance</th>"
                    "<th class=\"n\">final</th><th class=\"n\">OOM "
                    "kills</th></tr>\n");
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct report_group *g = &r->groups[i];

        strbuf_addf(sb,
                    "<tr><td><span class=\"sw\" style=\"--c:%s\">"
                    "</span>",
                    report__group_color(i));
        report__html_esc(sb, g->id);
        strbuf_addf(sb, "</td><td class=\"n\">%zu</td>", g->ninst);
        outcome_counts(sb, r, g);
        cell_bytes(sb, g->limit);
        cell_bytes(sb, g->peak);
        cell_ms(sb, g->peak_t_ms);
        report__html_cell(sb, NULL, g->peak_inst);
        cell_bytes(sb, g->final);
        strbuf_addf(sb, "<td class=\"n\">%zu</td></tr>\n", g->noom);
    }
    strbuf_adds(sb, "</table></div>\n");
    never_connected(sb, r);
    strbuf_adds(sb, "</section>\n");
}

/* ---- per round -------------------------------------------------------------
 */

static void
rounds_head(struct strbuf *sb, const struct report *r)
{
    strbuf_adds(sb, "<tr><th class=\"blank\"></th>");
    for (size_t g = 0; g < r->ngroups; g++) {
        strbuf_addf(sb, "<th class=\"grp\" colspan=\"6\" style=\"--c:%s\">",
                    report__group_color(g));
        report__html_esc(sb, r->groups[g].id);
        strbuf_adds(sb, "</th>");
    }
    strbuf_adds(sb, "</tr>\n<tr><th>round</th>");
    for (size_t g = 0; g < r->ngroups; g++)
        strbuf_adds(sb, "<th class=\"n\">heap pre</th><th class=\"n\">"
                        "heap post</th><th class=\"n\">RSS post</th>"
                        "<th class=\"n\">malloc</th><th class=\"n\">"
                        "outside malloc</th><th class=\"n\">cgroup</th>");
    strbuf_adds(sb, "</tr>\n");
}

/* Every round any group has, in order. */
static void
rounds_rows(struct strbuf *sb, const struct report *r)
{
    int last = -1;

    for (;;) {
        int next = -1;

        for (size_t g = 0; g < r->ngroups; g++)
            for (size_t k = 0; k < r->groups[g].nrounds; k++) {
                int x = r->groups[g].rounds[k].round;

                if (x > last && (next < 0 || x < next))
                    next = x;
            }
        if (next < 0)
            return;
        strbuf_addf(sb, "<tr><td>R%d</td>", next);
        for (size_t g = 0; g < r->ngroups; g++) {
            const struct report_round *rd =
                report__round_of(&r->groups[g], next);

            cell_bytes(sb, rd ? rd->heap_pre : -1);
            cell_bytes(sb, rd ? rd->heap_post : -1);
            cell_bytes(sb, rd ? rd->rss_post : -1);
            cell_bytes(sb, rd ? rd->malloc : -1);
            cell_bytes(sb, rd ? rd->outside : -1);
            cell_bytes(sb, rd ? rd->cgroup : -1);
        }
        strbuf_adds(sb, "</tr>\n");
        last = next;
    }
}

/* The line styles in use: heap in use and RSS for groups with heap
 * snapshots, cgroup usage for those without (as report__svg_rounds). */
static void
rounds_legend(struct strbuf *sb, const struct report *r)
{
    bool heap = false, cg = false;

    for (size_t g = 0; g < r->ngroups; g++) {
        const struct report_growth *gr = &r->groups[g].growth;
        bool h = gr->heap.n > 0 || gr->rss.n > 0;

        heap = heap || h;
        cg = cg || (!h && r->groups[g].nrounds > 0);
    }
    strbuf_adds(sb, "<ul class=\"legend\">");
    legend_groups(sb, r, "");
    if (heap)
        strbuf_adds(sb, "<li><i style=\"color:#374151\"></i>heap in use</li>"
                        "<li><i class=\"dash\" style=\"color:#374151\"></i>"
                        "RSS</li>");
    if (cg)
        strbuf_adds(sb, "<li><i class=\"dot\" style=\"color:#374151\"></i>"
                        "cgroup usage (no heap snapshots)</li>");
    strbuf_adds(sb, "</ul>\n");
}

static void
rounds_section(struct strbuf *sb, const struct report *r)
{
    bool any = false;

    for (size_t g = 0; g < r->ngroups; g++)
        any = any || r->groups[g].nrounds > 0;
    strbuf_adds(sb, "<section id=\"rounds\">\n<h2>Per round</h2>\n");
    if (!any) {
        strbuf_adds(sb, "<p class=\"note\">No per-round figures: no heap "
                        "snapshots with a round and no round barriers "
                        "(next-N / finish-N).</p>\n</section>\n");
        return;
    }
    strbuf_adds(sb, "<p class=\"note\">Heap in use is the heap profile's "
                    "inuse_space, before (pre) and after (post) each "
                    "round's malloc_trim; RSS the process's resident memory "
                    "after it; malloc its heaps (mallinfo2 arena + hblkhd); "
                    "outside malloc RssAnon less those and the profiler's "
                    "resident tables; cgroup the instance's usage, all read "
                    "by the instance at the round's end. Each is the mean "
                    "over the group's instances. RSS growing while heap in "
                    "use stays flat is retention when malloc grows with it, "
                    "and memory outside malloc when it does not.</p>\n");
    report__svg_rounds(sb, r);
    rounds_legend(sb, r);
    strbuf_adds(sb, "<div class=\"scroll\"><table>\n");
    rounds_head(sb, r);
    rounds_rows(sb, r);
    strbuf_adds(sb, "</table></div>\n</section>\n");
}

/* ---- growth fits ------------------------------------------------------------
 */

static void
fit_row(struct strbuf *sb, const char *series, const struct report_fit *f)
{
    char rate[48], mean[32];

    report__fmt_rate(f->slope, rate, sizeof(rate));
    report__fmt_bytes(f->n ? report__i64(f->mean) : -1, mean, sizeof(mean));
    strbuf_addf(sb, "<td>%s</td><td class=\"n\">%zu</td>", series, f->n);
    if (f->n >= 2)
        strbuf_addf(sb, "<td class=\"n\">%s</td><td class=\"n\">%.2f</td>",
                    rate, f->r2);
    else
        strbuf_adds(sb, "<td class=\"n\">-</td><td class=\"n\">-</td>");
    strbuf_addf(sb, "<td class=\"n\">%s</td><td>%s</td></tr>\n", mean,
                report__trend_name(f->trend));
}

static void
fits_table(struct strbuf *sb, const struct report *r)
{
    strbuf_adds(sb, "<section id=\"growth\">\n<h2>Growth fits</h2>\n<p "
                    "class=\"note\">Slope of each series against the "
                    "round number (the median of the slopes between every "
                    "two rounds), in bytes per round; R&sup2; of the "
                    "least-squares line.</p>\n"
                    "<div class=\"scroll\"><table>\n<tr><th>group</th>"
                    "<th>series</th><th class=\"n\">rounds</th><th "
                    "class=\"n\">slope</th><th class=\"n\">R&sup2;</th>"
                    "<th class=\"n\">mean</th><th>trend</th></tr>\n");
    for (size_t g = 0; g < r->ngroups; g++) {
        const struct report_growth *gr = &r->groups[g].growth;

        const struct {
            const char *name;
            const struct report_fit *f;
        } rows[] = {
            {"heap in use (post-trim)", &gr->heap},
            {"RSS (post-trim)", &gr->rss},
            {"RssAnon", &gr->anon},
            {"malloc (arena + hblkhd)", &gr->malloc},
            {"free in malloc (fordblks)", &gr->mfree},
            {"outside malloc", &gr->outside},
            {"cgroup usage", &gr->cgroup},
        };

        strbuf_addf(sb,
                    "<tr><td rowspan=\"%zu\"><span class=\"sw\" "
                    "style=\"--c:%s\"></span>",
                    ARRAY_LEN(rows), report__group_color(g));
        report__html_esc(sb, r->groups[g].id);
        strbuf_adds(sb, "</td>");
        for (size_t k = 0; k < ARRAY_LEN(rows); k++) {
            if (k > 0)
                strbuf_adds(sb, "<tr>");
            fit_row(sb, rows[k].name, rows[k].f);
        }
    }
    strbuf_adds(sb, "</table></div>\n</section>\n");
}

/* ---- sites, instances, notes ------------------------------------------------
 */

/* A list of allocation sites (a group's, an OOM-killed instance's) as
 * one table: share of total, bars in the colour given. What is said of
 * each site (testyard's own, a single sample) goes here. */
static void
sites_table(struct strbuf *sb, const struct report_site *sites, size_t n,
            int64_t total, const char *color)
{
    strbuf_addf(sb,
                "<div class=\"scroll\"><table style=\"--c:%s\">\n<tr>"
                "<th class=\"n\">#</th><th>function</th><th class=\"n\">"
                "in use</th><th>share</th><th class=\"n\">cumulative"
                "</th></tr>\n",
                color);
    for (size_t k = 0; k < n; k++) {
        double share =
            total > 0 ? 100.0 * (double)sites[k].flat / (double)total : 0;

        strbuf_addf(sb, "<tr><td class=\"n\">%zu</td>", k + 1);
        cell_site(sb, &sites[k]);
        cell_bytes(sb, sites[k].flat);
        strbuf_addf(sb,
                    "<td><span class=\"bar\" style=\"width:%.0fpx\">"
                    "</span>%.1f%%</td>",
                    share * 1.6 + 1, share);
        cell_bytes(sb, sites[k].cum);
        strbuf_adds(sb, "</tr>\n");
    }
    strbuf_adds(sb, "</table></div>\n");
}

void
report__html_group_h3(struct strbuf *sb, const char *id, size_t gi)
{
    strbuf_addf(sb,
                "<h3 class=\"site\"><span class=\"sw\" style=\"--c:%s\">"
                "</span>",
                report__group_color(gi));
    report__html_esc(sb, id);
}

static void
sites_head(struct strbuf *sb, const struct report_group *g, size_t gi)
{
    report__html_group_h3(sb, g->id, gi);
    strbuf_adds(sb, " <small class=\"note\">");
}

/* Once per group: how many frames have no symbols, and how to get them. */
static void
syms_note(struct strbuf *sb, const struct report_group *g)
{
    char text[1024];

    report__syms_text(g, text, sizeof(text));
    if (text[0] == '\0')
        return;
    strbuf_adds(sb, "<p class=\"note\">");
    report__html_esc(sb, text);
    strbuf_adds(sb, "</p>\n");
}

static void
sites_group(struct strbuf *sb, const struct report_group *g, size_t gi)
{
    char tot[32], why[256];

    sites_head(sb, g, gi);
    if (g->nsites == 0) {
        report__sites_absent_text(g, why, sizeof(why));
        report__html_esc(sb, why);
        strbuf_adds(sb, "</small></h3>\n");
        syms_note(sb, g);
        return;
    }
    report__fmt_bytes(g->sites_total, tot, sizeof(tot));
    report__html_esc(sb, g->sites_label && g->sites_label[0]
                             ? g->sites_label
                             : "last snapshot of each instance");
    strbuf_addf(sb, ", %zu instance%s, %s in use</small></h3>\n",
                g->sites_ninst, g->sites_ninst == 1 ? "" : "s", tot);
    if (g->sites_older > 0)
        strbuf_addf(sb,
                    "<p class=\"note\">The last profile of %zu instance%s "
                    "held 0 B in use; %s sites are from the latest profile "
                    "that held any.</p>\n",
                    g->sites_older, g->sites_older == 1 ? "" : "s",
                    g->sites_older == 1 ? "its" : "their");
    sites_table(sb, g->sites, g->nsites, g->sites_total,
                report__group_color(gi));
    syms_note(sb, g);
}

/* Growing sites as one table (a group's, an OOM-killed instance's). */
static void
gsites_table(struct strbuf *sb, const struct report_gsites *gs)
{
    strbuf_adds(sb, "<div class=\"scroll\"><table>\n<tr><th class=\"n\">#"
                    "</th><th>function</th><th class=\"n\">per round</th>"
                    "<th class=\"n\">grew by</th><th class=\"n\">in use at "
                    "the end</th></tr>\n");
    for (size_t k = 0; k < gs->n; k++) {
        char rate[48] = "-";

        if (!isnan(gs->v[k].rate))
            report__fmt_rate(gs->v[k].rate, rate, sizeof(rate));
        strbuf_addf(sb, "<tr><td class=\"n\">%zu</td>", k + 1);
        cell_site(sb, &gs->v[k]);
        strbuf_addf(sb, "<td class=\"n\">%s</td>", rate);
        cell_bytes(sb, gs->v[k].growth);
        cell_bytes(sb, gs->v[k].flat);
        strbuf_adds(sb, "</tr>\n");
    }
    strbuf_adds(sb, "</table></div>\n");
}

/* "round-1-post-trim &rarr; pre-oom, 3 rounds" */
static void
gsites_span(struct strbuf *sb, const struct report_gsites *gs)
{
    report__html_esc(sb, gs->from ? gs->from : "first post-trim profile");
    strbuf_adds(sb, " &rarr; ");
    report__html_esc(sb, gs->to ? gs->to : "last profile");
    if (gs->rounds > 0)
        strbuf_addf(sb, ", %d round%s", gs->rounds, gs->rounds == 1 ? "" : "s");
}

static void
gsites_group(struct strbuf *sb, const struct report_group *g, size_t gi)
{
    const struct report_gsites *gs = &g->gsites;

    sites_head(sb, g, gi);
    gsites_span(sb, gs);
    strbuf_addf(sb, ", %zu instance%s</small></h3>\n", gs->ninst,
                gs->ninst == 1 ? "" : "s");
    gsites_table(sb, gs);
}

static void
gsites_section(struct strbuf *sb, const struct report *r)
{
    bool any = false;

    for (size_t g = 0; g < r->ngroups; g++)
        any = any || r->groups[g].gsites.n > 0;
    if (!any)
        return;
    strbuf_adds(sb, "<section id=\"growing\">\n<h2>Growing sites</h2>\n"
                    "<p class=\"note\">How much each function's heap in "
                    "use grew from each instance's first post-trim profile "
                    "to its last (what <code>pprof -diff_base</code> "
                    "shows), added over the group's instances, largest "
                    "first; testyard's own allocations come last.</p>\n");
    for (size_t g = 0; g < r->ngroups; g++)
        if (r->groups[g].gsites.n > 0)
            gsites_group(sb, &r->groups[g], g);
    strbuf_adds(sb, "</section>\n");
}

/* The sites at each group's peak, where they differ from its last
 * snapshot's. */
static void
peak_sites(struct strbuf *sb, const struct report *r)
{
    bool any = false;

    for (size_t gi = 0; gi < r->ngroups; gi++) {
        const struct report_group *g = &r->groups[gi];
        char tot[32];

        if (g->npsites == 0 || report__same_sites(g))
            continue;
        if (!any)
            strbuf_adds(sb, "<h3>At the peak</h3>\n<p class=\"note\">The "
                            "same, at each instance's snapshot with the most "
                            "heap in use: where the memory went, where the "
                            "tables above show what was kept.</p>\n");
        any = true;
        report__fmt_bytes(g->psites_total, tot, sizeof(tot));
        sites_head(sb, g, gi);
        report__html_esc(sb, g->psites_label ? g->psites_label
                                             : "peak snapshot of each "
                                               "instance");
        strbuf_addf(sb, ", %zu instance%s, %s in use</small></h3>\n",
                    g->psites_ninst, g->psites_ninst == 1 ? "" : "s", tot);
        sites_table(sb, g->psites, g->npsites, g->psites_total,
                    report__group_color(gi));
    }
}

static void
sites_section(struct strbuf *sb, const struct report *r)
{
    size_t profiles = 0;

    strbuf_adds(sb, "<section id=\"sites\">\n<h2>Top allocation sites</h2>\n"
                    "<p class=\"note\">Heap in use (inuse_space) by the "
                    "function that allocated it, at each group's last "
                    "snapshot, looking through malloc and its wrappers; "
                    "cumulative counts every function on the stack. "
                    "testyard's own allocations (its sync buffers, "
                    "metrics and profiler) are marked and come last.</p>\n");
    for (size_t g = 0; g < r->ngroups; g++)
        profiles += r->groups[g].nprofiles;
    for (size_t g = 0; g < r->ngroups && profiles > 0; g++)
        sites_group(sb, &r->groups[g], g);
    peak_sites(sb, r);
    if (profiles == 0)
        strbuf_adds(sb, "<p class=\"note\">No heap profiles "
                        "(heap-&lt;label&gt;.pb.gz) to read.</p>\n");
    strbuf_adds(sb, "</section>\n");
}

/* ---- OOM kills ------------------------------------------------------------
 */

static void
fact(struct strbuf *sb, const char *cls, const char *text)
{
    if (text[0] == '\0')
        return;
    strbuf_addf(sb, "<li%s%s%s>", cls ? " class=\"" : "", cls ? cls : "",
                cls ? "\"" : "");
    report__html_esc(sb, text);
    strbuf_adds(sb, "</li>\n");
}

static void
oom_inst(struct strbuf *sb, const struct report *r,
         const struct report_inst *in)
{
    size_t gi = 0;
    char at[32], before[32], lim[32], text[512];

    while (gi < r->ngroups && strcmp(r->groups[gi].id, in->group) != 0)
        gi++;
    report__fmt_ms(in->oom_t_ms, at, sizeof(at));
    report__fmt_bytes(in->before_oom, before, sizeof(before));
    report__fmt_bytes(in->limit, lim, sizeof(lim));
    report__html_group_h3(sb, in->label, gi);
    strbuf_addf(sb,
                "</h3>\n<ul class=\"facts\">\n<li>killed at <b>%s</b>; "
                "usage before the kill <b>%s</b> (limit %s)</li>\n",
                at, before, lim);
    report__preoom_text(in, text, sizeof(text));
    fact(sb, NULL, text);
    report__oom_profile_text(in, text, sizeof(text));
    fact(sb, in->kill.last ? NULL : "none", text);
    strbuf_adds(sb, "</ul>\n");
    if (in->kill.nsites > 0)
        sites_table(sb, in->kill.sites, in->kill.nsites, in->kill.sites_total,
                    report__group_color(gi));
    if (in->gsites.n > 0) {
        strbuf_adds(sb, "<p class=\"note\">What grew until then (");
        gsites_span(sb, &in->gsites);
        strbuf_adds(sb, "):</p>\n");
        gsites_table(sb, &in->gsites);
    }
}

/* OOM-killed instances shown one by one; summary.json has them all. */
#define HTML_MAX_OOM 20

static void
oom_section(struct strbuf *sb, const struct report *r)
{
    size_t shown = 0;
    bool any = false;

    for (size_t i = 0; i < r->ninsts; i++) {
        if (!r->insts[i].oom)
            continue;
        if (shown++ >= HTML_MAX_OOM)
            continue;
        if (!any)
            strbuf_adds(sb, "<section id=\"oom\">\n<h2>OOM kills</h2>\n"
                            "<p class=\"note\">What each OOM-killed "
                            "instance held before it died: its last heap "
                            "profile, how long before the kill it was "
                            "taken, the cgroup's usage then, and that "
                            "profile's top allocation sites.</p>\n");
        any = true;
        oom_inst(sb, r, &r->insts[i]);
    }
    if (shown > HTML_MAX_OOM)
        strbuf_addf(sb,
                    "<p class=\"note\">... and %zu more OOM-killed "
                    "instances (summary.json has them all).</p>\n",
                    shown - HTML_MAX_OOM);
    if (any)
        strbuf_adds(sb, "</section>\n");
}

/* "10: 8 round, 1 peak, 1 pre-oom": the instance's snapshots by kind. */
static void
snaps_cell(struct strbuf *sb, const struct report_inst *in)
{
    size_t n[TRIG_EXIT + 1] = {0};
    const char *sep = ": ";

    for (size_t i = 0; i < in->nsnaps; i++)
        n[in->snaps[i].trigger]++;
    strbuf_addf(sb, "<td>%zu", in->nsnaps);
    for (size_t k = 0; k < ARRAY_LEN(n); k++) {
        if (n[k] == 0)
            continue;
        strbuf_addf(sb, "%s%zu %s", sep, n[k],
                    report__trigger_name((enum report_trigger)k));
        sep = ", ";
    }
    strbuf_adds(sb, "</td>");
}

static void
inst_row(struct strbuf *sb, const struct report_inst *in)
{
    strbuf_adds(sb, "<tr><td>");
    report__html_esc(sb, in->label);
    strbuf_adds(sb, "</td><td>");
    badge(sb, outcome_class(in->outcome),
          in->outcome ? in->outcome : "unknown");
    strbuf_adds(sb, "</td>");
    cell_bytes(sb, in->limit);
    cell_bytes(sb, in->peak);
    cell_ms(sb, in->peak_t_ms);
    cell_bytes(sb, in->final);
    cell_ms(sb, in->oom ? in->oom_t_ms : -1);
    cell_bytes(sb, in->oom ? in->before_oom : -1);
    snaps_cell(sb, in);
    report__html_cell(sb, NULL, report__verdict_name(in->growth.verdict.kind));
    report__html_cell(sb, "wrap", in->error ? in->error : in->how);
    strbuf_adds(sb, "</tr>\n");
}

static void
insts_table(struct strbuf *sb, const struct report *r)
{
    strbuf_adds(sb, "<section id=\"instances\">\n<h2>Instances</h2>\n<div "
                    "class=\"scroll\"><table>\n<tr><th>instance</th>"
                    "<th>outcome</th><th class=\"n\">limit</th><th "
                    "class=\"n\">peak</th><th class=\"n\">at</th><th "
                    "class=\"n\">final</th><th class=\"n\">OOM kill at</th>"
                    "<th class=\"n\">usage before</th><th>"
                    "snapshots</th><th>growth</th><th>how it ended</th>"
                    "</tr>\n");
    for (size_t i = 0; i < r->ninsts; i++)
        inst_row(sb, &r->insts[i]);
    strbuf_adds(sb, "</table></div>\n</section>\n");
}

static void
notes(struct strbuf *sb, const struct report *r)
{
    if (r->notes.n == 0)
        return;
    strbuf_adds(sb, "<section id=\"missing\">\n<h2>Missing or incomplete"
                    "</h2>\n<ul class=\"missing\">\n");
    for (size_t i = 0; i < r->notes.n; i++) {
        strbuf_adds(sb, "<li>");
        report__html_esc(sb, r->notes.v[i]);
        strbuf_adds(sb, "</li>\n");
    }
    strbuf_adds(sb, "</ul>\n</section>\n");
}

char *
report__html(const struct report *r)
{
    struct strbuf sb;
    cleanup_free char *title =
        xasprintf("%s — testyard report", r->run_id ? r->run_id : "run");

    strbuf_init(&sb);
    report__html_head(&sb, title);
    header(&sb, r);
    verdicts(&sb, r);
    oom_section(&sb, r);
    memory_chart(&sb, r);
    groups_table(&sb, r);
    rounds_section(&sb, r);
    fits_table(&sb, r);
    report__html_fits(&sb, r);
    report__html_restarts(&sb, r);
    sites_section(&sb, r);
    gsites_section(&sb, r);
    insts_table(&sb, r);
    notes(&sb, r);
    report__html_foot(&sb);
    return strbuf_detach(&sb);
}
