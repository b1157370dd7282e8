/*
 * fuzz_wire_req.c — the sync service's request decoder
 * (ty__wire_req_decode, sdk/common/ty_wire.c, with its flat fast path in
 * sdk/common/ty_wire_flat.c), as a peer could send it.
 *
 * The first byte chooses the frames: bit 0 says a second (binary) frame
 * came, the other bits its length (127: one byte over the limit). The
 * rest is frame 1. Checked, besides the sanitizers:
 *   - a message the fast path takes is taken alike by the cJSON path
 *     (forced by adding a nested member it must ignore);
 *   - a decoded request encodes, and decodes back to the same request.
 */
#include "fuzz.h"
#include "ty_wire_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char payload[TY_WIRE_PAYLOAD_MAX + 1];

static bool
str_eq(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static bool
field_eq(const struct ty_wire_req *a, const struct ty_wire_req *b,
         const struct ty__wire_fdesc *f)
{
    const char *pa = (const char *)a + f->off, *pb = (const char *)b + f->off;

    switch (f->type) {
    case FT_STR:
    case FT_NAME:
        return str_eq(*(const char *const *)(const void *)pa,
                      *(const char *const *)(const void *)pb);
    case FT_INT:
        return *(const int64_t *)(const void *)pa ==
               *(const int64_t *)(const void *)pb;
    case FT_ANY:
    case FT_EVENT:
        return fuzz_json_same(*(const cJSON *const *)(const void *)pa,
                              *(const cJSON *const *)(const void *)pb);
    }
    return false;
}

static void
same_req(const struct ty_wire_req *a, const struct ty_wire_req *b,
         const char *what)
{
    unsigned mask;

    if (a->id != b->id || a->op != b->op || a->len != b->len ||
        a->data != b->data)
        fuzz_fail("%s: id/op/payload differ: %lld/%d/%zu and %lld/%d/%zu", what,
                  (long long)a->id, a->op, a->len, (long long)b->id, b->op,
                  b->len);
    mask = ty__wire_ops[a->op].fields | ty__wire_ops[a->op].optional;
    for (int f = 0; f < F_COUNT; f++)
        if ((mask & TY__WIRE_BIT(f)) && !field_eq(a, b, &ty__wire_fields[f]))
            fuzz_fail("%s: field \"%s\" differs", what, ty__wire_fields[f].key);
}

/* The same object with a member the flat scanner refuses (a nested
 * value) and the cJSON path ignores, just before its closing brace. */
static char *
with_nested_member(const char *json, size_t jlen, size_t *len)
{
    size_t end = jlen;
    char *s;

    while (end > 0 && json[end - 1] != '}')
        end--;
    if (end == 0)
        fuzz_fail("the fast path took a message without a closing brace");
    s = malloc(jlen + 16);
    memcpy(s, json, end - 1);
    *len = (size_t)sprintf(s + end - 1, ",\"~\":[]}") + end - 1;
    memcpy(s + *len, json + end, jlen - end);
    *len += jlen - end;
    return s;
}

static void
check_slow_path(const char *json, size_t jlen, const void *pl, size_t plen,
                bool has_payload, const struct ty_wire_req *fast)
{
    struct ty_wire_req *slow = malloc(sizeof(*slow));
    size_t len;
    char *s = with_nested_member(json, jlen, &len);
    char why[256];

    if (ty__wire_req_decode(s, len, pl, plen, has_payload, slow, why,
                            sizeof(why)) < 0)
        fuzz_fail("the fast path took what the cJSON path refuses: %s", why);
    if (slow->root == NULL)
        fuzz_fail("the fast path took a nested member");
    same_req(fast, slow, "fast and cJSON paths");
    ty__wire_req_release(slow);
    free(slow);
    free(s);
}

static void
check_round_trip(const struct ty_wire_req *req, bool has_payload)
{
    struct ty_wire_req *back = malloc(sizeof(*back));
    size_t len = 0;
    char *s = ty__wire_req_encode(req, &len);
    char why[256];

    if (s == NULL)
        fuzz_fail("a decoded request does not encode");
    if (ty__wire_req_decode(s, len, req->data, req->len, has_payload, back, why,
                            sizeof(why)) < 0)
        fuzz_fail("an encoded request does not decode: %s: %s", why, s);
    same_req(req, back, "encode and decode");
    ty__wire_req_release(back);
    free(back);
    free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ty_wire_req *req;
    bool has_payload;
    size_t plen;
    char *json, why[256] = "";

    if (size < 1)
        return 0;
    has_payload = data[0] & 1;
    plen = (data[0] >> 1) == 127 ? sizeof(payload) : (data[0] >> 1) * 7u;
    /* the frame in a buffer of its own size, so ASan sees any overread */
    json = malloc(size - 1 ? size - 1 : 1);
    memcpy(json, data + 1, size - 1);
    req = malloc(sizeof(*req));
    if (ty__wire_req_decode(json, size - 1, has_payload ? payload : NULL, plen,
                            has_payload, req, why, sizeof(why)) == 0) {
        if ((unsigned)req->op >= TY_WIRE_NOPS || req->id < 1)
            fuzz_fail("decoded op %d id %lld", req->op, (long long)req->id);
        if (req->root == NULL)
            check_slow_path(json, size - 1, has_payload ? payload : NULL, plen,
                            has_payload, req);
        check_round_trip(req, has_payload);
    } else if (why[0] == '\0') {
        fuzz_fail("a refusal without a reason");
    }
    ty__wire_req_release(req);
    free(req);
    free(json);
    return 0;
}
