/*
 * run/monitor_int.h — the coordinator's memory monitor: samples every
 * instance's memory cgroup at a fixed interval, whatever language the instance
 * is written in, writes <instance folder>/memory.csv and keeps the figures
 * result.json needs (peak and when, OOM kill and when, last and final usage).
 *
 * No thread: the orchestrator's loop calls monitor__sample() whenever
 * monitor__next_due_ms() has passed. Times are CLOCK_MONOTONIC milliseconds
 * (now_mono_ns() / 1000000); the CSV turns them into wall-clock RFC 3339.
 *
 * memory.csv is written as memory.csv.partial, one whole row per write(2),
 * and renamed to memory.csv when the instance ends (or the monitor is
 * destroyed), so the run folder holds it complete or not at all, and a
 * crashed coordinator leaves a .partial file of complete rows behind. Both
 * names are relative to a folder descriptor and opened with no link
 * followed (base/fsat.h): the orchestrator keeps the .partial file in the
 * runner's own folder, out of the instance's reach, and the rename puts
 * memory.csv into the instance's folder over whatever is there.
 *
 * Pre-OOM snapshots: with monitor__set_pre_oom, a sample that finds an
 * instance's usage at or above fraction × its limit asks for a heap
 * snapshot at once, through the caller's ask(); the instance is asked
 * again only after its usage fell below (fraction - 0.1) × limit, and
 * never twice within MONITOR_PRE_OOM_GAP_MS. Instances without a limit
 * are never asked.
 *
 * Ownership: the caller owns the monitor (monitor__destroy). Instances belong
 * to the monitor; the struct monitor_inst pointer monitor__add returns is
 * borrowed and stays valid until monitor__destroy.
 */
#ifndef TY_RUNNER_MONITOR_H
#define TY_RUNNER_MONITOR_H

#include "base/err.h"
#include "ty_cgroup.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MONITOR_DEFAULT_INTERVAL_MS 250
/* At most one pre-OOM request (or attempt) per instance this often. */
#define MONITOR_PRE_OOM_GAP_MS 1000
/* Asked again once usage fell this far below the threshold (of limit). */
#define MONITOR_PRE_OOM_REARM 0.1

struct monitor;
struct monitor_inst;

/* Where an instance's memory series goes: rows are written to partial,
 * which is renamed to final when complete. Both are relative to dirfd
 * (borrowed; it must outlive the monitor) and their folders must exist. */
struct monitor_file {
    int dirfd;
    const char *partial;
    const char *final;
};

/* One series file being written (run/monitor_csv.c): rows go to partial,
 * beneath dirfd, until monitor__csv_finish renames it to final. */
struct monitor_csv {
    int dirfd;     /* borrowed */
    char *label;   /* the instance's, for warnings */
    char *final;   /* relative to dirfd */
    char *partial; /* NULL once renamed into place */
    int fd;        /* -1 once closed or after a write error */
    bool failed;   /* a write failed: the file stays .partial */
};

/* Create f->partial (truncated) and write header to it. */
int monitor__csv_open(struct monitor_csv *c, const struct monitor_file *f,
                      const char *label, const char *header, struct err *err);
/* Append one whole row; a failed write stops the series with a warning. */
void monitor__csv_write(struct monitor_csv *c, const char *row, size_t len);
/* Make it durable and rename it into place (no-op when already done). */
int monitor__csv_finish(struct monitor_csv *c, struct err *err);
/* Close and free; with discard, remove the .partial file it created. */
void monitor__csv_release(struct monitor_csv *c, bool discard);
/* ",N" (N >= 0) or "," appended to buf at *len. */
void monitor__csv_int(char *buf, size_t size, size_t *len, int64_t v);

/* How an instance was asked for a pre-OOM snapshot. */
enum monitor_via {
    MONITOR_VIA_NONE,   /* it could not be asked */
    MONITOR_VIA_SYNC,   /* its pending snapshot_wait was answered */
    MONITOR_VIA_SIGNAL, /* its LD_PRELOAD profiler's signal */
};

/* The pre-OOM snapshot requests made of an instance. */
struct monitor_pre_oom {
    int64_t requests;          /* 0: never asked */
    int64_t first_ms, last_ms; /* ms since the run started, -1 */
    int64_t usage, limit;      /* at the last request, -1 */
    enum monitor_via via;      /* how the last one went */
};

/* When and how to ask for pre-OOM snapshots. ask(arg, id) asks the
 * instance with that id (monitor__set_id) on the caller's thread, from
 * inside monitor__sample, and says how it went; MONITOR_VIA_NONE means
 * no one could be asked, and the monitor tries again a gap later. */
struct monitor_pre_oom_cfg {
    double fraction; /* of the limit, 0 < f < 1; 0 = off */
    enum monitor_via (*ask)(void *arg, int id);
    void *arg;
};

/* What the monitor knows about one instance. Bytes and times (ms since the
 * run started) are -1 when unknown. */
struct monitor_stats {
    int64_t peak;      /* max of the cgroup's own peak and of the samples */
    int64_t peak_t_ms; /* the first sample that saw that peak */
    int64_t last;      /* usage at the last sample that could read it */
    int64_t final;     /* usage when the instance ended (last when the
                          cgroup was already gone) */
    int64_t limit;     /* memory limit, -1 when none */
    bool oom;          /* an OOM kill happened in the cgroup */
    int64_t oom_t_ms;  /* first sample that saw it, or when the backend
                          reported it */
    int64_t usage_before_oom; /* last usage sampled before that */
    int64_t oom_kills;        /* the kernel's count, -1 when not provided */
    size_t samples;           /* successful samples */
    bool ended;
    bool gone;      /* the cgroup disappeared, or the instance was lost */
    int lost_errno; /* the monitor lost the instance: a read failed for
                       another reason than its end (e.g. EMFILE), so the
                       figures stop at lost_t_ms; 0 when not lost */
    int64_t lost_t_ms;
    struct monitor_pre_oom pre_oom;
};

/* A monitor sampling every interval_ms (<= 0: the default) for a run that
 * started at start_ms. */
struct monitor *monitor__new(int64_t interval_ms, int64_t start_ms);
/* Close every instance's memory.csv (renaming it into place), free, set
 * *mon to NULL. NULL-safe. */
void monitor__destroy(struct monitor **mon);

/* Watch the cgroup whose memory directory is memory_dir (its version ver)
 * for the instance called label ("providers/0", for messages); write rows
 * to f (copied). Takes the first sample at once, at now_ms. NULL with err
 * when the cgroup cannot be read or the file not created. */
struct monitor_inst *monitor__add(struct monitor *mon, const char *label,
                                  const char *memory_dir, enum ty__cgver ver,
                                  const struct monitor_file *f, int64_t now_ms,
                                  struct err *err);

/* Watch a process that has no cgroup of its own (local:exec without
 * root): its resident memory from /proc/<pid>/status stands in for usage
 * (VmRSS), anon (RssAnon), file (RssFile + RssShmem) and peak (VmHWM);
 * there is no limit and no OOM count, and its children are not counted.
 * Otherwise like monitor__add. */
struct monitor_inst *monitor__add_process(struct monitor *mon,
                                          const char *label, pid_t pid,
                                          const struct monitor_file *f,
                                          int64_t now_ms, struct err *err);

/* Ask for pre-OOM snapshots as cfg says (copied); off until called. */
void monitor__set_pre_oom(struct monitor *mon,
                          const struct monitor_pre_oom_cfg *cfg);
/* The id the pre-OOM ask() is given for this instance (default -1). */
void monitor__set_id(struct monitor_inst *inst, int id);

/* When the next sample is due (CLOCK_MONOTONIC ms). */
int64_t monitor__next_due_ms(const struct monitor *mon);
/* Sample every instance that has not ended; the next one is due interval
 * ms after now_ms. A cgroup that cannot be read any more is marked gone and
 * keeps its figures; when it still exists but cannot be read (no
 * descriptor left, an I/O error) the instance is also marked lost, with a
 * warning: its figures are incomplete, and result.json says so. */
void monitor__sample(struct monitor *mon, int64_t now_ms);

/* The backend saw an OOM kill (e.g. Docker's OOMKilled): sample at once and
 * record it at now_ms unless a sample already had. */
void monitor__oom_reported(struct monitor *mon, struct monitor_inst *inst,
                           int64_t now_ms);
/* The instance ended: take a final sample (call it before the cgroup is
 * removed), close its file descriptors and put memory.csv in place. Fails
 * only when memory.csv cannot be completed; the figures stay available. */
int monitor__instance_ended(struct monitor *mon, struct monitor_inst *inst,
                            int64_t now_ms, struct err *err);

/* The instance's process ended but it will be started again (a stage's
 * restart): a last sample, its cgroup files closed; memory.csv stays
 * open and nothing is sampled until monitor__instance_up. */
void monitor__instance_down(struct monitor *mon, struct monitor_inst *inst,
                            int64_t now_ms);
/* Its new process started: sample memory_dir (ver) again, or, for an
 * instance watched by process, the new pid; rows go on in the same
 * memory.csv and the figures (peak, OOM) carry on. -1 with err when it
 * cannot be read: the instance is then marked gone. */
int monitor__instance_up(struct monitor *mon, struct monitor_inst *inst,
                         const char *memory_dir, enum ty__cgver ver, pid_t pid,
                         int64_t now_ms, struct err *err);
void monitor__stats(const struct monitor_inst *inst, struct monitor_stats *out);
/* The number after "Key:" on its line of a /proc/<pid>/status text (no
 * unit applied), or -1 when there is no such line. */
int64_t monitor__status_value(const char *text, const char *key);
const char *monitor__inst_label(const struct monitor_inst *inst);
/* "TIME,T_MS" of a row taken at now_ms, the clocks of memory.csv, into
 * buf; returns its length. */
size_t monitor__csv_time(const struct monitor *mon, int64_t now_ms, char *buf,
                         size_t size);

#endif
