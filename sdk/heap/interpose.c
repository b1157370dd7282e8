/*
 * interpose.c — malloc and its relatives, for the heap profiler.
 *
 * Linked into plans (through libtestyard.a / .so) and into the LD_PRELOAD
 * library, never into the runner or a sanitizer build. Each function
 * forwards to glibc's own entry point (__libc_malloc and friends), so the
 * allocator stays glibc's; on the way it counts bytes down for the sampler
 * (ty__heap_tick) and, on free, checks the sampled-block filter. Only when
 * one of those says so does it take the slow path into ty_heap.c.
 *
 * The fast paths add one thread-local subtraction per allocation and one
 * byte load per free. Slow paths pass the allocating function's return
 * address and frame pointer, so the unwinder starts from the caller
 * without knowing how many profiler frames lie below.
 * errno is preserved across the profiler's own work.
 */
#include "ty_heap.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#define TY_INTERPOSE __attribute__((visibility("default")))
#define SLOW __attribute__((noinline, cold))
#define RA __builtin_return_address(0)
/* The allocating function's frame pointer (the one our frame saved). Read
 * here rather than in the slow path: the compiler may turn the call into a
 * jump that reuses this frame. */
#define FRAME (((void **)__builtin_frame_address(0))[0])

/* glibc's allocator under its internal names (exported since 2.2.5). */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

/* Declared here because <malloc.h> and <stdlib.h> disagree on which are
 * visible with which feature macros. */
void *memalign(size_t align, size_t n);
void *valloc(size_t n);
void *pvalloc(size_t n);

enum kind { K_MALLOC, K_CALLOC, K_MEMALIGN, K_VALLOC, K_PVALLOC };

static SLOW void *
alloc_slow(enum kind k, size_t a, size_t b, size_t n, void *ra, void *frame)
{
    void *p = NULL;
    int e;

    switch (k) {
    case K_MALLOC:
        p = __libc_malloc(n);
        break;
    case K_CALLOC:
        p = __libc_calloc(a, b);
        break;
    case K_MEMALIGN:
        p = __libc_memalign(a, n);
        break;
    case K_VALLOC:
        p = __libc_valloc(n);
        break;
    case K_PVALLOC:
        p = __libc_pvalloc(n);
        break;
    }
    e = errno;
    ty__heap_sample(p, n, ra, frame);
    errno = e;
    return p;
}

/* Old block sampled, or the countdown ran out (due), or both. A failed
 * realloc leaves the old block alive, so its record is put back. */
static SLOW void *
realloc_slow(void *p, size_t n, bool due, void *ra, void *frame)
{
    struct ty__heap_taken old;
    bool had = p != NULL && ty__heap_take(p, &old);
    void *q = __libc_realloc(p, n);
    int e = errno;

    if (q == NULL && n != 0) {
        if (had)
            ty__heap_put_back(&old);
    } else if (had) {
        ty__heap_freed(&old);
    }
    if (due)
        ty__heap_sample(q, n, ra, frame);
    errno = e;
    return q;
}

static inline __attribute__((always_inline)) void *
realloc_common(void *p, size_t n, void *ra, void *frame)
{
    bool due = ty__heap_tick(n);

    if (due || (p != NULL && ty__heap_maybe_sampled(p)))
        return realloc_slow(p, n, due, ra, frame);
    return __libc_realloc(p, n);
}

TY_INTERPOSE void *
malloc(size_t n)
{
    if (ty__heap_tick(n))
        return alloc_slow(K_MALLOC, 0, 0, n, RA, FRAME);
    return __libc_malloc(n);
}

TY_INTERPOSE void
free(void *p)
{
    if (p != NULL && ty__heap_maybe_sampled(p))
        ty__heap_forget(p);
    __libc_free(p);
}

TY_INTERPOSE void *
calloc(size_t nmemb, size_t size)
{
    size_t n;

    if (__builtin_mul_overflow(nmemb, size, &n))
        return __libc_calloc(nmemb, size); /* fails with ENOMEM */
    if (ty__heap_tick(n))
        return alloc_slow(K_CALLOC, nmemb, size, n, RA, FRAME);
    return __libc_calloc(nmemb, size);
}

TY_INTERPOSE void *
realloc(void *p, size_t n)
{
    return realloc_common(p, n, RA, FRAME);
}

TY_INTERPOSE void *
reallocarray(void *p, size_t nmemb, size_t size)
{
    size_t n;

    if (__builtin_mul_overflow(nmemb, size, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc_common(p, n, RA, FRAME);
}

TY_INTERPOSE int
posix_memalign(void **out, size_t align, size_t n)
{
    int e = errno;
    void *p;

    if (align == 0 || (align & (align - 1)) != 0 || align % sizeof(void *) != 0)
        return EINVAL;
    if (ty__heap_tick(n))
        p = alloc_slow(K_MEMALIGN, align, 0, n, RA, FRAME);
    else
        p = __libc_memalign(align, n);
    errno = e;
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

TY_INTERPOSE void *
aligned_alloc(size_t align, size_t n)
{
    /* glibc 2.36's aligned_alloc is memalign, without extra checks. */
    if (ty__heap_tick(n))
        return alloc_slow(K_MEMALIGN, align, 0, n, RA, FRAME);
    return __libc_memalign(align, n);
}

TY_INTERPOSE void *
memalign(size_t align, size_t n)
{
    if (ty__heap_tick(n))
        return alloc_slow(K_MEMALIGN, align, 0, n, RA, FRAME);
    return __libc_memalign(align, n);
}

TY_INTERPOSE void *
valloc(size_t n)
{
    if (ty__heap_tick(n))
        return alloc_slow(K_VALLOC, 0, 0, n, RA, FRAME);
    return __libc_valloc(n);
}

TY_INTERPOSE void *
pvalloc(size_t n)
{
    if (ty__heap_tick(n))
        return alloc_slow(K_PVALLOC, 0, 0, n, RA, FRAME);
    return __libc_pvalloc(n);
}

__attribute__((constructor)) static void
interpose_start(void)
{
    ty__heap_start();
}
