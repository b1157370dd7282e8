/*
 * fuzz_wire_resp.h — the checks of a decoded response, shared by
 * fuzz_wire_resp.c and fuzz_zmtp.c (which decodes every message it
 * reads, as the SDK's connection does):
 *   - a response the fast path takes is taken alike by the cJSON path;
 *   - ty__wire_resp_print writes what cJSON prints for the same response;
 *   - a decoded response encodes, and decodes back to the same response.
 */
#ifndef TY_FUZZ_WIRE_RESP_H
#define TY_FUZZ_WIRE_RESP_H

#include "fuzz.h"
#include "ty_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
fuzz_same_resp(const struct ty_wire_resp *a, const struct ty_wire_resp *b,
               const char *what)
{
    bool err_eq = a->status == TY_WIRE_OK ||
                  (a->error && b->error && strcmp(a->error, b->error) == 0);

    if (a->id != b->id || a->status != b->status || !err_eq ||
        a->seq != b->seq || a->upload != b->upload || a->next != b->next ||
        a->board != b->board || !fuzz_json_same(a->items, b->items))
        fuzz_fail("%s: responses differ (id %lld/%lld, status %d/%d)", what,
                  (long long)a->id, (long long)b->id, a->status, b->status);
}

/* What cJSON prints for resp: ty__wire_resp_encode's slow path. */
static char *
fuzz_resp_cjson(const struct ty_wire_resp *r)
{
    cJSON *o = cJSON_CreateObject();
    const char *st = ty__wire_status_name(r->status);
    const struct {
        const char *key;
        int64_t v;
    } opt[] = {{"seq", r->seq},
               {"upload", r->upload},
               {"next", r->next},
               {"board", r->board}};
    char *s;

    cJSON_AddNumberToObject(o, "id", (double)r->id);
    cJSON_AddStringToObject(o, "status", st);
    if (r->status != TY_WIRE_OK)
        cJSON_AddStringToObject(o, "error", r->error ? r->error : st);
    for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
        if (opt[i].v >= 0)
            cJSON_AddNumberToObject(o, opt[i].key, (double)opt[i].v);
    s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static void
fuzz_check_print(const struct ty_wire_resp *r)
{
    char buf[2048];
    size_t n = ty__wire_resp_print(r, buf, sizeof(buf));
    char *s;

    if (n == 0)
        return;
    s = fuzz_resp_cjson(r);
    if (strlen(buf) != n || strcmp(s, buf) != 0)
        fuzz_fail("resp_print wrote %s, cJSON prints %s", buf, s);
    free(s);
}

static void
fuzz_check_resp_round_trip(const struct ty_wire_resp *r)
{
    struct ty_wire_resp back;
    size_t len = 0;
    char *s = ty__wire_resp_encode(r, &len);
    char why[256];

    if (s == NULL)
        fuzz_fail("a decoded response does not encode");
    if (ty__wire_resp_decode(s, len, &back, why, sizeof(why)) < 0)
        fuzz_fail("an encoded response does not decode: %s: %s", why, s);
    fuzz_same_resp(r, &back, "encode and decode");
    ty__wire_resp_release(&back);
    free(s);
}

/* The cJSON path forced by a nested member before the closing brace. */
static void
fuzz_check_resp_slow(const char *json, size_t jlen,
                     const struct ty_wire_resp *fast)
{
    struct ty_wire_resp slow;
    size_t end = jlen, len;
    char *s, why[256];

    while (end > 0 && json[end - 1] != '}')
        end--;
    if (end == 0)
        fuzz_fail("the fast path took a response without a closing brace");
    s = malloc(jlen + 16);
    memcpy(s, json, end - 1);
    len = (size_t)sprintf(s + end - 1, ",\"~\":[]}") + end - 1;
    memcpy(s + len, json + end, jlen - end);
    len += jlen - end;
    if (ty__wire_resp_decode(s, len, &slow, why, sizeof(why)) < 0)
        fuzz_fail("the fast path took what the cJSON path refuses: %s", why);
    if (slow.root == NULL)
        fuzz_fail("the fast path took a nested member");
    fuzz_same_resp(fast, &slow, "fast and cJSON paths");
    ty__wire_resp_release(&slow);
    free(s);
}

static void
fuzz_resp(const char *json, size_t jlen)
{
    struct ty_wire_resp resp;
    char why[256] = "";

    if (ty__wire_resp_decode(json, jlen, &resp, why, sizeof(why)) == 0) {
        if ((unsigned)resp.status >= TY_WIRE_NSTATUS || resp.id < 0)
            fuzz_fail("decoded status %d id %lld", resp.status,
                      (long long)resp.id);
        if (resp.root == NULL)
            fuzz_check_resp_slow(json, jlen, &resp);
        fuzz_check_print(&resp);
        fuzz_check_resp_round_trip(&resp);
    } else if (why[0] == '\0') {
        fuzz_fail("a refusal without a reason");
    }
    ty__wire_resp_release(&resp);
}

#endif
