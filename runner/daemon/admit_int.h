/*
 * daemon/admit_int.h — admission (may a task start now?) and the snapshot
 * of a plan's source taken at submit; private to runner/daemon/.
 *
 * Admission is pure arithmetic over what the daemon knows: each task's
 * need (the sum over its groups of instances × memory limit and ×
 * CPU quota), what the running tasks need together, and the budgets the
 * daemon was given. A group without a memory limit could take all the
 * memory there is, so its task runs alone: it is charged the whole
 * memory budget, starts only when nothing runs, and is never too large
 * for the memory budget.
 *
 * Ownership: nothing here keeps a pointer; strings are borrowed.
 */
#ifndef TY_DAEMON_ADMIT_INT_H
#define TY_DAEMON_ADMIT_INT_H

#include "base/err.h"
#include "config/config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Of MemAvailable, the default memory budget (--memory-budget ""). */
#define ADMIT_DEFAULT_MEMORY_PERCENT 75

struct admit_need {
    uint64_t memory_bytes;
    int64_t millicpu;
    bool unlimited_memory;
};

/* count × limit over the groups; a group without a memory limit makes
 * unlimited_memory true (the task then runs alone: charged the whole
 * budget), and memory_bytes keeps the sum of the groups that have one;
 * groups without a CPU quota are charged nothing for CPU. Sums saturate
 * rather than wrap. The needs of running tasks add up with
 * admit__need_add into the `used` of admit__fits. */
void admit__need(const struct composition *c, struct admit_need *need);
void admit__need_add(struct admit_need *sum, const struct admit_need *n);

struct admit_budget {
    uint64_t memory_bytes;
    int64_t millicpu;
};

/* "12GiB", "512Mi", "8GB" (ty_units' sizes), "75%" (a whole percentage
 * from 1 to 100 of mem_available), "" = ADMIT_DEFAULT_MEMORY_PERCENT of
 * mem_available. CPU: "2", "1.5", "1500m" (ty_units' cpu), "" = online_cpus
 * × 1000. A bad value fails (EINVAL, status EXIT_USAGE) with what was
 * expected and what was given, for the caller to prefix with the option's
 * name. */
int admit__parse_memory_budget(const char *s, uint64_t mem_available,
                               uint64_t *out, struct err *err);
int admit__parse_cpu_budget(const char *s, int64_t online_cpus, int64_t *out,
                            struct err *err);
/* Both budgets as the daemon's --memory-budget and --cpu-budget give them
 * (NULL is ""; errors name the option), reading MemAvailable only when
 * memory needs it and the online CPUs from sysconf. */
int admit__budget(const char *memory, const char *cpu, struct admit_budget *b,
                  struct err *err);

/* MemAvailable of /proc/meminfo in bytes; admit__parse_meminfo reads it
 * from the file's text (fails on a file without the line: Linux older
 * than 3.14). */
int admit__mem_available(uint64_t *out, struct err *err);
int admit__parse_meminfo(const char *text, uint64_t *out, struct err *err);

/* May a task needing `need` start beside running tasks using `used`
 * (admit__need_add of theirs; all zero when nothing runs)? false fills
 * why: "needs 4.0 GiB, 1.5 GiB free of the 12 GiB budget", the CPU one
 * alike ("needs 1.5 CPU, 0.5 CPU free of the 2 CPU budget"), "runs alone:
 * a group has no memory limit" (need unlimited, something runs) or
 * "waits for a task that runs alone (a group without a memory limit)". */
bool admit__fits(const struct admit_need *need, const struct admit_need *used,
                 const struct admit_budget *b, char *why, size_t whylen);
/* Refused at submit: larger than the whole budget, memory or CPU (why
 * filled: "needs 20.0 GiB, more than the whole 12 GiB budget"). A task
 * without a memory limit is never too large for memory. */
bool admit__too_large(const struct admit_need *need,
                      const struct admit_budget *b, char *why, size_t whylen);

/* What the copy of a plan's source may hold at most. */
struct admit_copy_limits {
    uint64_t bytes;   /* of file contents, in all */
    uint64_t entries; /* files, folders and skipped entries looked at */
    int depth;        /* folders below the source folder */
};
#define ADMIT_COPY_BYTES ((uint64_t)64 << 20)
#define ADMIT_COPY_ENTRIES 10000
#define ADMIT_COPY_DEPTH 32

/* Copy the plan's source folder src_dir (a path the user gave: links in
 * it are followed) into dst_dirfd/rel, which must not exist (its parent
 * folders are made, mode 0700, where missing): regular files (with their
 * owner's rwx bits, whatever the umask) and folders (0700) only; links,
 * devices, sockets and fifos are skipped, never followed or opened, and
 * so is anything named .git. Built under a temporary name in rel's
 * folder and renamed into place at the end, so rel appears whole or not
 * at all; on any error (a bound passed, a full disk: status 74) what
 * this call made is removed and nothing else. rel is relative, with no
 * "." or ".." component. admit__copy_tree_limits takes its own bounds
 * (tests); admit__copy_tree the ADMIT_COPY_* ones. */
int admit__copy_tree(const char *src_dir, int dst_dirfd, const char *rel,
                     struct err *err);
int admit__copy_tree_limits(const char *src_dir, int dst_dirfd, const char *rel,
                            const struct admit_copy_limits *lim,
                            struct err *err);

#endif
