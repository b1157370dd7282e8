/*
 * ty_cgroup.h — reading a cgroup's memory figures, on cgroup v1 and v2.
 *
 * Shared by the SDK (heap snapshot sidecars, diagnostics) and the runner
 * (the memory monitor samples every instance's cgroup; cgroup detection
 * scans the same mounts and reads control files with the same helpers).
 * Creating cgroups and setting limits is the runner's business
 * (runner/backend/cgroup.c); this file only finds and reads them. Internal to
 * testyard.
 */
#ifndef TY_CGROUP_H
#define TY_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
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

/* The files one reading looks at, in this order. */
enum ty__cgfile {
    TY_CGF_USAGE,  /* v1 memory.usage_in_bytes, v2 memory.current */
    TY_CGF_PEAK,   /* v1 memory.max_usage_in_bytes, v2 memory.peak */
    TY_CGF_LIMIT,  /* v1 memory.limit_in_bytes, v2 memory.max */
    TY_CGF_STAT,   /* memory.stat */
    TY_CGF_EVENTS, /* v1 memory.oom_control, v2 memory.events */
    TY_CGF_COUNT,
};

/* Where the memory controller of this machine is mounted and which version
 * it is; the v1 memory hierarchy wins when both are mounted. Returns the
 * mount point (static storage) or NULL when none. */
const char *ty__cgroup_memory_mount(enum ty__cgver *ver);

/* The memory cgroup directory of pid (0 = this process), as an absolute
 * path: the mount point of the memory hierarchy that shows pid's cgroup
 * (its path in /proc/<pid>/cgroup below the mount's root), joined with the
 * rest of that path. For this process, a directory the mount does not show
 * gives way to the nearest one above it that it does. Caller frees. NULL
 * when there is none (no controller, or a cgroup outside every mount). */
char *ty__cgroup_memory_dir(pid_t pid, enum ty__cgver *ver);
/* The same with every file read under root, a fake /proc and cgroup tree
 * for tests (root/proc/self/mountinfo, root/proc/<pid>/cgroup,
 * root<mount>/...); the directory returned is under root too. Nothing is
 * cached. */
char *ty__cgroup_memory_dir_at(const char *root, pid_t pid,
                               enum ty__cgver *ver);

/* Read the figures of the cgroup at dir. Returns 0, or -ENOENT when the
 * usage file itself cannot be read (the cgroup is gone), -ENOTSUP for an
 * unknown version. */
int ty__cgroup_read_memory(const char *dir, enum ty__cgver ver,
                           struct ty__cgmem *out);

/* The name of file f in a memory cgroup of version ver (v1 or v2). */
const char *ty__cgroup_file(enum ty__cgver ver, enum ty__cgfile f);
/* The figures from the files as reader(arg, f, buf, size) gives them: whole
 * and NUL-terminated, returning the length or -errno. Returns 0, the read's
 * -errno for the usage file, or -ENOTSUP for an unknown version. The
 * runner's monitor reads through descriptors it keeps open this way. */
int ty__cgroup_read_from(enum ty__cgver ver,
                         int (*reader)(const void *arg, enum ty__cgfile f,
                                       char *buf, size_t size),
                         const void *arg, struct ty__cgmem *out);

/* dir/name read whole with one read(2) into buf, NUL-terminated; returns
 * the length or -errno. Cgroup files are small. */
int ty__cgroup_read_file(const char *dir, const char *name, char *buf,
                         size_t size);
/* The value of "key N" in dir/name (memory.stat, memory.events,
 * memory.oom_control); -1 when absent or unreadable. */
int64_t ty__cgroup_read_keyed(const char *dir, const char *name,
                              const char *key);
/* Whether word is an item of list, items separated by sep (a trailing
 * newline or space on an item is ignored). */
bool ty__cgroup_has_word(const char *list, const char *word, char sep);
/* Call fn with the mount point, file system type and super options
 * ("rw,memory") of each mount in /proc/self/mountinfo. */
void ty__cgroup_each_mount(void (*fn)(const char *mnt, const char *fstype,
                                      const char *super, void *arg),
                           void *arg);

#endif
