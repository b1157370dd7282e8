/*
 * run.c — the run orchestrator's lifecycle and main loop (see run/run.h).
 *
 * Order of things: compile the plan when some group runs it (a compile
 * error leaves nothing behind; a run of black-box groups only has no
 * plan), create the run folder, start the sync service (so its port goes
 * into every instance's environment), prepare the backend (cgroups, image),
 * start every instance, then loop until all have ended. Whatever happens in
 * the loop — deadline, cancel, crashes — the run ends the same way: every
 * instance is stopped and reaped, the monitor's files are closed, the
 * backend removes what it created, and result.json is written.
 *
 * No wait is for good: a second Ctrl-C stops waiting for ends a few seconds
 * after it forced every instance (RUN_FORCE_WAIT_MS), a deadline does the
 * same a minute after its forced stop, a backend that lost its engine ends
 * the loop at once (exit 69), and a signal during the backend's clean-up
 * cuts it short (another one ends the process).
 */
#include "run/run_int.h"

#include "base/fsat.h"
#include "base/instlog.h"
#include "base/log.h"
#include "builder/builder.h"
#include "report/report.h"
#include "base/run_lock.h"
#include "base/strvec.h"
#include "base/util.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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
#define RUN_FORCE_WAIT_MS 3000 /* after a second Ctrl-C */
#define RUN_REAP_WAIT_MS 60000 /* after the deadline's forced stop */

void
run_block_signals(void)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGPIPE);
    sigaddset(&set, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static int64_t
now_ms(void)
{
    return now_mono_ns() / 1000000;
}

/* Remember the first output of the runner's own (result.json,
 * barriers.jsonl, memory.csv, the report) that could not be written: the
 * run then exits 73 or 74 with it named, whatever its outcome. */
static void
note_output_error(struct run *r, const struct err *e)
{
    if (r->out_err.code != 0)
        return;
    r->out_err = *e;
    if (r->out_err.status == 0)
        r->out_err.status = err_io_status(e->code);
}

/* The plan's binary, or NULL with err clear when no group runs it. */
static char *
build_plan(const struct composition *c, struct err *err)
{
    const struct manifest *m = c->manifest;
    struct planbuild_spec spec;
    int cached;
    char *bin;

    if (!composition_needs_plan(c))
        return NULL;
    spec = (struct planbuild_spec){
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
    bin = planbuild(&spec, &cached, err);

    if (bin != NULL)
        log_debug("plan %s: %s%s", m->name, bin, cached ? " (cached)" : "");
    return bin;
}

static void
on_event(void *arg, int instance, const cJSON *ev)
{
    struct run *r = arg;
    struct run_inst *in;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(ev, "error");
    const cJSON *stopped = cJSON_GetObjectItemCaseSensitive(ev, "stopped");

    if (instance < 0 || (size_t)instance >= r->n || !cJSON_IsString(type))
        return;
    in = &r->insts[instance];
    if (strcmp(type->valuestring, "ready") == 0)
        run__stages_ready(r, in, READY_SDK);
    else if (strcmp(type->valuestring, "success") == 0)
        in->success_event = true;
    if (cJSON_IsTrue(stopped))
        in->stopped_event = true;
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

static void
on_barrier(void *arg, const char *state, int64_t target, bool ok)
{
    (void)target;
    if (ok)
        run__stages_barrier(arg, state);
}

static const struct syncsvc_observer observer = {
    .on_event = on_event,
    .on_hello = on_hello,
    .on_barrier = on_barrier,
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
        si[i].output_quota = r->comp->groups[r->insts[i].group].output_quota;
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
        .plan_name = r->comp->manifest ? r->comp->manifest->name
                                       : run__test_plan(r->comp),
        .run_fd = r->run_fd,
    };

    const struct backend_kind *kind = backend_find(r->comp->runner);

    if (kind == NULL)
        return err_set(err, EINVAL, "runner \"%s\": no such backend",
                       r->comp->runner);
    r->be = kind->create(&cfg, err);
    if (r->be == NULL || r->be->ops->prepare(r->be, err) < 0)
        return -1;
    if (r->be->warning != NULL && !r->opts.quiet)
        log_warnx("%s", r->be->warning);
    snprintf(r->image, sizeof(r->image), "%s", r->be->image);
    return 0;
}

/* A black-box group's argv: run.command followed by run.args; NULL for
 * a group that runs the plan. Caller frees (strv_free). */
static char **
group_argv(const struct composition_group *g)
{
    struct strvec v = {0};

    if (!composition_group_blackbox(g))
        return NULL;
    for (char **a = g->command; a && *a; a++)
        strvec_push(&v, *a);
    for (char **a = g->args; a && *a; a++)
        strvec_push(&v, *a);
    return strvec_detach(&v);
}

/* The heap profiler cannot be preloaded into a statically linked program
 * (no PT_INTERP): say so once per group, before it starts. A script
 * ("#!") has its interpreter preloaded, and anything else is left to
 * exec. */
static void
warn_static(const struct run *r)
{
    for (size_t i = 0; i < r->comp->ngroups && !r->opts.quiet; i++) {
        const struct composition_group *g = &r->comp->groups[i];
        char interp[4096], head[2] = {0};
        cleanup_close int fd = -1;

        if (!g->heap_preload || g->command == NULL || g->image != NULL)
            continue;
        fd = open(g->command[0], O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, head, 2) != 2 || memcmp(head, "#!", 2) == 0)
            continue;
        if (imagebuild_elf_interp(g->command[0], interp, sizeof(interp),
                                  NULL) == 0 &&
            interp[0] == '\0')
            log_warnx("group %s: %s is statically linked: the heap profiler "
                      "cannot be preloaded; only cgroup figures (memory.csv) "
                      "are available",
                      g->id, g->command[0]);
    }
}

static int
start_instances(struct run *r, struct err *err)
{
    struct backend_instance *bi = xcalloc(r->n, sizeof(*bi));
    int rc;

    r->argv = xcalloc(r->comp->ngroups, sizeof(*r->argv));
    for (size_t g = 0; g < r->comp->ngroups; g++)
        r->argv[g] = group_argv(&r->comp->groups[g]);
    warn_static(r);
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
            .log_limit = g->log_limit,
            .argv = (const char *const *)r->argv[in->group],
            .workdir = g->workdir,
            .heap_preload = g->heap_preload,
        };
    }
    rc = r->be->ops->start_all(r->be, bi, r->n, err);
    free(bi);
    return rc;
}

void
run__stop_all(struct run *r, enum stop_reason why, bool force)
{
    for (size_t i = 0; i < r->n; i++) {
        struct run_inst *in = &r->insts[i];

        if (in->ended)
            continue;
        if (in->stopped == STOP_NONE)
            in->stopped = why;
        run__inst_pause(r, in, false); /* a frozen process misses SIGTERM */
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
    struct run_file f = {0};
    struct err e = {0};
    pid_t pid = 0;

    in->started = true;
    in->start_wall_ns = now_wall_ns();
    r->nstarted++;
    if (r->be->ops->host_pid != NULL)
        pid = r->be->ops->host_pid(r->be, in->index);
    run__preoom_watch(r, in, pid, dir);
    run__series_start(r, in, dir, pid);
    if (dir == NULL && pid <= 0)
        return;
    if (run__inst_file(r, in, "memory.csv", &f, &e) < 0)
        in->mon = NULL;
    else if (dir != NULL)
        in->mon = monitor__add(r->mon, in->label, dir, ver, &f.f, now_ms(), &e);
    else
        in->mon =
            monitor__add_process(r->mon, in->label, pid, &f.f, now_ms(), &e);
    run__inst_file_release(&f);
    if (in->mon != NULL)
        monitor__set_id(in->mon, in->index);
    if (in->mon == NULL) {
        log_warnx("%s: no memory samples: %s", in->label, e.msg);
        in->mon_lost = xasprintf("no memory samples: %s", e.msg);
    }
}

static void
inst_ended(struct run *r, struct run_inst *in, const struct backend_event *ev)
{
    char how[600];
    struct err e = {0};

    in->ended = true;
    in->end_wall_ns = ev->wall_ns;
    r->nended++;
    run__preoom_unwatch(in);
    run__series_end(r, in);
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
            monitor__oom_reported(r->mon, in->mon, now_ms());
        if (monitor__instance_ended(r->mon, in->mon, now_ms(), &e) < 0) {
            log_warnx("%s: %s", in->label, e.msg);
            note_output_error(r, &e);
        }
        monitor__stats(in->mon, &st);
        if (st.oom && in->signal == SIGKILL)
            in->oom = true;
        if (ev->type == BACKEND_EXITED && ev->peak_bytes > st.peak) {
            st.peak = ev->peak_bytes;
            st.peak_t_ms = now_ms() - r->start_mono_ms;
        }
        in->mstats = st;
        in->has_mstats = true;
        if (st.lost_errno != 0)
            in->mon_lost =
                xasprintf("the memory series stops at %lld ms: %s",
                          (long long)st.lost_t_ms, strerror(st.lost_errno));
    }
    run__inst_decide(in);
    run__inst_how(in, how, sizeof(how));
    syncsvc_instance_exited(r->svc, in->index, how);
    if (in->outcome != OUTCOME_SUCCESS && !in->lost)
        run__progress_note(r, "%s %s", in->label, how);
}

/* Stop waiting for the instances that have not ended: they end now as
 * they are (lost, when the backend lost them). */
static void
give_up(struct run *r, bool lost, const char *why)
{
    for (size_t i = 0; i < r->n; i++) {
        struct run_inst *in = &r->insts[i];
        struct backend_event ev = {.type = BACKEND_EXITED,
                                   .index = (int)i,
                                   .status = -1,
                                   .peak_bytes = -1,
                                   .wall_ns = now_wall_ns()};

        if (in->ended)
            continue;
        in->lost = lost;
        if (!lost && in->error == NULL)
            in->error = xstrdup(why);
        inst_ended(r, in, &ev);
    }
}

static void
engine_lost(struct run *r, const struct backend_event *ev)
{
    r->lost = true;
    snprintf(r->lost_msg, sizeof(r->lost_msg), "%s", ev->message);
    syncsvc_cancel_all(r->svc, "the run's engine went away");
    give_up(r, true, NULL);
}

static void
handle_backend(struct run *r)
{
    struct backend_event ev;

    while (r->be->ops->next_event(r->be, &ev) > 0) {
        struct run_inst *in;

        if (ev.type == BACKEND_LOST) {
            engine_lost(r, &ev);
            continue;
        }
        if (ev.index < 0 || (size_t)ev.index >= r->n)
            continue;
        in = &r->insts[ev.index];
        if (in->ended)
            continue;
        if (ev.type == BACKEND_STARTED) {
            if (!in->started)
                inst_started(r, in);
            run__stages_started(r, in);
        } else if (!run__stages_exited(r, in, &ev)) {
            inst_ended(r, in, &ev);
        }
    }
}

static void
handle_signals(struct run *r)
{
    struct signalfd_siginfo si;

    while (read(r->sigfd, &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGPIPE)
            run__progress_lost(r);
        if (!r->canceled) {
            r->canceled = true;
            run__stages_close(r, "cancel");
            run__progress_note(r, "canceling: stopping every instance "
                                  "(again to force)");
            syncsvc_cancel_all(r->svc, "the run was canceled");
            run__stop_all(r, STOP_CANCEL, false);
        } else if (si.ssi_signo != SIGPIPE) {
            run__stop_all(r, STOP_CANCEL, true);
            if (r->give_up_ms == 0)
                r->give_up_ms = now_ms() + RUN_FORCE_WAIT_MS;
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
    if (monitor__next_due_ms(r->mon) <= now)
        monitor__sample(r->mon, now);
    if (series__next_due_ms(r->series) <= now)
        series__sample(r->series, now);
    if (!r->deadline_hit && now >= r->deadline_ms) {
        r->deadline_hit = true;
        run__stages_close(r, "deadline");
        run__progress_note(r, "the run's deadline passed; stopping every "
                              "instance");
        syncsvc_cancel_all(r->svc, "the run's deadline passed");
        run__stop_all(r, STOP_DEADLINE, false);
    }
    if (r->kill_at_ms > 0 && now >= r->kill_at_ms) {
        r->kill_at_ms = 0;
        run__stop_all(r, STOP_NONE, true);
        if (r->deadline_hit && r->give_up_ms == 0)
            r->give_up_ms = now_ms() + RUN_REAP_WAIT_MS;
    }
    if (r->give_up_ms > 0 && now >= r->give_up_ms) {
        r->give_up_ms = 0;
        give_up(r, false, "its end was not reported after it was killed");
    }
    run__stages_tick(r);
}

static long
poll_timeout(const struct run *r)
{
    int64_t now = now_ms(), next = now + RUN_TICK_MS;
    int64_t sd = syncsvc_next_deadline_ms(r->svc);
    int64_t md = monitor__next_due_ms(r->mon);
    int64_t pd = series__next_due_ms(r->series);
    int64_t st = run__stages_next_ms(r);

    if (sd >= 0 && sd < next)
        next = sd;
    if (md < next)
        next = md;
    if (pd < next)
        next = pd;
    if (st < next)
        next = st;
    if (!r->deadline_hit && r->deadline_ms < next)
        next = r->deadline_ms;
    if (r->kill_at_ms > 0 && r->kill_at_ms < next)
        next = r->kill_at_ms;
    if (r->give_up_ms > 0 && r->give_up_ms < next)
        next = r->give_up_ms;
    return next <= now ? 0 : (long)(next - now);
}

static int
loop(struct run *r, struct err *err)
{
    while (r->nended < r->n) {
        zmq_pollitem_t items[5] = {
            {syncsvc_socket(r->svc), 0, ZMQ_POLLIN, 0},
            {NULL, r->be->ops->notify_fd(r->be), ZMQ_POLLIN, 0},
            {NULL, r->sigfd, ZMQ_POLLIN, 0},
            {NULL, run__stages_fd(r), ZMQ_POLLIN, 0},
            {NULL, run__progress_pipe_fd(r), 0, 0},
        };
        int n = 3, pipe_at = -1;

        if (items[3].fd >= 0)
            n++;
        else
            items[3] = items[4];
        if (items[n].fd >= 0)
            pipe_at = n++;
        if (zmq_poll(items, n, poll_timeout(r)) < 0 && errno != EINTR)
            return err_sys(err, errno, "zmq_poll");
        if (pipe_at >= 0 && (items[pipe_at].revents & ZMQ_POLLERR))
            raise(SIGPIPE); /* its reader is gone: as if we had written */
        if (syncsvc_handle(r->svc, err) < 0)
            return -1;
        handle_backend(r);
        handle_signals(r);
        handle_timers(r);
        run__progress_draw(r, false);
    }
    run__stages_close(r, "instances");
    return 0;
}

static int
open_sigfd(struct run *r, struct err *err)
{
    sigset_t set;

    /* A closed terminal (SIGHUP) and a closed progress pipe (SIGPIPE, which
     * a write to it raises in this thread) cancel the run like SIGTERM. */
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGPIPE);
    r->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (r->sigfd < 0)
        return err_sys(err, errno, "signalfd");
    return 0;
}

static void
teardown(struct run *r)
{
    cleanup_free char *tmp = NULL;

    run__stages_release(r);
    series__destroy(&r->series);
    monitor__destroy(&r->mon);
    backend_destroy(&r->be);
    syncsvc_destroy(&r->svc);
    if (r->run_dir != NULL) {
        tmp = path_join(r->run_dir, ".tmp");
        rm_rf(tmp, NULL);
    }
    if (r->run_fd >= 0) {
        fsat_prune(r->run_fd, INSTLOG_RUNNER_DIR);
        close(r->run_fd);
        r->run_fd = -1;
    }
    if (r->sigfd >= 0)
        close(r->sigfd);
    run__insts_release(r);
    for (size_t g = 0; r->argv != NULL && g < r->comp->ngroups; g++)
        strv_free(r->argv[g]);
    free(r->argv);
    r->argv = NULL;
    free(r->binary);
    free(r->run_id);
    free(r->run_dir);
}

/* While the backend cleans up, on the main thread, this thread reads the
 * signals: the first one cuts the clean-up short (what is left stays,
 * labelled, for `testyard clean`), the next one ends the process. */
struct cleanup_watch {
    struct run *r;
    int stop[2];
    pthread_t thread;
};

static void *
cleanup_watch_main(void *arg)
{
    struct cleanup_watch *w = arg;
    struct pollfd p[2] = {{w->r->sigfd, POLLIN, 0}, {w->stop[0], POLLIN, 0}};
    struct signalfd_siginfo si;
    int seen = 0;

    while (poll(p, 2, -1) >= 0 || errno == EINTR) {
        if (p[1].revents != 0)
            break;
        if ((p[0].revents & POLLIN) == 0 ||
            read(w->r->sigfd, &si, sizeof(si)) != sizeof(si))
            continue;
        if (seen++ > 0) {
            log_warnx("ending now; run %s is not cleaned up", w->r->run_id);
            _exit(EXIT_CANCELED);
        }
        log_warnx("cutting the clean-up short (again to end at once): what "
                  "is left stays for `testyard clean --run %s`",
                  w->r->run_id);
        w->r->be->ops->abort(w->r->be);
    }
    return NULL;
}

static void
shutdown_backend(struct run *r)
{
    struct cleanup_watch w = {.r = r};
    bool watching;

    if (r->be == NULL || r->be->ops->shutdown == NULL)
        return;
    watching = r->be->ops->abort != NULL && r->sigfd >= 0 &&
               pipe2(w.stop, O_CLOEXEC) == 0;
    if (watching &&
        pthread_create(&w.thread, NULL, cleanup_watch_main, &w) != 0) {
        close(w.stop[0]);
        close(w.stop[1]);
        watching = false;
    }
    r->be->ops->shutdown(r->be);
    if (!watching)
        return;
    if (write(w.stop[1], "", 1) < 0)
        log_warn("cleanup watch");
    pthread_join(w.thread, NULL);
    close(w.stop[0]);
    close(w.stop[1]);
}

/* What a run holds open: a few dozen for itself (the sync service's
 * sockets and threads, signalfds, the engine's connections, log files),
 * and per instance the memory monitor's cgroup files and memory.csv, its
 * sync connection, its run.out and run.err and the pipe or engine stream
 * they come from: about 7 on local:exec and 12 on local:docker measured;
 * the process and disk series add their cgroup folder, processes.csv
 * and, with run.disk, disk.csv, the outputs folder and the container's
 * /proc folder: up to 17, so 20 leaves room. */
#define RUN_FDS_BASE 64
#define RUN_FDS_PER_INSTANCE 20

/* Raise the limit on open files, or fail before anything starts with the
 * number needed: a run that runs out mid-way loses instances. */
static int
reserve_fds(const struct composition *c, struct err *err)
{
    unsigned long long need =
        RUN_FDS_BASE +
        RUN_FDS_PER_INSTANCE * (unsigned long long)c->total_instances;
    long long have = fd_limit_raise();

    if (have < 0 || (unsigned long long)have >= need)
        return 0;
    err_set(err, EMFILE,
            "this run needs %llu open files (%d per instance and %d), and "
            "the limit is %lld: raise it (ulimit -n %llu) or run fewer "
            "instances",
            need, RUN_FDS_PER_INSTANCE, RUN_FDS_BASE, have, need);
    return err_status(err, EXIT_UNAVAILABLE);
}

/* Everything up to the first instance starting; on failure the caller
 * removes the run folder, so nothing is left behind. */
static int
setup(struct run *r, struct err *err)
{
    if (reserve_fds(r->comp, err) < 0)
        return -1;
    r->binary = build_plan(r->comp, err);
    if ((r->binary == NULL && composition_needs_plan(r->comp)) ||
        run__make_dir(r, err) < 0 ||
        (r->run_fd = fsat_root(r->run_dir, err)) < 0 ||
        run_lock_create(r->run_dir, err) < 0)
        return -1;
    run__insts_init(r);
    if (open_sigfd(r, err) < 0 || start_backend(r, err) < 0 ||
        start_sync(r, err) < 0)
        return -1;
    r->start_mono_ms = now_ms();
    r->start_wall_ns = now_wall_ns();
    r->deadline_ms = r->start_mono_ms + r->comp->timeout_ns / 1000000;
    for (size_t i = 0; i < r->n; i++)
        r->insts[i].env = run__inst_env(r, &r->insts[i]);
    r->mon =
        monitor__new(r->comp->memory_sample_ns / 1000000, r->start_mono_ms);
    monitor__set_pre_oom(r->mon, &(struct monitor_pre_oom_cfg){
                                     r->comp->pre_oom, run__preoom_ask, r});
    r->series = series__new(r->mon, r->comp->process_sample_ns / 1000000,
                            r->comp->disk_sample_ns / 1000000);
    return run__stages_init(r, err);
}

static void
fill_summary(const struct run *r, struct run_summary *sum)
{
    snprintf(sum->run_id, sizeof(sum->run_id), "%s", r->run_id);
    snprintf(sum->run_dir, sizeof(sum->run_dir), "%s", r->run_dir);
    sum->canceled = r->canceled;
    sum->success = run__succeeded(r);
    sum->exit_status = run__exit_status(r);
    if (r->lost)
        snprintf(sum->message, sizeof(sum->message),
                 "%.380s: run %.100s is lost", r->lost_msg, r->run_id);
    else if (r->failed.code != 0)
        snprintf(sum->message, sizeof(sum->message),
                 "%.380s: run %.100s stopped", r->failed.msg, r->run_id);
    sum->error[0] = '\0';
    if (r->out_err.code != 0) {
        sum->exit_status = r->out_err.status;
        snprintf(sum->error, sizeof(sum->error), "%s", r->out_err.msg);
    }
}

/* The report is a reading of the run folder: one it cannot read is worth
 * a warning; summary.json or report.html not written is an output lost. */
static void
write_report(struct run *r)
{
    struct report_opts ro = {.table = r->opts.quiet ? NULL : stdout};
    struct err e = {0};
    struct report *rep = report_build(r->run_dir, &ro, &e);

    if (rep == NULL) {
        log_warnx("report: %s", e.msg);
        return;
    }
    if (report_write(rep, &ro, &e) < 0)
        note_output_error(r, &e);
    else if (ro.table != NULL)
        report_print(rep, ro.table);
    report_destroy(&rep);
}

/* After the loop: close the memory series and remove containers before
 * the result is written, so the result is the last file to appear. */
static void
finish(struct run *r)
{
    struct err e = {0};

    r->end_wall_ns = now_wall_ns();
    run__progress_draw(r, true);
    /* Close memory.csv files and remove containers before the result is
     * written, so the result is the last file to appear. */
    series__destroy(&r->series);
    monitor__destroy(&r->mon);
    shutdown_backend(r);
    backend_destroy(&r->be);
    if (syncsvc_log_status(r->svc, &e) < 0)
        note_output_error(r, &e);
    err_clear(&e);
    if (run__write_result(r, &e) < 0)
        note_output_error(r, &e);
    err_clear(&e);
    if (run_lock_mark(r->run_dir, "finished", &e) < 0)
        note_output_error(r, &e);
    err_clear(&e);
    if (err_output_take(&e))
        note_output_error(r, &e);
    if (!r->opts.quiet)
        run__print_summary(r);
    write_report(r);
}

int
run_execute(struct composition *comp, const struct run_opts *opts,
            struct run_summary *sum, struct err *err)
{
    struct run r = {.comp = comp, .opts = *opts, .sigfd = -1, .run_fd = -1};
    int rc;

    if (setup(&r, err) < 0 || start_instances(&r, err) < 0) {
        char *dir = r.made_dir ? xstrdup(r.run_dir) : NULL;

        teardown(&r);
        if (dir != NULL)
            rm_rf(dir, NULL);
        free(dir);
        return -1;
    }
    rc = loop(&r, &r.failed);
    if (rc < 0) {
        if (r.failed.code == 0)
            r.failed.code = EIO;
        run__stages_close(&r, "error");
        run__progress_note(&r, "an internal error; stopping every instance");
        run__stop_all(&r, STOP_CANCEL, true);
        give_up(&r, false, "stopped by an internal error of the coordinator");
    }
    finish(&r);
    fill_summary(&r, sum);
    teardown(&r);
    return 0;
}
