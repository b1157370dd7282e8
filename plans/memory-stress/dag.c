/*
 * dag.c — how the provider turns `size` random bytes into a balanced DAG of
 * hashed blocks, and how both roles read tyfs blocks (format in dag.h).
 *
 * Leaves are independent, so they are filled and hashed by several threads
 * at once: leaf i's bytes come from its own xoshiro256** stream seeded from
 * the file's seed and i, which keeps the file the same whatever the thread
 * count. Tree nodes are then built level by level from the left, at most
 * `links` children each, until one block is left: the root (a file of one
 * leaf has that leaf as its root). Every leaf sits at the same depth.
 */
#include "dag.h"

#include <testyard.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t magic[4] = {'t', 'y', 'f', 's'};

void
ms_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

void
ms_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
}

uint32_t
ms_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

uint64_t
ms_get64(const uint8_t *p)
{
    return (uint64_t)ms_get32(p) << 32 | ms_get32(p + 4);
}

bool
ms_block_verify(const struct ms_block *b, const uint8_t *hash,
                uint8_t got[MS_HASH_LEN])
{
    ty_sha256(b->data, b->len, got);
    return memcmp(got, hash, MS_HASH_LEN) == 0;
}

static void
header_put(uint8_t *p, int kind, uint32_t nlinks, uint64_t bytes)
{
    memcpy(p, magic, 4);
    p[4] = (uint8_t)kind;
    p[5] = p[6] = p[7] = 0;
    ms_put32(p + 8, nlinks);
    ms_put64(p + 12, bytes);
}

int
ms_node_parse(const struct ms_block *b, struct ms_node *n, char *why,
              size_t whylen)
{
    const uint8_t *p = b->data;

    if (b->len < MS_HEADER_LEN || memcmp(p, magic, 4) != 0)
        return snprintf(why, whylen, "not a tyfs block"), -1;
    n->kind = p[4];
    n->nlinks = ms_get32(p + 8);
    n->bytes = ms_get64(p + 12);
    n->links = p + MS_HEADER_LEN;
    if (n->kind == MS_LEAF && n->nlinks == 0 &&
        n->bytes == b->len - MS_HEADER_LEN)
        return 0;
    if (n->kind == MS_TREE && n->nlinks > 0 &&
        (uint64_t)n->nlinks * MS_LINK_LEN == b->len - MS_HEADER_LEN)
        return 0;
    snprintf(why, whylen,
             "bad tyfs header (kind %d, %u links, %llu bytes "
             "in a %u-byte block)",
             n->kind, n->nlinks, (unsigned long long)n->bytes, b->len);
    return -1;
}

void
ms_node_link(const struct ms_node *n, uint32_t i, struct ms_link *out)
{
    const uint8_t *p = n->links + (size_t)i * MS_LINK_LEN;

    out->codec = p[0];
    out->len = ms_get32(p + 4);
    memcpy(out->hash, p + 8, MS_HASH_LEN);
    out->bytes = ms_get64(p + 40);
}

static void
link_put(uint8_t *p, const struct ms_link *l)
{
    p[0] = l->codec;
    p[1] = p[2] = p[3] = 0;
    ms_put32(p + 4, l->len);
    memcpy(p + 8, l->hash, MS_HASH_LEN);
    ms_put64(p + 40, l->bytes);
}

void
ms_link_of(const struct ms_block *b, uint64_t bytes, struct ms_link *out)
{
    memcpy(out->hash, b->hash, MS_HASH_LEN);
    out->len = b->len;
    out->codec = b->codec;
    out->bytes = bytes;
}

char *
ms_hex(const uint8_t *hash, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (int i = 0; i < MS_HASH_LEN; i++) {
        out[2 * i] = digits[hash[i] >> 4];
        out[2 * i + 1] = digits[hash[i] & 15];
    }
    out[2 * MS_HASH_LEN] = '\0';
    return out;
}

static int
nibble(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int
ms_unhex(const char *s, uint8_t *hash)
{
    if (strlen(s) != 2 * MS_HASH_LEN)
        return -1;
    for (int i = 0; i < MS_HASH_LEN; i++) {
        int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);

        if (hi < 0 || lo < 0)
            return -1;
        hash[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

/* ---- random bytes: splitmix64 seeds a xoshiro256** stream per leaf ------- */

static uint64_t
splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t
rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static void
fill_random(uint8_t *p, size_t len, uint64_t seed)
{
    uint64_t s[4], x = seed;

    for (int i = 0; i < 4; i++)
        s[i] = splitmix64(&x);
    for (size_t off = 0; off < len; off += 8) {
        uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
        size_t n = len - off < 8 ? len - off : 8;

        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        memcpy(p + off, &r, n);
    }
}

/* ---- leaves, in parallel ------------------------------------------------- */

struct leaf_job {
    const struct ms_dag_spec *spec;
    struct ms_block **leaves;
    struct ms_link *links;
    uint64_t nleaves;
    int stride, first;
    bool failed;
};

static struct ms_block *
make_leaf(const struct ms_dag_spec *spec, uint64_t i, uint64_t *bytes)
{
    uint64_t chunk = 1ULL << spec->chunk_log2, off = i * chunk;
    uint64_t n = spec->size - off < chunk ? spec->size - off : chunk;
    uint32_t hdr = spec->raw_leaves ? 0 : MS_HEADER_LEN;
    struct ms_block *b = ms_store_block_new((uint32_t)(n + hdr));

    if (b == NULL)
        return NULL;
    b->codec = spec->raw_leaves ? MS_RAW : MS_TYFS;
    if (!spec->raw_leaves)
        header_put(b->data, MS_LEAF, 0, n);
    fill_random(b->data + hdr, n, spec->seed * 0x100000001b3ULL + i);
    ty_sha256(b->data, b->len, b->hash);
    *bytes = n;
    return b;
}

static void *
leaf_worker(void *arg)
{
    struct leaf_job *j = arg;

    for (uint64_t i = (uint64_t)j->first; i < j->nleaves && !j->failed;
         i += (uint64_t)j->stride) {
        uint64_t bytes = 0;
        struct ms_block *b = make_leaf(j->spec, i, &bytes);

        if (b == NULL) {
            j->failed = true;
            break;
        }
        j->leaves[i] = b;
        ms_link_of(b, bytes, &j->links[i]);
    }
    return NULL;
}

static int
make_leaves(const struct ms_dag_spec *spec, struct ms_block **leaves,
            struct ms_link *links, uint64_t nleaves)
{
    struct leaf_job jobs[64];
    pthread_t tids[64];
    bool created[64] = {false};
    int nt = spec->threads < 1 ? 1 : spec->threads, rc = 0;

    if (nt > 64)
        nt = 64;
    if ((uint64_t)nt > nleaves)
        nt = (int)nleaves;
    for (int t = 0; t < nt; t++) {
        jobs[t] = (struct leaf_job){spec, leaves, links, nleaves, nt, t, false};
        if (t > 0)
            created[t] =
                pthread_create(&tids[t], NULL, leaf_worker, &jobs[t]) == 0;
    }
    /* The calling thread takes the first share, and any share whose
     * thread could not start. */
    for (int t = 0; t < nt; t++)
        if (!created[t])
            leaf_worker(&jobs[t]);
    for (int t = 0; t < nt; t++) {
        if (created[t])
            pthread_join(tids[t], NULL);
        rc |= jobs[t].failed ? -1 : 0;
    }
    return rc;
}

/* ---- tree levels --------------------------------------------------------- */

static struct ms_block *
make_tree(const struct ms_link *kids, uint32_t n, uint64_t *bytes)
{
    struct ms_block *b = ms_store_block_new(MS_HEADER_LEN + n * MS_LINK_LEN);
    uint64_t sum = 0;

    if (b == NULL)
        return NULL;
    for (uint32_t i = 0; i < n; i++) {
        link_put(b->data + MS_HEADER_LEN + (size_t)i * MS_LINK_LEN, &kids[i]);
        sum += kids[i].bytes;
    }
    header_put(b->data, MS_TREE, n, sum);
    b->codec = MS_TYFS;
    ty_sha256(b->data, b->len, b->hash);
    *bytes = sum;
    return b;
}

/* Replace the n links of one level by those of the level above; returns
 * the new count, or 0 when out of memory. */
static uint64_t
level_up(struct ms_store *store, struct ms_link *level, uint64_t n,
         uint32_t width, uint64_t *nblocks)
{
    uint64_t up = 0;

    for (uint64_t i = 0; i < n; i += width, up++) {
        uint32_t k = n - i < width ? (uint32_t)(n - i) : width;
        uint64_t bytes = 0;
        struct ms_block *b = make_tree(level + i, k, &bytes);
        struct ms_link l;

        if (b == NULL)
            return 0;
        ms_link_of(b, bytes, &l);
        if (ms_store_put(store, b) == NULL)
            return 0;
        level[up] = l; /* up <= i: nothing unread is overwritten */
        (*nblocks)++;
    }
    return up;
}

static int
store_leaves(struct ms_store *store, struct ms_block **leaves, uint64_t n)
{
    int rc = 0;

    for (uint64_t i = 0; i < n; i++) {
        if (rc == 0 && ms_store_put(store, leaves[i]) == NULL)
            rc = -1;
        else if (rc != 0)
            free(leaves[i]);
        leaves[i] = NULL;
    }
    return rc;
}

int
ms_dag_build(const struct ms_dag_spec *spec, struct ms_store *store,
             struct ms_link *root, uint64_t *nblocks, char *why, size_t whylen)
{
    uint64_t chunk = 1ULL << spec->chunk_log2;
    uint64_t n = spec->size ? (spec->size + chunk - 1) / chunk : 1;
    struct ms_block **leaves = calloc(n, sizeof(*leaves));
    struct ms_link *level = calloc(n, sizeof(*level));
    int rc = leaves && level ? make_leaves(spec, leaves, level, n) : -1;

    if (leaves != NULL)
        rc |= store_leaves(store, leaves, rc == 0 ? n : 0);
    if (rc != 0 && leaves != NULL)
        for (uint64_t i = 0; i < n; i++)
            free(leaves[i]);
    *nblocks = rc == 0 ? n : 0;
    while (rc == 0 && n > 1)
        if ((n = level_up(store, level, n, spec->links, nblocks)) == 0)
            rc = -1;
    if (rc == 0)
        *root = level[0];
    else
        snprintf(why, whylen, "out of memory building a DAG of %llu bytes",
                 (unsigned long long)spec->size);
    free(leaves);
    free(level);
    return rc;
}
