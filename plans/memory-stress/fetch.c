/*
 * fetch.c — a requestor's transfers for one round (see fetch.h).
 *
 * Each transfer thread connects, sends GET and reads frames until END,
 * walking the same pre-order the provider walks: a stack of tree nodes
 * says which link names the next block, so every block is checked against
 * the hash its parent (or the published root) gave. A tree node is
 * verified on the spot, since its links decide what comes next; a leaf
 * goes to the verify pool, whose threads hash it while the transfer reads
 * on. The pool's queue is bounded in bytes, so a slow verifier slows the
 * reads and, through TCP, the provider's senders.
 *
 * The first failure wins; it shuts down every other connection of the
 * round so their threads end at once.
 */
#include "fetch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define POOL_BYTES (16u << 20) /* leaves waiting for a verifier */

struct job {
    struct job *next;
    struct ms_block *b;
    struct ms_link l;
    int root;
    uint64_t seq; /* position in its transfer, from 1 */
};

struct fetch {
    struct ty *ty;
    const struct ms_config *cfg;
    const struct ms_round *r;
    const struct ms_source *src;
    struct ms_store *store;
    pthread_mutex_t mu; /* the store, fds, the failure */
    int *fds;
    atomic_bool failed;
    struct ms_fetch_result *res;
    atomic_uint_fast64_t blocks, bytes;
    /* the verify pool */
    pthread_mutex_t pmu;
    pthread_cond_t work, room, idle;
    struct job *head, *tail;
    uint64_t queued;
    int busy, workers;
    bool stop;
};

/* Record the round's first failure and stop the other transfers; -1. */
static int
fail(struct fetch *f, bool lost, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&f->mu);
    if (!atomic_load(&f->failed)) {
        va_start(ap, fmt);
        vsnprintf(f->res->why, sizeof(f->res->why), fmt, ap);
        va_end(ap);
        f->res->lost = lost;
        atomic_store(&f->failed, true);
        for (int i = 0; i < f->src->nroots; i++)
            if (f->fds[i] >= 0)
                shutdown(f->fds[i], SHUT_RDWR);
    }
    pthread_mutex_unlock(&f->mu);
    pthread_mutex_lock(&f->pmu);
    pthread_cond_broadcast(&f->room);
    pthread_mutex_unlock(&f->pmu);
    return -1;
}

static void
mismatch(struct fetch *f, const struct job *j, const uint8_t *got)
{
    char want[MS_HEX_LEN], have[MS_HEX_LEN];

    fail(f, false,
         "hash mismatch: block %s (#%llu of root %d, round %d) "
         "hashes to %s; its bytes were changed on the way",
         ms_hex(j->l.hash, want), (unsigned long long)j->seq, j->root, f->r->n,
         ms_hex(got, have));
}

/* Keep a verified block; the stored block, or NULL after a failure. */
static const struct ms_block *
keep(struct fetch *f, struct ms_block *b)
{
    const struct ms_block *kept;

    pthread_mutex_lock(&f->mu);
    kept = ms_store_put(f->store, b);
    pthread_mutex_unlock(&f->mu);
    if (kept == NULL) {
        fail(f, false, "out of memory keeping block %u bytes", b->len);
        return NULL;
    }
    atomic_fetch_add(&f->blocks, 1);
    atomic_fetch_add(&f->bytes, kept->len);
    ms_memory_event(f->ty);
    return kept;
}

/* A leaf's own claim about its file bytes must match its link's. */
static bool
leaf_ok(const struct ms_block *b, const struct ms_link *l, char *why,
        size_t whylen)
{
    struct ms_node n;

    if (l->codec == MS_RAW) {
        if (l->bytes == b->len)
            return true;
        snprintf(why, whylen, "raw leaf of %u bytes, link says %llu", b->len,
                 (unsigned long long)l->bytes);
        return false;
    }
    if (ms_node_parse(b, &n, why, whylen) < 0)
        return false;
    if (n.kind == MS_LEAF && n.bytes == l->bytes)
        return true;
    snprintf(why, whylen, "a %s where a leaf of %llu bytes was linked",
             n.kind == MS_LEAF ? "leaf of other size" : "tree node",
             (unsigned long long)l->bytes);
    return false;
}

static void
verify_leaf(struct fetch *f, struct job *j)
{
    uint8_t got[MS_HASH_LEN];
    char why[160], hex[MS_HEX_LEN];

    if (atomic_load(&f->failed)) {
        free(j->b);
    } else if (!ms_block_verify(j->b, j->l.hash, got)) {
        mismatch(f, j, got);
        free(j->b);
    } else if (!leaf_ok(j->b, &j->l, why, sizeof(why))) {
        fail(f, false, "round %d, root %d: block %s: %s", f->r->n, j->root,
             ms_hex(j->l.hash, hex), why);
        free(j->b);
    } else {
        keep(f, j->b);
    }
    j->b = NULL;
}

/* ---- the verify pool ----------------------------------------------------- */

static void *
pool_main(void *arg)
{
    struct fetch *f = arg;

    pthread_mutex_lock(&f->pmu);
    for (;;) {
        struct job *j;

        while (f->head == NULL && !f->stop)
            pthread_cond_wait(&f->work, &f->pmu);
        if ((j = f->head) == NULL)
            break;
        f->head = j->next;
        if (f->head == NULL)
            f->tail = NULL;
        f->busy++;
        pthread_mutex_unlock(&f->pmu);
        verify_leaf(f, j);
        pthread_mutex_lock(&f->pmu);
        f->busy--;
        f->queued -= j->l.len;
        free(j);
        pthread_cond_broadcast(&f->room);
        if (f->head == NULL && f->busy == 0)
            pthread_cond_broadcast(&f->idle);
    }
    pthread_mutex_unlock(&f->pmu);
    return NULL;
}

/* Queue a leaf for verification, waiting for room; takes the block. */
static int
pool_push(struct fetch *f, struct ms_block *b, const struct ms_link *l,
          int root, uint64_t seq)
{
    struct job *j = malloc(sizeof(*j));

    if (j == NULL) {
        free(b);
        fail(f, false, "out of memory");
        return -1;
    }
    *j = (struct job){NULL, b, *l, root, seq};
    pthread_mutex_lock(&f->pmu);
    while (f->queued > 0 && f->queued + l->len > POOL_BYTES &&
           !atomic_load(&f->failed))
        pthread_cond_wait(&f->room, &f->pmu);
    if (f->tail != NULL)
        f->tail->next = j;
    else
        f->head = j;
    f->tail = j;
    f->queued += l->len;
    pthread_cond_signal(&f->work);
    pthread_mutex_unlock(&f->pmu);
    return atomic_load(&f->failed) ? -1 : 0;
}

static int
pool_start(struct fetch *f, pthread_t *tids, int n)
{
    int started = 0;

    pthread_mutex_init(&f->pmu, NULL);
    pthread_cond_init(&f->work, NULL);
    pthread_cond_init(&f->room, NULL);
    pthread_cond_init(&f->idle, NULL);
    while (started < n &&
           pthread_create(&tids[started], NULL, pool_main, f) == 0)
        started++;
    return started;
}

/* Wait until every queued leaf is verified, then end the threads. */
static void
pool_finish(struct fetch *f, pthread_t *tids, int n)
{
    pthread_mutex_lock(&f->pmu);
    while (n > 0 && (f->head != NULL || f->busy > 0))
        pthread_cond_wait(&f->idle, &f->pmu);
    f->stop = true;
    pthread_cond_broadcast(&f->work);
    pthread_mutex_unlock(&f->pmu);
    for (int i = 0; i < n; i++)
        pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&f->pmu);
    pthread_cond_destroy(&f->work);
    pthread_cond_destroy(&f->room);
    pthread_cond_destroy(&f->idle);
}

/* ---- one transfer -------------------------------------------------------- */

struct step {
    struct ms_node node;
    uint32_t next;
};

struct xfer {
    struct fetch *f;
    int root;
    pthread_t tid;
    struct step *stack;
    size_t depth, cap;
    bool root_given;
    uint64_t seq; /* blocks received */
    int fd;
    double secs;
};

/* The link naming the next block in pre-order; false when none is left. */
static bool
next_link(struct xfer *x, struct ms_link *l)
{
    if (!x->root_given) {
        *l = x->f->src->roots[x->root];
        x->root_given = true;
        return true;
    }
    while (x->depth > 0) {
        struct step *t = &x->stack[x->depth - 1];

        if (t->next < t->node.nlinks) {
            ms_node_link(&t->node, t->next++, l);
            return true;
        }
        x->depth--;
    }
    return false;
}

static int
push_node(struct xfer *x, const struct ms_node *n)
{
    if (x->depth == x->cap) {
        size_t nc = x->cap ? x->cap * 2 : 16;
        struct step *ns = realloc(x->stack, nc * sizeof(*ns));

        if (ns == NULL) {
            fail(x->f, false, "out of memory walking the DAG");
            return -1;
        }
        x->stack = ns;
        x->cap = nc;
    }
    x->stack[x->depth++] = (struct step){*n, 0};
    return 0;
}

/* A tree node's claims: its file bytes are its link's and its children's
 * sum. */
static bool
tree_ok(const struct ms_node *n, const struct ms_link *l, char *why,
        size_t whylen)
{
    uint64_t sum = 0;

    for (uint32_t i = 0; i < n->nlinks; i++) {
        struct ms_link c;

        ms_node_link(n, i, &c);
        sum += c.bytes;
    }
    if (n->kind == MS_TREE && n->bytes == l->bytes && sum == n->bytes)
        return true;
    snprintf(why, whylen,
             "tree node claims %llu bytes, its link %llu, its "
             "children %llu",
             (unsigned long long)n->bytes, (unsigned long long)l->bytes,
             (unsigned long long)sum);
    return false;
}

/* Verify a tree node here and now, keep it, and expect its children. */
static int
take_tree(struct xfer *x, struct ms_block *b, const struct ms_link *l)
{
    struct job j = {NULL, b, *l, x->root, x->seq};
    const struct ms_block *kept;
    uint8_t got[MS_HASH_LEN];
    struct ms_node n;
    char why[200], hex[MS_HEX_LEN];

    if (!ms_block_verify(b, l->hash, got)) {
        mismatch(x->f, &j, got);
        free(b);
        return -1;
    }
    if (ms_node_parse(b, &n, why, sizeof(why)) < 0 ||
        !tree_ok(&n, l, why, sizeof(why))) {
        fail(x->f, false, "round %d, root %d: block %s: %s", x->f->r->n,
             x->root, ms_hex(l->hash, hex), why);
        free(b);
        return -1;
    }
    if ((kept = keep(x->f, b)) == NULL)
        return -1;
    ms_node_parse(kept, &n, why, sizeof(why));
    return push_node(x, &n);
}

static int
take_leaf(struct xfer *x, struct ms_block *b, const struct ms_link *l)
{
    struct job j = {NULL, b, *l, x->root, x->seq};

    if (x->f->workers == 0) {
        verify_leaf(x->f, &j);
        return atomic_load(&x->f->failed) ? -1 : 0;
    }
    return pool_push(x->f, b, l, x->root, x->seq);
}

/* A read failed: the provider went away, or time is up. */
static int
read_failed(struct xfer *x, int rc, const char *what)
{
    struct fetch *f = x->f;

    if (atomic_load(&f->failed))
        return -1;
    return fail(f, rc != -ETIMEDOUT,
                "round %d, root %d: %s the provider "
                "at %s:%d after %llu blocks: %s",
                f->r->n, x->root, what, f->src->host, f->src->port,
                (unsigned long long)x->seq, ms_io_strerror(rc));
}

/* The link naming the block a frame of len bytes carries, checked
 * against the frame; 0, or -1 after fail(). */
static int
expect_block(struct xfer *x, uint32_t len, struct ms_link *l)
{
    struct fetch *f = x->f;
    char want[MS_HEX_LEN];

    if (!next_link(x, l))
        return fail(f, false,
                    "round %d, root %d: the provider sent more than the "
                    "%llu blocks of the DAG",
                    f->r->n, x->root, (unsigned long long)x->seq);
    if (len < 1 + MS_HASH_LEN || len - 1 - MS_HASH_LEN != l->len)
        return fail(f, false,
                    "round %d, root %d: block %s is %u bytes, a frame of %u "
                    "came",
                    f->r->n, x->root, ms_hex(l->hash, want), l->len, len);
    return 0;
}

static int
read_block(struct xfer *x, uint32_t len)
{
    struct fetch *f = x->f;
    uint8_t claimed[MS_HASH_LEN];
    char want[MS_HEX_LEN], sent[MS_HEX_LEN];
    struct ms_link l;
    struct ms_block *b;
    int rc;

    if (expect_block(x, len, &l) < 0)
        return -1;
    if ((b = ms_store_block_new(l.len)) == NULL)
        return fail(f, false, "out of memory for a block");
    x->seq++;
    memcpy(b->hash, l.hash, MS_HASH_LEN);
    b->codec = l.codec;
    if ((rc = ms_read_full(x->fd, claimed, MS_HASH_LEN, f->r->deadline)) < 0 ||
        (rc = ms_read_full(x->fd, b->data, l.len, f->r->deadline)) < 0) {
        free(b);
        return read_failed(x, rc, "reading a block from");
    }
    if (memcmp(claimed, l.hash, MS_HASH_LEN) != 0) {
        free(b);
        return fail(f, false,
                    "round %d, root %d: block #%llu: the provider sent %s "
                    "where the DAG has %s",
                    f->r->n, x->root, (unsigned long long)x->seq,
                    ms_hex(claimed, sent), ms_hex(l.hash, want));
    }
    /* The header is only a hint here: a tree node is verified before its
     * links are used, a leaf in the pool; a lying header fails either. */
    if (l.codec == MS_TYFS && l.len >= MS_HEADER_LEN && b->data[4] == MS_TREE)
        return take_tree(x, b, &l);
    return take_leaf(x, b, &l);
}

static int
read_end(struct xfer *x, uint32_t len)
{
    struct fetch *f = x->f;
    uint8_t body[MS_END_BODY + MS_END_TEXT + 1];
    struct ms_link l;
    int rc;

    if (len < 1 + MS_END_BODY || len > 1 + MS_END_BODY + MS_END_TEXT)
        return fail(f, false, "round %d, root %d: malformed END frame", f->r->n,
                    x->root);
    if ((rc = ms_read_full(x->fd, body, len - 1, f->r->deadline)) < 0)
        return read_failed(x, rc, "reading END from");
    body[len - 1] = '\0';
    if (ms_get32(body) != 0)
        return fail(f, false, "round %d, root %d: the provider refused: %s",
                    f->r->n, x->root, (char *)body + MS_END_BODY);
    if (next_link(x, &l) || ms_get64(body + 4) != x->seq)
        return fail(f, false,
                    "round %d, root %d: the provider ended after "
                    "%llu blocks (it counts %llu) with more of the DAG to "
                    "come",
                    f->r->n, x->root, (unsigned long long)x->seq,
                    (unsigned long long)ms_get64(body + 4));
    return 0;
}

/* Read frames until END: 0, or -1 after fail(). */
static int
receive(struct xfer *x)
{
    for (;;) {
        uint8_t hdr[MS_FRAME_HDR];
        int rc = ms_read_full(x->fd, hdr, sizeof(hdr), x->f->r->deadline);

        if (rc < 0)
            return read_failed(x, rc, "reading from");
        if (hdr[4] == MS_END)
            return read_end(x, ms_get32(hdr));
        if (hdr[4] != MS_BLOCK)
            return fail(x->f, false,
                        "round %d, root %d: unknown frame type "
                        "%u",
                        x->f->r->n, x->root, hdr[4]);
        if (read_block(x, ms_get32(hdr)) < 0)
            return -1;
    }
}

static int
send_get(struct xfer *x)
{
    struct fetch *f = x->f;
    uint8_t buf[MS_FRAME_HDR + MS_GET_BODY];
    int rc;

    ms_put32(buf, 1 + MS_GET_BODY);
    buf[4] = MS_GET;
    ms_put32(buf + MS_FRAME_HDR, (uint32_t)f->r->n);
    ms_put32(buf + MS_FRAME_HDR + 4, (uint32_t)ty_global_index(f->ty));
    ms_put32(buf + MS_FRAME_HDR + 8, (uint32_t)x->root);
    memcpy(buf + MS_FRAME_HDR + 12, f->src->roots[x->root].hash, MS_HASH_LEN);
    rc = ms_write_full(x->fd, buf, sizeof(buf), f->r->deadline);
    return rc < 0 ? read_failed(x, rc, "sending GET to") : 0;
}

static void *
xfer_main(void *arg)
{
    struct xfer *x = arg;
    struct fetch *f = x->f;
    int64_t t0 = ms_now_ns();
    int fd = ms_connect(f->src->host, f->src->port, f->r->deadline);

    if (fd < 0) {
        read_failed(x, fd, "connecting to");
        return NULL;
    }
    pthread_mutex_lock(&f->mu);
    x->fd = f->fds[x->root] = fd;
    if (atomic_load(&f->failed))
        shutdown(fd, SHUT_RDWR);
    pthread_mutex_unlock(&f->mu);
    if (send_get(x) == 0 && receive(x) == 0)
        x->secs = (double)(ms_now_ns() - t0) / 1e9;
    pthread_mutex_lock(&f->mu);
    f->fds[x->root] = -1;
    pthread_mutex_unlock(&f->mu);
    close(fd);
    return NULL;
}

/* ---- the round ----------------------------------------------------------- */

static void
run_transfers(struct fetch *f, struct xfer *xs, int n)
{
    int started = 0;

    for (; started < n; started++) {
        xs[started] = (struct xfer){.f = f, .root = started, .fd = -1};
        if (pthread_create(&xs[started].tid, NULL, xfer_main, &xs[started]) !=
            0) {
            fail(f, false, "cannot start a transfer thread");
            break;
        }
    }
    for (int i = 0; i < started; i++) {
        pthread_join(xs[i].tid, NULL);
        free(xs[i].stack);
    }
}

int
ms_fetch_round(struct ty *ty, const struct ms_config *cfg,
               const struct ms_round *r, const struct ms_source *src,
               struct ms_store *store, struct ms_fetch_result *res)
{
    struct fetch f = {
        .ty = ty, .cfg = cfg, .r = r, .src = src, .store = store, .res = res};
    pthread_t tids[64];
    struct xfer *xs = calloc((size_t)src->nroots, sizeof(*xs));

    f.fds = malloc((size_t)src->nroots * sizeof(int));
    if (xs == NULL || f.fds == NULL) {
        free(xs);
        free(f.fds);
        snprintf(res->why, sizeof(res->why), "out of memory");
        return -1;
    }
    for (int i = 0; i < src->nroots; i++)
        f.fds[i] = -1;
    pthread_mutex_init(&f.mu, NULL);
    f.workers = pool_start(&f, tids, cfg->hash_threads);
    run_transfers(&f, xs, src->nroots);
    pool_finish(&f, tids, f.workers);
    for (int i = 0; i < src->nroots; i++)
        res->secs[i] = xs[i].secs;
    res->blocks = atomic_load(&f.blocks);
    res->bytes = atomic_load(&f.bytes);
    pthread_mutex_destroy(&f.mu);
    free(xs);
    free(f.fds);
    return atomic_load(&f.failed) ? -1 : 0;
}
