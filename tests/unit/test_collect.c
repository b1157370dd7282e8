/*
 * test_collect.c — `testyard collect`: the archive GNU tar reads back
 * with Testground's layout (<run-id>/<group>/<index>/...), the default
 * and -o outputs, no temporary file left behind, and the exit statuses of
 * its failures.
 */
#include "cmd.h"
#include "th.h"
#include "th_files.h"
#include "th_proc.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* tmp/runs/r-20261129-abc with two groups. */
static char *
make_run(void)
{
    char *run = path_join(th_tmpdir(), "runs/r-20261129-abc");

    th_write(run, "g1/0/run.out", "{\"event\":\"start\"}\n");
    th_write(run, "g1/0/run.err", "");
    th_write(run, "g1/1/run.out", "{\"event\":\"success\"}\n");
    th_write(run, "g2/0/results.out", "{\"name\":\"rtt\",\"value\":1}\n");
    th_write(run, "g2/0/heap/heap-0001.pb.gz", "\x1f\x8b not really");
    th_write(run, "report.json", "{}\n");
    return run;
}

/* What the shell command fmt (arg in place of its %s) prints. */
static char *
sh(const char *fmt, const char *arg)
{
    char *cmd = xasprintf(fmt, arg, arg);
    char *out = th_sh(cmd);

    free(cmd);
    return out;
}
static int
collect(int argc, char **argv, char **out)
{
    return th_captured(cmd_collect, argc, argv, out);
}
static void
t_default_output_layout(void)
{
    char *run = make_run(), *work = path_join(th_tmpdir(), "work"), *out;
    char cwd[4096];
    struct err err = {0};

    CHECK(mkdir_p(work, &err) == 0);
    CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
    CHECK(chdir(work) == 0);
    CHECK_EQ_INT(collect(2, (char *[]){"collect", run, NULL}, &out), 0);
    CHECK_CONTAINS(out, "wrote r-20261129-abc.tgz: 13 entries, ");
    free(out);
    out = sh("tar -tzf %s/r-20261129-abc.tgz", work);
    CHECK_EQ_STR(out, "r-20261129-abc/\n"
                      "r-20261129-abc/g1/\n"
                      "r-20261129-abc/g1/0/\n"
                      "r-20261129-abc/g1/0/run.err\n"
                      "r-20261129-abc/g1/0/run.out\n"
                      "r-20261129-abc/g1/1/\n"
                      "r-20261129-abc/g1/1/run.out\n"
                      "r-20261129-abc/g2/\n"
                      "r-20261129-abc/g2/0/\n"
                      "r-20261129-abc/g2/0/heap/\n"
                      "r-20261129-abc/g2/0/heap/heap-0001.pb.gz\n"
                      "r-20261129-abc/g2/0/results.out\n"
                      "r-20261129-abc/report.json\n");
    free(out);
    out = sh("cd %s && tar -xzf r-20261129-abc.tgz && diff -r "
             "r-20261129-abc ../runs/r-20261129-abc && ls -A %s",
             work);
    CHECK_EQ_STR(out, "r-20261129-abc\nr-20261129-abc.tgz\n");
    free(out);
    CHECK(chdir(cwd) == 0);
    free(work);
    free(run);
}

static void
t_output_option_and_errors(void)
{
    char *run = make_run(), *out;
    char *dest = path_join(th_tmpdir(), "a.tgz");
    char *inside = path_join(run, "self.tgz");

    CHECK_EQ_INT(collect(4, (char *[]){"collect", run, "-o", dest, NULL}, &out),
                 0);
    free(out);
    out = sh("tar -tzf %s | grep -c '^r-20261129-abc/'", dest);
    CHECK_EQ_STR(out, "13\n");
    free(out);
    CHECK_EQ_INT(
        collect(2, (char *[]){"collect", "/nonexistent/run", NULL}, &out),
        EXIT_NOINPUT);
    free(out);
    CHECK_EQ_INT(
        collect(4, (char *[]){"collect", run, "-o", inside, NULL}, &out),
        EXIT_USAGE);
    CHECK(!path_exists(inside));
    free(out);
    CHECK_EQ_INT(collect(4,
                         (char *[]){"collect", run, "-o",
                                    "/nonexistent/dir/x.tgz", NULL},
                         &out),
                 EXIT_CANTCREAT);
    free(out);
    CHECK_EQ_INT(collect(1, (char *[]){"collect", NULL}, &out), EXIT_USAGE);
    free(out);
    CHECK_EQ_INT(collect(2, (char *[]){"collect", "--help", NULL}, &out), 0);
    CHECK_CONTAINS(out, "usage: testyard collect RUN_DIR [-o FILE]");
    free(out);
    out = sh("ls -A %s | grep -c tmp; true", th_tmpdir());
    CHECK_EQ_STR(out, "0\n");
    free(out);
    free(inside);
    free(dest);
    free(run);
}

static const struct th_case cases[] = {
    {"default_output_layout", t_default_output_layout},
    {"output_option_and_errors", t_output_option_and_errors},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
