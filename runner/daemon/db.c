/*
 * db.c — the daemon's SQLite database, DATA/testyard.db: opened in WAL
 * mode, every module's tables migrated on open, one transaction a step,
 * each module's version in the schema table so a database a newer
 * testyard wrote is refused instead of misread.
 */
#include "daemon/daemon_int.h"
#include "daemon/schedule_int.h"
#include "history/history.h"

#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Every module's migration, in order. */
static const struct daemon_migration migrations[] = {
    {"daemon", daemon__migrate},
    {"history", history_migrate},
    {"schedule", schedule__migrate},
};

char *
daemon_data_dir(const char *opt, bool create, struct err *err)
{
    const char *env = getenv("TESTYARD_DATA");
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    cleanup_free char *dir = NULL;

    if (opt != NULL && opt[0] != '\0')
        dir = xstrdup(opt);
    else if (env != NULL && env[0] != '\0')
        dir = xstrdup(env);
    else if (xdg != NULL && xdg[0] == '/')
        dir = path_join(xdg, "testyard");
    else if (home != NULL && home[0] == '/')
        dir = path_join(home, ".local/state/testyard");
    else
        return err_set(err, ENOENT,
                       "no data folder: set --data, "
                       "TESTYARD_DATA or HOME"),
               NULL;
    if (create) {
        cleanup_free char *parent = path_dirname(dir);

        if (mkdir_p(parent, err) < 0)
            return NULL;
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
            return err_sys(err, errno, "%s", dir), NULL;
    }
    return path_absolute(dir);
}

int
daemon__exec(sqlite3 *db, const char *sql, struct err *err)
{
    char *msg = NULL;

    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    err_set(err, EIO, "database: %s", msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return err_status(err, EXIT_SOFTWARE);
}

static int
configure(sqlite3 *db, struct err *err)
{
    if (daemon__exec(db, "PRAGMA journal_mode = WAL;", err) < 0 ||
        daemon__exec(db, "PRAGMA foreign_keys = ON;", err) < 0)
        return -1;
    sqlite3_busy_timeout(db, 5000);
    return daemon__exec(db,
                        "CREATE TABLE IF NOT EXISTS schema("
                        "module TEXT PRIMARY KEY, version INTEGER NOT NULL);",
                        err);
}

int
daemon_db_open(const char *data_dir, bool create, sqlite3 **db, struct err *err)
{
    cleanup_free char *path = path_join(data_dir, DAEMON_DB);
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX |
                (create ? SQLITE_OPEN_CREATE : 0);

    *db = NULL;
    if (!create && !path_exists(path))
        return err_set(err, ENOENT, "%s: no such database", path);
    if (sqlite3_open_v2(path, db, flags, NULL) != SQLITE_OK) {
        err_set(err, EIO, "%s: %s", path, sqlite3_errmsg(*db));
        goto fail;
    }
    if (configure(*db, err) < 0)
        goto fail;
    for (size_t i = 0; i < ARRAY_LEN(migrations); i++)
        if (migrations[i].migrate(*db, err) < 0)
            goto fail;
    return 0;
fail:
    if (*db != NULL && (sqlite3_errcode(*db) == SQLITE_NOTADB ||
                        sqlite3_errcode(*db) == SQLITE_CORRUPT)) {
        /* not a database, or a damaged one: bad data */
        err_set(err, EIO, "%s: %s", path, sqlite3_errmsg(*db));
        sqlite3_close(*db);
        *db = NULL;
        return err_status(err, EXIT_DATAERR);
    }
    err_prefix(err, "%s", path);
    sqlite3_close(*db);
    *db = NULL;
    return err_status(err, err->status ? err->status : EXIT_SOFTWARE);
}
