/*
 * test_admit_copy.c — the snapshot of a plan's source: files with their
 * owner's mode bits whatever the umask, folders, and nothing else (a link
 * pointing outside is not followed, a fifo is skipped without hanging,
 * .git is left out); each bound passed, a file too large for what may be
 * written (RLIMIT_FSIZE: EFBIG, as a full disk would fail) and an
 * existing destination all fail with nothing left behind but what was
 * there before.
 */
#include "base/util.h"
#include "daemon/admit_int.h"
#include "th.h"
#include "th_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* <tmp>/src (the plan), <tmp>/dst (the task's folder, open in dfd) and
 * <tmp>/outside/secret, which a link in src points at. */
struct fx {
    char *src, *dst;
    int dfd;
};

static void
fx_init(struct fx *f)
{
    const char *tmp = th_tmpdir();

    f->src = xasprintf("%s/src", tmp);
    f->dst = xasprintf("%s/dst", tmp);
    th_write(tmp, "outside/secret", "secret\n");
    th_write(f->src, "manifest.yaml", "name: p\n");
    th_write(f->src, "main.c", "int main(void) { return 0; }\n");
    th_write(f->src, "lib/deep/util.h", "#define X 1\n");
    th_write(f->src, "build/out.o", "obj");
    CHECK(chmod(f->src, 0755) == 0);
    CHECK(mkdir(f->dst, 0700) == 0);
    f->dfd = open(f->dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(f->dfd >= 0);
}

static void
fx_release(struct fx *f)
{
    char *secret = xasprintf("%s/outside/secret", th_tmpdir());
    char *s = th_read(secret, NULL);

    CHECK_EQ_STR(s, "secret\n");
    free(s);
    free(secret);
    close(f->dfd);
    free(f->src);
    free(f->dst);
}

static char *
dst_path(const struct fx *f, const char *rel)
{
    return xasprintf("%s/%s", f->dst, rel);
}

static bool
dst_has(const struct fx *f, const char *rel)
{
    char *p = dst_path(f, rel);
    struct stat st;
    bool yes = lstat(p, &st) == 0;

    free(p);
    return yes;
}

static mode_t
dst_mode(const struct fx *f, const char *rel)
{
    char *p = dst_path(f, rel);
    struct stat st;
    mode_t m = lstat(p, &st) == 0 ? st.st_mode : 0;

    free(p);
    return m;
}

/* Entries of dst/rel, "." and ".." aside. */
static int
dir_count(const struct fx *f, const char *rel)
{
    char *p = dst_path(f, rel);
    DIR *d = opendir(p);
    struct dirent *de;
    int n = 0;

    free(p);
    CHECK(d != NULL);
    while (d != NULL && (de = readdir(d)) != NULL)
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    if (d != NULL)
        closedir(d);
    return n;
}

static int
dst_count(const struct fx *f)
{
    return dir_count(f, ".");
}

static void
t_copy(void)
{
    struct fx f;
    struct err err = {0};
    char *p, *s;

    fx_init(&f);
    th_write(f.src, "run.sh", "#!/bin/sh\n");
    th_write(f.src, "secret.key", "k");
    th_write(f.src, ".git/HEAD", "ref: refs/heads/main\n");
    th_write(f.src, ".config/x", "kept\n");
    p = xasprintf("%s/run.sh", f.src);
    CHECK(chmod(p, 0750) == 0);
    free(p);
    p = xasprintf("%s/secret.key", f.src);
    CHECK(chmod(p, 0600) == 0);
    free(p);
    umask(077);
    CHECK_MSG(admit__copy_tree(f.src, f.dfd, "plans/p", &err) == 0, "%s",
              err.msg);
    p = dst_path(&f, "plans/p/main.c");
    s = th_read(p, NULL);
    CHECK_EQ_STR(s, "int main(void) { return 0; }\n");
    free(s);
    free(p);
    p = dst_path(&f, "plans/p/lib/deep/util.h");
    s = th_read(p, NULL);
    CHECK_EQ_STR(s, "#define X 1\n");
    free(s);
    free(p);
    CHECK(dst_has(&f, "plans/p/build/out.o"));
    CHECK(dst_has(&f, "plans/p/.config/x"));
    CHECK(!dst_has(&f, "plans/p/.git"));
    /* the owner's bits, umask or not; never the group's or others' */
    CHECK_EQ_INT(dst_mode(&f, "plans/p/run.sh") & 07777, 0700);
    CHECK_EQ_INT(dst_mode(&f, "plans/p/secret.key") & 07777, 0600);
    CHECK_EQ_INT(dst_mode(&f, "plans/p/main.c") & 07777, 0600);
    CHECK(S_ISDIR(dst_mode(&f, "plans/p/lib")));
    /* nothing but plans/ in the task's folder, no temporary left */
    CHECK_EQ_INT(dst_count(&f), 1);
    /* a second copy to the same place is refused and changes nothing */
    err_clear(&err);
    CHECK(admit__copy_tree(f.src, f.dfd, "plans/p", &err) < 0);
    CHECK_CONTAINS(err.msg, "plans/p: exists already");
    CHECK(dst_has(&f, "plans/p/main.c"));
    CHECK_EQ_INT(dst_count(&f), 1);
    fx_release(&f);
}

/* A link at src/rel pointing at target. */
static void
src_link(const struct fx *f, const char *target, const char *rel)
{
    char *p = xasprintf("%s/%s", f->src, rel);

    CHECK(symlink(target, p) == 0);
    free(p);
}

static void
t_skips(void)
{
    struct fx f;
    struct err err = {0};
    char *out = xasprintf("%s/outside", th_tmpdir());
    char *secret = xasprintf("%s/secret", out);
    char *fifo;

    fx_init(&f);
    src_link(&f, out, "out");
    src_link(&f, secret, "lib/secret");
    src_link(&f, "main.c", "main-link.c");
    fifo = xasprintf("%s/fifo", f.src);
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK_MSG(admit__copy_tree(f.src, f.dfd, "p", &err) == 0, "%s", err.msg);
    CHECK(dst_has(&f, "p/main.c"));
    CHECK(!dst_has(&f, "p/out"));
    CHECK(!dst_has(&f, "p/lib/secret"));
    CHECK(!dst_has(&f, "p/main-link.c"));
    CHECK(!dst_has(&f, "p/fifo"));
    CHECK(dst_has(&f, "p/lib/deep/util.h"));
    free(fifo);
    free(secret);
    free(out);
    fx_release(&f);
}

/* A failed copy into dst/<rel> leaves dst as it was: `before` entries. */
static void
check_failed(struct fx *f, const char *rel, const struct admit_copy_limits *lim,
             const char *msg, int before)
{
    struct err err = {0};

    CHECK(admit__copy_tree_limits(f->src, f->dfd, rel, lim, &err) < 0);
    CHECK_CONTAINS(err.msg, msg);
    CHECK_EQ_INT(dst_count(f), before);
}

static void
t_bounds(void)
{
    struct fx f;
    struct admit_copy_limits lim = {
        .bytes = 1 << 20, .entries = 100, .depth = 8};

    fx_init(&f);
    th_write(f.dst, "mine/keep", "mine\n");
    /* 7 entries: manifest.yaml main.c lib lib/deep lib/deep/util.h build
     * build/out.o */
    lim.entries = 6;
    check_failed(&f, "plans/p", &lim,
                 "more than 6 files and folders (copied whole at submit)", 1);
    lim.entries = 7;
    lim.depth = 1;
    check_failed(&f, "mine/p", &lim,
                 "/lib/deep: folders nested more than 1 deep", 1);
    CHECK(dst_has(&f, "mine/keep"));
    CHECK_EQ_INT(dir_count(&f, "mine"), 1);
    lim.depth = 2;
    /* 52 bytes: 8 + 29 + 12 + 3 */
    lim.bytes = 51;
    check_failed(&f, "a/b/c", &lim, "more than 51 B of files", 1);
    lim.bytes = 52;
    CHECK(admit__copy_tree_limits(f.src, f.dfd, "a/b/c", &lim, NULL) == 0);
    CHECK(dst_has(&f, "a/b/c/lib/deep/util.h"));
    fx_release(&f);
}

/* The real bound on bytes, with a sparse file: refused before a byte of
 * it is read. */
static void
t_bound_bytes_default(void)
{
    struct fx f;
    struct err err = {0};
    char *p;
    int fd;

    fx_init(&f);
    p = xasprintf("%s/lib/big.bin", f.src);
    fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)ADMIT_COPY_BYTES + 1) == 0);
    close(fd);
    free(p);
    CHECK(admit__copy_tree(f.src, f.dfd, "plans/p", &err) < 0);
    CHECK_CONTAINS(err.msg, "big.bin: the plan's source holds more than "
                            "64.0 MiB of files");
    CHECK_EQ_INT(err.status, EXIT_DATAERR);
    CHECK_EQ_INT(dst_count(&f), 0);
    fx_release(&f);
}

static void
t_bound_entries_default(void)
{
    struct fx f;
    struct err err = {0};
    char *many;

    fx_init(&f);
    /* 7 in the fixture and many/ with 9993 files make 10001 */
    many = xasprintf("%s/many", f.src);
    CHECK(mkdir(many, 0700) == 0);
    for (int i = 0; i < ADMIT_COPY_ENTRIES - 7; i++) {
        char *p = xasprintf("%s/%d", many, i);
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);

        CHECK(fd >= 0);
        close(fd);
        free(p);
    }
    free(many);
    CHECK(admit__copy_tree(f.src, f.dfd, "p", &err) < 0);
    CHECK_CONTAINS(err.msg, "more than 10000 files and folders");
    CHECK_EQ_INT(dst_count(&f), 0);
    fx_release(&f);
}

/* Writes past RLIMIT_FSIZE fail with EFBIG once SIGXFSZ is ignored: the
 * same path as ENOSPC, without filling a disk. */
static void
t_write_fails(void)
{
    struct fx f;
    struct err err = {0};
    struct rlimit old, rl;
    char big[8192];
    int rc;

    fx_init(&f);
    memset(big, 'x', sizeof(big));
    big[sizeof(big) - 1] = '\0';
    th_write(f.src, "lib/big.txt", big);
    signal(SIGXFSZ, SIG_IGN);
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    rl = old;
    rl.rlim_cur = 4096;
    CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
    rc = admit__copy_tree(f.src, f.dfd, "plans/p", &err);
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    CHECK(rc < 0);
    CHECK_CONTAINS(err.msg, "big.txt: copying into the task's snapshot");
    CHECK_EQ_INT(err.code, EFBIG);
    CHECK_EQ_INT(err.status, EXIT_IOERR);
    CHECK_EQ_INT(dst_count(&f), 0);
    fx_release(&f);
}

static void
t_bad_args(void)
{
    struct fx f;
    struct admit_copy_limits lim = {1 << 20, 100, 8};
    static const char *const rels[] = {"",     "/abs", "../up", "a/../b",
                                       "a//b", "./a",  "a/",    "a/."};

    fx_init(&f);
    for (size_t i = 0; i < ARRAY_LEN(rels); i++)
        check_failed(&f, rels[i], &lim, "expected a relative path", 0);
    free(f.src);
    f.src = xasprintf("%s/nothing", th_tmpdir());
    check_failed(&f, "p", &lim, "/nothing: No such file", 0);
    fx_release(&f);
}

/* A parent of rel that is a link is not followed out of dst. */
static void
t_dst_link(void)
{
    struct fx f;
    struct admit_copy_limits lim = {1 << 20, 100, 8};
    char *p, *q;

    fx_init(&f);
    p = xasprintf("%s/outside", th_tmpdir());
    q = dst_path(&f, "plans");
    CHECK(symlink(p, q) == 0);
    check_failed(&f, "plans/p", &lim, "plans: ", 1);
    free(q);
    q = xasprintf("%s/p", p);
    CHECK(!path_exists(q));
    free(q);
    free(p);
    fx_release(&f);
}

static const struct th_case cases[] = {
    {"copy", t_copy},
    {"skips", t_skips},
    {"bounds", t_bounds},
    {"bound_bytes_default", t_bound_bytes_default},
    {"bound_entries_default", t_bound_entries_default},
    {"write_fails", t_write_fails},
    {"bad_args", t_bad_args},
    {"dst_link", t_dst_link},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
