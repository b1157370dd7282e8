/*
 * base/sql.h — what the runner's SQLite users (the daemon's tasks and
 * schedules, the run history) share: the versioned migration of a
 * module's tables, and NULL-aware text binding and reading.
 */
#ifndef TY_SQL_H
#define TY_SQL_H

#include "base/err.h"

#include <sqlite3.h>

/* Bring module's tables to version nsteps: steps[v] takes them from
 * version v to v + 1. The version of each module is its row in the table
 * `schema(module, version)` (made when missing); each step is one
 * transaction (BEGIN IMMEDIATE, the version read again inside it, so two
 * programs migrating at once do not clash). A version above nsteps (a
 * newer testyard wrote the database) is refused, the database left as
 * it was: EPROTO, status EXIT_DATAERR. A step that fails is rolled back. */
int sql_migrate(sqlite3 *db, const char *module, const char *const *steps,
                int nsteps, struct err *err);

/* Bind s to parameter i, NULL as NULL (copied: SQLITE_TRANSIENT). */
void sql_bind_text(sqlite3_stmt *st, int i, const char *s);
/* Column i as a string the caller owns; NULL for NULL. */
char *sql_col_text(sqlite3_stmt *st, int i);

#endif
