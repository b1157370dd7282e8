/*
 * run/series_int.h — the coordinator's per-process and disk series: every
 * process of an instance (VmSize, RSS, VmHWM, CPU user and system) into
 * <instance folder>/processes.csv, and the space the paths a group names
 * (run.disk) really take (blocks allocated, as du counts them) into
 * disk.csv, beside memory.csv and on its clocks (docs/memory.md).
 *
 * Like the memory monitor (run/monitor_int.h) it has no thread: the
 * orchestrator's loop calls series__sample() whenever series__next_due_ms()
 * has passed, and each series is sampled only when its own interval is
 * due (processes every global.run_config.process_sample, disks every
 * disk_sample), not at every memory sample. The files are written as
 * .partial and renamed into place when the instance ends (monitor_csv).
 *
 * What instances control is read as hostile: /proc/<pid> files by
 * descriptor (one /proc/<pid> folder opened, then stat, status and comm
 * beneath it) into bounded buffers; at most SERIES_MAX_PIDS processes per
 * instance and sample; the disk walk opens every folder beneath the one
 * before with O_NOFOLLOW | O_DIRECTORY, follows no link, stays on one
 * file system, counts a hard link once and stops at SERIES_DU_MAX_ENTRIES
 * entries or SERIES_DU_MAX_DEPTH folders deep. A process that ended
 * between listing and reading is skipped.
 *
 * Ownership: the caller owns the series (series__destroy); the struct
 * series_inst pointers series__add returns are borrowed until then.
 */
#ifndef TY_RUN_SERIES_INT_H
#define TY_RUN_SERIES_INT_H

#include "run/monitor_int.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SERIES_MAX_PIDS 4096
#define SERIES_DU_MAX_ENTRIES 100000
#define SERIES_DU_MAX_DEPTH 64
/* The kernel keeps at most 15 bytes of a command name. */
#define SERIES_NAME_MAX 15

struct series;
struct series_inst;

/* One process as /proc shows it. Figures it has not (a zombie's memory)
 * are -1. */
struct series_proc {
    pid_t pid, ppid;
    char name[SERIES_NAME_MAX + 1]; /* comm, control characters dropped */
    int64_t vmsize, rss, vmhwm;     /* bytes */
    int64_t utime, stime;           /* clock ticks */
};

/* PPid, utime and stime of a /proc/<pid>/stat text, whose command name
 * (in parentheses) may hold spaces and ')': the fields are counted from
 * the last ')'. 0, or -1 when the text is not a stat line. */
int series__parse_stat(const char *text, pid_t *ppid, int64_t *utime,
                       int64_t *stime);
/* The command name of a /proc/<pid>/comm text of len bytes into out
 * (SERIES_NAME_MAX + 1 bytes): the trailing newline and every control
 * character dropped, at most SERIES_NAME_MAX bytes. */
void series__comm_name(const char *text, size_t len, char *out);
/* ",TEXT" appended to buf at *len, CSV-quoted when TEXT holds a comma, a
 * quote or a line break. */
void series__csv_text(char *buf, size_t size, size_t *len, const char *text);
/* The pids of a cgroup.procs text, at most max into out; *more is set
 * when there were more. Returns how many. */
size_t series__parse_pids(const char *text, pid_t *out, size_t max, bool *more);
/* Up to max - 1 bytes of name in the folder dirfd (no link followed),
 * NUL-terminated: the length or -errno. */
ssize_t series__read_at(int dirfd, const char *name, char *buf, size_t max);
/* Process pid read beneath the /proc folder procfd; 0, or -1 when it is
 * gone (or not a process). */
int series__read_proc(int procfd, pid_t pid, struct series_proc *p);

/* Every process of the machine with its parent (a /proc scan), to find
 * the descendants of an instance that has no cgroup of its own. */
struct series_pair {
    pid_t ppid, pid;
};
struct series_ptab {
    struct series_pair *v; /* sorted by ppid */
    size_t n, cap;
};
/* Scan /proc beneath procfd into t (emptied first); at most max
 * processes. */
void series__ptab_scan(struct series_ptab *t, int procfd, size_t max);
void series__ptab_release(struct series_ptab *t);
/* root and its descendants in t, at most max into out (root first);
 * *more is set when there were more. Returns how many. */
size_t series__descendants(const struct series_ptab *t, pid_t root, pid_t *out,
                           size_t max, bool *more);

/* What a path takes on disk (series_disk.c). */
struct series_du {
    int64_t allocated; /* Σ st_blocks × 512, hard links once */
    int64_t apparent;  /* Σ st_size of regular files */
    int64_t files;     /* regular files */
    int err;           /* 0, ENOENT when the path does not exist, ... */
    bool truncated;    /* the walk stopped at a bound */
};
/* (dev, ino) pairs already counted, for hard links. */
struct series_seen {
    uint64_t *key; /* pairs: dev, ino; ino 0 = free */
    size_t cap, n; /* slots (a power of two), used */
};
/* The tree at rel beneath basefd ("" = basefd itself), walked with no
 * link followed and on the top's file system only, bounded by max_entries
 * entries and max_depth levels. seen is scratch (emptied first;
 * series__seen_release frees it). */
void series__du(int basefd, const char *rel, size_t max_entries, int max_depth,
                struct series_seen *seen, struct series_du *out);
void series__seen_release(struct series_seen *seen);

/* Where an instance's series come from. */
struct series_src {
    /* Its cgroup folder: the processes are those of cgroup.procs there
     * and in the cgroups below it. NULL: pid and its descendants. */
    const char *cgroup_dir;
    pid_t pid; /* its main process (the host's view), 0 when unknown */
    /* run.disk: NULL-terminated (NULL = none); relative paths are taken
     * beneath outfd (the instance's outputs folder, borrowed while
     * series__add runs: it is duplicated), absolute ones in its file
     * system: the host's with host_fs, else /proc/<pid>/root. */
    char *const *disk;
    int outfd;
    bool host_fs;
};

/* Sample processes every process_ms (0 = never) and disks every disk_ms
 * (0 = never), rows timed as mon times memory.csv (borrowed: it must
 * outlive the series). */
struct series *series__new(const struct monitor *mon, int64_t process_ms,
                           int64_t disk_ms);
/* Put every instance's files in place, free, set *s to NULL. NULL-safe. */
void series__destroy(struct series **s);

/* Watch an instance; procs and disk name its processes.csv and disk.csv
 * (NULL: that series is not written; disk is ignored without paths).
 * Takes the first samples at once. NULL with err when a file cannot be
 * created. */
struct series_inst *series__add(struct series *s, const char *label,
                                const struct series_src *src,
                                const struct monitor_file *procs,
                                const struct monitor_file *disk, int64_t now_ms,
                                struct err *err);
/* When a sample is next due (CLOCK_MONOTONIC ms); INT64_MAX when none. */
int64_t series__next_due_ms(const struct series *s);
/* Sample whatever is due. */
void series__sample(struct series *s, int64_t now_ms);
/* A restart (monitor__instance_down / _up): its process ended and will
 * be started again — a last process sample, its processes no longer
 * looked for (disk paths in its outputs folder are still sampled) —
 * and then its new process, in cgroup_dir (NULL: pid and its
 * descendants); rows go on in the same files. */
void series__instance_down(struct series *s, struct series_inst *in,
                           int64_t now_ms);
void series__instance_up(struct series *s, struct series_inst *in,
                         const char *cgroup_dir, pid_t pid, int64_t now_ms);
/* The instance ended: a last disk sample, its files put in place. */
int series__instance_ended(struct series *s, struct series_inst *in,
                           int64_t now_ms, struct err *err);

#endif
