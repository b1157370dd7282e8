/*
 * ty_main.c — the plan's entry point, its events and how it records failure.
 *
 * ty_main builds the handle from the environment, connects to the
 * coordinator, installs a crash handler and the SIGTERM one (ty_stop.c),
 * runs the case named by TEST_CASE
 * between the metrics' and the heap profiler's init and fini hooks, and
 * records how it ended. Events are JSON lines on stdout (the runner keeps
 * stdout as run.out) shaped after Testground's run.out events:
 *
 *   {"ts":"2026-11-29T18:45:29.123Z","group_id":"g","run_id":"r",
 *    "event":{"type":"failure","group":"g","error":"..."}}
 *
 * and, when connected, also go to the sync service (the "event" object
 * only). The crash handler may only use async-signal-safe calls, so its line
 * is prepared at install time and finished with a timestamp from
 * ty_time.c's formatter, which calls neither gmtime nor stdio; the runner
 * decides the outcome from the exit status anyway.
 *
 * Errors: ty__seterr keeps the message both on the handle and per thread,
 * so a thread reading ty_errmsg after its own failed call sees its own
 * message even when other threads fail at the same time.
 */
#include "ty_conn.h"

#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CRASH_MID_MAX 1024
#define CRASH_STACK (64 * 1024)

static __thread uint64_t tl_serial;
static __thread char tl_msg[512];

/* The stamp of event lines (ty_time.c formats it). */
void
ty__rfc3339_now(char *buf, size_t size)
{
    ty__format_rfc3339(ty__wall_ns(), buf, size);
}

/* ---- errors ------------------------------------------------------------ */

int
ty__seterr(struct ty *ty, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(tl_msg, sizeof(tl_msg), fmt, ap);
    va_end(ap);
    tl_serial = ty->serial;
    pthread_mutex_lock(&ty->lock);
    snprintf(ty->errmsg, sizeof(ty->errmsg), "%s", tl_msg);
    pthread_mutex_unlock(&ty->lock);
    return code > 0 ? -code : code;
}

const char *
ty_errmsg(const struct ty *ty)
{
    /* The thread's own last message when it was about this handle; the
     * handle's copy (another thread's, or "") otherwise. */
    return tl_serial == ty->serial ? tl_msg : ty->errmsg;
}

int
ty_fail(struct ty *ty, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&s, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&ty->lock);
    free(ty->fail_reason);
    ty->fail_reason = n >= 0 ? s : NULL;
    pthread_mutex_unlock(&ty->lock);
    return -1;
}

/* ---- events ------------------------------------------------------------ */

static cJSON *
event_new(const char *type)
{
    cJSON *ev = cJSON_CreateObject();

    cJSON_AddStringToObject(ev, "type", type);
    return ev;
}

static void
print_line(const char *run_id, const char *group_id, const cJSON *ev)
{
    cJSON *line = cJSON_CreateObject();
    char ts[40], *s;

    ty__rfc3339_now(ts, sizeof(ts));
    cJSON_AddStringToObject(line, "ts", ts);
    cJSON_AddStringToObject(line, "group_id", group_id);
    cJSON_AddStringToObject(line, "run_id", run_id);
    cJSON_AddItemReferenceToObject(line, "event", (cJSON *)ev);
    s = cJSON_PrintUnformatted(line);
    cJSON_Delete(line);
    if (s == NULL)
        return;
    flockfile(stdout);
    fputs(s, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    funlockfile(stdout);
    free(s);
}

void
ty__event(struct ty *ty, cJSON *ev)
{
    if (ev == NULL)
        return;
    print_line(ty->run_id, ty->group_id, ev);
    ty__sync_event(ty, ev);
    cJSON_Delete(ev);
}

void
ty_message(struct ty *ty, const char *fmt, ...)
{
    cJSON *ev = event_new("message");
    va_list ap;
    char *s = NULL;

    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    cJSON_AddStringToObject(ev, "message", s ? s : "");
    free(s);
    ty__event(ty, ev);
}

static void
stage_event(struct ty *ty, const char *type, const char *stage)
{
    cJSON *ev = event_new(type);

    cJSON_AddStringToObject(ev, "name", stage ? stage : "");
    cJSON_AddStringToObject(ev, "group", ty->group_id);
    ty__event(ty, ev);
}

void
ty_stage_start(struct ty *ty, const char *stage)
{
    stage_event(ty, "stage_start", stage);
}

void
ty_stage_end(struct ty *ty, const char *stage)
{
    stage_event(ty, "stage_end", stage);
}

void
ty_ready(struct ty *ty)
{
    if (ty == NULL || __atomic_exchange_n(&ty->ready, 1, __ATOMIC_ACQ_REL))
        return;
    ty__event(ty, event_new("ready"));
}

static void
event_start(struct ty *ty)
{
    cJSON *ev = event_new("start");
    cJSON *env = cJSON_AddObjectToObject(ev, "runenv");

    cJSON_AddStringToObject(env, "plan", ty->plan);
    cJSON_AddStringToObject(env, "case", ty->case_name);
    cJSON_AddStringToObject(env, "run", ty->run_id);
    cJSON_AddStringToObject(env, "group", ty->group_id);
    cJSON_AddNumberToObject(env, "group_index", ty->group_index);
    cJSON_AddNumberToObject(env, "global_index", ty->global_index);
    cJSON_AddNumberToObject(env, "instances", ty->instance_count);
    cJSON_AddNumberToObject(env, "group_instances", ty->group_instance_count);
    cJSON_AddItemToObject(env, "params", cJSON_Duplicate(ty->params, true));
    ty__event(ty, ev);
}

static void
event_outcome(struct ty *ty, const char *error)
{
    cJSON *ev = event_new(error ? "failure" : "success");

    cJSON_AddStringToObject(ev, "group", ty->group_id);
    if (error != NULL)
        cJSON_AddStringToObject(ev, "error", error);
    /* It ended because the coordinator asked (ty_stopping): a cancel or
     * a deadline still reads as such, not as a case that finished. */
    if (ty__stop_asked())
        cJSON_AddBoolToObject(ev, "stopped", true);
    ty__event(ty, ev);
}

/* ---- crashes ----------------------------------------------------------- */

static char crash_mid[CRASH_MID_MAX];
static size_t crash_mid_len;
static char crash_stack[CRASH_STACK];

static const struct {
    int sig;
    const char *name;
} crash_sigs[] = {{SIGSEGV, "SIGSEGV"},
                  {SIGBUS, "SIGBUS"},
                  {SIGFPE, "SIGFPE"},
                  {SIGILL, "SIGILL"},
                  {SIGABRT, "SIGABRT"}};

static size_t
put_str(char *out, const char *s)
{
    size_t n = strlen(s);

    memcpy(out, s, n);
    return n;
}

static void
crash_handler(int sig)
{
    static const char tail[] = ")\",\"stacktrace\":\"see run.err\"}}\n";
    char buf[CRASH_MID_MAX + 128];
    const char *name = "?";
    void *frames[64];
    char stamp[TY_RFC3339_LEN + 1];
    size_t n;
    int nf;

    ty__format_rfc3339(ty__wall_ns(), stamp, sizeof(stamp));
    for (size_t i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
        if (crash_sigs[i].sig == sig)
            name = crash_sigs[i].name;
    n = put_str(buf, "{\"ts\":\"");
    n += put_str(buf + n, stamp);
    memcpy(buf + n, crash_mid, crash_mid_len);
    n += crash_mid_len;
    n += ty__put_digits(buf + n, sig, sig >= 10 ? 2 : 1);
    n += put_str(buf + n, " (");
    n += put_str(buf + n, name);
    memcpy(buf + n, tail, sizeof(tail) - 1);
    n += sizeof(tail) - 1;
    if (write(STDOUT_FILENO, buf, n) < 0)
        (void)0; /* nothing more can be done from here */
    nf = backtrace(frames, 64);
    backtrace_symbols_fd(frames, nf, STDERR_FILENO);
    raise(sig);
}

/* The part of the crash line between the timestamp and the signal number. */
static void
crash_prepare(const struct ty *ty)
{
    cJSON *g = cJSON_CreateString(ty->group_id);
    cJSON *r = cJSON_CreateString(ty->run_id);
    char *gs = cJSON_PrintUnformatted(g), *rs = cJSON_PrintUnformatted(r);
    int n = -1;

    if (gs && rs && strlen(gs) < 300 && strlen(rs) < 300)
        n = snprintf(crash_mid, sizeof(crash_mid),
                     "\",\"group_id\":%s,\"run_id\":%s,\"event\":{\"type\":"
                     "\"crash\",\"group\":%s,\"error\":\"signal ",
                     gs, rs, gs);
    if (n < 0 || (size_t)n >= sizeof(crash_mid))
        n = snprintf(crash_mid, sizeof(crash_mid),
                     "\",\"event\":{\"type\":\"crash\",\"error\":\"signal ");
    crash_mid_len = (size_t)n;
    free(gs);
    free(rs);
    cJSON_Delete(g);
    cJSON_Delete(r);
}

static void
crash_install(const struct ty *ty)
{
    stack_t ss = {.ss_sp = crash_stack, .ss_size = sizeof(crash_stack)};
    struct sigaction sa;
    void *frame;

    crash_prepare(ty);
    backtrace(&frame, 1); /* loads libgcc now, not in the handler */
    sigaltstack(&ss, NULL);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = crash_handler;
    sa.sa_flags = SA_RESETHAND | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
        sigaction(crash_sigs[i].sig, &sa, NULL);
}

/* ---- the entry point --------------------------------------------------- */

static const struct ty_case *
find_case(const struct ty_case *cases, const char *name)
{
    for (const struct ty_case *c = cases; c && c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

static void
fail_unknown_case(struct ty *ty, const struct ty_case *cases)
{
    char msg[1024];
    size_t n;

    if (ty->case_name[0] == '\0')
        n = (size_t)snprintf(msg, sizeof(msg),
                             "TEST_CASE is not set; known "
                             "cases:");
    else
        n = (size_t)snprintf(msg, sizeof(msg),
                             "unknown test case \"%.200s\";"
                             " known cases:",
                             ty->case_name);
    for (const struct ty_case *c = cases; c && c->name && n < sizeof(msg); c++)
        n += (size_t)snprintf(msg + n, sizeof(msg) - n, "%s %s",
                              c == cases ? "" : ",", c->name);
    event_outcome(ty, msg);
}

static int
run_case(struct ty *ty, const struct ty_case *c)
{
    char fallback[64], *reason;
    int rc;

    ty__metrics_init(ty);
    ty__heapctl_init(ty);
    rc = c->run(ty);
    ty__heapctl_fini(ty);
    ty__metrics_fini(ty);
    if (rc == 0) {
        event_outcome(ty, NULL);
        return 0;
    }
    snprintf(fallback, sizeof(fallback), "test case returned %d", rc);
    pthread_mutex_lock(&ty->lock);
    reason = ty->fail_reason ? strdup(ty->fail_reason) : NULL;
    pthread_mutex_unlock(&ty->lock);
    event_outcome(ty, reason ? reason : fallback);
    free(reason);
    return 1;
}

static int
run(struct ty *ty, const struct ty_case *cases)
{
    const struct ty_case *c;
    int rc = ty__sync_connect(ty);
    char why[sizeof(ty->errmsg)];

    snprintf(why, sizeof(why), "%s", ty_errmsg(ty));
    event_start(ty);
    if (rc < 0) {
        event_outcome(ty, why);
        return 1;
    }
    c = find_case(cases, ty->case_name);
    if (c == NULL) {
        fail_unknown_case(ty, cases);
        return 1;
    }
    return run_case(ty, c);
}

int
ty_main(int argc, char **argv, const struct ty_case *cases)
{
    struct ty *ty;
    char why[512];
    int rc;

    (void)argc;
    (void)argv;
    ty = ty__new_from_env(why, sizeof(why));
    if (ty == NULL) {
        cJSON *ev = event_new("failure");

        cJSON_AddStringToObject(ev, "error", why);
        print_line(getenv("TEST_RUN") ? getenv("TEST_RUN") : "",
                   getenv("TEST_GROUP_ID") ? getenv("TEST_GROUP_ID") : "", ev);
        cJSON_Delete(ev);
        fprintf(stderr, "testyard: %s\n", why);
        return 1;
    }
    crash_install(ty);
    ty__stop_install();
    rc = run(ty, cases);
    ty__sync_close(ty);
    ty__destroy(&ty);
    return rc;
}
