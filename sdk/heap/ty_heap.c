/*
 * ty_heap.c — the heap profiler's sampler and tables (see ty_heap.h).
 *
 * Two tables, both outside the malloc heap (their memory comes from mmap,
 * through ty_heap_os.c):
 *
 *  - Buckets: one per distinct call stack (and sampling rate), holding
 *    cumulative sampled allocation and free counts. A fixed array of hash
 *    chains that are only ever pushed onto, so lookups take no lock; a new
 *    stack is added under one mutex. Buckets are never freed.
 *  - Live records: sampled blocks that have not been freed yet, keyed by
 *    address, in 64 shards with a mutex each. The shard is a function of
 *    the block's filter index (ty__heap_filter), so each filter counter is
 *    only ever changed under one shard's lock; free() of a block in a page
 *    without sampled blocks touches no lock, and most others find an empty
 *    chain without one either.
 *
 * Fork: the prepare handler takes every lock of this file so the child gets
 * consistent tables; the parent and child handlers release them.
 */
#include "ty_heap.h"
#include "ty_heap_os.h"
#include "ty_symbols.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__thread struct ty__heap_thread ty__heap_thr TY__TLS_IE;
_Atomic unsigned char ty__heap_filter[1u << TY_HEAP_FILTER_BITS];

#define NSHARDS_LOG2 6
#define NSHARDS (1 << NSHARDS_LOG2)
#define NHEADS (1u << 16)
#define FIRST_SLOTS_LOG2 9
#define REC_CHUNK (64u << 10)
#define ARENA_CHUNK (1u << 20)
/* With sampling off, look at the rate again after this many bytes, so that
 * turning it back on reaches every thread. */
#define OFF_RECHECK (1 << 20)
/* Cap on a drawn countdown, in multiples of the rate (e^-64 ~ 1e-28). */
#define MAX_DRAW 64.0

struct bucket {
    struct bucket *_Atomic next;
    uint64_t hash;
    uint64_t rate;
    _Atomic uint64_t allocs, alloc_bytes, frees, free_bytes;
    uint32_t depth;
    uintptr_t pcs[];
};

struct rec {
    uintptr_t addr;
    size_t size;
    struct bucket *b;
    struct rec *next;
};

/* A shard's hash table: 2^k chains. Chain heads are atomic so that
 * ty__heap_take can see an empty chain without the lock; a table replaced
 * by a bigger one is never unmapped, so a reader holding the old one still
 * reads mapped memory (the tables grow geometrically: at most half of them
 * is waste). The shard names its table in one word, address | k (tables
 * are page-aligned), so a reader gets both from one load. */
struct shard {
    pthread_mutex_t mu;
    _Atomic uintptr_t tab; /* table address | log2 of chains; 0: none */
    size_t count;
    struct rec *free;  /* records freed */
    struct rec *carve; /* the rest of the last chunk */
    size_t carve_left;
} __attribute__((aligned(64)));

static struct shard shards[NSHARDS] = {
    [0 ... NSHARDS - 1] = {.mu = PTHREAD_MUTEX_INITIALIZER},
};
static struct bucket *_Atomic heads[NHEADS];

static struct {
    _Atomic uint64_t rate;
    _Atomic int ready;
    pthread_mutex_t arena_mu; /* guards the arena and bucket inserts */
    unsigned char *arena;
    size_t arena_left;
    _Atomic size_t nbuckets;
    _Atomic size_t live;
} H = {
    .rate = TY_HEAP_DEFAULT_RATE,
    .arena_mu = PTHREAD_MUTEX_INITIALIZER,
};

static void *
os_alloc(size_t n)
{
    return ty__heap_os_alloc(n);
}

/* ------------------------------------------------------------------------
 * Random countdowns
 */

static uint64_t
splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void
seed(struct ty__heap_thread *t)
{
    static _Atomic uint64_t threads;
    struct timespec ts;
    uint64_t x;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uintptr_t)t;
    x ^= atomic_fetch_add_explicit(&threads, 1, memory_order_relaxed) << 48;
    x = splitmix64(x);
    t->rng = x != 0 ? x : 1;
}

static uint64_t
next_random(struct ty__heap_thread *t)
{
    uint64_t x = t->rng;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    t->rng = x;
    return x * 0x2545f4914f6cdd1dULL;
}

/* An exponentially distributed distance with the given mean. */
static int64_t
draw(struct ty__heap_thread *t, uint64_t mean)
{
    double u = (double)(next_random(t) >> 11) * 0x1.0p-53; /* [0, 1) */
    double d = -log1p(-u);

    if (d > MAX_DRAW)
        d = MAX_DRAW;
    return (int64_t)(d * (double)mean);
}

static int64_t
countdown_for(struct ty__heap_thread *t, uint64_t rate)
{
    if (rate == 0)
        return OFF_RECHECK;
    if (rate == 1)
        return -1;
    return draw(t, rate);
}

/* ------------------------------------------------------------------------
 * Buckets
 */

static uint64_t
stack_hash(const uintptr_t *pcs, int depth, uint64_t rate)
{
    uint64_t h = splitmix64(rate + (uint64_t)depth);

    for (int i = 0; i < depth; i++)
        h = splitmix64(h ^ pcs[i]);
    return h;
}

static struct bucket *
bucket_find(struct bucket *b, uint64_t h, const uintptr_t *pcs, int depth,
            uint64_t rate)
{
    for (; b != NULL;
         b = atomic_load_explicit(&b->next, memory_order_acquire)) {
        if (b->hash == h && b->rate == rate && b->depth == (uint32_t)depth &&
            memcmp(b->pcs, pcs, (size_t)depth * sizeof(*pcs)) == 0)
            return b;
    }
    return NULL;
}

static void *
arena_alloc(size_t n)
{
    void *p;

    n = (n + 15) & ~(size_t)15;
    if (H.arena_left < n) {
        size_t chunk = n > ARENA_CHUNK ? n : ARENA_CHUNK;

        H.arena = os_alloc(chunk);
        H.arena_left = H.arena != NULL ? chunk : 0;
        if (H.arena == NULL)
            return NULL;
    }
    p = H.arena;
    H.arena += n;
    H.arena_left -= n;
    return p;
}

static struct bucket *
bucket_get(const uintptr_t *pcs, int depth, uint64_t rate)
{
    uint64_t h = stack_hash(pcs, depth, rate);
    struct bucket *_Atomic *head = &heads[h & (NHEADS - 1)];
    struct bucket *b;

    b = bucket_find(atomic_load_explicit(head, memory_order_acquire), h, pcs,
                    depth, rate);
    if (b != NULL)
        return b;
    pthread_mutex_lock(&H.arena_mu);
    b = bucket_find(atomic_load_explicit(head, memory_order_acquire), h, pcs,
                    depth, rate);
    if (b == NULL) {
        b = arena_alloc(sizeof(*b) + (size_t)depth * sizeof(*pcs));
        if (b != NULL) {
            b->hash = h;
            b->rate = rate;
            b->depth = (uint32_t)depth;
            memcpy(b->pcs, pcs, (size_t)depth * sizeof(*pcs));
            atomic_store_explicit(&b->next, atomic_load(head),
                                  memory_order_relaxed);
            atomic_store_explicit(head, b, memory_order_release);
            atomic_fetch_add(&H.nbuckets, 1);
        }
    }
    pthread_mutex_unlock(&H.arena_mu);
    return b;
}

/* ------------------------------------------------------------------------
 * Live records
 */

/* Any function of the filter index keeps each filter byte in one shard;
 * a multiplicative hash spreads strided addresses over all of them. */
static struct shard *
shard_of(size_t filter_index)
{
    return &shards[((uint64_t)filter_index * 0x9e3779b97f4a7c15ULL) >>
                   (64 - NSHARDS_LOG2)];
}

static size_t
slot_of(uintptr_t addr, uintptr_t tab)
{
    return (size_t)(splitmix64(addr) & (((size_t)1 << (tab & 63)) - 1));
}

static struct rec *_Atomic *
heads_of(uintptr_t tab)
{
    return (struct rec * _Atomic *)(tab & ~(uintptr_t)63);
}

static struct rec *
chain(uintptr_t tab, size_t j)
{
    return atomic_load_explicit(&heads_of(tab)[j], memory_order_relaxed);
}

static void
set_chain(uintptr_t tab, size_t j, struct rec *r)
{
    atomic_store_explicit(&heads_of(tab)[j], r, memory_order_release);
}

static int
shard_grow(struct shard *s)
{
    uintptr_t old = atomic_load_explicit(&s->tab, memory_order_relaxed), tab;
    unsigned k = old ? (unsigned)(old & 63) + 1 : FIRST_SLOTS_LOG2;
    size_t n = (size_t)1 << k;
    void *t = os_alloc(n * sizeof(struct rec *));

    if (t == NULL)
        return -ENOMEM;
    tab = (uintptr_t)t | k;
    for (size_t i = 0; old != 0 && i < (size_t)1 << (old & 63); i++) {
        struct rec *r = chain(old, i), *next;

        for (; r != NULL; r = next) {
            size_t j = slot_of(r->addr, tab);

            next = r->next;
            r->next = chain(tab, j);
            set_chain(tab, j, r);
        }
    }
    atomic_store_explicit(&s->tab, tab, memory_order_release);
    return 0;
}

/* A record from the shard's free list, else carved from its current chunk
 * (not threaded onto the list in advance: untouched pages cost nothing). */
static struct rec *
rec_new(struct shard *s)
{
    struct rec *r = s->free;

    if (r != NULL) {
        s->free = r->next;
        return r;
    }
    if (s->carve_left == 0) {
        s->carve = os_alloc(REC_CHUNK);
        if (s->carve == NULL)
            return NULL;
        s->carve_left = REC_CHUNK / sizeof(*r);
    }
    s->carve_left--;
    return s->carve++;
}

/* The filter byte of a page, changed only under its shard's lock; 255 is
 * sticky ("many"). */
static void
filter_add(size_t i, int delta)
{
    unsigned v =
        atomic_load_explicit(&ty__heap_filter[i], memory_order_relaxed);

    if (v == 255 || (delta < 0 && v == 0))
        return;
    atomic_store_explicit(&ty__heap_filter[i], (unsigned char)(v + delta),
                          memory_order_relaxed);
}

/* The record of addr (under the lock), and the one before it in its chain
 * (NULL when it is the chain's head). */
static struct rec *
rec_find(const struct shard *s, uintptr_t addr, struct rec **prev)
{
    uintptr_t tab = atomic_load_explicit(&s->tab, memory_order_relaxed);
    struct rec *r;

    *prev = NULL;
    if (tab == 0)
        return NULL;
    for (r = chain(tab, slot_of(addr, tab)); r != NULL; r = r->next) {
        if (r->addr == addr)
            return r;
        *prev = r;
    }
    return NULL;
}

static void
rec_link(struct shard *s, struct rec *r)
{
    uintptr_t tab = atomic_load_explicit(&s->tab, memory_order_relaxed);
    size_t j = slot_of(r->addr, tab);

    r->next = chain(tab, j);
    set_chain(tab, j, r);
    s->count++;
}

static void
rec_unlink(struct shard *s, struct rec *r, struct rec *prev)
{
    uintptr_t tab = atomic_load_explicit(&s->tab, memory_order_relaxed);

    if (prev != NULL)
        prev->next = r->next;
    else
        set_chain(tab, slot_of(r->addr, tab), r->next);
    r->next = s->free;
    s->free = r;
    s->count--;
}

/* Insert or replace the record of addr. A replaced record (its block was
 * freed behind our back) is accounted as freed. */
static int
rec_insert(uintptr_t addr, size_t size, struct bucket *b)
{
    size_t fi = ty__heap_filter_index(addr);
    struct shard *s = shard_of(fi);
    struct ty__heap_taken old = {0};
    struct rec *r, *prev;
    uintptr_t tab;

    pthread_mutex_lock(&s->mu);
    tab = atomic_load_explicit(&s->tab, memory_order_relaxed);
    if ((tab == 0 || s->count >= (size_t)1 << (tab & 63)) &&
        shard_grow(s) < 0 && tab == 0) {
        pthread_mutex_unlock(&s->mu);
        return -ENOMEM;
    }
    r = rec_find(s, addr, &prev);
    if (r != NULL) {
        old = (struct ty__heap_taken){r->addr, r->size, r->b};
    } else if ((r = rec_new(s)) != NULL) {
        r->addr = addr;
        rec_link(s, r);
        filter_add(fi, 1);
        atomic_fetch_add_explicit(&H.live, 1, memory_order_relaxed);
    }
    if (r != NULL) {
        r->size = size;
        r->b = b;
    }
    pthread_mutex_unlock(&s->mu);
    if (old.bucket != NULL)
        ty__heap_freed(&old);
    return r != NULL ? 0 : -ENOMEM;
}

/* Whether addr may have a record, without the lock: an empty chain says
 * no. Sound because addr's record, if any, was linked before the block
 * reached whoever frees it: the table read then is that one or a newer
 * one, which holds the record too; an older table is left as it was when
 * replaced, with the record's chain not empty. */
static bool
rec_maybe(const struct shard *s, uintptr_t addr)
{
    uintptr_t tab = atomic_load_explicit(&s->tab, memory_order_acquire);

    return tab != 0 && chain(tab, slot_of(addr, tab)) != NULL;
}

bool
ty__heap_take(const void *p, struct ty__heap_taken *out)
{
    uintptr_t addr = (uintptr_t)p;
    size_t fi = ty__heap_filter_index(addr);
    struct shard *s = shard_of(fi);
    struct rec *r, *prev;

    if (!rec_maybe(s, addr))
        return false;
    pthread_mutex_lock(&s->mu);
    r = rec_find(s, addr, &prev);
    if (r != NULL) {
        *out = (struct ty__heap_taken){r->addr, r->size, r->b};
        rec_unlink(s, r, prev);
        filter_add(fi, -1);
        atomic_fetch_sub_explicit(&H.live, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&s->mu);
    return r != NULL;
}

/* Bytes before count, both with release: a snapshot that reads the count
 * (acquire) first sees at least as many allocations as frees. */
void
ty__heap_freed(const struct ty__heap_taken *t)
{
    struct bucket *b = t->bucket;

    atomic_fetch_add_explicit(&b->free_bytes, t->size, memory_order_release);
    atomic_fetch_add_explicit(&b->frees, 1, memory_order_release);
    ty__heap_peak_count(t->size, b->rate, false);
}

void
ty__heap_put_back(const struct ty__heap_taken *t)
{
    (void)rec_insert(t->addr, t->size, t->bucket);
}

void
ty__heap_forget(const void *p)
{
    struct ty__heap_taken t;

    if (ty__heap_take(p, &t))
        ty__heap_freed(&t);
}

size_t
ty__heap_live_count(void)
{
    return atomic_load_explicit(&H.live, memory_order_relaxed);
}

/* ------------------------------------------------------------------------
 * Sampling
 */

static void
record(void *p, size_t n, uint64_t rate, void *ra, void *frame)
{
    uintptr_t pcs[TY_HEAP_MAX_DEPTH];
    struct bucket *b;
    int depth;

    ty__heap_thr.busy = 1;
    depth = ty__unwind(pcs, TY_HEAP_MAX_DEPTH, ra, frame);
    b = bucket_get(pcs, depth, rate);
    if (b != NULL && rec_insert((uintptr_t)p, n, b) == 0) {
        atomic_fetch_add_explicit(&b->alloc_bytes, n, memory_order_relaxed);
        atomic_fetch_add_explicit(&b->allocs, 1, memory_order_relaxed);
        ty__heap_peak_count(n, rate, true);
    }
    ty__heap_thr.busy = 0;
}

void
ty__heap_sample(void *p, size_t n, void *ra, void *frame)
{
    struct ty__heap_thread *t = &ty__heap_thr;
    uint64_t rate;

    if (!atomic_load_explicit(&H.ready, memory_order_acquire)) {
        t->left = -1; /* not yet: look again at the next allocation */
        return;
    }
    rate = atomic_load_explicit(&H.rate, memory_order_relaxed);
    if (t->rng == 0) {
        /* A new thread: its countdown starts now, not at zero. */
        seed(t);
        t->left = countdown_for(t, rate) - (int64_t)n;
        if (t->left >= 0)
            return;
    }
    /* The countdown is redrawn whether or not this allocation is recorded:
     * by the exponential's lack of memory that is the same as going on. */
    t->left = countdown_for(t, rate);
    if (rate == 0 || t->busy || p == NULL)
        return;
    record(p, n, rate, ra, frame);
}

void
ty__heap_set_rate(uint64_t rate)
{
    struct ty__heap_thread *t = &ty__heap_thr;

    atomic_store(&H.rate, rate);
    if (t->rng == 0)
        seed(t);
    t->left = countdown_for(t, rate);
}

uint64_t
ty__heap_get_rate(void)
{
    return atomic_load_explicit(&H.rate, memory_order_relaxed);
}

/* ------------------------------------------------------------------------
 * Start-up and fork
 */

static void
fork_prepare(void)
{
    ty__symbols_lock(); /* a snapshot naming frames takes heap locks inside */
    pthread_mutex_lock(&H.arena_mu);
    for (int i = 0; i < NSHARDS; i++)
        pthread_mutex_lock(&shards[i].mu);
    ty__heap_os_lock();
}

static void
fork_release(void)
{
    ty__heap_os_unlock();
    for (int i = NSHARDS - 1; i >= 0; i--)
        pthread_mutex_unlock(&shards[i].mu);
    pthread_mutex_unlock(&H.arena_mu);
    ty__symbols_unlock();
}

/* The child has no snapshot thread (nor its pipe) until it makes one. */
static void
fork_child(void)
{
    fork_release();
    ty__heap_peak_forked();
}

static void
start_once(void)
{
    struct ty__heap_env env;

    ty__heap_thr.busy = 1;
    ty__heap_env_read(&env);
    if (env.rate_set)
        atomic_store(&H.rate, env.rate);
    ty__unwind_init(env.unwind);
    ty__symbols_debug_dirs(env.debug_dirs);
    pthread_atfork(fork_prepare, fork_release, fork_child);
    ty__heap_thr.busy = 0;
    ty__heap_thr.left = -1;
    atomic_store_explicit(&H.ready, 1, memory_order_release);
}

void
ty__heap_start(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, start_once);
}

/* ------------------------------------------------------------------------
 * Snapshots
 */

static void
read_bucket(const struct bucket *b, struct ty__heap_rec *r)
{
    /* Frees first (see ty__heap_freed). */
    r->frees = atomic_load_explicit(&b->frees, memory_order_acquire);
    r->free_bytes = atomic_load_explicit(&b->free_bytes, memory_order_acquire);
    r->allocs = atomic_load_explicit(&b->allocs, memory_order_acquire);
    r->alloc_bytes =
        atomic_load_explicit(&b->alloc_bytes, memory_order_acquire);
    if (r->frees > r->allocs)
        r->frees = r->allocs;
    if (r->free_bytes > r->alloc_bytes)
        r->free_bytes = r->alloc_bytes;
    r->pcs = b->pcs;
    r->depth = b->depth;
    r->rate = b->rate;
}

/* The snapshot's array comes from mmap: malloc here would re-enter the
 * sampler, which reads and writes this file's tables. */
int
ty__heap_collect(struct ty__heap_snap *s)
{
    size_t cap = atomic_load(&H.nbuckets) + 256, n = 0;
    struct ty__heap_rec *recs = os_alloc(cap * sizeof(*recs));
    struct timespec ts;

    if (recs == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < NHEADS; i++) {
        struct bucket *b =
            atomic_load_explicit(&heads[i], memory_order_acquire);

        for (; b != NULL && n < cap;
             b = atomic_load_explicit(&b->next, memory_order_acquire)) {
            read_bucket(b, &recs[n]);
            if (recs[n].allocs > 0)
                n++;
        }
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    s->recs = recs;
    s->n = n;
    s->cap = cap;
    s->rate = ty__heap_get_rate();
    s->time_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return 0;
}

void
ty__heap_snap_release(struct ty__heap_snap *s)
{
    if (s->recs != NULL)
        ty__heap_os_free(s->recs, s->cap * sizeof(*s->recs));
    s->recs = NULL;
    s->n = s->cap = 0;
}
