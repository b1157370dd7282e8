/*
 * cmd_run.c — `testyard run`: load a composition, run it, print the
 * summary and exit with the run's status.
 */
#include "cmd.h"
#include "backend/backend.h"
#include "config/config.h"
#include "base/err.h"
#include "run/run.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
usage(FILE *out)
{
    char names[256];

    fprintf(out,
            "usage: testyard run [options] COMPOSITION\n\n"
            "Run a composition (YAML or JSON) and gather every instance's\n"
            "outputs into <runs>/<run-id>/.\n\n"
            "options:\n"
            "  --plans DIR     look for plans in DIR first\n"
            "  --runs DIR      parent folder of run folders (default: runs,\n"
            "                  or $TESTYARD_RUNS)\n"
            "  --run-id ID     use ID instead of a generated run id\n"
            "  --runner NAME   run on NAME (%s)\n"
            "                  instead of the composition's runner\n"
            "  --no-progress   no live progress lines\n"
            "  -q, --quiet     no progress and no summary\n"
            "  -h, --help      this text\n\n"
            "exit status: 0 every instance succeeded, 1 the plan failed,\n"
            "130 canceled, 64 usage, 65 bad composition, 69 Docker\n"
            "unavailable (or gone for TESTYARD_ENGINE_GRACE, 30s, mid-run),\n"
            "70 internal error, 73/74 an output of the run could not be\n"
            "created/written.\n",
            backend_names(names, sizeof(names)));
}

struct run_args {
    const char *origin; /* --origin: not in usage (the daemon's) */
    const char *plans;
    const char *runner;
    const char *path;
    struct run_opts opts;
};

static const struct cmd_usage run_usage = {"run", "one COMPOSITION", usage};

/* The values of --runner and --run-id (CMD_EVALUE errors). */
static int
check_values(const struct run_args *a, struct err *err)
{
    struct err e = {0};

    if (cmd_check_runner(a->runner, err) < 0)
        return -1;
    if (a->opts.run_id != NULL && run_id_check(a->opts.run_id, &e) < 0)
        return cmd_usage_err(err, CMD_EVALUE, "--%s", e.msg);
    return 0;
}

static int
run_opt(int c, char *arg, void *ctx, struct err *err)
{
    struct run_args *a = ctx;

    (void)err;
    switch (c) {
    case 'p':
        a->plans = arg;
        break;
    case 'r':
        a->opts.runs_dir = arg;
        break;
    case 'i':
        a->opts.run_id = arg;
        break;
    case 'R':
        a->runner = arg;
        break;
    case 'n':
        a->opts.progress = false;
        break;
    case 'o':
        a->origin = arg;
        break;
    default: /* 'q' */
        a->opts.quiet = true;
    }
    return 0;
}

/* 0 to go on, 1 after --help, -1 on a usage error (cmd.h). */
static int
parse_args(int argc, char **argv, struct run_args *a, struct err *err)
{
    static const struct option longopts[] = {
        {"plans", required_argument, NULL, 'p'},
        {"runs", required_argument, NULL, 'r'},
        {"run-id", required_argument, NULL, 'i'},
        {"runner", required_argument, NULL, 'R'},
        {"no-progress", no_argument, NULL, 'n'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        /* the folder the composition was submitted from, when it is the
         * daemon's copy: relative paths in it are taken from there */
        {"origin", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    static const struct cmd_spec spec = {&run_usage, ":qh", longopts, run_opt,
                                         1};
    int rc;

    a->opts.runs_dir = getenv("TESTYARD_RUNS");
    a->opts.progress = isatty(STDOUT_FILENO);
    if ((rc = cmd_parse(&spec, argc, argv, a, err)) != 0)
        return rc;
    if (check_values(a, err) < 0)
        return -1;
    a->path = argv[optind];
    return 0;
}

int
cmd_run(int argc, char **argv)
{
    struct run_args a = {0};
    struct composition_opts copts = {0};
    struct run_summary sum = {0};
    struct composition *comp;
    struct err err = {0};
    int rc = parse_args(argc, argv, &a, &err);

    if (rc != 0)
        return cmd_args_end(&run_usage, rc, &err);
    run_block_signals();
    copts.plans_dir = a.plans;
    copts.runners = backend_runners();
    copts.runner = a.runner;
    copts.base_dir = a.origin;
    comp = composition_load(a.path, &copts, &err);
    if (comp == NULL) {
        fprintf(stderr, "testyard: %s\n", err.msg);
        return err.status ? err.status : EXIT_DATAERR;
    }
    if (run_execute(comp, &a.opts, &sum, &err) < 0) {
        fprintf(stderr, "testyard: %s\n", err.msg);
        composition_destroy(&comp);
        return err.status ? err.status : EXIT_SOFTWARE;
    }
    composition_destroy(&comp);
    if (sum.message[0] != '\0')
        fprintf(stderr, "testyard: %s\n", sum.message);
    if (sum.error[0] != '\0')
        fprintf(stderr, "testyard: %s\n", sum.error);
    return sum.exit_status;
}
