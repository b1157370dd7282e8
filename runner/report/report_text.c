/*
 * report_text.c — the report as a terminal table: one line per group with
 * its memory figures, the growth verdicts, heap in use, RSS and cgroup
 * usage per round, OOM kills with the last profile before each, the top
 * allocation sites and the sites that grew, the fits against the work
 * done that grow, the stages and each group's restarts, what is
 * missing, and where the
 * files are. Short enough to read after every run; summary.json and
 * report.html have the rest.
 */
#include "report/report_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TEXT_MAX_ROUNDS 12
#define TEXT_MAX_SITES 5
#define TEXT_MAX_NOTES 10
#define TEXT_MAX_OOM 10
#define TEXT_MAX_FITS 12
#define TEXT_MAX_STAGES 16

static void
print_head(const struct report *r, FILE *out)
{
    char dur[32] = "-";

    if (r->duration_s >= 0)
        report__fmt_ms(report__i64(r->duration_s * 1000), dur, sizeof(dur));
    fprintf(out, "\nreport %s  %s/%s  %s  %s  %s\n",
            r->run_id ? r->run_id : "(unknown run)",
            r->plan   ? r->plan
            : r->name ? r->name
                      : "?",
            r->case_name ? r->case_name : "?", r->runner ? r->runner : "?",
            r->outcome ? r->outcome : "outcome unknown", dur);
}

static void
print_groups(const struct report *r, FILE *out)
{
    fprintf(out, "%-14s %4s %10s %10s %8s %10s %4s\n", "group", "inst", "limit",
            "peak", "at", "final", "oom");
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct report_group *g = &r->groups[i];
        char lim[32], peak[32], at[32], fin[32];

        report__fmt_bytes(g->limit, lim, sizeof(lim));
        report__fmt_bytes(g->peak, peak, sizeof(peak));
        report__fmt_ms(g->peak_t_ms, at, sizeof(at));
        report__fmt_bytes(g->final, fin, sizeof(fin));
        fprintf(out, "%-14s %4zu %10s %10s %8s %10s %4zu\n", g->id, g->ninst,
                lim, peak, at, fin, g->noom);
    }
}

static void
print_never_connected(const struct report *r, FILE *out)
{
    cleanup_free char *line = report__never_connected_line(r);

    if (line != NULL)
        fprintf(out, "%s\n", line);
}

static void
print_verdicts(const struct report *r, FILE *out)
{
    fprintf(out, "\ngrowth per round:\n");
    for (size_t i = 0; i < r->ngroups; i++)
        fprintf(out, "  %-14s %s\n", r->groups[i].id,
                r->groups[i].growth.verdict.text);
}

/* A group's three columns (docs/report.md, "On the terminal"): heap in
 * use and RSS after the trim ("-" without heap snapshots), and cgroup
 * usage at the round's end. */
static void
print_round_line(const struct report *r, int round, FILE *out)
{
    fprintf(out, "  %5d", round);
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct report_round *rd = report__round_of(&r->groups[i], round);
        char h[32] = "-", s[32] = "-", c[32] = "-";

        if (rd != NULL) {
            report__fmt_bytes(rd->heap_post >= 0 ? rd->heap_post : rd->heap_pre,
                              h, sizeof(h));
            report__fmt_bytes(rd->rss_post >= 0 ? rd->rss_post : rd->rss_pre, s,
                              sizeof(s));
            report__fmt_bytes(rd->cgroup, c, sizeof(c));
        }
        fprintf(out, "  %10s %10s %10s", h, s, c);
    }
    fputc('\n', out);
}

/* Rounds of the group with the most, as the table's rows. */
static const struct report_group *
widest(const struct report *r)
{
    const struct report_group *w = NULL;

    for (size_t i = 0; i < r->ngroups; i++)
        if (w == NULL || r->groups[i].nrounds > w->nrounds)
            w = &r->groups[i];
    return w;
}

static void
print_rounds_head(const struct report *r, FILE *out)
{
    fprintf(out, "\nper round (after each round's trim):\n  round");
    for (size_t i = 0; i < r->ngroups; i++)
        fprintf(out, "  %-32.32s", r->groups[i].id);
    fprintf(out, "\n       ");
    for (size_t i = 0; i < r->ngroups; i++)
        fprintf(out, "  %10s %10s %10s", "heap", "RSS", "cgroup");
    fputc('\n', out);
}

static void
print_rounds(const struct report *r, FILE *out)
{
    const struct report_group *w = widest(r);
    size_t n;

    if (w == NULL || w->nrounds == 0)
        return;
    print_rounds_head(r, out);
    n = w->nrounds < TEXT_MAX_ROUNDS ? w->nrounds : TEXT_MAX_ROUNDS;
    for (size_t k = 0; k < n; k++)
        print_round_line(r, w->rounds[k].round, out);
    if (w->nrounds > n)
        fprintf(out, "  ... %zu more rounds in summary.json\n", w->nrounds - n);
}

/* One site a line, for a group's top sites and an OOM-killed
 * instance's; what is said of each site goes here. */
static void
print_site_lines(const struct report_site *sites, size_t n, int64_t total,
                 const char *indent, FILE *out)
{
    for (size_t k = 0; k < n && k < TEXT_MAX_SITES; k++) {
        char b[32], name[256];

        report__fmt_bytes(sites[k].flat, b, sizeof(b));
        report__site_name(&sites[k], name, sizeof(name));
        fprintf(out, "%s%10s %5.1f%%  %s\n", indent, b,
                total > 0 ? 100.0 * (double)sites[k].flat / (double)total : 0.0,
                name);
    }
}

/* "round-1-post-trim -> round-5-post-trim, 4 rounds" */
static void
gsites_span(const struct report_gsites *gs, char *buf, size_t size)
{
    char n[32] = "";

    if (gs->rounds > 0)
        snprintf(n, sizeof(n), ", %d round%s", gs->rounds,
                 gs->rounds == 1 ? "" : "s");
    if (gs->from != NULL && gs->to != NULL)
        snprintf(buf, size, "%s -> %s%s", gs->from, gs->to, n);
    else
        snprintf(buf, size, "first post-trim -> last profile%s", n);
}

static void
print_gsite_lines(const struct report_gsites *gs, const char *indent, FILE *out)
{
    for (size_t k = 0; k < gs->n && k < TEXT_MAX_SITES; k++) {
        char rate[48] = "", grow[32], name[256];

        if (!isnan(gs->v[k].rate))
            report__fmt_rate(gs->v[k].rate, rate, sizeof(rate));
        report__fmt_bytes(gs->v[k].growth, grow, sizeof(grow));
        report__site_name(&gs->v[k], name, sizeof(name));
        fprintf(out, "%s%16s  +%-10s %s\n", indent, rate, grow, name);
    }
}

static void
print_growing(const struct report *r, FILE *out)
{
    bool any = false;

    for (size_t i = 0; i < r->ngroups; i++) {
        const struct report_gsites *gs = &r->groups[i].gsites;
        char span[256];

        if (gs->n == 0)
            continue;
        if (!any)
            fprintf(out, "\ngrowing sites (growth of heap in use):\n");
        any = true;
        gsites_span(gs, span, sizeof(span));
        fprintf(out, "  %s (%s):\n", r->groups[i].id, span);
        print_gsite_lines(gs, "    ", out);
    }
}

static void
print_oom(const struct report_inst *in, FILE *out)
{
    char at[32], before[32], lim[32], text[512];

    report__fmt_ms(in->oom_t_ms, at, sizeof(at));
    report__fmt_bytes(in->before_oom, before, sizeof(before));
    report__fmt_bytes(in->limit, lim, sizeof(lim));
    fprintf(out, "  %-16s killed at %s; last usage before %s (limit %s)\n",
            in->label, at, before, lim);
    report__preoom_text(in, text, sizeof(text));
    if (text[0] != '\0')
        fprintf(out, "  %-16s %s\n", "", text);
    report__oom_profile_text(in, text, sizeof(text));
    fprintf(out, "  %-16s %s\n", "", text);
    print_site_lines(in->kill.sites, in->kill.nsites, in->kill.sites_total,
                     "                   ", out);
    if (in->gsites.n > 0) {
        char span[256];

        gsites_span(&in->gsites, span, sizeof(span));
        fprintf(out, "  %-16s grew until then (%s):\n", "", span);
        print_gsite_lines(&in->gsites, "                 ", out);
    }
}

static void
print_ooms(const struct report *r, FILE *out)
{
    size_t shown = 0;

    for (size_t i = 0; i < r->ninsts; i++) {
        const struct report_inst *in = &r->insts[i];

        if (!in->oom)
            continue;
        if (shown++ == 0)
            fprintf(out, "\nOOM kills:\n");
        if (shown <= TEXT_MAX_OOM)
            print_oom(in, out);
    }
    if (shown > TEXT_MAX_OOM)
        fprintf(out, "  ... and %zu more\n", shown - TEXT_MAX_OOM);
}

static void
print_sites(const struct report *r, FILE *out)
{
    bool any = false;

    for (size_t i = 0; i < r->ngroups; i++)
        any = any || r->groups[i].nprofiles > 0;
    if (!any)
        return;
    fprintf(out, "\ntop allocation sites (heap in use at the last "
                 "snapshot):\n");
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct report_group *g = &r->groups[i];
        char why[256], syms[1024];

        report__syms_text(g, syms, sizeof(syms));
        if (g->nsites == 0) {
            report__sites_absent_text(g, why, sizeof(why));
            fprintf(out, "  %s: %s\n", g->id, why);
        } else {
            fprintf(out, "  %s (%s):\n", g->id,
                    g->sites_label && g->sites_label[0] ? g->sites_label
                                                        : "last snapshots");
            print_site_lines(g->sites, g->nsites, g->sites_total, "    ", out);
        }
        if (syms[0] != '\0')
            fprintf(out, "    %s\n", syms);
    }
    any = false;
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct report_group *g = &r->groups[i];

        if (g->npsites == 0 || report__same_sites(g))
            continue;
        if (!any)
            fprintf(out, "\nat the peak (the snapshot with the most heap in "
                         "use):\n");
        any = true;
        fprintf(out, "  %s (%s):\n", g->id,
                g->psites_label ? g->psites_label : "peak snapshots");
        print_site_lines(g->psites, g->npsites, g->psites_total, "    ", out);
    }
}

/* The fits against the work done that grow (docs/report.md, "Against
 * the work done"): what each unit of work costs. */
static void
print_fits(const struct report *r, FILE *out)
{
    size_t shown = 0, more = 0;

    for (size_t g = 0; g < r->ngroups; g++)
        for (size_t i = 0; i < r->groups[g].nwfits; i++) {
            const struct report_wfit *w = &r->groups[g].wfits[i];
            char per[160];

            if (w->fit.trend != TREND_GROWING || w->restart)
                continue;
            if (shown >= TEXT_MAX_FITS) {
                more++;
                continue;
            }
            if (shown++ == 0)
                fprintf(out, "\nper unit of work (growing fits):\n");
            report__fmt_per(w, w->fit.slope, per, sizeof(per));
            fprintf(out, "  %-14s %-28s against %-16s %s%s%s, R\u00b2 %.2f\n",
                    r->groups[g].id, w->series, w->x, per,
                    w->stage ? " in " : "", w->stage ? w->stage : "",
                    w->fit.r2);
        }
    if (more > 0)
        fprintf(out, "  ... and %zu more in summary.json\n", more);
}

/* The stages and actions in one line, then a line per group with
 * restarts (docs/report.md, "Stages and restarts"). */
static void
print_stages(const struct report *r, FILE *out)
{
    size_t shown = 0;

    for (size_t i = 0; i < r->nstages && shown < TEXT_MAX_STAGES; i++) {
        const struct report_stage *s = &r->stages[i];
        char d[64] = "";

        if (shown++ == 0)
            fprintf(out, "\nstages:");
        if (s->action != NULL) {
            fprintf(out, "%s %s %s", shown > 1 ? "," : "", s->action, s->group);
            continue;
        }
        if (s->start_ms >= 0 && s->end_ms >= s->start_ms)
            report__fmt_ms(s->end_ms - s->start_ms, d, sizeof(d));
        /* a stage cut short says by what */
        if (strcmp(s->ended_by, "deadline") == 0 ||
            strcmp(s->ended_by, "cancel") == 0 ||
            strcmp(s->ended_by, "instances") == 0)
            snprintf(d + strlen(d), sizeof(d) - strlen(d), "%sended by %s",
                     d[0] ? ", " : "", s->ended_by);
        fprintf(out, "%s %s%s%s%s", shown > 1 ? "," : "", s->name,
                d[0] ? " (" : "", d, d[0] ? ")" : "");
    }
    if (r->nstages > shown)
        fprintf(out, ", ... %zu more", r->nstages - shown);
    if (shown > 0)
        fputc('\n', out);
}

static void
print_restarts(const struct report *r, FILE *out)
{
    bool any = false;

    for (size_t g = 0; g < r->ngroups; g++) {
        const struct report_group *gr = &r->groups[g];
        char line[512];
        size_t n = 0;

        for (size_t i = 0; i < gr->ninst; i++)
            n += r->insts[gr->inst[i]].nrestarts;
        if (n == 0)
            continue;
        if (!any)
            fprintf(out, "\nrestarts (stop to ready):\n");
        any = true;
        report__restart_line(r, gr, line, sizeof(line));
        fprintf(out, "  %-14s %s\n", gr->id, line);
    }
}

static void
print_notes(const struct report *r, FILE *out)
{
    if (r->notes.n == 0)
        return;
    fprintf(out, "\nmissing or incomplete:\n");
    for (size_t i = 0; i < r->notes.n && i < TEXT_MAX_NOTES; i++)
        fprintf(out, "  - %s\n", r->notes.v[i]);
    if (r->notes.n > TEXT_MAX_NOTES)
        fprintf(out, "  ... and %zu more in summary.json\n",
                r->notes.n - TEXT_MAX_NOTES);
}

void
report_print(const struct report *r, FILE *out)
{
    cleanup_free char *json = path_join(r->run_dir, "summary.json");
    cleanup_free char *html = path_join(r->run_dir, "report.html");

    print_head(r, out);
    print_groups(r, out);
    print_never_connected(r, out);
    print_verdicts(r, out);
    print_rounds(r, out);
    print_ooms(r, out);
    print_sites(r, out);
    print_growing(r, out);
    print_fits(r, out);
    print_stages(r, out);
    print_restarts(r, out);
    print_notes(r, out);
    if (path_exists(html))
        fprintf(out, "\nreport: %s\n", html);
    fprintf(out, "%ssummary: %s\n", path_exists(html) ? "" : "\n", json);
    fflush(out);
}
