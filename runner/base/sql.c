/*
 * sql.c — see base/sql.h.
 */
#include "base/sql.h"

#include "base/util.h"

#include <errno.h>
#include <stdio.h>

static int
sqlerr(sqlite3 *db, struct err *err, const char *what)
{
    const char *file = sqlite3_db_filename(db, "main");

    err_set(err, EIO, "%s: %s: %s", file && *file ? file : "database", what,
            sqlite3_errmsg(db));
    return err_status(err, EXIT_SOFTWARE);
}

static int
exec(sqlite3 *db, const char *sql, const char *what, struct err *err)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK
               ? 0
               : sqlerr(db, err, what);
}

/* module's version (0: none yet) into *v. */
static int
version_of(sqlite3 *db, const char *module, int *v, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    *v = 0;
    if (sqlite3_prepare_v2(db, "SELECT version FROM schema WHERE module = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return sqlerr(db, err, "schema");
    sqlite3_bind_text(st, 1, module, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0
                                                 : sqlerr(db, err, "schema");
}

static int
set_version(sqlite3 *db, const char *module, int v, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if (sqlite3_prepare_v2(db,
                           "INSERT INTO schema(module, version) VALUES(?, ?) "
                           "ON CONFLICT(module) DO UPDATE SET "
                           "version = excluded.version",
                           -1, &st, NULL) != SQLITE_OK)
        return sqlerr(db, err, "schema");
    sqlite3_bind_text(st, 1, module, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, v);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : sqlerr(db, err, "schema");
}

/* One step if one is due, in its transaction: 1 after a step, 0 when
 * up to date, -1 (rolled back). */
static int
step(sqlite3 *db, const char *module, const char *const *steps, int nsteps,
     struct err *err)
{
    int v;

    if (exec(db, "BEGIN IMMEDIATE", "begin", err) < 0)
        return -1;
    if (version_of(db, module, &v, err) < 0)
        goto fail;
    if (v > nsteps) {
        err_set(err, EPROTO,
                "the database's %s tables are version %d, newer than this "
                "testyard knows (%d): a newer testyard wrote it",
                module, v, nsteps);
        err_status(err, EXIT_DATAERR);
        goto fail;
    }
    if (v == nsteps)
        return exec(db, "COMMIT", "commit", err) < 0 ? -1 : 0;
    if (exec(db, steps[v], "migrating", err) < 0 ||
        set_version(db, module, v + 1, err) < 0 ||
        exec(db, "COMMIT", "commit", err) < 0) {
        err_prefix(err, "%s schema version %d", module, v + 1);
        goto fail;
    }
    return 1;
fail:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

int
sql_migrate(sqlite3 *db, const char *module, const char *const *steps,
            int nsteps, struct err *err)
{
    int rc;

    if (exec(db,
             "CREATE TABLE IF NOT EXISTS schema(module TEXT PRIMARY KEY, "
             "version INTEGER NOT NULL)",
             "schema", err) < 0)
        return -1;
    while ((rc = step(db, module, steps, nsteps, err)) > 0)
        ;
    return rc;
}

void
sql_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s == NULL)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
}

char *
sql_col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);

    return s != NULL ? xstrdup((const char *)s) : NULL;
}
