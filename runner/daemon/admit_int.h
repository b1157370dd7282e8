/*
 * daemon/admit_int.h — admission: what a task needs (the sum of its
 * groups' limits), the budget the daemon may use, whether a task fits
 * beside what runs, and the plan's source copied into a task's snapshot.
 * Pure functions but admit__copy_tree.
 */
#ifndef TY_DAEMON_ADMIT_INT_H
#define TY_DAEMON_ADMIT_INT_H

#include "base/err.h"
#include "config/config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct admit_need {
    uint64_t memory_bytes;
    int64_t millicpu;
    bool unlimited_memory;
};

/* count × limit over the groups; a group without a memory limit makes
 * unlimited_memory true (the task then runs alone: charged the whole
 * budget); groups without a CPU quota are charged nothing for CPU. */
void admit__need(const struct composition *c, struct admit_need *need);

struct admit_budget {
    uint64_t memory_bytes;
    int64_t millicpu;
};

/* "12GiB", "75%" (of MemAvailable), "" = default 75% of MemAvailable;
 * CPU: "2", "1500m", "" = online CPUs × 1000. */
int admit__parse_memory_budget(const char *s, uint64_t mem_available,
                               uint64_t *out, struct err *err);
int admit__parse_cpu_budget(const char *s, int64_t online_cpus, int64_t *out,
                            struct err *err);

/* May a task needing need start beside running tasks using used? false
 * fills why: "needs 4.0 GiB, 1.5 GiB free of the 12 GiB budget" (or the
 * CPU one). */
bool admit__fits(const struct admit_need *need, const struct admit_need *used,
                 const struct admit_budget *b, char *why, size_t whylen);

/* Refused at submit: larger than the whole budget (why filled). */
bool admit__too_large(const struct admit_need *need,
                      const struct admit_budget *b, char *why, size_t whylen);

/* Copy the plan's source folder (regular files and folders only, no links
 * followed, bounded: 64 MiB, 10000 entries) into dst_dirfd/rel; on any
 * error nothing is left. */
int admit__copy_tree(const char *src_dir, int dst_dirfd, const char *rel,
                     struct err *err);

#endif
