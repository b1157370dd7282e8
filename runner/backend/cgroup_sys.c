/*
 * cgroup_sys.c — what this machine allows for per-instance cgroups (see
 * backend/cgroup_int.h), found once per run.
 *
 * /proc/self/mountinfo gives the hierarchies, scanned by the SDK's
 * ty__cgroup_each_mount: the v1 memory hierarchy wins when it is mounted
 * (as in ty_cgroup.c, so the runner and the SDK agree), else a cgroup2
 * mount whose cgroup.controllers lists memory. Each controller is then
 * usable when its hierarchy's root accepts new directories (and, on v2,
 * controller changes). Whatever is missing is said in one warning line for
 * the caller to print.
 */
#include "backend/cgroup_int.h"
#include "backend/cgroup_sys_int.h"

#include "base/strvec.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const cgroup__ctl_names[NCTL] = {"memory", "cpu", "pids"};

bool
cgroup__file_in(const char *dir, const char *name)
{
    cleanup_free char *path = path_join(dir, name);

    return path_exists(path);
}

char **
cgroup__subdirs(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    struct strvec v = {0};

    if (d == NULL)
        return NULL;
    while ((de = readdir(d)) != NULL) {
        if (de->d_type != DT_DIR || de->d_name[0] == '.')
            continue;
        strvec_push(&v, de->d_name);
    }
    closedir(d);
    return v.v;
}

/* The first cgroup2 mount, and each v1 controller's first mount. */
struct mounts {
    char *v1[NCTL];
    char *v2;
};

static void
add_mount(const char *mnt, const char *fstype, const char *super, void *arg)
{
    struct mounts *m = arg;

    if (strcmp(fstype, "cgroup2") == 0 && m->v2 == NULL)
        m->v2 = xstrdup(mnt);
    if (strcmp(fstype, "cgroup") != 0)
        return;
    for (int i = 0; i < NCTL; i++)
        if (m->v1[i] == NULL &&
            ty__cgroup_has_word(super, cgroup__ctl_names[i], ','))
            m->v1[i] = xstrdup(mnt);
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
    char ctls[4096];
    bool have = ty__cgroup_read_file(sys->root[0], "cgroup.controllers", ctls,
                                     sizeof(ctls)) >= 0;
    unsigned found = 0;
    int e;

    for (int i = 0; i < NCTL; i++)
        if (have && ty__cgroup_has_word(ctls, cgroup__ctl_names[i], ' '))
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
    struct mounts m = {{NULL, NULL, NULL}, NULL};

    sys->swap_on = swap_configured();
    ty__cgroup_each_mount(add_mount, &m);
    if (m.v1[0] != NULL) {
        sys->ver = TY_CG_V1;
        memcpy(sys->root, m.v1, sizeof(m.v1));
        free(m.v2);
        probe_v1(sys);
        return sys;
    }
    for (int i = 0; i < NCTL; i++)
        free(m.v1[i]);
    sys->root[0] = m.v2;
    sys->ver = TY_CG_V2;
    if (m.v2 != NULL)
        probe_v2(sys);
    if (!cgroup_sys_usable(sys) && sys->warning[0] == '\0')
        warn_add(sys, "%s", no_memory_warning);
    return sys;
}

struct cgroup_sys *
cgroup__sys_new_at(enum ty__cgver ver, const char *root)
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
cgroup__sys_version(const struct cgroup_sys *sys)
{
    return cgroup_sys_usable(sys) ? sys->ver : TY_CG_NONE;
}

unsigned
cgroup__sys_controllers(const struct cgroup_sys *sys)
{
    return cgroup_sys_usable(sys) ? sys->ctl : 0;
}

const char *
cgroup__sys_warning(const struct cgroup_sys *sys)
{
    return sys->warning[0] ? sys->warning : NULL;
}
