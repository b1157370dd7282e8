/*
 * svc_fixture.h — the sync service with raw DEALER clients in one test
 * process, for tests/unit/test_syncsvc*.c (linked into every unit test).
 *
 * The service is driven inline: pump() polls its socket and calls
 * syncsvc_handle / syncsvc_tick, as the orchestrator's loop does. Clients
 * are numbered from 0; client i has routing id "c<i>" and is instance
 * g/i of run RUN (or h/<i - fix_split> from fix_split on).
 */
#ifndef TY_SVC_FIXTURE_H
#define TY_SVC_FIXTURE_H

#include "sync/sync.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RUN "run-1"

struct svc_fixture {
    struct syncsvc *svc;
    void *ctx;
    void **cli;
    int n;
    char dir[512];
    int hellos, events, released, failed, waiting;
    char last_event[64];
};

extern struct svc_fixture F;
/* Set before fix_start*: instances from this index on are in group "h"
 * (index within it from 0), the others in "g"; 0 = all in "g". */
extern int fix_split;
/* Set before fix_start*: every instance's output quota (0 = default). */
extern uint64_t fix_quota;
/* Set before fix_start*: the run-wide bounds (zero: the defaults) and the
 * group given the release board (0: none). */
extern struct syncsvc_bounds fix_bounds;
extern int fix_board_gid;

/* Start a service for n instances (topic bounds 0 = default; board_dir
 * NULL = no release board) and connect n clients. */
void fix_start_opts(int n, size_t max_entries, size_t max_bytes,
                    const char *board_dir);
void fix_start_bounded(int n, size_t max_entries, size_t max_bytes);
void fix_start(int n);
void fix_stop(void);
/* One turn of the orchestrator's loop, waiting up to ms for input. */
void pump(int ms);
void send_frames(int c, const char *json, const void *data, size_t len,
                 bool payload);
void sendf(int c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The next response for client c, pumping the service; NULL on timeout. */
cJSON *recv_resp(int c, int timeout_ms);
const char *status_of(const cJSON *r);
const char *error_of(const cJSON *r);
int64_t int_of(const cJSON *r, const char *key);
/* Expect a response with status st from client c; returns it (caller
 * frees) or NULL. */
cJSON *expect(int c, const char *st);
void expect_free(int c, const char *st);
void hello(int c);
/* A DEALER with routing id rid connected to the service (the caller
 * closes it). */
void *fix_dealer(const char *rid);
/* Give client c a new DEALER with routing id rid, as the next process of
 * its instance would have; returns the old one (the caller closes it). */
void *fix_replace(int c, const char *rid);
void hello_all(void);
char *read_file_str(const char *path, size_t *len);

#endif
