/*
 * tar.c — the streaming tar writer (see base/tar.h).
 *
 * Every entry is a 512-byte ustar header followed by its data padded to a
 * 512-byte boundary. What ustar cannot express (a path that does not split
 * into a 155-byte prefix and a 100-byte name, a link target over 100 bytes,
 * a size of 8 GiB or more, an mtime or id out of octal range) goes into a
 * pax 'x' header written just before the entry, as POSIX.1-2001 specifies.
 * Output is collected in one buffer and handed to the sink when full; with
 * gzip it goes through deflate with a gzip wrapper (windowBits 15 + 16).
 */
#include "base/tar.h"

#include "base/log.h"
#include "base/strbuf.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define BLOCK 512
#define OUTBUF (64 * 1024)

struct tar {
    int (*write)(void *arg, const void *data, size_t len, struct err *err);
    void *arg;
    int fd;
    bool gzip;
    bool failed;
    bool finished;
    z_stream z;
    unsigned char out[OUTBUF];
    size_t out_len;
    uint64_t entries;
    uint64_t bytes_out;
};

/* ustar header layout (POSIX.1-1988 with the ustar extensions). */
struct ustar {
    char name[100];
    char mode[8];
    char uid[8];
    char gid[8];
    char size[12];
    char mtime[12];
    char chksum[8];
    char typeflag;
    char linkname[100];
    char magic[6];
    char version[2];
    char uname[32];
    char gname[32];
    char devmajor[8];
    char devminor[8];
    char prefix[155];
    char pad[12];
};

_Static_assert(sizeof(struct ustar) == BLOCK, "ustar header is one block");

static int
fd_write(void *arg, const void *data, size_t len, struct err *err)
{
    if (fd_write_all(*(int *)arg, data, len) < 0)
        return err_sys(err, errno, "writing archive");
    return 0;
}

static struct tar *
tar_alloc(bool gzip)
{
    struct tar *t = xcalloc(1, sizeof(*t));

    t->gzip = gzip;
    t->fd = -1;
    /* deflateInit2 fails only for bad arguments or out of memory. */
    if (gzip && deflateInit2(&t->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16,
                             8, Z_DEFAULT_STRATEGY) != Z_OK)
        fatalx("zlib: deflateInit2 failed");
    return t;
}

struct tar *
tar_new_fd(int fd, bool gzip)
{
    struct tar *t = tar_alloc(gzip);

    t->fd = fd;
    t->write = fd_write;
    t->arg = &t->fd;
    return t;
}

struct tar *
tar_new_cb(int (*write)(void *arg, const void *data, size_t len,
                        struct err *err),
           void *arg, bool gzip)
{
    struct tar *t = tar_alloc(gzip);

    t->write = write;
    t->arg = arg;
    return t;
}

void
tar_destroy(struct tar **tp)
{
    struct tar *t = *tp;

    if (t == NULL)
        return;
    if (t->gzip)
        deflateEnd(&t->z);
    free(t);
    *tp = NULL;
}

uint64_t
tar_entries(const struct tar *t)
{
    return t->entries;
}

uint64_t
tar_bytes_out(const struct tar *t)
{
    return t->bytes_out;
}

/* Hand the output buffer to the sink. */
static int
flush_out(struct tar *t, struct err *err)
{
    if (t->out_len == 0)
        return 0;
    if (t->write(t->arg, t->out, t->out_len, err) < 0) {
        t->failed = true;
        return -1;
    }
    t->bytes_out += t->out_len;
    t->out_len = 0;
    return 0;
}

/* Run deflate over the input set in t->z until it is consumed (or, with
 * Z_FINISH, until the stream ends), flushing full buffers. */
static int
deflate_run(struct tar *t, int flush, struct err *err)
{
    int rc;

    do {
        t->z.next_out = t->out + t->out_len;
        t->z.avail_out = (uInt)(OUTBUF - t->out_len);
        rc = deflate(&t->z, flush);
        if (rc == Z_STREAM_ERROR) {
            t->failed = true;
            return err_set(err, EIO, "gzip: deflate failed");
        }
        t->out_len = OUTBUF - t->z.avail_out;
        if (t->out_len == OUTBUF && flush_out(t, err) < 0)
            return -1;
    } while (t->z.avail_in > 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    return 0;
}

/* Append raw archive bytes (before compression). */
static int
emit(struct tar *t, const void *data, size_t len, struct err *err)
{
    const unsigned char *p = data;

    if (t->gzip) {
        t->z.next_in = (Bytef *)(uintptr_t)p;
        t->z.avail_in = (uInt)len;
        return deflate_run(t, Z_NO_FLUSH, err);
    }
    while (len > 0) {
        size_t n = OUTBUF - t->out_len;

        if (n > len)
            n = len;
        memcpy(t->out + t->out_len, p, n);
        t->out_len += n;
        p += n;
        len -= n;
        if (t->out_len == OUTBUF && flush_out(t, err) < 0)
            return -1;
    }
    return 0;
}

static int
emit_padding(struct tar *t, uint64_t size, struct err *err)
{
    static const char zeros[BLOCK];
    size_t rest = (size_t)(size % BLOCK);

    return rest ? emit(t, zeros, BLOCK - rest, err) : 0;
}

static int
check_usable(struct tar *t, struct err *err)
{
    if (t->failed)
        return err_set(err, EIO, "archive writer failed earlier");
    if (t->finished)
        return err_set(err, EINVAL, "archive already finished");
    return 0;
}

/* Write v as octal into a field of `size` bytes (NUL-terminated); false
 * when it does not fit, in which case the caller uses pax. */
static bool
octal(char *field, size_t size, uint64_t v)
{
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%0*llo", (int)size - 1,
                     (unsigned long long)v);

    if (n < 0 || (size_t)n > size - 1)
        return false;
    memcpy(field, buf, (size_t)n + 1);
    return true;
}

static size_t
ndigits(size_t n)
{
    size_t d = 1;

    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

/* One pax record: "<len> <key>=<value>\n", len counting itself. */
static void
pax_record(struct strbuf *sb, const char *key, const char *val)
{
    size_t base = strlen(key) + strlen(val) + 3;
    size_t len = base + 1;

    while (len != base + ndigits(len))
        len = base + ndigits(len);
    strbuf_addf(sb, "%zu %s=%s\n", len, key, val);
}

/* Put name into the header, splitting it into prefix and name where
 * possible; false when it needs a pax path record. */
static bool
set_name(struct ustar *h, const char *name)
{
    size_t len = strlen(name);

    if (len <= sizeof(h->name)) {
        memcpy(h->name, name, len);
        return true;
    }
    for (size_t i = len - 1; i > 0; i--) {
        if (name[i] != '/' || i > sizeof(h->prefix) || i == len - 1)
            continue;
        if (len - i - 1 > sizeof(h->name))
            return false;
        memcpy(h->prefix, name, i);
        memcpy(h->name, name + i + 1, len - i - 1);
        return true;
    }
    return false;
}

static void
checksum(struct ustar *h)
{
    const unsigned char *p = (const unsigned char *)h;
    unsigned sum = 0;

    memset(h->chksum, ' ', sizeof(h->chksum));
    for (size_t i = 0; i < sizeof(*h); i++)
        sum += p[i];
    snprintf(h->chksum, sizeof(h->chksum), "%06o", sum);
    h->chksum[7] = ' ';
}

static void
base_header(struct ustar *h, char type, const char *pax_name)
{
    memset(h, 0, sizeof(*h));
    h->typeflag = type;
    memcpy(h->magic, "ustar", 6);
    memcpy(h->version, "00", 2);
    if (pax_name != NULL)
        set_name(h, pax_name);
}

/* The name of a pax header entry: "PaxHeaders/<last part of name>". */
static void
pax_entry_name(char *buf, size_t size, const char *name)
{
    const char *base = strrchr(name, '/');
    size_t blen;

    base = base && base[1] ? base + 1 : name;
    blen = strlen(base);
    if (blen > 80)
        base += blen - 80;
    snprintf(buf, size, "PaxHeaders/%s", base);
}

static int
write_pax(struct tar *t, const char *name, const struct strbuf *recs,
          struct err *err)
{
    struct ustar h;
    char pname[100];

    pax_entry_name(pname, sizeof(pname), name);
    base_header(&h, 'x', pname);
    octal(h.mode, sizeof(h.mode), 0644);
    octal(h.uid, sizeof(h.uid), 0);
    octal(h.gid, sizeof(h.gid), 0);
    octal(h.size, sizeof(h.size), recs->len);
    octal(h.mtime, sizeof(h.mtime), 0);
    checksum(&h);
    if (emit(t, &h, sizeof(h), err) < 0 ||
        emit(t, recs->buf, recs->len, err) < 0)
        return -1;
    return emit_padding(t, recs->len, err);
}

/* Fill the numeric fields, adding pax records for what does not fit. */
static void
set_numbers(struct ustar *h, const struct tar_meta *m, uint64_t size,
            struct strbuf *pax)
{
    char v[32];

    octal(h->mode, sizeof(h->mode), m->mode & 07777);
    if (!octal(h->uid, sizeof(h->uid), m->uid)) {
        snprintf(v, sizeof(v), "%u", (unsigned)m->uid);
        pax_record(pax, "uid", v);
        octal(h->uid, sizeof(h->uid), 0);
    }
    if (!octal(h->gid, sizeof(h->gid), m->gid)) {
        snprintf(v, sizeof(v), "%u", (unsigned)m->gid);
        pax_record(pax, "gid", v);
        octal(h->gid, sizeof(h->gid), 0);
    }
    if (!octal(h->size, sizeof(h->size), size)) {
        snprintf(v, sizeof(v), "%llu", (unsigned long long)size);
        pax_record(pax, "size", v);
        octal(h->size, sizeof(h->size), 0);
    }
    if (m->mtime < 0 ||
        !octal(h->mtime, sizeof(h->mtime), (uint64_t)m->mtime)) {
        snprintf(v, sizeof(v), "%lld", (long long)m->mtime);
        pax_record(pax, "mtime", v);
        octal(h->mtime, sizeof(h->mtime), 0);
    }
}

/* Write the header(s) of one entry. */
static int
write_header(struct tar *t, char type, const char *name, const char *link,
             const struct tar_meta *m, uint64_t size, struct err *err)
{
    struct strbuf pax;
    struct ustar h;
    int rc = 0;

    if (check_usable(t, err) < 0)
        return -1;
    if (name[0] == '\0')
        return err_set(err, EINVAL, "archive entry with an empty name");
    strbuf_init(&pax);
    base_header(&h, type, NULL);
    if (!set_name(&h, name)) {
        pax_record(&pax, "path", name);
        memcpy(h.name, name, sizeof(h.name));
    }
    if (link != NULL && strlen(link) > sizeof(h.linkname)) {
        pax_record(&pax, "linkpath", link);
        memcpy(h.linkname, link, sizeof(h.linkname));
    } else if (link != NULL) {
        memcpy(h.linkname, link, strlen(link));
    }
    set_numbers(&h, m, size, &pax);
    checksum(&h);
    if (pax.len > 0)
        rc = write_pax(t, name, &pax, err);
    strbuf_release(&pax);
    if (rc == 0)
        rc = emit(t, &h, sizeof(h), err);
    if (rc == 0)
        t->entries++;
    return rc;
}

int
tar_add_dir(struct tar *t, const char *name, const struct tar_meta *m,
            struct err *err)
{
    size_t len = strlen(name);
    cleanup_free char *dname = NULL;

    if (len > 0 && name[len - 1] != '/')
        name = dname = xasprintf("%s/", name);
    return write_header(t, '5', name, NULL, m, 0, err);
}

int
tar_add_data(struct tar *t, const char *name, const struct tar_meta *m,
             const void *data, size_t len, struct err *err)
{
    if (write_header(t, '0', name, NULL, m, len, err) < 0 ||
        emit(t, data, len, err) < 0)
        return -1;
    return emit_padding(t, len, err);
}

int
tar_add_symlink(struct tar *t, const char *name, const char *target,
                const struct tar_meta *m, struct err *err)
{
    return write_header(t, '2', name, target, m, 0, err);
}

/* Copy size bytes of fd into the archive; returns how many were real. */
static int
copy_fd(struct tar *t, int fd, uint64_t size, uint64_t *got, struct err *err)
{
    char buf[OUTBUF];

    *got = 0;
    while (*got < size) {
        size_t want =
            size - *got < sizeof(buf) ? (size_t)(size - *got) : sizeof(buf);
        ssize_t n = read(fd, buf, want);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return err_sys(err, errno, "reading");
        if (n == 0)
            break;
        if (emit(t, buf, (size_t)n, err) < 0)
            return -1;
        *got += (uint64_t)n;
    }
    return 0;
}

int
tar_add_fd(struct tar *t, const char *name, const struct tar_meta *m, int fd,
           uint64_t size, struct err *err)
{
    static const char zeros[BLOCK];
    uint64_t got;

    if (write_header(t, '0', name, NULL, m, size, err) < 0)
        return -1;
    if (copy_fd(t, fd, size, &got, err) < 0) {
        t->failed = true;
        return err_prefix(err, "%s", name);
    }
    for (uint64_t left = size - got; left > 0;) {
        size_t n = left < BLOCK ? (size_t)left : BLOCK;

        if (emit(t, zeros, n, err) < 0)
            return -1;
        left -= n;
    }
    if (emit_padding(t, size, err) < 0)
        return -1;
    if (got < size)
        return err_set(err, EIO, "%s: file shrank while being archived", name);
    return 0;
}

void
tar_meta_of(const struct stat *st, struct tar_meta *m)
{
    m->mode = st->st_mode & 07777;
    m->mtime = (int64_t)st->st_mtim.tv_sec;
    m->uid = st->st_uid;
    m->gid = st->st_gid;
}

static int
add_regular(struct tar *t, const char *name, const char *path,
            const struct tar_meta *m, struct err *err)
{
    cleanup_close int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct tar_meta own;
    struct stat st;

    if (fd < 0 || fstat(fd, &st) < 0)
        return err_sys(err, errno, "%s", path);
    tar_meta_of(&st, &own);
    return tar_add_fd(t, name, m ? m : &own, fd, (uint64_t)st.st_size, err);
}

static int
add_symlink_path(struct tar *t, const char *name, const char *path,
                 const struct tar_meta *m, struct err *err)
{
    char target[4096];
    ssize_t n = readlink(path, target, sizeof(target) - 1);

    if (n < 0)
        return err_sys(err, errno, "%s", path);
    target[n] = '\0';
    return tar_add_symlink(t, name, target, m, err);
}

int
tar_add_path(struct tar *t, const char *name, const char *path,
             const struct tar_meta *m, struct err *err)
{
    struct tar_meta own;
    struct stat st;

    if (lstat(path, &st) < 0)
        return err_sys(err, errno, "%s", path);
    tar_meta_of(&st, &own);
    if (S_ISREG(st.st_mode))
        return add_regular(t, name, path, m, err);
    if (S_ISDIR(st.st_mode))
        return tar_add_dir(t, name, m ? m : &own, err);
    if (S_ISLNK(st.st_mode))
        return add_symlink_path(t, name, path, m ? m : &own, err);
    return 1;
}

int
tar_finish(struct tar *t, struct err *err)
{
    static const char zeros[2 * BLOCK];

    if (check_usable(t, err) < 0 || emit(t, zeros, sizeof(zeros), err) < 0)
        return -1;
    if (t->gzip) {
        t->z.next_in = NULL;
        t->z.avail_in = 0;
        if (deflate_run(t, Z_FINISH, err) < 0)
            return -1;
    }
    if (flush_out(t, err) < 0)
        return -1;
    t->finished = true;
    return 0;
}
