/*
 * report_text.c — the report as a terminal table: one line per group with
 * its memory figures, the growth verdicts, heap in use and RSS per round,
 * OOM kills, the top allocation sites, what is missing, and where the
 * files are. Short enough to read after every run; summary.json and
 * report.html have the rest.
 */
#include "report/report_int.h"

#include <stdio.h>
#include <string.h>

#define TEXT_MAX_ROUNDS 12
#define TEXT_MAX_SITES 5
#define TEXT_MAX_NOTES 10
#define TEXT_MAX_OOM 10

static void
print_head(const struct report *r, FILE *out)
{
    char dur[32] = "-";

    if (r->duration_s >= 0)
        report__fmt_ms(report__i64(r->duration_s * 1000), dur, sizeof(dur));
    fprintf(out, "\nreport %s  %s/%s  %s  %s  %s\n",
            r->run_id ? r->run_id : "(unknown run)", r->plan ? r->plan : "?",
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
print_verdicts(const struct report *r, FILE *out)
{
    fprintf(out, "\ngrowth per round:\n");
    for (size_t i = 0; i < r->ngroups; i++)
        fprintf(out, "  %-14s %s\n", r->groups[i].id,
                r->groups[i].growth.verdict.text);
}

/* A group's two columns: heap in use and RSS after trim, or cgroup
 * usage at the round's end when it has no snapshots. */
static bool
has_heap(const struct report_group *g)
{
    return g->growth.heap.n > 0 || g->growth.rss.n > 0;
}

static void
print_round_line(const struct report *r, int round, FILE *out)
{
    fprintf(out, "  %5d", round);
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct report_group *g = &r->groups[i];
        const struct report_round *rd = report__round_of(g, round);
        char h[32] = "-", s[32] = "-";

        if (rd != NULL && has_heap(g)) {
            report__fmt_bytes(rd->heap_post >= 0 ? rd->heap_post : rd->heap_pre,
                              h, sizeof(h));
            report__fmt_bytes(rd->rss_post >= 0 ? rd->rss_post : rd->rss_pre, s,
                              sizeof(s));
        } else if (rd != NULL) {
            report__fmt_bytes(rd->cgroup, s, sizeof(s));
        }
        fprintf(out, "  %10s %10s", h, s);
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
        fprintf(out, "  %-21.21s", r->groups[i].id);
    fprintf(out, "\n       ");
    for (size_t i = 0; i < r->ngroups; i++)
        fprintf(out, "  %10s %10s", has_heap(&r->groups[i]) ? "heap" : "",
                has_heap(&r->groups[i]) ? "RSS" : "cgroup");
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

static void
print_ooms(const struct report *r, FILE *out)
{
    size_t shown = 0;

    for (size_t i = 0; i < r->ninsts; i++) {
        const struct report_inst *in = &r->insts[i];
        char at[32], before[32], lim[32];

        if (!in->oom)
            continue;
        if (shown++ == 0)
            fprintf(out, "\nOOM kills:\n");
        if (shown > TEXT_MAX_OOM)
            continue;
        report__fmt_ms(in->oom_t_ms, at, sizeof(at));
        report__fmt_bytes(in->before_oom, before, sizeof(before));
        report__fmt_bytes(in->limit, lim, sizeof(lim));
        fprintf(out, "  %-16s killed at %s; last usage before %s (limit %s)\n",
                in->label, at, before, lim);
    }
    if (shown > TEXT_MAX_OOM)
        fprintf(out, "  ... and %zu more\n", shown - TEXT_MAX_OOM);
}

/* One group's sites, at most TEXT_MAX_SITES of them. */
static void
print_group_sites(const char *id, const struct report_sites *ss,
                  const char *none, FILE *out)
{
    fprintf(out, "  %s (%s):\n", id,
            ss->label && ss->label[0] ? ss->label : none);
    for (size_t k = 0; k < ss->n && k < TEXT_MAX_SITES; k++) {
        char b[32];

        report__fmt_bytes(ss->v[k].flat, b, sizeof(b));
        fprintf(out, "    %10s %5.1f%%  %s\n", b,
                ss->total > 0
                    ? 100.0 * (double)ss->v[k].flat / (double)ss->total
                    : 0.0,
                ss->v[k].function);
    }
}

/* The groups' sites at their last snapshots (peak: at their peaks, where
 * those are other profiles), under one heading. */
static void
print_site_tables(const struct report *r, bool peak, FILE *out)
{
    bool any = false;

    for (size_t i = 0; i < r->ngroups; i++) {
        const struct report_group *g = &r->groups[i];
        const struct report_sites *ss = peak ? &g->peak_sites : &g->sites;

        if (ss->n == 0 || (peak && report__same_sites(g)))
            continue;
        if (!any)
            fputs(peak ? "\nat the peak (the snapshot with the most heap "
                         "in use):\n"
                       : "\ntop allocation sites (heap in use at the last "
                         "snapshot):\n",
                  out);
        any = true;
        print_group_sites(g->id, ss, peak ? "peak snapshots" : "last snapshots",
                          out);
    }
}

static void
print_sites(const struct report *r, FILE *out)
{
    print_site_tables(r, false, out);
    print_site_tables(r, true, out);
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
    print_verdicts(r, out);
    print_rounds(r, out);
    print_ooms(r, out);
    print_sites(r, out);
    print_notes(r, out);
    if (path_exists(html))
        fprintf(out, "\nreport: %s\n", html);
    fprintf(out, "%ssummary: %s\n", path_exists(html) ? "" : "\n", json);
    fflush(out);
}
