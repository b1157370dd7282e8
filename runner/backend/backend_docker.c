/*
 * backend_docker.c — local:docker: one container per instance on the local
 * engine, with the group's memory limit (and no swap, so the limit is
 * real), CPU quota and a pids limit.
 *
 * prepare() checks the engine, settles every group's image
 * (backend_docker_image.c: the plan's built FROM scratch, no registry; a
 * named one checked or pulled; a host program packed), creates the per-run
 * bridge network when the composition asks for one, and subscribes to the
 * engine's events for this run's containers before anything starts, so no `die`
 * is missed. start_all() hands the instances to a few start workers (the engine
 * serializes much of create+start; a handful in flight is what it takes to
 * reach its rate). Events then drive everything: `oom` marks an instance,
 * `die` is inspected at once and reported as an exit — so barriers fail as
 * soon as a container dies. Each container's output goes to its capped
 * run.out and run.err through a follower attached before it starts
 * (dklog.c), or, when none could attach, is copied from the engine's log
 * once it died; the engine's own log is bounded to match (log_config).
 * destroy() stops what still runs, waits (bounded) for the logs, and
 * removes every container and the network unless the composition keeps
 * containers.
 *
 * The engine may go away mid-run: a watch (docker_watch.c) pings it, and
 * when it has not answered for the grace period every call is aborted and
 * BACKEND_LOST tells the orchestrator. shutdown() then gives the engine a
 * few seconds to come back to remove what the run started, and otherwise
 * leaves it, labelled, for `testyard clean --run ID`, and says so.
 *
 * Threads: start workers and the events thread talk to the orchestrator
 * through a locked queue and a pipe (notify_fd). Each thread uses the
 * docker client with its own requests (the client is thread-safe).
 */
#include "backend/backend_docker_int.h"

#include "backend/backend_ids_int.h"
#include "base/strvec.h"
#include "config/config.h"
#include "backend/dklog_int.h"
#include "docker/docker.h"
#include "base/fsat.h"
#include "builder/builder.h"
#include "base/instlog.h"
#include "base/log.h"
#include "base/run_lock.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
dk__push_event(struct dk_backend *k, const struct backend_event *ev)
{
    char one = 1;

    backend__queue_push(&k->queue, ev);
    if (write(k->notify[1], &one, 1) < 0 && errno != EAGAIN)
        log_warn("docker backend: notify");
}

static void
push_simple(struct dk_backend *k, enum backend_event_type type, int index,
            const char *msg)
{
    struct backend_event ev;

    backend__event_init(&ev, type, index, msg);
    dk__push_event(k, &ev);
}

bool
dk__is_gone(struct dk_backend *k)
{
    bool gone;

    pthread_mutex_lock(&k->lock);
    gone = k->gone;
    pthread_mutex_unlock(&k->lock);
    return gone;
}

bool
dk__is_aborted(struct dk_backend *k)
{
    bool aborted;

    pthread_mutex_lock(&k->lock);
    aborted = k->aborted;
    pthread_mutex_unlock(&k->lock);
    return aborted;
}

/* From the watch's thread: the engine has been away for the grace
 * period. Every call in progress ends now, and the orchestrator hears
 * (unless msg is NULL: shutdown() giving up on its own). */
void
dk__engine_lost(void *arg, const char *msg)
{
    struct dk_backend *k = arg;

    pthread_mutex_lock(&k->lock);
    k->gone = true;
    docker_abort(k->d);
    pthread_mutex_unlock(&k->lock);
    if (msg != NULL)
        push_simple(k, BACKEND_LOST, -1, msg);
}

/* ---- events ------------------------------------------------------------ */

static int
find_by_id(const struct dk_backend *k, const char *id)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->insts[i].id != NULL && strcmp(k->insts[i].id, id) == 0)
            return (int)i;
    return -1;
}

/* Exit statuses above 128 are docker-init's way of saying the plan died
 * of signal (status - 128). */
static void
fill_exit(struct backend_event *ev, const struct docker_state *st, bool oom)
{
    ev->status = st->exit_code;
    if (st->exit_code > 128 && st->exit_code < 128 + 65) {
        ev->signal = st->exit_code - 128;
        ev->status = -1;
    }
    ev->oom = oom || st->oom_killed;
    ev->wall_ns = st->finished_ns > 0 ? st->finished_ns : now_wall_ns();
}

/* Without a follower, the logs the engine kept (dklog__exited). */
static void
copy_logs(struct dk_backend *k, struct dk_inst *di)
{
    dklog__exited(di->log, di->id);
    pthread_mutex_lock(&k->lock);
    di->logs_done = true;
    k->logs_pending--;
    pthread_cond_broadcast(&k->cond);
    pthread_mutex_unlock(&k->lock);
}

/* The cgroup of a container goes away with it, so its peak is read on
 * `oom` (still there) and again on `die` (when it still is). Only the
 * events thread calls this. */
static void
read_peak(struct dk_inst *di)
{
    struct ty__cgmem m;

    if (di->cgdir == NULL ||
        ty__cgroup_read_memory(di->cgdir, di->cgver, &m) < 0)
        return;
    if (m.peak > di->peak)
        di->peak = m.peak;
    if (m.usage > di->peak)
        di->peak = m.usage;
}

/* time_ns: the event's (0 when unknown); a `die` from before the last
 * restart (an events stream replayed after a drop) is not this run's. */
static void
on_die(struct dk_backend *k, int index, int64_t time_ns)
{
    struct dk_inst *di = &k->insts[index];
    struct backend_event ev;
    struct docker_state st;
    int64_t peak;
    struct err e = {0};
    bool oom;

    pthread_mutex_lock(&k->lock);
    if (di->dead || di->restarting ||
        (time_ns > 0 && time_ns < di->run_since_ns)) {
        pthread_mutex_unlock(&k->lock);
        return;
    }
    di->dead = true;
    di->paused = false;
    oom = di->oom;
    k->logs_pending++;
    pthread_mutex_unlock(&k->lock);
    read_peak(di);
    peak = di->peak;
    backend__event_init(&ev, BACKEND_EXITED, index, NULL);
    if (docker_container_state(k->d, di->id, &st, &e) < 0) {
        log_warnx("%s: %s", di->name, e.msg);
        memset(&st, 0, sizeof(st));
        st.exit_code = -1;
    }
    fill_exit(&ev, &st, oom);
    ev.peak_bytes = peak;
    /* A container that ends at once can die before its worker has
     * reported the start; the exit then waits for it (start_index), so
     * the orchestrator always hears of a start before the end. */
    pthread_mutex_lock(&k->lock);
    if (di->started) {
        dk__push_event(k, &ev);
    } else {
        di->exit_ev = ev;
        di->exit_held = true;
    }
    pthread_mutex_unlock(&k->lock);
    copy_logs(k, di);
}

static int
on_event(void *arg, const struct docker_event *ev)
{
    struct dk_backend *k = arg;
    int index;

    if (ev->id == NULL || ev->action == NULL)
        return 0;
    pthread_mutex_lock(&k->lock);
    index = find_by_id(k, ev->id);
    if (index >= 0 && strcmp(ev->action, "oom") == 0)
        k->insts[index].oom = true;
    pthread_mutex_unlock(&k->lock);
    if (index >= 0 && strcmp(ev->action, "oom") == 0)
        read_peak(&k->insts[index]);
    if (index >= 0 && strcmp(ev->action, "die") == 0)
        on_die(k, index, ev->time_ns);
    return 0;
}

static void
events_ready(void *arg)
{
    struct dk_backend *k = arg;

    pthread_mutex_lock(&k->lock);
    k->events_ready = true;
    pthread_cond_broadcast(&k->cond);
    pthread_mutex_unlock(&k->lock);
}

/* After a failed subscription: wait (0.2 s, doubled each time up to 5 s, or
 * until canceled) and say so at most once a minute; the watch tells the user
 * when the engine itself is gone. */
static void
events_backoff(struct dk_backend *k, const struct err *e, int64_t *delay_ms,
               int64_t *logged_ns)
{
    int64_t now = now_mono_ns();

    if (*logged_ns == 0 || now - *logged_ns >= DK_EVENTS_LOG_EVERY_NS) {
        log_warnx("docker events: %s; reconnecting", e->msg);
        *logged_ns = now;
    } else {
        log_debug("docker events: %s; reconnecting", e->msg);
    }
    for (int64_t t = 0;
         t < *delay_ms && !docker_cancel_fired(k->events_cancel) &&
         !docker_aborted(k->d);
         t += 50)
        usleep(50 * 1000);
    *delay_ms = *delay_ms * 2 > DK_EVENTS_RETRY_MAX_MS ? DK_EVENTS_RETRY_MAX_MS
                                                       : *delay_ms * 2;
}

static bool
events_go_on(struct dk_backend *k)
{
    return !docker_cancel_fired(k->events_cancel) && !docker_aborted(k->d);
}

static void *
events_main(void *arg)
{
    struct dk_backend *k = arg;
    cleanup_free char *label = xasprintf("testyard.run=%s", k->cfg.run_id);
    const char *labels[] = {label, NULL};
    const char *types[] = {"container", NULL};
    const char *events[] = {"die", "oom", NULL};
    int64_t since = 0, delay = DK_EVENTS_RETRY_MS, logged = 0;

    while (events_go_on(k)) {
        struct docker_events_opts o = {
            .labels = labels,
            .types = types,
            .events = events,
            .since = since,
            .ready = events_ready,
            .cancel = k->events_cancel,
        };
        struct err e = {0};
        int64_t began = now_mono_ns();
        int rc = docker_events(k->d, &o, on_event, k, &e);

        if (now_mono_ns() - began > 10 * 1000000000LL)
            delay = DK_EVENTS_RETRY_MS; /* it had been working */
        if (rc < 0 && events_go_on(k))
            events_backoff(k, &e, &delay, &logged);
        /* Replay from a little before the drop so nothing is missed;
         * on_die ignores repeats. */
        since = now_wall_ns() / 1000000000 - 2;
    }
    events_ready(k);
    return NULL;
}

/* ---- starting ---------------------------------------------------------- */

/* The instance's folder (made beneath the run folder, no link followed)
 * and its capped logs, before the container exists. */
static int
make_outputs(struct dk_backend *k, struct dk_inst *di, struct err *err)
{
    const struct backend_instance *in = di->in;
    cleanup_free char *rel = xasprintf("%s/%d", in->group, in->group_index);
    char user[32];
    int uid, rc, d;

    backend__ids_user(&k->base, k->cfg.comp, in, &uid, user, sizeof(user));
    if ((d = fsat_dir(k->cfg.run_fd, rel, true, 0700, err)) < 0)
        return -1;
    rc = backend__ids_give(d, in->outdir, uid, k->base.instance_gid, err);
    close(d);
    if (rc < 0 ||
        backend__ids_make_dir(in->tempdir, uid, k->base.instance_gid, err) < 0)
        return -1;
    di->dirs_made = uid >= 0;
    di->log = dklog__new(k->d, k->cfg.run_fd, in->group, in->group_index,
                         in->log_limit, di->name, err);
    return di->log ? 0 : -1;
}

static int
create_and_start(struct dk_backend *k, struct dk_inst *di, struct err *err)
{
    const struct backend_instance *in = di->in;
    char **env = dk__container_env(k, in);
    char **labels = dk__make_labels(k, in);
    char **binds = dk__make_binds(k, in);
    cJSON *cfg = dk__container_config(k, in, env, labels, binds);
    char *id = NULL;
    int rc = -1;

    if (make_outputs(k, di, err) == 0 &&
        docker_container_create(k->d, di->name, cfg, &id, err) == 0) {
        pthread_mutex_lock(&k->lock);
        di->id = id;
        pthread_mutex_unlock(&k->lock);
        (void)dklog__attach(di->log, id);
        rc = docker_container_start(k->d, id, err);
        if (rc < 0)
            dklog__cut(di->log);
    }
    cJSON_Delete(cfg);
    strv_free(env);
    strv_free(labels);
    strv_free(binds);
    return rc;
}

/* The memory cgroup of the container id whose main process is pid. The
 * process may have ended already: with cgroup v1 an exiting task is moved
 * to the root cgroup, and sampling that would give the whole machine's
 * memory as the container's. Both of the engine's cgroup drivers name
 * the cgroup after the container (/docker/<id>,
 * /system.slice/docker-<id>.scope), so a path without the id is not its. */
bool
dk__cgroup_is_container(const char *dir, const char *id)
{
    const char *base = strrchr(dir, '/');

    /* the id in the last component: ".../docker/<id>" or
     * ".../docker-<id>.scope" */
    return id != NULL && strlen(id) >= 12 && base != NULL &&
           strstr(base, id) != NULL;
}

static char *
container_cgroup(pid_t pid, const char *id, enum ty__cgver *ver)
{
    char *dir = ty__cgroup_memory_dir(pid, ver);

    if (dir != NULL && !dk__cgroup_is_container(dir, id)) {
        log_debug("container %.12s: cgroup %s is not the container's", id, dir);
        free(dir);
        dir = NULL;
    }
    return dir;
}

static void
start_index(struct dk_backend *k, size_t i)
{
    struct dk_inst *di = &k->insts[i];
    struct err e = {0};
    bool skip;

    pthread_mutex_lock(&k->lock);
    skip = di->stop_asked || k->stopping;
    pthread_mutex_unlock(&k->lock);
    if (skip) {
        push_simple(k, BACKEND_START_FAILED, (int)i, "stopped before start");
        return;
    }
    if (create_and_start(k, di, &e) < 0) {
        push_simple(k, BACKEND_START_FAILED, (int)i, e.msg);
        return;
    }
    dk__report_started(k, i);
}

void
dk__report_started(struct dk_backend *k, size_t i)
{
    struct dk_inst *di = &k->insts[i];
    struct docker_state st;
    struct err e = {0};
    char *cgdir = NULL;
    enum ty__cgver ver = TY_CG_V1;
    int pid = 0;

    if (docker_container_state(k->d, di->id, &st, &e) == 0)
        pid = st.pid;
    if (pid > 0)
        cgdir = container_cgroup(pid, di->id, &ver);
    pthread_mutex_lock(&k->lock);
    di->pid = pid;
    free(di->cgdir);
    di->cgdir = cgdir;
    di->cgver = ver;
    di->started = true;
    push_simple(k, BACKEND_STARTED, (int)i, NULL); /* before any exit */
    if (di->exit_held) {
        di->exit_held = false;
        dk__push_event(k, &di->exit_ev);
    }
    pthread_mutex_unlock(&k->lock);
}

static void *
worker_main(void *arg)
{
    struct dk_backend *k = arg;

    for (;;) {
        size_t i;

        pthread_mutex_lock(&k->lock);
        i = k->next_start++;
        pthread_mutex_unlock(&k->lock);
        if (i >= k->n)
            return NULL;
        start_index(k, i);
    }
}

static int
dk_start_all(struct backend *b, const struct backend_instance *insts, size_t n,
             struct err *err)
{
    struct dk_backend *k = (struct dk_backend *)b;

    k->bis = xcalloc(n, sizeof(*k->bis));
    memcpy(k->bis, insts, n * sizeof(*insts));
    k->insts = xcalloc(n, sizeof(*k->insts));
    k->n = n;
    for (size_t i = 0; i < n; i++) {
        k->insts[i].in = &k->bis[i];
        k->insts[i].peak = -1;
        k->insts[i].name = xasprintf("testyard-%s-%s-%d", k->cfg.run_id,
                                     insts[i].group, insts[i].group_index);
    }
    k->nworkers = n < DK_START_WORKERS ? (int)n : DK_START_WORKERS;
    for (int w = 0; w < k->nworkers; w++) {
        int rc = pthread_create(&k->workers[w], NULL, worker_main, k);

        if (rc != 0) {
            k->nworkers = w;
            return err_sys(err, rc, "start worker");
        }
    }
    return 0;
}

/* ---- prepare ------------------------------------------------------------ */

static int
make_network(struct dk_backend *k, struct err *err)
{
    cleanup_free char *label = xasprintf("testyard.run=%s", k->cfg.run_id);
    const char *labels[] = {label, NULL};
    char *all[2 + RUN_LABELS_N] = {label};
    const cJSON *net, *gw = NULL;
    cJSON *list;
    int rc;

    (void)run_identity_labels(&all[1], NULL);
    k->network = xasprintf("testyard-%s", k->cfg.run_id);
    rc = docker_network_create(k->d, k->network, (const char *const *)all,
                               &k->network_id, err);
    for (int i = 1; i <= RUN_LABELS_N; i++)
        free(all[i]);
    if (rc < 0)
        return err_prefix(err, "creating network %s%s", k->network,
                          err && strstr(err->msg, "address pool")
                              ? " (the engine has no address range left: "
                                "testyard clean removes the networks of "
                                "runs that are gone; or set "
                                "run_config.network: host)"
                              : "");
    list = docker_network_list(k->d, labels, err);
    if (list == NULL)
        return -1;
    cJSON_ArrayForEach (net, list) {
        const cJSON *ipam = cJSON_GetObjectItemCaseSensitive(net, "IPAM");
        const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(ipam, "Config");

        gw = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cfg, 0),
                                              "Gateway");
        if (cJSON_IsString(gw))
            break;
    }
    rc = cJSON_IsString(gw) ? 0 : -1;
    if (rc == 0)
        snprintf(k->base.sync_host, sizeof(k->base.sync_host), "%s",
                 gw->valuestring);
    else
        err_set(err, EPROTO, "network %s has no gateway address", k->network);
    cJSON_Delete(list); /* gw was in it */
    return rc;
}

static int
start_events(struct dk_backend *k, struct err *err)
{
    int rc;

    k->events_cancel = docker_cancel_new();
    rc = pthread_create(&k->events_thread, NULL, events_main, k);
    if (rc != 0)
        return err_sys(err, rc, "events thread");
    k->events_running = true;
    pthread_mutex_lock(&k->lock);
    for (int i = 0; i < 1000 && !k->events_ready; i++) {
        pthread_mutex_unlock(&k->lock);
        usleep(10000);
        pthread_mutex_lock(&k->lock);
    }
    rc = k->events_ready;
    pthread_mutex_unlock(&k->lock);
    if (!rc)
        return err_set(err, ETIMEDOUT,
                       "the engine did not accept an events "
                       "subscription within 10 s");
    return 0;
}

static int
start_watch(struct dk_backend *k, struct err *err)
{
    int64_t grace_ms;

    if (docker_watch_grace_ms(&grace_ms, err) < 0)
        return err_status(err, EXIT_USAGE);
    k->watch = docker_watch_new(k->d, grace_ms, dk__engine_lost, k, err);
    return k->watch ? 0 : -1;
}

static int
dk_prepare(struct backend *b, struct err *err)
{
    struct dk_backend *k = (struct dk_backend *)b;
    const struct composition *c = k->cfg.comp;

    k->d = docker_new(getenv("DOCKER_HOST"), err);
    if (k->d == NULL || docker_ping(k->d, err) < 0) {
        err_status(err, EXIT_UNAVAILABLE);
        return err_prefix(err, "local:docker needs a Docker engine "
                               "(testyard doctor says how to get one)");
    }
    if (start_watch(k, err) < 0 || backend__ids_for_run(&k->base, c, err) < 0)
        return -1;
    if (dk__images_prepare(k, err) < 0 ||
        (c->network != NULL && strcmp(c->network, "bridge") == 0 &&
         make_network(k, err) < 0) ||
        start_events(k, err) < 0)
        return dk__is_gone(k) ? err_status(err, EXIT_UNAVAILABLE) : -1;
    return 0;
}

/* ---- the rest of the interface ------------------------------------------ */

static int
dk_notify_fd(struct backend *b)
{
    return ((struct dk_backend *)b)->notify[0];
}

static int
dk_next_event(struct backend *b, struct backend_event *ev)
{
    struct dk_backend *k = (struct dk_backend *)b;
    char buf[256];

    while (read(k->notify[0], buf, sizeof(buf)) > 0)
        ;
    if (!backend__queue_pop(&k->queue, ev))
        return 0;
    if (ev->type == BACKEND_EXITED && ev->index >= 0 &&
        (size_t)ev->index < k->n) {
        pthread_mutex_lock(&k->lock);
        k->insts[ev->index].ended_read = true;
        pthread_mutex_unlock(&k->lock);
    }
    return 1;
}

static void
dk_stop(struct backend *b, int index, bool force)
{
    struct dk_backend *k = (struct dk_backend *)b;
    struct dk_inst *di;
    struct err e = {0};
    cleanup_free char *id = NULL;
    bool paused;

    if (index < 0 || (size_t)index >= k->n)
        return;
    di = &k->insts[index];
    pthread_mutex_lock(&k->lock);
    di->stop_asked = true;
    if (di->started && !di->dead && di->id != NULL && !k->gone)
        id = xstrdup(di->id);
    paused = di->paused;
    pthread_mutex_unlock(&k->lock);
    /* An engine that does not answer now would only hold the loop. */
    if (id != NULL && k->watch != NULL &&
        docker_watch_down_since(k->watch) > 0) {
        log_debug("%s: not stopped: the engine does not answer", di->name);
        return;
    }
    /* The engine kills no paused container. */
    if (id != NULL && paused && dk__pause(b, index, false, &e) < 0)
        log_debug("%s: unpause: %s", di->name, e.msg);
    if (id != NULL &&
        docker_container_kill(k->d, id, force ? "SIGKILL" : "SIGTERM", &e) < 0)
        log_debug("%s: kill: %s", di->name, e.msg);
}

static char *
dk_memory_cgroup(struct backend *b, int index, enum ty__cgver *ver)
{
    struct dk_backend *k = (struct dk_backend *)b;
    char *dir = NULL;

    if (index < 0 || (size_t)index >= k->n)
        return NULL;
    pthread_mutex_lock(&k->lock);
    if (k->insts[index].cgdir != NULL) {
        dir = xstrdup(k->insts[index].cgdir);
        *ver = k->insts[index].cgver;
    }
    pthread_mutex_unlock(&k->lock);
    return dir;
}

/* The container's main process as the host sees it (State.Pid when it
 * started), 0 when unknown. */
static pid_t
dk_host_pid(struct backend *b, int index)
{
    struct dk_backend *k = (struct dk_backend *)b;
    pid_t pid = 0;

    if (index < 0 || (size_t)index >= k->n)
        return 0;
    pthread_mutex_lock(&k->lock);
    if (k->insts[index].started && k->insts[index].pid > 0)
        pid = k->insts[index].pid;
    pthread_mutex_unlock(&k->lock);
    return pid;
}

static void
dk_destroy(struct backend *b)
{
    struct dk_backend *k = (struct dk_backend *)b;

    dk__shutdown(b);
    for (size_t i = 0; i < k->n; i++) {
        if (k->insts[i].dirs_made)
            backend__ids_give_back(k->insts[i].in->outdir);
        free(k->insts[i].id);
        free(k->insts[i].name);
        free(k->insts[i].cgdir);
        dklog__destroy(&k->insts[i].log);
    }
    docker_cancel_destroy(&k->events_cancel);
    docker_destroy(&k->d);
    close(k->notify[0]);
    close(k->notify[1]);
    pthread_mutex_destroy(&k->lock);
    pthread_cond_destroy(&k->cond);
    free(k->insts);
    free(k->bis);
    backend__queue_release(&k->queue);
    dk__images_release(k);
    free(k->image);
    free(k->network);
    free(k->network_id);
    free(k);
}

static const struct backend_ops docker_ops = {
    .prepare = dk_prepare,
    .start_all = dk_start_all,
    .notify_fd = dk_notify_fd,
    .next_event = dk_next_event,
    .stop = dk_stop,
    .memory_cgroup = dk_memory_cgroup,
    .host_pid = dk_host_pid,
    .restart = dk__restart,
    .pause = dk__pause,
    .address = dk__address,
    .probe = dk__probe,
    .shutdown = dk__shutdown,
    .abort = dk__abort,
    .destroy = dk_destroy,
};

struct backend *
backend_docker_new(const struct backend_config *cfg, struct err *err)
{
    struct dk_backend *k = xcalloc(1, sizeof(*k));

    if (pipe2(k->notify, O_NONBLOCK | O_CLOEXEC) < 0) {
        free(k);
        return err_sys(err, errno, "pipe"), NULL;
    }
    k->base.ops = &docker_ops;
    k->base.instance_uid = -1;
    k->base.instance_gid = -1;
    k->base.init_parent = true; /* docker-init (dk__container_config) */
    snprintf(k->base.sync_host, sizeof(k->base.sync_host), "127.0.0.1");
    k->cfg = *cfg;
    pthread_mutex_init(&k->lock, NULL);
    pthread_cond_init(&k->cond, NULL);
    backend__queue_init(&k->queue);
    return &k->base;
}
