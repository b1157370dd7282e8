/*
 * kv.h — what the kvlog plan's files share: the record both files of the
 * state folder hold, the in-memory table, the server and the compactor.
 *
 * The state folder (state/ under the instance's outputs, so a restarted
 * instance finds it again) holds:
 *
 *   log           every put appended as a record, fsync'd per batch
 *   log.old       the log as it was when a compaction began (the server
 *                 renamed it and went on in a fresh log); removed once
 *                 the compaction has made it part of the snapshot
 *   snapshot      one slot per key at a fixed offset, written by the
 *                 compactor: keys never written are holes (sparse)
 *   snapshot.tmp  the compaction under way, renamed over snapshot
 *   compact.lock  held by the compactor while it compacts and by the
 *                 server while it replays, so neither sees half of the
 *                 other's work
 *
 * A record and a slot have the same shape: a 24-byte header (magic, key,
 * value length, CRC-32 of the rest, sequence number) and value_size
 * bytes. Every put has the next sequence number (counted across restarts:
 * replay goes on from the highest it read), and the newest of two records
 * of one key wins wherever it was read, so reading a record twice or out
 * of order changes nothing: a compaction cut short is simply done again.
 *
 * main.c has the cases; server.c the server (replay, puts, the worker);
 * replay.c reads the state folder; compact.c is the worker's program;
 * table.c the hash table; record.c the record and file helpers.
 */
#ifndef KV_H
#define KV_H

#include <testyard.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KV_MAGIC 0x314c564bu /* "KVL1" */
#define KV_SNAP_MAGIC "KVLOGSN1"
#define KV_SNAP_HDR 4096 /* the snapshot's header block; slots follow */
#define KV_MAX_VALUE (1u << 20)
#define KV_MAX_KEYS (1u << 26)
#define KV_COMM "kvlog"
#define KV_COMPACT_COMM "kvlog-compact"
#define KV_COMPACT_ARG "compact" /* argv[1] of the worker's program */
#define KV_ERR_LEN 256

/* ---- records (record.c) ----------------------------------------------- */

struct kv_rec {
    uint32_t magic, key, vlen, crc;
    uint64_t seq;
};

/* The shape every record and slot of a state folder has. */
struct kv_geom {
    uint32_t value_size; /* bytes of every value */
    uint32_t keys;       /* key space: keys are 0 .. keys - 1 */
};

/* The snapshot's header (at offset 0, KV_SNAP_HDR bytes reserved). */
struct kv_snap_hdr {
    char magic[8];
    uint32_t version, value_size, keys, pad;
    uint64_t seq; /* the highest sequence number the snapshot holds */
};

static inline size_t
kv_rec_size(const struct kv_geom *g)
{
    return sizeof(struct kv_rec) + g->value_size;
}

static inline off_t
kv_slot_offset(const struct kv_geom *g, uint32_t key)
{
    return (off_t)KV_SNAP_HDR + (off_t)key * (off_t)kv_rec_size(g);
}

uint32_t kv_crc32(uint32_t crc, const void *p, size_t n);
/* Fill buf (kv_rec_size bytes) with the record of key's put number seq:
 * its value is a function of seq alone, so a reader can check it. */
void kv_rec_make(void *buf, const struct kv_geom *g, uint32_t key,
                 uint64_t seq);
void kv_value_fill(void *v, size_t n, uint64_t seq);
/* Whether buf holds a whole, intact record of geometry g. */
bool kv_rec_valid(const void *buf, const struct kv_geom *g);

/* Called for each intact record read; returns 0 to go on, < 0 to stop
 * (that value is returned). */
typedef int (*kv_rec_fn)(void *arg, const struct kv_rec *h, const void *v);

/* Read the log at fd from its start, record after record, calling fn for
 * each; stop at the first one that is not whole and intact (a torn last
 * write). *valid_end: the offset after the last intact record. Returns
 * the records read or -errno. */
int64_t kv_log_scan(int fd, const struct kv_geom *g, kv_rec_fn fn, void *arg,
                    off_t *valid_end);
/* Read the intact slots of a snapshot, skipping its holes. Returns the
 * slots read, -EINVAL when it is not a snapshot of geometry g (err says
 * why), or -errno. */
int64_t kv_snap_scan(int fd, const struct kv_geom *g, kv_rec_fn fn, void *arg,
                     uint64_t *seq, char *err, size_t errlen);

int kv_pread_full(int fd, void *buf, size_t n, off_t off, size_t *got);
/* All of buf at offset off, or where the file is (off < 0: an append). */
int kv_write_full(int fd, const void *buf, size_t n, off_t off);
/* fsync the folder at dirfd (after a rename or an unlink in it). */
int kv_sync_dir(int dirfd);

/* ---- the table (table.c) ---------------------------------------------- */

struct kv_entry {
    uint32_t key, used;
    uint64_t seq;
    char *value;
};

/* Open addressing over keys, each value a copy of its own. */
struct kv_table {
    struct kv_entry *e;
    size_t cap, n; /* slots (a power of 2), keys held */
    size_t vsize;
};

void kv_table_init(struct kv_table *t, size_t value_size);
void kv_table_release(struct kv_table *t);
/* Keep (key, seq, v) unless the table holds key at a newer seq. 0, or
 * -ENOMEM. */
int kv_table_put(struct kv_table *t, uint32_t key, uint64_t seq, const void *v);
const struct kv_entry *kv_table_get(const struct kv_table *t, uint32_t key);

/* ---- replay (replay.c) ------------------------------------------------ */

struct kv_replay {
    int64_t snap_slots, old_records, log_records;
    off_t torn_bytes;    /* cut off the log's end */
    bool old_log;        /* log.old was there: a compaction to finish */
    uint64_t seq;        /* the highest sequence number read */
    double seconds;      /* all of it, lock_seconds included */
    double lock_seconds; /* waiting for compact.lock (a last worker) */
};

/* Read snapshot, log.old and log of the folder at dirfd into t, cutting
 * a torn end off log. 0, or -errno with err. */
int kv_replay(int dirfd, const struct kv_geom *g, struct kv_table *t,
              struct kv_replay *r, char *err, size_t errlen);

/* ---- the server (server.c) -------------------------------------------- */

struct kv_config {
    struct kv_geom g;
    double rate;
    int64_t duration_ns;
    int64_t compact_every; /* puts; 0 = by max_log only */
    int64_t max_log;       /* bytes; 0 = by compact_every only */
    int64_t batch;         /* puts per fsync */
    int64_t gets;          /* gets after each put */
};

struct kv_server;

/* Open (making it) the state folder dir, replay it and start the worker.
 * NULL with err. */
struct kv_server *kv_server_open(struct ty *ty, const char *dir,
                                 const struct kv_config *c, char *err,
                                 size_t errlen);
const struct kv_replay *kv_server_replayed(const struct kv_server *s);
const struct kv_table *kv_server_table(const struct kv_server *s);
uint64_t kv_server_seq(const struct kv_server *s);
/* One put of a random key (and c->gets gets): 0, or -1 with err set. */
int kv_server_put(struct kv_server *s, uint32_t key);
uint32_t kv_server_random_key(struct kv_server *s);
/* Wait (timeout_ms at most) until no compaction is under way. */
int kv_server_settle(struct kv_server *s, int64_t timeout_ms);
/* What went wrong, "" when nothing. */
const char *kv_server_error(const struct kv_server *s);
int64_t kv_server_compactions(const struct kv_server *s);
/* Sync the log, end the worker, free. 0, or -1 when a step failed
 * (kv_server_error says which) — s is freed all the same. */
int kv_server_close(struct kv_server **s, char *err, size_t errlen);

/* ---- the worker (compact.c) ------------------------------------------- */

/* The worker's program: argv = [name, "compact", dir, value_size, keys]. */
int kv_compact_main(int argc, char **argv);

#endif
