/*
 * backend/cgroup_sys_int.h — what cgroup.c and cgroup_sys.c share.
 *
 *   cgroup_sys.c  detection: hierarchies, controllers, the warning line
 *   cgroup.c      creating, attaching, reading, killing, removing
 *
 * Mounts are scanned, control files read and word lists searched with the
 * SDK's helpers (sdk/common/ty_cgroup.h), so the runner and plans agree.
 */
#ifndef TY_RUNNER_CGROUP_INT_H
#define TY_RUNNER_CGROUP_INT_H

#include "backend/cgroup_int.h"

#include <stdbool.h>
#include <stddef.h>

/* Controllers by index: bit (1 << i) of CGROUP_MEMORY, CGROUP_CPU, ... */
#define NCTL 3
extern const char *const cgroup__ctl_names[NCTL];

struct cgroup_sys {
    enum ty__cgver ver;
    char *root[NCTL]; /* v1: each controller's mount; v2: root[0] only */
    unsigned ctl;     /* CGROUP_* found and writable */
    bool memsw;       /* v1: memory.memsw.* exists (swap accounting on) */
    bool swap_on;     /* the machine has swap space */
    char warning[512];
};

/* Names of the directories in dir, NULL-terminated (the caller's), or
 * NULL when there are none. */
char **cgroup__subdirs(const char *dir);

/* Whether dir/name exists. */
bool cgroup__file_in(const char *dir, const char *name);

#endif
