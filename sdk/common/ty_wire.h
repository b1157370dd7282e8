/*
 * ty_wire.h — the sync protocol's messages, encoded and checked in one place.
 *
 * Both ends use this module: the SDK (sdk/ty_sync.c) to build requests and
 * read responses, the coordinator's sync service (runner/sync/syncsvc*.c) to
 * read requests and build responses. A message is one JSON object (frame 1,
 * printed by cJSON) and, for file chunks and appends, a binary frame 2. The
 * protocol itself is described in docs/sync-protocol.md. Internal to
 * testyard: not part of the public header.
 *
 * The messages that make up a barrier — hello, signal, signal_and_wait and
 * their answers — are flat objects of strings and integers. They are read
 * by a small strict scanner and printed straight into a buffer, with no
 * cJSON tree in between; anything unusual (nested values, escapes,
 * fractions, any mistake) goes through cJSON, which has the last word and
 * the error messages, so both paths accept and reject the same messages.
 *
 * Ownership: a decoded message owns its cJSON tree (`root`); its `const char
 * *` and `const cJSON *` fields and the payload pointer are borrowed from
 * that tree, from the request's own `strs` (so a decoded request must not
 * be copied) or from the caller's buffers, and live until
 * ty__wire_*_release. Encoders return a NUL-terminated string the caller
 * frees; the print functions write into the caller's buffer.
 */
#ifndef TY_WIRE_H
#define TY_WIRE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TY_WIRE_JSON_MAX (1u << 20)    /* bytes in frame 1 */
#define TY_WIRE_PAYLOAD_MAX (1u << 20) /* bytes in frame 2 */
#define TY_WIRE_CHUNK (256u << 10)     /* upload chunk the SDK sends */
#define TY_WIRE_VALUE_MAX (512u << 10) /* a published value, printed */
#define TY_WIRE_NAME_MAX 255           /* state, topic, group, file name */
#define TY_WIRE_FETCH_MAX 1000         /* items one fetch may ask for */
/* Integers on the wire stay below 10^15: cJSON prints numbers with 15
 * significant digits when that reads back "close enough", so larger ones
 * could lose their last digits. */
#define TY_WIRE_INT_MAX 999999999999999LL

/* The value the coordinator queues with the heap profiler's signal
 * (sigqueue) to ask an LD_PRELOAD'ed instance for a pre-OOM snapshot
 * (docs/heap-profiling.md); any other delivery is a user's snapshot. */
#define TY_WIRE_PREOOM_SIGVAL 0x54594f4d /* "TYOM" */

enum ty_wire_op {
    TY_WIRE_HELLO,
    TY_WIRE_SIGNAL,
    TY_WIRE_BARRIER,
    TY_WIRE_SIGNAL_WAIT,
    TY_WIRE_PUBLISH,
    TY_WIRE_FETCH,
    TY_WIRE_EVENT,
    TY_WIRE_UPLOAD_BEGIN,
    TY_WIRE_UPLOAD_CHUNK,
    TY_WIRE_UPLOAD_END,
    TY_WIRE_UPLOAD_ABORT,
    TY_WIRE_APPEND,
    TY_WIRE_SNAPSHOT_WAIT,
    TY_WIRE_NOPS
};

enum ty_wire_status {
    TY_WIRE_OK,       /* 0 */
    TY_WIRE_TIMEOUT,  /* -ETIMEDOUT: the wait's deadline passed */
    TY_WIRE_FAILED,   /* -EPIPE: a barrier can no longer be met */
    TY_WIRE_CANCELED, /* -ECANCELED: the run is being canceled */
    TY_WIRE_INVALID,  /* -EINVAL: malformed request */
    TY_WIRE_DENIED,   /* -EACCES: no or wrong secret, no hello, wrong run,
                         unknown instance */
    TY_WIRE_FULL,     /* -ENOSPC: a topic bound was hit */
    TY_WIRE_BUSY,     /* -EBUSY: too many waits or uploads, name in use */
    TY_WIRE_NOTFOUND, /* -ENOENT: unknown upload */
    TY_WIRE_IOERR,    /* -EIO: the coordinator could not write a file */
    TY_WIRE_NSTATUS
};

/* A request. Which fields an op carries is in the table in ty_wire.c and in
 * docs/sync-protocol.md; the others are zero / NULL. */
struct ty_wire_req {
    int64_t id; /* chosen by the client, echoed in the response */
    enum ty_wire_op op;
    const char *run;      /* hello */
    const char *group;    /* hello; barrier, signal_and_wait: optional, the
                             group whose instances take part */
    int64_t group_index;  /* hello */
    int64_t global_index; /* hello */
    const char *state;    /* signal, barrier, signal_and_wait */
    int64_t target;       /* barrier, signal_and_wait */
    int64_t timeout_ms;   /* barrier, signal_and_wait, fetch */
    const char *topic;    /* publish, fetch */
    const cJSON *value;   /* publish: any JSON value */
    int64_t from;         /* fetch: first sequence number wanted */
    int64_t max;          /* fetch: most items to return */
    const cJSON *event;   /* event: an object with a "type" string */
    const char *name;     /* upload_begin, append: file in the outdir */
    int64_t size;         /* upload_begin: total bytes */
    int64_t upload;       /* upload_chunk, upload_end, upload_abort */
    int64_t offset;       /* upload_chunk: where data goes */
    /* Optional, 0 when absent. hello: 1 = the client can read the release
     * board; barrier, signal_and_wait: the board slot (from 1) to answer
     * a release in instead of a message. */
    int64_t board;
    /* hello: the run's secret (TESTYARD_SYNC_SECRET). Optional here so
     * that the service, not the decoder, refuses a hello without it. */
    const char *secret;
    const void *data; /* upload_chunk, append: frame 2 */
    size_t len;
    cJSON *root; /* owned after decode; NULL when built by hand */
    /* Decoding without cJSON copies the strings here (at most three per
     * op: hello's run, group and secret), so the string fields may point
     * into it. */
    char strs[3 * (TY_WIRE_NAME_MAX + 1)];
};

/* A response. seq, upload, next and board are -1 when absent. */
struct ty_wire_resp {
    int64_t id;
    enum ty_wire_status status;
    const char *error;  /* set when status != OK */
    int64_t seq;        /* signal, signal_and_wait, publish */
    int64_t upload;     /* upload_begin */
    int64_t next;       /* fetch: the cursor after the items */
    int64_t board;      /* hello: the first of this connection's slots */
    const cJSON *items; /* fetch: array of {"seq": n, "value": v} */
    cJSON *root;        /* owned after decode */
};

/* Op and status names as they appear on the wire; NULL when out of range. */
const char *ty__wire_op_name(enum ty_wire_op op);
const char *ty__wire_status_name(enum ty_wire_status st);
/* The negative errno a status maps to (0 for OK). */
int ty__wire_status_errno(enum ty_wire_status st);
/* Whether the op carries a binary frame 2. */
bool ty__wire_op_has_payload(enum ty_wire_op op);

/* Encode a request's JSON frame (the payload, if any, is sent as is).
 * Returns NULL when a required field is missing (programming error). */
char *ty__wire_req_encode(const struct ty_wire_req *req, size_t *len);
/* Decode and check a request. Returns 0, or -1 with a phrase in why; on
 * failure req->id is still set when the frame had a usable id (so the
 * service can answer "invalid"), else 0. data/len is frame 2 (NULL when
 * absent) and must outlive req. */
int ty__wire_req_decode(const void *json, size_t jlen, const void *data,
                        size_t len, bool has_payload, struct ty_wire_req *req,
                        char *why, size_t whylen);
void ty__wire_req_release(struct ty_wire_req *req);

/* Initialise a response for id with status OK and nothing else set. */
void ty__wire_resp_init(struct ty_wire_resp *resp, int64_t id);
char *ty__wire_resp_encode(const struct ty_wire_resp *resp, size_t *len);
int ty__wire_resp_decode(const void *json, size_t jlen,
                         struct ty_wire_resp *resp, char *why, size_t whylen);
void ty__wire_resp_release(struct ty_wire_resp *resp);

/* Print a response into buf without cJSON, byte for byte what
 * ty__wire_resp_encode prints. Returns its length (buf is NUL-terminated),
 * or 0 when it does not fit or carries items (encode it then). */
size_t ty__wire_resp_print(const struct ty_wire_resp *resp, char *buf,
                           size_t size);
/* Many answers that share a status and error and differ only in id and
 * seq — a barrier's release — are printed as {"id":<id><mid>,"seq":<seq>}:
 * ty__wire_resp_mid renders the shared middle once (0 when it does not
 * fit), ty__wire_resp_join one answer around it (seq < 0: none). */
size_t ty__wire_resp_mid(enum ty_wire_status st, const char *error, char *buf,
                         size_t size);
size_t ty__wire_resp_join(int64_t id, const char *mid, size_t midlen,
                          int64_t seq, char *buf, size_t size);

/* Whether name is an acceptable output file name: relative, components
 * separated by '/', none empty, "." or "..", no control characters or
 * backslashes, not ending in ".tmp", at most TY_WIRE_NAME_MAX bytes. */
bool ty__wire_name_ok(const char *name);

#endif
