/*
 * config.c — the memory-stress plan's parameters, read once at start with
 * the SDK's typed getters and checked against the plan's limits, and the
 * rounds they describe.
 *
 * The sweep is latencies × bandwidths, bandwidth in the outer loop (as
 * go-graphsync's stress plan orders it), with a 0 put in front of either
 * list when no_latency_case / unlimited_bandwidth_case is true; `rounds`
 * repeats the whole sweep. Tags keep each value as the composition wrote
 * it ("512MB", "50ms"), so metric names read like the composition.
 */
#include "ms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
get_int(struct ty *ty, const char *name, int64_t lo, int64_t hi, int64_t *out)
{
    if (ty_param_int(ty, name, out) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    if (*out < lo || *out > hi)
        return ty_fail(ty, "parameter \"%s\": expected %lld to %lld, got %lld",
                       name, (long long)lo, (long long)hi, (long long)*out);
    return 0;
}

static int
get_size(struct ty *ty, const char *name, uint64_t *out)
{
    if (ty_param_size(ty, name, out) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    return 0;
}

static int
get_bool(struct ty *ty, const char *name, bool *out)
{
    if (ty_param_bool(ty, name, out) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    return 0;
}

/* A value as the composition wrote it, made safe for a tag (no ',', '='
 * or blanks); digits of fallback when it is not a string. */
static void
tag_as_written(const char *s, unsigned long long fallback, char *dst)
{
    if (s == NULL) {
        snprintf(dst, MS_TAG_LEN, "%llu", fallback);
        return;
    }
    snprintf(dst, MS_TAG_LEN, "%s", s);
    for (char *p = dst; *p; p++)
        if (*p == ',' || *p == '=' || *p == ' ')
            *p = '_';
}

/* One axis of the sweep: latencies (ns) or bandwidths (bytes/s). */
struct axis {
    const char *name;
    bool durations;
    int64_t *vals;
    char (*tags)[MS_TAG_LEN];
    int n;
};

static int
read_value(struct ty *ty, struct axis *a, size_t i)
{
    int64_t *v = &a->vals[a->n];
    uint64_t size = 0;
    const char *s = NULL;
    int rc = a->durations ? ty_param_array_duration(ty, a->name, i, v)
                          : ty_param_array_size(ty, a->name, i, &size);

    if (rc < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    if (!a->durations)
        *v = size > INT64_MAX ? INT64_MAX : (int64_t)size;
    if (*v < 0)
        return ty_fail(ty, "parameter \"%s\"[%zu]: expected 0 or more", a->name,
                       i);
    if (ty_param_array_string(ty, a->name, i, &s) < 0)
        s = NULL;
    tag_as_written(s, (unsigned long long)*v, a->tags[a->n++]);
    return 0;
}

/* Read an axis, with a 0 in front when zero_case. */
static int
read_axis(struct ty *ty, struct axis *a, bool zero_case)
{
    size_t len = 0;

    if (ty_param_array_len(ty, a->name, &len) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    if (len > 1000)
        return ty_fail(ty, "parameter \"%s\": at most 1000 values", a->name);
    a->vals = calloc(len + 1, sizeof(*a->vals));
    a->tags = calloc(len + 1, sizeof(*a->tags));
    if (a->vals == NULL || a->tags == NULL)
        return ty_fail(ty, "out of memory");
    if (zero_case)
        tag_as_written("0", 0, a->tags[a->n++]);
    for (size_t i = 0; i < len; i++)
        if (read_value(ty, a, i) < 0)
            return -1;
    return 0;
}

static void
fill_sweep(struct ms_config *cfg, const struct axis *lat, const struct axis *bw)
{
    for (int b = 0; b < bw->n; b++)
        for (int l = 0; l < lat->n; l++) {
            struct ms_net *x = &cfg->sweep[cfg->nsweep++];

            x->latency_ns = lat->vals[l];
            x->bandwidth = (uint64_t)bw->vals[b];
            memcpy(x->latency_tag, lat->tags[l], MS_TAG_LEN);
            memcpy(x->bandwidth_tag, bw->tags[b], MS_TAG_LEN);
        }
}

static int
build_sweep(struct ty *ty, struct ms_config *cfg)
{
    struct axis lat = {.name = "latencies", .durations = true};
    struct axis bw = {.name = "bandwidths"};
    bool zl, zb;
    int rc = -1;

    if (get_bool(ty, "no_latency_case", &zl) == 0 &&
        get_bool(ty, "unlimited_bandwidth_case", &zb) == 0 &&
        read_axis(ty, &lat, zl) == 0 && read_axis(ty, &bw, zb) == 0)
        rc = 0;
    if (rc == 0 && lat.n * bw.n == 0)
        rc = ty_fail(ty,
                     "no rounds to run: the sweep of latencies (%d) x "
                     "bandwidths (%d) is empty; give values or turn on "
                     "no_latency_case / unlimited_bandwidth_case",
                     lat.n, bw.n);
    if (rc == 0 && (cfg->sweep = calloc((size_t)(lat.n * bw.n),
                                        sizeof(*cfg->sweep))) == NULL)
        rc = ty_fail(ty, "out of memory");
    if (rc == 0)
        fill_sweep(cfg, &lat, &bw);
    free(lat.vals);
    free(lat.tags);
    free(bw.vals);
    free(bw.tags);
    return rc;
}

static int
read_snapshots(struct ty *ty, struct ms_config *cfg)
{
    const char *mode;
    int64_t every;

    if (ty_param_enum(ty, "memory_snapshots", &mode) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    cfg->snapshots = strcmp(mode, "detailed") == 0 ? MS_SNAP_DETAILED
                     : strcmp(mode, "simple") == 0 ? MS_SNAP_SIMPLE
                                                   : MS_SNAP_NONE;
    /* The SDK's helper reads it; check it here so a bad value fails at
     * start rather than at the first block. */
    return get_int(ty, "memory_snapshot_every", 1, 1000000000, &every);
}

static void
tag_size(struct ty *ty, struct ms_config *cfg)
{
    const char *s = NULL;

    if (ty_param_string(ty, "size", &s) < 0)
        s = NULL;
    tag_as_written(s, (unsigned long long)cfg->size, cfg->size_tag);
}

static int
read_sizes(struct ty *ty, struct ms_config *cfg)
{
    if (get_size(ty, "size", &cfg->size) < 0 ||
        get_size(ty, "max_memory_per_peer", &cfg->max_memory_per_peer) < 0 ||
        get_size(ty, "max_memory_total", &cfg->max_memory_total) < 0 ||
        get_size(ty, "leak_per_round", &cfg->leak_per_round) < 0)
        return -1;
    if (cfg->size == 0 || cfg->size > (1ULL << 40))
        return ty_fail(ty, "parameter \"size\": expected 1B to 1TiB, got %llu",
                       (unsigned long long)cfg->size);
    tag_size(ty, cfg);
    return 0;
}

static int
read_ints(struct ty *ty, struct ms_config *cfg)
{
    int64_t conc, chunk, links, rounds, threads, *bad = &cfg->corrupt_block;

    if (get_int(ty, "concurrency", 1, 64, &conc) < 0 ||
        get_int(ty, "chunk_size", 10, 24, &chunk) < 0 ||
        get_int(ty, "links_per_level", 2, 65536, &links) < 0 ||
        get_int(ty, "rounds", 1, 100000, &rounds) < 0 ||
        get_int(ty, "hash_threads", 0, 64, &threads) < 0 ||
        get_int(ty, "corrupt_block", -1, INT64_MAX / 2, bad) < 0)
        return -1;
    cfg->concurrency = (int)conc;
    cfg->chunk_size = (unsigned)chunk;
    cfg->links_per_level = (uint32_t)links;
    cfg->rounds = (int)rounds;
    if (threads == 0)
        threads = sysconf(_SC_NPROCESSORS_ONLN);
    cfg->hash_threads = threads < 1 ? 1 : threads > 64 ? 64 : (int)threads;
    return 0;
}

int
ms_config_load(struct ty *ty, struct ms_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    if (read_sizes(ty, cfg) < 0 || read_ints(ty, cfg) < 0 ||
        get_bool(ty, "raw_leaves", &cfg->raw_leaves) < 0 ||
        read_snapshots(ty, cfg) < 0)
        return -1;
    if (ty_param_duration(ty, "round_timeout", &cfg->round_timeout_ns) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    if (cfg->round_timeout_ns < 0)
        return ty_fail(ty, "parameter \"round_timeout\": expected 0 or a "
                           "positive duration");
    if ((cfg->size >> cfg->chunk_size) > (64ULL << 20))
        return ty_fail(ty,
                       "size %s makes over 64Mi blocks of 2^%u bytes per "
                       "file; raise chunk_size",
                       cfg->size_tag, cfg->chunk_size);
    if (build_sweep(ty, cfg) < 0)
        return -1;
    if ((int64_t)cfg->rounds * cfg->nsweep > 1000000)
        return ty_fail(ty, "%d rounds x %d sweep points: over 1000000",
                       cfg->rounds, cfg->nsweep);
    return 0;
}

void
ms_config_release(struct ms_config *cfg)
{
    free(cfg->sweep);
    cfg->sweep = NULL;
    cfg->nsweep = 0;
}

int
ms_config_total_rounds(const struct ms_config *cfg)
{
    return cfg->rounds * cfg->nsweep;
}

void
ms_round_init(const struct ms_config *cfg, int n, struct ms_round *r)
{
    int64_t run = ms_run_deadline();

    r->n = n;
    r->net = &cfg->sweep[(n - 1) % cfg->nsweep];
    r->deadline = run;
    if (cfg->round_timeout_ns > 0 && ms_now_ns() + cfg->round_timeout_ns < run)
        r->deadline = ms_now_ns() + cfg->round_timeout_ns;
    snprintf(r->tags, sizeof(r->tags),
             "round=%d,size=%s,latency=%s,bandwidth=%s", n, cfg->size_tag,
             r->net->latency_tag, r->net->bandwidth_tag);
}

const char *
ms_metric(const struct ms_round *r, const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s,%s", name, r->tags);
    return buf;
}
