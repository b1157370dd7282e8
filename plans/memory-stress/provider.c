/*
 * provider.c — one round of the provider: make `concurrency` files of
 * random bytes as DAGs in a fresh block store, publish their roots and the
 * server's address on "roots-<n>", serve them until every requestor has
 * signalled "fetched-<n>", then drop the store. main.c frames the round
 * with next-<n> and finish-<n> and takes the round-end memory snapshots;
 * the server takes the round's peak snapshot while it serves.
 *
 * With leak_per_round > 0 the provider also leaks that much per round, on
 * purpose, from leak_round_buffers, so a report and its heap profiles can
 * be checked against a known leak.
 */
#include "server.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEAK_CHUNK (1u << 20)

struct ms_provider {
    struct ty *ty;
    const struct ms_config *cfg;
    struct ms_server *srv;
};

/* The deliberate leak's chunks: reachable from here, never freed. */
struct leaked {
    struct leaked *next;
};

static struct leaked *leaked_chunks;

/* Leak `bytes` in chunks of at most 1 MiB, touched so they count in RSS
 * and in the cgroup. Not inlined, so heap profiles name it. */
__attribute__((noinline)) static uint64_t
leak_round_buffers(uint64_t bytes)
{
    uint64_t done = 0;

    while (done < bytes) {
        size_t n =
            bytes - done < LEAK_CHUNK ? (size_t)(bytes - done) : LEAK_CHUNK;
        struct leaked *l;

        if (n < sizeof(*l))
            n = sizeof(*l);
        if ((l = malloc(n)) == NULL)
            break;
        memset(l, 0xa5, n);
        l->next = leaked_chunks;
        leaked_chunks = l;
        done += n;
    }
    return done;
}

struct ms_provider *
ms_provider_new(struct ty *ty, const struct ms_config *cfg)
{
    struct ms_provider *p = calloc(1, sizeof(*p));
    char why[MS_MSG_LEN];

    if (p == NULL) {
        ty_fail(ty, "out of memory");
        return NULL;
    }
    p->ty = ty;
    p->cfg = cfg;
    p->srv = ms_server_new(ty, cfg, why, sizeof(why));
    if (p->srv == NULL) {
        ty_fail(ty, "%s", why);
        free(p);
        return NULL;
    }
    return p;
}

void
ms_provider_destroy(struct ms_provider **pp)
{
    if (*pp == NULL)
        return;
    ms_server_destroy(&(*pp)->srv);
    free(*pp);
    *pp = NULL;
}

/* ---- building ------------------------------------------------------------ */

static int
build(struct ms_provider *p, const struct ms_round *r, struct ms_store *store,
      struct ms_link *roots)
{
    const struct ms_config *cfg = p->cfg;
    int64_t t0 = ms_now_ns();
    uint64_t total = 0;
    char why[MS_MSG_LEN], name[256];

    for (int f = 0; f < cfg->concurrency; f++) {
        struct ms_dag_spec spec = {
            .size = cfg->size,
            .chunk_log2 = cfg->chunk_size,
            .links = cfg->links_per_level,
            .raw_leaves = cfg->raw_leaves,
            .threads = cfg->hash_threads,
            .seed = (uint64_t)r->n * 1000003u + (uint64_t)f + 1,
        };
        uint64_t nb = 0;

        if (ms_dag_build(&spec, store, &roots[f], &nb, why, sizeof(why)) < 0)
            return ty_fail(p->ty, "round %d: file %d: %s", r->n, f, why);
        total += nb;
    }
    ty_point(p->ty, ms_metric(r, "dag_build_seconds", name, sizeof(name)),
             (double)(ms_now_ns() - t0) / 1e9);
    ty_counter_add(p->ty, "blocks_made", (int64_t)total);
    ty_counter_add(p->ty, ms_metric(r, "blocks_made", name, sizeof(name)),
                   (int64_t)total);
    ty_point(p->ty, ms_metric(r, "store_bytes", name, sizeof(name)),
             (double)store->bytes);
    return 0;
}

/* ---- publishing ---------------------------------------------------------- */

static cJSON *
root_json(const struct ms_link *l)
{
    cJSON *o = cJSON_CreateObject();
    char hex[MS_HEX_LEN];

    cJSON_AddStringToObject(o, "hash", ms_hex(l->hash, hex));
    cJSON_AddStringToObject(o, "codec", l->codec == MS_RAW ? "raw" : "tyfs");
    cJSON_AddNumberToObject(o, "len", l->len);
    cJSON_AddNumberToObject(o, "bytes", (double)l->bytes);
    return o;
}

static int
publish(struct ms_provider *p, const struct ms_round *r,
        const struct ms_link *roots)
{
    cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "roots");
    const char *host;
    char topic[32], *json;
    int port;
    int64_t seq = -1;

    ms_server_address(p->srv, &host, &port);
    cJSON_AddNumberToObject(o, "round", r->n);
    cJSON_AddStringToObject(o, "host", host);
    cJSON_AddNumberToObject(o, "port", port);
    for (int i = 0; i < p->cfg->concurrency; i++)
        cJSON_AddItemToArray(arr, root_json(&roots[i]));
    json = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    snprintf(topic, sizeof(topic), "roots-%d", r->n);
    if (json != NULL)
        seq = ty_publish(p->ty, topic, json);
    free(json);
    if (seq < 0)
        return ty_fail(p->ty, "round %d: publishing %s: %s", r->n, topic,
                       json ? ty_errmsg(p->ty) : "out of memory");
    return 0;
}

/* ---- serving ------------------------------------------------------------- */

static void
record(struct ms_provider *p, const struct ms_round *r,
       const struct ms_serve_stats *st, double secs)
{
    struct ty *ty = p->ty;
    char name[256];

    ty_point(ty, ms_metric(r, "round_duration_seconds", name, sizeof(name)),
             secs);
    ty_counter_add(ty, ms_metric(r, "bytes_sent", name, sizeof(name)),
                   (int64_t)st->bytes);
    ty_counter_add(ty, ms_metric(r, "blocks_sent", name, sizeof(name)),
                   (int64_t)st->blocks);
    ty_counter_add(ty, "bytes_sent", (int64_t)st->bytes);
    ty_counter_add(ty, "blocks_sent", (int64_t)st->blocks);
    ty_point(ty, ms_metric(r, "queue_peak_bytes", name, sizeof(name)),
             (double)st->queue_peak);
    ty_counter_add(ty, ms_metric(r, "budget_waits", name, sizeof(name)),
                   (int64_t)st->budget_waits);
    ty_message(ty,
               "round %d (latency %s, bandwidth %s): %llu transfers, "
               "%llu blocks, %llu bytes in %.2f s; at most %llu bytes "
               "queued, %llu waits for budget",
               r->n, r->net->latency_tag, r->net->bandwidth_tag,
               (unsigned long long)st->transfers,
               (unsigned long long)st->blocks, (unsigned long long)st->bytes,
               secs, (unsigned long long)st->queue_peak,
               (unsigned long long)st->budget_waits);
    if (st->failed > 0)
        ty_message(ty, "round %d: %llu connections failed: %s", r->n,
                   (unsigned long long)st->failed, st->why);
}

/* Serve until every requestor has its blocks: "fetched-<n>" is signalled
 * by each requestor once it has verified everything, and the provider
 * waits for all of them — a barrier fails at once if one dies. */
static int
serve(struct ms_provider *p, const struct ms_round *r,
      const struct ms_store *store)
{
    struct ms_serve_stats st;
    int64_t t0;
    int rc;

    ms_server_begin_round(p->srv, r, store);
    rc = ms_sync(p->ty, "ready", r->n, r->deadline);
    t0 = ms_now_ns();
    if (rc == 0)
        rc = ms_sync(p->ty, "fetched", r->n, r->deadline);
    ms_server_end_round(p->srv, rc < 0, &st);
    if (rc == 0)
        record(p, r, &st, (double)(ms_now_ns() - t0) / 1e9);
    return rc;
}

int
ms_provider_round(struct ms_provider *p, const struct ms_round *r)
{
    struct ms_link *roots = calloc((size_t)p->cfg->concurrency, sizeof(*roots));
    struct ms_store store;
    int rc;

    if (roots == NULL)
        return ty_fail(p->ty, "out of memory");
    if (p->cfg->leak_per_round > 0) {
        uint64_t n = leak_round_buffers(p->cfg->leak_per_round);

        ty_message(p->ty,
                   "round %d: leak_round_buffers leaked %llu bytes "
                   "on purpose",
                   r->n, (unsigned long long)n);
    }
    ms_store_init(&store);
    rc = build(p, r, &store, roots);
    if (rc == 0)
        rc = publish(p, r, roots);
    if (rc == 0)
        rc = serve(p, r, &store);
    ms_store_release(&store);
    free(roots);
    return rc;
}
