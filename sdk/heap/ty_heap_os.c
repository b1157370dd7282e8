/*
 * ty_heap_os.c — the profiler's own memory and what of it is resident
 * (see ty_heap_os.h).
 *
 * RSS includes the profiler's tables, so a user comparing RSS with the
 * heap wants the profiler's resident cost beside it, not what it mapped:
 * a table of 64 KiB chunks or a hash table grown geometrically is mapped
 * long before its pages are touched. Each mapping is therefore kept in a
 * list (an mmap'd array that doubles, counted with the rest), and
 * ty__heap_own_memory asks mincore(2) about each, a page vector of
 * at most VEC_PAGES at a time on the stack: one system call per mapping or
 * per 16 MiB, about a thousand for a million live sampled blocks.
 */
#include "ty_heap.h"
#include "ty_heap_os.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define VEC_PAGES 4096
#define FIRST_CAP 256

struct mapping {
    uintptr_t addr;
    size_t len;
};

static struct {
    pthread_mutex_t mu; /* guards the list */
    struct mapping *v;  /* the list, itself from mmap */
    size_t n, cap;
    size_t mapped; /* bytes listed, and the list's own */
} M = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Room for one more mapping: the list doubles. false when mmap fails. */
static bool
list_room(void)
{
    size_t cap = M.cap ? M.cap * 2 : FIRST_CAP;
    struct mapping *v;

    if (M.n < M.cap)
        return true;
    v = mmap(NULL, cap * sizeof(*v), PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (v == MAP_FAILED)
        return false;
    for (size_t i = 0; i < M.n; i++)
        v[i] = M.v[i];
    if (M.v != NULL)
        munmap(M.v, M.cap * sizeof(*M.v));
    M.mapped += (cap - M.cap) * sizeof(*v);
    M.v = v;
    M.cap = cap;
    return true;
}

void *
ty__heap_os_alloc(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    bool listed;

    if (p == MAP_FAILED)
        return NULL;
    pthread_mutex_lock(&M.mu);
    listed = list_room();
    if (listed) {
        M.v[M.n++] = (struct mapping){(uintptr_t)p, n};
        M.mapped += n;
    }
    pthread_mutex_unlock(&M.mu);
    if (!listed) {
        munmap(p, n);
        return NULL;
    }
    return p;
}

void
ty__heap_os_free(void *p, size_t n)
{
    pthread_mutex_lock(&M.mu);
    /* The newest first: what is given back is a snapshot's array. */
    for (size_t i = M.n; i-- > 0;) {
        if (M.v[i].addr == (uintptr_t)p) {
            M.v[i] = M.v[--M.n];
            M.mapped -= n;
            break;
        }
    }
    pthread_mutex_unlock(&M.mu);
    munmap(p, n);
}

void
ty__heap_os_lock(void)
{
    pthread_mutex_lock(&M.mu);
}

void
ty__heap_os_unlock(void)
{
    pthread_mutex_unlock(&M.mu);
}

/* Resident pages of [addr, addr + len). */
static size_t
resident_pages(uintptr_t addr, size_t len, size_t page)
{
    unsigned char vec[VEC_PAGES];
    size_t pages = (len + page - 1) / page, n = 0;

    for (size_t at = 0; at < pages; at += VEC_PAGES) {
        size_t k = pages - at < VEC_PAGES ? pages - at : VEC_PAGES;

        if (mincore((void *)(addr + at * page), k * page, vec) < 0)
            continue;
        for (size_t i = 0; i < k; i++)
            n += vec[i] & 1;
    }
    return n;
}

void
ty__heap_own_memory(size_t *mapped, size_t *resident)
{
    long ps = sysconf(_SC_PAGESIZE);
    size_t page = ps > 0 ? (size_t)ps : 4096, pages = 0;

    pthread_mutex_lock(&M.mu);
    *mapped = M.mapped;
    for (size_t i = 0; i < M.n; i++)
        pages += resident_pages(M.v[i].addr, M.v[i].len, page);
    if (M.v != NULL)
        pages += resident_pages((uintptr_t)M.v, M.cap * sizeof(*M.v), page);
    pthread_mutex_unlock(&M.mu);
    *resident = pages * page;
}
