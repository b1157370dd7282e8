/*
 * docker/docker_int.h — the request machinery shared by docker.c and the
 * docker_*.c files that implement the endpoints. Not for other modules:
 * they use docker/docker.h.
 */
#ifndef TY_DOCKER_INTERNAL_H
#define TY_DOCKER_INTERNAL_H

#include "base/strbuf.h"
#include "docker/docker.h"
#include "base/util.h"

#define DOCKER_KILL_TIMEOUT_MS 5000

/* One HTTP request. Only method and path are required. */
struct docker_req {
    const char *method;
    const char *path; /* after the /vX.Y prefix, with its query */
    bool unversioned; /* /_ping and /version are asked before we know */
    const char *ctype;
    const void *body;
    size_t body_len;
    int body_fd; /* >= 0: upload body_size bytes read from it */
    uint64_t body_size;
    /* Long-lived (events, build, wait, logs that follow): the answer's
     * headers must come within the call timeout, then it has no overall
     * deadline; its cancel token (or docker_abort) ends it. */
    bool stream;
    int64_t timeout_ms; /* overall bound of a short call; 0 = the handle's */
    struct docker_cancel *cancel;
    /* Streaming: receives the body of a 2xx answer as it arrives and
     * returns 0 to go on, 1 to stop cleanly, -1 (err filled) to fail. When
     * NULL the body is collected in the response. */
    int (*on_data)(void *arg, const char *data, size_t len, struct err *err);
    void *arg;
    void (*on_ready)(void *ready_arg); /* 2xx headers received */
    void *ready_arg;
};

struct docker_resp {
    long status;
    struct strbuf body;
    char api_version[32]; /* the Api-Version header, if any */
};

/* Send r. Fails on transport errors, on cancellation and on HTTP >= 400
 * (with the daemon's message). resp is initialised here and must be
 * released with docker__resp_release() whatever the result. */
int docker__call(struct docker *d, const struct docker_req *r,
                 struct docker_resp *resp, struct err *err);
void docker__resp_release(struct docker_resp *resp);

/* A request with an optional JSON body whose answer is a JSON document;
 * returns it parsed (caller owns). */
cJSON *docker__call_json(struct docker *d, const char *method, const char *path,
                         const cJSON *body, struct err *err);
/* A request whose answer body does not matter. */
int docker__call_simple(struct docker *d, const char *method, const char *path,
                        const cJSON *body, struct err *err);

/* Percent-encoding of s for a query value or a path segment ('/' and ':'
 * are kept in path segments so image references work). Caller frees. */
char *docker__esc_query(const char *s);
char *docker__esc_path(const char *s);
/* The value of a filters= parameter: {"label":[...],"type":[...],
 * "event":[...]}, percent-encoded; any list may be NULL. Caller frees. */
char *docker__filters(const char *const *labels, const char *const *types,
                      const char *const *events);
/* A JSON object of labels from "k=v" strings (missing '=' means empty). */
cJSON *docker__labels_object(const char *const *labels);

/* Splits a byte stream into lines ('\n', a '\r' before it dropped) and
 * hands each, NUL-terminated, to line(); held by value. */
struct docker_lines {
    struct strbuf buf;
    int (*line)(void *arg, char *line, struct err *err); /* like on_data */
    void *arg;
};
void docker__lines_init(struct docker_lines *l,
                        int (*line)(void *arg, char *line, struct err *err),
                        void *arg);
void docker__lines_release(struct docker_lines *l);
/* on_data for a struct docker_lines. */
int docker__lines_feed(void *arg, const char *data, size_t len,
                       struct err *err);

/* A string member of obj, or NULL. */
const char *docker__str(const cJSON *obj, const char *name);

#endif
