/*
 * cmd_tasks.c — the daemon's tasks from the command line: `tasks`,
 * `status TASK`, `logs TASK [-f]`, `cancel TASK`, and `report TASK` (the
 * report command's operand when it names a task). Each asks the daemon of
 * DATA over its HTTP API (daemon/daemon.h); no daemon is exit 69.
 * `dashboard` prints the link that logs a browser in to the daemon's
 * pages.
 */
#include "cmd.h"
#include "daemon/daemon.h"
#include "report/report.h"
#include "base/proc.h"
#include "base/util.h"
#include "ty_json.h"
#include "ty_units.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FOLLOW_TICK_MS 300

struct tasks_args {
    const char *data;
    const char *task;
    bool json;
    bool follow;
};

static void
usage_tasks(FILE *out)
{
    fprintf(out, "usage: testyard tasks [--json] [--data DIR]\n\n"
                 "List the daemon's tasks: id, name, state (and the run's\n"
                 "outcome), duration, and each group's memory peak (or why\n"
                 "a queued task waits). --json: an array, one object per\n"
                 "task.\n\n"
                 "exit status: 0, 69 no daemon runs for DATA.\n");
}

static void
usage_status(FILE *out)
{
    fprintf(out, "usage: testyard status [--json] [--data DIR] TASK\n\n"
                 "One task: its state, why it waits or failed, its times,\n"
                 "what it needs of the budget, its run folder and groups.\n\n"
                 "exit status: 0, 66 no such task, 69 no daemon runs.\n");
}

static void
usage_logs(FILE *out)
{
    fprintf(out, "usage: testyard logs [-f] [--data DIR] TASK\n\n"
                 "The output of the task's run (its progress lines and\n"
                 "summary), after its build's log for a schedule's task.\n"
                 "-f, --follow: keep printing until the task "
                 "ends.\n\n"
                 "exit status: 0, 66 no such task, 69 no daemon runs.\n");
}

static void
usage_cancel(FILE *out)
{
    fprintf(out, "usage: testyard cancel [--data DIR] TASK\n\n"
                 "Cancel a task: a queued one at once, a running one as\n"
                 "Ctrl-C would (its containers removed, its outputs kept).\n\n"
                 "exit status: 0, 66 no such task, 69 no daemon runs.\n");
}

static void
usage_dashboard(FILE *out)
{
    fprintf(out, "usage: testyard dashboard [--data DIR]\n\n"
                 "Print the link that opens the daemon's dashboard in a\n"
                 "browser: the queue, each task's report and log, the\n"
                 "history of every composition and schedule with its\n"
                 "change points, compare-two-runs. Opening it once sets\n"
                 "the token as a cookie; keep the link to yourself.\n\n"
                 "exit status: 0, 69 no daemon runs for DATA.\n");
}

static const struct cmd_usage u_dashboard = {"dashboard", NULL,
                                             usage_dashboard};
static const struct cmd_usage u_tasks = {"tasks", NULL, usage_tasks};
static const struct cmd_usage u_status = {"status", "one TASK", usage_status};
static const struct cmd_usage u_logs = {"logs", "one TASK", usage_logs};
static const struct cmd_usage u_cancel = {"cancel", "one TASK", usage_cancel};

static int
tasks_opt(int c, char *arg, void *ctx, struct err *err)
{
    struct tasks_args *a = ctx;

    (void)err;
    if (c == 'd')
        a->data = arg;
    else if (c == 'j')
        a->json = true;
    else /* 'f' */
        a->follow = true;
    return 0;
}

static int
parse_args(int argc, char **argv, const struct cmd_usage *u,
           struct tasks_args *a, struct err *err)
{
    static const struct option longopts[] = {
        {"data", required_argument, NULL, 'd'},
        {"json", no_argument, NULL, 'j'},
        {"follow", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct cmd_spec spec = {u, ":hf", longopts, tasks_opt, u->operands ? 1 : 0};
    int rc = cmd_parse(&spec, argc, argv, a, err);
    const char *t;

    if (rc != 0 || u->operands == NULL)
        return rc;
    t = argv[optind];
    if (t[0] < '1' || t[0] > '9' || strspn(t, "0123456789") != strlen(t))
        return cmd_usage_err(err, CMD_EVALUE,
                             "TASK: expected a task number, got \"%s\"", t);
    a->task = t;
    return 0;
}

/* GET or POST path on DATA's daemon; prints the error and returns its
 * exit status, or 0 with r filled (the caller releases r->body). */
static int
call(const struct tasks_args *a, const char *method, const char *path,
     struct daemon_reply *r)
{
    struct err err = {0};
    cleanup_free char *data = daemon_data_dir(a->data, false, &err);
    struct daemon_client *cl = data ? daemon_client_new(data, &err) : NULL;
    int rc = cl ? daemon_client_call(cl, method, path, NULL, r, &err) : -1;

    daemon_client_destroy(&cl);
    if (rc == 0)
        return 0;
    strbuf_release(&r->body);
    fprintf(stderr, "testyard: %s\n", err.msg);
    return err.status ? err.status : EXIT_SOFTWARE;
}

/* "hog 12.0 MiB, b 3.0 MiB" */
static void
peaks(const cJSON *t, char *out, size_t size)
{
    const cJSON *g;
    size_t len = 0;

    out[0] = '\0';
    cJSON_ArrayForEach (g, cJSON_GetObjectItemCaseSensitive(t, "groups")) {
        char b[32] = "-";
        double p = ty__json_num(g, "peak_bytes", -1);

        if (p >= 0)
            ty__format_bytes((uint64_t)p, b, sizeof(b));
        len +=
            (size_t)snprintf(out + len, size > len ? size - len : 0, "%s%s %s",
                             len ? ", " : "", ty__json_str(g, "id"), b);
        if (len >= size)
            break;
    }
}

static void
print_row(const cJSON *t)
{
    char state[64], dur[32] = "-", last[512];
    const char *oc = ty__json_str(t, "outcome"),
               *why = ty__json_str(t, "reason");
    double d = ty__json_num(t, "duration_s", -1);

    snprintf(state, sizeof(state), "%s%s%s", ty__json_str(t, "state"),
             oc ? " " : "", oc ? oc : "");
    if (d >= 0)
        ty__format_duration((int64_t)(d * 1e9), dur, sizeof(dur));
    peaks(t, last, sizeof(last));
    if (last[0] == '\0' && why != NULL)
        snprintf(last, sizeof(last), "%s", why);
    printf("%-5lld %-20s %-20s %-9s %s\n", (long long)ty__json_num(t, "id", 0),
           ty__json_str(t, "name"), state, dur, last);
}

int
cmd_tasks(int argc, char **argv)
{
    struct tasks_args a = {0};
    struct daemon_reply r = {0};
    struct err err = {0};
    int rc = parse_args(argc, argv, &u_tasks, &a, &err);
    cJSON *arr, *t;

    if (rc != 0)
        return cmd_args_end(&u_tasks, rc, &err);
    if ((rc = call(&a, "GET", "/api/tasks", &r)) != 0)
        return rc;
    arr = cJSON_Parse(r.body.buf);
    if (a.json) {
        char *text = cJSON_Print(arr ? arr : cJSON_CreateArray());

        printf("%s\n", text);
        free(text);
    } else {
        printf("%-5s %-20s %-20s %-9s %s\n", "ID", "NAME", "STATE", "DURATION",
               "PEAK PER GROUP / REASON");
        cJSON_ArrayForEach (t, arr) {
            print_row(t);
        }
    }
    cJSON_Delete(arr);
    strbuf_release(&r.body);
    return fflush(stdout) == EOF ? EXIT_IOERR : 0;
}

static void
print_groups(const cJSON *t)
{
    const cJSON *g, *k;

    cJSON_ArrayForEach (g, cJSON_GetObjectItemCaseSensitive(t, "groups")) {
        char b[32] = "-";
        double p = ty__json_num(g, "peak_bytes", -1);

        if (p >= 0)
            ty__format_bytes((uint64_t)p, b, sizeof(b));
        printf("group:     %s: peak %s;", ty__json_str(g, "id"), b);
        cJSON_ArrayForEach (k, cJSON_GetObjectItemCaseSensitive(g, "outcomes"))
            if (cJSON_IsNumber(k) && k->valuedouble > 0)
                printf(" %s %g", k->string, k->valuedouble);
        putchar('\n');
    }
}

static void
print_line(const char *key, const char *v)
{
    if (v != NULL)
        printf("%-10s %s\n", key, v);
}

static void
print_status(const cJSON *t)
{
    const cJSON *need = cJSON_GetObjectItemCaseSensitive(t, "need");
    char mem[32] = "unlimited", dur[32];
    double m = ty__json_num(need, "memory_bytes", -1);

    printf("task %lld: %s (composition %s, priority %lld)\n",
           (long long)ty__json_num(t, "id", 0), ty__json_str(t, "name"),
           ty__json_str(t, "composition"),
           (long long)ty__json_num(t, "priority", 0));
    printf("%-10s %s%s%s", "state:", ty__json_str(t, "state"),
           ty__json_str(t, "outcome") ? ", " : "",
           ty__json_str(t, "outcome") ? ty__json_str(t, "outcome") : "");
    if (ty__json_num(t, "exit_status", -1) >= 0)
        printf(" (exit %d)", (int)ty__json_num(t, "exit_status", 0));
    putchar('\n');
    print_line("reason:", ty__json_str(t, "reason"));
    print_line("schedule:", ty__json_str(t, "schedule"));
    print_line("version:", ty__json_str(t, "version"));
    if (ty__json_num(t, "build_seconds", -1) >= 0) {
        ty__format_duration(
            (int64_t)(ty__json_num(t, "build_seconds", 0) * 1e9), dur,
            sizeof(dur));
        print_line("build:", dur);
    }
    print_line("submitted:", ty__json_str(t, "submitted"));
    print_line("started:", ty__json_str(t, "started"));
    print_line("ended:", ty__json_str(t, "ended"));
    if (ty__json_num(t, "duration_s", -1) >= 0) {
        ty__format_duration((int64_t)(ty__json_num(t, "duration_s", 0) * 1e9),
                            dur, sizeof(dur));
        print_line("duration:", dur);
    }
    if (m >= 0)
        ty__format_bytes((uint64_t)m, mem, sizeof(mem));
    if (ty__json_num(need, "millicpu", 0) > 0)
        printf("%-10s %s memory, %g CPU\n", "needs:", mem,
               ty__json_num(need, "millicpu", 0) / 1000);
    else
        printf("%-10s %s memory, no CPU quota\n", "needs:", mem);
    print_line("run:", ty__json_str(t, "run_dir"));
    print_groups(t);
}

int
cmd_status(int argc, char **argv)
{
    struct tasks_args a = {0};
    struct daemon_reply r = {0};
    struct err err = {0};
    cleanup_free char *path = NULL;
    int rc = parse_args(argc, argv, &u_status, &a, &err);
    cJSON *t;

    if (rc != 0)
        return cmd_args_end(&u_status, rc, &err);
    path = xasprintf("/api/tasks/%s", a.task);
    if ((rc = call(&a, "GET", path, &r)) != 0)
        return rc;
    t = cJSON_Parse(r.body.buf);
    if (a.json)
        fputs(r.body.buf ? r.body.buf : "{}\n", stdout);
    else
        print_status(t);
    cJSON_Delete(t);
    strbuf_release(&r.body);
    return fflush(stdout) == EOF ? EXIT_IOERR : 0;
}

int
cmd_logs(int argc, char **argv)
{
    struct tasks_args a = {0};
    struct err err = {0};
    long long offset = 0;
    int rc = parse_args(argc, argv, &u_logs, &a, &err);
    struct timespec tick = {0, FOLLOW_TICK_MS * 1000000L};

    if (rc != 0)
        return cmd_args_end(&u_logs, rc, &err);
    for (;;) {
        struct daemon_reply r = {0};
        cleanup_free char *path =
            xasprintf("/api/tasks/%s/log?offset=%lld", a.task, offset);
        bool done;
        size_t len;

        if ((rc = call(&a, "GET", path, &r)) != 0)
            return rc;
        len = r.body.len;
        done = r.done;
        if (len > 0 && fwrite(r.body.buf, 1, len, stdout) != len)
            rc = EXIT_IOERR;
        strbuf_release(&r.body);
        offset += (long long)len;
        if (rc != 0 || fflush(stdout) == EOF)
            return EXIT_IOERR;
        if (done || (len == 0 && !a.follow))
            return 0;
        if (len == 0)
            nanosleep(&tick, NULL);
    }
}

int
cmd_cancel(int argc, char **argv)
{
    struct tasks_args a = {0};
    struct daemon_reply r = {0};
    struct err err = {0};
    cleanup_free char *path = NULL;
    int rc = parse_args(argc, argv, &u_cancel, &a, &err);
    cJSON *t;
    const char *state;

    if (rc != 0)
        return cmd_args_end(&u_cancel, rc, &err);
    path = xasprintf("/api/tasks/%s/cancel", a.task);
    if ((rc = call(&a, "POST", path, &r)) != 0)
        return rc;
    t = cJSON_Parse(r.body.buf);
    state = ty__json_str(t, "state");
    if (state != NULL && strcmp(state, "running") == 0)
        printf("task %s: canceling (its run stops as on Ctrl-C)\n", a.task);
    else
        printf("task %s: %s\n", a.task, state ? state : "?");
    cJSON_Delete(t);
    strbuf_release(&r.body);
    return 0;
}

int
cmd_dashboard(int argc, char **argv)
{
    struct tasks_args a = {0};
    struct daemon_reply r = {0};
    struct err err = {0};
    int rc = parse_args(argc, argv, &u_dashboard, &a, &err);
    cleanup_free char *data = NULL, *link = NULL;
    struct daemon_client *cl;

    if (rc != 0)
        return cmd_args_end(&u_dashboard, rc, &err);
    data = daemon_data_dir(a.data, false, &err);
    cl = data ? daemon_client_new(data, &err) : NULL;
    /* the daemon must answer: a stale daemon.json gives no link */
    rc = cl ? daemon_client_call(cl, "GET", "/api/schedules", NULL, &r, &err)
            : -1;
    strbuf_release(&r.body);
    if (rc == 0)
        link = daemon_client_login_url(cl);
    daemon_client_destroy(&cl);
    if (rc < 0) {
        fprintf(stderr, "testyard: %s\n", err.msg);
        return err.status ? err.status : EXIT_SOFTWARE;
    }
    printf("%s\n", link);
    return 0;
}

static int
open_report(const char *html)
{
    char *argv[] = {"xdg-open", (char *)html, NULL};
    struct err err = {0};

    if (proc_run(argv, NULL, &err) == 0)
        return 0;
    fprintf(stderr, "testyard report: could not open it (%s)\n",
            err.msg[0] ? err.msg : "xdg-open failed");
    return EXIT_UNAVAILABLE;
}

int
cmd_report_task(const char *data, const char *id, bool open)
{
    struct tasks_args a = {.data = data, .task = id};
    struct daemon_reply r = {0};
    struct report_opts o = {0};
    struct err err = {0};
    cleanup_free char *path = xasprintf("/api/tasks/%s", id);
    cleanup_free char *html = NULL;
    int rc = call(&a, "GET", path, &r);
    cJSON *t;
    const char *dir, *state;

    if (rc != 0)
        return rc;
    t = cJSON_Parse(r.body.buf);
    strbuf_release(&r.body);
    dir = ty__json_str(t, "run_dir");
    state = ty__json_str(t, "state") ? ty__json_str(t, "state") : "?";
    if (dir == NULL || !path_is_dir(dir) || strcmp(state, "queued") == 0 ||
        strcmp(state, "running") == 0) {
        fprintf(stderr,
                "testyard report: task %s has no finished run (state %s)\n", id,
                state);
        cJSON_Delete(t);
        return EXIT_NOINPUT;
    }
    html = path_join(dir, "report.html");
    if (!path_exists(html) && report_generate(dir, &o, &err) < 0) {
        fprintf(stderr, "testyard report: %s\n", err.msg);
        cJSON_Delete(t);
        return err.status ? err.status : EXIT_SOFTWARE;
    }
    cJSON_Delete(t);
    printf("%s\n", html);
    fflush(stdout);
    return open ? open_report(html) : 0;
}
