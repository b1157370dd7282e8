/*
 * main.c — `testyard <command>`: the command table, global options and
 * --help / --version. Everything else lives in runner/cmd_*.c.
 */
#include "cmd.h"
#include "base/err.h"
#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"validate", cmd_validate,
     "check a composition and print it fully resolved as JSON"},
    {"describe", cmd_describe, "print a plan's test cases and parameters"},
    {"run", cmd_run, "run a composition"},
    {"report", cmd_report, "write and print the report of a run"},
    {"compare", cmd_compare, "compare the reports of two runs"},
    {"collect", cmd_collect, "pack a run folder into a .tgz"},
    {"clean", cmd_clean, "remove containers and networks testyard left"},
    {"doctor", cmd_doctor, "check the Docker engine and the set-up"},
    {"history", cmd_history,
     "the recorded runs of a composition and their change points"},
    {"daemon", cmd_daemon, "run the scheduling daemon (queue, admission)"},
    {"submit", cmd_submit, "queue a composition on the daemon"},
    {"tasks", cmd_tasks, "list the daemon's tasks"},
    {"status", cmd_status, "show one task"},
    {"logs", cmd_logs, "print a task's run output (-f: follow)"},
    {"cancel", cmd_cancel, "cancel a queued or running task"},
    {"dashboard", cmd_dashboard, "print the link to the daemon's web pages"},
    {"schedule", cmd_schedule, "recurring runs on the daemon (add, list, rm)"},
};

static void
usage(FILE *out)
{
    fprintf(out, "usage: testyard [-v] [--version] <command> [args]\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nRun 'testyard <command> --help' for a command's "
                 "options.\n");
}

static int
main_opt(int c, char *arg, void *ctx, struct err *err)
{
    (void)arg;
    (void)ctx;
    (void)err;
    if (c == 'V') {
        printf("testyard %s\n", TY_VERSION);
        return 1;
    }
    log_set_level(LOG_DEBUG); /* -v */
    return 0;
}

static const struct cmd_usage main_usage = {NULL, "a command", usage};

/* testyard's own options, before the command: 0 to go on with the
 * command at argv[optind], 1 after --help or --version, -1 on a usage
 * error (cmd.h). */
static int
parse_args(int argc, char **argv, struct err *err)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"verbose", no_argument, NULL, 'v'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    /* '+': the options end at the command's name */
    static const struct cmd_spec spec = {&main_usage, "+:hv", longopts,
                                         main_opt, -1};

    return cmd_parse(&spec, argc, argv, NULL, err);
}

int
main(int argc, char **argv)
{
    struct err err = {0};
    int rc = parse_args(argc, argv, &err);
    int i = optind;

    if (rc != 0)
        return cmd_args_end(&main_usage, rc, &err);
    for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++)
        if (strcmp(argv[i], commands[c].name) == 0)
            return commands[c].fn(argc - i, argv + i);
    fprintf(stderr, "testyard: unknown command '%s'\n", argv[i]);
    usage(stderr);
    return EXIT_USAGE;
}
