/*
 * test_instlog.c — capped run.out / run.err: under the limit the stream is
 * kept whole; past it the head and the tail stay, cut at line ends, with
 * one marker line whose count adds up; the files wait in .runner and are
 * moved over whatever the instance left (a link to a host file included,
 * which stays untouched).
 */
#include "base/fsat.h"
#include "base/instlog.h"
#include "base/strbuf.h"
#include "th.h"
#include "base/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *
slurp(const char *dir, const char *rel, size_t *len)
{
    char *p = xasprintf("%s/%s", dir, rel);
    struct err err = {0};
    char *s = file_read(p, 1 << 26, len, &err);

    CHECK_MSG(s != NULL, "%s", err.msg);
    free(p);
    return s;
}

static void
t_under_limit_whole(void)
{
    const char *tmp = th_tmpdir();
    struct err err = {0};
    int fd = fsat_root(tmp, &err);
    struct instlog *l = instlog_open(fd, "g", 0, 8192, &err);
    size_t len;
    char *s;

    CHECK_MSG(l != NULL, "%s", err.msg);
    CHECK(instlog_write(l, 1, "hello\n", 6, &err) == 0);
    CHECK(instlog_write(l, 2, "oops\n", 5, &err) == 0);
    CHECK_MSG(instlog_finish(l, &err) == 0, "%s", err.msg);
    s = slurp(tmp, "g/0/run.out", &len);
    CHECK_EQ_STR(s, "hello\n");
    free(s);
    s = slurp(tmp, "g/0/run.err", &len);
    CHECK_EQ_STR(s, "oops\n");
    free(s);
    instlog_destroy(&l);
    CHECK(l == NULL);
    close(fd);
}

/* Lines "line N\n" far past the limit, in pieces of odd sizes. */
static uint64_t
flood(struct instlog *l, int lines)
{
    struct strbuf sb;
    uint64_t total;
    struct err err = {0};

    strbuf_init(&sb);
    for (int i = 0; i < lines; i++)
        strbuf_addf(&sb, "line %d\n", i);
    for (size_t at = 0; at < sb.len;) {
        size_t n = sb.len - at < 777 ? sb.len - at : 777;

        CHECK(instlog_write(l, 1, sb.buf + at, n, &err) == 0);
        at += n;
    }
    total = sb.len;
    strbuf_release(&sb);
    return total;
}

static void
t_head_tail_marker(void)
{
    const char *tmp = th_tmpdir();
    struct err err = {0};
    int fd = fsat_root(tmp, &err);
    struct instlog *l = instlog_open(fd, "g", 1, 16384, &err);
    uint64_t total = flood(l, 100000), cut = 0;
    char last[32], *s, *m;
    size_t len;

    CHECK_EQ_INT(instlog_total(l, 1), total);
    CHECK_MSG(instlog_finish(l, &err) == 0, "%s", err.msg);
    s = slurp(tmp, "g/1/run.out", &len);
    CHECK(len <= 16384 + 128);
    CHECK(strncmp(s, "line 0\nline 1\n", 14) == 0);
    snprintf(last, sizeof(last), "\nline %d\n", 99999);
    CHECK(strcmp(s + len - strlen(last), last) == 0);
    m = strstr(s, "\n[testyard: ");
    CHECK(m != NULL);
    CHECK(m != NULL &&
          sscanf(m, "\n[testyard: %" SCNu64 " bytes of stdout cut", &cut) == 1);
    /* Everything kept plus what the marker says was cut is everything. */
    CHECK_EQ_INT(len - (strchr(m + 1, '\n') - m), total - cut);
    CHECK(strstr(m + 1, "\nline ") != NULL);
    free(s);
    instlog_destroy(&l);
    close(fd);
}

static void
t_replaces_planted_link(void)
{
    const char *tmp = th_tmpdir();
    struct err err = {0};
    char *victim = xasprintf("%s/victim", tmp);
    char *dir = xasprintf("%s/run/g/0", tmp);
    char *ln = xasprintf("%s/run.out", dir);
    char *root = xasprintf("%s/run", tmp);
    FILE *fp = fopen(victim, "w");
    struct instlog *l;
    struct stat st;
    size_t len;
    char *s;
    int fd;

    fputs("host file\n", fp);
    fclose(fp);
    CHECK(mkdir_p(dir, &err) == 0);
    CHECK(symlink(victim, ln) == 0);
    fd = fsat_root(root, &err);
    l = instlog_open(fd, "g", 0, 0, &err);
    CHECK(instlog_write(l, 1, "from the container\n", 19, &err) == 0);
    CHECK_MSG(instlog_finish(l, &err) == 0, "%s", err.msg);
    CHECK(lstat(ln, &st) == 0 && S_ISREG(st.st_mode));
    s = slurp(tmp, "victim", &len);
    CHECK_EQ_STR(s, "host file\n");
    free(s);
    free(ln);
    ln = xasprintf("%s/.runner/g/0/run.out", root);
    CHECK(lstat(ln, &st) < 0 && errno == ENOENT);
    instlog_destroy(&l);
    close(fd);
    free(victim);
    free(dir);
    free(ln);
    free(root);
}

/* A restarted instance's logs: appended to what the first run wrote, the
 * cap counting both runs, under the limit and past it. */
static void
t_resume_appends(void)
{
    const char *tmp = th_tmpdir();
    struct err err = {0};
    int fd = fsat_root(tmp, &err);
    struct instlog *l = instlog_open(fd, "g", 0, 8192, &err);
    uint64_t total;
    size_t len;
    char *s, *m;

    CHECK(instlog_write(l, 1, "first\n", 6, &err) == 0);
    CHECK_MSG(instlog_finish(l, &err) == 0, "%s", err.msg);
    s = slurp(tmp, "g/0/run.out", &len);
    CHECK_EQ_STR(s, "first\n");
    free(s);
    CHECK_MSG(instlog_resume(l, &err) == 0, "%s", err.msg);
    CHECK(instlog_write(l, 1, "second\n", 7, &err) == 0);
    CHECK(instlog_write(l, 2, "err2\n", 5, &err) == 0);
    CHECK_MSG(instlog_finish(l, &err) == 0, "%s", err.msg);
    s = slurp(tmp, "g/0/run.out", &len);
    CHECK_EQ_STR(s, "first\nsecond\n");
    free(s);
    s = slurp(tmp, "g/0/run.err", &len);
    CHECK_EQ_STR(s, "err2\n");
    free(s);
    /* Past the limit, then once more: the head is the first run's, the
     * tail the last run's, the marker counts what came in between. */
    CHECK(instlog_resume(l, &err) == 0);
    total = 13 + flood(l, 5000);
    CHECK_MSG(instlog_finish(l, &err) == 0, "%s", err.msg);
    CHECK(instlog_resume(l, &err) == 0);
    CHECK(instlog_write(l, 1, "third\n", 6, &err) == 0);
    CHECK_EQ_INT(instlog_total(l, 1), total + 6);
    CHECK_MSG(instlog_finish(l, &err) == 0, "%s", err.msg);
    s = slurp(tmp, "g/0/run.out", &len);
    CHECK(len <= 8192 + 128);
    CHECK(strncmp(s, "first\nsecond\nline 0\n", 20) == 0);
    CHECK(strcmp(s + len - 17, "\nline 4999\nthird\n") == 0);
    m = strstr(s, "\n[testyard: ");
    CHECK(m != NULL);
    free(s);
    instlog_destroy(&l);
    close(fd);
}

static const struct th_case cases[] = {
    {"under_limit_whole", t_under_limit_whole},
    {"head_tail_marker", t_head_tail_marker},
    {"replaces_planted_link", t_replaces_planted_link},
    {"resume_appends", t_resume_appends},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
