/*
 * test_io.c — the file helpers the runner and the SDK share (ty_io.h): the
 * write loop, mkdir -p and the atomic write, which leaves a file whole or
 * not at all, replaces a link under its name without following it, and
 * leaves no temporary file behind when it fails.
 */
#include "th.h"
#include "th_files.h"
#include "ty_io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* th_tmpdir()/rel in a static buffer. */
static const char *
at(const char *rel)
{
    static char buf[4][PATH_MAX];
    static int next;
    char *p = buf[next++ % 4];

    snprintf(p, PATH_MAX, "%s/%s", th_tmpdir(), rel);
    return p;
}

static bool
is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Entries in th_tmpdir(), "." and ".." left out. */
static int
entries(void)
{
    DIR *d = opendir(th_tmpdir());
    struct dirent *e;
    int n = 0;

    while (d != NULL && (e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d != NULL)
        closedir(d);
    return n;
}

static void
t_write_all(void)
{
    static char big[1 << 20];
    int p[2];
    size_t got = 0;

    memset(big, 'x', sizeof(big));
    CHECK_EQ_INT(pipe(p), 0);
    /* a pipe takes 64 KiB at a time: the loop goes on after short writes */
    if (fork() == 0) {
        close(p[0]);
        _exit(ty__write_all(p[1], big, sizeof(big)) == 0 ? 0 : 1);
    }
    close(p[1]);
    for (ssize_t n; (n = read(p[0], big, sizeof(big))) > 0;)
        got += (size_t)n;
    close(p[0]);
    CHECK_EQ_INT(got, sizeof(big));
    CHECK_EQ_INT(ty__write_all(-1, "x", 1), -EBADF);
}

static void
t_mkdir_p(void)
{
    size_t failed = 99;

    CHECK_EQ_INT(ty__mkdir_p(at("a/b//c/"), 0755, &failed), 0);
    CHECK(is_dir(at("a/b/c")));
    CHECK_EQ_INT(failed, 99);
    /* existing folders are fine */
    CHECK_EQ_INT(ty__mkdir_p(at("a/b"), 0755, NULL), 0);
    CHECK_EQ_INT(ty__mkdir_p("/", 0755, NULL), 0);
}

static void
t_mkdir_p_fails(void)
{
    const char *top = th_tmpdir();
    size_t failed = 0;

    th_write(top, "file", "x\n");
    CHECK_EQ_INT(ty__mkdir_p(at("file"), 0755, &failed), -ENOTDIR);
    CHECK_EQ_INT(failed, strlen(at("file")));
    /* a file on the way: the prefix that failed is named */
    CHECK_EQ_INT(ty__mkdir_p(at("file/x/y"), 0755, &failed), -ENOTDIR);
    CHECK_EQ_INT(failed, strlen(at("file")));
    CHECK_EQ_INT(ty__mkdir_p("", 0755, &failed), -ENOENT);
}

static void
t_mkdir_p_denied(void)
{
    const char *top = th_tmpdir();
    size_t failed = 0;

    CHECK_EQ_INT(chmod(top, 0555), 0);
    if (access(at("."), W_OK) == 0) {
        chmod(top, 0755);
        th_skip("running as root: permissions do not stop mkdir");
    }
    CHECK_EQ_INT(ty__mkdir_p(at("new/sub"), 0755, &failed), -EACCES);
    CHECK_EQ_INT(failed, strlen(at("new")));
    chmod(top, 0755);
}

static void
t_atomic(void)
{
    char *text;

    CHECK_EQ_INT(ty__write_atomic(at("out.json"), "{}\n", 3, 0600), 0);
    text = th_read(at("out.json"), NULL);
    CHECK_EQ_STR(text, "{}\n");
    free(text);
    CHECK_EQ_INT(ty__write_atomic(at("out.json"), "[1]\n", 4, 0600), 0);
    text = th_read(at("out.json"), NULL);
    CHECK_EQ_STR(text, "[1]\n");
    free(text);
    CHECK_EQ_INT(entries(), 1);
}

/* A link planted under the name is replaced, its target left alone. */
static void
t_atomic_link(void)
{
    char *text;
    struct stat st;

    th_write(th_tmpdir(), "target", "precious\n");
    CHECK_EQ_INT(symlink(at("target"), at("out")), 0);
    CHECK_EQ_INT(ty__write_atomic(at("out"), "new\n", 4, 0644), 0);
    CHECK(lstat(at("out"), &st) == 0 && S_ISREG(st.st_mode));
    text = th_read(at("target"), NULL);
    CHECK_EQ_STR(text, "precious\n");
    free(text);
}

static void
t_atomic_fails(void)
{
    static char name[NAME_MAX + 1];

    CHECK_EQ_INT(ty__write_atomic(at("none/out"), "x", 1, 0644), -ENOENT);
    CHECK_EQ_INT(ty__write_atomic_at(AT_FDCWD, "a/b", "x", 1, 0644), -EINVAL);
    memset(name, 'n', NAME_MAX - 4);
    CHECK_EQ_INT(ty__write_atomic(at(name), "x", 1, 0644), -ENAMETOOLONG);
    /* a folder under the name: the rename fails, nothing is left */
    CHECK_EQ_INT(mkdir(at("dir"), 0755), 0);
    th_write(th_tmpdir(), "dir/in", "x\n");
    CHECK(ty__write_atomic(at("dir"), "x", 1, 0644) < 0);
    CHECK_EQ_INT(ty__write_atomic(at("dir/"), "x", 1, 0644), -EINVAL);
    CHECK_EQ_INT(entries(), 1);
}

/* Room for part of the file (the size limit stands in for a full disk):
 * the old file stays and no temporary file is left. */
static void
t_atomic_full(void)
{
    static char big[4096];
    struct rlimit old, rl;
    char *text;
    int rc;

    th_write(th_tmpdir(), "out", "old\n");
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old);
    rl = old;
    rl.rlim_cur = 1000;
    CHECK_EQ_INT(setrlimit(RLIMIT_FSIZE, &rl), 0);
    rc = ty__write_atomic(at("out"), big, sizeof(big), 0644);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    CHECK_EQ_INT(rc, -EFBIG);
    text = th_read(at("out"), NULL);
    CHECK_EQ_STR(text, "old\n");
    free(text);
    CHECK_EQ_INT(entries(), 1);
}

/* ty__commit_at closes the descriptor and removes tmp when it fails. */
static void
t_commit_fails(void)
{
    int dirfd = open(th_tmpdir(), O_RDONLY | O_DIRECTORY);
    int fd = openat(dirfd, "t.tmp", O_WRONLY | O_CREAT, 0644);

    CHECK_EQ_INT(mkdir(at("busy"), 0755), 0);
    th_write(th_tmpdir(), "busy/in", "x\n");
    CHECK(ty__commit_at(fd, dirfd, "t.tmp", "busy", true) < 0);
    CHECK_EQ_INT(faccessat(dirfd, "t.tmp", F_OK, 0), -1);
    CHECK_EQ_INT(close(fd), -1);
    fd = openat(dirfd, "t.tmp", O_WRONLY | O_CREAT, 0644);
    CHECK_EQ_INT(ty__commit_at(fd, dirfd, "t.tmp", "done", true), 0);
    CHECK_EQ_INT(faccessat(dirfd, "done", F_OK, 0), 0);
    close(dirfd);
}

static const struct th_case cases[] = {
    {"write_all", t_write_all},
    {"mkdir_p", t_mkdir_p},
    {"mkdir_p_fails", t_mkdir_p_fails},
    {"mkdir_p_denied", t_mkdir_p_denied},
    {"atomic", t_atomic},
    {"atomic_link", t_atomic_link},
    {"atomic_fails", t_atomic_fails},
    {"atomic_full", t_atomic_full},
    {"commit_fails", t_commit_fails},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
