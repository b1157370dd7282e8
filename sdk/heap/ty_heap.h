/*
 * ty_heap.h — the sampling heap profiler: per-thread countdowns, the table
 * of sampled blocks, the table of call stacks, and snapshots of both.
 *
 * The malloc interposer (sdk/heap/interpose.c) calls in here; nothing else in
 * the SDK needs to. Its fast path is two inline functions: ty__heap_tick()
 * on every allocation (one thread-local subtraction) and
 * ty__heap_maybe_sampled() on every free (one byte load from a filter
 * indexed by the block's page). Everything else happens on the slow path,
 * about once per ty_heap_rate() allocated bytes per thread.
 *
 * Sampling is a Poisson process over allocated bytes: each thread counts
 * down a distance drawn from an exponential distribution whose mean is the
 * rate; the allocation that crosses zero is sampled, so an allocation of n
 * bytes is sampled with probability 1 - exp(-n / rate). A sampled block is
 * remembered by address in a side table (blocks carry no header) together
 * with its call stack's bucket; buckets keep cumulative allocation and free
 * counts, as Go's memory profile records do.
 *
 * Ownership: buckets live until the process exits; a snapshot's records
 * borrow their stacks from them. Everything the profiler keeps for itself
 * comes from mmap, not from malloc, so it never shows up in the profile.
 */
#ifndef TY_HEAP_H
#define TY_HEAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TY_HEAP_DEFAULT_RATE (512u * 1024u)
#define TY_HEAP_MAX_DEPTH 64
#define TY_HEAP_FILTER_BITS 20
#define TY_HEAP_GRANULE_SHIFT 12

#define TY__HIDDEN __attribute__((visibility("hidden")))
#define TY__TLS_IE __attribute__((tls_model("initial-exec")))

/* Per-thread state. Zero-initialised, so a new thread's first allocation
 * takes the slow path, which seeds it. */
struct ty__heap_thread {
    int64_t left;       /* bytes until the next sample; < 0: slow path */
    uint64_t rng;       /* xorshift64* state; 0 until seeded */
    uintptr_t stack_lo; /* this thread's stack, for frame pointer walks */
    uintptr_t stack_hi; /* (0: not known yet, 1: unknown: do not walk) */
    int busy;           /* inside the profiler: do not sample */
};

extern __thread struct ty__heap_thread ty__heap_thr TY__TLS_IE TY__HIDDEN;

/* One counter per 4 KiB page of address space (aliased every 4 GiB): how
 * many sampled blocks start in pages that map here, 255 meaning "many,
 * always look". A zero means "not sampled" without taking any lock. Pages
 * rather than finer granules: for a 128 MiB heap the counters in use fit
 * in 32 KiB of cache; 1 KiB granules halved the needless lookups but cost
 * more in cache misses on every free (bench/heap-overhead.sh). */
extern _Atomic unsigned char
    ty__heap_filter[1u << TY_HEAP_FILTER_BITS] TY__HIDDEN;

static inline size_t
ty__heap_filter_index(uintptr_t a)
{
    return (size_t)(((a >> TY_HEAP_GRANULE_SHIFT) ^
                     (a >> (TY_HEAP_GRANULE_SHIFT + TY_HEAP_FILTER_BITS))) &
                    ((1u << TY_HEAP_FILTER_BITS) - 1));
}

/* Count n allocated bytes; true when the countdown ran out and the
 * allocation must go through ty__heap_sample(). Unsigned arithmetic: a
 * huge failed request must not be undefined behaviour. */
static inline bool
ty__heap_tick(size_t n)
{
    uint64_t left = (uint64_t)ty__heap_thr.left - (uint64_t)n;

    ty__heap_thr.left = (int64_t)left;
    return __builtin_expect((int64_t)left < 0, 0);
}

/* False when p was certainly not sampled. */
static inline bool
ty__heap_maybe_sampled(const void *p)
{
    size_t i = ty__heap_filter_index((uintptr_t)p);

    return atomic_load_explicit(&ty__heap_filter[i], memory_order_relaxed) != 0;
}

/* Keep this thread's allocations out of the profile while the profiler
 * works for itself (snapshots); returns what ty__heap_quiet_end restores. */
static inline int
ty__heap_quiet_begin(void)
{
    int was = ty__heap_thr.busy;

    ty__heap_thr.busy = 1;
    return was;
}

static inline void
ty__heap_quiet_end(int was)
{
    ty__heap_thr.busy = was;
}

/* ------------------------------------------------------------------------
 * Hooks for the interposer (and for tests, which call them with made-up
 * addresses to exercise the tables without interposing malloc).
 */

/* Start the profiler: rate from TESTYARD_HEAP_RATE, unwinder set-up, fork
 * handlers. Idempotent; called from the interposer's constructor. Until it
 * has run, nothing is sampled (the loader's bootstrap allocations). */
void ty__heap_start(void);

/* The countdown ran out on an allocation of n bytes that returned p (NULL
 * when it failed). Decides whether to sample it, draws the next countdown,
 * and records p with the stack above it. ra is the return address into
 * the allocating function and frame that function's frame pointer (the
 * value the interposer's frame saved), NULL when not known. */
void ty__heap_sample(void *p, size_t n, void *ra, void *frame);

/* A sampled block taken out of the table (see ty__heap_take). */
struct ty__heap_taken {
    uintptr_t addr;
    size_t size;
    void *bucket;
};

/* Remove p's record if p was sampled: true and *out filled. The caller then
 * either frees the block and calls ty__heap_freed(), or, when a realloc
 * failed and the block still exists, puts the record back. */
bool ty__heap_take(const void *p, struct ty__heap_taken *out);
void ty__heap_freed(const struct ty__heap_taken *t);
void ty__heap_put_back(const struct ty__heap_taken *t);

/* The estimate of heap in use (ty_heap_peak.c): a sampled block of size
 * bytes at rate was allocated, or freed; and the fork child's reset. */
void ty__heap_peak_count(size_t size, uint64_t rate, bool allocated);
void ty__heap_peak_forked(void);

/* free(p) for a p that may be sampled: take and account. */
void ty__heap_forget(const void *p);

/* The rate (mean bytes between samples; 0 = off, 1 = every allocation).
 * Setting it redraws the calling thread's countdown at once; other threads
 * pick it up when their current countdown runs out. */
void ty__heap_set_rate(uint64_t rate);
uint64_t ty__heap_get_rate(void);

/* ------------------------------------------------------------------------
 * Snapshots
 */

/* One call stack's counters at the moment of the snapshot. pcs are return
 * addresses, innermost first; rate is the rate its samples were taken at. */
struct ty__heap_rec {
    const uintptr_t *pcs;
    uint32_t depth;
    uint64_t rate;
    uint64_t allocs, alloc_bytes; /* sampled, cumulative */
    uint64_t frees, free_bytes;   /* sampled, cumulative */
};

struct ty__heap_snap {
    struct ty__heap_rec *recs; /* owned by the snapshot */
    size_t n, cap;
    uint64_t rate;   /* the rate now: the profile's period */
    int64_t time_ns; /* CLOCK_REALTIME */
};

/* Read every bucket without stopping allocating threads. Returns 0 or
 * -ENOMEM. Release with ty__heap_snap_release. */
int ty__heap_collect(struct ty__heap_snap *s);
void ty__heap_snap_release(struct ty__heap_snap *s);

/* The two files of a snapshot (ty_heapctl.c): the gzipped profile.proto
 * and the JSON sidecar. Owned by the struct; release them. */
struct ty__heap_files {
    void *pb;
    size_t pb_len;
    char *json;
    size_t json_len;
};

/* What took a snapshot: the sidecar's "trigger" (docs/heap-profiling.md). */
enum ty__heap_trigger {
    TY_HEAP_TRIGGER_CALL,     /* "call": ty_heap_snapshot */
    TY_HEAP_TRIGGER_ROUND,    /* "round": ty_memory_round_end */
    TY_HEAP_TRIGGER_EVENT,    /* "event": ty_memory_event */
    TY_HEAP_TRIGGER_PERIODIC, /* "periodic": TESTYARD_HEAP_PROFILE_INTERVAL */
    TY_HEAP_TRIGGER_PEAK,     /* "peak": a new high-water mark */
    TY_HEAP_TRIGGER_PREOOM,   /* "pre-oom": the coordinator asked */
    TY_HEAP_TRIGGER_SIGNAL,   /* "signal": the LD_PRELOAD signal */
    TY_HEAP_TRIGGER_EXIT,     /* "exit": the LD_PRELOAD exit snapshot */
    TY_HEAP_TRIGGER_N,
};

/* The trigger's name as the sidecar says it. */
const char *ty__heap_trigger_name(enum ty__heap_trigger t);

/* Build both files for label; round < 0 leaves "round" out of the sidecar,
 * trigger says why it was taken. The profiler's own allocations meanwhile
 * are not sampled. 0 or -errno. */
int ty__heap_files_build(const char *label, int round,
                         enum ty__heap_trigger trigger,
                         struct ty__heap_files *f);
void ty__heap_files_release(struct ty__heap_files *f);
/* Build the snapshot's files and send them (ty__output_file): 0, or a
 * negative errno with the message on the handle (ty_heapctl.c). */
struct ty;
int ty__heap_send(struct ty *ty, const char *label, int round,
                  enum ty__heap_trigger trigger);
/* Letters, digits, '.', '_' and '-', 1 to 100 of them, no leading '.'. */
bool ty__heap_label_ok(const char *label);

/* ------------------------------------------------------------------------
 * Peak snapshots
 *
 * The sampler keeps a running estimate of the heap in use — each sampled
 * block counts as its size scaled up by the probability it had of being
 * sampled, as the profile's inuse_space counts it — and its high-water
 * mark. When the estimate passes the mark of the last peak snapshot by the
 * step, the sampling thread writes one byte, 'p', to the armed descriptor
 * (non-blocking; nothing else on the malloc path) and no other until the
 * snapshot thread has taken that snapshot. The rate limit is the snapshot
 * thread's: ty__heap_peak_wait says when it may take one.
 */

#define TY_HEAP_PEAK_STEP ((uint64_t)32 << 20)       /* 32Mi */
#define TY_HEAP_PEAK_INTERVAL_NS INT64_C(1000000000) /* 1s */

/* Wake fd (a pipe's write end that stays open as long as the process, or
 * the forked child, lives) when the estimate passes the mark by step (0:
 * peak snapshots off); at most one peak snapshot per interval_ns. A forked
 * child starts disarmed. */
void ty__heap_peak_arm(int fd, uint64_t step, int64_t interval_ns);
/* Disarm when fd is the armed descriptor. */
void ty__heap_peak_disarm(int fd);
/* For the snapshot thread, at now_ns (CLOCK_MONOTONIC): 0 when a peak
 * snapshot is due now, the nanoseconds until it may be taken (the
 * interval since the last), or -1 when none is due. */
int64_t ty__heap_peak_wait(int64_t now_ns);
/* A peak snapshot is taken now: the estimate becomes the mark. */
void ty__heap_peak_taken(int64_t now_ns);
/* The estimate of heap in use and its high-water mark, in bytes. */
int64_t ty__heap_inuse_estimate(void);
int64_t ty__heap_inuse_high(void);
/* For tests: forget the estimate, the marks and the arming. */
void ty__heap_peak_reset(void);

/* Sampled blocks currently in the table (for tests and diagnostics). */
size_t ty__heap_live_count(void);
/* The profiler's own memory at one instant: the bytes its tables and
 * snapshot arrays have mapped, and the part of them resident now (mincore;
 * resident <= mapped), the filter array, a fixed 1 MiB of which only used
 * pages count, aside. Costs a system call per mapping. */
void ty__heap_own_memory(size_t *mapped, size_t *resident);

/* ------------------------------------------------------------------------
 * Unwinding (ty_heap_unwind.c)
 */

enum ty__unwind_mode {
    TY_UNWIND_AUTO,      /* frame pointers where code keeps them, else
                            backtrace() */
    TY_UNWIND_FP,        /* frame pointers only */
    TY_UNWIND_BACKTRACE, /* glibc backtrace() (DWARF CFI) only */
};

/* Unwind as mode (TESTYARD_HEAP_UNWIND) says, find which loaded code keeps
 * frame pointers, and make backtrace() load its unwinder now rather than
 * inside malloc (where it finds no frames, as without libgcc_s.so.1, it is
 * not used). */
void ty__unwind_init(enum ty__unwind_mode mode);
enum ty__unwind_mode ty__unwind_mode(void);
/* backtrace() found frames when it was probed (false with
 * TESTYARD_HEAP_UNWIND=fp, where it is never called). */
bool ty__unwind_backtrace_usable(void);
/* Fill pcs with the stack from the allocating function up: pcs[0] is ra,
 * frame that function's frame pointer (see ty__heap_sample). Returns the
 * depth (at least 1). Must run with ty__heap_thr.busy set. */
int ty__unwind(uintptr_t *pcs, int max, void *ra, void *frame);

/* How the stacks so far were taken; each is counted once. */
struct ty__unwind_stats {
    uint64_t fp;        /* by frame pointers alone */
    uint64_t bt;        /* by backtrace() */
    uint64_t bt_failed; /* backtrace() was needed but unusable (none, fewer
                           frames, or not the allocating one): the
                           frame-pointer walk, or the allocating frame
                           alone, was kept */
};
void ty__unwind_stats(struct ty__unwind_stats *st);

/* For tests: use bt in place of glibc's backtrace() (NULL: glibc's again),
 * probed as at start-up, with the learned stack bottoms forgotten. */
void ty__unwind_set_backtrace(int (*bt)(void **, int));

/* ------------------------------------------------------------------------
 * Settings (ty_heap_env.c): the TESTYARD_HEAP_* variables, read and checked
 * in one place for the linked SDK and the LD_PRELOAD library alike.
 */

enum ty__heap_var {
    TY_HEAP_VAR_RATE,          /* TESTYARD_HEAP_RATE */
    TY_HEAP_VAR_INTERVAL,      /* TESTYARD_HEAP_PROFILE_INTERVAL */
    TY_HEAP_VAR_UNWIND,        /* TESTYARD_HEAP_UNWIND */
    TY_HEAP_VAR_SIGNAL,        /* TESTYARD_HEAP_SIGNAL (LD_PRELOAD only) */
    TY_HEAP_VAR_PEAK_STEP,     /* TESTYARD_HEAP_PEAK_STEP */
    TY_HEAP_VAR_PEAK_INTERVAL, /* TESTYARD_HEAP_PEAK_INTERVAL */
    TY_HEAP_VAR_DEBUG_DIRS,    /* TESTYARD_HEAP_DEBUG_DIRS */
    TY_HEAP_VAR_N,
};

#define TY_HEAP_BAD_MAX 256

struct ty__heap_env {
    bool rate_set;       /* TESTYARD_HEAP_RATE given and valid */
    uint64_t rate;       /* TY_HEAP_DEFAULT_RATE when not rate_set */
    int64_t interval_ns; /* 0: no periodic snapshots */
    uint64_t peak_step;  /* 0: no peak snapshots */
    int64_t peak_interval_ns;
    enum ty__unwind_mode unwind;
    int sig;         /* the snapshot signal; 0 for none */
    bool at_exit;    /* TESTYARD_HEAP_AT_EXIT is not "0" */
    const char *dir; /* where LD_PRELOAD snapshots go; borrowed */
    /* colon-separated folders of separate debug files; NULL: the default
     * (/usr/lib/debug); borrowed from the environment */
    const char *debug_dirs;
    /* For each variable whose value was refused, the line that says so
     * and what is used instead ("" when it was fine), without a prefix:
     * the SDK sends it as a message, the LD_PRELOAD library to stderr. */
    char bad[TY_HEAP_VAR_N][TY_HEAP_BAD_MAX];
};

/* Read the variables as they are now into *e; allocates nothing, so the
 * profiler's start inside the first malloc may call it. ty__heap_start
 * takes the rate, the unwinder and the debug folders from it,
 * ty__heapctl_init (each handle)
 * the interval, the LD_PRELOAD library's constructor the rest. */
void ty__heap_env_read(struct ty__heap_env *e);

#endif
