/*
 * schedule_build.c — what a schedule does before each run: the build
 * command, the version of the source it ran against, and the clock it
 * fires by.
 *
 * The build is the user's own command (`make -C ../myproject`), so it runs
 * through /bin/sh in a process group of its own: a deadline kills the
 * whole group, make and the compilers it started, not only the shell.
 * Its output goes to a log file as it comes (the daemon can show a long
 * build while it runs), capped so a runaway build cannot fill the disk.
 * A build that fails is an answer — the task's outcome is "build-failed"
 * — while a log that cannot be written is the daemon's own error.
 */
#include "daemon/schedule_int.h"

#include "base/proc.h"
#include "base/strbuf.h"
#include "base/util.h"

#include "ty_time.h"
#include "ty_units.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GIT_TIMEOUT_MS 30000
#define CLOCK_FILE_MAX 256

const char *
schedule__build_outcome(const struct schedule_build *b)
{
    return b->ok ? NULL : "build-failed";
}

/* A line of the runner's own into the log; errno of a failed write. */
static int log_line(int fd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
log_line(int fd, const char *fmt, ...)
{
    struct strbuf sb;
    va_list ap;
    int rc;

    strbuf_init(&sb);
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    rc = fd_write_all(fd, sb.buf, sb.len) < 0 ? errno : 0;
    strbuf_release(&sb);
    return rc;
}

static int
timeout_ms(int64_t timeout_ns)
{
    int64_t ms;

    if (timeout_ns <= 0)
        return 0;
    ms = timeout_ns / 1000000;
    return ms > INT_MAX ? INT_MAX : ms < 1 ? 1 : (int)ms;
}

/* Run it and fill out; -1 only for what is not the build's fault. */
static int
run_build(const char *cmd, const char *cwd, int fd, int64_t timeout_ns,
          const atomic_bool *stop, struct schedule_build *out, struct err *err)
{
    struct proc_opts o = {.max_out = SCHEDULE_BUILD_LOG_MAX,
                          .timeout_ms = timeout_ms(timeout_ns),
                          .cwd = cwd,
                          .group = true,
                          .out_fd = fd,
                          .stop = stop};
    char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
    struct err e = {0};
    int64_t t0 = now_mono_ns();
    char took[32];
    int rc;

    rc = proc_run_opts(argv, &o, NULL, &e);
    out->seconds = (double)(now_mono_ns() - t0) / 1e9;
    if (rc < 0 && e.code == ETIMEDOUT) {
        ty__format_duration(timeout_ns, took, sizeof(took));
        out->timed_out = true;
        snprintf(out->reason, sizeof(out->reason), "build timed out after %s",
                 took);
        return 0;
    }
    if (rc < 0 && e.code == ECANCELED) {
        out->stopped = true;
        snprintf(out->reason, sizeof(out->reason),
                 "build killed: the daemon is stopping");
        return 0;
    }
    if (rc < 0) {
        *err = e;
        return err_prefix(err, "build");
    }
    out->exit_status = rc;
    out->ok = rc == 0;
    if (!out->ok)
        snprintf(out->reason, sizeof(out->reason),
                 "build exited with status %d", rc);
    return 0;
}

/* The closing lines of the log; errno of a failed write. */
static int
log_close_lines(int fd, size_t header, struct schedule_build *out)
{
    struct stat st;
    char took[32];
    int e;

    if (fstat(fd, &st) == 0 &&
        (size_t)st.st_size >= header + SCHEDULE_BUILD_LOG_MAX)
        out->log_cut = true;
    ty__format_duration((int64_t)(out->seconds * 1e9), took, sizeof(took));
    if (out->log_cut && (e = log_line(fd, "\n[testyard: output cut at %u MiB]",
                                      SCHEDULE_BUILD_LOG_MAX >> 20)) != 0)
        return e;
    return log_line(fd, "\n[testyard: %s after %s]\n",
                    out->ok ? "build succeeded" : out->reason, took);
}

int
schedule__build(const char *cmd, const char *cwd, const char *log_path,
                int64_t timeout_ns, const atomic_bool *stop,
                struct schedule_build *out, struct err *err)
{
    cleanup_close int fd = -1;
    struct strbuf head;
    size_t header;
    int e;

    memset(out, 0, sizeof(*out));
    out->exit_status = -1;
    fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
              0644);
    if (fd < 0) {
        err_sys(err, errno, "build log %s", log_path);
        return err_status(err, err_io_status(err->code));
    }
    strbuf_init(&head);
    strbuf_addf(&head, "$ %s\n", cmd);
    header = head.len;
    e = fd_write_all(fd, head.buf, head.len) < 0 ? errno : 0;
    strbuf_release(&head);
    if (e == 0 && !path_is_dir(cwd)) {
        snprintf(out->reason, sizeof(out->reason),
                 "build folder %s: no such folder", cwd);
        e = log_line(fd, "[testyard: %s]\n", out->reason);
    } else if (e == 0) {
        if (run_build(cmd, cwd, fd, timeout_ns, stop, out, err) < 0)
            return -1;
        e = log_close_lines(fd, header, out);
    }
    if (e != 0) {
        err_sys(err, e, "build log %s", log_path);
        return err_status(err, err_io_status(e));
    }
    return 0;
}

/* ---- version ---- */

/* Run git with argv, its output (at most max bytes) in *out; -1 with the
 * first line git printed when it fails. */
static int
git(char *const argv[], size_t max, struct strbuf *out, struct err *err)
{
    struct proc_opts o = {.max_out = max, .timeout_ms = GIT_TIMEOUT_MS};
    int rc;

    strbuf_init(out);
    rc = proc_run_opts(argv, &o, out, err);
    if (rc > 0) {
        const char *nl = strchr(out->buf, '\n');

        err_set(err, EINVAL, "exit status %d: %.*s", rc,
                (int)(nl != NULL ? nl - out->buf : (ptrdiff_t)out->len),
                out->buf);
    }
    if (rc != 0) {
        strbuf_release(out);
        return -1;
    }
    return 0;
}

static bool
is_commit(const char *s, size_t len)
{
    if (len != 40 && len != 64)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
            return false;
    }
    return true;
}

int
schedule__version(const char *dir, char *out, size_t len, struct err *err)
{
    char *rev[] = {"git",      "-C",   (char *)dir, "rev-parse",
                   "--verify", "HEAD", NULL};
    char *status[] = {"git",    "--no-optional-locks", "-C", (char *)dir,
                      "status", "--porcelain",         NULL};
    struct strbuf sha, st;
    bool dirty;
    int n;

    if (git(rev, 4096, &sha, err) < 0)
        return err_prefix(err, "version-from %s: git rev-parse HEAD", dir);
    while (sha.len > 0 && isspace((unsigned char)sha.buf[sha.len - 1]))
        sha.buf[--sha.len] = '\0';
    if (!is_commit(sha.buf, sha.len)) {
        err_set(err, EINVAL,
                "version-from %s: git rev-parse HEAD: expected a commit, "
                "found \"%.80s\"",
                dir, sha.buf);
        strbuf_release(&sha);
        return -1;
    }
    if (git(status, 1, &st, err) < 0) {
        strbuf_release(&sha);
        return err_prefix(err, "version-from %s: git status", dir);
    }
    dirty = st.len > 0;
    strbuf_release(&st);
    n = snprintf(out, len, "%s%s", sha.buf, dirty ? "-dirty" : "");
    strbuf_release(&sha);
    if (n < 0 || (size_t)n >= len)
        return err_set(err, ENOBUFS, "version-from %s: %d bytes needed", dir,
                       n + 1);
    return 0;
}

/* ---- the clock ---- */

int64_t
schedule__clock_now(struct err *err)
{
    const char *v = getenv("TESTYARD_CLOCK");
    cleanup_free char *text = NULL;
    int64_t ns;
    size_t len;

    if (v == NULL || v[0] == '\0')
        return schedule__floor_div(now_wall_ns(), 1000000000);
    if (v[0] == '/') {
        text = file_read(v, CLOCK_FILE_MAX, &len, err);
        if (text == NULL)
            return err_prefix(err, "TESTYARD_CLOCK");
        while (len > 0 && isspace((unsigned char)text[len - 1]))
            text[--len] = '\0';
    } else {
        text = xstrdup(v);
    }
    if (ty__parse_rfc3339(text, &ns) < 0)
        return err_set(err, EINVAL,
                       "TESTYARD_CLOCK: found \"%.64s\", expected an RFC 3339 "
                       "time or the path of a file holding one",
                       text);
    return schedule__floor_div(ns, 1000000000);
}
