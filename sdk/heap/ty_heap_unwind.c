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
 * backtrace() is a fallback that is never taken when it is worse than what
 * it replaces. glibc loads it from libgcc_s.so.1 at run time, which a
 * program does not name as a library it needs; where that file is missing
 * (a minimal container image), backtrace() finds no frames at all. So it
 * is probed once at start-up and, when unusable, never called again; and
 * whenever it finds fewer frames than the frame-pointer walk already has,
 * or does not find the allocating function's frame, the frame-pointer
 * walk is kept. A walk that must start in code without frame pointers (an
 * allocation inside libc) is then the frame-pointer walk from the
 * allocating frame's saved pointer: best effort, it may miss the frames
 * between the allocation and the first code that keeps frame pointers, or
 * be only the allocating frame. Such stacks are counted
 * (ty__unwind_stats), and each snapshot's sidecar says so.
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
    bool bt_usable;          /* backtrace() found frames at start-up */
    int (*bt)(void **, int); /* backtrace, unless a test says otherwise */
    size_t nranges;
    struct range ranges[MAX_RANGES];
    _Atomic uintptr_t bottoms[NBOTTOMS];
    _Atomic uint64_t n_fp, n_bt, n_bt_failed;
} U = {.bt = backtrace};

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

/* The first backtrace() loads libgcc_s and allocates: do it now, not
 * inside some malloc while the loader's lock may be held. Where it finds
 * nothing it would retry the load on every call: it is not called again. */
static void
probe_backtrace(void)
{
    void *warm[4];

    U.bt_usable = U.mode != TY_UNWIND_FP && U.bt(warm, 4) > 0;
}

void
ty__unwind_init(enum ty__unwind_mode mode)
{
    struct find_ctx c = {(uintptr_t)&ty__unwind_init, 0};

    U.mode = mode;
    if (U.mode == TY_UNWIND_AUTO)
        dl_iterate_phdr(find_fp_code, &c);
    probe_backtrace();
}

void
ty__unwind_set_backtrace(int (*bt)(void **, int))
{
    U.bt = bt != NULL ? bt : backtrace;
    for (int i = 0; i < NBOTTOMS; i++)
        atomic_store(&U.bottoms[i], 0);
    probe_backtrace();
}

enum ty__unwind_mode
ty__unwind_mode(void)
{
    return U.mode;
}

bool
ty__unwind_backtrace_usable(void)
{
    return U.bt_usable;
}

void
ty__unwind_stats(struct ty__unwind_stats *st)
{
    st->fp = atomic_load(&U.n_fp);
    st->bt = atomic_load(&U.n_bt);
    st->bt_failed = atomic_load(&U.n_bt_failed);
}

static int
counted(_Atomic uint64_t *counter, int depth)
{
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
    return depth;
}

/* ------------------------------------------------------------------------
 * The two walks
 */

/* backtrace()'s stack from the allocating function up; 0 when it cannot
 * be used or does not find that function's return address. */
static int
walk_backtrace(uintptr_t *pcs, int max, uintptr_t ra)
{
    void *buf[TY_HEAP_MAX_DEPTH + OWN_FRAMES];
    int n, i0, depth = 0;

    if (!U.bt_usable)
        return 0;
    n = U.bt(buf, max + OWN_FRAMES);
    for (i0 = 0; i0 < n && i0 < OWN_FRAMES; i0++)
        if ((uintptr_t)buf[i0] == ra)
            break;
    if (i0 == n || i0 == OWN_FRAMES)
        return 0;
    for (int i = i0; i < n && depth < max; i++)
        pcs[depth++] = (uintptr_t)buf[i];
    return depth;
}

/* alt, backtrace()'s m frames, in place of the n frames pcs holds (a
 * frame-pointer walk, or only the allocating frame when there is none to
 * take), unless it is worse: fewer frames, none among them. */
static int
choose(uintptr_t *pcs, int n, const uintptr_t *alt, int m)
{
    if (m < n)
        return counted(&U.n_bt_failed, n);
    memcpy(pcs, alt, (size_t)m * sizeof(*pcs));
    return counted(&U.n_bt, m);
}

static int
prefer_backtrace(uintptr_t *pcs, int n, int max)
{
    uintptr_t alt[TY_HEAP_MAX_DEPTH];

    return choose(pcs, n, alt, walk_backtrace(alt, max, pcs[0]));
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
settle_foreign(uintptr_t *pcs, int n, int max)
{
    uintptr_t alt[TY_HEAP_MAX_DEPTH];
    int m;

    if (is_bottom(pcs[n - 1]))
        return counted(&U.n_fp, n);
    m = walk_backtrace(alt, max, pcs[0]);
    if (m >= n && m - n <= BOTTOM_SLACK &&
        memcmp(alt, pcs, (size_t)n * sizeof(*pcs)) == 0) {
        add_bottom(pcs[n - 1]);
        return counted(&U.n_fp, n);
    }
    return choose(pcs, n, alt, m);
}

/* The allocating function does not keep frame pointers: backtrace(), or,
 * when it cannot be used, the best a frame-pointer walk from its saved
 * pointer can do. */
static int
from_foreign(uintptr_t *pcs, int max, uintptr_t ra, const uintptr_t *frame)
{
    enum walk_end end;
    int n = walk_backtrace(pcs, max, ra);

    if (n > 0)
        return counted(&U.n_bt, n);
    return counted(&U.n_bt_failed, walk_fp(pcs, max, ra, frame, true, &end));
}

int
ty__unwind(uintptr_t *pcs, int max, void *ra, void *frame)
{
    struct ty__heap_thread *t = &ty__heap_thr;
    bool check = U.mode == TY_UNWIND_AUTO;
    enum walk_end end;
    int n;

    pcs[0] = (uintptr_t)ra;
    if (U.mode == TY_UNWIND_BACKTRACE || frame == NULL)
        return prefer_backtrace(pcs, 1, max);
    if (!on_own_stack(t))
        return check ? prefer_backtrace(pcs, 1, max) : counted(&U.n_fp, 1);
    if (check && !keeps_fp((uintptr_t)ra))
        return from_foreign(pcs, max, (uintptr_t)ra, frame);
    n = walk_fp(pcs, max, (uintptr_t)ra, frame, check, &end);
    if (!check || end == WALK_DONE)
        return counted(&U.n_fp, n);
    if (end == WALK_BROKEN)
        return prefer_backtrace(pcs, n, max);
    return settle_foreign(pcs, n, max);
}
