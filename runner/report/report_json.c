/*
 * report_json.c — summary.json, the report's figures for programs. Its
 * shape is documented member by member in docs/report.md ("summary.json");
 * a change here is a change there. Unknown figures are null, never -1.
 */
#include "report/report_int.h"

#include "ty_json.h"

#include <math.h>
#include <string.h>

#define SUMMARY_VERSION 1

/* Rounded to 4 significant decimals, so the file reads well. */
static void
ratio(cJSON *o, const char *key, double v)
{
    cJSON_AddNumberToObject(o, key, round(v * 10000) / 10000);
}

cJSON *
report__fit_json(const struct report_fit *f)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "rounds", (double)f->n);
    if (f->n == 0) {
        cJSON_AddNullToObject(o, "bytes_per_round");
        cJSON_AddNullToObject(o, "intercept_bytes");
        cJSON_AddNullToObject(o, "r2");
        cJSON_AddNullToObject(o, "mean_bytes");
    } else {
        cJSON_AddNumberToObject(o, "bytes_per_round", round(f->slope));
        cJSON_AddNumberToObject(o, "intercept_bytes", round(f->intercept));
        ratio(o, "r2", f->r2);
        cJSON_AddNumberToObject(o, "mean_bytes", round(f->mean));
    }
    cJSON_AddStringToObject(o, "trend", report__trend_name(f->trend));
    return o;
}

static cJSON *
growth_json(const struct report_growth *g)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddItemToObject(o, "heap_inuse", report__fit_json(&g->heap));
    cJSON_AddItemToObject(o, "rss", report__fit_json(&g->rss));
    cJSON_AddItemToObject(o, "cgroup", report__fit_json(&g->cgroup));
    return o;
}

static cJSON *
verdict_json(const struct report_verdict *v)
{
    cJSON *o = cJSON_CreateObject();
    bool fitted = v->basis != NULL;

    cJSON_AddStringToObject(o, "kind", report__verdict_name(v->kind));
    cJSON_AddStringToObject(o, "text", v->text);
    ty__json_string(o, "basis", v->basis);
    if (fitted) {
        cJSON_AddNumberToObject(o, "bytes_per_round", round(v->rate));
        ratio(o, "r2", v->r2);
    } else {
        cJSON_AddNullToObject(o, "bytes_per_round");
        cJSON_AddNullToObject(o, "r2");
    }
    return o;
}

static cJSON *
rounds_json(const struct report_round *rd, size_t n)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();

        cJSON_AddNumberToObject(o, "round", rd[i].round);
        cJSON_AddNumberToObject(o, "instances", rd[i].ninst);
        ty__json_count(o, "heap_inuse_pre_bytes", rd[i].heap_pre);
        ty__json_count(o, "heap_inuse_post_bytes", rd[i].heap_post);
        ty__json_count(o, "rss_pre_bytes", rd[i].rss_pre);
        ty__json_count(o, "rss_post_bytes", rd[i].rss_post);
        ty__json_count(o, "cgroup_bytes", rd[i].cgroup);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *
sites_json(const struct report_sites *ss)
{
    cJSON *o = cJSON_CreateObject(), *arr;

    ty__json_string(o, "snapshot",
                    ss->label && ss->label[0] ? ss->label : NULL);
    cJSON_AddNumberToObject(o, "instances", (double)ss->ninst);
    ty__json_count(o, "total_inuse_bytes", ss->ninst ? ss->total : -1);
    arr = cJSON_AddArrayToObject(o, "sites");
    for (size_t i = 0; i < ss->n; i++) {
        cJSON *s = cJSON_CreateObject();

        cJSON_AddStringToObject(s, "function", ss->v[i].function);
        ty__json_count(s, "inuse_bytes", ss->v[i].flat);
        ty__json_count(s, "cum_bytes", ss->v[i].cum);
        ratio(s, "share",
              ss->total > 0 ? (double)ss->v[i].flat / (double)ss->total : 0);
        cJSON_AddItemToArray(arr, s);
    }
    return o;
}

static cJSON *
outcomes_json(const struct report *r, const struct report_group *g)
{
    static const char *const names[] = {"success", "failure", "crash",
                                        "oom",     "timeout", "canceled",
                                        "lost",    "unknown"};
    cJSON *o = cJSON_CreateObject();

    for (size_t k = 0; k < ARRAY_LEN(names); k++) {
        int n = 0;

        for (size_t i = 0; i < g->ninst; i++) {
            const char *oc = r->insts[g->inst[i]].outcome;

            n += strcmp(oc ? oc : "unknown", names[k]) == 0;
        }
        cJSON_AddNumberToObject(o, names[k], n);
    }
    return o;
}

static cJSON *
group_json(const struct report *r, const struct report_group *g)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "id", g->id);
    cJSON_AddNumberToObject(o, "instances", (double)g->ninst);
    ty__json_count(o, "memory_limit_bytes", g->limit);
    cJSON_AddItemToObject(o, "outcomes", outcomes_json(r, g));
    ty__json_count(o, "peak_bytes", g->peak);
    ty__json_count(o, "peak_at_ms", g->peak_t_ms);
    ty__json_string(o, "peak_instance", g->peak_inst);
    ty__json_count(o, "final_bytes", g->final);
    cJSON_AddNumberToObject(o, "oom_kills", (double)g->noom);
    cJSON_AddItemToObject(o, "rounds", rounds_json(g->rounds, g->nrounds));
    cJSON_AddItemToObject(o, "growth", growth_json(&g->growth));
    cJSON_AddItemToObject(o, "verdict", verdict_json(&g->growth.verdict));
    cJSON_AddItemToObject(o, "top_sites", sites_json(&g->sites));
    cJSON_AddItemToObject(o, "peak_sites", sites_json(&g->peak_sites));
    return o;
}

static cJSON *
inst_json(const struct report_inst *in)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "label", in->label);
    cJSON_AddStringToObject(o, "group", in->group);
    cJSON_AddNumberToObject(o, "index", in->index);
    ty__json_string(o, "outcome", in->outcome ? in->outcome : "unknown");
    ty__json_string(o, "how", in->how);
    ty__json_string(o, "error", in->error);
    cJSON_AddBoolToObject(o, "started", in->started);
    ty__json_count(o, "memory_limit_bytes", in->limit);
    ty__json_count(o, "peak_bytes", in->peak);
    ty__json_count(o, "peak_at_ms", in->peak_t_ms);
    ty__json_count(o, "final_bytes", in->final);
    cJSON_AddBoolToObject(o, "oom_kill", in->oom);
    ty__json_count(o, "oom_at_ms", in->oom ? in->oom_t_ms : -1);
    ty__json_count(o, "usage_before_oom_bytes", in->oom ? in->before_oom : -1);
    ty__json_string(o, "series", in->series);
    cJSON_AddNumberToObject(o, "samples", (double)in->nsamples);
    cJSON_AddNumberToObject(o, "snapshots", (double)in->nsnaps);
    cJSON_AddItemToObject(o, "rounds", rounds_json(in->rounds, in->nrounds));
    cJSON_AddItemToObject(o, "growth", growth_json(&in->growth));
    cJSON_AddItemToObject(o, "verdict", verdict_json(&in->growth.verdict));
    return o;
}

static cJSON *
barriers_json(const struct report *r)
{
    static const char *const kinds[] = {"start", "end", "other"};
    cJSON *arr = cJSON_CreateArray();

    for (size_t i = 0; i < r->nbars; i++) {
        const struct report_barrier *b = &r->bars[i];
        cJSON *o = cJSON_CreateObject();

        cJSON_AddStringToObject(o, "state", b->state);
        ty__json_count(o, "target", b->target);
        cJSON_AddNumberToObject(o, "t_ms", (double)b->t_ms);
        cJSON_AddStringToObject(o, "result", b->result);
        cJSON_AddStringToObject(o, "kind", kinds[b->kind]);
        ty__json_count(o, "round", b->round);
        ty__json_string(o, "error", b->error);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *
thresholds_json(void)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "min_rounds", REPORT_MIN_ROUNDS);
    cJSON_AddNumberToObject(o, "min_rise_bytes", (double)REPORT_MIN_RISE_BYTES);
    cJSON_AddNumberToObject(o, "min_rise_fraction", REPORT_MIN_RISE_FRACTION);
    cJSON_AddNumberToObject(o, "min_r2", REPORT_MIN_R2);
    return o;
}

static void
run_json(cJSON *o, const struct report *r)
{
    cJSON_AddNumberToObject(o, "version", SUMMARY_VERSION);
    ty__json_string(o, "run_id", r->run_id);
    ty__json_string(o, "plan", r->plan);
    ty__json_string(o, "case", r->case_name);
    ty__json_string(o, "runner", r->runner);
    ty__json_string(o, "outcome", r->outcome ? r->outcome : "unknown");
    cJSON_AddBoolToObject(o, "finished", r->finished);
    cJSON_AddBoolToObject(o, "interrupted", r->interrupted);
    ty__json_string(o, "started", r->started);
    if (r->duration_s >= 0)
        cJSON_AddNumberToObject(o, "duration_s",
                                round(r->duration_s * 1000) / 1000);
    else
        cJSON_AddNullToObject(o, "duration_s");
    cJSON_AddItemToObject(o, "thresholds", thresholds_json());
}

cJSON *
report__json(const struct report *r)
{
    cJSON *o = cJSON_CreateObject(), *a;

    run_json(o, r);
    a = cJSON_AddArrayToObject(o, "rounds");
    for (size_t i = 0; i < r->nspans; i++) {
        cJSON *s = cJSON_CreateObject();

        cJSON_AddNumberToObject(s, "round", r->spans[i].round);
        ty__json_count(s, "start_ms", r->spans[i].start_ms);
        ty__json_count(s, "end_ms", r->spans[i].end_ms);
        cJSON_AddBoolToObject(s, "failed", r->spans[i].failed);
        cJSON_AddItemToArray(a, s);
    }
    a = cJSON_AddArrayToObject(o, "groups");
    for (size_t g = 0; g < r->ngroups; g++)
        cJSON_AddItemToArray(a, group_json(r, &r->groups[g]));
    a = cJSON_AddArrayToObject(o, "instances");
    for (size_t i = 0; i < r->ninsts; i++)
        cJSON_AddItemToArray(a, inst_json(&r->insts[i]));
    cJSON_AddItemToObject(o, "barriers", barriers_json(r));
    a = cJSON_AddArrayToObject(o, "missing");
    for (size_t i = 0; i < r->notes.n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(r->notes.v[i]));
    return o;
}
