/*
 * backend_queue.c — a locked FIFO of backend events (see
 * backend/backend_queue_int.h). The array is reused from the start whenever it
 * has been read empty, so it stays as long as the largest burst of events, not
 * the whole run.
 */
#include "backend/backend_queue_int.h"

#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>

void
backend__queue_init(struct backend_queue *q)
{
    pthread_mutex_init(&q->lock, NULL);
    q->v = NULL;
    q->head = q->len = q->cap = 0;
}

void
backend__queue_release(struct backend_queue *q)
{
    pthread_mutex_destroy(&q->lock);
    free(q->v);
    q->v = NULL;
    q->head = q->len = q->cap = 0;
}

void
backend__queue_push(struct backend_queue *q, const struct backend_event *ev)
{
    pthread_mutex_lock(&q->lock);
    if (q->head > 0 && q->head == q->len)
        q->head = q->len = 0;
    xgrow(&q->v, &q->cap, q->len + 1, sizeof(*ev));
    q->v[q->len++] = *ev;
    pthread_mutex_unlock(&q->lock);
}

bool
backend__queue_pop(struct backend_queue *q, struct backend_event *ev)
{
    bool got = false;

    pthread_mutex_lock(&q->lock);
    if (q->head < q->len) {
        *ev = q->v[q->head++];
        got = true;
    }
    pthread_mutex_unlock(&q->lock);
    return got;
}

bool
backend__queue_empty(struct backend_queue *q)
{
    bool empty;

    pthread_mutex_lock(&q->lock);
    empty = q->head == q->len;
    pthread_mutex_unlock(&q->lock);
    return empty;
}

void
backend__event_init(struct backend_event *ev, enum backend_event_type type,
                    int index, const char *msg)
{
    *ev = (struct backend_event){
        .type = type, .index = index, .status = -1, .peak_bytes = -1};
    ev->wall_ns = now_wall_ns();
    if (msg != NULL)
        snprintf(ev->message, sizeof(ev->message), "%.500s", msg);
}
