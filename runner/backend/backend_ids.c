/*
 * backend_ids.c — who a local:docker run's containers are on the host.
 *
 * A uid fixed in the image would be shared by every run, by every instance
 * of a run, and perhaps by an account of the host (65534 is nobody's). So
 * the coordinator, root on the host, draws a block of ids per run from a
 * range no account uses and checks the host's user and group databases
 * for each draw: instance i runs as uid base + i, and the gid base is the
 * only group of every instance of the run. That gid is how the release
 * board is shared with the run's containers and no one else (its files
 * are root:<gid>, 0640); each instance's folders belong to its uid alone
 * (0700), so neither another instance nor a host user can read them.
 * When the containers are gone the folders are given back to the
 * coordinator's user.
 */
#include "backend/backend_ids_int.h"

#include "config/config.h"
#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define IDS_DRAWS 16

/* Whether an account or a group of the host has an id in [lo, hi]. */
static bool
ids_taken(uint32_t lo, uint32_t hi)
{
    const struct passwd *pw;
    const struct group *gr;
    bool taken = getpwuid(lo) != NULL || getgrgid(lo) != NULL;

    setpwent();
    while (!taken && (pw = getpwent()) != NULL)
        taken = (pw->pw_uid >= lo && pw->pw_uid <= hi) || pw->pw_gid == lo;
    endpwent();
    setgrent();
    while (!taken && (gr = getgrent()) != NULL)
        taken = gr->gr_gid == lo;
    endgrent();
    return taken;
}

int
backend__ids_pick(size_t n, int *base, struct err *err)
{
    uint32_t span = BACKEND_IDS_HIGH - BACKEND_IDS_LOW;

    if (n >= span / 2)
        return err_set(err, E2BIG,
                       "%zu instances: more than testyard has "
                       "user ids for",
                       n);
    for (int i = 0; i < IDS_DRAWS; i++) {
        uint32_t r;

        if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
            return err_sys(err, errno, "choosing the run's user ids");
        r = BACKEND_IDS_LOW + r % (span - (uint32_t)n);
        if (!ids_taken(r, r + (uint32_t)n)) {
            *base = (int)r;
            return 0;
        }
    }
    return err_set(err, EEXIST,
                   "no block of %zu user ids above %u is free of host "
                   "accounts",
                   n + 1, BACKEND_IDS_LOW);
}

int
backend__ids_for_run(struct backend *b, const struct composition *c,
                     struct err *err)
{
    int base;

    if (geteuid() != 0) {
        for (size_t g = 0; g < c->ngroups; g++) {
            if (!c->groups[g].root)
                continue;
            err_set(err, EPERM,
                    "group %s asks for root (run.root), which needs "
                    "testyard to run as root",
                    c->groups[g].id);
            return err_status(err, EXIT_USAGE);
        }
        return 0;
    }
    if (backend__ids_pick((size_t)c->total_instances, &base, err) < 0)
        return -1;
    b->instance_uid = base;
    b->instance_gid = base;
    return 0;
}

static bool
group_root(const struct composition *c, const char *group)
{
    for (size_t g = 0; g < c->ngroups; g++)
        if (strcmp(c->groups[g].id, group) == 0)
            return c->groups[g].root;
    return false;
}

const char *
backend__ids_user(const struct backend *b, const struct composition *c,
                  const struct backend_instance *in, int *uid, char *buf,
                  size_t size)
{
    bool own = b->instance_uid >= 0;
    int u = own ? b->instance_uid + in->index : (int)geteuid();
    int g = own ? b->instance_gid : (int)getegid();

    if (group_root(c, in->group))
        u = 0;
    *uid = own ? u : -1;
    snprintf(buf, size, "%d:%d", u, g);
    return buf;
}

/* dir as a folder, following no link at its last step. */
static int
open_dir(const char *dir, struct err *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return err_sys(err, errno, "%s", dir);
    return fd;
}

int
backend__ids_make_dir(const char *dir, int uid, int gid, struct err *err)
{
    cleanup_free char *parent = path_dirname(dir);
    cleanup_close int fd = -1;
    bool made;
    struct stat st;

    if (mkdir_p(parent, err) < 0)
        return -1;
    made = mkdir(dir, 0700) == 0;
    if (!made && errno != EEXIST)
        return err_sys(err, errno, "%s", dir);
    if ((fd = open_dir(dir, err)) < 0 || fstat(fd, &st) < 0)
        return fd < 0 ? -1 : err_sys(err, errno, "%s", dir);
    if (!made && st.st_uid != geteuid())
        return err_set(err, EEXIST, "%s: exists and is not testyard's", dir);
    return backend__ids_give(fd, dir, uid, gid, err);
}

int
backend__ids_give(int fd, const char *dir, int uid, int gid, struct err *err)
{
    if (uid >= 0 && fchown(fd, (uid_t)uid, (gid_t)gid) < 0)
        return err_sys(err, errno, "%s: giving it to %d:%d", dir, uid, gid);
    if (fchmod(fd, 0700) < 0)
        return err_sys(err, errno, "%s", dir);
    return 0;
}

void
backend__ids_give_back(const char *dir)
{
    struct err e = {0};
    cleanup_close int fd = open_dir(dir, &e);

    if (fd < 0 && e.code == ENOENT)
        return;
    if (fd < 0)
        log_warnx("giving back %s", e.msg);
    else if (fchown(fd, geteuid(), getegid()) < 0 || fchmod(fd, 0755) < 0)
        log_warnx("giving back %s: %s", dir, strerror(errno));
}
