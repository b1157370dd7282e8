/*
 * table.c — kvlog's in-memory table: open addressing with linear probing
 * over the keys' numbers, each value a heap copy of its own, so the
 * server's memory grows with the keys it holds (what a long run fits
 * against the puts done) and a restart rebuilds all of it from disk.
 */
#include "kv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CAP 1024

static size_t
slot_of(const struct kv_table *t, uint32_t key)
{
    return (size_t)(key * 2654435761u) & (t->cap - 1);
}

void
kv_table_init(struct kv_table *t, size_t value_size)
{
    memset(t, 0, sizeof(*t));
    t->vsize = value_size;
}

void
kv_table_release(struct kv_table *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->e[i].value);
    free(t->e);
    memset(t, 0, sizeof(*t));
}

/* The slot holding key, or the empty one where it would go. */
static struct kv_entry *
find(const struct kv_table *t, uint32_t key)
{
    size_t i = slot_of(t, key);

    while (t->e[i].used && t->e[i].key != key)
        i = (i + 1) & (t->cap - 1);
    return &t->e[i];
}

static int
grow(struct kv_table *t)
{
    size_t cap = t->cap ? t->cap * 2 : MIN_CAP;
    struct kv_entry *old = t->e, *e = calloc(cap, sizeof(*e));
    size_t ocap = t->cap;

    if (e == NULL)
        return -ENOMEM;
    t->e = e;
    t->cap = cap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].used)
            *find(t, old[i].key) = old[i];
    free(old);
    return 0;
}

int
kv_table_put(struct kv_table *t, uint32_t key, uint64_t seq, const void *v)
{
    struct kv_entry *e;

    if ((t->n + 1) * 4 > t->cap * 3 && grow(t) < 0)
        return -ENOMEM;
    e = find(t, key);
    if (e->used && e->seq >= seq)
        return 0;
    if (!e->used) {
        e->value = malloc(t->vsize ? t->vsize : 1);
        if (e->value == NULL)
            return -ENOMEM;
        e->used = 1;
        e->key = key;
        t->n++;
    }
    e->seq = seq;
    memcpy(e->value, v, t->vsize);
    return 0;
}

const struct kv_entry *
kv_table_get(const struct kv_table *t, uint32_t key)
{
    const struct kv_entry *e;

    if (t->cap == 0)
        return NULL;
    e = find(t, key);
    return e->used ? e : NULL;
}
