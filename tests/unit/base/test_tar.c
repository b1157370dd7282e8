/*
 * test_tar.c — the tar writer, read back by GNU tar: listings, extraction
 * compared byte for byte, modes, mtimes, symlinks, long names (ustar
 * prefix split and pax), gzip, and a failing sink.
 */
#include "base/strbuf.h"
#include "base/tar.h"
#include "th.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Run a shell command built from fmt; returns its exit status and its
 * output (stdout and stderr) in *out when out is not NULL. */
static int
sh(char **out, const char *fmt, ...)
{
    struct strbuf sb, cmd;
    char buf[4096];
    va_list ap;
    FILE *p;
    size_t n;
    int st;

    strbuf_init(&cmd);
    va_start(ap, fmt);
    strbuf_vaddf(&cmd, fmt, ap);
    va_end(ap);
    strbuf_adds(&cmd, " 2>&1");
    strbuf_init(&sb);
    p = popen(cmd.buf, "r");
    while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0)
        strbuf_add(&sb, buf, n);
    st = p ? pclose(p) : -1;
    strbuf_release(&cmd);
    if (out)
        *out = strbuf_detach(&sb);
    else
        strbuf_release(&sb);
    return st == -1 ? -1 : WEXITSTATUS(st);
}

static void
put_file(const char *path, const void *data, size_t len, mode_t mode,
         time_t mtime)
{
    struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};
    struct err err = {0};

    CHECK_MSG(file_write_atomic(path, data, len, &err) == 0, "%s", err.msg);
    CHECK(chmod(path, mode) == 0);
    CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
}

/* A long path: 6 directories of 40 characters and a 90-byte file name,
 * about 340 bytes, so it needs a pax record. */
static char *
long_rel(void)
{
    struct strbuf sb;

    strbuf_init(&sb);
    for (int i = 0; i < 6; i++)
        strbuf_addf(&sb, "d%d%039d/", i, 0);
    strbuf_addf(&sb, "f%089d", 7);
    return strbuf_detach(&sb);
}

/* Build a source tree with every kind of entry under dir. */
static void
make_tree(const char *dir)
{
    char *rel = long_rel(), *p, *d;
    char big[200001];
    char ltarget[200];
    struct err err = {0};

    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (char)(i * 2654435761u >> 13);
    p = xasprintf("%s/g/0", dir);
    CHECK(mkdir_p(p, &err) == 0);
    free(p);
    p = xasprintf("%s/g/0/run.out", dir);
    put_file(p, "{\"event\":1}\n", 12, 0644, 1700000000);
    free(p);
    p = xasprintf("%s/g/0/empty", dir);
    put_file(p, "", 0, 0600, 1700000001);
    free(p);
    p = xasprintf("%s/g/0/big.bin", dir);
    put_file(p, big, sizeof(big), 0755, 1700000002);
    free(p);
    p = xasprintf("%s/g/0/exact", dir);
    put_file(p, big, 512, 0640, 1700000003);
    free(p);
    p = xasprintf("%s/%s", dir, rel);
    d = path_dirname(p);
    CHECK(mkdir_p(d, &err) == 0);
    put_file(p, "deep\n", 5, 0644, 1700000004);
    memset(ltarget, 'x', sizeof(ltarget) - 1);
    ltarget[sizeof(ltarget) - 1] = '\0';
    free(p);
    p = xasprintf("%s/g/long-link", dir);
    CHECK(symlink(ltarget, p) == 0);
    free(p);
    p = xasprintf("%s/g/link", dir);
    CHECK(symlink("0/run.out", p) == 0);
    free(p);
    p = xasprintf("%s/g/0", dir);
    CHECK(chmod(p, 0750) == 0);
    free(p);
    free(d);
    free(rel);
}

static void
archive_tree(const char *src, const char *out, bool gzip)
{
    struct err err = {0};
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    struct tar *t;

    CHECK(fd >= 0);
    t = tar_new_fd(fd, gzip);
    CHECK_MSG(tar_add_tree(t, "run1", src, NULL, NULL, &err) == 0, "%s",
              err.msg);
    CHECK_MSG(tar_finish(t, &err) == 0, "%s", err.msg);
    CHECK(tar_entries(t) >= 12);
    CHECK(tar_bytes_out(t) > 0);
    tar_destroy(&t);
    CHECK(t == NULL);
    close(fd);
}

static void
t_tree_gzip_roundtrip(void)
{
    const char *tmp = th_tmpdir();
    char *src = xasprintf("%s/src", tmp), *rel = long_rel(), *out = NULL;
    char *tgz = xasprintf("%s/a.tgz", tmp);

    make_tree(src);
    archive_tree(src, tgz, true);
    CHECK_EQ_INT(sh(NULL, "gzip -t %s/a.tgz", tmp), 0);
    CHECK_EQ_INT(sh(&out, "cd %s && tar -tzvf a.tgz", tmp), 0);
    CHECK_CONTAINS(out, "-rw-r--r-- 0/0");
    CHECK_CONTAINS(out, "run1/g/0/run.out");
    CHECK_CONTAINS(out, "drwxr-x--- ");
    CHECK_CONTAINS(out, "run1/g/link -> 0/run.out");
    CHECK_CONTAINS(out, rel);
    CHECK(strstr(out, "PaxHeaders") == NULL);
    CHECK(strstr(out, "warning") == NULL);
    free(out);
    CHECK_EQ_INT(sh(&out,
                    "cd %s && mkdir x && tar -xzf a.tgz -C x && "
                    "diff -r --no-dereference src x/run1",
                    tmp),
                 0);
    CHECK_EQ_STR(out, "");
    free(out);
    /* modes and mtimes survive */
    CHECK_EQ_INT(sh(&out,
                    "cd %s/x/run1/g/0 && stat -c '%%a %%Y %%n' "
                    "run.out empty big.bin exact && stat -c %%a . && "
                    "readlink ../long-link | wc -c",
                    tmp),
                 0);
    CHECK_EQ_STR(out, "644 1700000000 run.out\n600 1700000001 empty\n"
                      "755 1700000002 big.bin\n640 1700000003 exact\n"
                      "750\n200\n");
    free(out);
    free(tgz);
    free(rel);
    free(src);
}

static int
add_entries(struct tar *t, struct err *err)
{
    struct tar_meta m = {0755, 1234567890, 0, 0};
    struct tar_meta f = {0640, 1234567891, 1000, 1000};
    struct tar_meta neg = {0644, -86400, 0, 0};
    char name[300];

    /* one 250-byte component: no prefix split possible, so pax */
    memset(name, 'n', 250);
    name[250] = '\0';
    if (tar_add_dir(t, "top", &m, err) < 0 ||
        tar_add_data(t, "top/hello.txt", &f, "hello\n", 6, err) < 0 ||
        tar_add_symlink(t, "top/sym", "hello.txt", &m, err) < 0 ||
        tar_add_data(t, name, &f, "x", 1, err) < 0 ||
        tar_add_data(t, "top/old", &neg, "", 0, err) < 0)
        return -1;
    /* a 150-byte directory part and a 90-byte name: ustar prefix split */
    memset(name, 'p', 150);
    name[150] = '/';
    memset(name + 151, 'q', 90);
    name[241] = '\0';
    if (tar_add_data(t, name, &f, "split", 5, err) < 0)
        return -1;
    return tar_finish(t, err);
}

static void
t_entries_plain(void)
{
    const char *tmp = th_tmpdir();
    char *path = xasprintf("%s/b.tar", tmp), *out = NULL;
    char name[300];
    struct err err = {0};
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    struct tar *t = tar_new_fd(fd, false);
    struct stat st;

    CHECK_MSG(add_entries(t, &err) == 0, "%s", err.msg);
    tar_destroy(&t);
    close(fd);
    CHECK(stat(path, &st) == 0 && st.st_size % 512 == 0);
    CHECK_EQ_INT(sh(&out, "cd %s && TZ=UTC tar --full-time -tvf b.tar", tmp),
                 0);
    CHECK_CONTAINS(out, "drwxr-xr-x 0/0               0 2009-02-13 "
                        "23:31:30 top/\n");
    CHECK_CONTAINS(out, "-rw-r----- 1000/1000         6 2009-02-13 "
                        "23:31:31 top/hello.txt\n");
    CHECK_CONTAINS(out, "top/sym -> hello.txt");
    CHECK_CONTAINS(out, "1969-12-31 00:00:00 top/old");
    memset(name + 1, 'n', 250);
    name[0] = ' ';
    name[251] = '\n';
    name[252] = '\0';
    CHECK_CONTAINS(out, name);
    CHECK_CONTAINS(out, "/qqqqqqqqqq");
    free(out);
    CHECK_EQ_INT(
        sh(&out,
           "cd %s && mkdir y && tar --warning=no-timestamp -xf b.tar -C y && "
           "cat y/top/hello.txt y/pppp*/qqqq*",
           tmp),
        0);
    CHECK_EQ_STR(out, "hello\nsplit");
    free(out);
    free(path);
}

struct fail_sink {
    size_t budget; /* bytes accepted before failing */
    size_t got;
};

static int
failing_write(void *arg, const void *data, size_t len, struct err *err)
{
    struct fail_sink *s = arg;

    (void)data;
    if (s->got + len > s->budget)
        return err_set(err, ENOSPC, "sink full");
    s->got += len;
    return 0;
}

static void
t_sink_failure_sticks(void)
{
    struct fail_sink s = {100000, 0};
    struct tar_meta m = {0644, 0, 0, 0};
    struct err err = {0};
    struct tar *t = tar_new_cb(failing_write, &s, false);
    char *big = xcalloc(1, 300000);

    CHECK(tar_add_data(t, "big", &m, big, 300000, &err) < 0);
    CHECK_EQ_INT(err.code, ENOSPC);
    CHECK_CONTAINS(err.msg, "sink full");
    err_clear(&err);
    CHECK(tar_add_data(t, "more", &m, "x", 1, &err) < 0);
    CHECK_CONTAINS(err.msg, "failed earlier");
    CHECK(tar_finish(t, &err) < 0);
    tar_destroy(&t);
    free(big);
}

static void
t_shrunk_file_padded(void)
{
    const char *tmp = th_tmpdir();
    char *src = xasprintf("%s/short", tmp), *path = xasprintf("%s/c.tgz", tmp);
    struct tar_meta m = {0644, 0, 0, 0};
    struct err err = {0};
    char *out = NULL;
    int in, fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    struct tar *t = tar_new_fd(fd, true);

    put_file(src, "abc", 3, 0644, 0);
    in = open(src, O_RDONLY);
    CHECK(tar_add_fd(t, "short", &m, in, 1000, &err) < 0);
    CHECK_CONTAINS(err.msg, "shrank");
    CHECK_MSG(tar_finish(t, &err) == 0, "%s", err.msg);
    tar_destroy(&t);
    close(in);
    close(fd);
    CHECK_EQ_INT(sh(&out, "cd %s && tar -tzvf c.tgz", tmp), 0);
    CHECK_CONTAINS(out, "1000 ");
    free(out);
    free(src);
    free(path);
}

/* A sizeable compressible stream: gzip must both shrink it and round-trip
 * through many output-buffer flushes. */
static void
t_gzip_large(void)
{
    const char *tmp = th_tmpdir();
    char *path = xasprintf("%s/d.tgz", tmp), *out = NULL;
    char *src = xasprintf("%s/five.src", tmp);
    struct tar_meta m = {0644, 1, 0, 0};
    struct err err = {0};
    size_t len = 5 << 20;
    char *data = xmalloc(len);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    struct tar *t = tar_new_fd(fd, true);
    struct stat st;

    for (size_t i = 0; i < len; i++)
        data[i] = "abcdefgh"[(i / 64) % 8];
    CHECK(tar_add_data(t, "five", &m, data, len, &err) == 0);
    CHECK(tar_finish(t, &err) == 0);
    tar_destroy(&t);
    close(fd);
    CHECK(stat(path, &st) == 0 && st.st_size < (off_t)(len / 20));
    put_file(src, data, len, 0644, 1);
    CHECK_EQ_INT(
        sh(&out, "cd %s && tar -xzOf d.tgz five | cmp - five.src", tmp), 0);
    CHECK_EQ_STR(out, "");
    free(out);
    free(src);
    free(data);
    free(path);
}

static void
note_skip(void *arg, const char *name, const char *target)
{
    struct strbuf *sb = arg;

    strbuf_addf(sb, "%s -> %s\n", name, target);
}

/* Links that stay inside the tree are archived as links; absolute ones
 * and ones that climb out are left out and named; a linked folder is
 * never entered. */
static void
t_links_confined(void)
{
    const char *tmp = th_tmpdir();
    char *src = xasprintf("%s/run", tmp), *p, *out = NULL;
    char *tgz = xasprintf("%s/l.tar", tmp);
    struct err err = {0};
    struct strbuf skips;
    struct tar *t;
    int fd;

    p = xasprintf("%s/g/0", src);
    CHECK(mkdir_p(p, &err) == 0);
    free(p);
    p = xasprintf("%s/g/0/run.out", src);
    put_file(p, "x\n", 2, 0644, 1700000000);
    free(p);
    CHECK(sh(NULL,
             "cd %s && ln -s run.out g/0/inside && "
             "ln -s ../../g g/0/up-inside && ln -s /etc g/0/etc && "
             "ln -s ../../../secret g/0/out && ln -s ../x top-out",
             src) == 0);
    strbuf_init(&skips);
    fd = open(tgz, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    t = tar_new_fd(fd, false);
    CHECK_MSG(tar_add_tree(t, "r", src, note_skip, &skips, &err) == 0, "%s",
              err.msg);
    CHECK(tar_finish(t, &err) == 0);
    tar_destroy(&t);
    close(fd);
    CHECK_CONTAINS(skips.buf, "r/g/0/etc -> /etc\n");
    CHECK_CONTAINS(skips.buf, "r/g/0/out -> ../../../secret\n");
    CHECK_CONTAINS(skips.buf, "r/top-out -> ../x\n");
    CHECK(strstr(skips.buf, "inside") == NULL);
    CHECK_EQ_INT(sh(&out, "tar -tvf %s", tgz), 0);
    CHECK_CONTAINS(out, "r/g/0/inside -> run.out");
    CHECK_CONTAINS(out, "r/g/0/up-inside -> ../../g");
    CHECK(strstr(out, "/etc") == NULL && strstr(out, "passwd") == NULL);
    CHECK(strstr(out, "secret") == NULL && strstr(out, "top-out") == NULL);
    strbuf_release(&skips);
    free(out);
    free(src);
    free(tgz);
}

static const struct th_case cases[] = {
    {"tree_gzip_roundtrip", t_tree_gzip_roundtrip},
    {"entries_plain", t_entries_plain},
    {"sink_failure_sticks", t_sink_failure_sticks},
    {"shrunk_file_padded", t_shrunk_file_padded},
    {"gzip_large", t_gzip_large},
    {"links_confined", t_links_confined},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
