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
 * Firings run in a thread of their own, one batch at a time, so a long
 * build never holds up the main loop (running tasks' output, cancels,
 * the queue); the daemon's stop kills a build that runs (its process
 * group) and its firing becomes a canceled task.
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
    const atomic_bool *stop;
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
                        w->s->build_timeout_s * INT64_C(1000000000), w->stop,
                        &w->b, &err) < 0) {
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
    struct firing w = {.s = s, .stop = &d->fire_stop};
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
    if (w.built && w.b.stopped)
        id = failed_task(d, &w, "canceled", w.b.reason);
    else if (w.built && !w.b.ok)
        id = build_failed(d, &w);
    else
        id = submit(d, &w);
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

/* A batch of firings, the thread's own. */
struct batch {
    struct daemon *d;
    struct schedule_row *rows;
    size_t n;
    int64_t *fire_s; /* per row: when it fires, -1 when it does not */
    int64_t now_s;
};

static void *
fire_batch(void *p)
{
    struct batch *b = p;

    for (size_t i = 0; i < b->n; i++)
        if (b->fire_s[i] >= 0 && !atomic_load(&b->d->fire_stop))
            fire(b->d, &b->rows[i], b->fire_s[i], b->now_s);
    atomic_store(&b->d->fire_done, true);
    daemon__wake(b->d);
    schedule__rows_free(b->rows, b->n);
    free(b->fire_s);
    free(b);
    return NULL;
}

/* Join the thread of the last batch once it is done; whether none runs. */
static bool
joined(struct daemon *d)
{
    if (d->firing && atomic_load(&d->fire_done)) {
        pthread_join(d->firer, NULL);
        d->firing = false;
    }
    return !d->firing;
}

void
daemon__fire(struct daemon *d, int64_t *next_s)
{
    struct batch *b;
    struct err err = {0};
    size_t due_n = 0;
    int64_t now_s;

    *next_s = 0;
    if (!joined(d))
        return; /* the last batch still runs: again next turn */
    *next_s = INT64_MAX;
    if ((now_s = schedule__clock_now(&err)) < 0) {
        log_warnx("schedules: the clock: %s", err.msg);
        *next_s = 0; /* again next turn */
        return;
    }
    b = xcalloc(1, sizeof(*b));
    b->d = d;
    b->now_s = now_s;
    pthread_mutex_lock(&d->mu);
    if (schedule__list(d->db, &b->rows, &b->n, &err) < 0)
        log_warnx("schedules: %s", err.msg);
    pthread_mutex_unlock(&d->mu);
    b->fire_s = xcalloc(b->n ? b->n : 1, sizeof(*b->fire_s));
    for (size_t i = 0; i < b->n; i++) {
        b->fire_s[i] = -1;
        if (due(&b->rows[i], now_s, &b->fire_s[i], next_s))
            due_n++;
        else
            b->fire_s[i] = -1;
    }
    if (due_n == 0) {
        schedule__rows_free(b->rows, b->n);
        free(b->fire_s);
        free(b);
        return;
    }
    atomic_store(&d->fire_done, false);
    if (pthread_create(&d->firer, NULL, fire_batch, b) != 0) {
        log_warn("schedules: a thread for their firings");
        schedule__rows_free(b->rows, b->n);
        free(b->fire_s);
        free(b);
        *next_s = 0;
        return;
    }
    d->firing = true;
    *next_s = 0; /* look again once they are done */
}

void
daemon__fire_stop(struct daemon *d)
{
    if (!d->firing)
        return;
    atomic_store(&d->fire_stop, true);
    pthread_join(d->firer, NULL);
    d->firing = false;
}
