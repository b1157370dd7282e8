/*
 * test_proc.c — running a helper program (base/proc.h): its stdout and
 * stderr captured together, its exit status or 128+signal, an exec that
 * fails reported with the exec's own errno (EACCES for a file without the
 * x bit, ENOENT for none), a program that itself exits 127 still an
 * answer, the environment, output cap, folder, process group and output
 * descriptor of proc_run_opts, and the deadline.
 */
#include "base/proc.h"
#include "th.h"
#include "th_files.h"
#include "th_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* sh -c script, its output in *out (the caller's to release). */
static int
sh(const char *script, struct strbuf *out, struct err *err)
{
    char *argv[] = {"sh", "-c", (char *)script, NULL};

    strbuf_init(out);
    return proc_run(argv, out, err);
}

static void
t_output_captured(void)
{
    struct strbuf out;
    struct err err = {0};

    CHECK_EQ_INT(
        sh("echo to-stdout; echo to-stderr >&2; printf end", &out, &err), 0);
    CHECK_EQ_STR(out.buf, "to-stdout\nto-stderr\nend");
    strbuf_release(&out);
    /* output is appended to what out holds */
    strbuf_init(&out);
    strbuf_adds(&out, "before|");
    CHECK_EQ_INT(
        proc_run((char *[]){"sh", "-c", "echo after", NULL}, &out, &err), 0);
    CHECK_EQ_STR(out.buf, "before|after\n");
    strbuf_release(&out);
    /* without a buffer the output goes nowhere, the status still comes */
    CHECK_EQ_INT(
        proc_run((char *[]){"sh", "-c", "echo x; exit 4", NULL}, NULL, &err),
        4);
}

static void
t_stdin_is_devnull(void)
{
    struct strbuf out;
    struct err err = {0};

    /* cat would wait for a terminal; /dev/null ends it at once */
    CHECK_EQ_INT(sh("cat; echo done", &out, &err), 0);
    CHECK_EQ_STR(out.buf, "done\n");
    strbuf_release(&out);
}

static void
t_exit_status(void)
{
    struct strbuf out;
    struct err err = {0};

    CHECK_EQ_INT(sh("exit 3", &out, &err), 3);
    strbuf_release(&out);
    CHECK_EQ_INT(sh("exit 255", &out, &err), 255);
    strbuf_release(&out);
    CHECK_EQ_INT(sh("kill -TERM $$", &out, &err), 128 + SIGTERM);
    strbuf_release(&out);
    CHECK_EQ_INT(sh("kill -KILL $$", &out, &err), 128 + SIGKILL);
    strbuf_release(&out);
    /* a program that exits 127 itself (the loader, for a library it does
     * not find) ran: that is its answer, not an exec failure */
    CHECK_EQ_INT(sh("echo 'libx.so => not found'; exit 127", &out, &err), 127);
    CHECK_EQ_STR(out.buf, "libx.so => not found\n");
    strbuf_release(&out);
    CHECK_EQ_STR(err.msg, "");
}

static void
t_exec_errno(void)
{
    char *plain = xasprintf("%s/no-x-bit", th_tmpdir());
    char *missing = xasprintf("%s/missing", th_tmpdir());
    struct strbuf out;
    struct err err = {0};
    char want[4096];

    /* a file that exists without the x bit: EACCES, not ENOENT */
    th_write(th_tmpdir(), "no-x-bit", "#!/bin/sh\nexit 0\n");
    CHECK(chmod(plain, 0644) == 0);
    strbuf_init(&out);
    CHECK_EQ_INT(proc_run((char *[]){plain, NULL}, &out, &err), -1);
    CHECK_EQ_INT(err.code, EACCES);
    snprintf(want, sizeof(want), "%s: could not be run: %s", plain,
             strerror(EACCES));
    CHECK_EQ_STR(err.msg, want);
    CHECK_EQ_INT(out.len, 0);
    /* a folder: EACCES too */
    err_clear(&err);
    CHECK_EQ_INT(proc_run((char *[]){(char *)th_tmpdir(), NULL}, &out, &err),
                 -1);
    CHECK_EQ_INT(err.code, EACCES);
    /* nothing there: ENOENT */
    err_clear(&err);
    CHECK_EQ_INT(proc_run((char *[]){missing, NULL}, &out, &err), -1);
    CHECK_EQ_INT(err.code, ENOENT);
    CHECK_CONTAINS(err.msg, "could not be run: No such file or directory");
    /* not in PATH either */
    err_clear(&err);
    CHECK_EQ_INT(
        proc_run((char *[]){"testyard-no-such-tool", NULL}, &out, &err), -1);
    CHECK_EQ_INT(err.code, ENOENT);
    CHECK_CONTAINS(err.msg, "testyard-no-such-tool: could not be run: ");
    strbuf_release(&out);
    free(missing);
    free(plain);
}

static void
t_opts_env(void)
{
    char *env[] = {"TY_PROC_TEST=from-env", NULL};
    struct proc_opts o = {.env = env};
    struct strbuf out;
    struct err err = {0};

    strbuf_init(&out);
    CHECK_EQ_INT(
        proc_run_opts((char *[]){"/bin/sh", "-c",
                                 "echo \"$TY_PROC_TEST ${HOME:-none}\"", NULL},
                      &o, &out, &err),
        0);
    CHECK_EQ_STR(out.buf, "from-env none\n");
    strbuf_release(&out);
    /* with an environment argv[0] is a path: no PATH search */
    err_clear(&err);
    CHECK_EQ_INT(
        proc_run_opts((char *[]){"sh", "-c", "exit 0", NULL}, &o, NULL, &err),
        -1);
    CHECK_EQ_INT(err.code, ENOENT);
    /* no options is proc_run */
    CHECK_EQ_INT(
        proc_run_opts((char *[]){"sh", "-c", "exit 5", NULL}, NULL, NULL, &err),
        5);
}

static void
t_opts_max_out(void)
{
    struct proc_opts o = {.max_out = 10};
    struct strbuf out;
    struct err err = {0};

    /* far more than a pipe holds: the rest is read and dropped, so the
     * program is not blocked and exits with its own status */
    strbuf_init(&out);
    CHECK_EQ_INT(proc_run_opts((char *[]){"sh", "-c",
                                          "head -c 1000000 /dev/zero | "
                                          "tr '\\0' a; exit 6",
                                          NULL},
                               &o, &out, &err),
                 6);
    CHECK_EQ_INT(out.len, 10);
    CHECK_EQ_STR(out.buf, "aaaaaaaaaa");
    strbuf_release(&out);
}

static void
t_opts_timeout(void)
{
    struct proc_opts o = {.timeout_ms = 200};
    struct strbuf out;
    struct err err = {0};
    int64_t t0 = now_mono_ns();

    /* killed at the deadline, with what it printed before */
    strbuf_init(&out);
    CHECK_EQ_INT(proc_run_opts((char *[]){"sh", "-c",
                                          "echo started; exec "
                                          "sleep 30",
                                          NULL},
                               &o, &out, &err),
                 -1);
    CHECK_EQ_INT(err.code, ETIMEDOUT);
    CHECK_EQ_STR(err.msg, "sh: killed after 200 ms");
    CHECK_EQ_STR(out.buf, "started\n");
    CHECK((now_mono_ns() - t0) / 1000000 < 5000);
    strbuf_release(&out);
    /* one that closed its output and goes on is killed at the deadline
     * too */
    err_clear(&err);
    t0 = now_mono_ns();
    CHECK_EQ_INT(
        proc_run_opts(
            (char *[]){"sh", "-c", "exec >/dev/null 2>&1; sleep 30", NULL}, &o,
            NULL, &err),
        -1);
    CHECK_EQ_INT(err.code, ETIMEDOUT);
    CHECK((now_mono_ns() - t0) / 1000000 < 5000);
    /* a program that ends in time is not touched */
    err_clear(&err);
    o.timeout_ms = 10000;
    CHECK_EQ_INT(
        proc_run_opts((char *[]){"sh", "-c", "exit 2", NULL}, &o, NULL, &err),
        2);
    CHECK_EQ_STR(err.msg, "");
}

static void
t_opts_cwd(void)
{
    char *missing = xasprintf("%s/missing", th_tmpdir());
    struct proc_opts o = {.cwd = th_tmpdir()};
    struct strbuf out;
    struct err err = {0};

    strbuf_init(&out);
    CHECK_EQ_INT(
        proc_run_opts((char *[]){"sh", "-c", "pwd", NULL}, &o, &out, &err), 0);
    CHECK(out.len > 0 && strncmp(out.buf, th_tmpdir(), out.len - 1) == 0);
    strbuf_release(&out);
    /* a folder it cannot enter: as an exec that failed */
    o.cwd = missing;
    CHECK_EQ_INT(
        proc_run_opts((char *[]){"sh", "-c", "pwd", NULL}, &o, NULL, &err), -1);
    CHECK_EQ_INT(err.code, ENOENT);
    CHECK_CONTAINS(err.msg, "sh: could not be run");
    free(missing);
}

static void
t_opts_group(void)
{
    struct proc_opts o = {.timeout_ms = 200, .group = true};
    char *pidfile = xasprintf("%s/bg", th_tmpdir());
    char *script = xasprintf("sleep 30 & echo $! > %s; echo $$ $(cut -d' ' -f5 "
                             "/proc/$$/stat); wait",
                             pidfile);
    struct strbuf out;
    struct err err = {0};
    int pid = 0, pgid = -1, tries = 0;
    char *bg;

    /* its own group, and the deadline kills what it started too (the
     * sleep would hold the pipe open for 30 s otherwise) */
    strbuf_init(&out);
    CHECK_EQ_INT(
        proc_run_opts((char *[]){"sh", "-c", script, NULL}, &o, &out, &err),
        -1);
    CHECK_EQ_INT(err.code, ETIMEDOUT);
    CHECK_EQ_INT(sscanf(out.buf, "%d %d", &pid, &pgid), 2);
    CHECK_EQ_INT(pid, pgid);
    CHECK(pgid != getpgrp());
    bg = th_read(pidfile, NULL);
    CHECK(bg != NULL && atoi(bg) > 0);
    while (bg != NULL && kill(atoi(bg), 0) == 0 && tries++ < 200)
        usleep(10000);
    CHECK(bg != NULL && kill(atoi(bg), 0) < 0);
    free(bg);
    strbuf_release(&out);
    free(script);
    free(pidfile);
}

static void
t_opts_out_fd(void)
{
    char *path = xasprintf("%s/log", th_tmpdir());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    struct proc_opts o = {.max_out = 6, .out_fd = fd};
    struct strbuf out;
    struct err err = {0};
    char *text;

    /* to the descriptor, capped; the buffer is not touched */
    strbuf_init(&out);
    CHECK(fd > 2);
    CHECK_EQ_INT(proc_run_opts(
                     (char *[]){"sh", "-c", "echo hello; echo world >&2", NULL},
                     &o, &out, &err),
                 0);
    CHECK_EQ_INT(out.len, 0);
    text = th_read(path, NULL);
    CHECK_EQ_STR(text, "hello\n");
    free(text);
    close(fd);
    /* a write that fails: the error after the program ended */
    fd = open(path, O_RDONLY);
    o.out_fd = fd;
    CHECK_EQ_INT(
        proc_run_opts((char *[]){"sh", "-c", "echo x", NULL}, &o, NULL, &err),
        -1);
    CHECK_EQ_INT(err.code, EBADF);
    CHECK_CONTAINS(err.msg, "sh: writing its output");
    close(fd);
    strbuf_release(&out);
    free(path);
}

static void
t_exec_pipe(void)
{
    int fds[2];
    struct err err = {0};
    pid_t pid;

    /* the child's exec fails: its errno comes up the pipe */
    CHECK_EQ_INT(proc_exec_pipe(fds, &err), 0);
    pid = fork();
    if (pid == 0) {
        errno = ENOEXEC;
        proc_exec_failed(fds[1]);
    }
    close(fds[1]);
    CHECK_EQ_INT(proc_exec_result(fds[0]), ENOEXEC);
    CHECK_EQ_INT(WEXITSTATUS(th_wait(pid)), 127);
    /* its exec succeeds: the pipe closes on exec, 0 */
    CHECK_EQ_INT(proc_exec_pipe(fds, &err), 0);
    pid = fork();
    if (pid == 0) {
        execlp("true", "true", (char *)NULL);
        proc_exec_failed(fds[1]);
    }
    close(fds[1]);
    CHECK_EQ_INT(proc_exec_result(fds[0]), 0);
    CHECK_EQ_INT(WEXITSTATUS(th_wait(pid)), 0);
}

static const struct th_case cases[] = {
    {"output_captured", t_output_captured},
    {"stdin_is_devnull", t_stdin_is_devnull},
    {"exit_status", t_exit_status},
    {"exec_errno", t_exec_errno},
    {"opts_env", t_opts_env},
    {"opts_max_out", t_opts_max_out},
    {"opts_timeout", t_opts_timeout},
    {"opts_cwd", t_opts_cwd},
    {"opts_group", t_opts_group},
    {"opts_out_fd", t_opts_out_fd},
    {"exec_pipe", t_exec_pipe},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
