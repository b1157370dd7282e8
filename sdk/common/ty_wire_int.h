/*
 * ty_wire_int.h — what sdk/common/ty_wire.c and sdk/common/ty_wire_flat.c
 * share: the tables that describe each request field and each op, and the flat
 * fast paths. Internal to ty_wire; everything else includes ty_wire.h.
 */
#ifndef TY_WIRE_INT_H
#define TY_WIRE_INT_H

#include "ty_wire.h"

enum ty__wire_ftype { FT_STR, FT_NAME, FT_INT, FT_ANY, FT_EVENT };

enum ty__wire_field {
    F_RUN,
    F_GROUP,
    F_GROUP_INDEX,
    F_GLOBAL_INDEX,
    F_STATE,
    F_TARGET,
    F_TIMEOUT,
    F_TOPIC,
    F_VALUE,
    F_FROM,
    F_MAX,
    F_EVENT,
    F_NAME,
    F_SIZE,
    F_UPLOAD,
    F_OFFSET,
    F_BOARD,
    F_SECRET,
    F_COUNT
};

/* A request field: its wire key, type, where it lives in struct
 * ty_wire_req and, for integers, the allowed range. */
struct ty__wire_fdesc {
    const char *key;
    size_t klen;
    enum ty__wire_ftype type;
    size_t off;
    int64_t min;
    int64_t max;
};

/* An op: its wire name, the fields it requires and those it may carry
 * (bits of enum ty__wire_field), whether a binary frame follows. An
 * optional field is an integer (0 in struct ty_wire_req when absent) or a
 * string (NULL when absent), left out when printed while absent. */
struct ty__wire_opdesc {
    const char *name;
    unsigned fields;
    bool payload;
    unsigned optional;
};

#define TY__WIRE_BIT(f) (1u << (f))

extern const struct ty__wire_fdesc ty__wire_fields[F_COUNT];
extern const struct ty__wire_opdesc ty__wire_ops[TY_WIRE_NOPS];

/* Whether optional field f is set in req and belongs to its op. */
bool ty__wire_opt_present(const struct ty_wire_req *req, int f);

/* ty_wire_flat.c: the fast paths. Each returns 1 when it handled the
 * message, 0 when the message is unusual (nested values, escapes, floats,
 * anything invalid) and the cJSON path must decide; they never fail. */
int ty__wire_req_decode_flat(const char *json, size_t jlen, const void *data,
                             size_t len, bool has_payload,
                             struct ty_wire_req *req);
int ty__wire_resp_decode_flat(const char *json, size_t jlen,
                              struct ty_wire_resp *resp);
/* Print a request whose fields are all strings and integers; NULL when
 * the op carries JSON values (then cJSON prints it). */
char *ty__wire_req_print_flat(const struct ty_wire_req *req, size_t *len);

#endif
