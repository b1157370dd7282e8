/*
 * ty_wire.c — encoding and checking sync protocol messages (see ty_wire.h).
 *
 * Requests are described by two tables: the fields (wire key, type, where it
 * lives in struct ty_wire_req, smallest allowed value) and the ops (wire
 * name, which fields are required, whether a binary frame follows). The
 * encoder and the decoder both walk those tables, so what one writes the
 * other accepts, and a peer that sends anything else — bad JSON, a missing
 * or mistyped field, a number that is not an exact integer, an oversized
 * frame — gets a phrase saying what was expected instead of a crash.
 *
 * Flat messages (strings and integers only) take the fast paths in
 * ty_wire_flat.c first; this file is the cJSON path every other message
 * takes, and the one that words every refusal.
 */
#include "ty_wire_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OFF(f) offsetof(struct ty_wire_req, f)
#define K(key) key, sizeof(key) - 1
#define IMAX TY_WIRE_INT_MAX

const struct ty__wire_fdesc ty__wire_fields[F_COUNT] = {
    [F_RUN] = {K("run"), FT_STR, OFF(run), 0, 0},
    [F_GROUP] = {K("group"), FT_STR, OFF(group), 0, 0},
    [F_GROUP_INDEX] = {K("group_index"), FT_INT, OFF(group_index), 0, IMAX},
    [F_GLOBAL_INDEX] = {K("global_index"), FT_INT, OFF(global_index), 0, IMAX},
    [F_STATE] = {K("state"), FT_STR, OFF(state), 0, 0},
    [F_TARGET] = {K("target"), FT_INT, OFF(target), 1, IMAX},
    [F_TIMEOUT] = {K("timeout_ms"), FT_INT, OFF(timeout_ms), 0, IMAX},
    [F_TOPIC] = {K("topic"), FT_STR, OFF(topic), 0, 0},
    [F_VALUE] = {K("value"), FT_ANY, OFF(value), 0, 0},
    [F_FROM] = {K("from"), FT_INT, OFF(from), 1, IMAX},
    [F_MAX] = {K("max"), FT_INT, OFF(max), 1, TY_WIRE_FETCH_MAX},
    [F_EVENT] = {K("event"), FT_EVENT, OFF(event), 0, 0},
    [F_NAME] = {K("name"), FT_NAME, OFF(name), 0, 0},
    [F_SIZE] = {K("size"), FT_INT, OFF(size), 0, IMAX},
    [F_UPLOAD] = {K("upload"), FT_INT, OFF(upload), 1, IMAX},
    [F_OFFSET] = {K("offset"), FT_INT, OFF(offset), 0, IMAX},
    [F_BOARD] = {K("board"), FT_INT, OFF(board), 1, IMAX},
    [F_SECRET] = {K("secret"), FT_STR, OFF(secret), 0, 0},
};

#define B(f) TY__WIRE_BIT(f)

const struct ty__wire_opdesc ty__wire_ops[TY_WIRE_NOPS] = {
    [TY_WIRE_HELLO] = {"hello",
                       B(F_RUN) | B(F_GROUP) | B(F_GROUP_INDEX) |
                           B(F_GLOBAL_INDEX),
                       false, B(F_BOARD) | B(F_SECRET)},
    [TY_WIRE_SIGNAL] = {"signal", B(F_STATE), false},
    [TY_WIRE_BARRIER] = {"barrier", B(F_STATE) | B(F_TARGET) | B(F_TIMEOUT),
                         false, B(F_GROUP) | B(F_BOARD)},
    [TY_WIRE_SIGNAL_WAIT] = {"signal_and_wait",
                             B(F_STATE) | B(F_TARGET) | B(F_TIMEOUT), false,
                             B(F_GROUP) | B(F_BOARD)},
    [TY_WIRE_PUBLISH] = {"publish", B(F_TOPIC) | B(F_VALUE), false},
    [TY_WIRE_FETCH] = {"fetch",
                       B(F_TOPIC) | B(F_FROM) | B(F_MAX) | B(F_TIMEOUT), false},
    [TY_WIRE_EVENT] = {"event", B(F_EVENT), false},
    [TY_WIRE_UPLOAD_BEGIN] = {"upload_begin", B(F_NAME) | B(F_SIZE), false},
    [TY_WIRE_UPLOAD_CHUNK] = {"upload_chunk", B(F_UPLOAD) | B(F_OFFSET), true},
    [TY_WIRE_UPLOAD_END] = {"upload_end", B(F_UPLOAD), false},
    [TY_WIRE_UPLOAD_ABORT] = {"upload_abort", B(F_UPLOAD), false},
    [TY_WIRE_APPEND] = {"append", B(F_NAME), true},
    [TY_WIRE_SNAPSHOT_WAIT] = {"snapshot_wait", B(F_TIMEOUT), false},
};

static const struct {
    const char *name;
    int err;
} statuses[TY_WIRE_NSTATUS] = {
    [TY_WIRE_OK] = {"ok", 0},
    [TY_WIRE_TIMEOUT] = {"timeout", -ETIMEDOUT},
    [TY_WIRE_FAILED] = {"failed", -EPIPE},
    [TY_WIRE_CANCELED] = {"canceled", -ECANCELED},
    [TY_WIRE_INVALID] = {"invalid", -EINVAL},
    [TY_WIRE_DENIED] = {"denied", -EACCES},
    [TY_WIRE_FULL] = {"full", -ENOSPC},
    [TY_WIRE_BUSY] = {"busy", -EBUSY},
    [TY_WIRE_NOTFOUND] = {"notfound", -ENOENT},
    [TY_WIRE_IOERR] = {"ioerr", -EIO},
};

const char *
ty__wire_op_name(enum ty_wire_op op)
{
    return (unsigned)op < TY_WIRE_NOPS ? ty__wire_ops[op].name : NULL;
}

const char *
ty__wire_status_name(enum ty_wire_status st)
{
    return (unsigned)st < TY_WIRE_NSTATUS ? statuses[st].name : NULL;
}

int
ty__wire_status_errno(enum ty_wire_status st)
{
    return (unsigned)st < TY_WIRE_NSTATUS ? statuses[st].err : -EPROTO;
}

bool
ty__wire_op_has_payload(enum ty_wire_op op)
{
    return (unsigned)op < TY_WIRE_NOPS && ty__wire_ops[op].payload;
}

static bool
component_ok(const char *s, size_t n)
{
    return n > 0 && !(n == 1 && s[0] == '.') &&
           !(n == 2 && s[0] == '.' && s[1] == '.');
}

bool
ty__wire_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    const char *start = name;

    if (n == 0 || n > TY_WIRE_NAME_MAX || name[0] == '/')
        return false;
    if (n >= 4 && strcmp(name + n - 4, ".tmp") == 0)
        return false;
    for (const char *p = name;; p++) {
        if (*p == '/' || *p == '\0') {
            if (!component_ok(start, (size_t)(p - start)))
                return false;
            if (*p == '\0')
                return true;
            start = p + 1;
        } else if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\') {
            return false;
        }
    }
}

/* ---- encoding ---------------------------------------------------------- */

static int
encode_field(cJSON *o, const struct ty__wire_fdesc *f, const void *base)
{
    const char *p = (const char *)base + f->off;

    switch (f->type) {
    case FT_STR:
    case FT_NAME: {
        const char *s = *(const char *const *)p;

        return s && cJSON_AddStringToObject(o, f->key, s) ? 0 : -1;
    }
    case FT_INT:
        return cJSON_AddNumberToObject(o, f->key, (double)*(const int64_t *)p)
                   ? 0
                   : -1;
    case FT_ANY:
    case FT_EVENT: {
        cJSON *v = *(cJSON *const *)p;

        return v && cJSON_AddItemReferenceToObject(o, f->key, v) ? 0 : -1;
    }
    }
    return -1;
}

static char *
print_and_free(cJSON *o, size_t *len)
{
    char *s = cJSON_PrintUnformatted(o);

    cJSON_Delete(o);
    if (s != NULL && len != NULL)
        *len = strlen(s);
    return s;
}

char *
ty__wire_req_encode(const struct ty_wire_req *req, size_t *len)
{
    cJSON *o;
    char *flat;

    if ((unsigned)req->op >= TY_WIRE_NOPS)
        return NULL;
    flat = ty__wire_req_print_flat(req, len);
    if (flat != NULL)
        return flat;
    o = cJSON_CreateObject();
    if (o == NULL || !cJSON_AddNumberToObject(o, "id", (double)req->id) ||
        !cJSON_AddStringToObject(o, "op", ty__wire_ops[req->op].name)) {
        cJSON_Delete(o);
        return NULL;
    }
    for (int f = 0; f < F_COUNT; f++) {
        if (!(ty__wire_ops[req->op].fields & B(f)) &&
            !(ty__wire_opt_present(req, f)))
            continue;
        if (encode_field(o, &ty__wire_fields[f], req) < 0) {
            cJSON_Delete(o);
            return NULL;
        }
    }
    return print_and_free(o, len);
}

/* ---- decoding ---------------------------------------------------------- */

static int
fail(char *why, size_t whylen, const char *fmt, const char *a)
{
    snprintf(why, whylen, fmt, a);
    return -1;
}

/* An exact integer in [min, max]. */
static int
get_int(const cJSON *v, int64_t min, int64_t max, int64_t *out)
{
    double d;

    if (!cJSON_IsNumber(v))
        return -1;
    d = v->valuedouble;
    if (!isfinite(d) || d != floor(d) || d < (double)min || d > (double)max)
        return -1;
    *out = (int64_t)d;
    return 0;
}

static cJSON *
parse_object(const void *json, size_t jlen, char *why, size_t whylen)
{
    const char *end = NULL;
    cJSON *root;

    if (jlen > TY_WIRE_JSON_MAX) {
        snprintf(why, whylen, "message of %zu bytes is over the %u-byte limit",
                 jlen, TY_WIRE_JSON_MAX);
        return NULL;
    }
    root = cJSON_ParseWithLengthOpts(json, jlen, &end, false);
    if (root == NULL) {
        snprintf(why, whylen, "expected a JSON object, got invalid JSON");
        return NULL;
    }
    while (end < (const char *)json + jlen &&
           (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t' ||
            *end == '\0'))
        end++;
    if (end != (const char *)json + jlen || !cJSON_IsObject(root)) {
        snprintf(why, whylen, "expected one JSON object");
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

static int
decode_str(const cJSON *v, const struct ty__wire_fdesc *f, void *dst, char *why,
           size_t whylen)
{
    if (!cJSON_IsString(v) || v->valuestring[0] == '\0' ||
        strlen(v->valuestring) > TY_WIRE_NAME_MAX)
        return fail(why, whylen,
                    "\"%s\": expected a non-empty string of at most 255 "
                    "bytes",
                    f->key);
    if (f->type == FT_NAME && !ty__wire_name_ok(v->valuestring))
        return fail(why, whylen,
                    "\"%s\": expected a relative file name without \"..\", "
                    "control characters or a .tmp suffix",
                    f->key);
    *(const char **)dst = v->valuestring;
    return 0;
}

static int
decode_field(const cJSON *o, const struct ty__wire_fdesc *f, void *base,
             char *why, size_t whylen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, f->key);
    char *dst = (char *)base + f->off;

    if (v == NULL)
        return fail(why, whylen, "missing field \"%s\"", f->key);
    switch (f->type) {
    case FT_STR:
    case FT_NAME:
        return decode_str(v, f, dst, why, whylen);
    case FT_INT:
        if (get_int(v, f->min, f->max, (int64_t *)(void *)dst) < 0) {
            snprintf(why, whylen,
                     "\"%s\": expected an integer from %lld to %lld", f->key,
                     (long long)f->min, (long long)f->max);
            return -1;
        }
        return 0;
    case FT_EVENT:
        if (!cJSON_IsObject(v) ||
            !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(v, "type")))
            return fail(why, whylen,
                        "\"%s\": expected an object with a \"type\" string",
                        f->key);
        /* fall through */
    case FT_ANY:
        *(const cJSON **)(void *)dst = v;
        return 0;
    }
    return -1;
}

static int
decode_op(const cJSON *root, enum ty_wire_op *op, char *why, size_t whylen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "op");

    if (!cJSON_IsString(v))
        return fail(why, whylen, "missing field \"%s\" (a string)", "op");
    for (int i = 0; i < TY_WIRE_NOPS; i++) {
        if (strcmp(v->valuestring, ty__wire_ops[i].name) == 0) {
            *op = (enum ty_wire_op)i;
            return 0;
        }
    }
    return fail(why, whylen, "unknown op \"%.64s\"", v->valuestring);
}

static int
check_payload(const struct ty_wire_req *req, bool has_payload, char *why,
              size_t whylen)
{
    const char *op = ty__wire_ops[req->op].name;

    if (ty__wire_ops[req->op].payload && !has_payload)
        return fail(why, whylen, "%s: expected a binary second frame", op);
    if (!ty__wire_ops[req->op].payload && has_payload)
        return fail(why, whylen, "%s: unexpected second frame", op);
    if (req->len > TY_WIRE_PAYLOAD_MAX) {
        snprintf(why, whylen,
                 "%s: payload of %zu bytes is over the %u-byte "
                 "limit",
                 op, req->len, TY_WIRE_PAYLOAD_MAX);
        return -1;
    }
    return 0;
}

int
ty__wire_req_decode(const void *json, size_t jlen, const void *data, size_t len,
                    bool has_payload, struct ty_wire_req *req, char *why,
                    size_t whylen)
{
    memset(req, 0, offsetof(struct ty_wire_req, strs));
    if (ty__wire_req_decode_flat(json, jlen, data, len, has_payload, req))
        return 0;
    memset(req, 0, offsetof(struct ty_wire_req, strs));
    req->root = parse_object(json, jlen, why, whylen);
    if (req->root == NULL)
        return -1;
    if (get_int(cJSON_GetObjectItemCaseSensitive(req->root, "id"), 1,
                TY_WIRE_INT_MAX, &req->id) < 0)
        return fail(why, whylen, "\"%s\": expected an integer >= 1", "id");
    if (decode_op(req->root, &req->op, why, whylen) < 0)
        return -1;
    req->data = data;
    req->len = has_payload ? len : 0;
    if (check_payload(req, has_payload, why, whylen) < 0)
        return -1;
    for (int f = 0; f < F_COUNT; f++) {
        if (!(ty__wire_ops[req->op].fields & B(f)) &&
            !((ty__wire_ops[req->op].optional & B(f)) &&
              cJSON_GetObjectItemCaseSensitive(req->root,
                                               ty__wire_fields[f].key)))
            continue;
        if (decode_field(req->root, &ty__wire_fields[f], req, why, whylen) < 0)
            return -1;
    }
    return 0;
}

bool
ty__wire_opt_present(const struct ty_wire_req *req, int f)
{
    const struct ty__wire_fdesc *fd = &ty__wire_fields[f];
    const char *p = (const char *)req + fd->off;

    if (!(ty__wire_ops[req->op].optional & B(f)))
        return false;
    if (fd->type == FT_INT)
        return *(const int64_t *)(const void *)p != 0;
    return fd->type == FT_STR && *(const char *const *)(const void *)p != NULL;
}

void
ty__wire_req_release(struct ty_wire_req *req)
{
    cJSON_Delete(req->root);
    req->root = NULL;
}

/* ---- responses --------------------------------------------------------- */

void
ty__wire_resp_init(struct ty_wire_resp *resp, int64_t id)
{
    memset(resp, 0, sizeof(*resp));
    resp->id = id;
    resp->status = TY_WIRE_OK;
    resp->seq = -1;
    resp->upload = -1;
    resp->next = -1;
    resp->board = -1;
}

static bool
add_opt_int(cJSON *o, const char *key, int64_t v)
{
    return v < 0 || cJSON_AddNumberToObject(o, key, (double)v) != NULL;
}

char *
ty__wire_resp_encode(const struct ty_wire_resp *resp, size_t *len)
{
    char buf[2048];
    size_t n = ty__wire_resp_print(resp, buf, sizeof(buf));
    cJSON *o;
    const char *st = ty__wire_status_name(resp->status);
    bool ok;

    if (n > 0) {
        char *s = malloc(n + 1);

        if (s != NULL && len != NULL)
            *len = n;
        return s ? memcpy(s, buf, n + 1) : NULL;
    }
    o = cJSON_CreateObject();
    ok = o && st && cJSON_AddNumberToObject(o, "id", (double)resp->id) &&
         cJSON_AddStringToObject(o, "status", st);
    if (ok && resp->status != TY_WIRE_OK)
        ok = cJSON_AddStringToObject(o, "error",
                                     resp->error ? resp->error : st) != NULL;
    ok = ok && add_opt_int(o, "seq", resp->seq) &&
         add_opt_int(o, "upload", resp->upload) &&
         add_opt_int(o, "next", resp->next) &&
         add_opt_int(o, "board", resp->board);
    if (ok && resp->items != NULL)
        ok = cJSON_AddItemReferenceToObject(o, "items", (cJSON *)resp->items) !=
             0;
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return print_and_free(o, len);
}

static int
decode_status(const cJSON *root, struct ty_wire_resp *resp, char *why,
              size_t whylen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "status");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");

    if (!cJSON_IsString(v))
        return fail(why, whylen, "missing field \"%s\" (a string)", "status");
    for (int i = 0; i < TY_WIRE_NSTATUS; i++)
        if (strcmp(v->valuestring, statuses[i].name) == 0)
            resp->status = (enum ty_wire_status)i;
    if (strcmp(v->valuestring, statuses[resp->status].name) != 0)
        return fail(why, whylen, "unknown status \"%.64s\"", v->valuestring);
    if (resp->status != TY_WIRE_OK && !cJSON_IsString(e))
        return fail(why, whylen, "missing field \"%s\" (a string)", "error");
    resp->error = cJSON_IsString(e) ? e->valuestring : NULL;
    return 0;
}

static int
decode_opt_int(const cJSON *root, const char *key, int64_t *out, char *why,
               size_t whylen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);

    if (v == NULL)
        return 0;
    if (get_int(v, 1, TY_WIRE_INT_MAX, out) < 0)
        return fail(why, whylen, "\"%s\": expected an integer >= 1", key);
    return 0;
}

static int
decode_items(const cJSON *root, struct ty_wire_resp *resp, char *why,
             size_t whylen)
{
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "items");
    const cJSON *it;
    int64_t seq;

    if (items == NULL)
        return 0;
    if (!cJSON_IsArray(items))
        return fail(why, whylen, "\"%s\": expected an array", "items");
    cJSON_ArrayForEach (it, items) {
        if (!cJSON_IsObject(it) ||
            get_int(cJSON_GetObjectItemCaseSensitive(it, "seq"), 1,
                    TY_WIRE_INT_MAX, &seq) < 0 ||
            cJSON_GetObjectItemCaseSensitive(it, "value") == NULL)
            return fail(why, whylen,
                        "\"%s\": expected objects with an "
                        "integer \"seq\" and a \"value\"",
                        "items");
    }
    resp->items = items;
    return 0;
}

int
ty__wire_resp_decode(const void *json, size_t jlen, struct ty_wire_resp *resp,
                     char *why, size_t whylen)
{
    ty__wire_resp_init(resp, 0);
    if (ty__wire_resp_decode_flat(json, jlen, resp))
        return 0;
    ty__wire_resp_init(resp, 0);
    resp->root = parse_object(json, jlen, why, whylen);
    if (resp->root == NULL)
        return -1;
    if (get_int(cJSON_GetObjectItemCaseSensitive(resp->root, "id"), 0,
                TY_WIRE_INT_MAX, &resp->id) < 0)
        return fail(why, whylen, "\"%s\": expected an integer >= 0", "id");
    if (decode_status(resp->root, resp, why, whylen) < 0 ||
        decode_opt_int(resp->root, "seq", &resp->seq, why, whylen) < 0 ||
        decode_opt_int(resp->root, "upload", &resp->upload, why, whylen) < 0 ||
        decode_opt_int(resp->root, "next", &resp->next, why, whylen) < 0 ||
        decode_opt_int(resp->root, "board", &resp->board, why, whylen) < 0)
        return -1;
    return decode_items(resp->root, resp, why, whylen);
}

void
ty__wire_resp_release(struct ty_wire_resp *resp)
{
    cJSON_Delete(resp->root);
    resp->root = NULL;
}
