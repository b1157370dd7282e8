/*
 * cmd_schedule.c — `testyard schedule add|list|rm|pause|resume`: the
 * daemon's recurring runs (docs/scheduling.md, "Schedules"), through its
 * HTTP API. `add` is checked by the daemon at once: a bad composition is
 * its file:line:col message (exit 65), a bad spec or zone exit 64, a name
 * taken exit 65; nothing is stored then.
 */
#include "cmd.h"
#include "daemon/daemon.h"
#include "base/util.h"
#include "ty_units.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sched_args {
    const char *data, *every, *cron, *tz, *name, *build, *version_from, *plans;
    long priority;
    int64_t build_timeout_s;
    bool json;
};

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: testyard schedule add [options] COMPOSITION\n"
            "       testyard schedule list [--json]\n"
            "       testyard schedule rm|pause|resume NAME\n\n"
            "Recurring runs on the daemon. Each firing runs the build (if\n"
            "any) in the composition's folder, records the version, then\n"
            "submits the composition as `submit` does.\n\n"
            "add options:\n"
            "  --every D          every duration D (1h, 24h; at least 1m),\n"
            "                     counted from now\n"
            "  --cron 'M H DOM MON DOW'  at the times of a cron expression\n"
            "  --tz ZONE          the zone of --cron (default UTC)\n"
            "  --name NAME        the schedule's name (default: the\n"
            "                     composition's metadata.name)\n"
            "  --build CMD        run `sh -c CMD` before each run; a failure\n"
            "                     is a task with outcome build-failed\n"
            "  --build-timeout D  kill the build after D (default 1h)\n"
            "  --version-from DIR record DIR's git commit with each run\n"
            "  --priority N       the tasks' priority (default 0)\n"
            "  --plans DIR        look for the plan in DIR first\n"
            "all: --data DIR (default $TESTYARD_DATA, else\n"
            "~/.local/state/testyard)\n\n"
            "exit status: 0, 64 usage or a bad spec, 65 bad composition or\n"
            "a name taken, 66 no such schedule, 69 no daemon runs.\n");
}

static const struct cmd_usage u_add = {"schedule add", "one COMPOSITION",
                                       usage};
static const struct cmd_usage u_list = {"schedule list", NULL, usage};
static const struct cmd_usage u_name = {"schedule", "one NAME", usage};

static int
duration_s(const char *opt, const char *arg, int64_t *out, struct err *err)
{
    int64_t ns;
    char why[128];

    if (ty__parse_duration(arg, &ns, why, sizeof(why)) < 0 || ns < 0)
        return cmd_usage_err(err, CMD_EVALUE,
                             "%s: expected a duration, got "
                             "\"%s\"",
                             opt, arg);
    *out = ns / 1000000000;
    return 0;
}

static int
sched_opt(int c, char *arg, void *ctx, struct err *err)
{
    struct sched_args *a = ctx;

    switch (c) {
    case 'd':
        a->data = arg;
        break;
    case 'e':
        a->every = arg;
        break;
    case 'c':
        a->cron = arg;
        break;
    case 'z':
        a->tz = arg;
        break;
    case 'n':
        a->name = arg;
        break;
    case 'b':
        a->build = arg;
        break;
    case 'v':
        a->version_from = arg;
        break;
    case 'p':
        a->plans = arg;
        break;
    case 'j':
        a->json = true;
        break;
    case 'T':
        return duration_s("--build-timeout", arg, &a->build_timeout_s, err);
    default: /* 'P' */
        return cmd_int_arg("--priority", arg, &a->priority, err);
    }
    return 0;
}

static int
parse_args(int argc, char **argv, const struct cmd_usage *u,
           struct sched_args *a, struct err *err)
{
    static const struct option longopts[] = {
        {"data", required_argument, NULL, 'd'},
        {"every", required_argument, NULL, 'e'},
        {"cron", required_argument, NULL, 'c'},
        {"tz", required_argument, NULL, 'z'},
        {"name", required_argument, NULL, 'n'},
        {"build", required_argument, NULL, 'b'},
        {"build-timeout", required_argument, NULL, 'T'},
        {"version-from", required_argument, NULL, 'v'},
        {"plans", required_argument, NULL, 'p'},
        {"priority", required_argument, NULL, 'P'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct cmd_spec spec = {u, ":h", longopts, sched_opt, u->operands ? 1 : 0};

    a->build_timeout_s = -1;
    return cmd_parse(&spec, argc, argv, a, err);
}

/* method path [body] on DATA's daemon: 0 with *out (the answer parsed),
 * else the error printed and its exit status. */
static int
call(const struct sched_args *a, const char *method, const char *path,
     const char *body, cJSON **out)
{
    struct err err = {0};
    struct daemon_reply r = {0};
    cleanup_free char *data = daemon_data_dir(a->data, false, &err);
    struct daemon_client *cl = data ? daemon_client_new(data, &err) : NULL;
    int rc = cl ? daemon_client_call(cl, method, path, body, &r, &err) : -1;

    daemon_client_destroy(&cl);
    if (rc == 0)
        *out = cJSON_Parse(r.body.buf ? r.body.buf : "null");
    strbuf_release(&r.body);
    if (rc == 0)
        return 0;
    fprintf(stderr, "testyard: %s\n", err.msg);
    return err.status ? err.status : EXIT_SOFTWARE;
}

static void
add_opt(cJSON *o, const char *key, const char *v, bool path)
{
    cleanup_free char *abs = v && path ? path_absolute(v) : NULL;

    if (v == NULL)
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddStringToObject(o, key, abs ? abs : v);
}

static int
add(const struct sched_args *a, const char *comp)
{
    cJSON *o, *out = NULL;
    cleanup_free char *spec = NULL, *body = NULL;
    const cJSON *name;
    struct err err = {0};
    int rc;

    if ((a->every == NULL) == (a->cron == NULL)) {
        cmd_usage_err(&err, CMD_EVALUE,
                      "expected one of --every D or "
                      "--cron 'M H DOM MON DOW'");
        return cmd_args_end(&u_add, -1, &err);
    }
    spec = a->every ? xasprintf("every %s", a->every)
                    : xasprintf("cron %s", a->cron);
    o = cJSON_CreateObject();
    add_opt(o, "composition", comp, true);
    add_opt(o, "plans", a->plans, true);
    add_opt(o, "spec", spec, false);
    add_opt(o, "tz", a->tz, false);
    add_opt(o, "name", a->name, false);
    add_opt(o, "build", a->build, false);
    add_opt(o, "version_from", a->version_from, true);
    cJSON_AddNumberToObject(o, "priority", (double)a->priority);
    if (a->build_timeout_s >= 0)
        cJSON_AddNumberToObject(o, "build_timeout_s",
                                (double)a->build_timeout_s);
    body = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if ((rc = call(a, "POST", "/api/schedules", body, &out)) != 0)
        return rc;
    name = cJSON_GetObjectItemCaseSensitive(out, "name");
    printf("%s\n", cJSON_IsString(name) ? name->valuestring : "?");
    cJSON_Delete(out);
    return fflush(stdout) == EOF ? EXIT_IOERR : 0;
}

static const char *
str(const cJSON *o, const char *key, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(v) ? v->valuestring : dflt;
}

static void
print_row(const cJSON *s)
{
    const cJSON *last = cJSON_GetObjectItemCaseSensitive(s, "last_task");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(last, "id");
    char task[96] = "-";

    if (cJSON_IsNumber(id))
        snprintf(task, sizeof(task), "%lld %s%s%s", (long long)id->valuedouble,
                 str(last, "state", "?"), str(last, "outcome", NULL) ? " " : "",
                 str(last, "outcome", ""));
    printf("%-20s %-22s %-14s %-6s %-24s %-24s %s\n", str(s, "name", "?"),
           str(s, "spec", "?"), str(s, "tz", "UTC"),
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "paused")) ? "yes"
                                                                       : "no",
           str(s, "last_fired", "-"), str(s, "next", "-"), task);
}

static int
list(const struct sched_args *a)
{
    cJSON *arr = NULL, *s;
    int rc = call(a, "GET", "/api/schedules", NULL, &arr);

    if (rc != 0)
        return rc;
    if (a->json) {
        char *text = cJSON_Print(arr ? arr : cJSON_CreateArray());

        printf("%s\n", text);
        free(text);
    } else {
        printf("%-20s %-22s %-14s %-6s %-24s %-24s %s\n", "NAME", "SPEC", "TZ",
               "PAUSED", "LAST FIRED", "NEXT", "LAST TASK");
        cJSON_ArrayForEach (s, arr) {
            print_row(s);
        }
    }
    cJSON_Delete(arr);
    return fflush(stdout) == EOF ? EXIT_IOERR : 0;
}

static int
change(const struct sched_args *a, const char *verb, const char *name)
{
    cleanup_free char *path = NULL;
    cJSON *out = NULL;
    bool rm = strcmp(verb, "rm") == 0;
    int rc;

    if (strchr(name, '/') != NULL || name[0] == '\0') {
        fprintf(stderr, "testyard: no schedule named \"%s\"\n", name);
        return EXIT_NOINPUT;
    }
    path = rm ? xasprintf("/api/schedules/%s", name)
              : xasprintf("/api/schedules/%s/%s", name, verb);
    if ((rc = call(a, rm ? "DELETE" : "POST", path, NULL, &out)) != 0)
        return rc;
    cJSON_Delete(out);
    printf("schedule %s: %s\n", name,
           rm                           ? "removed"
           : strcmp(verb, "pause") == 0 ? "paused"
                                        : "resumed");
    return fflush(stdout) == EOF ? EXIT_IOERR : 0;
}

int
cmd_schedule(int argc, char **argv)
{
    struct sched_args a = {0};
    struct err err = {0};
    const char *verb = argc > 1 ? argv[1] : "";
    const struct cmd_usage *u;
    int rc;

    if (strcmp(verb, "-h") == 0 || strcmp(verb, "--help") == 0) {
        usage(stdout);
        return 0;
    }
    u = strcmp(verb, "add") == 0    ? &u_add
        : strcmp(verb, "list") == 0 ? &u_list
        : strcmp(verb, "rm") == 0 || strcmp(verb, "pause") == 0 ||
                strcmp(verb, "resume") == 0
            ? &u_name
            : NULL;
    if (u == NULL) {
        fprintf(stderr, "testyard schedule: expected add, list, rm, pause "
                        "or resume\n");
        usage(stderr);
        return EXIT_USAGE;
    }
    if ((rc = parse_args(argc - 1, argv + 1, u, &a, &err)) != 0)
        return cmd_args_end(u, rc, &err);
    if (u == &u_add)
        return add(&a, argv[1 + optind]);
    if (u == &u_list)
        return list(&a);
    return change(&a, verb, argv[1 + optind]);
}
