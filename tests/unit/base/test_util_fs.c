/*
 * test_util_fs.c — the file helpers the run folder's safety rests on:
 * rm_rf removes a tree and never follows a link in it (nor the path
 * itself when it is a link), gives up on a tree nested too deep, and
 * fd_append_whole cuts a record that did not fit back off the file.
 */
#include "th.h"
#include "th_files.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* A folder outside the tree, with a file in it, that must survive. */
static char *
outside(void)
{
    char *dir = path_join(th_tmpdir(), "outside");

    CHECK_EQ_INT(mkdir(dir, 0755), 0);
    th_write(dir, "precious", "keep me\n");
    return dir;
}

static bool
precious_left(const char *dir)
{
    cleanup_free char *p = path_join(dir, "precious");

    return path_exists(p);
}

static void
t_links_not_followed(void)
{
    cleanup_free char *out = outside();
    cleanup_free char *tree = path_join(th_tmpdir(), "tree");
    cleanup_free char *sub = path_join(tree, "sub");
    cleanup_free char *l1 = path_join(tree, "to-dir");
    cleanup_free char *l2 = path_join(sub, "to-file");
    cleanup_free char *f = path_join(out, "precious");
    struct err err = {0};

    CHECK_EQ_INT(mkdir(tree, 0755), 0);
    CHECK_EQ_INT(mkdir(sub, 0755), 0);
    th_write(sub, "data", "x\n");
    CHECK_EQ_INT(symlink(out, l1), 0);
    CHECK_EQ_INT(symlink(f, l2), 0);
    CHECK_MSG(rm_rf(tree, &err) == 0, "%s", err.msg);
    CHECK(!path_exists(tree));
    CHECK(precious_left(out));
}

static void
t_path_is_link(void)
{
    cleanup_free char *out = outside();
    cleanup_free char *link = path_join(th_tmpdir(), "link");
    struct err err = {0};
    struct stat st;

    CHECK_EQ_INT(symlink(out, link), 0);
    CHECK_MSG(rm_rf(link, &err) == 0, "%s", err.msg);
    CHECK(lstat(link, &st) < 0 && errno == ENOENT);
    CHECK(precious_left(out));
    CHECK_EQ_INT(rm_rf(link, &err), 0); /* absent: nothing to do */
}

static void
t_too_deep(void)
{
    cleanup_free char *top = path_join(th_tmpdir(), "deep");
    int fd, next;
    struct err err = {0};

    CHECK_EQ_INT(mkdir(top, 0755), 0);
    fd = open(top, O_RDONLY | O_DIRECTORY);
    for (int i = 0; i < 300 && fd >= 0; i++) {
        CHECK_EQ_INT(mkdirat(fd, "d", 0755), 0);
        next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
        close(fd);
        fd = next;
    }
    if (fd >= 0)
        close(fd);
    CHECK_EQ_INT(rm_rf(top, &err), -1);
    CHECK_EQ_INT(err.code, ELOOP);
    CHECK_CONTAINS(err.msg, "nested deeper than 256 folders");
    CHECK(path_exists(top));
}

static void
t_append_whole(void)
{
    cleanup_free char *path = path_join(th_tmpdir(), "log.jsonl");
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    char *text;
    size_t len;

    CHECK_EQ_INT(fd_append_whole(fd, "{\"a\":1}\n", 8), 0);
    CHECK_EQ_INT(fd_append_whole(fd, "{\"b\":2}\n", 8), 0);
    close(fd);
    text = file_read(path, 1024, &len, NULL);
    CHECK_EQ_STR(text, "{\"a\":1}\n{\"b\":2}\n");
    free(text);
    /* A descriptor that cannot write fails with its errno, file intact. */
    fd = open(path, O_RDONLY);
    CHECK_EQ_INT(fd_append_whole(fd, "{\"c\":3}\n", 8), -1);
    CHECK_EQ_INT(errno, EBADF);
    close(fd);
    text = file_read(path, 1024, &len, NULL);
    CHECK_EQ_INT(len, 16);
    free(text);
}

/* Room for half a record (the file size limit stands in for a full disk):
 * the half that was written is cut back off. */
static void
t_append_short(void)
{
    cleanup_free char *path = path_join(th_tmpdir(), "log.jsonl");
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    struct rlimit rl = {.rlim_cur = 20, .rlim_max = RLIM_INFINITY};
    char *text;
    size_t len;

    signal(SIGXFSZ, SIG_IGN);
    CHECK_EQ_INT(fd_append_whole(fd, "{\"a\":1}\n{\"b\":2}\n", 16), 0);
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = 20;
    CHECK_EQ_INT(setrlimit(RLIMIT_FSIZE, &rl), 0);
    CHECK_EQ_INT(fd_append_whole(fd, "{\"c\":3}\n", 8), -1);
    CHECK_EQ_INT(errno, ENOSPC);
    CHECK_EQ_INT(fd_append_whole(fd, "{\"d\":4}\n", 8), -1);
    close(fd);
    text = file_read(path, 1024, &len, NULL);
    CHECK_EQ_STR(text, "{\"a\":1}\n{\"b\":2}\n");
    free(text);
}

static const struct th_case cases[] = {
    {"links_not_followed", t_links_not_followed},
    {"path_is_link", t_path_is_link},
    {"too_deep", t_too_deep},
    {"append_whole", t_append_whole},
    {"append_short", t_append_short},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
