/*
 * ty_heapctl.c — heap snapshots as files, and the calls plans make.
 *
 * A snapshot is two files: heap-<label>.pb.gz, the gzipped pprof profile
 * of the sampled heap (ty_pprof.c), and heap-<label>.json, a sidecar with
 * what the profile cannot show — RSS, its high-water mark, anonymous RSS,
 * glibc's allocator totals, how the stacks were taken, how many frames
 * have no symbols and the cgroup's usage — because live heap bytes
 * and resident memory are different things. The profile goes first, so a
 * sidecar never describes a missing profile. Both are sent with
 * ty__output_file (to the coordinator, or under TEST_OUTPUTS_PATH); the
 * LD_PRELOAD build (preload.c) writes the same two files itself.
 *
 * ty_memory_round_end also appends one line per round to
 * memory-rounds.jsonl with ty__output_append: the post-trim sidecar's
 * figures, or, in none mode, the same figures read at the call with the
 * profiler's totals in place of a profile.
 *
 * The profiler's own allocations while it builds a snapshot are kept out of
 * the profile (ty__heap_quiet_begin). Periodic, peak and pre-OOM snapshots
 * are taken by the snapshot thread (ty_heapctl_thread.c).
 */
#include "ty_cgroup.h"
#include "ty_heap.h"
#include "ty_int.h"
#include "ty_json.h"
#include "ty_pprof.h"
#include "ty_units.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LABEL_MAX 100
#define EVERY_DEFAULT 10
#define ROUNDS_FILE "memory-rounds.jsonl"

static _Atomic int64_t memory_events;

/* ------------------------------------------------------------------------
 * The sidecar
 */

/* VmRSS, VmHWM and RssAnon in bytes, -1 when absent. */
static void
add_status(cJSON *o)
{
    static const char *const keys[][2] = {{"VmRSS:", "rss_bytes"},
                                          {"VmHWM:", "vm_hwm_bytes"},
                                          {"RssAnon:", "rss_anon_bytes"}};
    int64_t v[3] = {-1, -1, -1};
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];

    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        for (size_t i = 0; i < 3; i++) {
            size_t kl = strlen(keys[i][0]);
            long long kb;

            if (strncmp(line, keys[i][0], kl) == 0 &&
                sscanf(line + kl, "%lld", &kb) == 1)
                v[i] = kb * 1024;
        }
    }
    if (f != NULL)
        fclose(f);
    for (size_t i = 0; i < 3; i++)
        ty__json_count(o, keys[i][1], v[i]);
}

static void
add_mallinfo(cJSON *o)
{
    struct mallinfo2 mi = mallinfo2();
    cJSON *m = cJSON_AddObjectToObject(o, "mallinfo");

    ty__json_count(m, "arena", (int64_t)mi.arena);
    ty__json_count(m, "hblkhd", (int64_t)mi.hblkhd);
    ty__json_count(m, "uordblks", (int64_t)mi.uordblks);
    ty__json_count(m, "fordblks", (int64_t)mi.fordblks);
    ty__json_count(m, "keepcost", (int64_t)mi.keepcost);
}

static void
add_profile(cJSON *o, const struct ty__heap_totals *t)
{
    cJSON *p = cJSON_AddObjectToObject(o, "profile");
    size_t mapped, resident;

    ty__json_count(p, "inuse_bytes", t->inuse_bytes);
    ty__json_count(p, "inuse_objects", t->inuse_objects);
    ty__json_count(p, "alloc_bytes", t->alloc_bytes);
    ty__json_count(p, "alloc_objects", t->alloc_objects);
    ty__json_count(p, "samples", (int64_t)t->samples);
    ty__heap_own_memory(&mapped, &resident);
    ty__json_count(p, "profiler_bytes", (int64_t)mapped);
    ty__json_count(p, "profiler_resident_bytes", (int64_t)resident);
}

/* How the stacks were taken: a user whose stacks are short can see that
 * backtrace() was unusable (docs/heap-profiling.md, "Call stacks"). */
static void
add_unwind(cJSON *o)
{
    static const char *const modes[] = {
        [TY_UNWIND_AUTO] = "auto",
        [TY_UNWIND_FP] = "fp",
        [TY_UNWIND_BACKTRACE] = "backtrace",
    };
    cJSON *u = cJSON_AddObjectToObject(o, "unwind");
    enum ty__unwind_mode mode = ty__unwind_mode();
    struct ty__unwind_stats st;

    ty__unwind_stats(&st);
    cJSON_AddStringToObject(u, "mode", modes[mode]);
    cJSON_AddStringToObject(u, "backtrace",
                            mode == TY_UNWIND_FP            ? "unused"
                            : ty__unwind_backtrace_usable() ? "usable"
                                                            : "unusable");
    ty__json_count(u, "stacks_fp", (int64_t)st.fp);
    ty__json_count(u, "stacks_backtrace", (int64_t)st.bt);
    ty__json_count(u, "stacks_backtrace_failed", (int64_t)st.bt_failed);
}

/* How many of the profile's frames have no name, and in which objects
 * (docs/heap-profiling.md, "Stripped programs"). */
static void
add_symbols(cJSON *o, const struct ty__heap_totals *t)
{
    cJSON *s = cJSON_AddObjectToObject(o, "symbols");
    cJSON *objs = cJSON_AddArrayToObject(s, "objects");

    ty__json_count(s, "frames", (int64_t)t->frames);
    ty__json_count(s, "unsymbolized", (int64_t)t->unsymbolized);
    for (size_t i = 0; objs != NULL && i < t->nobjects; i++) {
        cJSON *x = cJSON_CreateObject();

        cJSON_AddStringToObject(x, "path", t->objects[i].path);
        cJSON_AddStringToObject(x, "build_id", t->objects[i].build_id);
        ty__json_count(x, "frames", (int64_t)t->objects[i].frames);
        cJSON_AddItemToArray(objs, x);
    }
}

static void
add_cgroup(cJSON *o)
{
    enum ty__cgver ver = TY_CG_NONE;
    char *dir = ty__cgroup_memory_dir(0, &ver);
    struct ty__cgmem m;
    cJSON *c;

    if (dir == NULL || ty__cgroup_read_memory(dir, ver, &m) < 0) {
        free(dir);
        cJSON_AddNullToObject(o, "cgroup");
        return;
    }
    c = cJSON_AddObjectToObject(o, "cgroup");
    cJSON_AddNumberToObject(c, "version", ver == TY_CG_V1 ? 1 : 2);
    ty__json_count(c, "current_bytes", m.usage);
    ty__json_count(c, "peak_bytes", m.peak);
    ty__json_count(c, "limit_bytes", m.limit);
    free(dir);
}

const char *
ty__heap_trigger_name(enum ty__heap_trigger t)
{
    static const char *const names[TY_HEAP_TRIGGER_N] = {
        [TY_HEAP_TRIGGER_CALL] = "call",
        [TY_HEAP_TRIGGER_ROUND] = "round",
        [TY_HEAP_TRIGGER_EVENT] = "event",
        [TY_HEAP_TRIGGER_PERIODIC] = "periodic",
        [TY_HEAP_TRIGGER_PEAK] = "peak",
        [TY_HEAP_TRIGGER_PREOOM] = "pre-oom",
        [TY_HEAP_TRIGGER_SIGNAL] = "signal",
        [TY_HEAP_TRIGGER_EXIT] = "exit",
    };

    return (unsigned)t < TY_HEAP_TRIGGER_N ? names[t] : "call";
}

static cJSON *
sidecar_object(const char *label, int round, enum ty__heap_trigger trigger,
               const struct ty__heap_snap *s, const struct ty__heap_totals *t)
{
    cJSON *o = cJSON_CreateObject();
    char when[64];

    if (o == NULL)
        return NULL;
    ty__format_rfc3339(s->time_ns, when, sizeof(when));
    cJSON_AddStringToObject(o, "time", when);
    cJSON_AddStringToObject(o, "label", label);
    cJSON_AddStringToObject(o, "trigger", ty__heap_trigger_name(trigger));
    if (round >= 0)
        cJSON_AddNumberToObject(o, "round", round);
    cJSON_AddNumberToObject(o, "pid", (double)getpid());
    ty__json_count(o, "rate", (int64_t)s->rate);
    add_status(o);
    add_mallinfo(o);
    add_profile(o, t);
    add_unwind(o);
    add_symbols(o, t);
    add_cgroup(o);
    return o;
}

static char *
sidecar(const char *label, int round, enum ty__heap_trigger trigger,
        const struct ty__heap_snap *s, const struct ty__heap_totals *t)
{
    cJSON *o = sidecar_object(label, round, trigger, s, t);
    char *out = o != NULL ? cJSON_Print(o) : NULL;

    cJSON_Delete(o);
    return out;
}

/* ------------------------------------------------------------------------
 * Round readings: one line of memory-rounds.jsonl per ty_memory_round_end,
 * the sidecar's figures of one instant (docs/heap-profiling.md).
 */

static void
copy_member(cJSON *to, const cJSON *from, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, key);
    cJSON *d = v != NULL ? cJSON_Duplicate(v, true) : cJSON_CreateNull();

    if (d != NULL)
        cJSON_AddItemToObject(to, key, d);
}

/* The line from a sidecar object (ty__output_append ends it). Caller
 * frees. */
static char *
round_line(const cJSON *sc, int round)
{
    static const char *const figs[] = {"rss_bytes", "rss_anon_bytes",
                                       "vm_hwm_bytes", "mallinfo"};
    static const char *const prof[] = {"inuse_bytes", "inuse_objects",
                                       "profiler_bytes",
                                       "profiler_resident_bytes"};
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(sc, "profile");
    cJSON *o = cJSON_CreateObject(), *p;
    char *line;

    if (o == NULL)
        return NULL;
    copy_member(o, sc, "time");
    cJSON_AddNumberToObject(o, "round", round);
    for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++)
        copy_member(o, sc, figs[i]);
    if ((p = cJSON_AddObjectToObject(o, "profile")) != NULL)
        for (size_t i = 0; i < sizeof(prof) / sizeof(prof[0]); i++)
            copy_member(p, sp, prof[i]);
    copy_member(o, sc, "cgroup");
    line = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return line;
}

/* Append round's reading: from sc, the sidecar of the snapshot taken at
 * this instant, or, when sc is NULL, from figures read now with the
 * profiler's totals (no profile is built). */
static int
round_reading(struct ty *ty, int round, const cJSON *sc)
{
    struct ty__heap_snap s = {0};
    struct ty__heap_totals t;
    cJSON *own = NULL;
    char *line = NULL;
    int was = ty__heap_quiet_begin(), r = 0;

    if (sc == NULL && (r = ty__heap_collect(&s)) == 0) {
        ty__heap_totals_of(&s, &t);
        sc = own =
            sidecar_object("round", round, TY_HEAP_TRIGGER_ROUND, &s, &t);
    }
    if (r == 0 && (sc == NULL || (line = round_line(sc, round)) == NULL))
        r = -ENOMEM;
    if (r == 0)
        r = ty__output_append(ty, ROUNDS_FILE, line, strlen(line));
    else
        r = ty__seterr(ty, r, "%s: round %d: %s", ROUNDS_FILE, round,
                       strerror(-r));
    free(line);
    cJSON_Delete(own);
    ty__heap_snap_release(&s);
    ty__heap_quiet_end(was);
    return r;
}

/* ------------------------------------------------------------------------
 * Snapshot files
 */

bool
ty__heap_label_ok(const char *label)
{
    size_t n = label ? strlen(label) : 0;

    if (n == 0 || n > LABEL_MAX || label[0] == '.')
        return false;
    return strspn(label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
                         "WXYZ0123456789._-") == n;
}

int
ty__heap_files_build(const char *label, int round,
                     enum ty__heap_trigger trigger, struct ty__heap_files *f)
{
    struct ty__heap_snap s = {0};
    struct ty__heap_totals tot = {0};
    int was = ty__heap_quiet_begin();
    int r = ty__heap_collect(&s);

    *f = (struct ty__heap_files){0};
    if (r == 0)
        r = ty__heap_profile(&s, &f->pb, &f->pb_len, &tot);
    if (r == 0 && (f->json = sidecar(label, round, trigger, &s, &tot)) == NULL)
        r = -ENOMEM;
    if (r == 0)
        f->json_len = strlen(f->json);
    else
        ty__heap_files_release(f);
    ty__heap_totals_release(&tot);
    ty__heap_snap_release(&s);
    ty__heap_quiet_end(was);
    return r;
}

void
ty__heap_files_release(struct ty__heap_files *f)
{
    free(f->pb);
    free(f->json);
    *f = (struct ty__heap_files){0};
}

static int
send_files(struct ty *ty, const char *label, const struct ty__heap_files *f)
{
    char name[LABEL_MAX + 32];
    int r;

    snprintf(name, sizeof(name), "heap-%s.pb.gz", label);
    r = ty__output_file(ty, name, f->pb, f->pb_len);
    if (r < 0)
        return r;
    snprintf(name, sizeof(name), "heap-%s.json", label);
    return ty__output_file(ty, name, f->json, f->json_len);
}

/* Take and send a snapshot; with figs, also hand back its sidecar as an
 * object (the caller's). */
static int
snapshot_figures(struct ty *ty, const char *label, int round,
                 enum ty__heap_trigger trigger, cJSON **figs)
{
    struct ty__heap_files f;
    int was, r;

    if (!ty__heap_label_ok(label))
        return ty__seterr(ty, -EINVAL,
                          "heap snapshot label \"%.120s\": "
                          "expected 1 to %d letters, digits, '.', '_' or "
                          "'-', not starting with '.'",
                          label ? label : "(null)", LABEL_MAX);
    r = ty__heap_files_build(label, round, trigger, &f);
    if (r < 0)
        return ty__seterr(ty, r, "heap snapshot %s: %s", label, strerror(-r));
    was = ty__heap_quiet_begin();
    r = send_files(ty, label, &f);
    if (r == 0 && figs != NULL &&
        (*figs = cJSON_ParseWithLength(f.json, f.json_len)) == NULL)
        r = ty__seterr(ty, -ENOMEM, "heap snapshot %s: out of memory", label);
    ty__heap_quiet_end(was);
    ty__heap_files_release(&f);
    return r;
}

int
ty__heap_send(struct ty *ty, const char *label, int round,
              enum ty__heap_trigger trigger)
{
    return snapshot_figures(ty, label, round, trigger, NULL);
}

/* ------------------------------------------------------------------------
 * Plan-facing calls
 */

int
ty_heap_snapshot(struct ty *ty, const char *label)
{
    return ty__heap_send(ty, label, -1, TY_HEAP_TRIGGER_CALL);
}

void
ty_heap_trim(struct ty *ty)
{
    (void)ty;
    malloc_trim(0);
}

void
ty_heap_set_rate(uint64_t bytes)
{
    ty__heap_set_rate(bytes);
}

uint64_t
ty_heap_rate(void)
{
    return ty__heap_get_rate();
}

/* The memory_snapshots parameter: 0 = none or unset, 1 = simple, 2 =
 * detailed, or a negative code. */
static int
memory_mode(struct ty *ty)
{
    const char *mode;
    int r;

    if (!ty_param_has(ty, "memory_snapshots"))
        return 0;
    r = ty_param_enum(ty, "memory_snapshots", &mode);
    if (r < 0)
        return r;
    if (strcmp(mode, "none") == 0)
        return 0;
    if (strcmp(mode, "simple") == 0)
        return 1;
    if (strcmp(mode, "detailed") == 0)
        return 2;
    return ty__seterr(ty, -EINVAL,
                      "parameter \"memory_snapshots\": "
                      "expected none, simple or detailed, got \"%.80s\"",
                      mode);
}

int
ty_memory_round_end(struct ty *ty, int round)
{
    char label[64];
    cJSON *figs = NULL;
    int r = memory_mode(ty);

    if (r <= 0)
        return r < 0 ? r : round_reading(ty, round, NULL);
    snprintf(label, sizeof(label), "round-%d-pre-trim", round);
    r = ty__heap_send(ty, label, round, TY_HEAP_TRIGGER_ROUND);
    if (r < 0)
        return r;
    ty_heap_trim(ty);
    snprintf(label, sizeof(label), "round-%d-post-trim", round);
    r = snapshot_figures(ty, label, round, TY_HEAP_TRIGGER_ROUND, &figs);
    if (r == 0)
        r = round_reading(ty, round, figs);
    cJSON_Delete(figs);
    return r;
}

static int
snapshot_every(struct ty *ty, int64_t *every)
{
    int r;

    *every = EVERY_DEFAULT;
    if (!ty_param_has(ty, "memory_snapshot_every"))
        return 0;
    r = ty_param_int(ty, "memory_snapshot_every", every);
    if (r == 0 && *every <= 0)
        r = ty__seterr(ty, -EINVAL,
                       "parameter \"memory_snapshot_every\": "
                       "expected a positive count, got %lld",
                       (long long)*every);
    return r;
}

int
ty_memory_event(struct ty *ty)
{
    char label[64];
    int64_t every, n;
    int r = memory_mode(ty);

    if (r < 2)
        return r < 0 ? r : 0;
    if ((r = snapshot_every(ty, &every)) < 0)
        return r;
    n = atomic_fetch_add(&memory_events, 1) + 1;
    if (n % every != 0)
        return 0;
    snprintf(label, sizeof(label), "event-%lld", (long long)n);
    return ty__heap_send(ty, label, -1, TY_HEAP_TRIGGER_EVENT);
}
