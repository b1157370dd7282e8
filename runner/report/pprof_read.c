/*
 * pprof_read.c — decode pprof's profile.proto (see report/pprof_int.h).
 *
 * The decoder walks the protobuf wire format by hand: a key is a varint
 * (field number << 3 | wire type), followed by a varint, 8 or 4 fixed
 * bytes, or a length and that many bytes. Repeated scalars (a sample's
 * location ids and values) come packed or one per key; both are read.
 * Fields the report does not need (labels, line numbers, drop_frames, ...)
 * are skipped. Every read is bounds-checked, and a malformed profile is an
 * error that names the file and the byte offset, never a crash. Field
 * numbers come from sdk/common/ty_proto.h, which the SDK's writer uses too.
 *
 * After decoding, pprof_check.c checks that the parts fit together and
 * names every frame; pprof_sites.c ranks allocation sites.
 */
#include "report/pprof_int.h"
#include "report/pprof_read_int.h"

#include "ty_proto.h"
#include "base/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- wire format ------------------------------------------------------- */

struct pb {
    const uint8_t *p, *end;
};

struct field {
    const uint8_t *at; /* where its key starts, for messages */
    int num, wire;
    uint64_t v;     /* WIRE_VARINT */
    struct pb body; /* WIRE_LEN */
};

/* A malformed profile: "<name>: byte <offset>: <what> in <message>". */
static int
malformed(struct dec *d, const uint8_t *at, const char *what, const char *msg)
{
    err_set(d->err, EINVAL, "%s: byte %zu: %s in %s", d->name,
            (size_t)(at - d->base), what, msg);
    return err_status(d->err, EXIT_DATAERR);
}

static int
pb_varint(struct pb *b, uint64_t *v)
{
    uint64_t x = 0;

    for (int shift = 0; shift < 64 && b->p < b->end; shift += 7) {
        uint8_t c = *b->p++;

        x |= (uint64_t)(c & 0x7f) << shift;
        if ((c & 0x80) == 0) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* The next field of the message in b: 1 and *f filled, 0 at its end, or
 * -1 after filling the error. */
static int
next_field(struct dec *d, struct pb *b, struct field *f, const char *msg)
{
    const uint8_t *at = b->p;
    uint64_t key, len;

    if (b->p >= b->end)
        return 0;
    if (pb_varint(b, &key) < 0)
        return malformed(d, at, "truncated field key", msg);
    f->at = at;
    f->num = (int)(key >> 3);
    f->wire = (int)(key & 7);
    f->v = 0;
    f->body = (struct pb){b->p, b->p};
    if (f->num == 0)
        return malformed(d, at, "field number 0", msg);
    switch (f->wire) {
    case WIRE_VARINT:
        if (pb_varint(b, &f->v) < 0)
            return malformed(d, at, "truncated varint", msg);
        return 1;
    case WIRE_I64:
    case WIRE_I32:
        len = f->wire == WIRE_I64 ? 8 : 4;
        break;
    case WIRE_LEN:
        if (pb_varint(b, &len) < 0)
            return malformed(d, at, "truncated length", msg);
        break;
    default:
        return malformed(d, at, "unsupported wire type (group)", msg);
    }
    if (len > (uint64_t)(b->end - b->p))
        return malformed(d, at, "field longer than its message", msg);
    f->body = (struct pb){b->p, b->p + len};
    b->p += len;
    return 1;
}

/* A varint field where one is expected; -1 on a wrong wire type. */
static int
want_varint(struct dec *d, const struct field *f, const char *msg)
{
    if (f->wire == WIRE_VARINT)
        return 0;
    return malformed(d, f->at, "expected a varint field", msg);
}

/* Repeated varints, packed (one length-delimited field) or not: each is
 * handed to add(). */
static int
repeated(struct dec *d, struct field *f, const char *msg,
         void (*add)(struct pprof_profile *, uint64_t))
{
    if (f->wire == WIRE_VARINT) {
        add(d->prof, f->v);
        return 0;
    }
    if (f->wire != WIRE_LEN)
        return malformed(d, f->at, "expected varints", msg);
    while (f->body.p < f->body.end) {
        const uint8_t *at = f->body.p;
        uint64_t v;

        if (pb_varint(&f->body, &v) < 0)
            return malformed(d, at, "truncated packed varint", msg);
        add(d->prof, v);
    }
    return 0;
}

/* ---- messages ---------------------------------------------------------- */

static void
add_sloc(struct pprof_profile *p, uint64_t v)
{
    xgrow(&p->slocs, &p->capslocs, p->nslocs + 1, sizeof(*p->slocs));
    p->slocs[p->nslocs++] = v;
}

static void
add_sval(struct pprof_profile *p, uint64_t v)
{
    xgrow(&p->svals, &p->capsvals, p->nsvals + 1, sizeof(*p->svals));
    p->svals[p->nsvals++] = (int64_t)v;
}

static void
add_line(struct pprof_profile *p, uint64_t fid)
{
    xgrow(&p->lines, &p->caplines, p->nlines + 1, sizeof(*p->lines));
    p->lines[p->nlines++] = fid;
}

/* A numeric label; the key is a string index, checked with the others
 * (a "bytes" label is the average size of the sample's blocks). */
static int
dec_label(struct dec *d, struct pb b, int64_t *key, int64_t *num)
{
    struct field f;
    int r;

    while ((r = next_field(d, &b, &f, "Label")) > 0) {
        if (f.num != LABEL_KEY && f.num != LABEL_NUM)
            continue;
        if (want_varint(d, &f, "Label") < 0)
            return -1;
        if (f.num == LABEL_KEY)
            *key = (int64_t)f.v;
        else
            *num = (int64_t)f.v;
    }
    return r;
}

static int
dec_sample(struct dec *d, struct pb b)
{
    struct pprof_profile *p = d->prof;
    struct pp_sample s = {p->nslocs, 0, p->nsvals, 0, 0, -1, -1};
    struct field f;
    int r;

    while ((r = next_field(d, &b, &f, "Sample")) > 0) {
        int64_t key = 0, num = -1;

        if (f.num == SAMPLE_LOCATION_ID)
            r = repeated(d, &f, "Sample.location_id", add_sloc);
        else if (f.num == SAMPLE_VALUE)
            r = repeated(d, &f, "Sample.value", add_sval);
        else if (f.num == SAMPLE_LABEL && f.wire == WIRE_LEN)
            r = dec_label(d, f.body, &key, &num);
        /* the key is resolved once the string table is read */
        if (r >= 0 && f.num == SAMPLE_LABEL && key > 0 && num >= 0) {
            s.lkey = key;
            s.lnum = num;
        }
        if (r < 0)
            return -1;
    }
    if (r < 0)
        return -1;
    s.nlocs = p->nslocs - s.loc0;
    s.nvals = p->nsvals - s.val0;
    xgrow(&p->samples, &p->capsamples, p->nsamples + 1, sizeof(s));
    p->samples[p->nsamples++] = s;
    return 0;
}

static int
dec_line(struct dec *d, struct pb b)
{
    struct field f;
    uint64_t fid = 0;
    int r;

    while ((r = next_field(d, &b, &f, "Line")) > 0) {
        if (f.num != LINE_FUNCTION_ID)
            continue;
        if (want_varint(d, &f, "Line.function_id") < 0)
            return -1;
        fid = f.v;
    }
    if (r == 0)
        add_line(d->prof, fid);
    return r;
}

static int
dec_location(struct dec *d, struct pb b)
{
    struct pprof_profile *p = d->prof;
    struct pp_loc l = {.line0 = p->nlines, .synth = NULL};
    struct field f;
    int r;

    while ((r = next_field(d, &b, &f, "Location")) > 0) {
        if (f.num == LOCATION_LINE) {
            if (f.wire != WIRE_LEN)
                return malformed(d, f.at, "expected a message",
                                 "Location.line");
            r = dec_line(d, f.body);
        } else if (f.num == LOCATION_ID || f.num == LOCATION_MAPPING_ID ||
                   f.num == LOCATION_ADDRESS) {
            r = want_varint(d, &f, "Location");
            if (f.num == LOCATION_ID)
                l.id = f.v;
            else if (f.num == LOCATION_MAPPING_ID)
                l.mapping_id = f.v;
            else
                l.address = f.v;
        }
        if (r < 0)
            return -1;
    }
    if (r < 0)
        return -1;
    l.nlines = p->nlines - l.line0;
    xgrow(&p->locs, &p->caplocs, p->nlocs + 1, sizeof(l));
    p->locs[p->nlocs++] = l;
    return 0;
}

static int
dec_function(struct dec *d, struct pb b)
{
    struct pprof_profile *p = d->prof;
    struct pp_func fn = {0};
    struct field f;
    int r;

    while ((r = next_field(d, &b, &f, "Function")) > 0) {
        if (f.num != FUNCTION_ID && f.num != FUNCTION_NAME &&
            f.num != FUNCTION_SYSTEM_NAME && f.num != FUNCTION_FILENAME)
            continue;
        if (want_varint(d, &f, "Function") < 0)
            return -1;
        if (f.num == FUNCTION_ID)
            fn.id = f.v;
        else if (f.num == FUNCTION_NAME)
            fn.name = (int64_t)f.v;
        else if (f.num == FUNCTION_SYSTEM_NAME)
            fn.system_name = (int64_t)f.v;
        else
            fn.file = (int64_t)f.v;
    }
    if (r < 0)
        return -1;
    xgrow(&p->funcs, &p->capfuncs, p->nfuncs + 1, sizeof(fn));
    p->funcs[p->nfuncs++] = fn;
    return 0;
}

/* A Mapping's varint field into m. */
static void
mapping_field(struct pp_map *m, const struct field *f)
{
    switch (f->num) {
    case MAPPING_ID:
        m->id = f->v;
        break;
    case MAPPING_START:
        m->start = f->v;
        break;
    case MAPPING_LIMIT:
        m->limit = f->v;
        break;
    case MAPPING_OFFSET:
        m->offset = f->v;
        break;
    case MAPPING_FILENAME:
        m->file = (int64_t)f->v;
        break;
    case MAPPING_BUILD_ID:
        m->build_id = (int64_t)f->v;
        break;
    default:
        m->has_functions = f->v != 0;
    }
}

static int
dec_mapping(struct dec *d, struct pb b)
{
    struct pprof_profile *p = d->prof;
    struct pp_map m = {0};
    struct field f;
    int r;

    while ((r = next_field(d, &b, &f, "Mapping")) > 0) {
        if (f.num < MAPPING_ID || f.num > MAPPING_HAS_FUNCTIONS)
            continue;
        if (want_varint(d, &f, "Mapping") < 0)
            return -1;
        mapping_field(&m, &f);
    }
    if (r < 0)
        return -1;
    xgrow(&p->maps, &p->capmaps, p->nmaps + 1, sizeof(m));
    p->maps[p->nmaps++] = m;
    return 0;
}

static int
dec_value_type(struct dec *d, struct pb b)
{
    struct pprof_profile *p = d->prof;
    struct field f;
    int64_t type = 0;
    int r;

    while ((r = next_field(d, &b, &f, "ValueType")) > 0) {
        if (f.num != VALUETYPE_TYPE)
            continue;
        if (want_varint(d, &f, "ValueType.type") < 0)
            return -1;
        type = (int64_t)f.v;
    }
    if (r < 0)
        return -1;
    xgrow(&p->types, &p->captypes, p->ntypes + 1, sizeof(*p->types));
    p->types[p->ntypes++] = type;
    return 0;
}

static int
dec_string(struct dec *d, struct pb b)
{
    struct pprof_profile *p = d->prof;
    size_t len = (size_t)(b.end - b.p);

    if (memchr(b.p, '\0', len) != NULL)
        return malformed(d, b.p, "NUL byte in a string",
                         "Profile.string_table");
    xgrow(&p->strs, &p->capstrs, p->nstrs + 1, sizeof(*p->strs));
    p->strs[p->nstrs++] = xstrndup((const char *)b.p, len);
    return 0;
}

/* The message fields of Profile, by field number. */
static const struct {
    int num;
    const char *name;
    int (*fn)(struct dec *, struct pb);
} profile_msgs[] = {
    {PROFILE_SAMPLE_TYPE, "Profile.sample_type", dec_value_type},
    {PROFILE_SAMPLE, "Profile.sample", dec_sample},
    {PROFILE_MAPPING, "Profile.mapping", dec_mapping},
    {PROFILE_LOCATION, "Profile.location", dec_location},
    {PROFILE_FUNCTION, "Profile.function", dec_function},
    {PROFILE_STRING_TABLE, "Profile.string_table", dec_string},
};

static int
dec_profile_field(struct dec *d, struct field *f)
{
    if (f->num == PROFILE_TIME_NANOS || f->num == PROFILE_PERIOD) {
        if (want_varint(d, f,
                        f->num == PROFILE_TIME_NANOS ? "Profile.time_nanos"
                                                     : "Profile.period") < 0)
            return -1;
        if (f->num == PROFILE_TIME_NANOS)
            d->prof->time_ns = (int64_t)f->v;
        else
            d->prof->period = (int64_t)f->v;
        return 0;
    }
    for (size_t i = 0; i < ARRAY_LEN(profile_msgs); i++) {
        if (profile_msgs[i].num != f->num)
            continue;
        if (f->wire != WIRE_LEN)
            return malformed(d, f->at, "expected a message",
                             profile_msgs[i].name);
        return profile_msgs[i].fn(d, f->body);
    }
    return 0;
}

static int
dec_profile(struct dec *d, const uint8_t *buf, size_t len)
{
    struct pb b = {buf, buf + len};
    struct field f;
    int r;

    while ((r = next_field(d, &b, &f, "Profile")) > 0)
        if (dec_profile_field(d, &f) < 0)
            return -1;
    return r;
}

/* ---- gzip and the public calls ----------------------------------------- */

static int
gunzip_error(int r, bool big, const z_stream *z, const char *name,
             struct err *err)
{
    if (big)
        err_set(err, EFBIG, "%s: decompresses to more than %zu MiB", name,
                PPROF_MAX_BYTES >> 20);
    else if (r == Z_BUF_ERROR)
        err_set(err, EINVAL, "%s: gzip data is cut short", name);
    else
        err_set(err, EINVAL, "%s: not valid gzip data (%s)", name,
                z->msg ? z->msg : "inflate failed");
    return err_status(err, EXIT_DATAERR);
}

static int
gunzip(const void *gz, size_t len, uint8_t **out, size_t *outlen,
       const char *name, struct err *err)
{
    z_stream z = {0};
    size_t cap = len < PPROF_MAX_BYTES / 8 ? len * 4 + 4096 : PPROF_MAX_BYTES;
    uint8_t *buf = xmalloc(cap);
    bool big = false;
    int r = Z_OK;

    if (inflateInit2(&z, 15 + 32) != Z_OK) {
        free(buf);
        return err_set(err, ENOMEM, "%s: cannot start inflating", name);
    }
    z.next_in = (Bytef *)(uintptr_t)gz;
    z.avail_in = (uInt)len;
    while (r != Z_STREAM_END) {
        if (z.total_out == cap) {
            if ((big = cap >= PPROF_MAX_BYTES))
                break;
            cap = cap * 2 < PPROF_MAX_BYTES ? cap * 2 : PPROF_MAX_BYTES;
            buf = xrealloc(buf, cap);
        }
        z.next_out = buf + z.total_out;
        z.avail_out = (uInt)(cap - z.total_out);
        r = inflate(&z, Z_NO_FLUSH);
        /* Z_BUF_ERROR with room left: the input ran out mid-stream. */
        if (r != Z_OK && r != Z_STREAM_END &&
            !(r == Z_BUF_ERROR && z.avail_out == 0))
            break;
    }
    *outlen = z.total_out;
    if (r != Z_STREAM_END)
        gunzip_error(r, big, &z, name, err);
    inflateEnd(&z);
    if (r != Z_STREAM_END) {
        free(buf);
        return -1;
    }
    *out = buf;
    return 0;
}

struct pprof_profile *
pprof__parse(const void *data, size_t len, const char *name, struct err *err)
{
    const uint8_t *b = data;
    cleanup_free uint8_t *raw = NULL;
    struct pprof_profile *p = xcalloc(1, sizeof(*p));
    struct dec d = {.name = name, .err = err, .prof = p};

    if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
        if (gunzip(data, len, &raw, &len, name, err) < 0) {
            pprof__destroy(&p);
            return NULL;
        }
        b = raw;
    }
    d.base = b;
    if (dec_profile(&d, b, len) < 0 || pprof__check(&d) < 0)
        pprof__destroy(&p);
    return p;
}

struct pprof_profile *
pprof__read_file(const char *path, struct err *err)
{
    size_t len;
    cleanup_free char *data = file_read(path, PPROF_MAX_BYTES, &len, err);

    if (data == NULL)
        return NULL;
    return pprof__parse(data, len, path, err);
}

void
pprof__destroy(struct pprof_profile **pp)
{
    struct pprof_profile *p = pp ? *pp : NULL;

    if (p == NULL)
        return;
    for (size_t i = 0; i < p->nstrs; i++)
        free(p->strs[i]);
    for (size_t i = 0; i < p->nsynth; i++)
        free(p->synth[i]);
    free(p->strs);
    free(p->synth);
    free(p->types);
    free(p->samples);
    free(p->slocs);
    free(p->svals);
    free(p->locs);
    free(p->lines);
    free(p->lnames);
    free(p->lfiles);
    free(p->funcs);
    free(p->maps);
    free(p);
    *pp = NULL;
}

int
pprof__value_index(const struct pprof_profile *p, const char *type)
{
    for (size_t i = 0; i < p->ntypes; i++)
        if (strcmp(p->strs[p->types[i]], type) == 0)
            return (int)i;
    return -1;
}

size_t
pprof__nsamples(const struct pprof_profile *p)
{
    return p->nsamples;
}

int64_t
pprof__total(const struct pprof_profile *p, int v)
{
    int64_t sum = 0;

    if (v < 0 || (size_t)v >= p->ntypes)
        return 0;
    for (size_t i = 0; i < p->nsamples; i++)
        sum = i64_add_sat(sum, p->svals[p->samples[i].val0 + (size_t)v]);
    return sum;
}

int64_t
pprof__time_ns(const struct pprof_profile *p)
{
    return p->time_ns;
}

int64_t
pprof__period(const struct pprof_profile *p)
{
    return p->period;
}
