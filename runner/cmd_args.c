/*
 * cmd_args.c — the argument convention every command follows (see cmd.h):
 * getopt_long with one set of messages for an unknown option, a missing
 * argument and a wrong number of operands, and one way of printing them.
 * `validate` and `describe` share their whole parser: [--plans DIR] and
 * one operand.
 */
#include "cmd.h"

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

int
cmd_getopt(int argc, char **argv, const char *shortopts,
           const struct option *longopts, struct err *err)
{
    const char *arg;
    int c;

    opterr = 0;
    c = getopt_long(argc, argv, shortopts, longopts, NULL);
    if (c != '?' && c != ':')
        return c;
    /* a short option is named by optopt ("-x" of "-qx"), a long one by
     * its word up to any "=value" */
    arg = argv[optind - 1];
    if (c == '?' && optopt != 0)
        cmd_usage_err(err, CMD_ESHAPE, "unknown option '-%c'", optopt);
    else if (c == '?')
        cmd_usage_err(err, CMD_ESHAPE, "unknown option '%.*s'",
                      (int)strcspn(arg, "="), arg);
    else if (arg[0] == '-' && arg[1] == '-')
        cmd_usage_err(err, CMD_ESHAPE, "missing argument for '%s'", arg);
    else
        cmd_usage_err(err, CMD_ESHAPE, "missing argument for '-%c'", optopt);
    return '?';
}

int
cmd_operands(int argc, char **argv, const struct cmd_usage *u, int n,
             struct err *err)
{
    if (argc - optind == n)
        return 0;
    if (u->operands == NULL)
        return cmd_usage_err(err, CMD_ESHAPE, "unexpected argument '%s'",
                             argv[optind]);
    return cmd_usage_err(err, CMD_ESHAPE, "expected %s", u->operands);
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
cmd_args_plans(int argc, char **argv, const struct cmd_usage *u,
               const char **plans, struct err *err)
{
    static const struct option longopts[] = {
        {"plans", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    optind = 0;
    while ((c = cmd_getopt(argc, argv, ":p:h", longopts, err)) != -1) {
        if (c == 'p') {
            *plans = optarg;
        } else if (c == 'h') {
            u->print(stdout);
            return 1;
        } else {
            return -1;
        }
    }
    return cmd_operands(argc, argv, u, 1, err);
}
