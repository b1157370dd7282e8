/*
 * cmd_submit.c — `testyard submit COMPOSITION`: queue a composition on the
 * daemon of DATA. The daemon checks it at once (a bad one is refused with
 * the loader's file:line:col message, exit 65, nothing queued) and keeps a
 * copy of it and of its plan's source, so later edits change nothing of
 * what runs. The task's id is printed on stdout.
 */
#include "cmd.h"
#include "daemon/daemon.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: testyard submit [options] COMPOSITION\n\n"
            "Queue COMPOSITION on the daemon (testyard daemon). It is\n"
            "checked now and copied with its plan's source; the task's id\n"
            "is printed.\n\n"
            "options:\n"
            "  --priority N  higher runs first (default 0); the same: in\n"
            "                submission order\n"
            "  --name NAME   the task's name (default: metadata.name)\n"
            "  --plans DIR   look for the plan in DIR first\n"
            "  --data DIR    the daemon's data folder (default: "
            "$TESTYARD_DATA,\n"
            "                else ~/.local/state/testyard)\n"
            "  -h, --help    this text\n\n"
            "exit status: 0 queued, 64 usage, 65 bad composition or larger\n"
            "than the daemon's whole budget, 69 no daemon runs.\n");
}

struct submit_args {
    const char *data;
    const char *name;
    const char *plans;
    long priority;
};

static const struct cmd_usage submit_usage = {"submit", "one COMPOSITION",
                                              usage};

static int
submit_opt(int c, char *arg, void *ctx, struct err *err)
{
    struct submit_args *a = ctx;

    if (c == 'd') {
        a->data = arg;
    } else if (c == 'n') {
        a->name = arg;
    } else if (c == 'p') {
        a->plans = arg;
    } else { /* 'P' */
        return cmd_int_arg("--priority", arg, &a->priority, err);
    }
    return 0;
}

static int
parse_args(int argc, char **argv, struct submit_args *a, struct err *err)
{
    static const struct option longopts[] = {
        {"data", required_argument, NULL, 'd'},
        {"name", required_argument, NULL, 'n'},
        {"plans", required_argument, NULL, 'p'},
        {"priority", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const struct cmd_spec spec = {&submit_usage, ":h", longopts,
                                         submit_opt, 1};

    return cmd_parse(&spec, argc, argv, a, err);
}

static char *
request(const struct submit_args *a, const char *path)
{
    cJSON *o = cJSON_CreateObject();
    cleanup_free char *abs = path_absolute(path);
    cleanup_free char *plans = a->plans ? path_absolute(a->plans) : NULL;
    char *text;

    cJSON_AddStringToObject(o, "composition", abs);
    if (plans)
        cJSON_AddStringToObject(o, "plans", plans);
    else
        cJSON_AddNullToObject(o, "plans");
    cJSON_AddNumberToObject(o, "priority", (double)a->priority);
    if (a->name)
        cJSON_AddStringToObject(o, "name", a->name);
    else
        cJSON_AddNullToObject(o, "name");
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

static int
print_task(const char *body)
{
    cJSON *o = cJSON_Parse(body);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");

    if (!cJSON_IsNumber(id)) {
        cJSON_Delete(o);
        fprintf(stderr, "testyard submit: the daemon's answer has no id\n");
        return EXIT_SOFTWARE;
    }
    printf("%lld\n", (long long)id->valuedouble);
    fprintf(stderr, "testyard submit: task %lld queued (%s)\n",
            (long long)id->valuedouble,
            cJSON_IsString(name) ? name->valuestring : "?");
    cJSON_Delete(o);
    return 0;
}

int
cmd_submit(int argc, char **argv)
{
    struct submit_args a = {0};
    struct daemon_client *cl = NULL;
    struct daemon_reply r = {0};
    struct err err = {0};
    cleanup_free char *data = NULL, *body = NULL;
    int rc = parse_args(argc, argv, &a, &err);

    if (rc != 0)
        return cmd_args_end(&submit_usage, rc, &err);
    body = request(&a, argv[optind]);
    if ((data = daemon_data_dir(a.data, false, &err)) == NULL ||
        (cl = daemon_client_new(data, &err)) == NULL ||
        daemon_client_call(cl, "POST", "/api/tasks", body, &r, &err) < 0) {
        fprintf(stderr, "testyard: %s\n", err.msg);
        rc = err.status ? err.status : EXIT_SOFTWARE;
    } else {
        rc = print_task(r.body.buf);
    }
    strbuf_release(&r.body);
    daemon_client_destroy(&cl);
    return rc;
}
