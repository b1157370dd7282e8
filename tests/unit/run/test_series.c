/*
 * test_series.c — the per-process and disk series (run/series_int.h):
 * /proc/<pid>/stat lines whose command name holds spaces, parentheses and
 * ") (", command names with control characters, CSV quoting, cgroup.procs
 * and the descendants of a process; the disk walk: a sparse file counts
 * what is allocated, a hard link counts once, a link to a big file
 * outside is not followed, a deep or wide tree stops at its bound and
 * says so, a missing path has no figures; and a sampler on a fake cgroup
 * writing processes.csv and disk.csv, complete only once the instance
 * ended.
 */
#include "base/fsat.h"
#include "base/util.h"
#include "run/series_int.h"
#include "th.h"
#include "th_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define KiB 1024ll
#define MiB (1024ll * 1024)

/* ---- /proc parsers ----------------------------------------------------- */

static void
t_stat_plain(void)
{
    pid_t ppid = 0;
    int64_t ut = 0, st = 0;
    const char *line = "4242 (sleep) S 4200 4242 4200 0 -1 4194304 90 0 0 "
                       "0 17 5 0 0 20 0 1 0 123 5652480 200 "
                       "18446744073709551615\n";

    CHECK_EQ_INT(series__parse_stat(line, &ppid, &ut, &st), 0);
    CHECK_EQ_INT(ppid, 4200);
    CHECK_EQ_INT(ut, 17);
    CHECK_EQ_INT(st, 5);
}

static void
t_stat_hostile_comm(void)
{
    pid_t ppid = 0;
    int64_t ut = 0, st = 0;
    /* a name of ") (" with spaces and a fake field list inside */
    const char *line = "77 (a) (b) R 1 2 3 4 5 6 7 8 9 10 11 12) S 76 77 76 0 "
                       "-1 0 1 2 3 4 250 125 0 0\n";

    CHECK_EQ_INT(series__parse_stat(line, &ppid, &ut, &st), 0);
    CHECK_EQ_INT(ppid, 76);
    CHECK_EQ_INT(ut, 250);
    CHECK_EQ_INT(st, 125);
    CHECK_EQ_INT(series__parse_stat("77 (x) S 1 2 3\n", &ppid, &ut, &st), -1);
    CHECK_EQ_INT(series__parse_stat("no parentheses", &ppid, &ut, &st), -1);
    CHECK_EQ_INT(series__parse_stat("1 (x)", &ppid, &ut, &st), -1);
    CHECK_EQ_INT(series__parse_stat("", &ppid, &ut, &st), -1);
}

static void
t_comm_name(void)
{
    char out[SERIES_NAME_MAX + 1];
    const char raw[] = "wor\x1b[31mker\t\x7f,\"x\"\n";

    series__comm_name(raw, sizeof(raw) - 1, out);
    CHECK_EQ_STR(out, "wor[31mker,\"x\"");
    series__comm_name("0123456789abcdefghij\n", 21, out);
    CHECK_EQ_STR(out, "0123456789abcde");
    CHECK_EQ_INT(strlen(out), SERIES_NAME_MAX);
}

static void
t_csv_text(void)
{
    char buf[64] = "x";
    size_t len = 1;

    series__csv_text(buf, sizeof(buf), &len, "plain");
    series__csv_text(buf, sizeof(buf), &len, "a,\"b\"");
    CHECK_EQ_STR(buf, "x,plain,\"a,\"\"b\"\"\"");
    CHECK_EQ_INT(len, strlen(buf));
    len = 0;
    series__csv_text(buf, 8, &len, "a very long name");
    CHECK(len < 8);
    CHECK_EQ_INT(strlen(buf), len);
}

static void
t_parse_pids(void)
{
    pid_t p[3];
    bool more = false;

    CHECK_EQ_INT(series__parse_pids("12\n7\n0\n-3\nx\n99\n", p, 3, &more), 3);
    CHECK_EQ_INT(p[0], 12);
    CHECK_EQ_INT(p[1], 7);
    CHECK_EQ_INT(p[2], 99);
    CHECK(!more);
    CHECK_EQ_INT(series__parse_pids("1\n2\n3\n4\n", p, 3, &more), 3);
    CHECK(more);
}

static void
t_descendants(void)
{
    /* sorted by ppid, as a scan leaves it */
    struct series_pair v[] = {{1, 10},  {1, 20},  {10, 11}, {10, 12},
                              {11, 13}, {13, 14}, {20, 21}};
    struct series_ptab t = {v, ARRAY_LEN(v), ARRAY_LEN(v)};
    pid_t out[8];
    bool more = false;

    CHECK_EQ_INT(series__descendants(&t, 10, out, 8, &more), 5);
    CHECK(!more);
    CHECK_EQ_INT(out[0], 10);
    CHECK_EQ_INT(out[4], 14);
    for (int i = 0; i < 5; i++)
        CHECK(out[i] != 20 && out[i] != 21 && out[i] != 1);
    CHECK_EQ_INT(series__descendants(&t, 10, out, 3, &more), 3);
    CHECK(more);
    more = false;
    CHECK_EQ_INT(series__descendants(&t, 99, out, 8, &more), 1);
}

/* This process and a child it forked, read from the real /proc. */

/* /proc/self/comm without its newline. */
static const char *
self_comm(void)
{
    static char name[32];
    FILE *f = fopen("/proc/self/comm", "r");

    name[0] = '\0';
    if (f != NULL) {
        if (fgets(name, sizeof(name), f) == NULL)
            name[0] = '\0';
        fclose(f);
    }
    name[strcspn(name, "\n")] = '\0';
    return name;
}

static void
t_read_self(void)
{
    int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct series_ptab t = {0};
    struct series_proc p;
    pid_t kid = fork(), out[SERIES_MAX_PIDS];
    bool more = false, found = false;
    size_t n;

    if (kid == 0) {
        pause();
        _exit(0);
    }
    CHECK(procfd >= 0 && kid > 0);
    CHECK_EQ_INT(series__read_proc(procfd, getpid(), &p), 0);
    CHECK_EQ_INT(p.ppid, getppid());
    CHECK(p.rss > 0 && p.vmsize >= p.rss && p.vmhwm >= p.rss);
    CHECK(p.utime >= 0 && p.stime >= 0);
    /* what the kernel says this process is called (under valgrind not
     * test_series but its tool's name) */
    CHECK_EQ_STR(p.name, self_comm());
    series__ptab_scan(&t, procfd, (size_t)1 << 22);
    n = series__descendants(&t, getpid(), out, SERIES_MAX_PIDS, &more);
    for (size_t i = 0; i < n; i++)
        found |= out[i] == kid;
    CHECK(found);
    kill(kid, SIGKILL);
    waitpid(kid, NULL, 0);
    /* gone: skipped, not an error */
    CHECK_EQ_INT(series__read_proc(procfd, kid, &p), -1);
    series__ptab_release(&t);
    close(procfd);
}

/* ---- the disk walk ----------------------------------------------------- */

static int
tmp_fd(void)
{
    return fsat_root(th_tmpdir(), NULL);
}

static void
mkdirs(const char *rel)
{
    char *p = path_join(th_tmpdir(), rel);

    CHECK_MSG(mkdir_p(p, NULL) == 0, "%s", p);
    free(p);
}

/* rel (beneath the case's folder): size apparent, written bytes at 0. */
static void
sparse_file(const char *rel, int64_t size, int64_t written)
{
    char *p = path_join(th_tmpdir(), rel);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char *data = xcalloc(1, written ? (size_t)written : 1);

    memset(data, 0x77, (size_t)written);
    CHECK(fd >= 0 && ftruncate(fd, size) == 0);
    CHECK(write(fd, data, (size_t)written) == (ssize_t)written);
    CHECK(fsync(fd) == 0);
    close(fd);
    free(data);
    free(p);
}

/* What the folder rel itself takes (its own blocks). */
static int64_t
dir_blocks(const char *rel)
{
    char *p = path_join(th_tmpdir(), rel);
    struct stat st;

    CHECK(stat(p, &st) == 0);
    free(p);
    return (int64_t)st.st_blocks * 512;
}

static void
du(const char *rel, struct series_du *u)
{
    struct series_seen seen = {0};
    int fd = tmp_fd();

    series__du(fd, rel, SERIES_DU_MAX_ENTRIES, SERIES_DU_MAX_DEPTH, &seen, u);
    series__seen_release(&seen);
    close(fd);
}

static void
t_du_sparse(void)
{
    struct series_du u;
    int64_t file;

    mkdirs("state");
    sparse_file("state/big.img", 1024 * MiB, 4 * KiB);
    du("state", &u);
    CHECK_EQ_INT(u.err, 0);
    CHECK(!u.truncated);
    CHECK_EQ_INT(u.apparent, 1024 * MiB);
    CHECK_EQ_INT(u.files, 1);
    file = u.allocated - dir_blocks("state");
    CHECK_MSG(file >= 4 * KiB && file <= 64 * KiB,
              "a 1 GiB sparse file with 4 KiB written: %lld allocated",
              (long long)file);
    /* the file named alone */
    du("state/big.img", &u);
    CHECK_EQ_INT(u.err, 0);
    CHECK_EQ_INT(u.files, 1);
    CHECK_EQ_INT(u.allocated, file);
}

static void
t_du_hard_link(void)
{
    struct series_du one, two;
    char *a = path_join(th_tmpdir(), "s/a"), *b = path_join(th_tmpdir(), "s/b");

    mkdirs("s");
    sparse_file("s/a", 1 * MiB, 1 * MiB);
    du("s", &one);
    CHECK(link(a, b) == 0);
    du("s", &two);
    CHECK_EQ_INT(two.allocated, one.allocated);
    CHECK_EQ_INT(two.apparent, 1 * MiB);
    CHECK_EQ_INT(two.files, 1);
    CHECK(one.allocated >= 1 * MiB);
    free(a);
    free(b);
}

static void
t_du_no_links_followed(void)
{
    struct series_du u;
    char *big = path_join(th_tmpdir(), "outside/big");
    char *lnk = path_join(th_tmpdir(), "s/to-big");
    char *dlnk = path_join(th_tmpdir(), "s/to-outside");
    char *top = path_join(th_tmpdir(), "top-link");
    char *out = path_join(th_tmpdir(), "outside");

    mkdirs("outside");
    mkdirs("s");
    sparse_file("outside/big", 8 * MiB, 8 * MiB);
    CHECK(symlink(big, lnk) == 0);
    CHECK(symlink(out, dlnk) == 0);
    CHECK(symlink(out, top) == 0);
    du("s", &u);
    CHECK_EQ_INT(u.err, 0);
    CHECK_EQ_INT(u.apparent, 0);
    CHECK_EQ_INT(u.files, 0);
    CHECK_MSG(u.allocated < 1 * MiB, "links followed: %lld allocated",
              (long long)u.allocated);
    /* the path itself a link: refused, not followed */
    du("top-link", &u);
    CHECK_EQ_INT(u.err, ELOOP);
    CHECK_EQ_INT(u.allocated, 0);
    free(big);
    free(lnk);
    free(dlnk);
    free(top);
    free(out);
}

static void
t_du_deep_tree(void)
{
    struct series_du u;
    char path[4096] = "deep";

    for (int i = 0; i < SERIES_DU_MAX_DEPTH + 6; i++)
        strcat(path, "/d");
    mkdirs(path);
    strcat(path, "/f");
    sparse_file(path, 4 * KiB, 4 * KiB);
    du("deep", &u);
    CHECK_EQ_INT(u.err, 0);
    CHECK(u.truncated);
    CHECK_EQ_INT(u.files, 0); /* the file is below the bound */
    CHECK(u.allocated > 0);
}

static void
t_du_wide_tree(void)
{
    struct series_du u;
    struct series_seen seen = {0};
    int fd;

    mkdirs("wide");
    for (int i = 0; i < 30; i++) {
        char rel[32];

        snprintf(rel, sizeof(rel), "wide/f%d", i);
        sparse_file(rel, 10, 10);
    }
    fd = tmp_fd();
    series__du(fd, "wide", 10, SERIES_DU_MAX_DEPTH, &seen, &u);
    CHECK(u.truncated);
    CHECK_EQ_INT(u.files, 10);
    series__du(fd, "wide", 100, SERIES_DU_MAX_DEPTH, &seen, &u);
    CHECK(!u.truncated);
    CHECK_EQ_INT(u.files, 30);
    CHECK_EQ_INT(u.apparent, 300);
    series__seen_release(&seen);
    close(fd);
}

static void
t_du_missing(void)
{
    struct series_du u;

    du("not-yet", &u);
    CHECK_EQ_INT(u.err, ENOENT);
    du("../escape", &u);
    CHECK(u.err != 0);
}

/* ---- the sampler ------------------------------------------------------- */

static void
t_sampler_files(void)
{
    char *cg = path_join(th_tmpdir(), "cg");
    char *pcsv = path_join(th_tmpdir(), "processes.csv");
    char *dpath = path_join(th_tmpdir(), "disk.csv");
    char procs[32], *csv, *dcsv;
    char *disk[] = {"state", "absent", NULL};
    struct monitor *mon = monitor__new(250, 0);
    struct series *s = series__new(mon, 100, 300);
    int fd = tmp_fd();
    struct monitor_file pf = {fd, "processes.csv.partial", "processes.csv"};
    struct monitor_file df = {fd, "disk.csv.partial", "disk.csv"};
    struct series_src src = {cg, getpid(), disk, fd, true};
    struct series_inst *in;
    struct err err = {0};
    char want[64];

    mkdirs("cg");
    mkdirs("state");
    sparse_file("state/x", 64 * KiB, 64 * KiB);
    snprintf(procs, sizeof(procs), "%d\n", (int)getpid());
    th_write(cg, "cgroup.procs", procs);
    in = series__add(s, "g/0", &src, &pf, &df, 0, &err);
    CHECK_MSG(in != NULL, "%s", err.msg);
    CHECK_EQ_INT(series__next_due_ms(s), 100);
    series__sample(s, 100); /* processes only */
    CHECK_EQ_INT(series__next_due_ms(s), 200);
    CHECK(!path_exists(pcsv) && !path_exists(dpath));
    CHECK_EQ_INT(series__instance_ended(s, in, 150, &err), 0);
    csv = th_read(pcsv, NULL);
    dcsv = th_read(dpath, NULL);
    CHECK_CONTAINS(csv, "time,t_ms,pid,ppid,name,vmsize_bytes,rss_bytes,"
                        "vmhwm_bytes,cpu_user_s,cpu_system_s\n");
    snprintf(want, sizeof(want), ",100,%d,%d,%s,", (int)getpid(),
             (int)getppid(), self_comm());
    CHECK_CONTAINS(csv, want);
    CHECK_CONTAINS(dcsv, "time,t_ms,path,allocated_bytes,apparent_bytes,"
                         "files\n");
    CHECK_CONTAINS(dcsv, ",0,absent,,,\n");
    CHECK_CONTAINS(dcsv, ",150,absent,,,\n"); /* the last sample */
    CHECK_CONTAINS(dcsv, ",65536,1\n");
    series__destroy(&s);
    CHECK(s == NULL);
    monitor__destroy(&mon);
    close(fd);
    free(csv);
    free(dcsv);
    free(pcsv);
    free(dpath);
    free(cg);
}

static const struct th_case cases[] = {
    {"stat_plain", t_stat_plain},
    {"stat_hostile_comm", t_stat_hostile_comm},
    {"comm_name", t_comm_name},
    {"csv_text", t_csv_text},
    {"parse_pids", t_parse_pids},
    {"descendants", t_descendants},
    {"read_self", t_read_self},
    {"du_sparse", t_du_sparse},
    {"du_hard_link", t_du_hard_link},
    {"du_no_links_followed", t_du_no_links_followed},
    {"du_deep_tree", t_du_deep_tree},
    {"du_wide_tree", t_du_wide_tree},
    {"du_missing", t_du_missing},
    {"sampler_files", t_sampler_files},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
