/*
 * monitor.c — the coordinator's memory monitor (see run/monitor_int.h).
 *
 * Sampling a thousand cgroups four times a second has to be cheap, so each
 * instance keeps its cgroup's files open and re-reads them with pread(2) at
 * offset 0, which makes the kernel produce fresh contents: five preads and
 * no path lookups per instance and sample, parsed by ty__cgroup_read_from
 * exactly as the SDK parses what it reads. When file descriptors run out
 * (EMFILE) an instance falls back to reading by path through
 * ty__cgroup_read_memory, the same reader the SDK uses.
 *
 * A cgroup can disappear before the instance is declared ended (a container
 * removed, a backend that cleaned up first): its reads then fail with ENODEV
 * or ENOENT, the instance is marked gone and keeps the figures it had. Any
 * other failure (EMFILE while reading by path, an I/O error) means the
 * monitor lost an instance that may still run: that is said, never taken
 * for its end.
 */
#include "run/monitor_int.h"

#include "base/fsat.h"
#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char csv_header[] = "time,t_ms,usage_bytes,anon_bytes,"
                                 "file_bytes,peak_bytes,limit_bytes,"
                                 "oom_kills\n";

struct monitor_inst {
    char *label;
    char *dir;
    enum ty__cgver ver;
    pid_t pid;            /* > 0: no cgroup, read /proc/<pid>/status instead */
    int fd[TY_CGF_COUNT]; /* -1 when not open; all -1 in by-path mode */
    bool by_path;
    struct monitor_csv csv;   /* memory.csv */
    int64_t last_ms;          /* when the last sample was taken, -1 before */
    int id;                   /* for the pre-OOM ask() */
    bool pre_oom_armed;       /* crossing the threshold asks */
    int64_t pre_oom_tried_ms; /* the last ask (CLOCK_MONOTONIC), -1 */
    bool down;                /* between a restart's end and its start */
    struct monitor_stats st;
};

struct monitor {
    int64_t interval_ms;
    int64_t start_ms;
    int64_t wall_start_ns; /* wall clock at start_ms */
    int64_t next_due_ms;
    struct monitor_pre_oom_cfg pre_oom;
    struct monitor_inst **inst;
    size_t ninst, cap;
};

struct monitor *
monitor__new(int64_t interval_ms, int64_t start_ms)
{
    struct monitor *mon = xcalloc(1, sizeof(*mon));
    int64_t mono_now_ms = now_mono_ns() / 1000000;

    mon->interval_ms =
        interval_ms > 0 ? interval_ms : MONITOR_DEFAULT_INTERVAL_MS;
    mon->start_ms = start_ms;
    mon->wall_start_ns = now_wall_ns() - (mono_now_ms - start_ms) * 1000000;
    mon->next_due_ms = start_ms;
    return mon;
}

/* ---- reading ----------------------------------------------------------- */

/* pread from offset 0; returns the length or -errno. */
static ssize_t
pread_all(int fd, char *buf, size_t size)
{
    ssize_t n;

    do
        n = pread(fd, buf, size - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    buf[n] = '\0';
    return n;
}

/* ty__cgroup_read_from's reader: the instance's open descriptors. */
static int
read_fd(const void *arg, enum ty__cgfile f, char *buf, size_t size)
{
    const struct monitor_inst *in = arg;

    return in->fd[f] < 0 ? -EBADF : (int)pread_all(in->fd[f], buf, size);
}

int64_t
monitor__status_value(const char *text, const char *key)
{
    size_t kl = strlen(key);

    for (const char *p = text; p != NULL; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (strncmp(p, key, kl) == 0 && p[kl] == ':')
            return strtoll(p + kl + 1, NULL, 10);
    }
    return -1;
}

/* The value in kB of "Key:   1234 kB" in /proc/<pid>/status, in bytes,
 * or -1. */
static int64_t
status_kb(const char *text, const char *key)
{
    int64_t kb = monitor__status_value(text, key);

    return kb < 0 ? -1 : kb * 1024;
}

/* A process without a cgroup of its own: its resident memory stands in
 * for the cgroup's usage (its children are not counted). */
static int
read_proc(const struct monitor_inst *in, struct ty__cgmem *m)
{
    char buf[4096];
    int64_t file, shmem;
    int rc = ty__cgroup_read_file(in->dir, "status", buf, sizeof(buf));

    if (rc < 0)
        return rc == -ESRCH ? -ENOENT : rc;
    m->usage = status_kb(buf, "VmRSS");
    if (m->usage < 0)
        return -ENOENT; /* a zombie has no memory left to report */
    m->anon = status_kb(buf, "RssAnon");
    file = status_kb(buf, "RssFile");
    shmem = status_kb(buf, "RssShmem");
    m->file = file < 0 ? -1 : file + (shmem > 0 ? shmem : 0);
    m->peak = status_kb(buf, "VmHWM");
    m->limit = -1;
    m->oom_kills = -1;
    return 0;
}

/* ty__cgroup_read_from's reader by path, keeping the errno of a failure
 * (ty__cgroup_read_memory folds every failure into ENOENT). */
static int
read_path(const void *arg, enum ty__cgfile f, char *buf, size_t size)
{
    const struct monitor_inst *in = arg;

    return ty__cgroup_read_file(in->dir, ty__cgroup_file(in->ver, f), buf,
                                size);
}

/* 0, or -errno; -ENOENT when there is no usage to read. */
static int
read_inst(const struct monitor_inst *in, struct ty__cgmem *m)
{
    int rc;

    if (in->pid > 0)
        return read_proc(in, m);
    rc =
        ty__cgroup_read_from(in->ver, in->by_path ? read_path : read_fd, in, m);
    return rc < 0 ? rc : m->usage < 0 ? -ENOENT : 0;
}

static void
close_fds(struct monitor_inst *in)
{
    for (int i = 0; i < TY_CGF_COUNT; i++) {
        if (in->fd[i] >= 0)
            close(in->fd[i]);
        in->fd[i] = -1;
    }
}

/* Open the cgroup's files; on EMFILE/ENFILE switch to by-path reading.
 * Only the usage file is required. */
static int
open_fds(struct monitor_inst *in, struct err *err)
{
    for (int i = 0; i < TY_CGF_COUNT; i++) {
        cleanup_free char *path =
            path_join(in->dir, ty__cgroup_file(in->ver, (enum ty__cgfile)i));

        in->fd[i] = open(path, O_RDONLY | O_CLOEXEC);
        if (in->fd[i] >= 0 || (errno != EMFILE && errno != ENFILE))
            continue;
        close_fds(in);
        in->by_path = true;
        return 0;
    }
    if (in->fd[TY_CGF_USAGE] < 0)
        return err_sys(err, errno, "%s: cannot read memory usage", in->dir);
    return 0;
}

/* ---- memory.csv -------------------------------------------------------- */

static void
csv_row(const struct monitor *mon, struct monitor_inst *in, int64_t now_ms,
        const struct ty__cgmem *m)
{
    char row[320];
    size_t len = monitor__csv_time(mon, now_ms, row, 80);

    monitor__csv_int(row, sizeof(row), &len, m->usage);
    monitor__csv_int(row, sizeof(row), &len, m->anon);
    monitor__csv_int(row, sizeof(row), &len, m->file);
    monitor__csv_int(row, sizeof(row), &len, m->peak);
    monitor__csv_int(row, sizeof(row), &len, m->limit);
    monitor__csv_int(row, sizeof(row), &len, m->oom_kills);
    if (len + 1 < sizeof(row)) {
        row[len++] = '\n';
        monitor__csv_write(&in->csv, row, len);
    }
}

/* ---- figures ----------------------------------------------------------- */

static void
stats_init(struct monitor_stats *st)
{
    memset(st, 0, sizeof(*st));
    st->peak = st->peak_t_ms = st->last = st->final = -1;
    st->limit = st->oom_t_ms = st->usage_before_oom = st->oom_kills = -1;
    st->lost_t_ms = -1;
    st->pre_oom.first_ms = st->pre_oom.last_ms = -1;
    st->pre_oom.usage = st->pre_oom.limit = -1;
}

static void
note_oom(struct monitor_stats *st, int64_t t)
{
    if (st->oom)
        return;
    st->oom = true;
    st->oom_t_ms = t;
    st->usage_before_oom = st->last;
}

/* Fold one reading into the figures and the CSV. The cgroups are made for
 * one instance, so any OOM kill counted in one is that instance's. */
static void
record(const struct monitor *mon, struct monitor_inst *in, int64_t now_ms,
       const struct ty__cgmem *m)
{
    struct monitor_stats *st = &in->st;
    int64_t t = now_ms - mon->start_ms;
    int64_t top = m->usage > m->peak ? m->usage : m->peak;

    if (m->oom_kills > 0)
        note_oom(st, t);
    if (m->oom_kills >= 0)
        st->oom_kills = m->oom_kills;
    if (top > st->peak) {
        st->peak = top;
        st->peak_t_ms = t;
    }
    st->last = m->usage;
    st->limit = m->limit;
    st->samples++;
    csv_row(mon, in, now_ms, m);
}

/* The instance can no longer be read though it may still run. */
static int
lose(const struct monitor *mon, struct monitor_inst *in, int e, int64_t now_ms)
{
    in->st.lost_errno = e;
    in->st.lost_t_ms = now_ms - mon->start_ms;
    log_warnx("%s: the memory monitor lost this instance: %s: %s", in->label,
              in->dir, strerror(e));
    return -1;
}

/* Returns 0 after a sample, -1 when the cgroup is gone or lost. */
static int
sample_one(const struct monitor *mon, struct monitor_inst *in, int64_t now_ms)
{
    struct ty__cgmem m;
    int rc;

    if (in->st.gone || in->st.ended)
        return -1;
    /* Two samples in one millisecond (the first periodic one right after
     * monitor__add, an OOM report just before the end) would be the same
     * row twice. */
    if (now_ms == in->last_ms)
        return 0;
    if ((rc = read_inst(in, &m)) < 0) {
        in->st.gone = true;
        close_fds(in);
        if (rc != -ENOENT && rc != -ENODEV)
            return lose(mon, in, -rc, now_ms);
        log_debug("%s: cgroup %s is gone; keeping what was sampled", in->label,
                  in->dir);
        return -1;
    }
    in->last_ms = now_ms;
    record(mon, in, now_ms, &m);
    return 0;
}

/* ---- pre-OOM snapshots ------------------------------------------------- */

static void
pre_oom_note(const struct monitor *mon, struct monitor_inst *in, int64_t now_ms,
             enum monitor_via via)
{
    struct monitor_pre_oom *p = &in->st.pre_oom;
    int64_t t = now_ms - mon->start_ms;

    if (p->requests++ == 0)
        p->first_ms = t;
    p->last_ms = t;
    p->usage = in->st.last;
    p->limit = in->st.limit;
    p->via = via;
    log_debug("%s: usage %lld of a %lld-byte limit: asked for a pre-OOM "
              "snapshot (%s)",
              in->label, (long long)p->usage, (long long)p->limit,
              via == MONITOR_VIA_SYNC ? "sync" : "signal");
}

/* After a sample: ask for a snapshot when usage crossed the threshold
 * (armed, not within a gap of the last try); re-arm once it fell well
 * below. An ask that reached no one leaves it armed for the next gap. */
static void
pre_oom_check(const struct monitor *mon, struct monitor_inst *in,
              int64_t now_ms)
{
    const struct monitor_pre_oom_cfg *c = &mon->pre_oom;
    double usage = (double)in->st.last, limit = (double)in->st.limit;
    enum monitor_via via;

    if (c->fraction <= 0 || c->ask == NULL || in->st.limit <= 0 ||
        in->st.last < 0)
        return;
    if (!in->pre_oom_armed) {
        if (usage < (c->fraction - MONITOR_PRE_OOM_REARM) * limit)
            in->pre_oom_armed = true;
        return;
    }
    if (usage < c->fraction * limit ||
        (in->pre_oom_tried_ms >= 0 &&
         now_ms - in->pre_oom_tried_ms < MONITOR_PRE_OOM_GAP_MS))
        return;
    in->pre_oom_tried_ms = now_ms;
    via = c->ask(c->arg, in->id);
    if (via == MONITOR_VIA_NONE)
        return;
    in->pre_oom_armed = false;
    pre_oom_note(mon, in, now_ms, via);
}

void
monitor__set_pre_oom(struct monitor *mon, const struct monitor_pre_oom_cfg *cfg)
{
    mon->pre_oom = *cfg;
}

void
monitor__set_id(struct monitor_inst *in, int id)
{
    in->id = id;
}

/* ---- instances --------------------------------------------------------- */

static void
inst_free(struct monitor_inst *in, bool discard)
{
    close_fds(in);
    monitor__csv_release(&in->csv, discard);
    free(in->label);
    free(in->dir);
    free(in);
}

static struct monitor_inst *
inst_new(const char *label, const char *dir, enum ty__cgver ver)
{
    struct monitor_inst *in = xcalloc(1, sizeof(*in));

    in->label = xstrdup(label);
    in->dir = xstrdup(dir);
    in->ver = ver;
    in->csv.fd = -1;
    in->last_ms = -1;
    in->id = -1;
    in->pre_oom_armed = true;
    in->pre_oom_tried_ms = -1;
    for (int i = 0; i < TY_CGF_COUNT; i++)
        in->fd[i] = -1;
    stats_init(&in->st);
    return in;
}

static int
csv_open(struct monitor_inst *in, const struct monitor_file *f, struct err *err)
{
    return monitor__csv_open(&in->csv, f, in->label, csv_header, err);
}

struct monitor_inst *
monitor__add(struct monitor *mon, const char *label, const char *memory_dir,
             enum ty__cgver ver, const struct monitor_file *f, int64_t now_ms,
             struct err *err)
{
    struct monitor_inst *in;

    if (ver != TY_CG_V1 && ver != TY_CG_V2)
        return err_set(err, EINVAL, "%s: %s: unknown cgroup version", label,
                       memory_dir),
               NULL;
    in = inst_new(label, memory_dir, ver);
    if (open_fds(in, err) < 0 || csv_open(in, f, err) < 0) {
        inst_free(in, true);
        return err_prefix(err, "%s: memory monitor", label), NULL;
    }
    xgrow(&mon->inst, &mon->cap, mon->ninst + 1, sizeof(*mon->inst));
    mon->inst[mon->ninst++] = in;
    (void)sample_one(mon, in, now_ms);
    return in;
}

struct monitor_inst *
monitor__add_process(struct monitor *mon, const char *label, pid_t pid,
                     const struct monitor_file *f, int64_t now_ms,
                     struct err *err)
{
    char dir[32];
    struct monitor_inst *in;

    snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
    in = inst_new(label, dir, TY_CG_NONE);
    in->pid = pid;
    if (csv_open(in, f, err) < 0) {
        inst_free(in, true);
        return err_prefix(err, "%s: memory monitor", label), NULL;
    }
    xgrow(&mon->inst, &mon->cap, mon->ninst + 1, sizeof(*mon->inst));
    mon->inst[mon->ninst++] = in;
    (void)sample_one(mon, in, now_ms);
    return in;
}

int64_t
monitor__next_due_ms(const struct monitor *mon)
{
    return mon->next_due_ms;
}

void
monitor__sample(struct monitor *mon, int64_t now_ms)
{
    for (size_t i = 0; i < mon->ninst; i++) {
        struct monitor_inst *in = mon->inst[i];

        if (!in->st.ended && !in->st.gone && !in->down &&
            sample_one(mon, in, now_ms) == 0)
            pre_oom_check(mon, in, now_ms);
    }
    mon->next_due_ms = now_ms + mon->interval_ms;
}

void
monitor__oom_reported(struct monitor *mon, struct monitor_inst *in,
                      int64_t now_ms)
{
    if (!in->st.oom)
        (void)sample_one(mon, in, now_ms);
    note_oom(&in->st, now_ms - mon->start_ms);
}

int
monitor__instance_ended(struct monitor *mon, struct monitor_inst *in,
                        int64_t now_ms, struct err *err)
{
    if (in->st.ended)
        return 0;
    (void)sample_one(mon, in, now_ms);
    in->st.final = in->st.last;
    in->st.ended = true;
    close_fds(in);
    if (monitor__csv_finish(&in->csv, err) < 0)
        return err_prefix(err, "%s: memory.csv", in->label);
    return 0;
}

void
monitor__instance_down(struct monitor *mon, struct monitor_inst *in,
                       int64_t now_ms)
{
    if (in->st.ended || in->down)
        return;
    (void)sample_one(mon, in, now_ms);
    in->down = true;
    close_fds(in);
}

int
monitor__instance_up(struct monitor *mon, struct monitor_inst *in,
                     const char *memory_dir, enum ty__cgver ver, pid_t pid,
                     int64_t now_ms, struct err *err)
{
    if (in->st.ended || !in->down)
        return 0;
    close_fds(in);
    in->down = false;
    in->st.gone = false;
    in->by_path = false;
    if (in->pid > 0) {
        if (pid <= 0)
            return err_set(err, ESRCH, "%s: its new process is unknown",
                           in->label);
        in->pid = pid;
        free(in->dir);
        in->dir = xasprintf("/proc/%d", (int)pid);
    } else {
        if (memory_dir == NULL || (ver != TY_CG_V1 && ver != TY_CG_V2))
            return err_set(err, ENOENT, "%s: its new cgroup is unknown",
                           in->label);
        free(in->dir);
        in->dir = xstrdup(memory_dir);
        in->ver = ver;
        if (open_fds(in, err) < 0) {
            in->st.gone = true;
            return err_prefix(err, "%s: memory monitor", in->label);
        }
    }
    (void)sample_one(mon, in, now_ms);
    return 0;
}

void
monitor__stats(const struct monitor_inst *in, struct monitor_stats *out)
{
    *out = in->st;
}

size_t
monitor__csv_time(const struct monitor *mon, int64_t now_ms, char *buf,
                  size_t size)
{
    int64_t t = now_ms - mon->start_ms;
    size_t len;

    time_rfc3339(mon->wall_start_ns + t * 1000000, buf, size);
    len = strlen(buf);
    len += (size_t)snprintf(buf + len, size - len, ",%lld", (long long)t);
    return len < size ? len : size - 1;
}

const char *
monitor__inst_label(const struct monitor_inst *in)
{
    return in->label;
}

void
monitor__destroy(struct monitor **monp)
{
    struct monitor *mon = monp ? *monp : NULL;

    if (mon == NULL)
        return;
    for (size_t i = 0; i < mon->ninst; i++) {
        struct err err = {0};

        if (!mon->inst[i]->csv.failed &&
            monitor__csv_finish(&mon->inst[i]->csv, &err) < 0)
            log_warnx("%s", err.msg);
        inst_free(mon->inst[i], false);
    }
    free(mon->inst);
    free(mon);
    *monp = NULL;
}
