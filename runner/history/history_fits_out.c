/*
 * history_fits_out.c — the fits' slopes as `testyard history` shows them:
 * per fit key a line with its last slope, the change since the run before
 * and its verdict (the default view, shortened, and `--fits`, with every
 * key's slope per run and the slopes' change points); as JSON, one
 * object per key; as CSV, one row per run and fit.
 */
#include "history/history_int.h"

#include "ty_json.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Keys the default view lists before it says "--fits" for the rest. */
#define SUMMARY_KEYS 12

/* "+8.0 KiB per cycle at run 10, +3 % since run 9, growing". */
static void
key_line(const struct history *h, size_t k, struct strbuf *sb)
{
    const struct history_fit *key = h->fkeys[k].first, *last, *prev;
    size_t li = history__fit_last(h, k, h->nruns), pi;
    char slope[64];

    history__fit_name(key, sb);
    if (li == (size_t)-1) {
        strbuf_adds(sb, ": no slope recorded");
        return;
    }
    last = history__fit_of(&h->runs[li], key);
    history__fmt_slope(key, last->slope, slope, sizeof(slope));
    strbuf_addf(sb, ": %s at run %lld", slope, (long long)h->runs[li].number);
    pi = history__fit_last(h, k, li);
    if (pi != (size_t)-1) {
        prev = history__fit_of(&h->runs[pi], key);
        if (prev->slope != 0) {
            struct history_cp c = {.rel_change = (last->slope - prev->slope) /
                                                 fabs(prev->slope)};
            char change[32];

            history__fmt_change(&c, change, sizeof(change));
            strbuf_addf(sb, ", %s since run %lld", change,
                        (long long)h->runs[pi].number);
        } else {
            strbuf_addf(sb, ", from 0 at run %lld",
                        (long long)h->runs[pi].number);
        }
    }
    strbuf_addf(sb, ", %s", last->verdict ? last->verdict : "no verdict");
    if (!isnan(last->r2))
        strbuf_addf(sb, " (R² %.2f)", last->r2);
}

static void
print_keys(const struct history *h, size_t max, FILE *out)
{
    for (size_t k = 0; k < h->nfkeys && k < max; k++) {
        struct strbuf sb = {0};

        key_line(h, k, &sb);
        fprintf(out, "  %s\n", sb.buf);
        strbuf_release(&sb);
    }
}

static void
print_fpoints(const struct history *h, FILE *out)
{
    fprintf(out,
            "\nslope change points (E-Divisive means, p <= %.3g, min effect "
            "%.3g %%, growing or shrinking on one side):%s\n",
            h->opts.pvalue,
            100 * (h->opts.min_effect > HISTORY_SLOPE_MIN_EFFECT
                       ? h->opts.min_effect
                       : HISTORY_SLOPE_MIN_EFFECT),
            h->nfpoints == 0 ? " none" : "");
    for (size_t i = 0; i < h->nfpoints; i++) {
        struct strbuf sb = {0};

        history__fpoint_line(h, &h->fpoints[i], &sb);
        fprintf(out, "  %s\n", sb.buf);
        strbuf_release(&sb);
    }
}

/* The part of the default view: the first keys, and the slopes' change
 * points when analysed. */
void
history__print_fits_summary(const struct history *h, FILE *out)
{
    if (h->nfkeys == 0)
        return;
    fprintf(out, "\nfits against the work done (last slope, change since "
                 "the run before, verdict):\n");
    print_keys(h, SUMMARY_KEYS, out);
    if (h->nfkeys > SUMMARY_KEYS)
        fprintf(out, "  ... %zu more (testyard history --fits %s)\n",
                h->nfkeys - SUMMARY_KEYS, h->name);
    if (h->analysed)
        print_fpoints(h, out);
}

static void
print_key_runs(const struct history *h, size_t k, FILE *out)
{
    const struct history_fit *key = h->fkeys[k].first;
    struct strbuf sb = {0};

    history__fit_name(key, &sb);
    fprintf(out, "\n%s\n%4s  %-12s %24s %6s  %s\n", sb.buf, "run", "version",
            "slope", "R²", "verdict");
    strbuf_release(&sb);
    for (size_t i = 0; i < h->nruns; i++) {
        const struct history_run *r = &h->runs[i];
        const struct history_fit *f = history__fit_of(r, key);
        char slope[64], r2[16] = "-";

        if (f == NULL)
            continue;
        history__fmt_slope(f, f->slope, slope, sizeof(slope));
        if (!isnan(f->r2))
            snprintf(r2, sizeof(r2), "%.2f", f->r2);
        fprintf(out, "%4lld  %-12.12s %24s %5s  %s\n", (long long)r->number,
                r->version ? r->version : "-", slope, r2,
                f->verdict ? f->verdict : "-");
    }
}

void
history_print_fits(const struct history *h, FILE *out)
{
    fprintf(out, "history of %s: %zu run%s, %zu fit%s against the work done\n",
            h->name, h->nruns, h->nruns == 1 ? "" : "s", h->nfkeys,
            h->nfkeys == 1 ? "" : "s");
    if (h->nfkeys == 0) {
        fprintf(out, "(no run recorded fits: a run without work.csv, "
                     "processes.csv or disk.csv has none)\n");
        return;
    }
    print_keys(h, h->nfkeys, out);
    for (size_t k = 0; k < h->nfkeys; k++)
        print_key_runs(h, k, out);
    if (h->analysed)
        print_fpoints(h, out);
}

/* ---- JSON -------------------------------------------------------------- */

static void
key_json(cJSON *o, const struct history_fit *f)
{
    cJSON_AddStringToObject(o, "group", f->group);
    cJSON_AddStringToObject(o, "series", f->series);
    cJSON_AddStringToObject(o, "x", f->x);
    ty__json_string(o, "stage", f->stage);
}

cJSON *
history__fit_json(const struct history_fit *f)
{
    cJSON *o = cJSON_CreateObject();

    key_json(o, f);
    history__json_number(o, "slope", f->slope);
    history__json_number(o, "r2", f->r2);
    ty__json_string(o, "verdict", f->verdict);
    ty__json_count(o, "instances", f->instances);
    ty__json_count(o, "points", f->points);
    return o;
}

cJSON *
history__fpoint_json(const struct history *h, const struct history_fpoint *p)
{
    cJSON *o = cJSON_CreateObject();
    const struct history_run *r = &h->runs[p->run];

    cJSON_AddNumberToObject(o, "run", (double)r->number);
    ty__json_string(o, "version", r->version);
    history__json_number(o, "change", round(p->cp.rel_change * 10000) / 10000);
    cJSON_AddNumberToObject(o, "p", round(p->cp.pvalue * 10000) / 10000);
    history__json_number(o, "mean_before", p->cp.mean_before);
    history__json_number(o, "mean_after", p->cp.mean_after);
    ty__json_string(o, "verdict_before", p->before);
    ty__json_string(o, "verdict_after", p->after);
    return o;
}

static void
last_json(const struct history *h, size_t k, cJSON *o)
{
    const struct history_fit *key = h->fkeys[k].first, *last = NULL;
    size_t li = history__fit_last(h, k, h->nruns), pi = (size_t)-1;
    double prev = NAN;

    if (li != (size_t)-1) {
        last = history__fit_of(&h->runs[li], key);
        pi = history__fit_last(h, k, li);
    }
    if (pi != (size_t)-1)
        prev = history__fit_of(&h->runs[pi], key)->slope;
    history__json_number(o, "slope", last ? last->slope : NAN);
    history__json_number(o, "r2", last ? last->r2 : NAN);
    ty__json_string(o, "verdict", last ? last->verdict : NULL);
    ty__json_count(o, "run", last ? h->runs[li].number : -1);
    history__json_number(o, "previous_slope", prev);
    history__json_number(
        o, "change",
        last && !isnan(prev) && prev != 0
            ? round((last->slope - prev) / fabs(prev) * 10000) / 10000
            : NAN);
}

cJSON *
history_fits_json(const struct history *h)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t k = 0; k < h->nfkeys; k++) {
        const struct history_fit *key = h->fkeys[k].first;
        cJSON *o = cJSON_CreateObject(), *runs, *cps;

        key_json(o, key);
        last_json(h, k, o);
        runs = cJSON_AddArrayToObject(o, "runs");
        for (size_t i = 0; i < h->nruns; i++) {
            const struct history_fit *f = history__fit_of(&h->runs[i], key);
            cJSON *r;

            if (f == NULL)
                continue;
            r = cJSON_CreateObject();
            cJSON_AddNumberToObject(r, "run", (double)h->runs[i].number);
            ty__json_string(r, "version", h->runs[i].version);
            history__json_number(r, "slope", f->slope);
            history__json_number(r, "r2", f->r2);
            ty__json_string(r, "verdict", f->verdict);
            cJSON_AddItemToArray(runs, r);
        }
        cps = cJSON_AddArrayToObject(o, "change_points");
        for (size_t i = 0; i < h->nfpoints; i++)
            if (h->fpoints[i].key == k)
                cJSON_AddItemToArray(cps,
                                     history__fpoint_json(h, &h->fpoints[i]));
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* ---- CSV --------------------------------------------------------------- */

void
history_fits_csv(const struct history *h, FILE *out)
{
    fputs("run,started,version,group,series,x,stage,slope,r2,verdict,"
          "instances,points\n",
          out);
    for (size_t i = 0; i < h->nruns; i++) {
        const struct history_run *r = &h->runs[i];

        for (size_t k = 0; k < r->nfits; k++) {
            const struct history_fit *f = &r->fits[k];
            const char *s[] = {r->started, r->version, f->group,
                               f->series,  f->x,       f->stage};

            fprintf(out, "%lld", (long long)r->number);
            for (size_t j = 0; j < ARRAY_LEN(s); j++) {
                fputc(',', out);
                history__csv_str(out, s[j]);
            }
            history__csv_num(out, f->slope);
            history__csv_num(out, f->r2);
            fputc(',', out);
            history__csv_str(out, f->verdict);
            history__csv_num(out,
                             f->instances < 0 ? NAN : (double)f->instances);
            history__csv_num(out, f->points < 0 ? NAN : (double)f->points);
            fputc('\n', out);
        }
    }
}
