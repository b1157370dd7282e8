/*
 * ty_heap_unwind.c — call stacks of sampled allocations.
 *
 * Two unwinders. glibc's backtrace() follows the DWARF call frame
 * information every object carries, so it is right everywhere, but it
 * costs about 180 ns per frame. Following frame pointers costs a few ns per
 * frame, but is only right through code built with -fno-omit-frame-pointer:
 * plans are, Debian's libraries are not.
 *
 * The default (auto) walks frame pointers while every return address it
 * meets lies in code known to keep them — the SDK's own object, and the
 * main program when its functions' prologues show it was built that way —
 * and hands the whole stack to backtrace() as soon as one does not. A frame
 * in a library is found by its return address before its (unreliable) frame
 * pointer is ever followed, so the walk is not silently wrong unless code
 * judged to keep frame pointers does not (a library without them linked
 * statically into the program: TESTYARD_HEAP_UNWIND=backtrace). The one
 * library frame every stack ends in (libc's call of main, or of a thread's
 * start routine) would send every walk to backtrace(); the first time a
 * walk ends there, backtrace() confirms that it is within a few frames of
 * the bottom of the stack, and the return address is remembered as a
 * "bottom" where later walks may stop.
 *
 * TESTYARD_HEAP_UNWIND=fp|backtrace|auto forces one or the other.
 */
#include "ty_heap.h"
#include "ty_symbols.h"

#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANGES 16
#define NBOTTOMS 32
/* Frames backtrace() may find below a bottom: __libc_start_main and _start
 * under main, clone3 under a thread's start routine. */
#define BOTTOM_SLACK 3
/* How far into backtrace()'s result the allocating function's return
 * address may be (the profiler's own frames come first). */
#define OWN_FRAMES 8

struct range {
    uintptr_t lo, hi;
};

static struct {
    enum ty__unwind_mode mode;
    size_t nranges;
    struct range ranges[MAX_RANGES];
    _Atomic uintptr_t bottoms[NBOTTOMS];
    _Atomic uint64_t n_fp, n_bt;
} U;

enum walk_end {
    WALK_DONE,    /* a zero frame pointer or return address, or max depth */
    WALK_BROKEN,  /* a frame pointer outside the stack or going down */
    WALK_FOREIGN, /* the last address is in code without frame pointers */
};

static bool
keeps_fp(uintptr_t pc)
{
    for (size_t i = 0; i < U.nranges; i++)
        if (pc >= U.ranges[i].lo && pc < U.ranges[i].hi)
            return true;
    return false;
}

static bool
is_bottom(uintptr_t pc)
{
    for (int i = 0; i < NBOTTOMS; i++) {
        uintptr_t v = atomic_load_explicit(&U.bottoms[i], memory_order_relaxed);

        if (v == pc)
            return true;
        if (v == 0)
            return false;
    }
    return false;
}

static void
add_bottom(uintptr_t pc)
{
    for (int i = 0; i < NBOTTOMS; i++) {
        uintptr_t expect = 0;

        if (atomic_compare_exchange_strong(&U.bottoms[i], &expect, pc) ||
            expect == pc)
            return;
    }
}

/* ------------------------------------------------------------------------
 * Which code keeps frame pointers
 */

struct find_ctx {
    uintptr_t self; /* an address in this object's code */
    int index;
};

static void
add_ranges(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum && U.nranges < MAX_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        U.ranges[U.nranges].lo = info->dlpi_addr + ph->p_vaddr;
        U.ranges[U.nranges].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        U.nranges++;
    }
}

/* The span of an object's executable segments; true when pc is in one. */
static bool
code_span(const struct dl_phdr_info *info, uintptr_t pc, struct range *span)
{
    bool in = false;

    span->lo = UINTPTR_MAX;
    span->hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        if (lo < span->lo)
            span->lo = lo;
        if (lo + ph->p_memsz > span->hi)
            span->hi = lo + ph->p_memsz;
        in = in || (pc >= lo && pc < lo + ph->p_memsz);
    }
    return in;
}

static int
find_fp_code(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct find_ctx *c = arg;
    struct range code;
    bool is_main = c->index++ == 0;
    bool is_self = code_span(info, c->self, &code);

    (void)size;
    if (is_main) {
        /* The program: trusted when most of its functions set up a frame.
         * (Statically linked into a plan, the SDK is part of it.) */
        if (code.hi > code.lo &&
            ty__elf_keeps_frame_pointers("/proc/self/exe", info->dlpi_addr,
                                         code.lo, code.hi))
            add_ranges(info);
    } else if (is_self) {
        /* libtestyard.so or libtestyard-heap.so: built by our Makefile,
         * always with -fno-omit-frame-pointer. */
        add_ranges(info);
    }
    return 0;
}

void
ty__unwind_init(enum ty__unwind_mode mode)
{
    struct find_ctx c = {(uintptr_t)&ty__unwind_init, 0};
    void *warm[4];

    U.mode = mode;
    if (U.mode == TY_UNWIND_AUTO)
        dl_iterate_phdr(find_fp_code, &c);
    /* The first backtrace() loads libgcc_s and allocates: do it now, not
     * inside some malloc while the loader's lock may be held. */
    if (U.mode != TY_UNWIND_FP)
        backtrace(warm, 4);
}

enum ty__unwind_mode
ty__unwind_mode(void)
{
    return U.mode;
}

void
ty__unwind_stats(uint64_t *fp, uint64_t *bt)
{
    *fp = atomic_load(&U.n_fp);
    *bt = atomic_load(&U.n_bt);
}

/* ------------------------------------------------------------------------
 * The two walks
 */

static int
walk_backtrace(uintptr_t *pcs, int max, uintptr_t ra)
{
    void *buf[TY_HEAP_MAX_DEPTH + OWN_FRAMES];
    int n = backtrace(buf, max + OWN_FRAMES), i0, depth = 0;

    atomic_fetch_add_explicit(&U.n_bt, 1, memory_order_relaxed);
    for (i0 = 0; i0 < n && i0 < OWN_FRAMES; i0++)
        if ((uintptr_t)buf[i0] == ra)
            break;
    if (i0 == n || i0 == OWN_FRAMES) {
        pcs[0] = ra; /* lost: all we know is who called malloc */
        return 1;
    }
    for (int i = i0; i < n && depth < max; i++)
        pcs[depth++] = (uintptr_t)buf[i];
    return depth;
}

/* The calling thread's stack bounds, once (pthread_getattr_np allocates,
 * and reads /proc/self/maps for the main thread). */
static void
stack_bounds(struct ty__heap_thread *t)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;

    t->stack_hi = 1;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        t->stack_lo = (uintptr_t)addr;
        t->stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&attr);
}

/* Frame pointers are only followed on the thread's own stack, so that a
 * bad one cannot lead outside mapped memory: not on a signal stack or a
 * coroutine's. */
static bool
on_own_stack(struct ty__heap_thread *t)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);

    if (t->stack_hi == 0)
        stack_bounds(t);
    return t->stack_hi != 1 && sp >= t->stack_lo && sp < t->stack_hi;
}

/* Follow saved frame pointers from the allocating function's frame. With
 * check set, stop after the first return address into code that does not
 * keep frame pointers (that frame's saved pointer means nothing). */
static int
walk_fp(uintptr_t *pcs, int max, uintptr_t ra, const uintptr_t *frame,
        bool check, enum walk_end *end)
{
    uintptr_t hi = ty__heap_thr.stack_hi, lo = (uintptr_t)&hi;
    const uintptr_t *cur = frame;
    int n = 0;

    pcs[n++] = ra;
    *end = WALK_DONE;
    while (n < max && cur != NULL) {
        uintptr_t at = (uintptr_t)cur;

        if (at <= lo || at > hi - 2 * sizeof(uintptr_t) || (at & 7) != 0) {
            *end = WALK_BROKEN;
            break;
        }
        if (cur[1] == 0)
            break;
        pcs[n++] = cur[1];
        if (check && !keeps_fp(cur[1])) {
            *end = WALK_FOREIGN;
            break;
        }
        lo = at;
        cur = (const uintptr_t *)cur[0];
    }
    return n;
}

/* A frame-pointer walk stopped in foreign code. If that is where stacks
 * start, remember it and keep the walk; otherwise use backtrace(). */
static int
settle_foreign(uintptr_t *pcs, int n, int max, uintptr_t ra)
{
    uintptr_t alt[TY_HEAP_MAX_DEPTH];
    int m;

    if (is_bottom(pcs[n - 1])) {
        atomic_fetch_add_explicit(&U.n_fp, 1, memory_order_relaxed);
        return n;
    }
    m = walk_backtrace(alt, max, ra);
    if (m >= n && m - n <= BOTTOM_SLACK &&
        memcmp(alt, pcs, (size_t)n * sizeof(*pcs)) == 0) {
        add_bottom(pcs[n - 1]);
        atomic_fetch_add_explicit(&U.n_fp, 1, memory_order_relaxed);
        return n;
    }
    memcpy(pcs, alt, (size_t)m * sizeof(*pcs));
    return m;
}

int
ty__unwind(uintptr_t *pcs, int max, void *ra, void *frame)
{
    struct ty__heap_thread *t = &ty__heap_thr;
    bool check = U.mode == TY_UNWIND_AUTO;
    enum walk_end end;
    int n;

    if (U.mode == TY_UNWIND_BACKTRACE || frame == NULL ||
        (check && !keeps_fp((uintptr_t)ra)))
        return walk_backtrace(pcs, max, (uintptr_t)ra);
    if (!on_own_stack(t))
        return check ? walk_backtrace(pcs, max, (uintptr_t)ra)
                     : (pcs[0] = (uintptr_t)ra, 1);
    n = walk_fp(pcs, max, (uintptr_t)ra, frame, check, &end);
    if (!check || end == WALK_DONE) {
        atomic_fetch_add_explicit(&U.n_fp, 1, memory_order_relaxed);
        return n;
    }
    if (end == WALK_BROKEN)
        return walk_backtrace(pcs, max, (uintptr_t)ra);
    return settle_foreign(pcs, n, max, (uintptr_t)ra);
}
