/*
 * test_fsat.c — opening beneath a folder without following links: a link
 * at the last, a middle or the first component, "..", absolute paths,
 * folders made through a planted link, reads of a link and of a FIFO,
 * moves over a link and pruning. Every case runs twice: with openat2 and
 * with the component-by-component walk used where the kernel lacks it.
 */
#include "base/fsat.h"
#include "th.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* <tmp>/root (the folder resolved beneath) and <tmp>/outside holding
 * secret, which no case may change. */
struct fx {
    char *root, *outside, *secret;
    int fd;
};

static void
fx_init(struct fx *f)
{
    const char *tmp = th_tmpdir();
    struct err err = {0};
    FILE *fp;

    f->root = xasprintf("%s/root", tmp);
    f->outside = xasprintf("%s/outside", tmp);
    f->secret = xasprintf("%s/outside/secret", tmp);
    CHECK(mkdir(f->root, 0755) == 0 && mkdir(f->outside, 0755) == 0);
    fp = fopen(f->secret, "w");
    CHECK(fp != NULL);
    fputs("secret\n", fp);
    fclose(fp);
    f->fd = fsat_root(f->root, &err);
    CHECK_MSG(f->fd >= 0, "%s", err.msg);
}

static void
fx_release(struct fx *f)
{
    struct err err = {0};
    size_t len = 0;
    char *s = file_read(f->secret, 1024, &len, &err);

    CHECK_EQ_STR(s, "secret\n");
    free(s);
    close(f->fd);
    free(f->root);
    free(f->outside);
    free(f->secret);
}

static void
link_in(const struct fx *f, const char *target, const char *name)
{
    char *p = xasprintf("%s/%s", f->root, name);
    char *d = path_dirname(p);
    struct err err = {0};

    CHECK(mkdir_p(d, &err) == 0);
    CHECK(symlink(target, p) == 0);
    free(d);
    free(p);
}

static bool
exists_outside(const struct fx *f, const char *name)
{
    char *p = xasprintf("%s/%s", f->outside, name);
    struct stat st;
    bool r = lstat(p, &st) == 0;

    free(p);
    return r;
}

static void
plain_open_and_dirs(void)
{
    struct fx f;
    struct err err = {0};
    int fd, d;

    fx_init(&f);
    d = fsat_dir(f.fd, "g/0/sub", true, 0755, &err);
    CHECK_MSG(d >= 0, "%s", err.msg);
    close(d);
    fd = fsat_open(f.fd, "g/0/sub/file", O_WRONLY | O_CREAT | O_EXCL, 0644,
                   &err);
    CHECK_MSG(fd >= 0, "%s", err.msg);
    CHECK(write(fd, "hi", 2) == 2);
    close(fd);
    fd = fsat_open(f.fd, "./g//0/sub/./file", O_RDONLY, 0, &err);
    CHECK_MSG(fd >= 0, "%s", err.msg);
    close(fd);
    d = fsat_dir(f.fd, "", false, 0, &err);
    CHECK(d >= 0);
    close(d);
    fx_release(&f);
}

/* A write through a link at the last component: refused, the target is
 * neither truncated nor created. */
static void
last_component(void)
{
    struct fx f;
    struct err err = {0};

    fx_init(&f);
    link_in(&f, f.secret, "g/0/run.out");
    CHECK(fsat_open(f.fd, "g/0/run.out", O_WRONLY | O_CREAT | O_TRUNC, 0644,
                    &err) < 0);
    CHECK_EQ_INT(err.code, ELOOP);
    CHECK_CONTAINS(err.msg, "symbolic link");
    link_in(&f, "../../../outside/new", "g/0/dangling");
    CHECK(fsat_open(f.fd, "g/0/dangling", O_WRONLY | O_CREAT, 0644, &err) < 0);
    CHECK(!exists_outside(&f, "new"));
    fx_release(&f);
}

/* A linked folder in the middle or at the start of the path. */
static void
middle_and_first(void)
{
    struct fx f;
    struct err err = {0};

    fx_init(&f);
    link_in(&f, f.outside, "g/0/heap");
    link_in(&f, f.outside, "top");
    CHECK(fsat_open(f.fd, "g/0/heap/x.pb.gz", O_WRONLY | O_CREAT, 0644, &err) <
          0);
    CHECK_EQ_INT(err.code, ELOOP);
    CHECK(fsat_open(f.fd, "top/secret", O_WRONLY | O_TRUNC, 0, &err) < 0);
    CHECK_EQ_INT(err.code, ELOOP);
    CHECK(fsat_dir(f.fd, "g/0/heap/deeper", true, 0755, &err) < 0);
    CHECK_EQ_INT(err.code, ELOOP);
    CHECK(!exists_outside(&f, "deeper"));
    CHECK(fsat_dir(f.fd, "top", false, 0, &err) < 0);
    CHECK(!exists_outside(&f, "x.pb.gz"));
    fx_release(&f);
}

static void
dotdot_and_absolute(void)
{
    static const char *const bad[] = {"..", "../outside/secret",
                                      "g/../../outside/secret", "g/..",
                                      "/etc/passwd"};
    struct fx f;
    struct err err = {0};
    int d;

    fx_init(&f);
    d = fsat_dir(f.fd, "g", true, 0755, &err);
    close(d);
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        CHECK_MSG(fsat_open(f.fd, bad[i], O_RDONLY, 0, &err) < 0, "%s", bad[i]);
        CHECK_EQ_INT(err.code, EXDEV);
        CHECK(fsat_dir(f.fd, bad[i], true, 0755, &err) < 0);
    }
    fx_release(&f);
}

static void
reads(void)
{
    struct fx f;
    struct err err = {0};
    char *fifo;
    size_t len;
    char *s;

    fx_init(&f);
    link_in(&f, f.secret, "g/0/memory.csv");
    s = fsat_read(f.fd, "g/0/memory.csv", 1024, &len, &err);
    CHECK(s == NULL);
    CHECK_EQ_INT(err.code, ELOOP);
    fifo = xasprintf("%s/g/0/fifo", f.root);
    CHECK(mkfifo(fifo, 0644) == 0);
    s = fsat_read(f.fd, "g/0/fifo", 1024, &len, &err);
    CHECK(s == NULL);
    CHECK_EQ_INT(err.code, EINVAL);
    free(fifo);
    fx_release(&f);
}

/* A move over a link replaces the link, never writes its target. */
static void
move_over_link(void)
{
    struct fx f;
    struct err err = {0};
    char buf[64];
    int fd, g;
    ssize_t n;

    fx_init(&f);
    link_in(&f, f.secret, "g/0/run.out");
    g = fsat_dir(f.fd, "g/0", false, 0, &err);
    CHECK(g >= 0);
    fd = fsat_open(f.fd, "mine", O_WRONLY | O_CREAT | O_EXCL, 0644, &err);
    CHECK(fd >= 0 && write(fd, "logs\n", 5) == 5);
    close(fd);
    CHECK_MSG(fsat_move(f.fd, "mine", g, "run.out", &err) == 0, "%s", err.msg);
    fd = fsat_open(g, "run.out", O_RDONLY, 0, &err);
    CHECK_MSG(fd >= 0, "%s", err.msg);
    n = read(fd, buf, sizeof(buf));
    CHECK_EQ_INT(n, 5);
    close(fd);
    CHECK(fsat_move(f.fd, "a/b", g, "c", &err) < 0);
    close(g);
    fx_release(&f);
}

static void
prune(void)
{
    struct fx f;
    struct err err = {0};
    struct stat st;
    char *kept = NULL, *gone = NULL;
    int d = -1, fd;

    fx_init(&f);
    d = fsat_dir(f.fd, ".runner/g/0", true, 0700, &err);
    close(d);
    d = fsat_dir(f.fd, ".runner/g/1", true, 0700, &err);
    close(d);
    fd = fsat_open(f.fd, ".runner/g/1/run.out", O_WRONLY | O_CREAT, 0600, &err);
    close(fd);
    link_in(&f, f.outside, ".runner/h");
    fsat_prune(f.fd, ".runner");
    kept = xasprintf("%s/.runner/g/1/run.out", f.root);
    gone = xasprintf("%s/.runner/g/0", f.root);
    CHECK(stat(kept, &st) == 0);
    CHECK(lstat(gone, &st) < 0);
    CHECK(stat(f.outside, &st) == 0);
    free(kept);
    free(gone);
    fx_release(&f);
}

#define BOTH(name)                                                             \
    static void t_##name(void)                                                 \
    {                                                                          \
        name();                                                                \
    }                                                                          \
    static void t_##name##_walk(void)                                          \
    {                                                                          \
        fsat__force_walk(true);                                                \
        name();                                                                \
    }

BOTH(plain_open_and_dirs)
BOTH(last_component)
BOTH(middle_and_first)
BOTH(dotdot_and_absolute)
BOTH(reads)
BOTH(move_over_link)
BOTH(prune)

static const struct th_case cases[] = {
    {"plain_open_and_dirs", t_plain_open_and_dirs},
    {"plain_open_and_dirs_walk", t_plain_open_and_dirs_walk},
    {"last_component", t_last_component},
    {"last_component_walk", t_last_component_walk},
    {"middle_and_first", t_middle_and_first},
    {"middle_and_first_walk", t_middle_and_first_walk},
    {"dotdot_and_absolute", t_dotdot_and_absolute},
    {"dotdot_and_absolute_walk", t_dotdot_and_absolute_walk},
    {"reads", t_reads},
    {"reads_walk", t_reads_walk},
    {"move_over_link", t_move_over_link},
    {"move_over_link_walk", t_move_over_link_walk},
    {"prune", t_prune},
    {"prune_walk", t_prune_walk},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
