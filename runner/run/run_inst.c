/*
 * run_inst.c — the orchestrator's instance table: where each instance's
 * files go, the environment it starts with, and how its outcome is decided.
 *
 * The environment carries Testground's variables (so plans written for
 * Testground's conventions find what they expect) plus testyard's own:
 * the sync endpoint as a URL, the instance's index in its group and in the
 * run, its parameters as JSON (values may contain '=' and '|'), the run's
 * deadline, the number of instances that run the plan (the target of a
 * plan's own barriers when black-box programs run beside it), and the
 * profiling settings from the composition. A black-box group's run.env is
 * merged over all of it, a KEY there replacing the same KEY.
 */
#include "run/run_int.h"

#include "base/strbuf.h"
#include "base/strvec.h"
#include "base/util.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const outcome_names[OUTCOME_COUNT] = {
    [OUTCOME_PENDING] = "pending",   [OUTCOME_SUCCESS] = "success",
    [OUTCOME_FAILURE] = "failure",   [OUTCOME_CRASH] = "crash",
    [OUTCOME_OOM] = "oom",           [OUTCOME_TIMEOUT] = "timeout",
    [OUTCOME_CANCELED] = "canceled", [OUTCOME_LOST] = "lost",
};

/* Variables passed through from the coordinator's own environment. */
static const char *const passthrough[] = {
    "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TZ", "LANG",
};

const char *
outcome_name(enum outcome o)
{
    if (o < 0 || o >= OUTCOME_COUNT)
        return "unknown";
    return outcome_names[o];
}

void
run__insts_init(struct run *r)
{
    const struct composition *c = r->comp;
    size_t k = 0;

    r->n = 0;
    for (size_t g = 0; g < c->ngroups; g++)
        r->n += (size_t)c->groups[g].instances;
    r->insts = xcalloc(r->n, sizeof(*r->insts));
    for (size_t g = 0; g < c->ngroups; g++) {
        for (int64_t j = 0; j < c->groups[g].instances; j++, k++) {
            struct run_inst *in = &r->insts[k];

            in->index = (int)k;
            in->group = (int)g;
            in->group_index = (int)j;
            in->status = -1;
            in->procfd = -1;
            in->label = xasprintf("%s/%d", c->groups[g].id, (int)j);
            in->outdir =
                xasprintf("%s/%s/%d", r->run_dir, c->groups[g].id, (int)j);
            in->tempdir =
                xasprintf("%s/.tmp/%s/%d", r->run_dir, c->groups[g].id, (int)j);
        }
    }
}

void
run__insts_release(struct run *r)
{
    for (size_t i = 0; i < r->n; i++) {
        struct run_inst *in = &r->insts[i];

        run__preoom_unwatch(in);
        free(in->label);
        free(in->outdir);
        free(in->tempdir);
        free(in->error);
        free(in->mon_lost);
        strv_free(in->env);
    }
    free(r->insts);
    r->insts = NULL;
    r->n = 0;
}

const char *
run__test_plan(const struct composition *c)
{
    return c->plan != NULL ? c->plan : c->name;
}

const char *
run__test_case(const struct composition *c)
{
    return c->case_name != NULL ? c->case_name : "default";
}

static void env_add(struct strvec *e, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
env_add(struct strvec *e, const char *key, const char *fmt, ...)
{
    struct strbuf sb;
    va_list ap;

    strbuf_init(&sb);
    strbuf_addf(&sb, "%s=", key);
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    strvec_push_owned(e, strbuf_detach(&sb));
}

/* Testground's TEST_INSTANCE_PARAMS: "k=v|k=v", arrays as JSON. */
static char *
params_testground(const cJSON *params)
{
    struct strbuf sb;
    const cJSON *p;

    strbuf_init(&sb);
    cJSON_ArrayForEach (p, params) {
        if (sb.len > 0)
            strbuf_addc(&sb, '|');
        if (cJSON_IsString(p)) {
            strbuf_addf(&sb, "%s=%s", p->string, p->valuestring);
        } else {
            char *v = cJSON_PrintUnformatted(p);

            strbuf_addf(&sb, "%s=%s", p->string, v ? v : "");
            free(v);
        }
    }
    return strbuf_detach(&sb);
}

static void
env_testground(struct strvec *e, const struct run *r, const struct run_inst *in)
{
    const struct composition *c = r->comp;
    const struct composition_group *g = &c->groups[in->group];
    cleanup_free char *tg = params_testground(g->params);
    char start[40];

    time_rfc3339(r->start_wall_ns, start, sizeof(start));
    env_add(e, "TEST_PLAN", "%s", run__test_plan(c));
    env_add(e, "TEST_CASE", "%s", run__test_case(c));
    env_add(e, "TEST_RUN", "%s", r->run_id);
    env_add(e, "TEST_INSTANCE_COUNT", "%zu", r->n);
    env_add(e, "TEST_GROUP_ID", "%s", g->id);
    env_add(e, "TEST_GROUP_INSTANCE_COUNT", "%lld", (long long)g->instances);
    env_add(e, "TEST_INSTANCE_PARAMS", "%s", tg);
    env_add(e, "TEST_OUTPUTS_PATH", "%s", in->outdir);
    env_add(e, "TEST_TEMP_PATH", "%s", in->tempdir);
    env_add(e, "TEST_START_TIME", "%s", start);
    env_add(e, "TEST_SIDECAR", "false");
    env_add(e, "TEST_DISABLE_METRICS", "false");
    env_add(e, "SYNC_SERVICE_HOST", "%s", r->be->sync_host);
    env_add(e, "SYNC_SERVICE_PORT", "%d", syncsvc_port(r->svc));
}

/* Instances that run the plan rather than their own program. */
static long long
plan_instances(const struct composition *c)
{
    long long n = 0;

    for (size_t i = 0; i < c->ngroups; i++)
        if (!composition_group_blackbox(&c->groups[i]))
            n += c->groups[i].instances;
    return n;
}

static void
env_testyard(struct strvec *e, const struct run *r, const struct run_inst *in)
{
    const struct composition *c = r->comp;
    cleanup_free char *params =
        cJSON_PrintUnformatted(c->groups[in->group].params);
    long long deadline =
        (long long)(r->start_wall_ns / 1000000 + c->timeout_ns / 1000000);

    env_add(e, "TESTYARD_SYNC_URL", "%s", syncsvc_endpoint(r->svc));
    env_add(e, "TESTYARD_SYNC_SECRET", "%s", syncsvc_secret(r->svc));
    if (syncsvc_board_dir(r->svc) != NULL)
        env_add(e, "TESTYARD_SYNC_BOARD", "%s", syncsvc_board_dir(r->svc));
    env_add(e, "TESTYARD_GROUP_INDEX", "%d", in->group_index);
    env_add(e, "TESTYARD_GLOBAL_INDEX", "%d", in->index);
    env_add(e, "TESTYARD_PLAN_INSTANCES", "%lld", plan_instances(c));
    env_add(e, "TESTYARD_PARAMS", "%s", params ? params : "{}");
    env_add(e, "TESTYARD_DEADLINE_MS", "%lld", deadline);
    env_add(e, "TESTYARD_HEAP_RATE", "%llu", (unsigned long long)c->heap_rate);
    env_add(e, "TESTYARD_HEAP_PEAK_STEP", "%llu",
            (unsigned long long)c->heap_peak);
    if (c->heap_profile_ns > 0)
        env_add(e, "TESTYARD_HEAP_PROFILE_INTERVAL", "%lldns",
                (long long)c->heap_profile_ns);
    env_add(e, "TESTYARD_DIAGNOSTICS_INTERVAL", "%lldns",
            (long long)c->diagnostics_ns);
}

char **
run__inst_env(const struct run *r, const struct run_inst *in)
{
    struct strvec e = {0};

    env_testground(&e, r, in);
    env_testyard(&e, r, in);
    env_add(&e, "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
            "/sbin:/bin");
    env_add(&e, "HOME", "%s", in->tempdir);
    for (size_t i = 0; i < ARRAY_LEN(passthrough); i++) {
        const char *v = getenv(passthrough[i]);

        if (v != NULL)
            env_add(&e, passthrough[i], "%s", v);
    }
    for (char **kv = r->comp->groups[in->group].env; kv && *kv; kv++)
        strvec_setenv(&e, *kv);
    return strvec_detach(&e);
}

/* Stopped by the runner (deadline or cancel) and did not finish cleanly
 * on its own before that. */
static bool
finished_cleanly(const struct run_inst *in)
{
    return in->started && in->signal == 0 && in->status == 0 &&
           !in->failure_event && !in->stopped_event;
}

/* Asked to end by the stages (their end, a stop action) and did: exit
 * 0, by SIGTERM, or exit 143 (a shell's report of it), reporting no
 * failure. */
static bool
stopped_cleanly(struct run_inst *in)
{
    bool term =
        in->signal == SIGTERM ||
        (in->signal == 0 && (in->status == 0 || in->status == 128 + SIGTERM));

    if (in->failure_event || in->crash_event)
        return false;
    if (!term && in->signal == SIGKILL && in->error == NULL)
        in->error = xstrdup("did not end within its grace after SIGTERM");
    return term;
}

void
run__inst_decide(struct run_inst *in)
{
    if (in->lost)
        in->outcome = OUTCOME_LOST;
    else if (!in->started)
        in->outcome =
            in->stopped == STOP_CANCEL ? OUTCOME_CANCELED : OUTCOME_FAILURE;
    else if (in->oom)
        in->outcome = OUTCOME_OOM;
    else if (in->runner_failed)
        in->outcome = OUTCOME_FAILURE;
    else if (in->stopped == STOP_STAGES && !finished_cleanly(in))
        in->outcome = stopped_cleanly(in) ? OUTCOME_SUCCESS : OUTCOME_FAILURE;
    else if (in->stopped == STOP_DEADLINE && !finished_cleanly(in))
        in->outcome = OUTCOME_TIMEOUT;
    else if (in->stopped == STOP_CANCEL && !finished_cleanly(in))
        in->outcome = OUTCOME_CANCELED;
    else if (in->signal != 0 || in->crash_event)
        in->outcome = OUTCOME_CRASH;
    else if (in->status != 0 || in->failure_event)
        in->outcome = OUTCOME_FAILURE;
    else
        in->outcome = OUTCOME_SUCCESS;
}

void
run__inst_how(const struct run_inst *in, char *buf, size_t size)
{
    int code = in->signal ? 128 + in->signal : in->status;

    if (in->lost)
        snprintf(buf, size, "lost with its engine (%s)",
                 in->started ? "its end is unknown" : "before it started");
    else if (!in->started)
        snprintf(buf, size, "failed to start (%s)",
                 in->error ? in->error : outcome_name(in->outcome));
    else if (in->signal != 0 && in->outcome == OUTCOME_CRASH)
        snprintf(buf, size, "exited with status %d (%s, %s)", code,
                 outcome_name(in->outcome), strsignal(in->signal));
    else
        snprintf(buf, size, "exited with status %d (%s)", code,
                 outcome_name(in->outcome));
}
