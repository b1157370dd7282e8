/*
 * run_series.c — where the coordinator's series files of an instance go
 * (memory.csv, processes.csv, disk.csv), and the per-process and disk
 * series started and ended with each instance (run/series_int.h).
 *
 * Each file grows in the runner's own folder (.runner/<group>/<index>/,
 * out of the instance's reach) and is moved into the instance's folder
 * when it ended, so an instance cannot plant a link in its way.
 */
#include "run/run_int.h"

#include "base/fsat.h"
#include "base/instlog.h"
#include "base/log.h"
#include "base/util.h"

#include <stdlib.h>
#include <unistd.h>

int
run__inst_file(struct run *r, const struct run_inst *in, const char *name,
               struct run_file *out, struct err *err)
{
    cleanup_free char *dir = xasprintf(INSTLOG_RUNNER_DIR "/%s", in->label);
    int fd = fsat_dir(r->run_fd, dir, true, 0700, err);

    if (fd < 0)
        return -1;
    close(fd);
    out->partial = xasprintf("%s/%s.partial", dir, name);
    out->final = xasprintf("%s/%s", in->label, name);
    out->f = (struct monitor_file){r->run_fd, out->partial, out->final};
    return 0;
}

void
run__inst_file_release(struct run_file *f)
{
    free(f->partial);
    free(f->final);
    f->partial = f->final = NULL;
}

/* Absolute run.disk paths are host paths where the runner runs host
 * programs (local:exec), else in the instance's container. */
static bool
host_fs(const struct run *r)
{
    const struct backend_kind *k = backend_find(r->comp->runner);

    return k == NULL || k->runner.no_image != NULL;
}

void
run__series_start(struct run *r, struct run_inst *in, const char *cgdir,
                  pid_t pid)
{
    char *const *disk = r->comp->groups[in->group].disk;
    struct run_file procs = {0}, du = {0};
    struct err e = {0};
    int outfd = -1;
    struct series_src src = {cgdir, pid, disk, -1, host_fs(r)};

    if (r->series == NULL || (cgdir == NULL && pid <= 0))
        return;
    if (disk != NULL && disk[0] != NULL &&
        (outfd = fsat_dir(r->run_fd, in->label, false, 0, &e)) < 0)
        log_warnx("%s: run.disk: %s", in->label, e.msg);
    err_clear(&e);
    src.outfd = outfd;
    if (run__inst_file(r, in, "processes.csv", &procs, &e) == 0 &&
        run__inst_file(r, in, "disk.csv", &du, &e) == 0)
        in->series = series__add(r->series, in->label, &src, &procs.f, &du.f,
                                 now_mono_ns() / 1000000, &e);
    if (in->series == NULL)
        log_warnx("%s: no process or disk series: %s", in->label, e.msg);
    if (outfd >= 0)
        close(outfd);
    run__inst_file_release(&procs);
    run__inst_file_release(&du);
}

void
run__series_end(struct run *r, struct run_inst *in)
{
    struct err e = {0};

    if (in->series == NULL)
        return;
    if (series__instance_ended(r->series, in->series, now_mono_ns() / 1000000,
                               &e) < 0)
        log_warnx("%s: %s", in->label, e.msg);
}
