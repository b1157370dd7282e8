/*
 * cmd_report.c — `testyard report [options] RUN_DIR`: write a run's
 * summary.json and report.html and print the terminal table (runner/
 * report/report.h does the work; docs/report.md says what it shows).
 */
#include "cmd.h"
#include "report/report.h"
#include "base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: testyard report [--no-html] [--top N] [-q] RUN_DIR\n"
            "       testyard report [--open] [--data DIR] TASK\n\n"
            "Read a run folder and write RUN_DIR/summary.json and\n"
            "RUN_DIR/report.html (self-contained: open it in a browser),\n"
            "then print the report's table. A folder with pieces missing\n"
            "still gets a report, which says what is missing.\n\n"
            "  --no-html    write summary.json only\n"
            "  --top N      allocation sites kept per group (default 10)\n"
            "  -q, --quiet  do not print the table\n\n"
            "TASK, a number that names no folder: the report of the\n"
            "daemon's task TASK (written when missing); its path is\n"
            "printed, or with --open opened by xdg-open. --data DIR: the\n"
            "daemon's data folder.\n\n"
            "Exit status: 0 written, 64 usage, 65 a malformed file in the\n"
            "run folder, 66 no such run folder, 73 cannot write the "
            "report.\n");
}

static const struct cmd_usage report_usage = {"report", "one RUN_DIR", usage};

struct report_args {
    struct report_opts o;
    const char *data; /* --data: for a TASK */
    bool open;        /* --open: for a TASK */
};

static int
report_opt(int c, char *arg, void *ctx, struct err *err)
{
    struct report_args *a = ctx;
    struct report_opts *o = &a->o;
    char *end;
    long top;

    if (c == 'd') {
        a->data = arg;
    } else if (c == 'O') {
        a->open = true;
    } else if (c == 'H') {
        o->no_html = true;
    } else if (c == 'q') {
        o->table = NULL;
    } else { /* 't' */
        errno = 0;
        top = strtol(arg, &end, 10);
        if (errno != 0 || end == arg || *end != '\0' || top <= 0 ||
            top > INT_MAX)
            return cmd_usage_err(err, CMD_EVALUE,
                                 "--top: expected a positive whole number, "
                                 "got \"%s\"",
                                 arg);
        o->top = (int)top;
    }
    return 0;
}

/* 0 to go on, 1 after --help, -1 on a usage error (cmd.h). */
static int
parse_args(int argc, char **argv, struct report_args *o, const char **dir,
           struct err *err)
{
    static const struct option longopts[] = {
        {"data", required_argument, NULL, 'd'},
        {"open", no_argument, NULL, 'O'},
        {"no-html", no_argument, NULL, 'H'},
        {"top", required_argument, NULL, 't'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const struct cmd_spec spec = {&report_usage, ":qh", longopts,
                                         report_opt, 1};
    int rc = cmd_parse(&spec, argc, argv, o, err);

    if (rc == 0)
        *dir = argv[optind];
    return rc;
}

/* A task number, not a folder: `report TASK`. */
static bool
is_task(const char *s)
{
    return s[0] >= '1' && s[0] <= '9' && strspn(s, "0123456789") == strlen(s) &&
           !path_exists(s);
}

int
cmd_report(int argc, char **argv)
{
    struct report_args a = {.o.table = stdout};
    const char *dir = NULL;
    struct err err = {0};
    int rc = parse_args(argc, argv, &a, &dir, &err);

    if (rc != 0)
        return cmd_args_end(&report_usage, rc, &err);
    if (is_task(dir))
        return cmd_report_task(a.data, dir, a.open);
    if (report_generate(dir, &a.o, &err) < 0) {
        fprintf(stderr, "testyard report: %s\n", err.msg);
        return err.status ? err.status : EXIT_SOFTWARE;
    }
    return 0;
}
