/*
 * syncsvc_topic.c — ordered, bounded topics read with cursors.
 *
 * A topic is an append-only list of JSON values printed compactly; a
 * value's sequence number is its position, from 1. A reader asks for items
 * from a sequence number on (fetch), gets at most `max` of them and the
 * cursor to ask from next, and when there is nothing yet its request waits
 * (long poll) until a publish or its deadline. So a late subscriber catches
 * up in a few large answers instead of a replay on every tick, and the
 * service keeps no per-subscriber state beyond one parked request.
 *
 * Topics are bounded in entries and bytes each, and the run in how many
 * topics it has and how much they hold together (what the values and
 * names take plus a fixed cost per entry and topic); a publish or fetch
 * past a bound fails with "full" and says which bound.
 *
 * Each entry is printed as its item ({"seq":n,"value":...}) once, when it
 * is published, and answers are put together from those texts: a publish
 * that wakes a hundred caught-up readers builds the shared part of their
 * answers once and only the id differs.
 */
#include "sync/syncsvc_int.h"

#include "base/strbuf.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values in one answer stop growing past this many bytes (at least one
 * item always goes), so an answer stays well under TY_WIRE_JSON_MAX. */
#define FETCH_BYTES (TY_WIRE_JSON_MAX / 2)

/* What the run-wide bounds count for a topic and for an entry: the
 * names and values as printed plus what the service keeps around them. */
static size_t
topic_cost(size_t namelen)
{
    return sizeof(struct svc_topic) + sizeof(struct svc_map_entry) +
           2 * namelen + SVC_OBJ_OVERHEAD;
}

static size_t
entry_cost(size_t vlen)
{
    return vlen + sizeof(struct svc_entry) + SVC_OBJ_OVERHEAD;
}

/* The topic, made when new; NULL (and an answer sent) when the run
 * already holds as many topics, or as many bytes, as it may. */
static struct svc_topic *
topic_get(struct syncsvc *svc, const struct svc_ctx *c, int64_t id,
          const char *name)
{
    size_t len = strlen(name);
    struct svc_topic *t = svc__map_get(&svc->topics, name, len);

    if (t != NULL)
        return t;
    if (svc->topics.count >= svc->bounds.topics)
        return svc__reply_status(svc, &c->peer, id, TY_WIRE_FULL,
                                 "no new topic: the run has %zu topics, the "
                                 "most it may have",
                                 svc->topics.count),
               NULL;
    if (svc->topic_held + topic_cost(len) > svc->bounds.topic_bytes)
        return svc__reply_status(svc, &c->peer, id, TY_WIRE_FULL,
                                 "no new topic: the run's topics hold %zu "
                                 "bytes, the bound for all of them is %zu",
                                 svc->topic_held, svc->bounds.topic_bytes),
               NULL;
    t = xcalloc(1, sizeof(*t));
    t->name = xstrdup(name);
    svc__map_put(&svc->topics, name, len, t);
    svc->topic_held += topic_cost(len);
    return t;
}

/* The part of an answer after the id, for the items of t from `from` on
 * (at most max, and about FETCH_BYTES of values), into svc->items. */
static void
render_items(struct syncsvc *svc, const struct svc_topic *t, int64_t from,
             int64_t max)
{
    struct strbuf *sb = &svc->items;
    size_t bytes = 0;
    int64_t seq = from, last;

    for (; seq <= (int64_t)t->n && seq < from + max; seq++) {
        size_t vlen = t->entries[seq - 1].vlen;

        if (seq > from && bytes + vlen > FETCH_BYTES)
            break;
        bytes += vlen;
    }
    last = seq;
    sb->len = 0;
    strbuf_addf(sb, ",\"status\":\"ok\",\"next\":%lld,\"items\":[",
                (long long)last);
    for (seq = from; seq < last; seq++) {
        if (seq > from)
            strbuf_addc(sb, ',');
        strbuf_add(sb, t->entries[seq - 1].item, t->entries[seq - 1].len);
    }
    strbuf_add(sb, "]}", 2);
}

/* Send request id its answer: the id, then what render_items made. */
static void
send_items(struct syncsvc *svc, const struct svc_peer *peer, int64_t id)
{
    struct strbuf *sb = &svc->answer;

    sb->len = 0;
    strbuf_addf(sb, "{\"id\":%lld", (long long)id);
    strbuf_add(sb, svc->items.buf, svc->items.len);
    svc__send(svc, peer, sb->buf, sb->len, id);
}

static void
answer_items(struct syncsvc *svc, const struct svc_peer *peer, int64_t id,
             const struct svc_topic *t, int64_t from, int64_t max)
{
    render_items(svc, t, from, max);
    send_items(svc, peer, id);
}

static int
check_bounds(struct syncsvc *svc, const struct svc_ctx *c,
             const struct ty_wire_req *req, const struct svc_topic *t,
             size_t len)
{
    if (len > TY_WIRE_VALUE_MAX)
        return svc__reply_status(svc, &c->peer, req->id, TY_WIRE_INVALID,
                                 "value of %zu bytes is over the %u-byte "
                                 "limit",
                                 len, TY_WIRE_VALUE_MAX),
               -1;
    if (t->n + 1 > svc->topic_max_entries)
        return svc__reply_status(svc, &c->peer, req->id, TY_WIRE_FULL,
                                 "topic \"%s\" is full: it holds %zu entries, "
                                 "the bound per topic",
                                 t->name, t->n),
               -1;
    if (t->bytes + len > svc->topic_max_bytes)
        return svc__reply_status(svc, &c->peer, req->id, TY_WIRE_FULL,
                                 "topic \"%s\" is full: %zu bytes plus %zu "
                                 "would pass the bound of %zu bytes per topic",
                                 t->name, t->bytes, len, svc->topic_max_bytes),
               -1;
    if (svc->topic_held + entry_cost(len) > svc->bounds.topic_bytes)
        return svc__reply_status(svc, &c->peer, req->id, TY_WIRE_FULL,
                                 "topic \"%s\" cannot take %zu bytes more: "
                                 "the run's topics hold %zu bytes, the bound "
                                 "for all of them is %zu",
                                 t->name, len, svc->topic_held,
                                 svc->bounds.topic_bytes),
               -1;
    return 0;
}

/* Answer every reader waiting for an item that now exists. Readers that
 * ask from the same place get the same items: rendered once. */
static void
wake_readers(struct syncsvc *svc, struct svc_topic *t)
{
    struct svc_waiter *w = t->waiters, *next;
    int64_t from = -1, max = -1;

    for (; w != NULL; w = next) {
        next = w->next;
        if (w->from > (int64_t)t->n)
            continue;
        svc__list_del(&t->waiters, w);
        if (w->from != from || w->max != max) {
            from = w->from;
            max = w->max;
            render_items(svc, t, from, max);
        }
        send_items(svc, &w->peer, w->id);
        svc__waiter_free(svc, w);
    }
}

void
svc__op_publish(struct syncsvc *svc, const struct svc_ctx *c,
                const struct ty_wire_req *req)
{
    struct svc_topic *t = topic_get(svc, c, req->id, req->topic);
    char *v;
    struct ty_wire_resp r;
    size_t len;

    if (t == NULL)
        return;
    v = cJSON_PrintUnformatted(req->value);
    if (v == NULL) {
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_INVALID,
                          "value cannot be printed as JSON");
        return;
    }
    len = strlen(v);
    if (check_bounds(svc, c, req, t, len) < 0) {
        free(v);
        return;
    }
    xgrow(&t->entries, &t->cap, t->n + 1, sizeof(*t->entries));
    t->entries[t->n].item =
        xasprintf("{\"seq\":%zu,\"value\":%s}", t->n + 1, v);
    t->entries[t->n].len = strlen(t->entries[t->n].item);
    t->entries[t->n].vlen = len;
    t->n++;
    t->bytes += len;
    svc->topic_held += entry_cost(len);
    free(v);
    ty__wire_resp_init(&r, req->id);
    r.seq = (int64_t)t->n;
    svc__reply(svc, &c->peer, &r);
    wake_readers(svc, t);
}

void
svc__op_fetch(struct syncsvc *svc, const struct svc_ctx *c,
              const struct ty_wire_req *req)
{
    struct svc_topic *t = topic_get(svc, c, req->id, req->topic);
    struct svc_waiter *w;

    if (t == NULL)
        return;
    if (req->from <= (int64_t)t->n) {
        answer_items(svc, &c->peer, req->id, t, req->from, req->max);
        return;
    }
    if (req->timeout_ms == 0) {
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_TIMEOUT,
                          "topic \"%s\" has no item %lld yet", t->name,
                          (long long)req->from);
        return;
    }
    w = svc__waiter_new(svc, c, req->id, req->timeout_ms, SVC_T_FETCH);
    if (w == NULL)
        return;
    w->topic = t;
    w->from = req->from;
    w->max = req->max;
    svc__list_add(&t->waiters, w);
}

void
svc__fetch_timeout(struct syncsvc *svc, struct svc_waiter *w)
{
    svc__list_del(&w->topic->waiters, w);
    svc__reply_status(svc, &w->peer, w->id, TY_WIRE_TIMEOUT,
                      "no item %lld on topic \"%s\" before the deadline",
                      (long long)w->from, w->topic->name);
    svc__waiter_free(svc, w);
}

struct cancel_walk {
    struct syncsvc *svc;
    const char *why;
    int inst; /* restarting_topic */
};

static void
cancel_topic(void *value, void *arg)
{
    struct cancel_walk *cw = arg;
    struct svc_topic *t = value;
    struct svc_waiter *w;

    while ((w = t->waiters) != NULL) {
        svc__list_del(&t->waiters, w);
        svc__reply_status(cw->svc, &w->peer, w->id, TY_WIRE_CANCELED, "%s",
                          cw->why);
        svc__waiter_free(cw->svc, w);
    }
}

void
svc__topic_cancel_all(struct syncsvc *svc, const char *why)
{
    struct cancel_walk cw = {svc, why, -1};

    svc__map_each(&svc->topics, cancel_topic, &cw);
}

static void
restarting_topic(void *value, void *arg)
{
    struct cancel_walk *cw = arg;
    struct svc_topic *t = value;

    svc__list_drop_inst(cw->svc, &t->waiters, cw->inst);
}

void
svc__topic_restarting(struct syncsvc *svc, int inst)
{
    struct cancel_walk cw = {svc, NULL, inst};

    svc__map_each(&svc->topics, restarting_topic, &cw);
}

void
svc__topic_free(void *value)
{
    struct svc_topic *t = value;

    while (t->waiters != NULL) {
        struct svc_waiter *w = t->waiters;

        t->waiters = w->next;
        svc__waiter_drop(w);
    }
    for (size_t i = 0; i < t->n; i++)
        free(t->entries[i].item);
    free(t->entries);
    free(t->name);
    free(t);
}
