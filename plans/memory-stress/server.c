/*
 * server.c — the provider's responder: one acceptor thread for the run,
 * and per connection a responder thread (reads GET, walks the DAG in
 * pre-order, queues a copy of each block as a frame) and a sender thread
 * (waits out the frame's latency and the bandwidth's pace, writes it,
 * gives its bytes back to the budget). See server.h and net.h.
 *
 * Frames are copies, as a real responder builds messages, so what sits in
 * the queues is memory the budget has to bound: a responder that would
 * queue more than max_memory_per_peer for one requestor, or more than
 * max_memory_total in all, waits until a sender has written enough.
 *
 * With memory snapshots on, the sender that writes the round's middle block
 * takes the round's peak snapshot (ms_round_peak): the store and the
 * queued frames are both live then.
 *
 * corrupt_block flips one byte of the Nth BLOCK frame built (counting from
 * 0 over the whole run, every connection): the store keeps the right
 * bytes, the requestor gets the wrong ones.
 */
#define _GNU_SOURCE /* accept4 */
#include "server.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct frame {
    struct frame *next;
    int64_t due;   /* not written before this time (the latency) */
    bool block;    /* a BLOCK frame, paced and counted */
    size_t charge; /* bytes taken from the budget */
    size_t len;
    uint8_t buf[];
};

struct conn {
    struct conn *next;
    struct ms_server *srv;
    int fd;
    int peer; /* the requestor's global index, -1 before GET */
    pthread_t responder, sender;
    bool started; /* the responder thread runs */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct frame *head, *tail;
    bool produced; /* END is queued: nothing more will be */
    atomic_bool failed;
    bool done; /* the transfer completed */
    char why[MS_MSG_LEN];
};

struct ms_server {
    struct ty *ty;
    const struct ms_config *cfg;
    int lfd, port;
    char host[64];
    pthread_t acceptor;
    bool accepting;
    atomic_bool closing;
    pthread_mutex_t mu;
    struct conn *conns;
    /* the round being served, set between rounds under mu; connections
     * read the latency and deadline without it */
    int round;
    const struct ms_store *store;
    atomic_int_fast64_t latency_ns, deadline;
    struct ms_budget budget;
    struct ms_pacer pacer;
    atomic_uint_fast64_t blocks, bytes;
    atomic_int_fast64_t built; /* BLOCK frames built, for corrupt_block */
    /* the round's peak snapshot is taken when this many blocks have been
     * sent (0: none), in round peak_round */
    atomic_uint_fast64_t peak_at;
    atomic_int peak_round;
};

/* ---- a connection's failure ---------------------------------------------- */

static void
conn_fail(struct conn *c, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&c->mu);
    if (!atomic_load(&c->failed)) {
        va_start(ap, fmt);
        vsnprintf(c->why, sizeof(c->why), fmt, ap);
        va_end(ap);
        atomic_store(&c->failed, true);
    }
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    ms_budget_wake(&c->srv->budget);
}

/* ---- the sender ---------------------------------------------------------- */

static struct frame *
next_frame(struct conn *c)
{
    struct frame *f = NULL;

    pthread_mutex_lock(&c->mu);
    while (c->head == NULL && !c->produced && !atomic_load(&c->failed))
        pthread_cond_wait(&c->cv, &c->mu);
    if (c->head != NULL && !atomic_load(&c->failed)) {
        f = c->head;
        c->head = f->next;
        if (c->head == NULL)
            c->tail = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    return f;
}

/* Drop what is still queued after a failure, giving its bytes back. */
static void
drain(struct conn *c)
{
    struct frame *f;

    pthread_mutex_lock(&c->mu);
    while ((f = c->head) != NULL) {
        c->head = f->next;
        ms_budget_release(&c->srv->budget, c->peer, f->charge);
        free(f);
    }
    c->tail = NULL;
    pthread_mutex_unlock(&c->mu);
}

static void
conn_free(struct conn *c)
{
    drain(c);
    if (c->fd >= 0)
        close(c->fd);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

static int
send_frame(struct conn *c, struct frame *f)
{
    struct ms_server *s = c->srv;

    ms_sleep_until(f->due, &c->failed);
    if (f->block)
        ms_sleep_until(ms_pacer_slot(&s->pacer, f->len), &c->failed);
    if (atomic_load(&c->failed))
        return -ECANCELED;
    return ms_write_full(c->fd, f->buf, f->len, s->deadline);
}

static void *
sender_main(void *arg)
{
    struct conn *c = arg;
    struct ms_server *s = c->srv;
    struct frame *f;

    while ((f = next_frame(c)) != NULL) {
        int rc = send_frame(c, f);

        ms_budget_release(&s->budget, c->peer, f->charge);
        if (rc < 0 && rc != -ECANCELED)
            conn_fail(c, "writing to the requestor at instance %d: %s", c->peer,
                      ms_io_strerror(rc));
        if (rc == 0 && f->block) {
            uint64_t sent = atomic_fetch_add(&s->blocks, 1) + 1;

            atomic_fetch_add(&s->bytes, f->len - MS_FRAME_HDR - MS_HASH_LEN);
            if (sent == atomic_load(&s->peak_at))
                ms_round_peak(s->ty, s->cfg, atomic_load(&s->peak_round));
            ms_memory_event(s->ty);
        }
        free(f);
        if (rc < 0)
            break;
    }
    drain(c);
    return NULL;
}

/* ---- the producer -------------------------------------------------------- */

/* Queue f (NULL: nothing) for the sender; last says nothing follows. */
static void
enqueue(struct conn *c, struct frame *f, bool last)
{
    pthread_mutex_lock(&c->mu);
    if (f != NULL) {
        f->next = NULL;
        f->due = ms_now_ns() + c->srv->latency_ns;
        if (c->tail != NULL)
            c->tail->next = f;
        else
            c->head = f;
        c->tail = f;
    }
    c->produced = last;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void
maybe_corrupt(struct conn *c, struct frame *f, const struct ms_block *b)
{
    struct ms_server *s = c->srv;
    int64_t nth = atomic_fetch_add(&s->built, 1);
    char hex[MS_HEX_LEN];

    if (nth != s->cfg->corrupt_block || b->len == 0)
        return;
    f->buf[MS_FRAME_HDR + MS_HASH_LEN + b->len / 2] ^= 0xff;
    ty_message(s->ty,
               "corrupt_block: flipped byte %u of block %lld (%s) "
               "on its way to instance %d",
               b->len / 2, (long long)nth, ms_hex(b->hash, hex), c->peer);
}

/* The response queue's one allocation site: a frame holding a copy of the
 * block. Not inlined, so heap profiles name it. */
__attribute__((noinline)) static int
response_queue_block(struct conn *c, const struct ms_block *b)
{
    struct ms_server *s = c->srv;
    size_t len = MS_FRAME_HDR + MS_HASH_LEN + b->len;
    int rc =
        ms_budget_acquire(&s->budget, c->peer, len, &c->failed, s->deadline);
    struct frame *f;

    if (rc < 0) {
        if (rc == -ETIMEDOUT)
            conn_fail(c, "waiting for memory budget: %s", ms_io_strerror(rc));
        return rc;
    }
    if ((f = malloc(sizeof(*f) + len)) == NULL) {
        ms_budget_release(&s->budget, c->peer, len);
        conn_fail(c, "out of memory for a %zu-byte frame", len);
        return -ENOMEM;
    }
    ms_put32(f->buf, (uint32_t)(len - 4));
    f->buf[4] = MS_BLOCK;
    memcpy(f->buf + MS_FRAME_HDR, b->hash, MS_HASH_LEN);
    memcpy(f->buf + MS_FRAME_HDR + MS_HASH_LEN, b->data, b->len);
    f->len = f->charge = len;
    f->block = true;
    maybe_corrupt(c, f, b);
    enqueue(c, f, false);
    return 0;
}

/* Queue a successful END: status 0, how many blocks, no text. */
static void
queue_end(struct conn *c, uint64_t blocks)
{
    size_t len = MS_FRAME_HDR + MS_END_BODY;
    struct frame *f = malloc(sizeof(*f) + len);

    if (f == NULL) {
        conn_fail(c, "out of memory for the END frame");
        enqueue(c, NULL, true);
        return;
    }
    ms_put32(f->buf, (uint32_t)(len - 4));
    f->buf[4] = MS_END;
    ms_put32(f->buf + MS_FRAME_HDR, 0);
    ms_put64(f->buf + MS_FRAME_HDR + 4, blocks);
    f->len = len;
    f->charge = 0; /* a few bytes, outside the budget */
    f->block = false;
    enqueue(c, f, true);
}

/* ---- the walk: every block under the root, in pre-order ------------------ */

struct step {
    struct ms_node node;
    uint32_t next;
};

/* Push b's children when it is a tree node; 0 or -ENOMEM. */
static int
push_children(struct step **stack, size_t *depth, size_t *cap,
              const struct ms_block *b)
{
    struct ms_node n;
    char why[160];

    if (b->codec != MS_TYFS || ms_node_parse(b, &n, why, sizeof(why)) < 0 ||
        n.kind != MS_TREE)
        return 0;
    if (*depth == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        struct step *ns = realloc(*stack, nc * sizeof(*ns));

        if (ns == NULL)
            return -ENOMEM;
        *stack = ns;
        *cap = nc;
    }
    (*stack)[(*depth)++] = (struct step){n, 0};
    return 0;
}

/* Queue one block named by hash, and note its children. */
static int
visit(struct conn *c, const struct ms_store *store, const uint8_t *hash,
      struct step **stack, size_t *depth, size_t *cap)
{
    const struct ms_block *b = ms_store_get(store, hash);
    char hex[MS_HEX_LEN];
    int rc;

    if (b == NULL) {
        conn_fail(c, "block %s is not in the store", ms_hex(hash, hex));
        return -ENOENT;
    }
    if ((rc = response_queue_block(c, b)) < 0)
        return rc;
    if (push_children(stack, depth, cap, b) < 0) {
        conn_fail(c, "out of memory walking the DAG");
        return -ENOMEM;
    }
    return 0;
}

static int
walk(struct conn *c, const struct ms_store *store, const uint8_t *root,
     uint64_t *blocks)
{
    struct step *stack = NULL;
    size_t depth = 0, cap = 0;
    int rc = visit(c, store, root, &stack, &depth, &cap);

    for (*blocks = rc == 0; rc == 0 && depth > 0;) {
        struct step *top = &stack[depth - 1];
        struct ms_link l;

        if (top->next == top->node.nlinks) {
            depth--;
            continue;
        }
        ms_node_link(&top->node, top->next++, &l);
        rc = visit(c, store, l.hash, &stack, &depth, &cap);
        *blocks += rc == 0;
    }
    free(stack);
    return rc;
}

/* ---- a connection -------------------------------------------------------- */

struct get_req {
    uint32_t round, peer, index;
    uint8_t root[MS_HASH_LEN];
};

static int
read_get(struct conn *c, struct get_req *g, int64_t deadline)
{
    uint8_t buf[MS_FRAME_HDR + MS_GET_BODY];
    int rc = ms_read_full(c->fd, buf, sizeof(buf), deadline);

    if (rc < 0)
        return rc;
    if (ms_get32(buf) != 1 + MS_GET_BODY || buf[4] != MS_GET)
        return -EPROTO;
    g->round = ms_get32(buf + MS_FRAME_HDR);
    g->peer = ms_get32(buf + MS_FRAME_HDR + 4);
    g->index = ms_get32(buf + MS_FRAME_HDR + 8);
    memcpy(g->root, buf + MS_FRAME_HDR + 12, MS_HASH_LEN);
    return 0;
}

/* Whether the server serves g's round, knows g's peer and has g's root;
 * why when not. On yes, *store is the round's store. */
static bool
admit(struct conn *c, const struct get_req *g, const struct ms_store **store,
      char *why, size_t whylen)
{
    struct ms_server *s = c->srv;
    bool ok;

    char hex[MS_HEX_LEN];

    pthread_mutex_lock(&s->mu);
    *store = s->store;
    ok = s->store != NULL && g->round == (uint32_t)s->round &&
         g->peer < (uint32_t)s->budget.npeers;
    if (!ok)
        snprintf(why, whylen,
                 "round %u from instance %u: the provider serves round %d "
                 "of %d instances",
                 g->round, g->peer, s->store ? s->round : 0, s->budget.npeers);
    else if (!(ok = ms_store_get(s->store, g->root) != NULL))
        snprintf(why, whylen, "%s is not a root of round %u",
                 ms_hex(g->root, hex), g->round);
    pthread_mutex_unlock(&s->mu);
    return ok;
}

static void
refuse(struct conn *c, const char *why)
{
    uint8_t buf[MS_FRAME_HDR + MS_END_BODY + MS_END_TEXT];
    size_t tl = strnlen(why, MS_END_TEXT);

    ms_put32(buf, (uint32_t)(1 + MS_END_BODY + tl));
    buf[4] = MS_END;
    ms_put32(buf + MS_FRAME_HDR, 1);
    ms_put64(buf + MS_FRAME_HDR + 4, 0);
    memcpy(buf + MS_FRAME_HDR + MS_END_BODY, why, tl);
    ms_write_full(c->fd, buf, MS_FRAME_HDR + MS_END_BODY + tl,
                  ms_now_ns() + 1000000000LL);
    conn_fail(c, "refused a request: %s", why);
}

/* After END the requestor closes; anything else is a protocol error. */
static void
wait_close(struct conn *c)
{
    uint8_t byte;
    int rc = ms_read_full(c->fd, &byte, 1, c->srv->deadline);

    if (rc == -ENOTCONN || rc == -ECONNRESET)
        c->done = true;
    else
        conn_fail(c, "instance %d did not close after END: %s", c->peer,
                  rc == 0 ? "it sent more" : ms_io_strerror(rc));
}

static void
serve(struct conn *c, const struct get_req *g, const struct ms_store *store)
{
    uint64_t blocks = 0;
    int rc;

    c->peer = (int)g->peer;
    if (pthread_create(&c->sender, NULL, sender_main, c) != 0) {
        conn_fail(c, "cannot start a sender thread");
        return;
    }
    /* The request's own trip: the response starts a latency later. */
    ms_sleep_until(ms_now_ns() + c->srv->latency_ns, &c->failed);
    rc = walk(c, store, g->root, &blocks);
    if (rc == 0)
        queue_end(c, blocks);
    else
        enqueue(c, NULL, true);
    pthread_join(c->sender, NULL);
    if (!atomic_load(&c->failed))
        wait_close(c);
}

static void *
responder_main(void *arg)
{
    struct conn *c = arg;
    const struct ms_store *store = NULL;
    struct get_req g;
    char why[MS_END_TEXT];
    int rc = read_get(c, &g, c->srv->deadline);

    if (rc < 0)
        conn_fail(c, "reading a request: %s",
                  rc == -EPROTO ? "not a GET frame" : ms_io_strerror(rc));
    else if (!admit(c, &g, &store, why, sizeof(why)))
        refuse(c, why);
    else
        serve(c, &g, store);
    /* Whatever went wrong, the requestor sees the connection close. */
    if (atomic_load(&c->failed))
        shutdown(c->fd, SHUT_RDWR);
    return NULL;
}

/* ---- accepting ----------------------------------------------------------- */

static struct conn *
conn_new(struct ms_server *s, int fd)
{
    struct conn *c = calloc(1, sizeof(*c));
    int one = 1;

    if (c == NULL)
        return NULL;
    c->srv = s;
    c->fd = fd;
    c->peer = 0;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return c;
}

static void *
acceptor_main(void *arg)
{
    struct ms_server *s = arg;

    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
        struct conn *c;

        if (atomic_load(&s->closing)) {
            if (fd >= 0)
                close(fd);
            return NULL;
        }
        if (fd < 0) {
            if (errno != EINTR && errno != ECONNABORTED)
                ms_sleep_until(ms_now_ns() + 10000000, &s->closing);
            continue;
        }
        if ((c = conn_new(s, fd)) == NULL) {
            close(fd);
            continue;
        }
        pthread_mutex_lock(&s->mu);
        c->next = s->conns;
        s->conns = c;
        c->started =
            pthread_create(&c->responder, NULL, responder_main, c) == 0;
        pthread_mutex_unlock(&s->mu);
    }
}

/* ---- the server ---------------------------------------------------------- */

struct ms_server *
ms_server_new(struct ty *ty, const struct ms_config *cfg, char *why,
              size_t whylen)
{
    struct ms_server *s = calloc(1, sizeof(*s));

    if (s == NULL ||
        ms_budget_init(&s->budget, cfg->max_memory_per_peer,
                       cfg->max_memory_total, ty_plan_instance_count(ty)) < 0) {
        snprintf(why, whylen, "out of memory");
        free(s);
        return NULL;
    }
    s->ty = ty;
    s->cfg = cfg;
    pthread_mutex_init(&s->mu, NULL);
    ms_pacer_init(&s->pacer);
    ms_advertised_host(s->host, sizeof(s->host));
    s->lfd = ms_listen(&s->port);
    if (s->lfd >= 0)
        s->accepting =
            pthread_create(&s->acceptor, NULL, acceptor_main, s) == 0;
    if (!s->accepting) {
        snprintf(why, whylen, "cannot listen for requestors: %s",
                 s->lfd < 0 ? strerror(-s->lfd) : "no acceptor thread");
        ms_server_destroy(&s);
    }
    return s;
}

void
ms_server_address(const struct ms_server *s, const char **host, int *port)
{
    *host = s->host;
    *port = s->port;
}

/* Halfway through the round's sends, when the store is whole and the
 * response queue full (its responders outrun the link), is when the
 * round's peak snapshot shows both; 0 without memory snapshots. */
static uint64_t
peak_at(const struct ms_server *s, const struct ms_store *store)
{
    uint64_t all =
        (uint64_t)store->count * (uint64_t)(ty_plan_instance_count(s->ty) - 1);

    if (s->cfg->snapshots == MS_SNAP_NONE || all == 0)
        return 0;
    return all / 2 > 0 ? all / 2 : 1;
}

void
ms_server_begin_round(struct ms_server *s, const struct ms_round *r,
                      const struct ms_store *store)
{
    uint64_t peak, waits;

    pthread_mutex_lock(&s->mu);
    s->round = r->n;
    s->store = store;
    s->latency_ns = r->net->latency_ns;
    s->deadline = r->deadline;
    ms_pacer_set(&s->pacer, r->net->bandwidth);
    atomic_store(&s->blocks, 0);
    atomic_store(&s->bytes, 0);
    atomic_store(&s->peak_round, r->n);
    atomic_store(&s->peak_at, peak_at(s, store));
    ms_budget_round_stats(&s->budget, &peak, &waits);
    pthread_mutex_unlock(&s->mu);
}

static void
tally(struct conn *c, struct ms_serve_stats *st)
{
    if (c->done) {
        st->transfers++;
        return;
    }
    st->failed++;
    if (st->why[0] == '\0')
        snprintf(st->why, sizeof(st->why), "%s",
                 c->why[0] ? c->why : "a transfer did not complete");
}

void
ms_server_end_round(struct ms_server *s, bool abort, struct ms_serve_stats *st)
{
    struct conn *list, *c;

    memset(st, 0, sizeof(*st));
    pthread_mutex_lock(&s->mu);
    s->store = NULL;
    list = s->conns;
    s->conns = NULL;
    pthread_mutex_unlock(&s->mu);
    for (c = abort ? list : NULL; c != NULL; c = c->next) {
        conn_fail(c, "the round was cut short");
        shutdown(c->fd, SHUT_RDWR);
    }
    while ((c = list) != NULL) {
        list = c->next;
        if (c->started)
            pthread_join(c->responder, NULL);
        tally(c, st);
        conn_free(c);
    }
    st->blocks = atomic_load(&s->blocks);
    st->bytes = atomic_load(&s->bytes);
    ms_budget_round_stats(&s->budget, &st->queue_peak, &st->budget_waits);
}

void
ms_server_destroy(struct ms_server **ps)
{
    struct ms_server *s = *ps;
    struct ms_serve_stats st;

    if (s == NULL)
        return;
    *ps = NULL;
    atomic_store(&s->closing, true);
    if (s->lfd >= 0)
        shutdown(s->lfd, SHUT_RDWR);
    if (s->accepting)
        pthread_join(s->acceptor, NULL);
    if (s->lfd >= 0)
        close(s->lfd);
    ms_server_end_round(s, true, &st);
    ms_budget_release_all(&s->budget);
    ms_pacer_release(&s->pacer);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
