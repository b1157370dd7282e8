/*
 * history_db.c — the history tables and their migrations, and the SQLite
 * calls the module makes, with SQLite's errors turned into struct err.
 *
 * The tables' version is the row ('history', N) of the shared table
 * schema(module, version). Each step from N to N+1 runs in a transaction
 * of its own (BEGIN IMMEDIATE, so two programs migrating at once take
 * turns and the second finds the work done) together with the row's
 * update; a database at a version above the one this program knows was
 * written by a newer testyard and is left alone. Version 2 added
 * history_fits; runs recorded at version 1 simply have no rows there.
 */
#include "history/history_int.h"

#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* Step i takes the tables from version i to i + 1. */
static const char *const steps[] = {
    "CREATE TABLE history_runs("
    " id INTEGER PRIMARY KEY,"
    " name TEXT NOT NULL,"
    " number INTEGER NOT NULL,"
    " schedule TEXT,"
    " task_id INTEGER,"
    " version TEXT,"
    " run_id TEXT,"
    " run_dir TEXT,"
    " started TEXT,"
    " ended TEXT,"
    " duration_s REAL,"
    " build_s REAL,"
    " outcome TEXT NOT NULL,"
    " recorded TEXT NOT NULL,"
    " UNIQUE(name, number));"
    "CREATE INDEX history_runs_started ON history_runs(name, started);"
    "CREATE TABLE history_groups("
    " run INTEGER NOT NULL REFERENCES history_runs(id) ON DELETE CASCADE,"
    " group_id TEXT NOT NULL,"
    " instances INTEGER,"
    " peak_bytes INTEGER,"
    " final_bytes INTEGER,"
    " growth_bytes_per_round REAL,"
    " verdict TEXT,"
    " oom_kills INTEGER,"
    " success INTEGER NOT NULL DEFAULT 0,"
    " failure INTEGER NOT NULL DEFAULT 0,"
    " crash INTEGER NOT NULL DEFAULT 0,"
    " oom INTEGER NOT NULL DEFAULT 0,"
    " timeout INTEGER NOT NULL DEFAULT 0,"
    " canceled INTEGER NOT NULL DEFAULT 0,"
    " lost INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY(run, group_id));",
    /* 2: the slopes of the report's fits against the work done; a run
     * recorded before has none */
    "CREATE TABLE history_fits("
    " run INTEGER NOT NULL REFERENCES history_runs(id) ON DELETE CASCADE,"
    " group_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL,"
    " series TEXT NOT NULL,"
    " x TEXT NOT NULL,"
    " stage TEXT,"
    " slope REAL,"
    " r2 REAL,"
    " verdict TEXT,"
    " instances INTEGER,"
    " points INTEGER,"
    " PRIMARY KEY(run, group_id, seq));",
};

_Static_assert(ARRAY_LEN(steps) == HISTORY_SCHEMA_VERSION,
               "one migration step per schema version");

int
history__sqlerr(sqlite3 *db, struct err *err, const char *what)
{
    int rc = sqlite3_extended_errcode(db) & 0xff;
    int status = EXIT_SOFTWARE, code = EIO;

    if (rc == SQLITE_FULL || rc == SQLITE_IOERR) {
        status = EXIT_IOERR;
        code = rc == SQLITE_FULL ? ENOSPC : EIO;
    } else if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
        status = EXIT_UNAVAILABLE;
        code = EBUSY;
    } else if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) {
        status = EXIT_DATAERR;
        code = EPROTO;
    }
    err_set(err, code, "%s: %s", what, sqlite3_errmsg(db));
    return err_status(err, status);
}

int
history__exec(sqlite3 *db, const char *sql, struct err *err)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return history__sqlerr(db, err, "history database");
    return 0;
}

int
history__prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st,
                 struct err *err)
{
    if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK)
        return history__sqlerr(db, err, "history database");
    return 0;
}

void
history__bind_double(sqlite3_stmt *st, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_double(st, i, v);
}

void
history__bind_i64(sqlite3_stmt *st, int i, int64_t v, bool known)
{
    if (known)
        sqlite3_bind_int64(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

double
history__col_double(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL
               ? NAN
               : sqlite3_column_double(st, i);
}

int64_t
history__col_i64(sqlite3_stmt *st, int i, int64_t unknown)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL
               ? unknown
               : sqlite3_column_int64(st, i);
}

int
history_migrate(sqlite3 *db, struct err *err)
{
    if (sql_migrate(db, "history", steps, (int)ARRAY_LEN(steps), err) < 0)
        return err_prefix(err, "migrating the history tables");
    return 0;
}
