/*
 * test_collect.c — `testyard collect`: the archive GNU tar reads back
 * with Testground's layout (<run-id>/<group>/<index>/...), the default
 * and -o outputs, no temporary file left behind, and the exit statuses of
 * its failures.
 */
#include "cmd.h"
#include "th.h"
#include "util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
put(const char *dir, const char *rel, const char *text)
{
    char *path = path_join(dir, rel), *parent = path_dirname(path);
    struct err err = {0};

    CHECK(mkdir_p(parent, &err) == 0);
    CHECK(file_write_atomic(path, text, strlen(text), &err) == 0);
    free(parent);
    free(path);
}

/* tmp/runs/r-20261129-abc with two groups. */
static char *
make_run(void)
{
    char *run = path_join(th_tmpdir(), "runs/r-20261129-abc");

    put(run, "g1/0/run.out", "{\"event\":\"start\"}\n");
    put(run, "g1/0/run.err", "");
    put(run, "g1/1/run.out", "{\"event\":\"success\"}\n");
    put(run, "g2/0/results.out", "{\"name\":\"rtt\",\"value\":1}\n");
    put(run, "g2/0/heap/heap-0001.pb.gz", "\x1f\x8b not really");
    put(run, "report.json", "{}\n");
    return run;
}

static char *
sh(const char *fmt, const char *arg)
{
    char *cmd = xasprintf(fmt, arg, arg);
    struct strbuf sb;
    char buf[4096];
    FILE *p = popen(cmd, "r");
    size_t n;

    strbuf_init(&sb);
    while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0)
        strbuf_add(&sb, buf, n);
    if (p)
        pclose(p);
    free(cmd);
    return strbuf_detach(&sb);
}

static int
collect(int argc, char **argv, char **out)
{
    char *path = path_join(th_tmpdir(), "stdout");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int saved, rc;
    struct err err = {0};

    fflush(stdout);
    saved = dup(STDOUT_FILENO);
    dup2(fd, STDOUT_FILENO);
    rc = cmd_collect(argc, argv);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    close(fd);
    *out = file_read(path, 1 << 20, NULL, &err);
    unlink(path);
    free(path);
    return rc;
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
