/*
 * interpose.c — malloc and its relatives, for the heap profiler.
 *
 * Linked into plans (through libtestyard.a / .so) and into the LD_PRELOAD
 * library, never into the runner or a sanitizer build. Each function
 * forwards to the allocator the program would have had without the
 * profiler: glibc's own entry points (__libc_malloc and friends) when the
 * next malloc after this one is glibc's, else that allocator's (a program
 * linked with jemalloc or tcmalloc keeps it, and the calls this file does
 * not define, malloc_usable_size, mallctl, sdallocx, see blocks of the
 * allocator that made them). Which one is found at the first call, with
 * dlsym(RTLD_NEXT), as glibc's memusage does; what dlsym itself allocates
 * meanwhile comes from a small static arena. On the way each call counts
 * bytes down for the sampler (ty__heap_tick) and, on free, checks the
 * sampled-block filter. Only when one of those says so does it take the
 * slow path into ty_heap.c.
 *
 * The fast paths add one thread-local subtraction per allocation and one
 * byte load per free. Slow paths pass the allocating function's return
 * address and frame pointer, so the unwinder starts from the caller
 * without knowing how many profiler frames lie below.
 * errno is preserved across the profiler's own work.
 */
#include "ty_heap.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ------------------------------------------------------------------------
 * The allocator underneath
 */

enum route { R_UNKNOWN, R_GLIBC, R_NEXT, R_BOOT };

/* Another allocator's entry points (R_NEXT). pvalloc may be missing. */
static struct {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
} next;

static int route_now; /* enum route, R_UNKNOWN until the first call */
static int resolving; /* dlsym is running: its allocations are BOOT's */

/* What dlsym allocates while the allocator underneath is looked up. */
#define BOOT_SIZE (64 * 1024)
#define BOOT_ALIGN 16
static _Alignas(BOOT_ALIGN) unsigned char boot[BOOT_SIZE];
static size_t boot_used;

static bool
in_boot(const void *p)
{
    return (const unsigned char *)p >= boot &&
           (const unsigned char *)p < boot + BOOT_SIZE;
}

/* A zeroed block of the arena, its size in the BOOT_ALIGN bytes before it;
 * never freed. NULL when the arena is full. */
static void *
boot_alloc(size_t n)
{
    size_t need =
        BOOT_ALIGN + ((n + BOOT_ALIGN - 1) & ~(size_t)(BOOT_ALIGN - 1));
    size_t at = __atomic_fetch_add(&boot_used, need, __ATOMIC_RELAXED);
    unsigned char *p;

    if (n > BOOT_SIZE || at + need > BOOT_SIZE) {
        errno = ENOMEM;
        return NULL;
    }
    p = boot + at + BOOT_ALIGN;
    ((size_t *)p)[-1] = n;
    return p;
}

static size_t
boot_size(const void *p)
{
    return ((const size_t *)p)[-1];
}

#define NEXT(name) (__extension__(void *) dlsym(RTLD_NEXT, name))

static enum route
resolve(void)
{
    void *m;
    enum route r = R_GLIBC;

    if (__atomic_exchange_n(&resolving, 1, __ATOMIC_ACQ_REL))
        return R_BOOT;
    m = NEXT("malloc");
    if (m != NULL && m != (void *)__libc_malloc) {
        *(void **)&next.malloc = m;
        *(void **)&next.calloc = NEXT("calloc");
        *(void **)&next.realloc = NEXT("realloc");
        *(void **)&next.free = NEXT("free");
        *(void **)&next.memalign = NEXT("memalign");
        *(void **)&next.valloc = NEXT("valloc");
        *(void **)&next.pvalloc = NEXT("pvalloc");
        if (next.calloc && next.realloc && next.free && next.memalign &&
            next.valloc)
            r = R_NEXT;
    }
    __atomic_store_n(&route_now, r, __ATOMIC_RELEASE);
    __atomic_store_n(&resolving, 0, __ATOMIC_RELEASE);
    return r;
}

static inline __attribute__((always_inline)) enum route
route(void)
{
    enum route r = __atomic_load_n(&route_now, __ATOMIC_ACQUIRE);

    if (__builtin_expect(r == R_UNKNOWN, 0))
        r = resolving ? R_BOOT : resolve();
    return r;
}

static inline __attribute__((always_inline)) void *
raw_malloc(size_t n)
{
    switch (route()) {
    case R_GLIBC:
        return __libc_malloc(n);
    case R_NEXT:
        return next.malloc(n);
    default:
        return boot_alloc(n);
    }
}

static inline __attribute__((always_inline)) void *
raw_calloc(size_t a, size_t b)
{
    size_t n;

    switch (route()) {
    case R_GLIBC:
        return __libc_calloc(a, b);
    case R_NEXT:
        return next.calloc(a, b);
    default:
        if (__builtin_mul_overflow(a, b, &n)) {
            errno = ENOMEM;
            return NULL;
        }
        return boot_alloc(n); /* the arena is zeroed and never reused */
    }
}

static inline __attribute__((always_inline)) void
raw_free(void *p)
{
    if (__builtin_expect(in_boot(p), 0))
        return;
    if (route() == R_NEXT)
        next.free(p);
    else
        __libc_free(p);
}

static void *
boot_realloc(void *p, size_t n)
{
    void *q = raw_malloc(n);
    size_t old = boot_size(p);

    if (q != NULL)
        memcpy(q, p, old < n ? old : n);
    return q;
}

static inline __attribute__((always_inline)) void *
raw_realloc(void *p, size_t n)
{
    if (__builtin_expect(p != NULL && in_boot(p), 0))
        return boot_realloc(p, n);
    switch (route()) {
    case R_GLIBC:
        return __libc_realloc(p, n);
    case R_NEXT:
        return next.realloc(p, n);
    default:
        return p == NULL ? boot_alloc(n) : NULL;
    }
}

static inline __attribute__((always_inline)) void *
raw_memalign(size_t align, size_t n)
{
    switch (route()) {
    case R_GLIBC:
        return __libc_memalign(align, n);
    case R_NEXT:
        return next.memalign(align, n);
    default:
        errno = ENOMEM; /* dlsym asks for no aligned blocks */
        return NULL;
    }
}

static inline __attribute__((always_inline)) void *
raw_valloc(size_t n)
{
    if (route() == R_NEXT)
        return next.valloc(n);
    return __libc_valloc(n);
}

static void *
raw_pvalloc(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    if (route() != R_NEXT)
        return __libc_pvalloc(n);
    if (next.pvalloc != NULL)
        return next.pvalloc(n);
    if (n > SIZE_MAX - page) {
        errno = ENOMEM;
        return NULL;
    }
    return next.memalign(page, n == 0 ? page : (n + page - 1) & ~(page - 1));
}

static SLOW void *
alloc_slow(enum kind k, size_t a, size_t b, size_t n, void *ra, void *frame)
{
    void *p = NULL;
    int e;

    switch (k) {
    case K_MALLOC:
        p = raw_malloc(n);
        break;
    case K_CALLOC:
        p = raw_calloc(a, b);
        break;
    case K_MEMALIGN:
        p = raw_memalign(a, n);
        break;
    case K_VALLOC:
        p = raw_valloc(n);
        break;
    case K_PVALLOC:
        p = raw_pvalloc(n);
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
    void *q = raw_realloc(p, n);
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
    return raw_realloc(p, n);
}

TY_INTERPOSE void *
malloc(size_t n)
{
    if (ty__heap_tick(n))
        return alloc_slow(K_MALLOC, 0, 0, n, RA, FRAME);
    return raw_malloc(n);
}

TY_INTERPOSE void
free(void *p)
{
    if (p != NULL && ty__heap_maybe_sampled(p))
        ty__heap_forget(p);
    raw_free(p);
}

TY_INTERPOSE void *
calloc(size_t nmemb, size_t size)
{
    size_t n;

    if (__builtin_mul_overflow(nmemb, size, &n))
        return raw_calloc(nmemb, size); /* fails with ENOMEM */
    if (ty__heap_tick(n))
        return alloc_slow(K_CALLOC, nmemb, size, n, RA, FRAME);
    return raw_calloc(nmemb, size);
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
        p = raw_memalign(align, n);
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
    return raw_memalign(align, n);
}

TY_INTERPOSE void *
memalign(size_t align, size_t n)
{
    if (ty__heap_tick(n))
        return alloc_slow(K_MEMALIGN, align, 0, n, RA, FRAME);
    return raw_memalign(align, n);
}

TY_INTERPOSE void *
valloc(size_t n)
{
    if (ty__heap_tick(n))
        return alloc_slow(K_VALLOC, 0, 0, n, RA, FRAME);
    return raw_valloc(n);
}

TY_INTERPOSE void *
pvalloc(size_t n)
{
    if (ty__heap_tick(n))
        return alloc_slow(K_PVALLOC, 0, 0, n, RA, FRAME);
    return raw_pvalloc(n);
}

__attribute__((constructor)) static void
interpose_start(void)
{
    ty__heap_start();
}
