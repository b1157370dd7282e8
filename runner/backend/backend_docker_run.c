/*
 * backend_docker_run.c — what local:docker does to a container that was
 * started: start it again after it ended (the same container, so its file
 * system, binds, name, labels, limits and address stay), pause and
 * unpause it, tell its address, and run a probe in it.
 *
 * A restart runs on a thread of its own, as first starts do on the start
 * workers: the orchestrator only hears BACKEND_STARTED (or START_FAILED)
 * later. Before the start its logs follower is attached again, appending
 * to run.out and run.err (dklog__restart), and the `die` of the run
 * before is told from the next one by the time the restart began.
 * shutdown() waits for restarts in progress (dk__restarts_wait).
 *
 * A probe is an exec started detached and inspected until it ends: from
 * the runner's probe thread, with requests of its own, under the lock only
 * to read the instance's state.
 */
#include "backend/backend_docker_int.h"

#include "backend/backend_ids_int.h"
#include "backend/dklog_int.h"
#include "docker/docker.h"
#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DK_PROBE_POLL_MS 20
#define DK_PROBE_POLL_MAX_MS 100

struct dk_restart {
    struct dk_backend *k;
    size_t i;
};

/* The restart did not happen: the instance stays ended, and may be
 * restarted again. */
static void
restart_failed(struct dk_backend *k, size_t i, const char *msg)
{
    struct dk_inst *di = &k->insts[i];
    struct backend_event ev;

    pthread_mutex_lock(&k->lock);
    di->dead = true;
    di->ended_read = true;
    pthread_mutex_unlock(&k->lock);
    backend__event_init(&ev, BACKEND_START_FAILED, (int)i, msg);
    dk__push_event(k, &ev);
}

static void *
restart_main(void *arg)
{
    struct dk_restart r = *(struct dk_restart *)arg;
    struct dk_backend *k = r.k;
    struct dk_inst *di = &k->insts[r.i];
    struct err e = {0};
    int rc;

    free(arg);
    rc = dklog__restart(di->log, di->id, &e);
    pthread_mutex_lock(&k->lock);
    di->run_since_ns = now_wall_ns();
    di->dead = di->oom = di->started = di->exit_held = false;
    di->logs_done = false;
    di->restarting = false;
    /* stop() since the restart was asked for: it does not start */
    if (rc == 0 && (di->stop_asked || k->stopping))
        rc = err_set(&e, ECANCELED, "stopped before start");
    pthread_mutex_unlock(&k->lock);
    if (rc == 0)
        rc = docker_container_start(k->d, di->id, &e);
    if (rc < 0)
        dklog__cut(di->log);
    if (rc == 0)
        dk__report_started(k, r.i);
    else
        restart_failed(k, r.i, e.msg);
    pthread_mutex_lock(&k->lock);
    k->restarts_running--;
    pthread_cond_broadcast(&k->cond);
    pthread_mutex_unlock(&k->lock);
    return NULL;
}

/* Whether instance index can be restarted now (its end was handed out,
 * nothing is under way); taken for a restart when it can. */
static int
claim_restart(struct dk_backend *k, int index, struct err *err)
{
    struct dk_inst *di = &k->insts[index];
    int rc = 0;

    pthread_mutex_lock(&k->lock);
    if (k->stopping || k->gone)
        rc = err_set(err, ECANCELED, "%s: the run is ending", di->name);
    else if (!di->dead || !di->ended_read || di->restarting || di->id == NULL)
        rc = err_set(err, EBUSY, "%s has not ended", di->name);
    if (rc == 0) {
        di->restarting = true;
        di->ended_read = false;
        di->stop_asked = false;
        k->restarts_running++;
    }
    pthread_mutex_unlock(&k->lock);
    return rc;
}

int
dk__restart(struct backend *b, int index, struct err *err)
{
    struct dk_backend *k = (struct dk_backend *)b;
    struct dk_restart *r;
    pthread_attr_t attr;
    pthread_t t;
    int rc;

    if (index < 0 || (size_t)index >= k->n)
        return err_set(err, EINVAL, "no instance %d", index);
    if (claim_restart(k, index, err) < 0)
        return -1;
    r = xmalloc(sizeof(*r));
    *r = (struct dk_restart){k, (size_t)index};
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&t, &attr, restart_main, r);
    pthread_attr_destroy(&attr);
    if (rc == 0)
        return 0;
    free(r);
    pthread_mutex_lock(&k->lock);
    k->insts[index].restarting = false;
    k->insts[index].ended_read = true;
    k->restarts_running--;
    pthread_mutex_unlock(&k->lock);
    return err_sys(err, rc, "restart thread");
}

void
dk__restarts_wait(struct dk_backend *k)
{
    pthread_mutex_lock(&k->lock);
    while (k->restarts_running > 0)
        pthread_cond_wait(&k->cond, &k->lock);
    pthread_mutex_unlock(&k->lock);
}

/* The container of a running instance (caller frees), or NULL with err. */
static char *
running_id(struct dk_backend *k, int index, struct err *err)
{
    struct dk_inst *di;
    char *id = NULL;

    if (index < 0 || (size_t)index >= k->n)
        return err_set(err, EINVAL, "no instance %d", index), NULL;
    di = &k->insts[index];
    pthread_mutex_lock(&k->lock);
    if (di->started && !di->dead && di->id != NULL && !k->gone)
        id = xstrdup(di->id);
    pthread_mutex_unlock(&k->lock);
    if (id == NULL)
        err_set(err, EBUSY, "%s is not running", di->name);
    return id;
}

int
dk__pause(struct backend *b, int index, bool pause, struct err *err)
{
    struct dk_backend *k = (struct dk_backend *)b;
    cleanup_free char *id = running_id(k, index, err);

    if (id == NULL)
        return -1;
    if (docker_container_pause(k->d, id, pause, err) < 0)
        return err_prefix(err, "%s %s", pause ? "pausing" : "unpausing",
                          k->insts[index].name);
    pthread_mutex_lock(&k->lock);
    k->insts[index].paused = pause;
    pthread_mutex_unlock(&k->lock);
    return 0;
}

/* NetworkSettings.Networks.<net>.IPAddress of an inspect. */
static const char *
ip_on(const cJSON *j, const char *net)
{
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(j, "NetworkSettings");
    const cJSON *nets = cJSON_GetObjectItemCaseSensitive(ns, "Networks");
    const cJSON *ip = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(nets, net), "IPAddress");

    return cJSON_IsString(ip) && ip->valuestring[0] ? ip->valuestring : NULL;
}

int
dk__address(struct backend *b, int index, char *buf, size_t size)
{
    struct dk_backend *k = (struct dk_backend *)b;
    cleanup_free char *id = NULL;
    const char *ip;
    cJSON *j;
    int rc = -1;

    if (index < 0 || (size_t)index >= k->n)
        return -1;
    if (k->network == NULL) { /* network: host */
        snprintf(buf, size, "127.0.0.1");
        return 0;
    }
    if ((id = running_id(k, index, NULL)) == NULL ||
        (j = docker_container_inspect(k->d, id, NULL)) == NULL)
        return -1;
    if ((ip = ip_on(j, k->network)) != NULL) {
        snprintf(buf, size, "%s", ip);
        rc = 0;
    }
    cJSON_Delete(j);
    return rc;
}

/* Inspect the exec until it ended or the deadline (monotonic ns) passed:
 * its exit status, or -1 (killed at the deadline). */
static int
probe_wait(struct dk_backend *k, const char *xid, const char *what,
           int64_t timeout_ms, struct err *err)
{
    int64_t deadline = now_mono_ns() + timeout_ms * 1000000;
    struct docker_exec_state st = {0};
    int64_t nap = DK_PROBE_POLL_MS;

    for (;;) {
        if (docker_exec_inspect(k->d, xid, &st, err) < 0)
            return -1;
        if (st.ended)
            return st.exit_code;
        if (now_mono_ns() >= deadline)
            break;
        usleep((useconds_t)nap * 1000);
        nap = nap * 2 > DK_PROBE_POLL_MAX_MS ? DK_PROBE_POLL_MAX_MS : nap * 2;
    }
    /* The engine has no call to end an exec: its process, from the host. */
    if (st.pid > 0)
        kill(st.pid, SIGKILL);
    return err_set(err, ETIMEDOUT, "%s: killed after %lld ms", what,
                   (long long)timeout_ms);
}

int
dk__probe(struct backend *b, int index, const char *const *argv,
          int64_t timeout_ms, struct err *err)
{
    struct dk_backend *k = (struct dk_backend *)b;
    cleanup_free char *id = NULL;
    cleanup_free char *xid = NULL;
    char user[32];
    int uid;

    if (argv == NULL || argv[0] == NULL)
        return err_set(err, EINVAL, "a probe needs a command");
    if ((id = running_id(k, index, err)) == NULL)
        return -1;
    backend__ids_user(&k->base, k->cfg.comp, k->insts[index].in, &uid, user,
                      sizeof(user));
    if (docker_exec_create(k->d, id, argv, user, &xid, err) < 0 ||
        docker_exec_start(k->d, xid, err) < 0)
        return err_prefix(err, "%s: running %s", k->insts[index].name, argv[0]);
    return probe_wait(k, xid, argv[0], timeout_ms > 0 ? timeout_ms : 1, err);
}
