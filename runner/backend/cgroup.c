/*
 * cgroup.c — creating, using and removing per-instance cgroups (see
 * backend/cgroup_int.h; detection lives in cgroup_sys.c).
 *
 * A cgroup is a set of "slots", one directory per hierarchy it lives in: on
 * v1 one per controller it needs (memory always, cpu and pids when a limit
 * asks for them), on v2 a single one whose ancestors get the controllers
 * enabled in cgroup.subtree_control. Each slot keeps the path of its
 * cgroup.procs so a child between fork and exec can move itself with
 * open/write/close only.
 *
 * Memory figures are read through ty__cgroup_read_memory
 * (sdk/common/ty_cgroup.c), the same code the SDK uses for its own sidecars.
 */
#include "backend/cgroup_int.h"
#include "backend/cgroup_sys_int.h"

#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CFS_PERIOD_US 100000
#define CFS_MIN_QUOTA_US 1000
#define KILL_WAIT_MS 1000
#define RMDIR_WAIT_MS 1000

struct cgroup {
    enum ty__cgver ver;
    int nslot;
    int slot_of[NCTL]; /* slot holding each controller, -1 when none */
    char *dir[NCTL];   /* leaf directory per slot; dir[0] is memory's */
    char *procs[NCTL]; /* dir[i] + "/cgroup.procs" */
    char *root[NCTL];  /* hierarchy root of each slot (not removed) */
    bool owned;        /* created here, so removed here */
    bool removed;
};

static void
sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Write s to path with one write(2); returns 0 or -errno. Only
 * async-signal-safe calls, for cgroup__attach_self_prepared. */
static int
write_raw(const char *path, const char *s, size_t len)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    ssize_t n;
    int e = 0;

    if (fd < 0)
        return -errno;
    do
        n = write(fd, s, len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        e = -errno;
    close(fd);
    return e;
}

static int
write_file(const char *dir, const char *name, const char *value,
           struct err *err)
{
    cleanup_free char *path = path_join(dir, name);
    int rc = write_raw(path, value, strlen(value));

    if (rc < 0)
        return err_sys(err, -rc, "write \"%s\" to %s", value, path);
    return 0;
}

/* ---- creation ---------------------------------------------------------- */

static struct cgroup *
cg_alloc(enum ty__cgver ver)
{
    struct cgroup *cg = xcalloc(1, sizeof(*cg));

    cg->ver = ver;
    for (int i = 0; i < NCTL; i++)
        cg->slot_of[i] = -1;
    return cg;
}

static void
cg_add_slot(struct cgroup *cg, const char *root, const char *dir)
{
    int s = cg->nslot++;

    cg->root[s] = root ? xstrdup(root) : NULL;
    cg->dir[s] = xstrdup(dir);
    cg->procs[s] = path_join(dir, "cgroup.procs");
}

static bool
relpath_ok(const char *rel)
{
    const char *p = rel;

    if (*rel == '\0' || *rel == '/')
        return false;
    while (*p != '\0') {
        size_t len = strcspn(p, "/");

        if (len == 0 || (len == 1 && p[0] == '.') ||
            (len == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        p += len;
        if (*p == '/')
            p++;
    }
    return p[-1] != '/';
}

/* v2: make sure every controller in want is on in dir's subtree_control,
 * with one write ("+memory +cpu") so that a failure names them all. */
static int
enable_subtree(const char *dir, unsigned want, struct err *err)
{
    char cur[4096];
    bool have = ty__cgroup_read_file(dir, "cgroup.subtree_control", cur,
                                     sizeof(cur)) >= 0;
    char ops[64] = "";
    size_t len = 0;

    for (int i = 0; i < NCTL; i++)
        if ((want & (1u << i)) &&
            (!have || !ty__cgroup_has_word(cur, cgroup__ctl_names[i], ' ')))
            len += (size_t)snprintf(ops + len, sizeof(ops) - len, "%s+%s",
                                    len ? " " : "", cgroup__ctl_names[i]);
    if (len == 0)
        return 0;
    if (write_file(dir, "cgroup.subtree_control", ops, err) < 0)
        return err_prefix(err, "enable cgroup controllers");
    return 0;
}

/* mkdir each component of rel under root (v2: enabling want in each
 * parent's subtree_control first). Existing directories are fine. */
static int
make_chain_once(const char *root, const char *rel, bool v2, unsigned want,
                struct err *err)
{
    cleanup_free char *path = path_join(root, rel);
    char *s = path + strlen(root);

    if (*s != '/')
        return err_set(err, EINVAL, "%s: bad cgroup path", path);
    while (s != NULL) {
        char *next = strchr(s + 1, '/');

        *s = '\0';
        if (v2 && enable_subtree(path, want, err) < 0)
            return -1;
        *s = '/';
        if (next != NULL)
            *next = '\0';
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
            return err_sys(err, errno, "mkdir %s", path);
        if (next != NULL)
            *next = '/';
        s = next;
    }
    return 0;
}

/* Another run's clean-up may remove an empty parent (CGROUP_BASE) between
 * our mkdirs: start again when a parent vanished. */
static int
make_chain(const char *root, const char *rel, bool v2, unsigned want,
           struct err *err)
{
    struct err e = {0};
    int rc = -1;

    for (int attempt = 0; attempt < 3; attempt++) {
        err_clear(&e);
        rc = make_chain_once(root, rel, v2, want, &e);
        if (rc == 0 || e.code != ENOENT)
            break;
    }
    if (rc < 0 && err != NULL)
        *err = e;
    return rc;
}

static int
make_dirs(const struct cgroup_sys *sys, struct cgroup *cg, const char *rel,
          unsigned want, struct err *err)
{
    cleanup_free char *full = xasprintf("%s/%s", CGROUP_BASE, rel);

    for (int i = 0; i < NCTL; i++) {
        cleanup_free char *dir = NULL;
        bool v2 = sys->ver == TY_CG_V2;

        if (!(want & (1u << i)))
            continue;
        if (v2 && i > 0) {
            cg->slot_of[i] = 0;
            continue;
        }
        dir = path_join(sys->root[i], full);
        cg->slot_of[i] = cg->nslot;
        cg_add_slot(cg, sys->root[i], dir);
        if (make_chain(sys->root[i], full, v2, want, err) < 0)
            return -1;
    }
    return 0;
}

static int
limit_memory(const struct cgroup_sys *sys, const char *dir, uint64_t bytes,
             struct err *err)
{
    char v[32];

    snprintf(v, sizeof(v), "%llu", (unsigned long long)bytes);
    if (sys->ver == TY_CG_V2) {
        if (write_file(dir, "memory.max", v, err) < 0)
            return -1;
        if (cgroup__file_in(dir, "memory.swap.max"))
            return write_file(dir, "memory.swap.max", "0", err);
        return 0;
    }
    /* memsw (memory + swap) must stay >= the memory limit: set it after. */
    if (write_file(dir, "memory.limit_in_bytes", v, err) < 0)
        return -1;
    if (cgroup__file_in(dir, "memory.memsw.limit_in_bytes"))
        return write_file(dir, "memory.memsw.limit_in_bytes", v, err);
    if (sys->swap_on)
        (void)write_file(dir, "memory.swappiness", "0", NULL);
    return 0;
}

static int
limit_cpu(enum ty__cgver ver, const char *dir, int64_t millicpu,
          struct err *err)
{
    int64_t quota = millicpu * (CFS_PERIOD_US / 1000);
    char v[64];

    if (quota < CFS_MIN_QUOTA_US)
        quota = CFS_MIN_QUOTA_US;
    if (ver == TY_CG_V2) {
        snprintf(v, sizeof(v), "%lld %d", (long long)quota, CFS_PERIOD_US);
        return write_file(dir, "cpu.max", v, err);
    }
    snprintf(v, sizeof(v), "%d", CFS_PERIOD_US);
    if (write_file(dir, "cpu.cfs_period_us", v, err) < 0)
        return -1;
    snprintf(v, sizeof(v), "%lld", (long long)quota);
    return write_file(dir, "cpu.cfs_quota_us", v, err);
}

static int
apply_limits(const struct cgroup_sys *sys, const struct cgroup *cg,
             uint64_t mem, int64_t millicpu, int64_t pids, struct err *err)
{
    char v[32];

    if (mem > 0 && limit_memory(sys, cg->dir[0], mem, err) < 0)
        return -1;
    if (millicpu > 0 && cg->slot_of[1] >= 0 &&
        limit_cpu(sys->ver, cg->dir[cg->slot_of[1]], millicpu, err) < 0)
        return -1;
    if (pids > 0 && cg->slot_of[2] >= 0) {
        snprintf(v, sizeof(v), "%lld", (long long)pids);
        if (write_file(cg->dir[cg->slot_of[2]], "pids.max", v, err) < 0)
            return -1;
    }
    return 0;
}

struct cgroup *
cgroup__create(const struct cgroup_sys *sys, const char *relpath,
               uint64_t mem_limit, int64_t millicpu, int64_t pids_max,
               struct err *err)
{
    unsigned want = CGROUP_MEMORY;
    struct cgroup *cg;

    if (!cgroup_sys_usable(sys))
        return err_set(err, ENOTSUP, "%s", sys->warning), NULL;
    if (!relpath_ok(relpath))
        return err_set(err, EINVAL, "bad cgroup path \"%s\"", relpath), NULL;
    if (millicpu > 0)
        want |= CGROUP_CPU;
    if (pids_max > 0)
        want |= CGROUP_PIDS;
    want &= sys->ctl;
    cg = cg_alloc(sys->ver);
    cg->owned = true;
    if (make_dirs(sys, cg, relpath, want, err) < 0 ||
        apply_limits(sys, cg, mem_limit, millicpu, pids_max, err) < 0)
        cgroup__destroy(&cg);
    return cg;
}

struct cgroup *
cgroup__open(const char *memory_dir, enum ty__cgver ver, struct err *err)
{
    struct cgroup *cg;

    if (ver != TY_CG_V1 && ver != TY_CG_V2)
        return err_set(err, EINVAL, "%s: unknown cgroup version", memory_dir),
               NULL;
    if (!path_is_dir(memory_dir))
        return err_sys(err, ENOENT, "cgroup %s", memory_dir), NULL;
    cg = cg_alloc(ver);
    cg_add_slot(cg, NULL, memory_dir);
    cg->slot_of[0] = 0;
    return cg;
}

struct cgroup *
cgroup__adopt(const struct cgroup_sys *sys, const char *relpath,
              struct err *err)
{
    cleanup_free char *full = NULL;
    struct cgroup *cg;

    if (!cgroup_sys_usable(sys))
        return err_set(err, ENOTSUP, "%s", sys->warning), NULL;
    if (!relpath_ok(relpath))
        return err_set(err, EINVAL, "bad cgroup path \"%s\"", relpath), NULL;
    full = xasprintf("%s/%s", CGROUP_BASE, relpath);
    cg = cg_alloc(sys->ver);
    cg->owned = true;
    for (int i = 0; i < NCTL; i++) {
        cleanup_free char *dir = NULL;

        if (!(sys->ctl & (1u << i)) || (sys->ver == TY_CG_V2 && i > 0))
            continue;
        dir = path_join(sys->root[i], full);
        if (path_is_dir(dir))
            cg_add_slot(cg, sys->root[i], dir);
    }
    if (cg->nslot == 0) {
        cg->removed = true;
        cgroup__destroy(&cg);
        return err_set(err, ENOENT, "no cgroup %s", full), NULL;
    }
    return cg;
}

char **
cgroup_list(const struct cgroup_sys *sys, const char *relpath)
{
    cleanup_free char *full = NULL;
    cleanup_free char *dir = NULL;

    if (!cgroup_sys_usable(sys) || (*relpath && !relpath_ok(relpath)))
        return NULL;
    full = *relpath ? xasprintf("%s/%s", CGROUP_BASE, relpath)
                    : xstrdup(CGROUP_BASE);
    dir = path_join(sys->root[0], full);
    return cgroup__subdirs(dir);
}

void
cgroup__destroy(struct cgroup **cgp)
{
    struct cgroup *cg = cgp ? *cgp : NULL;

    if (cg == NULL)
        return;
    if (cg->owned && !cg->removed) {
        (void)cgroup__kill_all(cg, NULL);
        (void)cgroup__remove(cg, NULL);
    }
    for (int i = 0; i < cg->nslot; i++) {
        free(cg->dir[i]);
        free(cg->procs[i]);
        free(cg->root[i]);
    }
    free(cg);
    *cgp = NULL;
}

/* ---- using ------------------------------------------------------------- */

int
cgroup__attach_self_prepared(const struct cgroup *cg)
{
    for (int i = 0; i < cg->nslot; i++) {
        int rc = write_raw(cg->procs[i], "0", 1);

        if (rc < 0)
            return rc;
    }
    return 0;
}

int
cgroup__attach(const struct cgroup *cg, pid_t pid, struct err *err)
{
    char v[32];

    snprintf(v, sizeof(v), "%d", (int)pid);
    for (int i = 0; i < cg->nslot; i++) {
        int rc = write_raw(cg->procs[i], v, strlen(v));

        if (rc < 0)
            return err_sys(err, -rc, "move pid %d into %s", (int)pid,
                           cg->dir[i]);
    }
    return 0;
}

const char *
cgroup__memory_dir(const struct cgroup *cg)
{
    return cg->dir[0];
}

const char *
cgroup__controller_dir(const struct cgroup *cg, unsigned ctl)
{
    for (int i = 0; i < NCTL; i++)
        if (ctl == 1u << i)
            return cg->slot_of[i] >= 0 ? cg->dir[cg->slot_of[i]] : NULL;
    return NULL;
}

enum ty__cgver
cgroup__version(const struct cgroup *cg)
{
    return cg->ver;
}

int
cgroup__read(const struct cgroup *cg, struct ty__cgmem *out, struct err *err)
{
    int rc = ty__cgroup_read_memory(cg->dir[0], cg->ver, out);

    if (rc < 0)
        return err_sys(err, -rc, "read the memory of cgroup %s", cg->dir[0]);
    return 0;
}

int64_t
cgroup__oom_kills(const struct cgroup *cg)
{
    return ty__cgroup_read_keyed(
        cg->dir[0], ty__cgroup_file(cg->ver, TY_CGF_EVENTS), "oom_kill");
}

/* sig to each pid listed in procs; returns how many were listed, or
 * -errno when the file cannot be read. */
static int
signal_listed(const char *procs, int sig)
{
    struct err e = {0};
    cleanup_free char *buf = file_read(procs, 64 << 20, NULL, &e);
    int n = 0;

    if (buf == NULL)
        return -e.code;
    for (char *p = buf; *p != '\0';) {
        char *end;
        long pid = strtol(p, &end, 10);

        if (end == p)
            break;
        if (pid > 0) {
            kill((pid_t)pid, sig);
            n++;
        }
        p = end;
    }
    return n;
}

int
cgroup__nprocs(const struct cgroup *cg)
{
    cleanup_free char *buf = file_read(cg->procs[0], 64 << 20, NULL, NULL);
    int n = 0;

    if (buf == NULL)
        return -1;
    for (const char *p = buf; *p != '\0'; p++)
        n += *p == '\n';
    return n;
}

int
cgroup__kill_all(const struct cgroup *cg, struct err *err)
{
    int n = 0;

    /* cgroup.kill (Linux 5.14) also catches processes forked meanwhile. */
    if (cg->ver == TY_CG_V2 && cgroup__file_in(cg->dir[0], "cgroup.kill"))
        (void)write_file(cg->dir[0], "cgroup.kill", "1", NULL);
    for (int waited = 0; waited < KILL_WAIT_MS; waited++) {
        n = signal_listed(cg->procs[0], SIGKILL);
        if (n == 0 || n == -ENOENT)
            return 0;
        if (n < 0)
            return err_sys(err, -n, "read %s", cg->procs[0]);
        sleep_ms(1);
    }
    return err_set(err, EBUSY, "%s: %d processes still there after SIGKILL",
                   cg->dir[0], n);
}

int
cgroup__signal_all(const struct cgroup *cg, int sig)
{
    int n = signal_listed(cg->procs[0], sig);

    return n < 0 ? -1 : n;
}

int
cgroup__freeze(const struct cgroup *cg, bool freeze, struct err *err)
{
    if (cg->ver != TY_CG_V2 || !cgroup__file_in(cg->dir[0], "cgroup.freeze"))
        return err_set(err, ENOTSUP, "%s: no cgroup.freeze", cg->dir[0]);
    return write_file(cg->dir[0], "cgroup.freeze", freeze ? "1" : "0", err);
}

/* rmdir, waiting while the kernel finishes tearing exited tasks down. */
static int
rmdir_wait(const char *dir)
{
    for (int waited = 0;; waited += 10) {
        if (rmdir(dir) == 0 || errno == ENOENT)
            return 0;
        if (errno != EBUSY || waited >= RMDIR_WAIT_MS)
            return -errno;
        sleep_ms(10);
    }
}

/* Remove the now empty parents of dir up to (not including) root. */
static void
remove_parents(const char *root, const char *dir)
{
    cleanup_free char *path = xstrdup(dir);
    size_t rootlen = strlen(root);
    char *slash;

    while ((slash = strrchr(path, '/')) != NULL &&
           (size_t)(slash - path) > rootlen) {
        *slash = '\0';
        if (rmdir(path) < 0 && errno != ENOENT)
            return;
    }
}

int
cgroup__remove(struct cgroup *cg, struct err *err)
{
    if (!cg->owned || cg->removed)
        return 0;
    for (int i = 0; i < cg->nslot; i++) {
        int rc = rmdir_wait(cg->dir[i]);

        if (rc < 0)
            return err_sys(err, -rc, "rmdir %s", cg->dir[i]);
        remove_parents(cg->root[i], cg->dir[i]);
    }
    cg->removed = true;
    return 0;
}
