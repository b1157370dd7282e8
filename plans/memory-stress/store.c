/*
 * store.c — the in-memory block store both roles keep for a round: a hash
 * table from a block's SHA-256 to the block, with open addressing and
 * linear probing. The hash is already uniform, so its first 8 bytes are
 * the table index. The table doubles past half full. It is not locked: the
 * provider fills it before serving and only reads it while serving; the
 * requestor puts blocks under its own lock.
 *
 * Blocks are allocated here too (ms_store_block_new), by the provider as it
 * builds a file and by a requestor as a block arrives: that is the site a
 * heap profile names for what the store holds.
 */
#include "dag.h"

#include <stdlib.h>
#include <string.h>

void
ms_store_init(struct ms_store *s)
{
    memset(s, 0, sizeof(*s));
}

/* Not inlined (its callers are in other files anyway), so it is a frame of
 * its own in every stack. */
__attribute__((noinline)) struct ms_block *
ms_store_block_new(uint32_t len)
{
    struct ms_block *b = malloc(sizeof(*b) + (len ? len : 1));

    if (b != NULL)
        b->len = len;
    return b;
}

static size_t
slot_of(const uint8_t *hash, size_t cap)
{
    uint64_t k;

    memcpy(&k, hash, sizeof(k));
    return (size_t)(k & (cap - 1));
}

static void
insert(struct ms_block **slots, size_t cap, struct ms_block *b)
{
    size_t i = slot_of(b->hash, cap);

    while (slots[i] != NULL)
        i = (i + 1) & (cap - 1);
    slots[i] = b;
}

static int
grow(struct ms_store *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024;
    struct ms_block **slots = calloc(cap, sizeof(*slots));

    if (slots == NULL)
        return -1;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i] != NULL)
            insert(slots, cap, s->slots[i]);
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return 0;
}

const struct ms_block *
ms_store_get(const struct ms_store *s, const uint8_t *hash)
{
    if (s->cap == 0)
        return NULL;
    for (size_t i = slot_of(hash, s->cap); s->slots[i] != NULL;
         i = (i + 1) & (s->cap - 1))
        if (memcmp(s->slots[i]->hash, hash, MS_HASH_LEN) == 0)
            return s->slots[i];
    return NULL;
}

const struct ms_block *
ms_store_put(struct ms_store *s, struct ms_block *b)
{
    const struct ms_block *old = ms_store_get(s, b->hash);

    if (old != NULL) {
        free(b);
        return old;
    }
    if ((s->count + 1) * 2 > s->cap && grow(s) < 0) {
        free(b);
        return NULL;
    }
    insert(s->slots, s->cap, b);
    s->count++;
    s->bytes += b->len;
    return b;
}

void
ms_store_release(struct ms_store *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->slots[i]);
    free(s->slots);
    memset(s, 0, sizeof(*s));
}
