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
    const char *plans;
    const char *runner;
    const char *path;
    struct run_opts opts;
};

static int
parse_args(int argc, char **argv, struct run_args *a)
{
    static const struct option longopts[] = {
        {"plans", required_argument, NULL, 'p'},
        {"runs", required_argument, NULL, 'r'},
        {"run-id", required_argument, NULL, 'i'},
        {"runner", required_argument, NULL, 'R'},
        {"no-progress", no_argument, NULL, 'n'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct err err = {0};
    int c;

    a->opts.runs_dir = getenv("TESTYARD_RUNS");
    a->opts.progress = isatty(STDOUT_FILENO);
    while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            a->plans = optarg;
            break;
        case 'r':
            a->opts.runs_dir = optarg;
            break;
        case 'i':
            a->opts.run_id = optarg;
            break;
        case 'R':
            a->runner = optarg;
            break;
        case 'n':
            a->opts.progress = false;
            break;
        case 'q':
            a->opts.quiet = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (cmd_args_runner(a->runner) != 0)
        return EXIT_USAGE;
    if (a->opts.run_id != NULL && run_id_check(a->opts.run_id, &err) < 0) {
        fprintf(stderr, "testyard: --%s\n", err.msg);
        return EXIT_USAGE;
    }
    if (optind != argc - 1) {
        usage(stderr);
        return EXIT_USAGE;
    }
    a->path = argv[optind];
    return -1;
}

int
cmd_run(int argc, char **argv)
{
    struct run_args a = {0};
    struct composition_opts copts = {0};
    struct run_summary sum = {0};
    struct composition *comp;
    struct err err = {0};
    int rc = parse_args(argc, argv, &a);

    if (rc >= 0)
        return rc;
    run_block_signals();
    copts.plans_dir = a.plans;
    copts.runners = backend_runners();
    copts.runner = a.runner;
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
