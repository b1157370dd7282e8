/*
 * requestor.c — one round of a requestor: wait until the provider has
 * published the round's roots ("ready-<n>"), read them from "roots-<n>",
 * fetch and verify every block of every root at once (fetch.c), signal
 * "fetched-<n>", record the round's metrics and drop the round's blocks
 * (the round's peak snapshot is taken before they go).
 *
 * When a connection to the provider is lost mid-transfer, the provider has
 * most likely died; the coordinator knows how, so the requestor asks it
 * through the round's finish-<n> barrier, which fails at once naming the
 * instance that can no longer reach it ("providers/0 exited with status
 * 137 (oom)"), and fails with that message.
 */
#include "fetch.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_MS 10000 /* how long to wait for the coordinator's verdict */

static int
parse_root(const cJSON *o, struct ms_link *l)
{
    const cJSON *h = cJSON_GetObjectItem(o, "hash");
    const cJSON *c = cJSON_GetObjectItem(o, "codec");
    const cJSON *len = cJSON_GetObjectItem(o, "len");
    const cJSON *b = cJSON_GetObjectItem(o, "bytes");

    if (!cJSON_IsString(h) || ms_unhex(h->valuestring, l->hash) < 0 ||
        !cJSON_IsString(c) || !cJSON_IsNumber(len) || !cJSON_IsNumber(b) ||
        len->valuedouble < 1 || len->valuedouble > 4294967295.0)
        return -1;
    l->codec = strcmp(c->valuestring, "raw") == 0 ? MS_RAW : MS_TYFS;
    l->len = (uint32_t)len->valuedouble;
    l->bytes = (uint64_t)b->valuedouble;
    return 0;
}

static int
parse_source(const char *json, int round, struct ms_source *src)
{
    cJSON *o = cJSON_Parse(json);
    const cJSON *roots = cJSON_GetObjectItem(o, "roots"), *e;
    const cJSON *host = cJSON_GetObjectItem(o, "host");
    const cJSON *port = cJSON_GetObjectItem(o, "port");
    const cJSON *n = cJSON_GetObjectItem(o, "round");
    int rc = -1, i = 0;

    if (cJSON_IsArray(roots) && cJSON_IsString(host) && cJSON_IsNumber(port) &&
        cJSON_IsNumber(n) && n->valueint == round &&
        cJSON_GetArraySize(roots) > 0) {
        snprintf(src->host, sizeof(src->host), "%s", host->valuestring);
        src->port = port->valueint;
        src->nroots = cJSON_GetArraySize(roots);
        src->roots = calloc((size_t)src->nroots, sizeof(*src->roots));
        rc = src->roots ? 0 : -1;
        cJSON_ArrayForEach (e, roots) {
            if (rc == 0)
                rc = parse_root(e, &src->roots[i++]);
        }
    }
    cJSON_Delete(o);
    return rc;
}

static int
read_source(struct ty *ty, const struct ms_round *r, struct ms_source *src)
{
    char topic[32], *json = NULL;
    struct ty_sub *sub;
    int64_t seq;
    int rc;

    snprintf(topic, sizeof(topic), "roots-%d", r->n);
    if ((sub = ty_subscribe(ty, topic, 1)) == NULL)
        return ty_fail(ty, "round %d: subscribing to %s: %s", r->n, topic,
                       ty_errmsg(ty));
    rc = ty_sub_next(sub, &json, &seq, ms_timeout_ms(r->deadline));
    ty_sub_close(&sub);
    if (rc < 0)
        return ty_fail(ty, "round %d: reading %s: %s", r->n, topic,
                       ty_errmsg(ty));
    rc = parse_source(json, r->n, src);
    if (rc < 0)
        ty_fail(ty, "round %d: %s holds no usable roots: %.300s", r->n, topic,
                json);
    free(json);
    return rc;
}

/* A transfer broke: fail with the coordinator's word on the provider when
 * it has one, and what the connection saw in any case. */
static int
lost_provider(struct ty *ty, const struct ms_round *r, const char *why)
{
    char state[32];
    int64_t left = ms_timeout_ms(r->deadline);
    int rc;

    snprintf(state, sizeof(state), "finish-%d", r->n);
    rc = ty_barrier(ty, state, ty_plan_instance_count(ty),
                    left >= 0 && left < PROBE_MS ? left : PROBE_MS);
    if (rc == -EPIPE)
        return ty_fail(ty, "round %d: %s; %s", r->n, ty_errmsg(ty), why);
    return ty_fail(ty, "%s", why);
}

static void
record(struct ty *ty, const struct ms_round *r, const struct ms_source *src,
       const struct ms_fetch_result *res, double secs)
{
    char name[256];

    ty_point(ty, ms_metric(r, "round_duration_seconds", name, sizeof(name)),
             secs);
    for (int i = 0; i < src->nroots; i++)
        ty_histogram_observe(
            ty, ms_metric(r, "transfer_seconds", name, sizeof(name)),
            res->secs[i]);
    ty_counter_add(ty, ms_metric(r, "blocks_verified", name, sizeof(name)),
                   (int64_t)res->blocks);
    ty_counter_add(ty, ms_metric(r, "bytes_received", name, sizeof(name)),
                   (int64_t)res->bytes);
    ty_counter_add(ty, "blocks_verified", (int64_t)res->blocks);
    ty_counter_add(ty, "bytes_received", (int64_t)res->bytes);
    ty_point(ty,
             ms_metric(r, "throughput_bytes_per_second", name, sizeof(name)),
             secs > 0 ? (double)res->bytes / secs : 0);
    ty_message(ty,
               "round %d (latency %s, bandwidth %s): %d files, %llu "
               "blocks, %llu bytes verified in %.2f s",
               r->n, r->net->latency_tag, r->net->bandwidth_tag, src->nroots,
               (unsigned long long)res->blocks, (unsigned long long)res->bytes,
               secs);
}

static int
fetch(struct ty *ty, const struct ms_config *cfg, const struct ms_round *r,
      const struct ms_source *src)
{
    struct ms_fetch_result res = {0};
    struct ms_store store;
    char state[32];
    int64_t t0 = ms_now_ns();
    int rc;

    if ((res.secs = calloc((size_t)src->nroots, sizeof(double))) == NULL)
        return ty_fail(ty, "out of memory");
    ms_store_init(&store);
    rc = ms_fetch_round(ty, cfg, r, src, &store, &res);
    if (rc == 0)
        ms_round_peak(ty, cfg, r->n);
    if (rc < 0) {
        rc = res.lost ? lost_provider(ty, r, res.why)
                      : ty_fail(ty, "%s", res.why);
    } else {
        snprintf(state, sizeof(state), "fetched-%d", r->n);
        if (ty_signal_entry(ty, state) < 0)
            rc = ty_fail(ty, "round %d: signalling %s: %s", r->n, state,
                         ty_errmsg(ty));
        else
            record(ty, r, src, &res, (double)(ms_now_ns() - t0) / 1e9);
    }
    /* The round's blocks go now, after the round's peak snapshot and
     * before its round-end ones. */
    ms_store_release(&store);
    free(res.secs);
    return rc;
}

int
ms_requestor_round(struct ty *ty, const struct ms_config *cfg,
                   const struct ms_round *r)
{
    struct ms_source src = {0};
    int rc;

    if (ms_sync(ty, "ready", r->n, r->deadline) < 0 ||
        read_source(ty, r, &src) < 0) {
        free(src.roots);
        return -1;
    }
    rc = fetch(ty, cfg, r, &src);
    free(src.roots);
    return rc;
}
