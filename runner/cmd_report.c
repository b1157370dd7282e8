/*
 * cmd_report.c — `testyard report [options] RUN_DIR`: write a run's
 * summary.json and report.html and print the terminal table (runner/
 * report/report.h does the work; docs/report.md says what it shows).
 */
#include "cmd.h"
#include "report/report.h"

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

/* -1 to go on, else the exit status. */
static int
parse_args(int argc, char **argv, struct report_opts *o, const char **dir)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--no-html") == 0) {
            o->no_html = true;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->table = NULL;
        } else if (strcmp(a, "--top") == 0 && i + 1 < argc &&
                   atoi(argv[i + 1]) > 0) {
            o->top = atoi(argv[++i]);
        } else if (a[0] != '-' && *dir == NULL) {
            *dir = a;
        } else {
            fprintf(stderr, "testyard report: unexpected argument '%s'\n", a);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (*dir != NULL)
        return -1;
    usage(stderr);
    return EXIT_USAGE;
}

int
cmd_report(int argc, char **argv)
{
    struct report_opts o = {.table = stdout};
    const char *dir = NULL;
    struct err err = {0};
    int rc = parse_args(argc, argv, &o, &dir);

    if (rc >= 0)
        return rc;
    if (report_generate(dir, &o, &err) < 0) {
        fprintf(stderr, "testyard report: %s\n", err.msg);
        return err.status ? err.status : EXIT_SOFTWARE;
    }
    return 0;
}
