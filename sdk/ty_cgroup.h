/*
 * ty_cgroup.h — reading a cgroup's memory figures, on cgroup v1 and v2.
 *
 * Shared by the SDK (heap snapshot sidecars, diagnostics) and the runner
 * (the memory monitor samples every instance's cgroup). Creating cgroups and
 * setting limits is the runner's business (runner/cgroup.c); this file only
 * finds and reads them. Internal to testyard.
 */
#ifndef TY_CGROUP_H
#define TY_CGROUP_H

#include <stdint.h>
#include <sys/types.h>

enum ty__cgver {
    TY_CG_NONE = 0, /* no memory controller found */
    TY_CG_V1 = 1,
    TY_CG_V2 = 2,
};

/* One reading. Fields the kernel does not provide are -1. */
struct ty__cgmem {
    int64_t usage;     /* v1 memory.usage_in_bytes, v2 memory.current */
    int64_t anon;      /* v1 total_rss, v2 anon (memory.stat) */
    int64_t file;      /* v1 total_cache, v2 file (memory.stat) */
    int64_t peak;      /* v1 memory.max_usage_in_bytes, v2 memory.peak */
    int64_t limit;     /* -1 when unlimited */
    int64_t oom_kills; /* v1 memory.oom_control oom_kill, v2 memory.events */
};

/* Where the memory controller of this machine is mounted and which version
 * it is; the v1 memory hierarchy wins when both are mounted. Returns the
 * mount point (static storage) or NULL when none. */
const char *ty__cgroup_memory_mount(enum ty__cgver *ver);

/* The memory cgroup directory of pid (0 = this process), as an absolute
 * path. Caller frees. NULL when there is none. */
char *ty__cgroup_memory_dir(pid_t pid, enum ty__cgver *ver);

/* Read the figures of the cgroup at dir. Returns 0, or -errno when the
 * usage file itself cannot be read (the cgroup is gone). */
int ty__cgroup_read_memory(const char *dir, enum ty__cgver ver,
                           struct ty__cgmem *out);

#endif
