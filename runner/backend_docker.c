/*
 * backend_docker.c — local:docker: one container per instance on the local
 * engine, with the group's memory limit (and no swap, so the limit is
 * real), CPU quota and a pids limit.
 *
 * prepare() checks the engine, builds the plan's image (runner/imagebuild.c:
 * FROM scratch, no registry), creates the per-run bridge network when the
 * composition asks for one, and subscribes to the engine's events for this
 * run's containers before anything starts, so no `die` is missed.
 * start_all() hands the instances to a few start workers (the engine
 * serializes much of create+start; a handful in flight is what it takes to
 * reach its rate). Events then drive everything: `oom` marks an instance,
 * `die` is inspected at once and reported as an exit — so barriers fail as
 * soon as a container dies — and the container's logs are then copied into
 * run.out and run.err. destroy() stops what still runs, waits for the logs,
 * and removes every container and the network unless the composition keeps
 * containers.
 *
 * Threads: start workers and the events thread talk to the orchestrator
 * through a locked queue and a pipe (notify_fd). Each thread uses the
 * docker client with its own requests (the client is thread-safe).
 */
#include "backend.h"

#include "backend_queue.h"
#include "composition.h"
#include "docker.h"
#include "imagebuild.h"
#include "log.h"
#include "run_lock.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DK_START_WORKERS 4
#define DK_PIDS_LIMIT 4096
#define DK_BOARD_PATH "/testyard-sync" /* the release board, read-only */
#define DK_LOGS_WAIT_MS 30000

struct dk_inst {
    const struct backend_instance *in;
    char *id;
    char *name;
    int pid;
    bool started;    /* running as far as we know */
    bool stop_asked; /* stop() before it started: don't start it */
    bool dead;       /* `die` seen and reported */
    bool oom;        /* `oom` seen */
    bool logs_done;
    bool exit_held; /* `die` came before the start was reported */
    struct backend_event exit_ev;
    char *cgdir; /* memory cgroup, from the pid at start */
    enum ty__cgver cgver;
    int64_t peak; /* highest usage read by this backend, -1 */
};

struct dk_backend {
    struct backend base;
    struct backend_config cfg;
    struct docker *d;
    char *image;   /* the plan's image tag */
    char *network; /* network name when bridge, else NULL */
    char *network_id;
    struct backend_instance *bis; /* copy of the array given to start_all */
    struct dk_inst *insts;
    size_t n;

    pthread_mutex_t lock; /* guards everything below and insts[] */
    pthread_cond_t cond;
    struct backend_queue queue;
    int notify[2];
    size_t next_start;
    size_t next_remove;
    bool stopping; /* destroy(): no more starts */
    size_t logs_pending;

    pthread_t workers[DK_START_WORKERS];
    int nworkers;
    pthread_t events_thread;
    bool events_running;
    bool events_ready;
    struct docker_cancel *events_cancel;
};

static void
push_event(struct dk_backend *k, const struct backend_event *ev)
{
    char one = 1;

    backend_queue_push(&k->queue, ev);
    if (write(k->notify[1], &one, 1) < 0 && errno != EAGAIN)
        log_warn("docker backend: notify");
}

static void
push_simple(struct dk_backend *k, enum backend_event_type type, int index,
            const char *msg)
{
    struct backend_event ev;

    backend_event_init(&ev, type, index, msg);
    push_event(k, &ev);
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

static void
copy_logs(struct dk_backend *k, struct dk_inst *di)
{
    const struct backend_instance *in = di->in;
    cleanup_free char *out = path_join(in->outdir, "run.out");
    cleanup_free char *errp = path_join(in->outdir, "run.err");
    struct docker_logs_opts o = {0};
    struct err e = {0};
    int ofd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int efd = open(errp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

    if (ofd < 0 || efd < 0 ||
        docker_container_logs_to_fds(k->d, di->id, &o, ofd, efd, &e) < 0)
        log_warnx("%s/%d: logs: %s", in->group, in->group_index,
                  e.msg[0] ? e.msg : strerror(errno));
    if (ofd >= 0)
        close(ofd);
    if (efd >= 0)
        close(efd);
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

static void
on_die(struct dk_backend *k, int index)
{
    struct dk_inst *di = &k->insts[index];
    struct backend_event ev;
    struct docker_state st;
    int64_t peak;
    struct err e = {0};
    bool oom;

    pthread_mutex_lock(&k->lock);
    if (di->dead) {
        pthread_mutex_unlock(&k->lock);
        return;
    }
    di->dead = true;
    oom = di->oom;
    k->logs_pending++;
    pthread_mutex_unlock(&k->lock);
    read_peak(di);
    peak = di->peak;
    backend_event_init(&ev, BACKEND_EXITED, index, NULL);
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
        push_event(k, &ev);
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
        on_die(k, index);
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

static void *
events_main(void *arg)
{
    struct dk_backend *k = arg;
    cleanup_free char *label = xasprintf("testyard.run=%s", k->cfg.run_id);
    const char *labels[] = {label, NULL};
    const char *types[] = {"container", NULL};
    const char *events[] = {"die", "oom", NULL};
    int64_t since = 0;

    while (!docker_cancel_fired(k->events_cancel)) {
        struct docker_events_opts o = {
            .labels = labels,
            .types = types,
            .events = events,
            .since = since,
            .ready = events_ready,
            .cancel = k->events_cancel,
        };
        struct err e = {0};

        if (docker_events(k->d, &o, on_event, k, &e) < 0 &&
            !docker_cancel_fired(k->events_cancel)) {
            log_warnx("docker events: %s; reconnecting", e.msg);
            usleep(200 * 1000);
        }
        /* Replay from a little before the drop so nothing is missed;
         * on_die ignores repeats. */
        since = now_wall_ns() / 1000000000 - 2;
    }
    events_ready(k);
    return NULL;
}

/* ---- starting ---------------------------------------------------------- */

static const char *
env_override(const char *kv)
{
    static const char *const keys[] = {
        "TEST_OUTPUTS_PATH=", "TEST_TEMP_PATH=", "HOME=", "PATH=",
        "TESTYARD_SYNC_BOARD="};

    for (size_t i = 0; i < ARRAY_LEN(keys); i++)
        if (strncmp(kv, keys[i], strlen(keys[i])) == 0)
            return keys[i];
    return NULL;
}

/* The release board's folder on the host (TESTYARD_SYNC_BOARD in the
 * instance's environment), or NULL. */
static const char *
board_dir(const struct backend_instance *in)
{
    static const char key[] = "TESTYARD_SYNC_BOARD=";

    for (char *const *e = in->env; *e != NULL; e++)
        if (strncmp(*e, key, sizeof(key) - 1) == 0)
            return *e + sizeof(key) - 1;
    return NULL;
}

/* The host environment with container paths for outputs, scratch and the
 * release board. */
static char **
container_env(const struct backend_instance *in)
{
    size_t n = 0, j = 0;
    char **env;

    while (in->env[n] != NULL)
        n++;
    env = xcalloc(n + 6, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        if (env_override(in->env[i]) == NULL)
            env[j++] = xstrdup(in->env[i]);
    if (board_dir(in) != NULL)
        env[j++] = xstrdup("TESTYARD_SYNC_BOARD=" DK_BOARD_PATH);
    env[j++] = xstrdup("TEST_OUTPUTS_PATH=/outputs");
    env[j++] = xstrdup("TEST_TEMP_PATH=/temp");
    env[j++] = xstrdup("HOME=/temp");
    env[j++] = xstrdup("PATH=/plan:/usr/bin:/bin");
    return env;
}

static void
strv_free(char **v)
{
    if (v == NULL)
        return;
    for (char **p = v; *p != NULL; p++)
        free(*p);
    free(v);
}

static cJSON *
container_config(const struct dk_backend *k, const struct backend_instance *in,
                 char **env, char **labels, char **binds)
{
    const struct composition *c = k->cfg.comp;
    struct docker_container_spec s = {
        .image = in->artifact ? in->artifact : k->image,
        .env = (const char *const *)env,
        .labels = (const char *const *)labels,
        .binds = (const char *const *)binds,
        .network_mode = k->network ? k->network : "host",
        .memory = (int64_t)in->memory,
        .memory_swap = in->memory ? (int64_t)in->memory : 0,
        .nano_cpus = in->millicpu * 1000000,
        .pids_limit = DK_PIDS_LIMIT,
        .no_new_privileges = true,
        .cap_drop_all = true,
        .init = true,
    };

    (void)c;
    return docker_container_config(&s);
}

/* The run, the instance and the coordinator's identity, which `clean`
 * reads to tell a live run from an orphan. */
static char **
make_labels(const struct dk_backend *k, const struct backend_instance *in)
{
    char **v = xcalloc(6 + RUN_LABELS_N, sizeof(char *));

    v[0] = xasprintf("testyard.run=%s", k->cfg.run_id);
    v[1] = xasprintf("testyard.plan=%s", k->cfg.plan_name);
    v[2] = xasprintf("testyard.group=%s", in->group);
    v[3] = xasprintf("testyard.index=%d", in->group_index);
    v[4] = xasprintf("testyard.instance=%d", in->index);
    (void)run_identity_labels(&v[5], NULL);
    return v;
}

static char **
make_binds(const struct backend_instance *in)
{
    char **v = xcalloc(4, sizeof(char *));

    v[0] = xasprintf("%s:/outputs", in->outdir);
    v[1] = xasprintf("%s:/temp", in->tempdir);
    if (board_dir(in) != NULL)
        v[2] = xasprintf("%s:" DK_BOARD_PATH ":ro", board_dir(in));
    return v;
}

static int
create_and_start(struct dk_backend *k, struct dk_inst *di, struct err *err)
{
    const struct backend_instance *in = di->in;
    char **env = container_env(in);
    char **labels = make_labels(k, in);
    char **binds = make_binds(in);
    cJSON *cfg = container_config(k, in, env, labels, binds);
    char *id = NULL;
    int rc = -1;

    if (mkdir_p(in->outdir, err) == 0 && mkdir_p(in->tempdir, err) == 0 &&
        docker_container_create(k->d, di->name, cfg, &id, err) == 0) {
        pthread_mutex_lock(&k->lock);
        di->id = id;
        pthread_mutex_unlock(&k->lock);
        rc = docker_container_start(k->d, id, err);
    }
    cJSON_Delete(cfg);
    strv_free(env);
    strv_free(labels);
    strv_free(binds);
    return rc;
}

static void
start_index(struct dk_backend *k, size_t i)
{
    struct dk_inst *di = &k->insts[i];
    struct docker_state st;
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
    if (docker_container_state(k->d, di->id, &st, &e) == 0)
        di->pid = st.pid;
    pthread_mutex_lock(&k->lock);
    if (di->pid > 0)
        di->cgdir = ty__cgroup_memory_dir(di->pid, &di->cgver);
    di->started = true;
    push_simple(k, BACKEND_STARTED, (int)i, NULL); /* before any exit */
    if (di->exit_held) {
        di->exit_held = false;
        push_event(k, &di->exit_ev);
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

static bool
needs_image(const struct composition *c)
{
    for (size_t g = 0; g < c->ngroups; g++)
        if (c->groups[g].artifact == NULL)
            return true;
    return false;
}

static int
build_image(struct dk_backend *k, struct err *err)
{
    struct imagebuild_opts o = {
        .plan = k->cfg.plan_name,
        .binary = k->cfg.binary,
    };
    struct imagebuild_result res = {0};

    if (imagebuild_build(k->d, &o, &res, err) < 0)
        return err_prefix(err, "building the image of plan %s",
                          k->cfg.plan_name);
    log_debug("image %s%s", res.tag, res.built ? "" : " (already built)");
    k->image = res.tag;
    res.tag = NULL;
    snprintf(k->base.image, sizeof(k->base.image), "%s", k->image);
    imagebuild_result_release(&res);
    return 0;
}

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
        return err_prefix(err, "creating network %s", k->network);
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
    if (cJSON_IsString(gw))
        snprintf(k->base.sync_host, sizeof(k->base.sync_host), "%s",
                 gw->valuestring);
    else
        err_set(err, EPROTO, "network %s has no gateway address", k->network);
    cJSON_Delete(list);
    return cJSON_IsString(gw) ? 0 : -1;
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
    if (needs_image(c) && build_image(k, err) < 0)
        return -1;
    if (c->network != NULL && strcmp(c->network, "bridge") == 0 &&
        make_network(k, err) < 0)
        return -1;
    return start_events(k, err);
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
    return backend_queue_pop(&k->queue, ev) ? 1 : 0;
}

static void
dk_stop(struct backend *b, int index, bool force)
{
    struct dk_backend *k = (struct dk_backend *)b;
    struct dk_inst *di;
    struct err e = {0};
    cleanup_free char *id = NULL;

    if (index < 0 || (size_t)index >= k->n)
        return;
    di = &k->insts[index];
    pthread_mutex_lock(&k->lock);
    di->stop_asked = true;
    if (di->started && !di->dead && di->id != NULL)
        id = xstrdup(di->id);
    pthread_mutex_unlock(&k->lock);
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

static void
join_workers(struct dk_backend *k)
{
    pthread_mutex_lock(&k->lock);
    k->stopping = true;
    pthread_mutex_unlock(&k->lock);
    for (int w = 0; w < k->nworkers; w++)
        pthread_join(k->workers[w], NULL);
    k->nworkers = 0;
}

/* Wait (bounded) for the events thread to copy the logs of dead ones. */
static void
wait_logs(struct dk_backend *k)
{
    int64_t until = now_mono_ns() + (int64_t)DK_LOGS_WAIT_MS * 1000000;

    pthread_mutex_lock(&k->lock);
    while (k->logs_pending > 0 && now_mono_ns() < until) {
        pthread_mutex_unlock(&k->lock);
        usleep(10000);
        pthread_mutex_lock(&k->lock);
    }
    pthread_mutex_unlock(&k->lock);
}

/* Kill what still runs, copy its logs, and remove the container. */
static void
finish_container(struct dk_backend *k, struct dk_inst *di, bool keep)
{
    struct err e = {0};
    bool need_logs;

    if (di->id == NULL)
        return;
    pthread_mutex_lock(&k->lock);
    need_logs = !di->dead && !di->logs_done;
    if (need_logs) {
        di->logs_done = true;
        k->logs_pending++;
    }
    pthread_mutex_unlock(&k->lock);
    if (need_logs) {
        docker_container_kill(k->d, di->id, "SIGKILL", NULL);
        copy_logs(k, di);
    }
    if (!keep && docker_container_remove(k->d, di->id, true, &e) < 0)
        log_warnx("%s: remove: %s", di->name, e.msg);
}

static void *
remover_main(void *arg)
{
    struct dk_backend *k = arg;
    bool keep = k->cfg.comp->keep_containers;

    for (;;) {
        size_t i;

        pthread_mutex_lock(&k->lock);
        i = k->next_remove++;
        pthread_mutex_unlock(&k->lock);
        if (i >= k->n)
            return NULL;
        finish_container(k, &k->insts[i], keep);
    }
}

/* The engine removes one container in 0.1-0.25 s; a few callers at once
 * keep a run of hundreds from taking minutes to clean up. */
static void
remove_containers(struct dk_backend *k)
{
    pthread_t t[DK_START_WORKERS];
    int nt = 0;

    k->next_remove = 0;
    for (int w = 0; w < DK_START_WORKERS && (size_t)w < k->n; w++)
        if (pthread_create(&t[nt], NULL, remover_main, k) == 0)
            nt++;
    if (nt == 0)
        remover_main(k);
    for (int w = 0; w < nt; w++)
        pthread_join(t[w], NULL);
    if (k->network_id != NULL && !k->cfg.comp->keep_containers &&
        docker_network_remove(k->d, k->network_id, NULL) < 0)
        log_warnx("could not remove network %s", k->network);
}

static void
dk_destroy(struct backend *b)
{
    struct dk_backend *k = (struct dk_backend *)b;

    join_workers(k);
    wait_logs(k);
    if (k->events_running) {
        docker_cancel_fire(k->events_cancel);
        pthread_join(k->events_thread, NULL);
    }
    if (k->d != NULL)
        remove_containers(k);
    for (size_t i = 0; i < k->n; i++) {
        free(k->insts[i].id);
        free(k->insts[i].name);
        free(k->insts[i].cgdir);
    }
    docker_cancel_destroy(&k->events_cancel);
    docker_destroy(&k->d);
    close(k->notify[0]);
    close(k->notify[1]);
    pthread_mutex_destroy(&k->lock);
    pthread_cond_destroy(&k->cond);
    free(k->insts);
    free(k->bis);
    backend_queue_release(&k->queue);
    free(k->image);
    free(k->network);
    free(k->network_id);
    free(k);
}

static const struct backend_ops docker_ops = {
    .name = "local:docker",
    .prepare = dk_prepare,
    .start_all = dk_start_all,
    .notify_fd = dk_notify_fd,
    .next_event = dk_next_event,
    .stop = dk_stop,
    .memory_cgroup = dk_memory_cgroup,
    .host_pid = NULL,
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
    snprintf(k->base.sync_host, sizeof(k->base.sync_host), "127.0.0.1");
    k->cfg = *cfg;
    pthread_mutex_init(&k->lock, NULL);
    pthread_cond_init(&k->cond, NULL);
    backend_queue_init(&k->queue);
    return &k->base;
}
