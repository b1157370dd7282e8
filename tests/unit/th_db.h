/*
 * th_db.h — what the unit tests of the SQLite-backed modules (daemon/,
 * history/) share.
 */
#ifndef TY_TH_DB_H
#define TY_TH_DB_H

#include <sqlite3.h>
#include <stdint.h>

/* The first column of the first row of sql (a SELECT count(*) ...): -1
 * when there is no row or sql does not compile. */
int64_t th_db_count(sqlite3 *db, const char *sql);

#endif
