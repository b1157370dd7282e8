/*
 * backend/cgroup_int.h — per-instance cgroups for the local:exec backend:
 * limits with no swap, CPU quota, pids limit, OOM kill counts, killing every
 * process and removing the directories, on cgroup v1 and v2.
 *
 * A struct cgroup_sys says once what this machine allows. When it cannot
 * create cgroups (not root, no memory controller, a read-only mount) it is
 * still returned, cgroup_sys_usable() is false and cgroup__sys_warning() holds
 * the one line the caller prints; instances then run without limits.
 *
 * Layout: v1 keeps one directory per controller hierarchy
 * (<memory mount>/testyard/<run-id>/<group>-<index>, the same under the cpu
 * and pids mounts); v2 one directory under the unified mount with the
 * controllers enabled in each ancestor's cgroup.subtree_control.
 *
 * Ownership: the caller owns what cgroup_sys_new*, cgroup__create and
 * cgroup__open return and frees it with the matching _destroy; a struct cgroup
 * does not refer to its cgroup_sys after creation. `const char *` results are
 * borrowed from the object.
 */
#ifndef TY_RUNNER_CGROUP_H
#define TY_RUNNER_CGROUP_H

#include "backend/backend.h"
#include "base/err.h"
#include "ty_cgroup.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Controllers, as bits of cgroup__sys_controllers(). */
enum {
    CGROUP_MEMORY = 1 << 0,
    CGROUP_CPU = 1 << 1,
    CGROUP_PIDS = 1 << 2,
};

struct cgroup;

/* The same on a tree rooted at root (for tests on a fake tree): for v1,
 * root holds one directory per controller (memory/, cpu/, pids/); for v2,
 * root is the unified hierarchy's root with its cgroup.controllers. */
struct cgroup_sys *cgroup__sys_new_at(enum ty__cgver ver, const char *root);

enum ty__cgver cgroup__sys_version(const struct cgroup_sys *sys);
/* CGROUP_* bits of the controllers found and writable. */
unsigned cgroup__sys_controllers(const struct cgroup_sys *sys);
/* One line saying what is missing and what it means for the run, or NULL
 * when everything is there. */
const char *cgroup__sys_warning(const struct cgroup_sys *sys);

/* Create <base>/<relpath> ("<run-id>/<group>-<index>") in every usable
 * hierarchy and apply the limits: mem_limit bytes with no swap (0 = none),
 * millicpu thousandths of a CPU as a CFS quota over a 100 ms period
 * (0 = none), pids_max processes (0 = none). A limit that was asked for but
 * cannot be applied is an error; a controller the machine lacks is skipped
 * (cgroup__sys_warning said so). On error nothing is left behind. */
struct cgroup *cgroup__create(const struct cgroup_sys *sys, const char *relpath,
                              uint64_t mem_limit, int64_t millicpu,
                              int64_t pids_max, struct err *err);
/* An existing cgroup found by its memory directory (a container's, from
 * ty__cgroup_memory_dir). It can be read, watched for OOM kills and killed;
 * cgroup__remove leaves it in place since testyard did not create it. */
struct cgroup *cgroup__open(const char *memory_dir, enum ty__cgver ver,
                            struct err *err);
/* A cgroup testyard made (<base>/<relpath>, in every hierarchy where it
 * is found) whose coordinator is gone, so that cgroup__kill_all,
 * cgroup__remove and cgroup__destroy treat it as created here. ENOENT when
 * no hierarchy has it. */
struct cgroup *cgroup__adopt(const struct cgroup_sys *sys, const char *relpath,
                             struct err *err);
/* When this module created the cgroup, kill what is left in it and remove
 * its directories (best effort: call cgroup__kill_all and cgroup__remove first
 * to see errors); then free and set *cg to NULL. NULL-safe. */
void cgroup__destroy(struct cgroup **cg);

/* Move the calling process into the cgroup. Made for a child between fork
 * and exec: it only uses paths computed at creation and open/write/close,
 * and returns 0 or -errno. */
int cgroup__attach_self_prepared(const struct cgroup *cg);
/* Move pid (all its threads) into the cgroup. */
int cgroup__attach(const struct cgroup *cg, pid_t pid, struct err *err);

const char *cgroup__memory_dir(const struct cgroup *cg);
/* The directory holding controller ctl (CGROUP_CPU, ...) for this cgroup,
 * or NULL when the cgroup has no such controller. */
const char *cgroup__controller_dir(const struct cgroup *cg, unsigned ctl);
enum ty__cgver cgroup__version(const struct cgroup *cg);
/* Memory figures now (see struct ty__cgmem). Fails when the cgroup is
 * gone. */
int cgroup__read(const struct cgroup *cg, struct ty__cgmem *out,
                 struct err *err);
/* How many processes of the cgroup the kernel's OOM killer has killed so
 * far, or -1 when the kernel does not say (or the cgroup is gone). An OOM
 * kill happened when this grows. */
int64_t cgroup__oom_kills(const struct cgroup *cg);
/* Processes in the cgroup now; -1 when it cannot be read. */
int cgroup__nprocs(const struct cgroup *cg);

/* SIGKILL every process in the cgroup (cgroup.kill on v2 when the kernel
 * has it, else each pid of cgroup.procs, again until none is left) and wait
 * up to a second for them to be gone. */
int cgroup__kill_all(const struct cgroup *cg, struct err *err);
/* Send sig to every process in the cgroup now; how many there were, or
 * -1 when its list cannot be read. */
int cgroup__signal_all(const struct cgroup *cg, int sig);
/* Freeze (or thaw) every process in the cgroup through cgroup.freeze
 * (v2, Linux 5.2); ENOTSUP where there is none (v1: this module makes no
 * freezer cgroups), and the caller stops the processes another way. */
int cgroup__freeze(const struct cgroup *cg, bool freeze, struct err *err);
/* Remove the cgroup's directories and then its parents up to and including
 * CGROUP_BASE, leaving parents that other cgroups still use. Fails with
 * EBUSY while processes remain in it. */
int cgroup__remove(struct cgroup *cg, struct err *err);

#endif
