/*
 * run_dir.c — the run folder: its id (a plain name, given or generated with
 * 32 random bits), and its creation under the runs folder for this run and
 * only for it, so that nothing but a folder the run made itself is ever
 * removed when the run cannot start (run.c's set-up failure path).
 */
#include "run/run_int.h"

#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A generated id: the start time and 32 random bits, so two runs started
 * in the same second practically never pick the same folder (and when they
 * do, make_run_dir picks again). */
static char *
make_run_id(void)
{
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    uint32_t rnd = (uint32_t)getpid() * 2654435761u ^ (uint32_t)now_mono_ns();
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

    if (fd >= 0) {
        if (read(fd, &rnd, sizeof(rnd)) != sizeof(rnd))
            rnd ^= (uint32_t)now_wall_ns();
        close(fd);
    }
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    return xasprintf("%s-%08" PRIx32, stamp, rnd);
}

int
run_id_check(const char *id, struct err *err)
{
    size_t n = strlen(id);
    size_t ok = strspn(id, "abcdefghijklmnopqrstuvwxyz"
                           "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.");

    if (n == 0)
        return err_set(err, EINVAL, "run-id: expected a name, got \"\"");
    if (n > RUN_ID_MAX)
        return err_set(err, ENAMETOOLONG,
                       "run-id: expected at most %d characters, got %zu",
                       RUN_ID_MAX, n);
    if (ok < n || id[0] == '.')
        return err_set(err, EINVAL,
                       "run-id: expected letters, digits, '-', '_' and '.' "
                       "(not first), got \"%s\"",
                       id);
    return 0;
}

/* Create <runs>/<id> for this run and only for it: mkdir(2) fails on an
 * existing folder (or link), which is then an error naming it, never
 * reused; a generated id picks again. r->made_dir says the folder is ours
 * to remove. */
static int
create_run_dir(struct run *r, const char *runs, struct err *err)
{
    for (int tries = 0;; tries++) {
        free(r->run_id);
        free(r->run_dir);
        r->run_id = r->opts.run_id ? xstrdup(r->opts.run_id) : make_run_id();
        r->run_dir = path_join(runs, r->run_id);
        if (mkdir(r->run_dir, 0755) == 0) {
            r->made_dir = true;
            return 0;
        }
        if (errno != EEXIST || r->opts.run_id != NULL || tries >= 8)
            break;
    }
    if (errno == EEXIST)
        err_set(err, EEXIST,
                "run folder %s already exists: pick another --run-id",
                r->run_dir);
    else
        err_sys(err, errno, "run folder %s", r->run_dir);
    return err_status(err, EXIT_CANTCREAT);
}

int
run__make_dir(struct run *r, struct err *err)
{
    /* Absolute, so paths handed to instances and bind mounts hold from
     * any working directory. */
    cleanup_free char *runs =
        path_absolute(r->opts.runs_dir ? r->opts.runs_dir : "runs");
    cleanup_free char *json = NULL;
    cleanup_free char *path = NULL;
    cJSON *c;

    if (r->opts.run_id != NULL && run_id_check(r->opts.run_id, err) < 0)
        return err_status(err, EXIT_USAGE);
    if (mkdir_p(runs, err) < 0)
        return err_status(err, EXIT_CANTCREAT);
    if (create_run_dir(r, runs, err) < 0)
        return -1;
    c = composition_to_json(r->comp);
    json = cJSON_Print(c);
    cJSON_Delete(c);
    path = path_join(r->run_dir, "composition.json");
    return file_write_atomic(path, json, strlen(json), err);
}
