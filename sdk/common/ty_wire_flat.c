/*
 * ty_wire_flat.c — the sync protocol's fast paths (see ty_wire.h).
 *
 * A barrier costs every instance one request and one answer, and the
 * coordinator handles all of them on one thread; building and walking a
 * cJSON tree for each (a dozen allocations, printf and strtod for every
 * number) was most of that thread's work. The messages involved are flat
 * objects of strings and integers, so they are read here by a strict
 * scanner into a small array of members and printed straight into a
 * buffer.
 *
 * The scanner accepts only a subset of what cJSON accepts: no escapes or
 * control characters in strings, integers of at most 15 digits without
 * sign, fraction, exponent or leading zero, no nested values, no repeated
 * key that matters. It accepts a message only when every check of the
 * cJSON path would pass; anything else — unusual or wrong — goes back to
 * the cJSON path, which decides and writes the error message. The printers
 * write exactly what cJSON prints for the same message (same key order,
 * same escapes), so a reader cannot tell which path produced a frame.
 */
#include "ty_wire_int.h"

#include "ty_json.h"

#include <stdlib.h>
#include <string.h>

#define FLAT_MAX 16    /* members a flat message may have */
#define PRINT_MAX 2048 /* longer requests are printed by cJSON */

/* ---- printing ---------------------------------------------------------- */

struct out {
    char *p;
    size_t n, cap; /* cap counts the final NUL */
    bool over;
};

static void
out_mem(struct out *o, const void *s, size_t len)
{
    if (o->over || len >= o->cap - o->n) {
        o->over = true;
        return;
    }
    memcpy(o->p + o->n, s, len);
    o->n += len;
}

static void
out_lit(struct out *o, const char *s)
{
    out_mem(o, s, strlen(s));
}

/* An integer from 0 to TY_WIRE_INT_MAX, as cJSON prints it. */
static void
out_int(struct out *o, int64_t v)
{
    char tmp[24];
    size_t i = sizeof(tmp);
    uint64_t u = (uint64_t)v;

    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    out_mem(o, tmp + i, sizeof(tmp) - i);
}

static void
out_put(void *o, const char *p, size_t len)
{
    out_mem(o, p, len);
}

/* A JSON string, escaped as cJSON escapes it (ty_json.c). */
static void
out_str(struct out *o, const char *s)
{
    ty__json_quote_to(s, out_put, o);
}

static size_t
out_end(struct out *o)
{
    if (o->over)
        return 0;
    o->p[o->n] = '\0';
    return o->n;
}

static bool
int_ok(int64_t v)
{
    return v >= 0 && v <= TY_WIRE_INT_MAX;
}

static bool
flat_field(const struct ty__wire_fdesc *f)
{
    return f->type == FT_STR || f->type == FT_NAME || f->type == FT_INT;
}

static bool
print_field(struct out *o, const struct ty__wire_fdesc *f,
            const struct ty_wire_req *req)
{
    const char *p = (const char *)req + f->off;

    out_lit(o, ",\"");
    out_lit(o, f->key);
    out_lit(o, "\":");
    if (f->type == FT_INT) {
        int64_t v = *(const int64_t *)(const void *)p;

        if (!int_ok(v))
            return false;
        out_int(o, v);
        return true;
    }
    if (*(const char *const *)(const void *)p == NULL)
        return false;
    out_str(o, *(const char *const *)(const void *)p);
    return true;
}

char *
ty__wire_req_print_flat(const struct ty_wire_req *req, size_t *len)
{
    const struct ty__wire_opdesc *od = &ty__wire_ops[req->op];
    char buf[PRINT_MAX];
    struct out o = {buf, 0, sizeof(buf), false};
    size_t n;
    char *s;

    if (!int_ok(req->id))
        return NULL;
    out_lit(&o, "{\"id\":");
    out_int(&o, req->id);
    out_lit(&o, ",\"op\":\"");
    out_lit(&o, od->name);
    out_lit(&o, "\"");
    for (int f = 0; f < F_COUNT; f++) {
        if (!(od->fields & TY__WIRE_BIT(f)) && !ty__wire_opt_present(req, f))
            continue;
        if (!flat_field(&ty__wire_fields[f]) ||
            !print_field(&o, &ty__wire_fields[f], req))
            return NULL;
    }
    out_lit(&o, "}");
    n = out_end(&o);
    if (n == 0 || (s = malloc(n + 1)) == NULL)
        return NULL;
    if (len != NULL)
        *len = n;
    return memcpy(s, buf, n + 1);
}

size_t
ty__wire_resp_mid(enum ty_wire_status st, const char *error, char *buf,
                  size_t size)
{
    const char *name = ty__wire_status_name(st);
    struct out o = {buf, 0, size, size == 0};

    if (name == NULL)
        return 0;
    out_lit(&o, ",\"status\":\"");
    out_lit(&o, name);
    out_lit(&o, "\"");
    if (st != TY_WIRE_OK) {
        out_lit(&o, ",\"error\":");
        out_str(&o, error != NULL ? error : name);
    }
    return out_end(&o);
}

static void
out_opt_int(struct out *o, const char *key, int64_t v)
{
    if (v < 0)
        return;
    out_lit(o, key);
    if (v > TY_WIRE_INT_MAX)
        o->over = true;
    out_int(o, v);
}

size_t
ty__wire_resp_join(int64_t id, const char *mid, size_t midlen, int64_t seq,
                   char *buf, size_t size)
{
    struct out o = {buf, 0, size, size == 0 || !int_ok(id)};

    out_lit(&o, "{\"id\":");
    out_int(&o, id);
    out_mem(&o, mid, midlen);
    out_opt_int(&o, ",\"seq\":", seq);
    out_lit(&o, "}");
    return out_end(&o);
}

size_t
ty__wire_resp_print(const struct ty_wire_resp *resp, char *buf, size_t size)
{
    struct out o = {buf, 0, size, size == 0 || !int_ok(resp->id)};
    size_t mid;

    if (resp->items != NULL || o.over)
        return 0;
    out_lit(&o, "{\"id\":");
    out_int(&o, resp->id);
    mid = o.over ? 0
                 : ty__wire_resp_mid(resp->status, resp->error, buf + o.n,
                                     size - o.n);
    if (mid == 0)
        return 0;
    o.n += mid;
    out_opt_int(&o, ",\"seq\":", resp->seq);
    out_opt_int(&o, ",\"upload\":", resp->upload);
    out_opt_int(&o, ",\"next\":", resp->next);
    out_opt_int(&o, ",\"board\":", resp->board);
    out_lit(&o, "}");
    return out_end(&o);
}

/* ---- scanning ---------------------------------------------------------- */

/* One member of a flat object: a string (s != NULL) or an integer. */
struct flat_val {
    const char *key;
    size_t klen;
    const char *s;
    size_t slen;
    int64_t i;
};

static bool
is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *
skip_ws(const char *p, const char *end)
{
    while (p < end && is_ws(*p))
        p++;
    return p;
}

/* The rest of a string whose opening quote is before p, without escapes
 * or control characters; returns what follows the closing quote. */
static const char *
scan_str(const char *p, const char *end, size_t *len)
{
    const char *s = p;

    while (p < end && *p != '"') {
        if ((unsigned char)*p < 0x20 || *p == '\\')
            return NULL;
        p++;
    }
    if (p == end)
        return NULL;
    *len = (size_t)(p - s);
    return p + 1;
}

/* Digits only, at most 15 (below 10^15), no leading zero. */
static const char *
scan_int(const char *p, const char *end, int64_t *v)
{
    const char *s = p;
    int64_t n = 0;

    while (p < end && *p >= '0' && *p <= '9') {
        if (p - s == 15)
            return NULL;
        n = n * 10 + (*p - '0');
        p++;
    }
    if (p == s || (*s == '0' && p - s > 1))
        return NULL;
    *v = n;
    return p;
}

static const char *
scan_member(const char *p, const char *end, struct flat_val *v)
{
    if (p == end || *p != '"')
        return NULL;
    v->key = p + 1;
    p = scan_str(p + 1, end, &v->klen);
    if (p == NULL)
        return NULL;
    p = skip_ws(p, end);
    if (p == end || *p != ':')
        return NULL;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '"') {
        v->s = p + 1;
        return scan_str(p + 1, end, &v->slen);
    }
    v->s = NULL;
    return scan_int(p, end, &v->i);
}

/* The members of a flat object, or -1 when it is not one (or has more
 * than max members). Trailing whitespace and NULs are allowed, as the
 * cJSON path allows them. */
static int
flat_scan(const char *json, size_t jlen, struct flat_val *v, int max)
{
    const char *p = json, *end = json + jlen;
    int n = 0;

    p = skip_ws(p, end);
    if (p == end || *p != '{')
        return -1;
    p = skip_ws(p + 1, end);
    for (;;) {
        if (n == max || (p = scan_member(p, end, &v[n])) == NULL)
            return -1;
        n++;
        p = skip_ws(p, end);
        if (p < end && *p == '}')
            break;
        if (p == end || *p != ',')
            return -1;
        p = skip_ws(p + 1, end);
    }
    for (p++; p < end && (is_ws(*p) || *p == '\0'); p++)
        ;
    return p == end ? n : -1;
}

/* Keys are a dozen bytes at most: comparing inline beats a call. */
static bool
key_is(const struct flat_val *v, const char *key, size_t klen)
{
    if (v->klen != klen)
        return false;
    for (size_t i = 0; i < klen; i++)
        if (v->key[i] != key[i])
            return false;
    return true;
}

/* Index of the member named key, -1 when absent, -2 when repeated. */
static int
flat_find(const struct flat_val *v, int n, const char *key, size_t klen)
{
    int hit = -1;

    for (int i = 0; i < n; i++) {
        if (!key_is(&v[i], key, klen))
            continue;
        if (hit >= 0)
            return -2;
        hit = i;
    }
    return hit;
}

/* A literal key with its length. */
#define KEY(lit) lit, sizeof(lit) - 1

static bool
flat_int(const struct flat_val *v, int n, const char *key, size_t klen,
         int64_t min, int64_t max, int64_t *out)
{
    int i = flat_find(v, n, key, klen);

    if (i < 0 || v[i].s != NULL || v[i].i < min || v[i].i > max)
        return false;
    *out = v[i].i;
    return true;
}

static bool
str_is(const struct flat_val *v, const char *s)
{
    size_t len = strlen(s);

    return v->s != NULL && v->slen == len && memcmp(v->s, s, len) == 0;
}

static int
flat_op(const struct flat_val *v, int n)
{
    int i = flat_find(v, n, KEY("op"));

    if (i < 0 || v[i].s == NULL || v[i].slen == 0)
        return -1;
    for (int op = 0; op < TY_WIRE_NOPS; op++)
        if (v[i].s[0] == ty__wire_ops[op].name[0] &&
            str_is(&v[i], ty__wire_ops[op].name))
            return op;
    return -1;
}

/* A string field: copied into req->strs (at *used) with its NUL. */
static bool
flat_str(const struct flat_val *v, int n, const struct ty__wire_fdesc *f,
         struct ty_wire_req *req, size_t *used)
{
    int i = flat_find(v, n, f->key, f->klen);
    char *dst = req->strs + *used;

    if (i < 0 || v[i].s == NULL || v[i].slen == 0 ||
        v[i].slen > TY_WIRE_NAME_MAX ||
        v[i].slen + 1 > sizeof(req->strs) - *used)
        return false;
    memcpy(dst, v[i].s, v[i].slen);
    dst[v[i].slen] = '\0';
    if (f->type == FT_NAME && !ty__wire_name_ok(dst))
        return false;
    *(const char **)(void *)((char *)req + f->off) = dst;
    *used += v[i].slen + 1;
    return true;
}

static bool
flat_fields(const struct flat_val *v, int n, unsigned mask, unsigned optional,
            struct ty_wire_req *req)
{
    size_t used = 0;

    for (int f = 0; f < F_COUNT; f++) {
        const struct ty__wire_fdesc *fd = &ty__wire_fields[f];

        if (!(mask & TY__WIRE_BIT(f)) &&
            !((optional & TY__WIRE_BIT(f)) &&
              flat_find(v, n, fd->key, fd->klen) != -1))
            continue;
        if (fd->type == FT_INT) {
            if (!flat_int(v, n, fd->key, fd->klen, fd->min, fd->max,
                          (int64_t *)(void *)((char *)req + fd->off)))
                return false;
        } else if (!flat_field(fd) || !flat_str(v, n, fd, req, &used)) {
            return false;
        }
    }
    return true;
}

int
ty__wire_req_decode_flat(const char *json, size_t jlen, const void *data,
                         size_t len, bool has_payload, struct ty_wire_req *req)
{
    struct flat_val v[FLAT_MAX];
    int n, op;

    if (jlen > TY_WIRE_JSON_MAX)
        return 0;
    n = flat_scan(json, jlen, v, FLAT_MAX);
    if (n <= 0 || !flat_int(v, n, KEY("id"), 1, TY_WIRE_INT_MAX, &req->id))
        return 0;
    op = flat_op(v, n);
    if (op < 0 || ty__wire_ops[op].payload != has_payload ||
        (has_payload && len > TY_WIRE_PAYLOAD_MAX))
        return 0;
    if (!flat_fields(v, n, ty__wire_ops[op].fields, ty__wire_ops[op].optional,
                     req))
        return 0;
    req->op = (enum ty_wire_op)op;
    req->data = data;
    req->len = has_payload ? len : 0;
    return 1;
}

/* An optional integer >= 1: absent is fine, anything else falls back. */
static bool
flat_opt(const struct flat_val *v, int n, const char *key, size_t klen,
         int64_t *out)
{
    int i = flat_find(v, n, key, klen);

    return i == -1 || flat_int(v, n, key, klen, 1, TY_WIRE_INT_MAX, out);
}

int
ty__wire_resp_decode_flat(const char *json, size_t jlen,
                          struct ty_wire_resp *resp)
{
    struct flat_val v[FLAT_MAX];
    int n, st;

    if (jlen > TY_WIRE_JSON_MAX)
        return 0;
    n = flat_scan(json, jlen, v, FLAT_MAX);
    if (n <= 0 || !flat_int(v, n, KEY("id"), 0, TY_WIRE_INT_MAX, &resp->id))
        return 0;
    /* Only "ok" without an error string: other statuses carry one, and it
     * needs a home that outlives this call (the cJSON tree). */
    st = flat_find(v, n, KEY("status"));
    if (st < 0 || !str_is(&v[st], "ok") ||
        flat_find(v, n, KEY("error")) != -1 ||
        flat_find(v, n, KEY("items")) != -1)
        return 0;
    resp->status = TY_WIRE_OK;
    return flat_opt(v, n, KEY("seq"), &resp->seq) &&
           flat_opt(v, n, KEY("upload"), &resp->upload) &&
           flat_opt(v, n, KEY("next"), &resp->next) &&
           flat_opt(v, n, KEY("board"), &resp->board);
}
