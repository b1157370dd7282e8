/*
 * daemon/daemon.h — the scheduling daemon: a queue of tasks (compositions
 * submitted with a snapshot of their plan), admitted by memory and CPU
 * budget, run as `testyard run` child processes, with its state in SQLite
 * in a data folder and an HTTP API on loopback behind a bearer token; and
 * the client the command line talks to it with (docs/scheduling.md).
 *
 * The data folder (DATA): testyard.db, token, daemon.json, daemon.lock,
 * daemon.log, tasks/<id>/ (the snapshot and the run's log), runs/.
 *
 * Ownership: char * returned is the caller's; const char * borrowed.
 */
#ifndef TY_DAEMON_H
#define TY_DAEMON_H

#include "base/err.h"
#include "base/strbuf.h"

#include <sqlite3.h>
#include <stdbool.h>

/* DATA: opt, else $TESTYARD_DATA, else ${XDG_STATE_HOME:-$HOME/.local/
 * state}/testyard, absolute; created (0700) when create. */
char *daemon_data_dir(const char *opt, bool create, struct err *err);

/* Open DATA/testyard.db (WAL, busy_timeout 5000, foreign keys on), create
 * the schema table and run every module's migrations, one transaction a
 * step. A database a newer testyard wrote is refused (EXIT_SOFTWARE);
 * without create a missing database is ENOENT. *db is the caller's
 * (sqlite3_close). */
int daemon_db_open(const char *data_dir, bool create, sqlite3 **db,
                   struct err *err);

struct daemon_opts {
    const char *data_dir;      /* absolute, made */
    const char *listen;        /* "127.0.0.1:PORT"; NULL: port 0 */
    const char *plans_dir;     /* absolute, or NULL */
    const char *memory_budget; /* NULL or "": 75% of MemAvailable */
    const char *cpu_budget;    /* NULL or "": every online CPU */
    /* -1, or a descriptor that gets one line once the daemon listens
     * ("ok URL") or could not start ("STATUS MESSAGE"), then is closed:
     * how a detached daemon tells the command that started it. */
    int ready_fd;
};

/* "127.0.0.1:PORT" (any 127.x.y.z; PORT 0 picks a free one) into *addr
 * and *port; anything else is refused (loopback only). */
int daemon_parse_listen(const char *s, char addr[16], unsigned *port,
                        struct err *err);

/* Run the daemon until SIGTERM or SIGINT: lock DATA (one daemon per
 * folder), token, database, HTTP API, queue. Returns 0 after a clean
 * stop, -1 when it could not start (err; a second daemon's status 1). */
int daemon_serve(const struct daemon_opts *o, struct err *err);

/* The client: daemon.json's URL and the token, for the command line. */
struct daemon_client;

/* No daemon.json, or no daemon answering at its URL (found on the first
 * call): EXIT_UNAVAILABLE with a message naming DATA and how to start
 * one. */
struct daemon_client *daemon_client_new(const char *data_dir, struct err *err);
void daemon_client_destroy(struct daemon_client **cl);
/* The dashboard's login link: URL/login?token=TOKEN (the caller's). */
char *daemon_client_login_url(const struct daemon_client *cl);

/* What one call answered. */
struct daemon_reply {
    long http; /* HTTP status */
    bool done; /* X-Testyard-Done: 1 */
    struct strbuf body;
};

/* method path [body]: 0 with r filled (r->body the caller's to release,
 * whatever the status); an HTTP error ≥ 400 is -1 with the daemon's
 * "error" and "status" in err. */
int daemon_client_call(struct daemon_client *cl, const char *method,
                       const char *path, const char *body,
                       struct daemon_reply *r, struct err *err);

#endif
