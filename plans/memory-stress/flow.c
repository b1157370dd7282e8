/*
 * flow.c — the provider's flow control: the memory budget its responders
 * queue response frames under (max_memory_per_peer, max_memory_total) and
 * the token bucket its senders pace the round's bandwidth with (see
 * net.h). A producer over budget sleeps on a condition variable until a
 * sender has written and released enough, so a slow requestor or a narrow
 * link holds the provider at its budget instead of growing its memory.
 */
#include "net.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void
cond_init_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t ca;

    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

int
ms_budget_init(struct ms_budget *b, uint64_t per_peer, uint64_t total,
               int npeers)
{
    memset(b, 0, sizeof(*b));
    b->peer_used = calloc((size_t)(npeers > 0 ? npeers : 1), sizeof(uint64_t));
    if (b->peer_used == NULL)
        return -ENOMEM;
    pthread_mutex_init(&b->mu, NULL);
    cond_init_monotonic(&b->cv);
    b->per_peer = per_peer;
    b->total = total;
    b->npeers = npeers;
    return 0;
}

void
ms_budget_release_all(struct ms_budget *b)
{
    if (b->peer_used == NULL)
        return;
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b->peer_used);
    b->peer_used = NULL;
}

static bool
over(const struct ms_budget *b, int peer, uint64_t n)
{
    uint64_t mine = b->peer_used[peer];

    if (b->per_peer > 0 && mine > 0 && mine + n > b->per_peer)
        return true;
    return b->total > 0 && b->used > 0 && b->used + n > b->total;
}

static void
wait_until(struct ms_budget *b, int64_t deadline)
{
    struct timespec ts;

    if (deadline == INT64_MAX) {
        pthread_cond_wait(&b->cv, &b->mu);
        return;
    }
    ts.tv_sec = (time_t)(deadline / 1000000000);
    ts.tv_nsec = (long)(deadline % 1000000000);
    pthread_cond_timedwait(&b->cv, &b->mu, &ts);
}

int
ms_budget_acquire(struct ms_budget *b, int peer, uint64_t n,
                  const atomic_bool *abort, int64_t deadline)
{
    int rc = 0;

    if (atomic_load(abort))
        return -ECANCELED;
    pthread_mutex_lock(&b->mu);
    if (over(b, peer, n))
        b->waits++;
    while (rc == 0 && over(b, peer, n)) {
        if (atomic_load(abort))
            rc = -ECANCELED;
        else if (ms_now_ns() >= deadline)
            rc = -ETIMEDOUT;
        else
            wait_until(b, deadline);
    }
    if (rc == 0) {
        b->peer_used[peer] += n;
        b->used += n;
        if (b->used > b->peak)
            b->peak = b->used;
    }
    pthread_mutex_unlock(&b->mu);
    return rc;
}

void
ms_budget_release(struct ms_budget *b, int peer, uint64_t n)
{
    pthread_mutex_lock(&b->mu);
    b->peer_used[peer] -= n;
    b->used -= n;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

void
ms_budget_wake(struct ms_budget *b)
{
    pthread_mutex_lock(&b->mu);
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

void
ms_budget_round_stats(struct ms_budget *b, uint64_t *peak, uint64_t *waits)
{
    pthread_mutex_lock(&b->mu);
    *peak = b->peak;
    *waits = b->waits;
    b->peak = b->used;
    b->waits = 0;
    pthread_mutex_unlock(&b->mu);
}

void
ms_pacer_init(struct ms_pacer *p)
{
    pthread_mutex_init(&p->mu, NULL);
    p->rate = 0;
    p->next = 0;
}

void
ms_pacer_set(struct ms_pacer *p, uint64_t rate)
{
    pthread_mutex_lock(&p->mu);
    p->rate = rate;
    p->next = 0;
    pthread_mutex_unlock(&p->mu);
}

int64_t
ms_pacer_slot(struct ms_pacer *p, uint64_t n)
{
    int64_t now = ms_now_ns(), at;

    pthread_mutex_lock(&p->mu);
    if (p->rate == 0) {
        pthread_mutex_unlock(&p->mu);
        return now;
    }
    if (p->next < now - MS_PACER_BURST_NS)
        p->next = now - MS_PACER_BURST_NS;
    at = p->next;
    p->next += (int64_t)((double)n * 1e9 / (double)p->rate);
    pthread_mutex_unlock(&p->mu);
    return at;
}

void
ms_pacer_release(struct ms_pacer *p)
{
    pthread_mutex_destroy(&p->mu);
}
