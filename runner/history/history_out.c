/*
 * history_out.c — a name's series as `testyard history` shows it: a table
 * (one line per run and group, the run's columns on its first), then the
 * change points one line each; as JSON, an array of runs, each change
 * point in the run it starts at; as CSV, one row per run and group. The
 * fits' slopes follow the table (history_fits_out.c). The
 * forms its figures, dates and changes are written in serve the charts
 * too (history_int.h).
 */
#include "history/history_int.h"

#include "ty_json.h"
#include "ty_units.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the forms --------------------------------------------------------- */

void
history__fmt_bytes(double v, char *buf, size_t size)
{
    if (isnan(v) || v < 0)
        snprintf(buf, size, "-");
    else
        ty__format_bytes((uint64_t)v, buf, size);
}

void
history__fmt_rate(double v, char *buf, size_t size)
{
    char b[32];

    if (isnan(v)) {
        snprintf(buf, size, "-");
        return;
    }
    ty__format_bytes((uint64_t)fabs(v), b, sizeof(b));
    snprintf(buf, size, "%s%s", v > 0 ? "+" : v < 0 ? "-" : "", b);
}

void
history__fmt_figure(int f, double v, char *buf, size_t size)
{
    if (f == HISTORY_GROWTH)
        history__fmt_rate(v, buf, size);
    else
        history__fmt_bytes(v, buf, size);
}

void
history__fmt_date(const char *t, char *buf, size_t size)
{
    snprintf(buf, size, "%.19s", t ? t : "-");
    if (strlen(buf) > 10 && buf[10] == 'T')
        buf[10] = ' ';
}

void
history__fmt_change(const struct history_cp *cp, char *buf, size_t size)
{
    if (fabs(cp->rel_change) >= 0.1)
        snprintf(buf, size, "%+.0f %%", 100 * cp->rel_change);
    else
        snprintf(buf, size, "%+.1f %%", 100 * cp->rel_change);
}

/* ---- the table ------------------------------------------------------- */

static void
print_group(const struct history_group *g, FILE *out)
{
    char peak[32], final[32], growth[40];

    history__fmt_bytes(g->fig[HISTORY_PEAK], peak, sizeof(peak));
    history__fmt_bytes(g->fig[HISTORY_FINAL], final, sizeof(final));
    history__fmt_rate(g->fig[HISTORY_GROWTH], growth, sizeof(growth));
    fprintf(out, "  %-14s %10s %10s %12s  %s", g->id, peak, final, growth,
            g->verdict ? g->verdict : "-");
    if (g->oom_kills > 0)
        fprintf(out, ", %lld OOM kill%s", (long long)g->oom_kills,
                g->oom_kills == 1 ? "" : "s");
    fputc('\n', out);
}

static void
print_run(const struct history_run *r, FILE *out)
{
    char date[32];

    history__fmt_date(r->started, date, sizeof(date));
    fprintf(out, "%4lld  %-19s  %-12.12s %-12s", (long long)r->number, date,
            r->version ? r->version : "-", r->outcome);
    if (r->ngroups == 0)
        fputc('\n', out);
    for (size_t g = 0; g < r->ngroups; g++) {
        if (g > 0)
            fprintf(out, "%*s", 4 + 2 + 19 + 2 + 13 + 12, "");
        print_group(&r->groups[g], out);
    }
}

void
history__point_line(const struct history *h, const struct history_point *p,
                    struct strbuf *sb)
{
    const struct history_run *r = &h->runs[p->run];
    char change[32], before[40], after[40];

    const char *unit = p->figure == HISTORY_GROWTH ? " a round" : "";

    history__fmt_figure(p->figure, p->cp.mean_before, before, sizeof(before));
    history__fmt_figure(p->figure, p->cp.mean_after, after, sizeof(after));
    if (isinf(p->cp.rel_change)) {
        strbuf_addf(sb, "%s %s: from %s to %s%s at run %lld", p->group,
                    history__figure_names[p->figure], before, after, unit,
                    (long long)r->number);
    } else {
        history__fmt_change(&p->cp, change, sizeof(change));
        strbuf_addf(sb, "%s %s: %s at run %lld", p->group,
                    history__figure_names[p->figure], change,
                    (long long)r->number);
    }
    if (r->version != NULL)
        strbuf_addf(sb, " (commit %.12s)", r->version);
    strbuf_addf(sb, ", p = %.3f", p->cp.pvalue);
    if (!isinf(p->cp.rel_change))
        strbuf_addf(sb, " (mean %s -> %s%s)", before, after, unit);
}

static void
print_point(const struct history *h, const struct history_point *p, FILE *out)
{
    struct strbuf sb = {0};

    history__point_line(h, p, &sb);
    fprintf(out, "  %s\n", sb.buf);
    strbuf_release(&sb);
}

void
history_print(const struct history *h, FILE *out)
{
    const struct history_cp_opts *o = &h->opts;

    fprintf(out, "history of %s: %zu run%s\n", h->name, h->nruns,
            h->nruns == 1 ? "" : "s");
    if (h->nruns > 0)
        fprintf(out, "%4s  %-19s  %-12s %-12s  %-14s %10s %10s %12s  %s\n",
                "run", "started", "version", "outcome", "group", "peak",
                "final", "growth/round", "verdict");
    for (size_t i = 0; i < h->nruns; i++)
        print_run(&h->runs[i], out);
    if (!h->analysed)
        return;
    fprintf(out,
            "\nchange points (E-Divisive means, p <= %.3g, %d permutations, "
            "min effect %.3g %%):%s",
            o->pvalue, o->permutations, 100 * o->min_effect,
            h->npoints == 0 ? " none" : "");
    if (h->nruns < 2 * o->min_size)
        fprintf(out, " (fewer than %zu runs)", 2 * o->min_size);
    fputc('\n', out);
    for (size_t i = 0; i < h->npoints; i++)
        print_point(h, &h->points[i], out);
    history__print_fits_summary(h, out);
}

/* ---- JSON ------------------------------------------------------------ */

void
history__json_number(cJSON *o, const char *key, double v)
{
    if (isnan(v) || isinf(v))
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, v);
}

static cJSON *
group_json(const struct history_run *r, const struct history_group *g)
{
    cJSON *o = cJSON_CreateObject(), *oc, *fits;

    cJSON_AddStringToObject(o, "id", g->id);
    ty__json_count(o, "instances", g->instances);
    for (int f = 0; f < HISTORY_NFIGURES; f++)
        history__json_number(o, history__figure_keys[f], g->fig[f]);
    ty__json_string(o, "verdict", g->verdict);
    ty__json_count(o, "oom_kills", g->oom_kills);
    oc = cJSON_AddObjectToObject(o, "outcomes");
    for (int k = 0; k < HISTORY_NOUTCOMES; k++)
        cJSON_AddNumberToObject(oc, history__outcome_names[k],
                                (double)g->outcomes[k]);
    fits = cJSON_AddArrayToObject(o, "fits");
    for (size_t k = 0; k < r->nfits; k++)
        if (strcmp(r->fits[k].group, g->id) == 0)
            cJSON_AddItemToArray(fits, history__fit_json(&r->fits[k]));
    return o;
}

static cJSON *
point_json(const struct history_point *p)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "group", p->group);
    cJSON_AddStringToObject(o, "figure", history__figure_keys[p->figure]);
    /* rounded as summary.json rounds: 4 decimals, whole bytes */
    history__json_number(o, "change", round(p->cp.rel_change * 10000) / 10000);
    cJSON_AddNumberToObject(o, "p", round(p->cp.pvalue * 10000) / 10000);
    history__json_number(o, "mean_before", round(p->cp.mean_before));
    history__json_number(o, "mean_after", round(p->cp.mean_after));
    return o;
}

/* A slope's change point among the figures' (figure "slope", its key). */
static cJSON *
fpoint_json(const struct history *h, const struct history_fpoint *p)
{
    const struct history_fit *k = h->fkeys[p->key].first;
    cJSON *o = history__fpoint_json(h, p);

    cJSON_DeleteItemFromObjectCaseSensitive(o, "run");
    cJSON_DeleteItemFromObjectCaseSensitive(o, "version");
    cJSON_AddStringToObject(o, "group", k->group);
    cJSON_AddStringToObject(o, "figure", "slope");
    cJSON_AddStringToObject(o, "series", k->series);
    cJSON_AddStringToObject(o, "x", k->x);
    ty__json_string(o, "stage", k->stage);
    return o;
}

static cJSON *
run_json(const struct history *h, size_t i)
{
    const struct history_run *r = &h->runs[i];
    cJSON *o = cJSON_CreateObject(), *a;

    cJSON_AddNumberToObject(o, "run", (double)r->number);
    cJSON_AddStringToObject(o, "name", h->name);
    ty__json_string(o, "schedule", r->schedule);
    ty__json_count(o, "task_id", r->task_id > 0 ? r->task_id : -1);
    ty__json_string(o, "version", r->version);
    ty__json_string(o, "run_id", r->run_id);
    ty__json_string(o, "run_dir", r->run_dir);
    ty__json_string(o, "started", r->started);
    ty__json_string(o, "ended", r->ended);
    history__json_number(o, "duration_s", r->duration_s);
    history__json_number(o, "build_s", r->build_s);
    cJSON_AddStringToObject(o, "outcome", r->outcome);
    a = cJSON_AddArrayToObject(o, "groups");
    for (size_t g = 0; g < r->ngroups; g++)
        cJSON_AddItemToArray(a, group_json(r, &r->groups[g]));
    a = cJSON_AddArrayToObject(o, "change_points");
    for (size_t k = 0; k < h->npoints; k++)
        if (h->points[k].run == i)
            cJSON_AddItemToArray(a, point_json(&h->points[k]));
    for (size_t k = 0; k < h->nfpoints; k++)
        if (h->fpoints[k].run == i)
            cJSON_AddItemToArray(a, fpoint_json(h, &h->fpoints[k]));
    return o;
}

cJSON *
history_json(const struct history *h)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t i = 0; i < h->nruns; i++)
        cJSON_AddItemToArray(a, run_json(h, i));
    return a;
}

/* ---- CSV ------------------------------------------------------------- */

/* A field, quoted when it holds a comma, a quote or a line break. */
void
history__csv_str(FILE *out, const char *s)
{
    if (s == NULL)
        return;
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

void
history__csv_num(FILE *out, double v)
{
    fputc(',', out);
    if (!isnan(v))
        fprintf(out, "%.15g", v);
}

static void
csv_row(FILE *out, const struct history_run *r, const struct history_group *g)
{
    fprintf(out, "%lld,", (long long)r->number);
    history__csv_str(out, r->started);
    fputc(',', out);
    history__csv_str(out, r->version);
    fputc(',', out);
    history__csv_str(out, r->outcome);
    history__csv_num(out, r->duration_s);
    history__csv_num(out, r->build_s);
    fputc(',', out);
    if (g != NULL) {
        history__csv_str(out, g->id);
        for (int f = 0; f < HISTORY_NFIGURES; f++)
            history__csv_num(out, g->fig[f]);
        fputc(',', out);
        history__csv_str(out, g->verdict);
        history__csv_num(out, g->oom_kills < 0 ? NAN : (double)g->oom_kills);
        for (int k = 0; k < HISTORY_NOUTCOMES; k++)
            fprintf(out, ",%lld", (long long)g->outcomes[k]);
    } else {
        fputs(",,,,,", out);
        for (int k = 0; k < HISTORY_NOUTCOMES; k++)
            fputc(',', out);
    }
    fputc('\n', out);
}

void
history_csv(const struct history *h, FILE *out)
{
    fputs("run,started,version,outcome,duration_s,build_s,group", out);
    for (int f = 0; f < HISTORY_NFIGURES; f++)
        fprintf(out, ",%s", history__figure_keys[f]);
    fputs(",verdict,oom_kills", out);
    for (int k = 0; k < HISTORY_NOUTCOMES; k++)
        fprintf(out, ",%s", history__outcome_names[k]);
    fputc('\n', out);
    for (size_t i = 0; i < h->nruns; i++) {
        const struct history_run *r = &h->runs[i];

        if (r->ngroups == 0)
            csv_row(out, r, NULL);
        for (size_t g = 0; g < r->ngroups; g++)
            csv_row(out, r, &r->groups[g]);
    }
}
