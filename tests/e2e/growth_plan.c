/*
 * growth_plan.c — memory that grows in known ways, for the suites that
 * check the report's verdicts on local:exec (tests/e2e/growth.sh) and
 * local:docker (tests/docker/growth.sh); its manifest is
 * growth_manifest.yaml and tests/helpers/growth.sh runs it.
 *
 * The case "rounds" runs `rounds` rounds between barriers, each ended by
 * ty_memory_round_end (memory_snapshots: simple: a profile before and
 * after the trim, and the round's reading). A group whose `grow` is 0
 * holds its `base` working set and nothing more: flat. Otherwise, per
 * round, as its `kind` says:
 *
 *   leak  `grow` bytes kept from malloc, reached through main → ty_main →
 *         grow_case → grow_rounds → grow_leak_round → grow_alloc → malloc
 *         (each noinline, so a whole stack names every one): growing
 *   mmap  `grow` bytes of anonymous mmap, touched, never unmapped:
 *         growth outside malloc
 *   frag  small blocks, all freed but every FRAG_KEEP-th (the previous
 *         round's kept ones freed too), so heap in use stays flat while
 *         malloc cannot give the pages back: its arena grows by about
 *         `grow` a round (retention)
 *
 * The case "oom" has no rounds: `grow` bytes every `every_ms` until the
 * cgroup's limit kills it (grow_alloc again, from grow_oom_fill).
 */
#include "testyard.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define CHUNK ((size_t)256 << 10) /* a leak's blocks */
#define FRAG_BLOCK 24             /* a fragment's bytes (a 32-byte chunk) */
#define FRAG_CHUNK 32
#define FRAG_KEEP 120 /* one kept in 120: no hole holds a whole page */

struct params {
    int64_t rounds, every_ms;
    uint64_t grow, base;
    const char *kind;
};

struct kept {
    struct kept *next;
};

static struct kept *leaked; /* reachable, never freed */
static void **frag_kept;    /* the last round's kept fragments */
static size_t frag_nkept;
static void *base_set;

__attribute__((noinline)) void *grow_alloc(size_t n);
__attribute__((noinline)) void grow_leak_round(uint64_t bytes);
__attribute__((noinline)) void grow_mmap_round(uint64_t bytes);
__attribute__((noinline)) void grow_frag_round(uint64_t bytes, int round);
__attribute__((noinline)) void grow_oom_fill(struct ty *ty,
                                             const struct params *p);

/* The helper every leak goes through: n bytes, touched. */
void *
grow_alloc(size_t n)
{
    void *p = malloc(n);

    if (p != NULL)
        memset(p, 0x5a, n);
    return p;
}

void
grow_leak_round(uint64_t bytes)
{
    for (uint64_t done = 0; done < bytes; done += CHUNK) {
        struct kept *k = grow_alloc(CHUNK);

        if (k == NULL)
            return;
        k->next = leaked;
        leaked = k;
    }
}

void
grow_mmap_round(uint64_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p != MAP_FAILED)
        memset(p, 0x5a, bytes);
}

/* Round r allocates r × `bytes` of fragments: the first (r-1) × bytes
 * fill the holes earlier rounds left, the rest extend the arena by about
 * `bytes`. One in FRAG_KEEP stays, the rest and the earlier round's kept
 * ones are freed: no hole spans a whole page, so malloc_trim cannot give
 * any back. */
void
grow_frag_round(uint64_t bytes, int round)
{
    size_t n = (size_t)(bytes / FRAG_CHUNK) * (size_t)round;
    void **all = malloc(n * sizeof(*all));
    void **keep = malloc((n / FRAG_KEEP + 1) * sizeof(*keep));
    size_t k = 0;

    if (all == NULL || keep == NULL) {
        free(all);
        free(keep);
        return;
    }
    for (size_t i = 0; i < n; i++)
        all[i] = malloc(FRAG_BLOCK);
    for (size_t i = 0; i < frag_nkept; i++)
        free(frag_kept[i]);
    for (size_t i = 0; i < n; i++) {
        if (i % FRAG_KEEP == 0)
            keep[k++] = all[i];
        else
            free(all[i]);
    }
    free(all);
    free(frag_kept);
    frag_kept = keep;
    frag_nkept = k;
}

static void
sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

/* Until the kernel kills it: the group's limit decides when. */
void
grow_oom_fill(struct ty *ty, const struct params *p)
{
    for (int64_t i = 1;; i++) {
        grow_leak_round(p->grow);
        if (i % 10 == 0)
            ty_message(ty, "%lld MiB leaked",
                       (long long)((uint64_t)i * p->grow >> 20));
        sleep_ms(p->every_ms);
    }
}

static int
load(struct ty *ty, struct params *p)
{
    if (ty_param_int(ty, "rounds", &p->rounds) < 0 ||
        ty_param_int(ty, "every_ms", &p->every_ms) < 0 ||
        ty_param_size(ty, "grow", &p->grow) < 0 ||
        ty_param_size(ty, "base", &p->base) < 0 ||
        ty_param_enum(ty, "kind", &p->kind) < 0)
        return ty_fail(ty, "parameters: %s", ty_errmsg(ty));
    if (p->base > 0 && (base_set = grow_alloc((size_t)p->base)) == NULL)
        return ty_fail(ty, "out of memory for the working set");
    return 0;
}

__attribute__((noinline)) static int
grow_rounds(struct ty *ty, const struct params *p)
{
    const char *kind = p->kind;
    char state[32];

    for (int n = 1; n <= p->rounds; n++) {
        snprintf(state, sizeof(state), "next-%d", n);
        if (ty_signal_and_wait(ty, state, ty_plan_instance_count(ty), 30000) <
            0)
            return ty_fail(ty, "%s: %s", state, ty_errmsg(ty));
        if (p->grow > 0 && strcmp(kind, "leak") == 0)
            grow_leak_round(p->grow);
        else if (p->grow > 0 && strcmp(kind, "mmap") == 0)
            grow_mmap_round(p->grow);
        else if (p->grow > 0 && strcmp(kind, "frag") == 0)
            grow_frag_round(p->grow, n);
        if (ty_memory_round_end(ty, n) < 0)
            return ty_fail(ty, "round %d: %s", n, ty_errmsg(ty));
    }
    return 0;
}

static int
grow_case(struct ty *ty)
{
    struct params p;

    if (load(ty, &p) < 0)
        return -1;
    if (strcmp(ty_case_name(ty), "oom") == 0) {
        grow_oom_fill(ty, &p);
        return 0;
    }
    return grow_rounds(ty, &p);
}

static const struct ty_case cases[] = {
    {"rounds", grow_case},
    {"oom", grow_case},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    int rc = ty_main(argc, argv, cases);

    /* Not a tail call: main keeps its frame, under ty_main, in stacks. */
    __asm__ volatile("" ::: "memory");
    return rc;
}
