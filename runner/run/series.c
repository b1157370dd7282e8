/*
 * series.c — the per-process and disk series of every instance (see
 * run/series_int.h): when each is due, what a row holds, and where the
 * files go.
 *
 * Cost matters with a thousand instances: processes are listed from the
 * instance's cgroup.procs (and the cgroups below it) with one read each;
 * instances without a cgroup share one scan of /proc per sample, made
 * only when one of them needs it; each process costs one folder open and
 * three small reads. Disk walks run only every disk_sample.
 */
#include "run/series_int.h"

#include "base/fsat.h"
#include "base/log.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char procs_header[] = "time,t_ms,pid,ppid,name,vmsize_bytes,"
                                   "rss_bytes,vmhwm_bytes,cpu_user_s,"
                                   "cpu_system_s\n";
static const char disk_header[] =
    "time,t_ms,path,allocated_bytes,apparent_bytes,files\n";

/* cgroup.procs of at most SERIES_MAX_PIDS pids, and the cgroups below. */
#define PROCS_READ_MAX (SERIES_MAX_PIDS * 12)
#define CGROUP_MAX_DEPTH 4
#define CGROUP_MAX_CHILDREN 64

struct disk_path {
    char *path;      /* as the composition wrote it */
    const char *rel; /* beneath its base: path without a leading '/' */
    bool absolute;
    bool warned; /* said once that it could not be walked whole */
};

struct series_inst {
    char *label;
    int cgfd;  /* the cgroup folder (O_PATH), -1 without */
    pid_t pid; /* main process, 0 when unknown */
    int pidfd; /* its /proc/<pid> folder (absolute disk paths), -1 */
    int outfd; /* the outputs folder, -1 */
    bool host_fs;
    struct monitor_csv procs, disk;
    bool has_procs, has_disk;
    struct disk_path *paths;
    size_t npaths;
    bool warned_pids;
    bool ended;
};

struct series {
    const struct monitor *mon;
    int64_t process_ms, disk_ms;
    int64_t next_proc_ms, next_disk_ms; /* INT64_MAX: never */
    int procfd;                         /* /proc */
    int rootfd;                         /* /, for host paths */
    pid_t *pids;                        /* scratch: SERIES_MAX_PIDS */
    char *buf;                          /* scratch: PROCS_READ_MAX + 1 */
    struct series_ptab ptab;
    int64_t ptab_ms; /* when ptab was scanned, -1 */
    struct series_seen seen;
    struct series_inst **inst;
    size_t ninst, cap;
};

struct series *
series__new(const struct monitor *mon, int64_t process_ms, int64_t disk_ms)
{
    struct series *s = xcalloc(1, sizeof(*s));

    s->mon = mon;
    s->process_ms = process_ms > 0 ? process_ms : 0;
    s->disk_ms = disk_ms > 0 ? disk_ms : 0;
    s->next_proc_ms = s->next_disk_ms = INT64_MAX;
    s->procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    s->rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    s->pids = xcalloc(SERIES_MAX_PIDS, sizeof(*s->pids));
    s->buf = xmalloc(PROCS_READ_MAX + 1);
    s->ptab_ms = -1;
    return s;
}

/* ---- processes --------------------------------------------------------- */

/* The pids of the cgroup folder fd and of those below it, appended to
 * s->pids from *n. */
static void
cgroup_pids(struct series *s, int fd, int depth, size_t *n, bool *more)
{
    DIR *d;
    struct dirent *e;
    int dup_fd, children = 0;

    if (series__read_at(fd, "cgroup.procs", s->buf, PROCS_READ_MAX + 1) >= 0)
        *n += series__parse_pids(s->buf, s->pids + *n, SERIES_MAX_PIDS - *n,
                                 more);
    if (depth >= CGROUP_MAX_DEPTH || *more ||
        (dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return;
    if ((d = fdopendir(dup_fd)) == NULL) {
        close(dup_fd);
        return;
    }
    while ((e = readdir(d)) != NULL && children < CGROUP_MAX_CHILDREN) {
        int sub;

        if (e->d_type != DT_DIR || e->d_name[0] == '.')
            continue;
        sub = openat(dirfd(d), e->d_name,
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0)
            continue;
        children++;
        cgroup_pids(s, sub, depth + 1, n, more);
        close(sub);
    }
    closedir(d);
}

/* The instance's pids into s->pids; how many. */
static size_t
list_pids(struct series *s, struct series_inst *in, int64_t now_ms, bool *more)
{
    size_t n = 0;

    if (in->cgfd >= 0) {
        cgroup_pids(s, in->cgfd, 0, &n, more);
        return n;
    }
    if (in->pid <= 0)
        return 0;
    if (s->ptab_ms != now_ms) {
        series__ptab_scan(&s->ptab, s->procfd, (size_t)1 << 22);
        s->ptab_ms = now_ms;
    }
    return series__descendants(&s->ptab, in->pid, s->pids, SERIES_MAX_PIDS,
                               more);
}

static void
add_seconds(char *row, size_t size, size_t *len, int64_t ticks, long hz)
{
    if (ticks < 0 || hz <= 0)
        *len += (size_t)snprintf(row + *len, size - *len, ",");
    else
        *len += (size_t)snprintf(row + *len, size - *len, ",%lld.%03lld",
                                 (long long)(ticks / hz),
                                 (long long)(ticks % hz * 1000 / hz));
}

static void
proc_row(const struct series *s, struct series_inst *in, int64_t now_ms,
         const struct series_proc *p, long hz)
{
    char row[512];
    size_t len = monitor__csv_time(s->mon, now_ms, row, 80);

    len += (size_t)snprintf(row + len, sizeof(row) - len, ",%d,%d", (int)p->pid,
                            (int)p->ppid);
    series__csv_text(row, sizeof(row), &len, p->name);
    monitor__csv_int(row, sizeof(row), &len, p->vmsize);
    monitor__csv_int(row, sizeof(row), &len, p->rss);
    monitor__csv_int(row, sizeof(row), &len, p->vmhwm);
    add_seconds(row, sizeof(row), &len, p->utime, hz);
    add_seconds(row, sizeof(row), &len, p->stime, hz);
    if (len + 1 < sizeof(row)) {
        row[len++] = '\n';
        monitor__csv_write(&in->procs, row, len);
    }
}

static void
sample_procs(struct series *s, struct series_inst *in, int64_t now_ms)
{
    static long hz;
    bool more = false;
    size_t n;

    if (!in->has_procs || in->procs.fd < 0)
        return;
    if (hz == 0)
        hz = sysconf(_SC_CLK_TCK);
    n = list_pids(s, in, now_ms, &more);
    if (more && !in->warned_pids) {
        in->warned_pids = true;
        log_warnx("%s: more than %d processes: processes.csv lists the "
                  "first %d of each sample",
                  in->label, SERIES_MAX_PIDS, SERIES_MAX_PIDS);
    }
    for (size_t i = 0; i < n; i++) {
        struct series_proc p;

        if (series__read_proc(s->procfd, s->pids[i], &p) == 0)
            proc_row(s, in, now_ms, &p, hz);
    }
}

/* ---- disks ------------------------------------------------------------- */

/* The folder absolute paths are beneath: the host's root, or the
 * instance's (-1 when its process is gone); *own says it is to close. */
static int
root_of(const struct series *s, const struct series_inst *in, bool *own)
{
    *own = false;
    if (in->host_fs)
        return s->rootfd;
    if (in->pidfd < 0)
        return -1;
    *own = true;
    return openat(in->pidfd, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void
disk_note(struct series_inst *in, struct disk_path *dp,
          const struct series_du *u)
{
    if (dp->warned || (u->err == 0 && !u->truncated) || u->err == ENOENT)
        return;
    dp->warned = true;
    if (u->truncated)
        log_warnx("%s: run.disk %s: the walk stops at %d entries or %d "
                  "levels deep; disk.csv counts what was walked",
                  in->label, dp->path, SERIES_DU_MAX_ENTRIES,
                  SERIES_DU_MAX_DEPTH);
    else
        log_warnx("%s: run.disk %s: cannot be walked: %s%s", in->label,
                  dp->path, strerror(u->err),
                  u->err == ELOOP ? " (links are not followed)" : "");
}

static void
disk_row(const struct series *s, struct series_inst *in, int64_t now_ms,
         const struct disk_path *dp, const struct series_du *u)
{
    char row[1400];
    size_t len = monitor__csv_time(s->mon, now_ms, row, 80);
    bool ok = u->err == 0;

    series__csv_text(row, sizeof(row), &len, dp->path);
    monitor__csv_int(row, sizeof(row), &len, ok ? u->allocated : -1);
    monitor__csv_int(row, sizeof(row), &len, ok ? u->apparent : -1);
    monitor__csv_int(row, sizeof(row), &len, ok ? u->files : -1);
    if (len + 1 < sizeof(row)) {
        row[len++] = '\n';
        monitor__csv_write(&in->disk, row, len);
    }
}

/* With final, paths in a file system that is gone with the instance (a
 * container's) get no row. */
static void
sample_disk(struct series *s, struct series_inst *in, int64_t now_ms,
            bool final)
{
    bool own = false;
    int root = -2;

    if (!in->has_disk || in->disk.fd < 0)
        return;
    for (size_t i = 0; i < in->npaths; i++) {
        struct disk_path *dp = &in->paths[i];
        struct series_du u = {.err = ENOENT};
        int base = in->outfd;

        if (dp->absolute) {
            if (root == -2)
                root = root_of(s, in, &own);
            base = root;
            if (base < 0 && final)
                continue;
        }
        if (base >= 0)
            series__du(base, dp->rel, SERIES_DU_MAX_ENTRIES,
                       SERIES_DU_MAX_DEPTH, &s->seen, &u);
        disk_note(in, dp, &u);
        disk_row(s, in, now_ms, dp, &u);
    }
    if (own && root >= 0)
        close(root);
}

/* ---- instances --------------------------------------------------------- */

static void
inst_free(struct series_inst *in, bool discard)
{
    if (in->cgfd >= 0)
        close(in->cgfd);
    if (in->pidfd >= 0)
        close(in->pidfd);
    if (in->outfd >= 0)
        close(in->outfd);
    if (in->has_procs)
        monitor__csv_release(&in->procs, discard);
    if (in->has_disk)
        monitor__csv_release(&in->disk, discard);
    for (size_t i = 0; i < in->npaths; i++)
        free(in->paths[i].path);
    free(in->paths);
    free(in->label);
    free(in);
}

static void
inst_paths(struct series_inst *in, char *const *disk)
{
    for (size_t i = 0; disk != NULL && disk[i] != NULL; i++)
        in->npaths++;
    in->paths = xcalloc(in->npaths ? in->npaths : 1, sizeof(*in->paths));
    for (size_t i = 0; i < in->npaths; i++) {
        struct disk_path *dp = &in->paths[i];
        const char *p = disk[i];

        dp->path = xstrdup(p);
        dp->absolute = p[0] == '/';
        dp->rel = dp->path + strspn(dp->path, "/");
    }
}

static struct series_inst *
inst_new(const char *label, const struct series_src *src)
{
    struct series_inst *in = xcalloc(1, sizeof(*in));
    char path[32];

    in->label = xstrdup(label);
    in->pid = src->pid;
    in->host_fs = src->host_fs;
    in->cgfd = in->pidfd = in->outfd = -1;
    in->procs.fd = in->disk.fd = -1;
    if (src->cgroup_dir != NULL)
        in->cgfd = open(src->cgroup_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    inst_paths(in, src->disk);
    if (in->npaths > 0 && src->outfd >= 0)
        in->outfd = fcntl(src->outfd, F_DUPFD_CLOEXEC, 3);
    if (in->npaths > 0 && !in->host_fs && src->pid > 0) {
        snprintf(path, sizeof(path), "/proc/%d", (int)src->pid);
        in->pidfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    return in;
}

struct series_inst *
series__add(struct series *s, const char *label, const struct series_src *src,
            const struct monitor_file *procs, const struct monitor_file *disk,
            int64_t now_ms, struct err *err)
{
    struct series_inst *in = inst_new(label, src);

    in->has_procs = procs != NULL && s->process_ms > 0;
    in->has_disk = disk != NULL && s->disk_ms > 0 && in->npaths > 0;
    if ((in->has_procs &&
         monitor__csv_open(&in->procs, procs, label, procs_header, err) < 0) ||
        (in->has_disk &&
         monitor__csv_open(&in->disk, disk, label, disk_header, err) < 0)) {
        inst_free(in, true);
        return err_prefix(err, "%s: process and disk series", label), NULL;
    }
    xgrow(&s->inst, &s->cap, s->ninst + 1, sizeof(*s->inst));
    s->inst[s->ninst++] = in;
    if (in->has_procs && s->next_proc_ms == INT64_MAX)
        s->next_proc_ms = now_ms + s->process_ms;
    if (in->has_disk && s->next_disk_ms == INT64_MAX)
        s->next_disk_ms = now_ms + s->disk_ms;
    sample_procs(s, in, now_ms);
    sample_disk(s, in, now_ms, false);
    return in;
}

int64_t
series__next_due_ms(const struct series *s)
{
    return s->next_proc_ms < s->next_disk_ms ? s->next_proc_ms
                                             : s->next_disk_ms;
}

void
series__sample(struct series *s, int64_t now_ms)
{
    bool procs = now_ms >= s->next_proc_ms, disk = now_ms >= s->next_disk_ms;

    for (size_t i = 0; i < s->ninst; i++) {
        struct series_inst *in = s->inst[i];

        if (in->ended)
            continue;
        if (procs)
            sample_procs(s, in, now_ms);
        if (disk)
            sample_disk(s, in, now_ms, false);
    }
    if (procs)
        s->next_proc_ms = now_ms + s->process_ms;
    if (disk)
        s->next_disk_ms = now_ms + s->disk_ms;
}

static int
finish(struct series_inst *in, struct err *err)
{
    if (in->has_procs && monitor__csv_finish(&in->procs, err) < 0)
        return err_prefix(err, "%s: processes.csv", in->label);
    if (in->has_disk && monitor__csv_finish(&in->disk, err) < 0)
        return err_prefix(err, "%s: disk.csv", in->label);
    return 0;
}

void
series__instance_down(struct series *s, struct series_inst *in, int64_t now_ms)
{
    if (in->ended)
        return;
    sample_procs(s, in, now_ms);
    if (in->cgfd >= 0)
        close(in->cgfd);
    if (in->pidfd >= 0)
        close(in->pidfd);
    in->cgfd = in->pidfd = -1;
    in->pid = 0;
}

void
series__instance_up(struct series *s, struct series_inst *in,
                    const char *cgroup_dir, pid_t pid, int64_t now_ms)
{
    char path[32];

    if (in->ended)
        return;
    if (in->cgfd >= 0)
        close(in->cgfd);
    if (in->pidfd >= 0)
        close(in->pidfd);
    in->cgfd = in->pidfd = -1;
    in->pid = pid;
    if (cgroup_dir != NULL)
        in->cgfd = open(cgroup_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (in->npaths > 0 && !in->host_fs && pid > 0) {
        snprintf(path, sizeof(path), "/proc/%d", (int)pid);
        in->pidfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    sample_procs(s, in, now_ms);
}

int
series__instance_ended(struct series *s, struct series_inst *in, int64_t now_ms,
                       struct err *err)
{
    if (in->ended)
        return 0;
    sample_disk(s, in, now_ms, true);
    in->ended = true;
    return finish(in, err);
}

void
series__destroy(struct series **sp)
{
    struct series *s = sp ? *sp : NULL;

    if (s == NULL)
        return;
    for (size_t i = 0; i < s->ninst; i++) {
        struct err err = {0};

        if (finish(s->inst[i], &err) < 0)
            log_warnx("%s", err.msg);
        inst_free(s->inst[i], false);
    }
    if (s->procfd >= 0)
        close(s->procfd);
    if (s->rootfd >= 0)
        close(s->rootfd);
    series__ptab_release(&s->ptab);
    series__seen_release(&s->seen);
    free(s->pids);
    free(s->buf);
    free(s->inst);
    free(s);
    *sp = NULL;
}
