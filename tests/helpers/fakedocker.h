/*
 * fakedocker.h — a fake Docker engine for client tests.
 *
 * It listens on a unix socket in the test's temporary directory (or on a
 * loopback TCP port), serves each connection in a thread of the test
 * process, records every request (method, path with query, body) and
 * answers from a script of routes. /_ping and /version answer like an
 * engine speaking API 1.41 (minimum 1.12) until told otherwise, and a
 * versioned path outside that range gets the 400 a real engine gives.
 *
 * Routes are matched newest first: a route added later overrides an
 * earlier one, and a route with nth = 3 answers only the third request
 * that matches its method and pattern (error injection), leaving the
 * others to older routes. Unmatched requests get 404 {"message": ...}.
 *
 * Self-contained (libc and pthreads only) because every test program
 * links the helpers. Ownership: routes are copied; returned requests stay
 * valid until fakedocker_destroy; fakedocker_log's string is the caller's.
 */
#ifndef TY_FAKEDOCKER_H
#define TY_FAKEDOCKER_H

#include <stdbool.h>
#include <stddef.h>

struct fakedocker;

struct fakedocker_route {
    const char *method; /* "GET", "POST", "DELETE"; NULL = any */
    const char *path;   /* fnmatch(3) pattern on the path without query,
                         * '*' also matching '/' */
    int nth;            /* 0 = every match; n = only the n-th (1-based) */
    int status;
    const char *body;    /* NULL = empty */
    size_t body_len;     /* 0 = strlen(body) */
    const char *headers; /* extra lines, each ending "\r\n" */
    int delay_ms;        /* wait before answering */
    size_t trickle;      /* send the body in pieces of this many bytes,
                          * 1 ms apart (0 = at once) */
    bool hold;           /* stream: no length, keep the connection open
                          * until the client or fakedocker_destroy ends it */
};

struct fakedocker_request {
    char *method;
    char *target; /* path and query as sent */
    char *body;   /* NUL-terminated; may hold binary data */
    size_t body_len;
};

/* A fake engine on a unix socket (tcp false) or 127.0.0.1 (tcp true);
 * aborts the test process if it cannot listen. */
struct fakedocker *fakedocker_new(bool tcp);
void fakedocker_destroy(struct fakedocker **f);
/* "unix:///.../docker.sock" or "tcp://127.0.0.1:PORT". */
const char *fakedocker_host(const struct fakedocker *f);
/* The versions /_ping and /version report and the range accepted. */
void fakedocker_set_versions(struct fakedocker *f, const char *api,
                             const char *min_api);
void fakedocker_route(struct fakedocker *f, const struct fakedocker_route *r);
/* Shorthand for a route answering every matching request. */
void fakedocker_answer(struct fakedocker *f, const char *method,
                       const char *path, int status, const char *body);
/* Shorthand for a route answering only the nth matching request. */
void fakedocker_fail_nth(struct fakedocker *f, const char *method,
                         const char *path, int nth, int status,
                         const char *body);

/* While silent, requests (the handshake too) are read and recorded but
 * not answered, as by an engine that hangs; when it ends, the ones held
 * are answered. */
void fakedocker_set_silent(struct fakedocker *f, bool silent);

size_t fakedocker_count(struct fakedocker *f);
/* The i-th request (0-based), or NULL. */
const struct fakedocker_request *fakedocker_request(struct fakedocker *f,
                                                    size_t i);
/* "METHOD target\n" for every request, in order; with skip_handshake the
 * /_ping and /version requests are left out. Caller frees. */
char *fakedocker_log(struct fakedocker *f, bool skip_handshake);
/* Wait until at least n requests arrived; false on timeout. */
bool fakedocker_wait_count(struct fakedocker *f, size_t n, int timeout_ms);
/* Connections currently open (a streaming client still attached). */
int fakedocker_open_connections(struct fakedocker *f);

#endif
