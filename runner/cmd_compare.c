/*
 * cmd_compare.c — `testyard compare [options] RUN_A RUN_B`: the reports of
 * two runs side by side (A before, B after) with their differences, as a
 * table, and optionally as JSON and as an HTML page. Nothing is written
 * into the run folders.
 */
#include "cmd.h"
#include "report/report.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct compare_args {
    const char *run[2];
    const char *json; /* "-" for stdout */
    const char *html;
};

static void
usage(FILE *out)
{
    fprintf(out,
            "usage: testyard compare [--json FILE] [--html FILE] RUN_A "
            "RUN_B\n\n"
            "Compare two runs, A before and B after a change: per group\n"
            "the peak and final memory, the growth per round and its\n"
            "verdict, the OOM kills, and the top allocation sites, with\n"
            "B - A for each.\n\n"
            "  --json FILE  write the comparison as JSON (- for standard\n"
            "               output, instead of the table)\n"
            "  --html FILE  write it as a self-contained HTML page\n\n"
            "Exit status: 0 compared, 64 usage, 65 a malformed file in a\n"
            "run folder, 66 no such run folder, 73 cannot write a file.\n");
}

static const struct cmd_usage compare_usage = {"compare", "RUN_A and RUN_B",
                                               usage};

static int
compare_opt(int c, char *arg, void *ctx, struct err *err)
{
    struct compare_args *a = ctx;

    (void)err;
    if (c == 'j')
        a->json = arg;
    else /* 'H' */
        a->html = arg;
    return 0;
}

/* 0 to go on, 1 after --help, -1 on a usage error (cmd.h). */
static int
parse_args(int argc, char **argv, struct compare_args *a, struct err *err)
{
    static const struct option longopts[] = {
        {"json", required_argument, NULL, 'j'},
        {"html", required_argument, NULL, 'H'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const struct cmd_spec spec = {&compare_usage, ":h", longopts,
                                         compare_opt, 2};
    int rc = cmd_parse(&spec, argc, argv, a, err);

    if (rc == 0) {
        a->run[0] = argv[optind];
        a->run[1] = argv[optind + 1];
    }
    return rc;
}

/* Write text (which this frees) to path, or to stdout for "-". */
static int
output(const char *path, char *text, struct err *err)
{
    int rc = 0;

    if (strcmp(path, "-") == 0)
        fputs(text, stdout);
    else if ((rc = file_write_atomic(path, text, strlen(text), err)) < 0)
        err_status(err, EXIT_CANTCREAT);
    free(text);
    return rc;
}

static int
compare(const struct compare_args *a, struct report *r[2], struct err *err)
{
    if (a->json != NULL &&
        output(a->json, report_compare_json(r[0], r[1]), err) < 0)
        return -1;
    if (a->html != NULL &&
        output(a->html, report_compare_html(r[0], r[1]), err) < 0)
        return -1;
    if (a->json == NULL || strcmp(a->json, "-") != 0)
        report_compare_print(r[0], r[1], stdout);
    return 0;
}

int
cmd_compare(int argc, char **argv)
{
    struct compare_args a = {0};
    struct report *r[2] = {NULL, NULL};
    struct err err = {0};
    int rc = parse_args(argc, argv, &a, &err);

    if (rc != 0)
        return cmd_args_end(&compare_usage, rc, &err);
    rc = -1;
    for (int i = 0; i < 2 && rc < 0; i++)
        if ((r[i] = report_build(a.run[i], NULL, &err)) == NULL)
            rc = err.status ? err.status : EXIT_SOFTWARE;
    if (rc < 0 && compare(&a, r, &err) < 0)
        rc = err.status ? err.status : EXIT_SOFTWARE;
    if (rc > 0)
        fprintf(stderr, "testyard compare: %s\n", err.msg);
    report_destroy(&r[0]);
    report_destroy(&r[1]);
    return rc < 0 ? 0 : rc;
}
