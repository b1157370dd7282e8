/*
 * cgroup_sys.c — what this machine allows for per-instance cgroups (see
 * cgroup.h), found once per run.
 *
 * /proc/self/mountinfo gives the hierarchies: the v1 memory hierarchy wins
 * when it is mounted (as in ty_cgroup.c, so the runner and the SDK agree),
 * else a cgroup2 mount whose cgroup.controllers lists memory. Each
 * controller is then usable when its hierarchy's root accepts new
 * directories (and, on v2, controller changes). Whatever is missing is said
 * in one warning line for the caller to print.
 */
#include "cgroup.h"
#include "cgroup_int.h"

#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const cgroup__ctl_names[NCTL] = {"memory", "cpu", "pids"};

bool
cgroup__has_word(const char *list, const char *word, char sep)
{
    size_t wl = strlen(word);
    const char *p = list;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, sep);
        size_t len = end ? (size_t)(end - p) : strlen(p);

        while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == ' '))
            len--;
        if (len == wl && strncmp(p, word, wl) == 0)
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

bool
cgroup__file_in(const char *dir, const char *name)
{
    cleanup_free char *path = path_join(dir, name);

    return path_exists(path);
}

/* Read a small control file whole; NULL when it cannot be read. */
char *
cgroup__read_ctl(const char *dir, const char *name, size_t max)
{
    cleanup_free char *path = path_join(dir, name);

    return file_read(path, max, NULL, NULL);
}

/* mountinfo: id parent maj:min root mountpoint opts ... - fstype src super */
static void
scan_mounts(char *v1[NCTL], char **v2)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    char line[4096];

    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL) {
        char mnt[1024], fstype[64], super[1024];
        char *dash = strstr(line, " - ");

        if (dash == NULL || sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1 ||
            sscanf(dash + 3, "%63s %*s %1023s", fstype, super) != 2)
            continue;
        if (strcmp(fstype, "cgroup2") == 0 && *v2 == NULL)
            *v2 = xstrdup(mnt);
        if (strcmp(fstype, "cgroup") != 0)
            continue;
        for (int i = 0; i < NCTL; i++)
            if (v1[i] == NULL &&
                cgroup__has_word(super, cgroup__ctl_names[i], ','))
                v1[i] = xstrdup(mnt);
    }
    fclose(f);
}

static bool
swap_configured(void)
{
    cleanup_free char *mi = file_read("/proc/meminfo", 1 << 20, NULL, NULL);
    const char *p = mi ? strstr(mi, "SwapTotal:") : NULL;

    return p != NULL && strtoll(p + 10, NULL, 10) > 0;
}

static void warn_add(struct cgroup_sys *sys, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
warn_add(struct cgroup_sys *sys, const char *fmt, ...)
{
    size_t len = strlen(sys->warning);
    va_list ap;

    if (len == 0)
        len = (size_t)snprintf(sys->warning, sizeof(sys->warning), "cgroups: ");
    else if (len + 2 < sizeof(sys->warning))
        len += (size_t)snprintf(sys->warning + len, sizeof(sys->warning) - len,
                                "; ");
    if (len >= sizeof(sys->warning))
        return;
    va_start(ap, fmt);
    vsnprintf(sys->warning + len, sizeof(sys->warning) - len, fmt, ap);
    va_end(ap);
}

/* Whether dir accepts new cgroups; the errno when not. */
static int
dir_writable(const char *dir, const char *ctlfile)
{
    cleanup_free char *path = ctlfile ? path_join(dir, ctlfile) : NULL;

    if (access(dir, W_OK) < 0)
        return errno;
    if (path != NULL && access(path, W_OK) < 0)
        return errno;
    return 0;
}

static void
warn_unwritable(struct cgroup_sys *sys, const char *dir, int e)
{
    warn_add(sys,
             "cannot create cgroups under %s (%s%s); instances run without "
             "memory, CPU or pids limits and OOM kills are not detected",
             dir, strerror(e),
             geteuid() != 0 ? "; testyard needs root for limits" : "");
}

static void
warn_missing(struct cgroup_sys *sys, unsigned missing)
{
    if (missing == (CGROUP_CPU | CGROUP_PIDS))
        warn_add(sys, "no usable cpu or pids controller; instances run "
                      "without a CPU quota or a pids limit");
    else if (missing == CGROUP_CPU)
        warn_add(sys, "no usable cpu controller; instances run without a "
                      "CPU quota");
    else if (missing == CGROUP_PIDS)
        warn_add(sys, "no usable pids controller; instances run without a "
                      "pids limit");
}

static void
probe_v1(struct cgroup_sys *sys)
{
    unsigned missing = 0;
    int e;

    for (int i = 0; i < NCTL; i++) {
        e = sys->root[i] ? dir_writable(sys->root[i], NULL) : ENOENT;
        if (e == 0)
            sys->ctl |= 1u << i;
        else if (i == 0 && sys->root[i] != NULL) {
            warn_unwritable(sys, sys->root[i], e);
            return;
        } else
            missing |= 1u << i;
    }
    if (sys->root[0] == NULL)
        return;
    warn_missing(sys, missing);
    sys->memsw = cgroup__file_in(sys->root[0], "memory.memsw.limit_in_bytes");
    if (!sys->memsw && sys->swap_on)
        warn_add(sys, "swap accounting is off (no memory.memsw files; boot "
                      "with swapaccount=1), so an instance may swap instead "
                      "of being OOM-killed at its limit");
}

static void
probe_v2(struct cgroup_sys *sys)
{
    cleanup_free char *ctls =
        cgroup__read_ctl(sys->root[0], "cgroup.controllers", 4096);
    unsigned found = 0;
    int e;

    for (int i = 0; i < NCTL; i++)
        if (ctls != NULL && cgroup__has_word(ctls, cgroup__ctl_names[i], ' '))
            found |= 1u << i;
    if (!(found & CGROUP_MEMORY))
        return;
    e = dir_writable(sys->root[0], "cgroup.subtree_control");
    if (e != 0) {
        warn_unwritable(sys, sys->root[0], e);
        return;
    }
    sys->ctl = found;
    warn_missing(sys, (CGROUP_CPU | CGROUP_PIDS) & ~found);
}

static const char no_memory_warning[] =
    "no memory cgroup controller is mounted; instances run without memory, "
    "CPU or pids limits and OOM kills are not detected";

struct cgroup_sys *
cgroup_sys_new(void)
{
    struct cgroup_sys *sys = xcalloc(1, sizeof(*sys));
    char *v1[NCTL] = {NULL, NULL, NULL};
    char *v2 = NULL;

    sys->swap_on = swap_configured();
    scan_mounts(v1, &v2);
    if (v1[0] != NULL) {
        sys->ver = TY_CG_V1;
        memcpy(sys->root, v1, sizeof(v1));
        free(v2);
        probe_v1(sys);
        return sys;
    }
    for (int i = 0; i < NCTL; i++)
        free(v1[i]);
    sys->root[0] = v2;
    sys->ver = TY_CG_V2;
    if (v2 != NULL)
        probe_v2(sys);
    if (!cgroup_sys_usable(sys) && sys->warning[0] == '\0')
        warn_add(sys, "%s", no_memory_warning);
    return sys;
}

struct cgroup_sys *
cgroup_sys_new_at(enum ty__cgver ver, const char *root)
{
    struct cgroup_sys *sys = xcalloc(1, sizeof(*sys));

    sys->ver = ver;
    sys->swap_on = swap_configured();
    if (ver == TY_CG_V1) {
        for (int i = 0; i < NCTL; i++) {
            char *dir = path_join(root, cgroup__ctl_names[i]);

            if (path_is_dir(dir))
                sys->root[i] = dir;
            else
                free(dir);
        }
        probe_v1(sys);
    } else if (ver == TY_CG_V2) {
        sys->root[0] = xstrdup(root);
        probe_v2(sys);
    }
    if (!cgroup_sys_usable(sys) && sys->warning[0] == '\0')
        warn_add(sys, "%s", no_memory_warning);
    return sys;
}

void
cgroup_sys_destroy(struct cgroup_sys **sysp)
{
    struct cgroup_sys *sys = sysp ? *sysp : NULL;

    if (sys == NULL)
        return;
    for (int i = 0; i < NCTL; i++)
        free(sys->root[i]);
    free(sys);
    *sysp = NULL;
}

bool
cgroup_sys_usable(const struct cgroup_sys *sys)
{
    return sys != NULL && (sys->ctl & CGROUP_MEMORY);
}

enum ty__cgver
cgroup_sys_version(const struct cgroup_sys *sys)
{
    return cgroup_sys_usable(sys) ? sys->ver : TY_CG_NONE;
}

unsigned
cgroup_sys_controllers(const struct cgroup_sys *sys)
{
    return cgroup_sys_usable(sys) ? sys->ctl : 0;
}

const char *
cgroup_sys_warning(const struct cgroup_sys *sys)
{
    return sys->warning[0] ? sys->warning : NULL;
}
