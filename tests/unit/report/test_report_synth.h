/*
 * test_report_synth.h — synthetic run folders for the report's tests
 * (test_report.c, test_report_input.c; each includes this once): the
 * files a run of memory-stress leaves — result.json, barriers.jsonl, every
 * instance's memory.csv, heap snapshot sidecars, and pprof profiles made
 * by the SDK's encoder whose stacks are functions defined here — with
 * figures chosen by the test (a leak per round, a flat working set, RSS
 * retained over a flat heap, an OOM kill), and helpers to generate a
 * report and read summary.json back.
 */
#ifndef TY_TEST_REPORT_SYNTH_H
#define TY_TEST_REPORT_SYNTH_H

#include "base/strbuf.h"
#include "report/report_int.h"
#include "th.h"
#include "ty_pprof.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB ((int64_t)1 << 20)
#define START_NS 1795975200000000000LL /* 2026-11-29T18:00:00Z */
#define SYNTH_UNUSED __attribute__((unused))

/* Stand-ins for a plan's functions: their addresses make stacks. */
__attribute__((noinline)) void test_leak_round(void);
__attribute__((noinline)) void
test_leak_round(void)
{
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void test_working_set(void);
__attribute__((noinline)) void
test_working_set(void)
{
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void test_round_scratch(void);
__attribute__((noinline)) void
test_round_scratch(void)
{
    __asm__ volatile("" ::: "memory");
}

/* Stand-ins for the SDK's own code: a sync buffer behind a barrier. */
__attribute__((noinline)) void ty__test_sync_buffer(void);
__attribute__((noinline)) void
ty__test_sync_buffer(void)
{
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void ty_test_barrier(void);
__attribute__((noinline)) void
ty_test_barrier(void)
{
    __asm__ volatile("" ::: "memory");
}

#define PC(f) ((uintptr_t)(f) + 1)

/* ---- synthetic run folders -------------------------------------------------
 */

struct synth_group {
    const char *id;
    int ninst;
    int64_t limit;
    double heap0, heap_step; /* heap in use after round r: heap0 + r*step */
    double rss0, rss_step;
    double noise;     /* amplitude, bytes */
    int oom_round;    /* instance 0 is OOM-killed in this round; 0: none */
    double free_step; /* free memory inside malloc's heaps grows so */
    double sync;      /* bytes of the SDK's sync buffers, in one sample */
};

struct synth {
    int rounds;
    const struct synth_group *groups;
    size_t ngroups;
};

static void
put(const char *dir, const char *rel, const void *data, size_t len)
{
    cleanup_free char *path = path_join(dir, rel);
    cleanup_free char *parent = path_dirname(path);
    struct err err = {0};

    CHECK_MSG(mkdir_p(parent, &err) == 0, "%s", err.msg);
    CHECK_MSG(file_write_atomic(path, data, len, &err) == 0, "%s", err.msg);
}

static void
put_text(const char *dir, const char *rel, const char *text)
{
    put(dir, rel, text, strlen(text));
}

static double
wobble(int round, int inst, double amp)
{
    static const double e[] = {0.6, -0.9, 0.3, 1.0, -0.4, -0.7, 0.8, -0.2};

    return amp * e[(round * 3 + inst) % 8];
}

static int64_t
heap_at(const struct synth_group *g, int inst, int round)
{
    return (int64_t)(g->heap0 + g->heap_step * round +
                     wobble(round, inst, g->noise));
}

static int64_t
rss_at(const struct synth_group *g, int inst, int round)
{
    return (int64_t)(g->rss0 + g->rss_step * round +
                     wobble(round + 1, inst, g->noise));
}

/* The last round instance inst of g completes. */
static int
last_round(const struct synth *s, const struct synth_group *g, int inst)
{
    return inst == 0 && g->oom_round > 0 ? g->oom_round - 1 : s->rounds;
}

static void
profile(const char *dir, const char *rel, int64_t work, int64_t leak,
        int64_t scratch, int64_t sync)
{
    static uintptr_t w[] = {PC(test_working_set)};
    static uintptr_t l[] = {PC(xmalloc), PC(test_leak_round)};
    static uintptr_t sc[] = {PC(test_round_scratch)};
    static uintptr_t sy[] = {PC(ty__test_sync_buffer), PC(ty_test_barrier),
                             PC(test_working_set)};
    const struct ty__heap_rec all[4] = {
        {w, 1, 1, 100, (uint64_t)work, 0, 0},
        {l, 2, 1, 100, (uint64_t)leak, 0, 0},
        {sc, 1, 1, 100, (uint64_t)scratch, 0, 0},
        {sy, 3, 1, 1, (uint64_t)sync, 0, 0},
    };
    struct ty__heap_rec recs[4];
    struct ty__heap_snap snap = {recs, 0, 4, 1, START_NS};
    struct ty__heap_totals tot;
    void *gz = NULL;
    size_t len = 0;

    for (size_t i = 0; i < 4; i++)
        if ((int64_t)all[i].alloc_bytes > 0)
            recs[snap.n++] = all[i];
    CHECK_EQ_INT(ty__heap_profile(&snap, &gz, &len, &tot), 0);
    put(dir, rel, gz, len);
    free(gz);
}

/* A sidecar's figures: malloc's heaps (arena) hold heap in use and
 * `free` bytes more; RssAnon is RSS less 1 MiB of file pages. */
static void
snapshot(const struct synth_group *g, const char *idir, const char *label,
         int round, int64_t heap, int64_t rss, int64_t work, int64_t scratch,
         int64_t free_bytes)
{
    char rel[128], ts[40];
    cleanup_free char *json = NULL;

    time_rfc3339(START_NS + (int64_t)round * 1000000000 + 900000000, ts,
                 sizeof(ts));
    json = xasprintf(
        "{\"time\": \"%s\", \"label\": \"%s\", \"round\": %d, \"pid\": 7, "
        "\"rate\": 1, \"rss_bytes\": %lld, \"vm_hwm_bytes\": %lld, "
        "\"rss_anon_bytes\": %lld, \"mallinfo\": {\"arena\": %lld, "
        "\"hblkhd\": 0, \"uordblks\": %lld, \"fordblks\": %lld, "
        "\"keepcost\": 0}, \"profile\": {\"inuse_bytes\": %lld, "
        "\"inuse_objects\": 300, \"alloc_bytes\": %lld, \"alloc_objects\": "
        "300, \"samples\": 3}, \"cgroup\": {\"version\": 2, "
        "\"current_bytes\": %lld, \"peak_bytes\": %lld, \"limit_bytes\": "
        "null}}\n",
        ts, label, round, (long long)rss, (long long)rss,
        (long long)(rss - MiB), (long long)(heap + free_bytes), (long long)heap,
        (long long)free_bytes, (long long)heap, (long long)heap,
        (long long)(rss + 5 * MiB), (long long)(rss + 5 * MiB));
    snprintf(rel, sizeof(rel), "heap-%s.json", label);
    put_text(idir, rel, json);
    snprintf(rel, sizeof(rel), "heap-%s.pb.gz", label);
    profile(idir, rel, work, heap - work - scratch, scratch, (int64_t)g->sync);
}

static void
snapshots(const struct synth *s, const struct synth_group *g, int inst,
          const char *idir)
{
    for (int r = 1; r <= last_round(s, g, inst); r++) {
        int64_t post = heap_at(g, inst, r), rss = rss_at(g, inst, r);
        int64_t work = (int64_t)(g->heap0 + wobble(r, inst, g->noise));
        int64_t free_bytes = MiB + (int64_t)(g->free_step * r);
        char label[64];

        snprintf(label, sizeof(label), "round-%d-pre-trim", r);
        snapshot(g, idir, label, r, post + 2 * MiB, rss + 3 * MiB, work,
                 2 * MiB, free_bytes + MiB);
        snprintf(label, sizeof(label), "round-%d-post-trim", r);
        snapshot(g, idir, label, r, post, rss, work, 0, free_bytes);
    }
}

/* memory.csv: a sample every 100 ms; the OOM-killed instance climbs to its
 * limit during its last round and its series stops at the kill. */
struct series_end {
    int64_t end_ms, peak, peak_ms, final, before;
};

static int64_t
usage_at(const struct synth *s, const struct synth_group *g, int inst,
         int64_t t)
{
    int k = (int)(t / 1000);

    if (k > s->rounds)
        k = s->rounds;
    if (inst == 0 && g->oom_round > 0 && k >= g->oom_round) {
        int64_t base = rss_at(g, inst, g->oom_round - 1) + 5 * MiB;

        return base + (g->limit - base) * (t - g->oom_round * 1000) / 400;
    }
    return rss_at(g, inst, k) + 5 * MiB;
}

static struct series_end
memory_csv(const struct synth *s, const struct synth_group *g, int inst,
           const char *idir)
{
    bool oom = inst == 0 && g->oom_round > 0;
    struct series_end e = {oom ? g->oom_round * 1000 + 400
                               : (s->rounds + 1) * 1000 + 200,
                           0, 0, 0, 0};
    struct strbuf sb;

    strbuf_init(&sb);
    strbuf_adds(&sb, "time,t_ms,usage_bytes,anon_bytes,file_bytes,"
                     "peak_bytes,limit_bytes,oom_kills\n");
    for (int64_t t = 0; t <= e.end_ms; t += 100) {
        char ts[40];
        bool killed = oom && t == e.end_ms;
        int64_t u = killed ? MiB : usage_at(s, g, inst, t);

        if (u > e.peak) {
            e.peak = u;
            e.peak_ms = t;
        }
        e.before = killed ? e.final : e.before;
        e.final = u;
        time_rfc3339(START_NS + t * 1000000, ts, sizeof(ts));
        strbuf_addf(&sb, "%s,%lld,%lld,%lld,%lld,%lld,%lld,%d\n", ts,
                    (long long)t, (long long)u,
                    (long long)(u > 5 * MiB ? u - 5 * MiB : 0),
                    (long long)(4 * MiB), (long long)e.peak,
                    (long long)g->limit, killed ? 1 : 0);
    }
    put_text(idir, "memory.csv", sb.buf);
    strbuf_release(&sb);
    return e;
}

static cJSON *
inst_result(const struct synth_group *g, int inst, struct series_end e)
{
    bool oom = inst == 0 && g->oom_round > 0;
    cJSON *o = cJSON_CreateObject(), *m;

    cJSON_AddStringToObject(o, "group", g->id);
    cJSON_AddNumberToObject(o, "index", inst);
    cJSON_AddStringToObject(o, "outcome", oom ? "oom" : "success");
    cJSON_AddStringToObject(o, "started", "2026-11-29T18:00:00.010Z");
    cJSON_AddStringToObject(o, "how",
                            oom ? "killed by SIGKILL (oom)"
                                : "exited with status 0 (success)");
    cJSON_AddNullToObject(o, "error");
    cJSON_AddBoolToObject(o, "oom_killed", oom);
    m = cJSON_AddObjectToObject(o, "memory");
    cJSON_AddNumberToObject(m, "peak_bytes", (double)(oom ? g->limit : e.peak));
    cJSON_AddNumberToObject(m, "peak_at_ms", (double)e.peak_ms);
    cJSON_AddNumberToObject(m, "final_bytes", (double)e.final);
    cJSON_AddNumberToObject(m, "limit_bytes", (double)g->limit);
    cJSON_AddBoolToObject(m, "oom_kill", oom);
    if (oom) {
        cJSON_AddNumberToObject(m, "oom_at_ms", (double)e.end_ms);
        cJSON_AddNumberToObject(m, "usage_before_oom_bytes", (double)e.before);
    } else {
        cJSON_AddNullToObject(m, "oom_at_ms");
        cJSON_AddNullToObject(m, "usage_before_oom_bytes");
    }
    return o;
}

static void
barrier(struct strbuf *sb, const char *state, int64_t t_ms, const char *result,
        const char *error)
{
    char ts[40];

    time_rfc3339(START_NS + t_ms * 1000000, ts, sizeof(ts));
    strbuf_addf(sb,
                "{\"time\":\"%s\",\"t_ns\":%lld,\"state\":\"%s\","
                "\"target\":3,\"count\":3,\"result\":\"%s\"%s%s%s}\n",
                ts, START_NS + t_ms * 1000000, state, result,
                error ? ",\"error\":\"" : "", error ? error : "",
                error ? "\"" : "");
}

static void
barriers(const char *dir, const struct synth *s)
{
    int oom = 0;
    struct strbuf sb;
    char st[32];

    for (size_t g = 0; g < s->ngroups; g++)
        if (s->groups[g].oom_round > 0)
            oom = s->groups[g].oom_round;
    strbuf_init(&sb);
    barrier(&sb, "ready", 500, "released", NULL);
    for (int r = 1; r <= s->rounds && (oom == 0 || r <= oom); r++) {
        snprintf(st, sizeof(st), "next-%d", r);
        barrier(&sb, st, r * 1000, "released", NULL);
        snprintf(st, sizeof(st), "finish-%d", r);
        if (r == oom)
            barrier(&sb, st, r * 1000 + 450, "failed",
                    "providers/0 was OOM-killed: barrier can no longer "
                    "be met");
        else
            barrier(&sb, st, r * 1000 + 800, "released", NULL);
    }
    if (oom == 0)
        barrier(&sb, "done", (s->rounds + 1) * 1000, "released", NULL);
    put_text(dir, "barriers.jsonl", sb.buf);
    strbuf_release(&sb);
}

static void
result_json(const char *dir, const struct synth *s, cJSON *insts)
{
    cJSON *o = cJSON_CreateObject(), *groups;
    bool oom = false;
    char *text;

    for (size_t g = 0; g < s->ngroups; g++)
        oom = oom || s->groups[g].oom_round > 0;
    cJSON_AddStringToObject(o, "run_id", "synthetic");
    cJSON_AddStringToObject(o, "plan", "memory-stress");
    cJSON_AddStringToObject(o, "case", "stress");
    cJSON_AddStringToObject(o, "runner", "local:exec");
    cJSON_AddStringToObject(o, "started", "2026-11-29T18:00:00.000Z");
    cJSON_AddNumberToObject(o, "duration_s", s->rounds + 1.3);
    cJSON_AddStringToObject(o, "outcome", oom ? "failure" : "success");
    groups = cJSON_AddArrayToObject(o, "groups");
    for (size_t g = 0; g < s->ngroups; g++) {
        cJSON *x = cJSON_CreateObject();

        cJSON_AddStringToObject(x, "id", s->groups[g].id);
        cJSON_AddNumberToObject(x, "instances", s->groups[g].ninst);
        cJSON_AddNumberToObject(x, "memory_limit_bytes",
                                (double)s->groups[g].limit);
        cJSON_AddItemToArray(groups, x);
    }
    cJSON_AddItemToObject(o, "instances", insts);
    text = cJSON_Print(o);
    put_text(dir, "result.json", text);
    free(text);
    cJSON_Delete(o);
}

static void
synth_write(const char *dir, const struct synth *s)
{
    cJSON *insts = cJSON_CreateArray();

    for (size_t gi = 0; gi < s->ngroups; gi++) {
        const struct synth_group *g = &s->groups[gi];

        for (int i = 0; i < g->ninst; i++) {
            cleanup_free char *gdir = path_join(dir, g->id);
            cleanup_free char *idir = xasprintf("%s/%d", gdir, i);
            struct series_end e = memory_csv(s, g, i, idir);

            snapshots(s, g, i, idir);
            cJSON_AddItemToArray(insts, inst_result(g, i, e));
        }
    }
    barriers(dir, s);
    result_json(dir, s, insts);
}

/* providers leak 16 MiB per round; requestors hold a steady working set
 * with some noise. Five rounds. */
static const struct synth_group leaky_groups[] = {
    {"providers", 1, 512 * MiB, 24.0 * MiB, 16.0 * MiB, 40.0 * MiB, 16.5 * MiB,
     0.4 * MiB, 0, 0, 0},
    {"requestors", 2, 256 * MiB, 30.0 * MiB, 0, 48.0 * MiB, 0, 0.8 * MiB, 0, 0,
     0},
};
SYNTH_UNUSED static const struct synth leaky = {5, leaky_groups, 2};

/* The same run after the fix. */
static const struct synth_group fixed_groups[] = {
    {"providers", 1, 512 * MiB, 24.0 * MiB, 0, 40.0 * MiB, 0, 0.4 * MiB, 0, 0,
     0},
    {"requestors", 2, 256 * MiB, 30.0 * MiB, 0, 48.0 * MiB, 0, 0.8 * MiB, 0, 0,
     0},
};
SYNTH_UNUSED static const struct synth fixed = {5, fixed_groups, 2};

/* The provider leaks into a 96 MiB limit and is killed in round 3. */
static const struct synth_group oom_groups[] = {
    {"providers", 1, 96 * MiB, 24.0 * MiB, 16.0 * MiB, 40.0 * MiB, 16.0 * MiB,
     0.2 * MiB, 3, 0, 0},
    {"requestors", 1, 256 * MiB, 30.0 * MiB, 0, 48.0 * MiB, 0, 0.5 * MiB, 0, 0,
     0},
};
SYNTH_UNUSED static const struct synth oom = {5, oom_groups, 2};

/* RSS grows 8 MiB per round over a flat heap, and so does the free
 * memory malloc keeps inside its heaps: retention. */
static const struct synth_group retain_groups[] = {
    {"providers", 1, 512 * MiB, 24.0 * MiB, 0, 40.0 * MiB, 8.0 * MiB, 0.3 * MiB,
     0, 8.0 * MiB, 0},
};
SYNTH_UNUSED static const struct synth retain = {6, retain_groups, 1};

/* RSS grows 8 MiB per round over a flat heap while malloc's heaps stay
 * as they are (an mmap'ed buffer): growth outside malloc. */
static const struct synth_group mmap_groups[] = {
    {"providers", 1, 512 * MiB, 24.0 * MiB, 0, 40.0 * MiB, 8.0 * MiB, 0.3 * MiB,
     0, 0, 0},
};
SYNTH_UNUSED static const struct synth mmap_run = {6, mmap_groups, 1};

/* A flat provider whose largest site is the SDK's sync buffer (64 MiB,
 * from one sampled allocation), and a leak of 8 MiB a round. */
static const struct synth_group sync_groups[] = {
    {"providers", 1, 512 * MiB, 24.0 * MiB, 0, 40.0 * MiB, 0, 0.3 * MiB, 0, 0,
     64.0 * MiB},
    {"requestors", 2, 512 * MiB, 24.0 * MiB, 8.0 * MiB, 40.0 * MiB, 8.0 * MiB,
     0.3 * MiB, 0, 0, 0},
};
SYNTH_UNUSED static const struct synth sync_run = {6, sync_groups, 2};

/* ---- helpers ------------------------------------------------------------- */

static char *
make_run(const char *name, const struct synth *s)
{
    char *dir = path_join(th_tmpdir(), name);

    synth_write(dir, s);
    return dir;
}

/* Generate the report; the table goes to *table (caller frees). */
static int
generate(const char *dir, char **table, struct err *err)
{
    FILE *f = tmpfile();
    struct report_opts o = {.table = f};
    int rc = report_generate(dir, &o, err);
    long n;

    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    *table = xcalloc(1, (size_t)n + 1);
    if (fread(*table, 1, (size_t)n, f) != (size_t)n)
        CHECK(false);
    fclose(f);
    return rc;
}

static char *
slurp(const char *dir, const char *name)
{
    cleanup_free char *path = path_join(dir, name);
    size_t len;

    return file_read(path, 64 << 20, &len, NULL);
}

static cJSON *
summary(const char *dir)
{
    cleanup_free char *text = slurp(dir, "summary.json");
    cJSON *j = text ? cJSON_Parse(text) : NULL;

    CHECK_MSG(j != NULL, "%s/summary.json does not parse", dir);
    return j;
}

/* The member at a path of keys; "#id" picks the array element whose "id"
 * (or "label") is id. */
static const cJSON *
at(const cJSON *o, const char *path)
{
    char buf[256], *save = NULL;

    snprintf(buf, sizeof(buf), "%s", path);
    for (char *k = strtok_r(buf, ".", &save); k && o;
         k = strtok_r(NULL, ".", &save)) {
        const cJSON *e, *found = NULL;

        if (k[0] != '#') {
            o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(k))
                                 : cJSON_GetObjectItemCaseSensitive(o, k);
            continue;
        }
        cJSON_ArrayForEach (e, o) {
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");

            if (id == NULL)
                id = cJSON_GetObjectItemCaseSensitive(e, "label");
            if (cJSON_IsString(id) && strcmp(id->valuestring, k + 1) == 0)
                found = e;
        }
        o = found;
    }
    return o;
}

static const char *
at_str(const cJSON *o, const char *path)
{
    const cJSON *v = at(o, path);

    return cJSON_IsString(v) ? v->valuestring : "(not a string)";
}

static double
at_num(const cJSON *o, const char *path)
{
    const cJSON *v = at(o, path);

    return cJSON_IsNumber(v) ? v->valuedouble : -12345;
}

SYNTH_UNUSED static bool
has_note(const cJSON *sum, const char *needle)
{
    const cJSON *n;

    cJSON_ArrayForEach (n, at(sum, "missing")) {
        if (cJSON_IsString(n) && strstr(n->valuestring, needle) != NULL)
            return true;
    }
    return false;
}

/* Write the synthetic run `name`, generate its report (a failure fails the
 * case) and return its summary.json; *dir and *table are the caller's. */
static __attribute__((unused)) cJSON *
report_of(const char *name, const struct synth *sy, char **dir, char **table)
{
    struct err err = {0};

    *dir = make_run(name, sy);
    CHECK_MSG(generate(*dir, table, &err) == 0, "%s", err.msg);
    return summary(*dir);
}

#endif
