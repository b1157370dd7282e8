/*
 * report_json.c — summary.json, the report's figures for programs. Its
 * shape is documented member by member in docs/report.md ("summary.json");
 * a change here is a change there. Unknown figures are null, never -1.
 */
#include "report/report_int.h"

#include "ty_json.h"

#include <math.h>
#include <string.h>

/* 2: RSS is the process's own (no longer less the profiler's tables),
 * verdicts have the kind outside_malloc and robust thresholds. */
#define SUMMARY_VERSION 2

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
    cJSON_AddItemToObject(o, "rss_anon", report__fit_json(&g->anon));
    cJSON_AddItemToObject(o, "cgroup", report__fit_json(&g->cgroup));
    cJSON_AddItemToObject(o, "malloc", report__fit_json(&g->malloc));
    cJSON_AddItemToObject(o, "malloc_free", report__fit_json(&g->mfree));
    cJSON_AddItemToObject(o, "outside", report__fit_json(&g->outside));
    cJSON_AddItemToObject(o, "profiler_resident", report__fit_json(&g->own));
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
        ty__json_count(o, "rss_anon_bytes", rd[i].rss_anon);
        ty__json_count(o, "malloc_bytes", rd[i].malloc);
        ty__json_count(o, "malloc_free_bytes", rd[i].mfree);
        ty__json_count(o, "outside_malloc_bytes", rd[i].outside);
        ty__json_count(o, "profiler_resident_bytes", rd[i].own_res);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static void
site_marks(cJSON *s, const struct report_site *x)
{
    ty__json_count(s, "samples", x->samples);
    cJSON_AddBoolToObject(s, "single_sample", x->samples == 1);
    cJSON_AddBoolToObject(s, "testyard", x->testyard);
}

/* Allocation sites, as every list of them is written (a group's top
 * sites, an OOM-killed instance's last profile): share of total. What is
 * said of each site (testyard's own, a single sample) goes here. */
static cJSON *
site_array(const struct report_site *sites, size_t n, int64_t total)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t i = 0; i < n; i++) {
        cJSON *s = cJSON_CreateObject();

        cJSON_AddStringToObject(s, "function", sites[i].function);
        ty__json_count(s, "inuse_bytes", sites[i].flat);
        ty__json_count(s, "cum_bytes", sites[i].cum);
        ratio(s, "share",
              total > 0 ? (double)sites[i].flat / (double)total : 0);
        site_marks(s, &sites[i]);
        cJSON_AddItemToArray(arr, s);
    }
    return arr;
}

static cJSON *
gsites_json(const struct report_gsites *gs)
{
    cJSON *o = cJSON_CreateObject(), *arr;

    ty__json_string(o, "from", gs->from);
    ty__json_string(o, "to", gs->to);
    ty__json_count(o, "rounds", gs->ninst ? gs->rounds : -1);
    cJSON_AddNumberToObject(o, "instances", (double)gs->ninst);
    arr = cJSON_AddArrayToObject(o, "sites");
    for (size_t i = 0; i < gs->n; i++) {
        const struct report_site *x = &gs->v[i];
        cJSON *s = cJSON_CreateObject();

        cJSON_AddStringToObject(s, "function", x->function);
        ty__json_count(s, "growth_bytes", x->growth);
        if (isnan(x->rate))
            cJSON_AddNullToObject(s, "bytes_per_round");
        else
            cJSON_AddNumberToObject(s, "bytes_per_round", round(x->rate));
        ty__json_count(s, "inuse_bytes", x->flat);
        site_marks(s, x);
        cJSON_AddItemToArray(arr, s);
    }
    return o;
}

static cJSON *
sites_json(const struct report_group *g)
{
    cJSON *o = cJSON_CreateObject();

    ty__json_string(o, "snapshot",
                    g->sites_label && g->sites_label[0] ? g->sites_label
                                                        : NULL);
    cJSON_AddNumberToObject(o, "instances", (double)g->sites_ninst);
    ty__json_count(o, "total_inuse_bytes",
                   g->sites_ninst ? g->sites_total : -1);
    cJSON_AddNumberToObject(o, "older_instances", (double)g->sites_older);
    cJSON_AddNumberToObject(o, "profiles", (double)g->nprofiles);
    cJSON_AddNumberToObject(o, "profiles_zero", (double)g->nprofiles_zero);
    cJSON_AddItemToObject(o, "sites",
                          site_array(g->sites, g->nsites, g->sites_total));
    return o;
}

/* The same at each instance's peak snapshot. */
static cJSON *
peak_sites_json(const struct report_group *g)
{
    cJSON *o = cJSON_CreateObject();

    ty__json_string(o, "snapshot", g->psites_label);
    cJSON_AddNumberToObject(o, "instances", (double)g->psites_ninst);
    ty__json_count(o, "total_inuse_bytes",
                   g->psites_ninst ? g->psites_total : -1);
    cJSON_AddItemToObject(o, "sites",
                          site_array(g->psites, g->npsites, g->psites_total));
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
    cJSON_AddItemToObject(o, "top_sites", sites_json(g));
    cJSON_AddItemToObject(o, "peak_sites", peak_sites_json(g));
    cJSON_AddItemToObject(o, "growing_sites", gsites_json(&g->gsites));
    cJSON_AddItemToObject(o, "symbols", report__syms_json(g));
    cJSON_AddItemToObject(o, "fits", report__wfits_json(g));
    cJSON_AddItemToObject(o, "restarts", report__restarts_group_json(r, g));
    return o;
}

/* Every heap snapshot of the instance, in time order. */
static cJSON *
snaps_json(const struct report_inst *in)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t i = 0; i < in->nsnaps; i++) {
        const struct report_snap *s = &in->snaps[i];
        cJSON *o = cJSON_CreateObject();

        cJSON_AddStringToObject(o, "label", s->label);
        cJSON_AddStringToObject(o, "trigger", report__trigger_name(s->trigger));
        ty__json_count(o, "round", s->round);
        ty__json_count(o, "at_ms", s->t_ms);
        ty__json_count(o, "inuse_bytes", s->inuse);
        ty__json_count(o, "cgroup_bytes", s->cgroup);
        cJSON_AddBoolToObject(o, "profile", s->pb_path != NULL);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *
preoom_json(const struct report_inst *in)
{
    const struct report_preoom *p = &in->preoom;
    cJSON *o;

    if (p->requests == 0)
        return cJSON_CreateNull();
    o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "requests", (double)p->requests);
    ty__json_count(o, "first_ms", p->first_ms);
    ty__json_count(o, "last_ms", p->last_ms);
    ty__json_count(o, "usage_bytes", p->usage);
    ty__json_count(o, "limit_bytes", p->limit);
    ty__json_string(o, "via", p->via[0] ? p->via : NULL);
    return o;
}

/* What an OOM-killed instance left (report_oom.c); null for the rest. */
static cJSON *
oom_json(const struct report_inst *in)
{
    const struct report_oom *k = &in->kill;
    cJSON *o, *p;
    char text[512];

    if (!in->oom)
        return cJSON_CreateNull();
    o = cJSON_CreateObject();
    ty__json_count(o, "at_ms", in->oom_t_ms);
    ty__json_count(o, "usage_before_bytes", in->before_oom);
    ty__json_count(o, "limit_bytes", in->limit);
    report__oom_profile_text(in, text, sizeof(text));
    cJSON_AddStringToObject(o, "text", text);
    if (k->last == NULL) {
        cJSON_AddNullToObject(o, "last_profile");
    } else {
        p = cJSON_AddObjectToObject(o, "last_profile");
        cJSON_AddStringToObject(p, "label", k->last->label);
        cJSON_AddStringToObject(p, "trigger",
                                report__trigger_name(k->last->trigger));
        ty__json_count(p, "at_ms", k->last->t_ms);
        ty__json_count(p, "before_kill_ms", k->before_kill_ms);
        ty__json_count(p, "usage_bytes", k->usage);
        ty__json_count(p, "limit_bytes", k->limit);
        ty__json_count(p, "inuse_bytes", k->last->inuse);
    }
    cJSON_AddItemToObject(o, "sites",
                          site_array(k->sites, k->nsites, k->sites_total));
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
    cJSON_AddItemToObject(o, "heap_snapshots", snaps_json(in));
    cJSON_AddItemToObject(o, "pre_oom", preoom_json(in));
    cJSON_AddItemToObject(o, "oom", oom_json(in));
    cJSON_AddItemToObject(o, "rounds", rounds_json(in->rounds, in->nrounds));
    cJSON_AddItemToObject(o, "growth", growth_json(&in->growth));
    cJSON_AddItemToObject(o, "verdict", verdict_json(&in->growth.verdict));
    cJSON_AddItemToObject(o, "growing_sites", gsites_json(&in->gsites));
    ty__json_count(o, "ready_ms", in->ready_ms);
    ty__json_string(o, "ready_by", in->ready_by[0] ? in->ready_by : NULL);
    cJSON_AddItemToObject(o, "restarts", report__restarts_inst_json(in));
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
    cJSON_AddNumberToObject(o, "hold_rounds", REPORT_HOLD_ROUNDS);
    return o;
}

static void
run_json(cJSON *o, const struct report *r)
{
    cJSON_AddNumberToObject(o, "version", SUMMARY_VERSION);
    ty__json_string(o, "run_id", r->run_id);
    ty__json_string(o, "name", r->name);
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
    cJSON_AddItemToObject(o, "stages", report__stages_json(r));
    a = cJSON_AddArrayToObject(o, "groups");
    for (size_t g = 0; g < r->ngroups; g++)
        cJSON_AddItemToArray(a, group_json(r, &r->groups[g]));
    a = cJSON_AddArrayToObject(o, "instances");
    for (size_t i = 0; i < r->ninsts; i++)
        cJSON_AddItemToArray(a, inst_json(&r->insts[i]));
    a = cJSON_AddArrayToObject(o, "never_connected");
    for (size_t i = 0; i < r->ninsts; i++)
        if (r->insts[i].never_connected)
            cJSON_AddItemToArray(a, cJSON_CreateString(r->insts[i].label));
    cJSON_AddItemToObject(o, "barriers", barriers_json(r));
    a = cJSON_AddArrayToObject(o, "missing");
    for (size_t i = 0; i < r->notes.n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(r->notes.v[i]));
    return o;
}
