/*
 * run_result.c — result.json and the terminal summary of a run.
 *
 * result.json is written last, through a temporary file, so a run folder
 * that has one is a finished run. It holds the composition's identity, the
 * run's timings and outcome, per-group counts of each outcome and, for every
 * instance, its outcome, exit status or signal, timings and memory figures
 * from the monitor (peak, when, final usage, the OOM kill time and the last
 * usage before it), and whether it ever connected to the sync service (a
 * black-box program usually does not).
 */
#include "run/run_int.h"

#include "ty_json.h"
#include "ty_units.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
run__exit_status(const struct run *r)
{
    if (r->lost)
        return EXIT_UNAVAILABLE;
    if (r->failed.code != 0)
        return EXIT_SOFTWARE;
    if (r->canceled)
        return EXIT_CANCELED;
    return run__succeeded(r) ? 0 : 1;
}

bool
run__succeeded(const struct run *r)
{
    if (r->lost || r->failed.code != 0 || r->canceled || r->n == 0)
        return false;
    for (size_t i = 0; i < r->n; i++)
        if (r->insts[i].outcome != OUTCOME_SUCCESS)
            return false;
    return true;
}

/* The pre-OOM snapshot requests: null when the instance was never
 * asked. */
static void
add_pre_oom(cJSON *m, const struct monitor_pre_oom *p)
{
    cJSON *o;

    if (p->requests == 0) {
        cJSON_AddNullToObject(m, "pre_oom");
        return;
    }
    o = cJSON_AddObjectToObject(m, "pre_oom");
    ty__json_count(o, "requests", p->requests);
    ty__json_count(o, "first_ms", p->first_ms);
    ty__json_count(o, "last_ms", p->last_ms);
    ty__json_count(o, "usage_bytes", p->usage);
    ty__json_count(o, "limit_bytes", p->limit);
    cJSON_AddStringToObject(o, "via",
                            p->via == MONITOR_VIA_SYNC ? "sync" : "signal");
}

static void
add_memory(cJSON *o, const struct run_inst *in)
{
    const struct monitor_stats *st = &in->mstats;
    cJSON *m;

    if (!in->has_mstats) {
        cJSON_AddNullToObject(o, "memory");
        return;
    }
    m = cJSON_AddObjectToObject(o, "memory");
    ty__json_count(m, "peak_bytes", st->peak);
    ty__json_count(m, "peak_at_ms", st->peak >= 0 ? st->peak_t_ms : -1);
    ty__json_count(m, "final_bytes", st->final);
    ty__json_count(m, "limit_bytes", st->limit);
    cJSON_AddNumberToObject(m, "samples", (double)st->samples);
    cJSON_AddBoolToObject(m, "oom_kill", st->oom);
    ty__json_count(m, "oom_at_ms", st->oom ? st->oom_t_ms : -1);
    ty__json_count(m, "usage_before_oom_bytes",
                   st->oom ? st->usage_before_oom : -1);
    add_pre_oom(m, &st->pre_oom);
}

static const char *
action_name(enum composition_stage_kind k)
{
    switch (k) {
    case STAGE_RESTART:
        return "restart";
    case STAGE_PAUSE:
        return "pause";
    case STAGE_UNPAUSE:
        return "unpause";
    case STAGE_STOP:
        return "stop";
    case STAGE_RUN:
        break;
    }
    return "stage";
}

/* The name of the stage that ran last before entry (the one a restart
 * came after), or NULL. */
static const char *
stage_before(const struct composition *c, size_t entry)
{
    for (size_t i = entry; i-- > 0;)
        if (c->stages[i].kind == STAGE_RUN)
            return c->stages[i].name;
    return NULL;
}

static double
secs(int64_t from_ms, int64_t to_ms)
{
    return (double)(to_ms - from_ms) / 1000.0;
}

static void
add_restarts(cJSON *o, const struct run *r, const struct run_inst *in)
{
    cJSON *arr;

    ty__json_count(o, "ready_ms", in->ready_ms);
    ty__json_count(o, "ready_unix_ms", in->ready_unix_ms);
    ty__json_string(o, "ready_by", run__ready_by_name(in->ready_by));
    if (r->comp->nstages == 0)
        return;
    arr = cJSON_AddArrayToObject(o, "restarts");
    for (size_t k = 0; k < in->nrestarts; k++) {
        const struct run_restart *rs = &in->restarts[k];
        cJSON *e = cJSON_CreateObject();

        ty__json_string(e, "stage", stage_before(r->comp, rs->action));
        cJSON_AddNumberToObject(e, "action_index", (double)rs->action);
        ty__json_count(e, "stop_ms", rs->stop_ms);
        ty__json_count(e, "stop_unix_ms", rs->stop_unix_ms);
        ty__json_count(e, "exit_ms", rs->exit_ms);
        ty__json_count(e, "start_ms", rs->start_ms);
        ty__json_count(e, "ready_ms", rs->ready_ms);
        ty__json_count(e, "ready_unix_ms", rs->ready_unix_ms);
        if (rs->ready_ms >= 0)
            cJSON_AddNumberToObject(e, "seconds",
                                    secs(rs->stop_ms, rs->ready_ms));
        else
            cJSON_AddNullToObject(e, "seconds");
        if (rs->exit_ms >= 0)
            cJSON_AddNumberToObject(e, "down_seconds",
                                    secs(rs->stop_ms, rs->exit_ms));
        else
            cJSON_AddNullToObject(e, "down_seconds");
        ty__json_string(e, "ready_by", run__ready_by_name(rs->by));
        cJSON_AddBoolToObject(e, "killed", rs->killed);
        cJSON_AddItemToArray(arr, e);
    }
}

/* The stages and actions that ran, in order. */
static void
add_stages(cJSON *o, const struct run *r)
{
    cJSON *arr;

    if (r->comp->nstages == 0)
        return;
    arr = cJSON_AddArrayToObject(o, "stages");
    for (size_t k = 0; k < r->st.nrec; k++) {
        const struct run_stage_rec *rec = &r->st.rec[k];
        const struct composition_stage *cs = &r->comp->stages[rec->entry];
        cJSON *e = cJSON_CreateObject();

        if (cs->kind == STAGE_RUN) {
            cJSON_AddStringToObject(e, "stage", cs->name);
        } else {
            cJSON_AddStringToObject(e, "action", action_name(cs->kind));
            cJSON_AddStringToObject(e, "group", r->comp->groups[cs->group].id);
        }
        ty__json_count(e, "start_ms", rec->start_ms);
        ty__json_count(e, "end_ms", rec->end_ms);
        ty__json_count(e, "start_unix_ms", rec->start_unix_ms);
        ty__json_count(e, "end_unix_ms", rec->end_unix_ms);
        ty__json_string(e, "ended_by", rec->ended_by);
        cJSON_AddItemToArray(arr, e);
    }
}

static cJSON *
inst_json(const struct run *r, const struct run_inst *in)
{
    cJSON *o = cJSON_CreateObject();
    char how[600];

    cJSON_AddStringToObject(o, "group", r->comp->groups[in->group].id);
    cJSON_AddNumberToObject(o, "index", in->group_index);
    cJSON_AddNumberToObject(o, "global_index", in->index);
    cJSON_AddStringToObject(o, "outcome", outcome_name(in->outcome));
    ty__json_count(o, "exit_status", in->started ? in->status : -1);
    ty__json_count(o, "signal", in->signal ? in->signal : -1);
    cJSON_AddBoolToObject(o, "oom_killed", in->oom);
    cJSON_AddBoolToObject(o, "connected", in->hello);
    ty__json_time(o, "started", in->start_wall_ns);
    ty__json_time(o, "ended", in->end_wall_ns);
    if (in->start_wall_ns > 0 && in->end_wall_ns > 0)
        cJSON_AddNumberToObject(o, "duration_s",
                                (double)(in->end_wall_ns - in->start_wall_ns) /
                                    1e9);
    run__inst_how(in, how, sizeof(how));
    cJSON_AddStringToObject(o, "how", how);
    ty__json_string(o, "error", in->error);
    add_memory(o, in);
    ty__json_string(o, "monitor_lost", in->mon_lost);
    add_restarts(o, r, in);
    return o;
}

static void
count_outcomes(const struct run *r, size_t g, size_t counts[OUTCOME_COUNT])
{
    memset(counts, 0, sizeof(size_t) * OUTCOME_COUNT);
    for (size_t i = 0; i < r->n; i++)
        if ((size_t)r->insts[i].group == g)
            counts[r->insts[i].outcome]++;
}

static cJSON *
groups_json(const struct run *r)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t g = 0; g < r->comp->ngroups; g++) {
        const struct composition_group *cg = &r->comp->groups[g];
        cJSON *o = cJSON_CreateObject();
        cJSON *oc;
        size_t counts[OUTCOME_COUNT];

        count_outcomes(r, g, counts);
        cJSON_AddStringToObject(o, "id", cg->id);
        cJSON_AddStringToObject(o, "program",
                                cg->image     ? "image"
                                : cg->command ? "command"
                                              : "plan");
        cJSON_AddNumberToObject(o, "instances", (double)cg->instances);
        ty__json_count(o, "memory_limit_bytes",
                       cg->memory_bytes ? (int64_t)cg->memory_bytes : -1);
        ty__json_count(o, "millicpu", cg->millicpu ? cg->millicpu : -1);
        oc = cJSON_AddObjectToObject(o, "outcomes");
        for (int k = OUTCOME_SUCCESS; k < OUTCOME_COUNT; k++)
            cJSON_AddNumberToObject(oc, outcome_name(k), (double)counts[k]);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static const char *
run_outcome(const struct run *r)
{
    if (r->lost)
        return "lost";
    if (r->failed.code != 0)
        return "error";
    if (r->canceled)
        return "canceled";
    return run__succeeded(r) ? "success" : "failure";
}

int
run__write_result(const struct run *r, struct err *err)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *insts;
    cleanup_free char *json = NULL;
    cleanup_free char *path = path_join(r->run_dir, "result.json");

    cJSON_AddStringToObject(o, "run_id", r->run_id);
    cJSON_AddStringToObject(o, "composition", r->comp->path);
    cJSON_AddStringToObject(o, "name", r->comp->name);
    ty__json_string(o, "plan", r->comp->plan);
    cJSON_AddStringToObject(o, "case", run__test_case(r->comp));
    cJSON_AddStringToObject(o, "runner", r->comp->runner);
    cJSON_AddStringToObject(o, "binary", r->binary ? r->binary : "");
    ty__json_string(o, "image", r->image[0] != '\0' ? r->image : NULL);
    ty__json_time(o, "started", r->start_wall_ns);
    ty__json_time(o, "ended", r->end_wall_ns);
    cJSON_AddNumberToObject(o, "duration_s",
                            (double)(r->end_wall_ns - r->start_wall_ns) / 1e9);
    cJSON_AddStringToObject(o, "outcome", run_outcome(r));
    cJSON_AddBoolToObject(o, "deadline_hit", r->deadline_hit);
    cJSON_AddNumberToObject(o, "exit_status", run__exit_status(r));
    if (r->lost)
        cJSON_AddStringToObject(o, "engine_lost", r->lost_msg);
    if (r->failed.code != 0)
        cJSON_AddStringToObject(o, "error", r->failed.msg);
    cJSON_AddItemToObject(o, "groups", groups_json(r));
    add_stages(o, r);
    insts = cJSON_AddArrayToObject(o, "instances");
    for (size_t i = 0; i < r->n; i++)
        cJSON_AddItemToArray(insts, inst_json(r, &r->insts[i]));
    json = cJSON_Print(o);
    cJSON_Delete(o);
    return file_write_atomic(path, json, strlen(json), err);
}

static void
print_groups(const struct run *r)
{
    printf("%-14s %5s %7s %7s %5s %4s %7s %8s%s\n", "group", "inst", "success",
           "failure", "crash", "oom", "timeout", "canceled",
           r->lost ? "  lost" : "");
    for (size_t g = 0; g < r->comp->ngroups; g++) {
        const struct composition_group *cg = &r->comp->groups[g];
        size_t c[OUTCOME_COUNT];

        count_outcomes(r, g, c);
        printf("%-14s %5lld %7zu %7zu %5zu %4zu %7zu %8zu", cg->id,
               (long long)cg->instances, c[OUTCOME_SUCCESS], c[OUTCOME_FAILURE],
               c[OUTCOME_CRASH], c[OUTCOME_OOM], c[OUTCOME_TIMEOUT],
               c[OUTCOME_CANCELED]);
        if (r->lost)
            printf(" %5zu", c[OUTCOME_LOST]);
        putchar('\n');
    }
}

/* One line per instance that did not succeed, at most `max` of them. */
static void
print_failures(const struct run *r, size_t max)
{
    size_t shown = 0, total = 0;

    for (size_t i = 0; i < r->n; i++) {
        const struct run_inst *in = &r->insts[i];
        char how[600];

        if (in->outcome == OUTCOME_SUCCESS)
            continue;
        if (total++ >= max)
            continue;
        shown++;
        run__inst_how(in, how, sizeof(how));
        /* how already quotes the error of an instance that never started */
        if (!in->started || in->error == NULL)
            printf("  %s %s\n", in->label, how);
        else
            printf("  %s %s: %s\n", in->label, how, in->error);
    }
    if (total > shown)
        printf("  ... and %zu more (see result.json)\n", total - shown);
}

/* Instances whose memory figures are missing or incomplete. */
static void
print_lost(const struct run *r)
{
    size_t n = 0;

    for (size_t i = 0; i < r->n; i++)
        n += r->insts[i].mon_lost != NULL;
    if (n > 0)
        printf("memory monitor: lost %zu of %zu instances (see "
               "monitor_lost in result.json)\n",
               n, r->n);
}

void
run__print_summary(const struct run *r)
{
    char dur[32];

    ty__format_duration(r->end_wall_ns - r->start_wall_ns, dur, sizeof(dur));
    printf("\nrun %s  %s/%s  %s  %s\n", r->run_id, run__test_plan(r->comp),
           run__test_case(r->comp), r->comp->runner, dur);
    print_groups(r);
    print_failures(r, 20);
    print_lost(r);
    printf("result: %s\n", run_outcome(r));
    printf("outputs: %s\n", r->run_dir);
    fflush(stdout);
}
