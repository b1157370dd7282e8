/*
 * record.c — the record of kvlog's state files (kv.h says their shape)
 * and the reading of its two files: the log, record after record up to
 * the first one a crash left torn, and the snapshot, slot by slot over
 * the parts of the file that hold data (its holes are keys never
 * written, and reading them would cost as much as the data itself).
 */
#define _GNU_SOURCE
#include "kv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCAN_RECORDS 256 /* records read at once */

static uint32_t crc_table[256];

static void
crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;

        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

uint32_t
kv_crc32(uint32_t crc, const void *p, size_t n)
{
    const unsigned char *b = p;

    if (crc_table[1] == 0)
        crc_init();
    crc = ~crc;
    while (n-- > 0)
        crc = crc_table[(crc ^ *b++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* The CRC of a record: its header with crc 0, then its value. */
static uint32_t
rec_crc(const struct kv_rec *h, const void *v)
{
    struct kv_rec z = *h;

    z.crc = 0;
    return kv_crc32(kv_crc32(0, &z, sizeof(z)), v, h->vlen);
}

void
kv_value_fill(void *v, size_t n, uint64_t seq)
{
    uint64_t x = seq * 0x9e3779b97f4a7c15ull + 1;
    unsigned char *b = v;

    for (size_t i = 0; i < n; i++) {
        if (i % 8 == 0) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        b[i] = (unsigned char)(x >> (i % 8 * 8));
    }
}

void
kv_rec_make(void *buf, const struct kv_geom *g, uint32_t key, uint64_t seq)
{
    struct kv_rec h = {KV_MAGIC, key, g->value_size, 0, seq};
    char *v = (char *)buf + sizeof(h);

    kv_value_fill(v, g->value_size, seq);
    h.crc = rec_crc(&h, v);
    memcpy(buf, &h, sizeof(h));
}

bool
kv_rec_valid(const void *buf, const struct kv_geom *g)
{
    struct kv_rec h;

    memcpy(&h, buf, sizeof(h));
    return h.magic == KV_MAGIC && h.vlen == g->value_size && h.key < g->keys &&
           h.seq > 0 && h.crc == rec_crc(&h, (const char *)buf + sizeof(h));
}

/* ---- file helpers ----------------------------------------------------- */

int
kv_pread_full(int fd, void *buf, size_t n, off_t off, size_t *got)
{
    size_t done = 0;

    *got = 0;
    while (done < n) {
        ssize_t r = pread(fd, (char *)buf + done, n - done, off + (off_t)done);

        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            break;
        done += (size_t)r;
    }
    *got = done;
    return 0;
}

int
kv_write_full(int fd, const void *buf, size_t n, off_t off)
{
    size_t done = 0;

    while (done < n) {
        const char *p = (const char *)buf + done;
        ssize_t r = off < 0 ? write(fd, p, n - done)
                            : pwrite(fd, p, n - done, off + (off_t)done);

        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        done += (size_t)r;
    }
    return 0;
}

int
kv_sync_dir(int dirfd)
{
    return fsync(dirfd) < 0 ? -errno : 0;
}

/* ---- the log ---------------------------------------------------------- */

/* Hand each intact record of buf (n bytes) to fn; *whole: all were. */
static int64_t
scan_buf(const char *buf, size_t n, const struct kv_geom *g, kv_rec_fn fn,
         void *arg, bool *whole)
{
    size_t rs = kv_rec_size(g);
    int64_t k = 0;

    *whole = true;
    for (size_t at = 0; at < n; at += rs, k++) {
        struct kv_rec h;
        int rc;

        if (n - at < rs || !kv_rec_valid(buf + at, g)) {
            *whole = false;
            break;
        }
        memcpy(&h, buf + at, sizeof(h));
        rc = fn(arg, &h, buf + at + sizeof(h));
        if (rc < 0)
            return rc;
    }
    return k;
}

int64_t
kv_log_scan(int fd, const struct kv_geom *g, kv_rec_fn fn, void *arg,
            off_t *valid_end)
{
    size_t rs = kv_rec_size(g), cap = rs * SCAN_RECORDS, got = 0;
    char *buf = malloc(cap);
    int64_t total = 0;
    bool whole = true;
    int rc = 0;

    *valid_end = 0;
    if (buf == NULL)
        return -ENOMEM;
    while (whole) {
        int64_t k;

        rc = kv_pread_full(fd, buf, cap, *valid_end, &got);
        if (rc < 0 || got == 0)
            break;
        k = scan_buf(buf, got, g, fn, arg, &whole);
        if (k < 0) {
            rc = (int)k;
            break;
        }
        total += k;
        *valid_end += (off_t)((size_t)k * rs);
    }
    free(buf);
    return rc < 0 ? rc : total;
}

/* ---- the snapshot ----------------------------------------------------- */

static int
snap_header(int fd, const struct kv_geom *g, uint64_t *seq, char *err,
            size_t errlen)
{
    struct kv_snap_hdr h;
    size_t got = 0;
    int rc = kv_pread_full(fd, &h, sizeof(h), 0, &got);

    if (rc < 0)
        return rc;
    if (got < sizeof(h) || memcmp(h.magic, KV_SNAP_MAGIC, 8) != 0) {
        snprintf(err, errlen, "not a kvlog snapshot");
        return -EINVAL;
    }
    if (h.value_size != g->value_size || h.keys != g->keys) {
        snprintf(err, errlen,
                 "written with value_size %u and keys %u; this run has "
                 "value_size %u and keys %u (start from an empty state "
                 "folder to change them)",
                 h.value_size, h.keys, g->value_size, g->keys);
        return -EINVAL;
    }
    *seq = h.seq;
    return 0;
}

/* The slot whose bytes hold offset off, rounded down, and its number. */
static off_t
slot_floor(const struct kv_geom *g, off_t off, uint32_t *key)
{
    off_t rs = (off_t)kv_rec_size(g);

    if (off < KV_SNAP_HDR)
        off = KV_SNAP_HDR;
    *key = (uint32_t)((off - KV_SNAP_HDR) / rs);
    return kv_slot_offset(g, *key);
}

/* The slots from offset from up to the hole at `to`: intact ones that sit
 * at their own key's offset go to fn. */
static int64_t
scan_extent(int fd, const struct kv_geom *g, off_t from, off_t to, kv_rec_fn fn,
            void *arg)
{
    size_t rs = kv_rec_size(g), got = 0;
    char *slot = malloc(rs);
    uint32_t key;
    int64_t n = 0;
    int rc = 0;

    if (slot == NULL)
        return -ENOMEM;
    for (off_t at = slot_floor(g, from, &key); at < to && key < g->keys;
         at += (off_t)rs, key++) {
        struct kv_rec h;

        rc = kv_pread_full(fd, slot, rs, at, &got);
        if (rc < 0 || got < rs)
            break;
        memcpy(&h, slot, sizeof(h));
        if (!kv_rec_valid(slot, g) || h.key != key)
            continue;
        rc = fn(arg, &h, slot + sizeof(h));
        if (rc < 0)
            break;
        n++;
    }
    free(slot);
    return rc < 0 ? rc : n;
}

int64_t
kv_snap_scan(int fd, const struct kv_geom *g, kv_rec_fn fn, void *arg,
             uint64_t *seq, char *err, size_t errlen)
{
    off_t end = lseek(fd, 0, SEEK_END), data = KV_SNAP_HDR;
    int64_t total = 0;
    int rc = snap_header(fd, g, seq, err, errlen);

    if (rc < 0)
        return rc;
    while (data < end) {
        off_t hole;
        int64_t k;

        data = lseek(fd, data, SEEK_DATA);
        if (data < 0) /* ENXIO: no data after; EINVAL: no SEEK_DATA */
            break;
        hole = lseek(fd, data, SEEK_HOLE);
        if (hole < 0)
            hole = end;
        k = scan_extent(fd, g, data, hole, fn, arg);
        if (k < 0)
            return k;
        total += k;
        data = hole;
    }
    if (data < 0 && errno == EINVAL)
        return scan_extent(fd, g, KV_SNAP_HDR, end, fn, arg);
    return total;
}
