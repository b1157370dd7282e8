/*
 * cmd_clean_runs.c — the part of `testyard clean` that works on this host:
 * run folders whose coordinator died (their coordinator.json still says
 * running and its coordinator is gone) and testyard's cgroups.
 *
 * For such a run, the instances still in its cgroups are killed and the
 * cgroups removed, the runner's scratch in its folder (.sync/, .tmp/,
 * half-written top-level files) is removed without following links, and
 * coordinator.json is marked interrupted, which `report` then says. A run
 * whose coordinator may live — alive on this host, on another host, or a
 * folder without coordinator.json — is skipped with the reason; `--run ID
 * --force` takes it anyway (for a coordinator alive on this host, only its
 * instances are killed: it ends the run itself).
 */
#include "cmd_clean_int.h"

#include "backend/backend.h"
#include "base/err.h"
#include "backend/backend.h"
#include "base/run_lock.h"
#include "base/strbuf.h"
#include "base/strvec.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum verdict {
    V_FINISHED, /* nothing to do */
    V_NOFOLDER, /* no run folder: only cgroups can be left */
    V_DEAD,     /* the coordinator is gone */
    V_ALIVE,    /* alive on this host */
    V_UNKNOWN,  /* another host, or no coordinator.json */
    V_ERROR,
};

/* What to do with run id, from its coordinator.json; why says why,
 * *lock whether it has one, *marked whether it says interrupted. */
static enum verdict
judge(const struct clean_opts *o, const char *id, char *why, size_t size,
      bool *lock, bool *marked)
{
    cleanup_free char *dir = path_join(o->runs, id);
    cleanup_free char *res = path_join(dir, "result.json");
    struct run_lock lk;
    struct err e = {0};
    char w[320];

    *lock = *marked = false;
    if (run_lock_read(dir, &lk, &e) < 0) {
        if (e.code == ENOENT && !path_is_dir(dir))
            return V_NOFOLDER;
        if (e.code == ENOENT && path_exists(res))
            return V_FINISHED;
        snprintf(why, size, "%s",
                 e.code == ENOENT ? "no " RUN_LOCK_FILE " (a run of an older "
                                    "testyard?): can't tell whether its "
                                    "coordinator lives"
                                  : e.msg);
        return e.code == ENOENT ? V_UNKNOWN : V_ERROR;
    }
    *lock = true;
    if (strcmp(lk.state, "finished") == 0)
        return V_FINISHED;
    *marked = strcmp(lk.state, "interrupted") == 0;
    switch (*marked ? RUN_DEAD : run_identity_check(&lk.id, w, sizeof(w))) {
    case RUN_DEAD:
        snprintf(why, size, "its coordinator is gone: %s",
                 *marked ? "marked interrupted before" : w);
        return V_DEAD;
    case RUN_ALIVE:
        snprintf(why, size, "alive: %s", w);
        return V_ALIVE;
    default:
        snprintf(why, size, "its coordinator runs %s", w);
        return V_UNKNOWN;
    }
}

/* "3 cgroups, .sync/, .tmp/, 1 half-written file" into sb. */
static void
describe(struct strbuf *sb, int ncg, const struct leftovers_scratch *sc)
{
    const char *sep = "";

    if (ncg > 0) {
        strbuf_addf(sb, "%d cgroup%s", ncg, ncg == 1 ? "" : "s");
        sep = ", ";
    }
    if (sc->sync) {
        strbuf_addf(sb, "%s.sync/", sep);
        sep = ", ";
    }
    if (sc->tmp) {
        strbuf_addf(sb, "%s.tmp/", sep);
        sep = ", ";
    }
    if (sc->partial > 0)
        strbuf_addf(sb, "%s%d half-written file%s", sep, sc->partial,
                    sc->partial == 1 ? "" : "s");
}

/* Remove run id's cgroups, and with scratch its folder's scratch; with
 * mark, mark it interrupted. One line says what was done. */
static void
remove_run(const struct clean_opts *o, const struct cgroup_sys *sys,
           const char *id, const char *why, bool scratch, bool mark,
           struct clean_tally *t)
{
    cleanup_free char *dir = path_join(o->runs, id);
    struct leftovers_scratch sc = {0};
    struct strbuf sb;
    struct err e = {0};
    int ncg = 0, rc = 0;

    if (cgroup_sys_usable(sys))
        rc = leftovers_cgroups(sys, id, o->dry, &ncg, &e);
    if (rc == 0 && scratch)
        rc = leftovers_scratch(o->runs, id, o->dry, &sc, &e);
    if (rc == 0 && mark && !o->dry)
        rc = run_lock_mark(dir, "interrupted", &e);
    if (rc < 0) {
        fprintf(stderr, "testyard clean: run %s: %s\n", id, e.msg);
        t->failed++;
        return;
    }
    strbuf_init(&sb);
    describe(&sb, ncg, &sc);
    if (sb.len > 0 || mark) {
        printf("%s run %s (%s)%s%s%s\n", o->dry ? "would clean" : "cleaned", id,
               why, sb.len ? ": " : "", sb.len ? sb.buf : "",
               mark ? (o->dry ? "; would mark it interrupted"
                              : "; marked it interrupted")
                    : "");
        t->removed++;
    }
    strbuf_release(&sb);
}

static void
clean_one(const struct clean_opts *o, const struct cgroup_sys *sys,
          const char *id, struct clean_tally *t)
{
    char why[1200] = "";
    bool lock, marked;
    enum verdict v = judge(o, id, why, sizeof(why), &lock, &marked);
    bool forced = o->force && o->run != NULL;

    if (v == V_FINISHED || v == V_NOFOLDER)
        return;
    if (v == V_ERROR) {
        fprintf(stderr, "testyard clean: %s\n", why);
        t->failed++;
    } else if ((v == V_ALIVE || v == V_UNKNOWN) && !forced) {
        clean__skip(o, id, why, t);
    } else {
        /* A live coordinator here ends its run itself once its
         * instances are gone: its folder is left to it. */
        remove_run(o, sys, id, why, v != V_ALIVE,
                   lock && !marked && v != V_ALIVE, t);
    }
}

/* Cgroups of runs that have no folder in o->runs: whose they are cannot
 * be told from here. */
static void
clean_cgroups_alone(const struct clean_opts *o, const struct cgroup_sys *sys,
                    struct clean_tally *t)
{
    char **ids = cgroup_list(sys, "");

    for (size_t i = 0; ids != NULL && ids[i] != NULL; i++) {
        cleanup_free char *dir = path_join(o->runs, ids[i]);
        char why[600];

        if ((o->run == NULL || strcmp(ids[i], o->run) == 0) &&
            !path_is_dir(dir)) {
            snprintf(why, sizeof(why),
                     "cgroups under " CGROUP_BASE "/%s but no run folder in "
                     "%s (--runs says where): can't tell whether its "
                     "coordinator lives",
                     ids[i], o->runs);
            if (o->run != NULL && o->force)
                remove_run(o, sys, ids[i], "forced", false, false, t);
            else
                clean__skip(o, ids[i], why, t);
        }
    }
    strv_free(ids);
}

/* Every run folder in o->runs (links are not followed). */
static void
clean_folders(const struct clean_opts *o, const struct cgroup_sys *sys,
              struct clean_tally *t)
{
    DIR *d = opendir(o->runs);
    struct dirent *de;

    if (d == NULL) {
        if (errno != ENOENT) {
            fprintf(stderr, "testyard clean: %s: %s\n", o->runs,
                    strerror(errno));
            t->failed++;
        }
        return;
    }
    while ((de = readdir(d)) != NULL) {
        struct stat st;

        if (de->d_name[0] == '.' ||
            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(st.st_mode))
            continue;
        clean_one(o, sys, de->d_name, t);
    }
    closedir(d);
}

void
clean__runs(const struct clean_opts *o, struct clean_tally *t)
{
    struct cgroup_sys *sys = cgroup_sys_new();

    if (o->run != NULL)
        clean_one(o, sys, o->run, t);
    else
        clean_folders(o, sys, t);
    if (cgroup_sys_usable(sys))
        clean_cgroups_alone(o, sys, t);
    cgroup_sys_destroy(&sys);
}
