/*
 * cmd_args.c — the argument convention every command follows (see cmd.h):
 * one getopt_long loop with one set of messages for an unknown option, a
 * missing argument and a wrong number of operands, --help answered the
 * same way, and one way of printing a usage error.
 * `validate` and `describe` share their whole parser: [--plans DIR] and
 * one operand.
 */
#include "cmd.h"

#include "backend/backend.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int
cmd_usage_err(struct err *err, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    err->code = code;
    return err_status(err, EXIT_USAGE);
}

/* getopt_long's answer for an unknown option or a missing argument, as
 * a usage error: a short option is named by optopt ("-x" of "-qx"), a long
 * one by its word up to any "=value". */
static int
bad_option(int c, char **argv, struct err *err)
{
    const char *arg = argv[optind - 1];

    if (c == '?' && optopt != 0)
        return cmd_usage_err(err, CMD_ESHAPE, "unknown option '-%c'", optopt);
    if (c == '?')
        return cmd_usage_err(err, CMD_ESHAPE, "unknown option '%.*s'",
                             (int)strcspn(arg, "="), arg);
    if (arg[0] == '-' && arg[1] == '-')
        return cmd_usage_err(err, CMD_ESHAPE, "missing argument for '%s'", arg);
    return cmd_usage_err(err, CMD_ESHAPE, "missing argument for '-%c'", optopt);
}

static int
check_operands(const struct cmd_spec *spec, int argc, char **argv,
               struct err *err)
{
    int n = argc - optind;

    if (n == spec->operands || (spec->operands < 0 && n > 0))
        return 0;
    if (spec->usage->operands == NULL)
        return cmd_usage_err(err, CMD_ESHAPE, "unexpected argument '%s'",
                             argv[optind]);
    return cmd_usage_err(err, CMD_ESHAPE, "expected %s", spec->usage->operands);
}

int
cmd_parse(const struct cmd_spec *spec, int argc, char **argv, void *ctx,
          struct err *err)
{
    int c, rc;

    /* 0, not 1: glibc then starts afresh (a second command in one
     * process, as in the unit tests) */
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, spec->shortopts, spec->longopts,
                            NULL)) != -1) {
        if (c == '?' || c == ':')
            return bad_option(c, argv, err);
        if (c == 'h') {
            spec->usage->print(stdout);
            return 1;
        }
        if ((rc = spec->opt(c, optarg, ctx, err)) != 0)
            return rc;
    }
    return check_operands(spec, argc, argv, err);
}

int
cmd_args_end(const struct cmd_usage *u, int rc, const struct err *err)
{
    if (rc > 0)
        return 0;
    if (err->code == CMD_EVALUE) {
        fprintf(stderr, "testyard: %s\n", err->msg);
    } else {
        fprintf(stderr, "testyard%s%s: %s\n", u->cmd ? " " : "",
                u->cmd ? u->cmd : "", err->msg);
        u->print(stderr);
    }
    return err->status ? err->status : EXIT_USAGE;
}

int
cmd_check_runner(const char *name, struct err *err)
{
    char names[256];

    if (name == NULL || backend_find(name) != NULL)
        return 0;
    return cmd_usage_err(err, CMD_EVALUE, "--runner: expected %s, got \"%s\"",
                         backend_names(names, sizeof(names)), name);
}

struct plans_ctx {
    const char **plans, **runner;
};

static int
plans_opt(int c, char *arg, void *ctx, struct err *err)
{
    struct plans_ctx *pc = ctx;

    if (c == 'R') {
        *pc->runner = arg;
        return cmd_check_runner(arg, err);
    }
    *pc->plans = arg;
    return 0;
}

int
cmd_args_plans(int argc, char **argv, const struct cmd_usage *u,
               const char **plans, const char **runner, struct err *err)
{
    /* Without runner, --runner is as unknown as any other option. */
    static const struct option with_runner[] = {
        {"plans", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {"runner", required_argument, NULL, 'R'},
        {NULL, 0, NULL, 0},
    };
    static const struct option without_runner[] = {
        {"plans", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const struct cmd_spec spec = {
        u, ":p:h", runner ? with_runner : without_runner, plans_opt, 1};
    struct plans_ctx pc = {plans, runner};

    return cmd_parse(&spec, argc, argv, &pc, err);
}

int
cmd_int_arg(const char *opt, const char *arg, long *out, struct err *err)
{
    char *end;

    errno = 0;
    *out = strtol(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || *out > INT_MAX ||
        *out < INT_MIN)
        return cmd_usage_err(err, CMD_EVALUE,
                             "%s: expected a whole number, got \"%s\"", opt,
                             arg);
    return 0;
}
