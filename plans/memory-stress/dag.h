/*
 * dag.h — blocks, the block store and the DAG format of the memory-stress
 * plan.
 *
 * A file is cut into leaves of 2^chunk_size bytes; leaves are raw (the
 * bytes alone) or wrapped (a 20-byte header, then the bytes). Tree nodes
 * hold the header and up to links_per_level links of 48 bytes. Every block
 * is named by the SHA-256 of its bytes, header included. All integers are
 * big-endian:
 *
 *   header  "tyfs" | kind (1 leaf, 2 tree) | 3 zero bytes |
 *           u32 links (0 for a leaf) | u64 file bytes under the block
 *   link    codec (0 raw, 1 tyfs) | 3 zero bytes | u32 block length |
 *           32-byte SHA-256 | u64 file bytes under the child
 *
 * Ownership: a store owns the blocks put into it and frees them in
 * ms_store_release; ms_store_get's block is borrowed.
 */
#ifndef MS_DAG_H
#define MS_DAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MS_HASH_LEN 32
#define MS_HEX_LEN 65 /* 64 hex digits and a NUL */
#define MS_HEADER_LEN 20
#define MS_LINK_LEN 48

enum ms_codec { MS_RAW = 0, MS_TYFS = 1 };
enum ms_kind { MS_LEAF = 1, MS_TREE = 2 };

/* What a parent says about a child, and what a root announcement says. */
struct ms_link {
    uint8_t hash[MS_HASH_LEN];
    uint32_t len;   /* the block's length in bytes */
    uint8_t codec;  /* enum ms_codec */
    uint64_t bytes; /* file bytes under the block */
};

/* One block: its name, codec and bytes in a single allocation. */
struct ms_block {
    uint8_t hash[MS_HASH_LEN];
    uint32_t len;
    uint8_t codec;
    uint8_t data[];
};

/* A decoded tyfs header; links points into the block. */
struct ms_node {
    int kind;
    uint32_t nlinks;
    uint64_t bytes;
    const uint8_t *links;
};

/* Blocks by hash: open addressing over the first 8 bytes of the hash. */
struct ms_store {
    struct ms_block **slots;
    size_t cap, count;
    uint64_t bytes;
};

/* How to build one file's DAG. */
struct ms_dag_spec {
    uint64_t size;       /* file bytes */
    unsigned chunk_log2; /* leaves of 2^chunk_log2 bytes */
    uint32_t links;      /* at most this many links per tree node */
    bool raw_leaves;     /* raw leaves, else wrapped in a tyfs header */
    int threads;         /* threads that fill and hash leaves */
    uint64_t seed;       /* the file's random bytes follow from it */
};

/* Big-endian integers in and out of bytes. */
void ms_put32(uint8_t *p, uint32_t v);
void ms_put64(uint8_t *p, uint64_t v);
uint32_t ms_get32(const uint8_t *p);
uint64_t ms_get64(const uint8_t *p);

/* Whether SHA-256 of the block's bytes is `hash`; the digest is in got. */
bool ms_block_verify(const struct ms_block *b, const uint8_t *hash,
                     uint8_t got[MS_HASH_LEN]);
/* Decode a tyfs block: 0, or -1 with why filled in. */
int ms_node_parse(const struct ms_block *b, struct ms_node *n, char *why,
                  size_t whylen);
/* The i-th link of a tree node. */
void ms_node_link(const struct ms_node *n, uint32_t i, struct ms_link *out);
/* The link that names block b (bytes: the file bytes under it). */
void ms_link_of(const struct ms_block *b, uint64_t bytes, struct ms_link *out);
/* Lower-case hex of a hash into out (MS_HEX_LEN bytes); returns out. */
char *ms_hex(const uint8_t *hash, char *out);
/* Parse 64 hex digits; 0 or -1. */
int ms_unhex(const char *s, uint8_t *hash);

/* Build one file's DAG into store and set *root; *nblocks gets how many
 * blocks it made. 0, or -1 with why filled in (out of memory). */
int ms_dag_build(const struct ms_dag_spec *spec, struct ms_store *store,
                 struct ms_link *root, uint64_t *nblocks, char *why,
                 size_t whylen);

void ms_store_init(struct ms_store *s);
/* A block of len bytes with room for its data (hash and codec unset), or
 * NULL when out of memory; free it with free(), or put it in a store. Every
 * block of both roles comes from here (store.c), so heap profiles name one
 * site for the round's blocks. */
struct ms_block *ms_store_block_new(uint32_t len);
/* Take ownership of b and return the block now stored under its hash: b,
 * or the one already there (b is then freed). NULL when out of memory (b
 * is freed too). */
const struct ms_block *ms_store_put(struct ms_store *s, struct ms_block *b);
const struct ms_block *ms_store_get(const struct ms_store *s,
                                    const uint8_t *hash);
/* Free every block and the table. */
void ms_store_release(struct ms_store *s);

#endif
