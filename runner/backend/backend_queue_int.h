/*
 * backend/backend_queue_int.h — the queue of backend events both backends keep
 * until the orchestrator reads them with next_event().
 *
 * Safe to push from several threads (the Docker backend's start workers and
 * events thread) and to pop from the orchestrator's. Held by value in each
 * backend; backend__queue_release frees what it holds.
 */
#ifndef TY_BACKEND_QUEUE_H
#define TY_BACKEND_QUEUE_H

#include "backend/backend.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct backend_queue {
    pthread_mutex_t lock;
    struct backend_event *v;
    size_t head, len, cap;
};

void backend__queue_init(struct backend_queue *q);
void backend__queue_release(struct backend_queue *q);
void backend__queue_push(struct backend_queue *q,
                         const struct backend_event *ev);
/* true with *ev filled, false when empty. */
bool backend__queue_pop(struct backend_queue *q, struct backend_event *ev);
bool backend__queue_empty(struct backend_queue *q);

/* An event of `type` for instance `index` now, with an optional message
 * (START_FAILED reasons) and nothing else known. */
void backend__event_init(struct backend_event *ev, enum backend_event_type type,
                         int index, const char *msg);

#endif
