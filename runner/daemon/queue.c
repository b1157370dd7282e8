/*
 * queue.c — the queue's order and who starts: priority (higher first),
 * then submission order; tasks start in that order while they fit the
 * budget beside what runs (admission, admit_int.h). Pure: the worker
 * (worker.c) acts on what it says.
 */
#include "daemon/daemon_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
before(const void *a, const void *b)
{
    const struct daemon_task *x = *(struct daemon_task *const *)a;
    const struct daemon_task *y = *(struct daemon_task *const *)b;

    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

void
daemon__queue_sort(struct daemon_task **v, size_t n)
{
    qsort(v, n, sizeof(*v), before);
}

void
daemon__queue_pick(struct daemon_task *const *v, size_t n,
                   const struct admit_need *used, const struct admit_budget *b,
                   enum pick *act, char *why, size_t whylen)
{
    struct admit_need u = *used;
    int64_t blocked = 0;

    for (size_t i = 0; i < n; i++) {
        char *w = why + i * whylen;

        w[0] = '\0';
        act[i] = PICK_WAIT;
        if (admit__too_large(&v[i]->need, b, w, whylen)) {
            act[i] = PICK_REFUSE;
        } else if (blocked != 0) {
            snprintf(w, whylen, "waits for task %lld, ahead in the queue",
                     (long long)blocked);
        } else if (admit__fits(&v[i]->need, &u, b, w, whylen)) {
            act[i] = PICK_START;
            admit__need_add(&u, &v[i]->need);
        } else {
            blocked = v[i]->id;
        }
    }
}
