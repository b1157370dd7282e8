/*
 * run.c — the run orchestrator's lifecycle and main loop (see run.h).
 *
 * Order of things: compile the plan (a compile error leaves nothing
 * behind), create the run folder, start the sync service (so its port goes
 * into every instance's environment), prepare the backend (cgroups, image),
 * start every instance, then loop until all have ended. Whatever happens in
 * the loop — deadline, cancel, crashes — the run ends the same way: every
 * instance is stopped and reaped, the monitor's files are closed, the
 * backend removes what it created, and result.json is written.
 */
#include "run_int.h"

#include "log.h"
#include "planbuild.h"
#include "report.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define RUN_DEFAULT_GRACE_MS 5000
#define RUN_TICK_MS 250

void
run_block_signals(void)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static int64_t
now_ms(void)
{
    return now_mono_ns() / 1000000;
}

static char *
make_run_id(void)
{
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    unsigned rnd = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

    if (fd >= 0) {
        if (read(fd, &rnd, sizeof(rnd)) != sizeof(rnd))
            rnd = (unsigned)getpid();
        close(fd);
    }
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    return xasprintf("%s-%04x", stamp, rnd & 0xffff);
}

static char *
build_plan(const struct composition *c, struct err *err)
{
    const struct manifest *m = c->manifest;
    struct planbuild_spec spec = {
        .name = m->name,
        .dir = m->dir,
        .sources = m->sources,
        .nsources = m->nsources,
        .cflags = m->cflags,
        .ncflags = m->ncflags,
        .pkg_config = m->pkg_config,
        .npkg_config = m->npkg_config,
        .ldlibs = m->ldlibs,
        .nldlibs = m->nldlibs,
    };
    int cached;
    char *bin = planbuild(&spec, &cached, err);

    if (bin != NULL)
        log_debug("plan %s: %s%s", m->name, bin, cached ? " (cached)" : "");
    return bin;
}

static int
make_run_dir(struct run *r, struct err *err)
{
    /* Absolute, so paths handed to instances and bind mounts hold from
     * any working directory. */
    cleanup_free char *runs =
        path_absolute(r->opts.runs_dir ? r->opts.runs_dir : "runs");
    cleanup_free char *json = NULL;
    cleanup_free char *path = NULL;
    cJSON *c;

    r->run_id = r->opts.run_id ? xstrdup(r->opts.run_id) : make_run_id();
    r->run_dir = path_join(runs, r->run_id);
    if (mkdir_p(runs, err) < 0)
        return -1;
    if (mkdir(r->run_dir, 0755) < 0)
        return err_sys(err, errno, "run folder %s", r->run_dir);
    c = composition_to_json(r->comp);
    json = cJSON_Print(c);
    cJSON_Delete(c);
    path = path_join(r->run_dir, "composition.json");
    return file_write_atomic(path, json, strlen(json), err);
}

static void
on_event(void *arg, int instance, const cJSON *ev)
{
    struct run *r = arg;
    struct run_inst *in;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(ev, "error");

    if (instance < 0 || (size_t)instance >= r->n || !cJSON_IsString(type))
        return;
    in = &r->insts[instance];
    if (strcmp(type->valuestring, "success") == 0)
        in->success_event = true;
    else if (strcmp(type->valuestring, "failure") == 0 ||
             strcmp(type->valuestring, "crash") == 0) {
        if (type->valuestring[0] == 'f')
            in->failure_event = true;
        else
            in->crash_event = true;
        if (cJSON_IsString(error) && in->error == NULL)
            in->error = xstrdup(error->valuestring);
    }
}

static void
on_hello(void *arg, int instance)
{
    struct run *r = arg;

    if (instance >= 0 && (size_t)instance < r->n)
        r->insts[instance].hello = true;
}

static void
on_waiting(void *arg, int instance, bool waiting)
{
    struct run *r = arg;

    if (instance >= 0 && (size_t)instance < r->n)
        r->insts[instance].waiting = waiting;
}

static const struct syncsvc_observer observer = {
    .on_event = on_event,
    .on_hello = on_hello,
    .on_waiting = on_waiting,
};

/* The release board, unless TESTYARD_RELEASE_BOARD=0 asks for every
 * release as a message (to compare, or to rule the board out). */
static bool
board_wanted(void)
{
    const char *v = getenv("TESTYARD_RELEASE_BOARD");

    return v == NULL || strcmp(v, "0") != 0;
}

static int
start_sync(struct run *r, struct err *err)
{
    struct syncsvc_instance *si = xcalloc(r->n, sizeof(*si));
    cleanup_free char *bind = xasprintf("tcp://%s:0", r->be->sync_host);
    cleanup_free char *board = path_join(r->run_dir, ".sync");
    struct syncsvc_config cfg = {
        .run_id = r->run_id,
        .run_dir = r->run_dir,
        .bind = bind,
        .instances = si,
        .ninstances = r->n,
        .observer = &observer,
        .observer_arg = r,
        .board_dir = board_wanted() ? board : NULL,
        .board_optional = true,
        .board_gid = r->be->instance_gid,
    };

    for (size_t i = 0; i < r->n; i++) {
        si[i].group = r->comp->groups[r->insts[i].group].id;
        si[i].group_index = r->insts[i].group_index;
        si[i].outdir = r->insts[i].outdir;
    }
    r->svc = syncsvc_new(&cfg, err);
    free(si);
    return r->svc ? 0 : -1;
}

static int
start_backend(struct run *r, struct err *err)
{
    struct backend_config cfg = {
        .comp = r->comp,
        .run_id = r->run_id,
        .run_dir = r->run_dir,
        .binary = r->binary,
        .plan_name = r->comp->manifest->name,
    };

    if (strcmp(r->comp->runner, "local:docker") == 0)
        r->be = backend_docker_new(&cfg, err);
    else
        r->be = backend_exec_new(&cfg, err);
    if (r->be == NULL || r->be->ops->prepare(r->be, err) < 0)
        return -1;
    if (r->be->warning != NULL && !r->opts.quiet)
        log_warnx("%s", r->be->warning);
    snprintf(r->image, sizeof(r->image), "%s", r->be->image);
    return 0;
}

static int
start_instances(struct run *r, struct err *err)
{
    struct backend_instance *bi = xcalloc(r->n, sizeof(*bi));
    int rc;

    for (size_t i = 0; i < r->n; i++) {
        const struct run_inst *in = &r->insts[i];
        const struct composition_group *g = &r->comp->groups[in->group];

        bi[i] = (struct backend_instance){
            .index = in->index,
            .group = g->id,
            .group_index = in->group_index,
            .outdir = in->outdir,
            .tempdir = in->tempdir,
            .env = in->env,
            .memory = g->memory_bytes,
            .millicpu = g->millicpu,
            .artifact = g->artifact,
        };
    }
    rc = r->be->ops->start_all(r->be, bi, r->n, err);
    free(bi);
    return rc;
}

static void
stop_all(struct run *r, enum stop_reason why, bool force)
{
    for (size_t i = 0; i < r->n; i++) {
        struct run_inst *in = &r->insts[i];

        if (in->ended)
            continue;
        if (in->stopped == STOP_NONE)
            in->stopped = why;
        r->be->ops->stop(r->be, (int)i, force);
    }
    if (!force)
        r->kill_at_ms =
            now_ms() +
            (r->opts.grace_ms > 0 ? r->opts.grace_ms : RUN_DEFAULT_GRACE_MS);
}

static void
inst_started(struct run *r, struct run_inst *in)
{
    enum ty__cgver ver = TY_CG_NONE;
    cleanup_free char *dir = r->be->ops->memory_cgroup(r->be, in->index, &ver);
    cleanup_free char *csv = path_join(in->outdir, "memory.csv");
    struct err e = {0};
    pid_t pid = 0;

    in->started = true;
    in->start_wall_ns = now_wall_ns();
    r->nstarted++;
    if (dir != NULL)
        in->mon = monitor_add(r->mon, in->label, dir, ver, csv, now_ms(), &e);
    else if (r->be->ops->host_pid != NULL &&
             (pid = r->be->ops->host_pid(r->be, in->index)) > 0)
        in->mon =
            monitor_add_process(r->mon, in->label, pid, csv, now_ms(), &e);
    else
        return;
    if (in->mon == NULL)
        log_warnx("%s: no memory samples: %s", in->label, e.msg);
}

static void
inst_ended(struct run *r, struct run_inst *in, const struct backend_event *ev)
{
    char how[600];
    struct err e = {0};

    in->ended = true;
    in->end_wall_ns = ev->wall_ns;
    r->nended++;
    if (ev->type == BACKEND_START_FAILED) {
        if (in->error == NULL)
            in->error = xstrdup(ev->message);
    } else {
        in->status = ev->status;
        in->signal = ev->signal;
        in->oom = ev->oom;
    }
    if (in->mon != NULL) {
        struct monitor_stats st;

        if (in->oom)
            monitor_oom_reported(r->mon, in->mon, now_ms());
        if (monitor_instance_ended(r->mon, in->mon, now_ms(), &e) < 0)
            log_warnx("%s: %s", in->label, e.msg);
        monitor_stats(in->mon, &st);
        if (st.oom && in->signal == SIGKILL)
            in->oom = true;
        if (ev->type == BACKEND_EXITED && ev->peak_bytes > st.peak) {
            st.peak = ev->peak_bytes;
            st.peak_t_ms = now_ms() - r->start_mono_ms;
        }
        in->mstats = st;
        in->has_mstats = true;
    }
    run_inst_decide(in);
    run_inst_how(in, how, sizeof(how));
    syncsvc_instance_exited(r->svc, in->index, how);
    if (in->outcome != OUTCOME_SUCCESS)
        run_progress_note(r, "%s %s", in->label, how);
}

static void
handle_backend(struct run *r)
{
    struct backend_event ev;

    while (r->be->ops->next_event(r->be, &ev) > 0) {
        struct run_inst *in;

        if (ev.index < 0 || (size_t)ev.index >= r->n)
            continue;
        in = &r->insts[ev.index];
        if (in->ended)
            continue;
        if (ev.type == BACKEND_STARTED)
            inst_started(r, in);
        else
            inst_ended(r, in, &ev);
    }
}

static void
handle_signals(struct run *r)
{
    struct signalfd_siginfo si;

    while (read(r->sigfd, &si, sizeof(si)) == sizeof(si)) {
        if (!r->canceled) {
            r->canceled = true;
            run_progress_note(r, "canceling: stopping every instance "
                                 "(again to force)");
            syncsvc_cancel_all(r->svc, "the run was canceled");
            stop_all(r, STOP_CANCEL, false);
        } else {
            stop_all(r, STOP_CANCEL, true);
        }
    }
}

static void
handle_timers(struct run *r)
{
    int64_t now = now_ms();
    int64_t sd = syncsvc_next_deadline_ms(r->svc);

    if (sd >= 0 && sd <= now)
        syncsvc_tick(r->svc);
    if (monitor_next_due_ms(r->mon) <= now)
        monitor_sample(r->mon, now);
    if (!r->deadline_hit && now >= r->deadline_ms) {
        r->deadline_hit = true;
        run_progress_note(r, "the run's deadline passed; stopping every "
                             "instance");
        syncsvc_cancel_all(r->svc, "the run's deadline passed");
        stop_all(r, STOP_DEADLINE, false);
    }
    if (r->kill_at_ms > 0 && now >= r->kill_at_ms) {
        r->kill_at_ms = 0;
        stop_all(r, STOP_NONE, true);
    }
}

static long
poll_timeout(const struct run *r)
{
    int64_t now = now_ms(), next = now + RUN_TICK_MS;
    int64_t sd = syncsvc_next_deadline_ms(r->svc);
    int64_t md = monitor_next_due_ms(r->mon);

    if (sd >= 0 && sd < next)
        next = sd;
    if (md < next)
        next = md;
    if (!r->deadline_hit && r->deadline_ms < next)
        next = r->deadline_ms;
    if (r->kill_at_ms > 0 && r->kill_at_ms < next)
        next = r->kill_at_ms;
    return next <= now ? 0 : (long)(next - now);
}

static int
loop(struct run *r, struct err *err)
{
    while (r->nended < r->n) {
        zmq_pollitem_t items[3] = {
            {syncsvc_socket(r->svc), 0, ZMQ_POLLIN, 0},
            {NULL, r->be->ops->notify_fd(r->be), ZMQ_POLLIN, 0},
            {NULL, r->sigfd, ZMQ_POLLIN, 0},
        };

        if (zmq_poll(items, 3, poll_timeout(r)) < 0 && errno != EINTR)
            return err_sys(err, errno, "zmq_poll");
        if (syncsvc_handle(r->svc, err) < 0)
            return -1;
        handle_backend(r);
        handle_signals(r);
        handle_timers(r);
        run_progress_draw(r, false);
    }
    return 0;
}

static int
open_sigfd(struct run *r, struct err *err)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    r->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (r->sigfd < 0)
        return err_sys(err, errno, "signalfd");
    return 0;
}

static void
teardown(struct run *r)
{
    cleanup_free char *tmp = NULL;

    monitor_destroy(&r->mon);
    backend_destroy(&r->be);
    syncsvc_destroy(&r->svc);
    if (r->run_dir != NULL) {
        tmp = path_join(r->run_dir, ".tmp");
        rm_rf(tmp, NULL);
    }
    if (r->sigfd >= 0)
        close(r->sigfd);
    run_insts_release(r);
    free(r->binary);
    free(r->run_id);
    free(r->run_dir);
}

/* Everything up to the first instance starting; on failure the caller
 * removes the run folder, so nothing is left behind. */
static int
setup(struct run *r, struct err *err)
{
    r->binary = build_plan(r->comp, err);
    if (r->binary == NULL || make_run_dir(r, err) < 0)
        return -1;
    run_insts_init(r);
    if (open_sigfd(r, err) < 0 || start_backend(r, err) < 0 ||
        start_sync(r, err) < 0)
        return -1;
    r->start_mono_ms = now_ms();
    r->start_wall_ns = now_wall_ns();
    r->deadline_ms = r->start_mono_ms + r->comp->timeout_ns / 1000000;
    for (size_t i = 0; i < r->n; i++)
        r->insts[i].env = run_inst_env(r, &r->insts[i]);
    r->mon = monitor_new(r->comp->memory_sample_ns / 1000000, r->start_mono_ms);
    return 0;
}

static void
fill_summary(const struct run *r, struct run_summary *sum)
{
    snprintf(sum->run_id, sizeof(sum->run_id), "%s", r->run_id);
    snprintf(sum->run_dir, sizeof(sum->run_dir), "%s", r->run_dir);
    sum->canceled = r->canceled;
    sum->success = run_succeeded(r);
    sum->exit_status = r->canceled ? EXIT_CANCELED : sum->success ? 0 : 1;
}

/* The report is a reading of the run folder; failing to write it is worth
 * a warning, never a different exit status for the run. */
static void
write_report(const struct run *r)
{
    struct report_opts ro = {.table = r->opts.quiet ? NULL : stdout};
    struct err e = {0};

    if (report_generate(r->run_dir, &ro, &e) < 0)
        log_warnx("report: %s", e.msg);
}

int
run_execute(struct composition *comp, const struct run_opts *opts,
            struct run_summary *sum, struct err *err)
{
    struct run r = {.comp = comp, .opts = *opts, .sigfd = -1};
    int rc;

    if (setup(&r, err) < 0 || start_instances(&r, err) < 0) {
        char *dir = r.run_dir ? xstrdup(r.run_dir) : NULL;

        teardown(&r);
        if (dir != NULL)
            rm_rf(dir, NULL);
        free(dir);
        return -1;
    }
    rc = loop(&r, err);
    if (rc < 0) {
        log_warnx("%s; stopping every instance", err->msg);
        stop_all(&r, STOP_CANCEL, true);
        r.canceled = true;
    }
    r.end_wall_ns = now_wall_ns();
    run_progress_draw(&r, true);
    /* Close memory.csv files and remove containers before the result is
     * written, so the result is the last file to appear. */
    monitor_destroy(&r.mon);
    backend_destroy(&r.be);
    if (run_write_result(&r, err) < 0)
        log_warnx("%s", err->msg);
    if (!r.opts.quiet)
        run_print_summary(&r);
    write_report(&r);
    fill_summary(&r, sum);
    teardown(&r);
    return 0;
}
