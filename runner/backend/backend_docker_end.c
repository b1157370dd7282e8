/*
 * backend_docker_end.c — how a local:docker run ends: the start workers are
 * joined, each container is killed if it still runs, its logs are put in
 * place and it is removed, on a few threads at once. When the engine went
 * away, nothing waits on it: it gets a few seconds to come back, and what
 * could not be removed is named, labelled, for `testyard clean --run ID`.
 */
#include "backend/backend_docker_int.h"

#include "backend/backend_ids_int.h"
#include "config/config.h"
#include "backend/dklog_int.h"
#include "docker/docker.h"
#include "base/log.h"
#include "base/run_lock.h"
#include "base/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    while (k->logs_pending > 0 && !k->gone && now_mono_ns() < until) {
        pthread_mutex_unlock(&k->lock);
        usleep(10000);
        pthread_mutex_lock(&k->lock);
    }
    pthread_mutex_unlock(&k->lock);
}

/* Kill what still runs, have its logs in place, and remove the
 * container. */
static void
finish_container(struct dk_backend *k, struct dk_inst *di, bool keep)
{
    struct err e = {0};
    bool running;

    pthread_mutex_lock(&k->lock);
    running = !di->dead;
    pthread_mutex_unlock(&k->lock);
    if (di->id == NULL) {
        dklog__finish(di->log, NULL, 0);
        return;
    }
    /* The logs are put in place on the first call, also with the engine
     * gone (then from what the follower got); a second call after the
     * engine came back only removes. */
    if (running && !dk__is_gone(k) && !di->removed)
        docker_container_kill(k->d, di->id, "SIGKILL", NULL);
    dklog__finish(di->log, dk__is_gone(k) ? NULL : di->id, k->logs_deadline);
    if (keep || di->removed || dk__is_gone(k))
        return;
    if (docker_container_remove(k->d, di->id, true, &e) == 0 ||
        e.code == ENOENT) {
        di->removed = true;
    } else if (!dk__is_gone(k)) {
        log_warnx("%s: remove: %s", di->name, e.msg);
        if (e.status == EXIT_UNAVAILABLE) { /* no use asking again */
            pthread_mutex_lock(&k->lock);
            k->gone = true;
            pthread_mutex_unlock(&k->lock);
        }
    }
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
        !dk__is_gone(k) && docker_network_remove(k->d, k->network_id, NULL) < 0)
        log_warnx("could not remove network %s", k->network);
}

/* A lost engine gets one last chance to answer so that what the run
 * started is removed; abort() takes even that away. */
static bool
engine_back(struct dk_backend *k)
{
    struct docker *d2;
    bool gone, aborted;

    pthread_mutex_lock(&k->lock);
    gone = k->gone;
    aborted = k->aborted;
    pthread_mutex_unlock(&k->lock);
    if (!gone || aborted)
        return !gone;
    log_warnx("waiting %d s for the Docker engine at %s to come back, to "
              "remove what run %s started",
              DK_COMEBACK_MS / 1000, docker_host(k->d), k->cfg.run_id);
    /* In short tries, so that abort() cuts the wait short too. */
    for (int t = 0; (d2 = docker_reconnect(docker_host(k->d), 500)) == NULL;
         t += 500)
        if (t + 500 >= DK_COMEBACK_MS || dk__is_aborted(k))
            return false;
    pthread_mutex_lock(&k->lock);
    docker_destroy(&k->d);
    k->d = d2;
    k->gone = k->aborted;
    if (k->aborted)
        docker_abort(k->d);
    pthread_mutex_unlock(&k->lock);
    log_warnx("the Docker engine at %s is back: removing what this run "
              "started",
              docker_host(k->d));
    return true;
}

/* Say what is left on the engine, and how it goes. */
static void
report_leftovers(struct dk_backend *k)
{
    size_t left = 0;

    for (size_t i = 0; i < k->n; i++)
        left += k->insts[i].id != NULL && !k->insts[i].removed;
    if (left > 0 && !k->cfg.comp->keep_containers)
        log_warnx("left %zu container%s of run %s on the Docker engine at "
                  "%s: `testyard clean --run %s` removes them once it "
                  "answers",
                  left, left == 1 ? "" : "s", k->cfg.run_id, docker_host(k->d),
                  k->cfg.run_id);
}

void
dk__shutdown(struct backend *b)
{
    struct dk_backend *k = (struct dk_backend *)b;

    if (k->shut)
        return;
    k->shut = true;
    /* An engine that does not answer now would hold every step below
     * for a call timeout: it gets its last chance at the end instead. */
    if (k->watch != NULL && docker_watch_down_since(k->watch) > 0)
        dk__engine_lost(k, NULL);
    join_workers(k);
    dk__restarts_wait(k);
    wait_logs(k);
    k->logs_deadline = now_mono_ns() + (int64_t)DK_LOGS_WAIT_MS * 1000000;
    if (k->events_running) {
        docker_cancel_fire(k->events_cancel);
        pthread_join(k->events_thread, NULL);
        k->events_running = false;
    }
    if (k->d != NULL && !dk__is_gone(k))
        remove_containers(k);
    docker_watch_destroy(&k->watch);
    if (k->d != NULL && dk__is_gone(k) && engine_back(k))
        remove_containers(k);
    if (k->d != NULL)
        report_leftovers(k);
}

/* From another thread, while shutdown() runs. */
void
dk__abort(struct backend *b)
{
    struct dk_backend *k = (struct dk_backend *)b;

    pthread_mutex_lock(&k->lock);
    k->gone = true;
    k->aborted = true;
    if (k->d != NULL)
        docker_abort(k->d);
    pthread_mutex_unlock(&k->lock);
}
