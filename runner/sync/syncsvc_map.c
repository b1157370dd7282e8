/*
 * syncsvc_map.c — the two containers the sync service is built on.
 *
 * A chained hash map from byte strings (state names, topic names, ZeroMQ
 * routing ids, which may hold NUL bytes) to pointers, doubling its buckets
 * when it holds more entries than buckets; and a binary min-heap of timers,
 * each knowing its slot so a wait that ends early leaves the heap in
 * O(log n). With a thousand instances blocked in one barrier, finding the
 * next deadline stays cheap.
 */
#include "sync/syncsvc_int.h"
#include "base/util.h"
#include "ty_hash.h"

#include <stdlib.h>
#include <string.h>

void
svc__map_init(struct svc_map *m)
{
    m->nbuckets = 64;
    m->buckets = xcalloc(m->nbuckets, sizeof(*m->buckets));
    m->count = 0;
}

void
svc__map_release(struct svc_map *m, void (*free_value)(void *))
{
    for (size_t b = 0; b < m->nbuckets; b++) {
        struct svc_map_entry *e = m->buckets[b], *next;

        for (; e != NULL; e = next) {
            next = e->next;
            if (free_value != NULL)
                free_value(e->value);
            free(e);
        }
    }
    free(m->buckets);
    m->buckets = NULL;
    m->nbuckets = m->count = 0;
}

static struct svc_map_entry **
find(const struct svc_map *m, const void *key, size_t klen, uint64_t h)
{
    struct svc_map_entry **pp = &m->buckets[h & (m->nbuckets - 1)];

    for (; *pp != NULL; pp = &(*pp)->next)
        if ((*pp)->hash == h && (*pp)->klen == klen &&
            memcmp((*pp)->key, key, klen) == 0)
            return pp;
    return pp;
}

void *
svc__map_get(const struct svc_map *m, const void *key, size_t klen)
{
    struct svc_map_entry **pp =
        find(m, key, klen, ty__fnv1a(TY__FNV_BASIS, key, klen));

    return *pp ? (*pp)->value : NULL;
}

static void
grow(struct svc_map *m)
{
    size_t n = m->nbuckets * 2;
    struct svc_map_entry **b = xcalloc(n, sizeof(*b));

    for (size_t i = 0; i < m->nbuckets; i++) {
        struct svc_map_entry *e = m->buckets[i], *next;

        for (; e != NULL; e = next) {
            next = e->next;
            e->next = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = n;
}

void
svc__map_put(struct svc_map *m, const void *key, size_t klen, void *value)
{
    uint64_t h = ty__fnv1a(TY__FNV_BASIS, key, klen);
    struct svc_map_entry **pp = find(m, key, klen, h), *e;

    if (*pp != NULL) {
        (*pp)->value = value;
        return;
    }
    e = xmalloc(sizeof(*e) + klen);
    e->next = NULL;
    e->hash = h;
    e->value = value;
    e->klen = klen;
    memcpy(e->key, key, klen);
    *pp = e;
    if (++m->count > m->nbuckets)
        grow(m);
}

void *
svc__map_del(struct svc_map *m, const void *key, size_t klen)
{
    struct svc_map_entry **pp =
        find(m, key, klen, ty__fnv1a(TY__FNV_BASIS, key, klen));
    struct svc_map_entry *e = *pp;
    void *v;

    if (e == NULL)
        return NULL;
    *pp = e->next;
    v = e->value;
    free(e);
    m->count--;
    return v;
}

void
svc__map_each(struct svc_map *m, void (*fn)(void *value, void *arg), void *arg)
{
    for (size_t b = 0; b < m->nbuckets; b++)
        for (struct svc_map_entry *e = m->buckets[b]; e != NULL; e = e->next)
            fn(e->value, arg);
}

/* ---- heap -------------------------------------------------------------- */

static void
place(struct svc_heap *h, size_t i, struct svc_timer *t)
{
    h->v[i] = t;
    t->slot = i;
}

static void
sift_up(struct svc_heap *h, size_t i)
{
    struct svc_timer *t = h->v[i];

    while (i > 0 && h->v[(i - 1) / 2]->at > t->at) {
        place(h, i, h->v[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    place(h, i, t);
}

static void
sift_down(struct svc_heap *h, size_t i)
{
    struct svc_timer *t = h->v[i];

    for (;;) {
        size_t c = 2 * i + 1;

        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->v[c + 1]->at < h->v[c]->at)
            c++;
        if (h->v[c]->at >= t->at)
            break;
        place(h, i, h->v[c]);
        i = c;
    }
    place(h, i, t);
}

void
svc__heap_push(struct svc_heap *h, struct svc_timer *t)
{
    xgrow(&h->v, &h->cap, h->n + 1, sizeof(*h->v));
    h->v[h->n] = t;
    t->slot = h->n++;
    sift_up(h, t->slot);
}

void
svc__heap_remove(struct svc_heap *h, struct svc_timer *t)
{
    size_t i = t->slot;
    struct svc_timer *last;

    if (i == SIZE_MAX || i >= h->n || h->v[i] != t)
        return;
    t->slot = SIZE_MAX;
    last = h->v[--h->n];
    if (i == h->n)
        return;
    place(h, i, last);
    sift_down(h, i);
    sift_up(h, last->slot);
}

struct svc_timer *
svc__heap_top(const struct svc_heap *h)
{
    return h->n > 0 ? h->v[0] : NULL;
}
