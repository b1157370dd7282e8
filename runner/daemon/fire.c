/*
 * fire.c — the schedules' side of the main loop: each turn, every
 * unpaused schedule that is due fires once (schedule__due: one firing for
 * any number missed, so a daemon that was down runs a missed schedule
 * once at start). A firing is recorded first (a crash then does not fire
 * it again), then the build runs in the composition's folder with its
 * output in the task's build.log, the version is read, and the
 * composition is submitted as `submit` would, from its path at that
 * moment: the task runs against the newest build. A failed build is a
 * task of its own, done with outcome build-failed, that never runs.
 *
 * The build runs on the main thread: while it does, running tasks' output
 * waits in their pipes and a stop waits for its end (or its timeout).
 */
#include "daemon/daemon_int.h"
#include "daemon/schedule_int.h"

#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUILD_LOG "build.log"

/* What one firing did, for its task and its row. */
struct firing {
    const struct schedule_row *s;
    struct schedule_firing f;
    struct schedule_build b;
    bool built;
    char version[128];
    char *tmp; /* the snapshot folder, with the build's log */
};

static void
run_build(struct firing *w)
{
    cleanup_free char *dir = path_dirname(w->s->composition);
    cleanup_free char *log = NULL;
    struct err err = {0};

    if (w->s->build == NULL || w->tmp == NULL)
        return;
    log = path_join(w->tmp, BUILD_LOG);
    w->built = true;
    if (schedule__build(w->s->build, dir, log,
                        w->s->build_timeout_s * INT64_C(1000000000), &w->b,
                        &err) < 0) {
        w->b.ok = false;
        snprintf(w->b.reason, sizeof(w->b.reason), "%.200s", err.msg);
    }
}

static void
read_version(struct firing *w)
{
    struct err err = {0};

    w->version[0] = '\0';
    if (w->s->version_from == NULL)
        return;
    if (schedule__version(w->s->version_from, w->version, sizeof(w->version),
                          &err) < 0) {
        log_warnx("schedule %s: no version from %s: %s", w->s->name,
                  w->s->version_from, err.msg);
        w->version[0] = '\0';
    }
}

/* A task that never runs: done with outcome (build-failed, or error when
 * the composition could not be submitted) and reason why. */
static int64_t
failed_task(struct daemon *d, struct firing *w, const char *outcome,
            const char *why)
{
    const char *path = w->s->composition;
    struct daemon_task t = {0};
    struct err err = {0};
    int64_t id = 0;

    t.name = xstrdup(w->s->name);
    t.comp_name = xstrdup(w->s->name);
    t.path = xstrdup(path);
    t.file = xstrdup(strrchr(path, '/') + 1);
    t.origin = path_dirname(path);
    t.priority = w->s->priority;
    t.state = TASK_DONE;
    t.outcome = xstrdup(outcome);
    t.reason = xstrdup(why);
    t.exit_status = w->built ? w->b.exit_status : -1;
    t.submitted_ns = t.ended_ns = now_wall_ns();
    t.schedule = xstrdup(w->s->name);
    t.version = w->version[0] ? xstrdup(w->version) : NULL;
    t.build_seconds = w->built ? w->b.seconds : -1;
    pthread_mutex_lock(&d->mu);
    if (daemon__enqueue(d, &t, w->tmp ? w->tmp : "", &err) < 0) {
        log_warnx("schedule %s: its task: %s", w->s->name, err.msg);
    } else {
        id = t.id;
        daemon__task_ended(d, &t);
    }
    pthread_mutex_unlock(&d->mu);
    daemon__task_release(&t);
    return id;
}

/* "build exited with status 3: LAST LINE OF ITS OUTPUT" */
static int64_t
build_failed(struct daemon *d, struct firing *w)
{
    cleanup_free char *log = path_join(w->tmp, BUILD_LOG);
    char last[512], why[1024];

    daemon__last_line(log, "[testyard: ", last, sizeof(last));
    if (last[0] == '$' && strcmp(last + 2, w->s->build) == 0)
        last[0] = '\0'; /* only the command line: it printed nothing */
    snprintf(why, sizeof(why), "%s%s%s", w->b.reason, last[0] ? ": " : "",
             last);
    return failed_task(d, w, "build-failed", why);
}

static int64_t
submit(struct daemon *d, struct firing *w)
{
    struct daemon_task t = {0};
    struct err err = {0};
    int http;
    int64_t id;

    t.name = xstrdup(w->s->name);
    t.priority = w->s->priority;
    t.schedule = xstrdup(w->s->name);
    t.version = w->version[0] ? xstrdup(w->version) : NULL;
    t.build_seconds = w->built ? w->b.seconds : -1;
    if (daemon__submit_path(d, w->s->composition, w->s->plans, &t, &w->tmp,
                            &http, &err) < 0) {
        log_warnx("schedule %s: %s", w->s->name, err.msg);
        daemon__task_release(&t);
        return failed_task(d, w, "error", err.msg);
    }
    id = t.id;
    daemon__task_release(&t);
    return id;
}

static void
record(struct daemon *d, struct firing *w, int64_t task_id)
{
    cleanup_free char *log = NULL;
    struct err err = {0};

    w->f.task_id = task_id;
    w->f.version = w->version[0] ? w->version : NULL;
    if (w->built) {
        log =
            xasprintf("%s/tasks/%lld/" BUILD_LOG, d->data, (long long)task_id);
        w->f.build_log = log;
        w->f.build_seconds = w->b.seconds;
        w->f.build_status = w->b.ok ? "ok" : "build-failed";
    }
    pthread_mutex_lock(&d->mu);
    if (schedule__firing_update(d->db, &w->f, &err) < 0)
        log_warnx("schedule %s: recording its firing: %s", w->s->name, err.msg);
    pthread_mutex_unlock(&d->mu);
    w->f.build_log = NULL;
    w->f.version = NULL;
    w->f.build_status = NULL;
}

static void
fire(struct daemon *d, const struct schedule_row *s, int64_t fire_s,
     int64_t now_s)
{
    struct firing w = {.s = s};
    struct err err = {0};
    int64_t id;
    int rc;

    w.f.schedule_id = s->id;
    w.f.fire_s = fire_s;
    w.f.started_s = now_s;
    w.f.build_seconds = -1;
    pthread_mutex_lock(&d->mu);
    rc = schedule__firing_add(d->db, &w.f, &err);
    pthread_mutex_unlock(&d->mu);
    if (rc < 0) {
        log_warnx("schedule %s: recording its firing: %s", s->name, err.msg);
        return;
    }
    log_info("schedule %s fires", s->name);
    w.tmp = daemon__snapshot_dir(d, &err);
    if (w.tmp == NULL)
        log_warnx("schedule %s: %s", s->name, err.msg);
    run_build(&w);
    read_version(&w);
    id = w.built && !w.b.ok ? build_failed(d, &w) : submit(d, &w);
    if (w.tmp != NULL && path_exists(w.tmp))
        rm_rf(w.tmp, NULL);
    free(w.tmp);
    record(d, &w, id);
}

/* Whether s fires now (*fire_s), and its next firing after now (*next). */
static bool
due(const struct schedule_row *s, int64_t now_s, int64_t *fire_s, int64_t *next)
{
    struct schedule_spec spec;
    struct err err = {0};
    int owed;

    if (schedule__spec_init(&spec, s->spec, s->tz, s->created_s, &err) < 0) {
        log_warnx("schedule %s: %s", s->name, err.msg);
        return false;
    }
    owed = s->paused ? 0 : schedule__due(&spec, s->last_fired_s, now_s, fire_s);
    if (!s->paused) {
        int64_t n = schedule__next(&spec, now_s);

        if (n < *next)
            *next = n;
    }
    schedule__spec_release(&spec);
    return owed == 1;
}

void
daemon__fire(struct daemon *d, int64_t *next_s)
{
    struct schedule_row *rows = NULL;
    struct err err = {0};
    size_t n = 0;
    int64_t now_s = schedule__clock_now(&err), fire_s;

    *next_s = INT64_MAX;
    if (now_s < 0) {
        log_warnx("schedules: the clock: %s", err.msg);
        *next_s = 0; /* again next turn */
        return;
    }
    pthread_mutex_lock(&d->mu);
    if (schedule__list(d->db, &rows, &n, &err) < 0)
        log_warnx("schedules: %s", err.msg);
    pthread_mutex_unlock(&d->mu);
    for (size_t i = 0; i < n; i++)
        if (due(&rows[i], now_s, &fire_s, next_s))
            fire(d, &rows[i], fire_s, now_s);
    schedule__rows_free(rows, n);
}
