/*
 * cmd_report.c — `testyard report [options] RUN_DIR`: write a run's
 * summary.json and report.html and print the terminal table (runner/
 * report/report.h does the work; docs/report.md says what it shows).
 */
#include "cmd.h"
#include "report/report.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: testyard report [--no-html] [--top N] [-q] RUN_DIR\n\n"
            "Read a run folder and write RUN_DIR/summary.json and\n"
            "RUN_DIR/report.html (self-contained: open it in a browser),\n"
            "then print the report's table. A folder with pieces missing\n"
            "still gets a report, which says what is missing.\n\n"
            "  --no-html    write summary.json only\n"
            "  --top N      allocation sites kept per group (default 10)\n"
            "  -q, --quiet  do not print the table\n\n"
            "Exit status: 0 written, 64 usage, 65 a malformed file in the\n"
            "run folder, 66 no such run folder, 73 cannot write the "
            "report.\n");
}

static const struct cmd_usage report_usage = {"report", "one RUN_DIR", usage};

/* 0 to go on, 1 after --help, -1 on a usage error (cmd.h). */
static int
parse_args(int argc, char **argv, struct report_opts *o, const char **dir,
           struct err *err)
{
    static const struct option longopts[] = {
        {"no-html", no_argument, NULL, 'H'},
        {"top", required_argument, NULL, 't'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char *end;
    long top;
    int c;

    optind = 0;
    while ((c = cmd_getopt(argc, argv, ":qh", longopts, err)) != -1) {
        switch (c) {
        case 'H':
            o->no_html = true;
            break;
        case 'q':
            o->table = NULL;
            break;
        case 't':
            errno = 0;
            top = strtol(optarg, &end, 10);
            if (errno != 0 || end == optarg || *end != '\0' || top <= 0 ||
                top > INT_MAX)
                return cmd_usage_err(err, CMD_EVALUE,
                                     "--top: expected a positive whole "
                                     "number, got \"%s\"",
                                     optarg);
            o->top = (int)top;
            break;
        case 'h':
            usage(stdout);
            return 1;
        default:
            return -1;
        }
    }
    if (cmd_operands(argc, argv, &report_usage, 1, err) < 0)
        return -1;
    *dir = argv[optind];
    return 0;
}

int
cmd_report(int argc, char **argv)
{
    struct report_opts o = {.table = stdout};
    const char *dir = NULL;
    struct err err = {0};
    int rc = parse_args(argc, argv, &o, &dir, &err);

    if (rc != 0)
        return cmd_args_end(&report_usage, rc, &err);
    if (report_generate(dir, &o, &err) < 0) {
        fprintf(stderr, "testyard report: %s\n", err.msg);
        return err.status ? err.status : EXIT_SOFTWARE;
    }
    return 0;
}
