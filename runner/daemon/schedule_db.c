/*
 * schedule_db.c — schedules and their firings in the daemon's SQLite
 * database.
 *
 * Two tables: `schedules` (one row per `schedule add`) and
 * `schedule_firings` (one row each time one fired: the build it ran, the
 * version it recorded, the task it queued). Every change is one
 * transaction, so a crash leaves a schedule either fired (and recorded) or
 * not. The schema is versioned in the shared `schema` table under the
 * module name "schedules"; a database from a newer testyard is refused
 * rather than guessed at.
 */
#include "daemon/schedule_int.h"

#include "base/sql.h"
#include "base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 64

static const char schema_v1[] = "CREATE TABLE schedules ("
                                " id INTEGER PRIMARY KEY,"
                                " name TEXT NOT NULL UNIQUE,"
                                " composition TEXT NOT NULL,"
                                " plans TEXT,"
                                " spec TEXT NOT NULL,"
                                " tz TEXT NOT NULL DEFAULT 'UTC',"
                                " build TEXT,"
                                " version_from TEXT,"
                                " priority INTEGER NOT NULL DEFAULT 0,"
                                " created INTEGER NOT NULL,"
                                " paused INTEGER NOT NULL DEFAULT 0,"
                                " last_fired INTEGER);"
                                "CREATE TABLE schedule_firings ("
                                " id INTEGER PRIMARY KEY,"
                                " schedule_id INTEGER NOT NULL"
                                "  REFERENCES schedules(id) ON DELETE CASCADE,"
                                " fire_time INTEGER NOT NULL,"
                                " started INTEGER NOT NULL,"
                                " task_id INTEGER,"
                                " build_log TEXT,"
                                " build_seconds REAL,"
                                " build_status TEXT,"
                                " version TEXT);"
                                "CREATE INDEX schedule_firings_by_schedule"
                                " ON schedule_firings(schedule_id, fire_time);";

/* 2: how long a build may take (seconds; 0: no limit). */
static const char schema_v2[] = "ALTER TABLE schedules ADD COLUMN"
                                " build_timeout INTEGER NOT NULL"
                                " DEFAULT 3600;";

/* An SQLite failure as an err: a full disk is ENOSPC (exit 74), a locked
 * database EBUSY, the rest EIO. */
static int
db_error(sqlite3 *db, int rc, const char *what, struct err *err)
{
    int code = EIO;

    if (rc == SQLITE_FULL)
        code = ENOSPC;
    else if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
        code = EBUSY;
    err_set(err, code, "schedules: %s: %s", what, sqlite3_errmsg(db));
    return err_status(err, err_io_status(code));
}

static int
db_exec(sqlite3 *db, const char *sql, struct err *err)
{
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);

    return rc == SQLITE_OK ? 0 : db_error(db, rc, sql, err);
}

static int
db_begin(sqlite3 *db, struct err *err)
{
    return db_exec(db, "BEGIN IMMEDIATE", err);
}

/* Commit when rc is 0, else roll back (keeping err); returns rc or -1. */
static int
db_end(sqlite3 *db, int rc, struct err *err)
{
    if (rc == 0 && db_exec(db, "COMMIT", err) == 0)
        return 0;
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

static sqlite3_stmt *
db_prepare(sqlite3 *db, const char *sql, struct err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

    if (rc != SQLITE_OK) {
        db_error(db, rc, "prepare", err);
        return NULL;
    }
    return st;
}

/* Step a statement that returns no rows and finalize it. */
static int
db_done(sqlite3 *db, sqlite3_stmt *st, const char *what, struct err *err)
{
    int rc = sqlite3_step(st);

    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : db_error(db, rc, what, err);
}

/* Step st to its end, reading each row with read into *out, a growing
 * array of size-byte items (*n of them, kept on failure for the caller
 * to free); finalizes st. */
static int
db_rows(sqlite3 *db, sqlite3_stmt *st, size_t size,
        void (*read)(sqlite3_stmt *, void *), void **out, size_t *n,
        const char *what, struct err *err)
{
    size_t cap = 0;
    int rc;

    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        xgrow(out, &cap, *n + 1, size);
        memset((char *)*out + *n * size, 0, size);
        read(st, (char *)*out + (*n)++ * size);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : db_error(db, rc, what, err);
}

int
schedule__migrate(sqlite3 *db, struct err *err)
{
    static const char *const steps[] = {schema_v1, schema_v2};

    return sql_migrate(db, "schedules", steps, (int)ARRAY_LEN(steps), err);
}

/* ---- schedules ---- */

static int
check_name(const char *name, struct err *err)
{
    size_t len = name != NULL ? strlen(name) : 0;

    if (len == 0 || len > NAME_MAX_LEN ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789._-") != len ||
        name[0] == '.' || name[0] == '-')
        return err_set(err, EINVAL,
                       "schedule name \"%s\": expected up to %d letters, "
                       "digits, '.', '_' or '-', not starting with '.' or "
                       "'-'",
                       name != NULL ? name : "", NAME_MAX_LEN);
    return 0;
}

static int
check_row(const struct schedule_row *r, struct err *err)
{
    struct schedule_spec spec;

    if (check_name(r->name, err) < 0)
        return -1;
    if (r->composition == NULL || r->composition[0] != '/')
        return err_set(err, EINVAL,
                       "schedule \"%s\": composition \"%s\": expected an "
                       "absolute path",
                       r->name, r->composition ? r->composition : "");
    if (r->plans != NULL && r->plans[0] != '/')
        return err_set(err, EINVAL,
                       "schedule \"%s\": plans \"%s\": expected an absolute "
                       "folder",
                       r->name, r->plans);
    if (r->version_from != NULL && r->version_from[0] != '/')
        return err_set(err, EINVAL,
                       "schedule \"%s\": version-from \"%s\": expected an "
                       "absolute folder",
                       r->name, r->version_from);
    if (schedule__spec_init(&spec, r->spec != NULL ? r->spec : "", r->tz,
                            r->created_s, err) < 0)
        return err_prefix(err, "schedule \"%s\"", r->name);
    schedule__spec_release(&spec);
    return 0;
}

static int
add_row(sqlite3 *db, const struct schedule_row *r, struct err *err)
{
    sqlite3_stmt *st = db_prepare(
        db,
        "INSERT INTO schedules (name, composition, plans, spec, tz, build, "
        "version_from, priority, created, paused, build_timeout) VALUES "
        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        err);
    int rc, ext;

    if (st == NULL)
        return -1;
    sql_bind_text(st, 1, r->name);
    sql_bind_text(st, 2, r->composition);
    sql_bind_text(st, 3, r->plans);
    sql_bind_text(st, 4, r->spec);
    sql_bind_text(st, 5, r->tz != NULL && r->tz[0] != '\0' ? r->tz : "UTC");
    sql_bind_text(st, 6, r->build);
    sql_bind_text(st, 7, r->version_from);
    sqlite3_bind_int(st, 8, r->priority);
    sqlite3_bind_int64(st, 9, r->created_s);
    sqlite3_bind_int(st, 10, r->paused);
    sqlite3_bind_int64(st, 11, r->build_timeout_s);
    rc = sqlite3_step(st);
    ext = sqlite3_extended_errcode(db);
    sqlite3_finalize(st);
    if (ext == SQLITE_CONSTRAINT_UNIQUE)
        return err_set(err, EEXIST, "schedule \"%s\" exists", r->name);
    return rc == SQLITE_DONE ? 0 : db_error(db, rc, "adding", err);
}

int
schedule__add(sqlite3 *db, const struct schedule_row *r, int64_t *id,
              struct err *err)
{
    int rc;

    if (check_row(r, err) < 0 || db_begin(db, err) < 0)
        return -1;
    rc = add_row(db, r, err);
    if (rc == 0 && id != NULL)
        *id = sqlite3_last_insert_rowid(db);
    return db_end(db, rc, err);
}

#define ROW_COLUMNS                                                            \
    "id, name, composition, plans, spec, tz, build, version_from, "            \
    "priority, created, paused, last_fired, build_timeout"

static void
read_row(sqlite3_stmt *st, void *p)
{
    struct schedule_row *r = p;

    r->id = sqlite3_column_int64(st, 0);
    r->name = sql_col_text(st, 1);
    r->composition = sql_col_text(st, 2);
    r->plans = sql_col_text(st, 3);
    r->spec = sql_col_text(st, 4);
    r->tz = sql_col_text(st, 5);
    r->build = sql_col_text(st, 6);
    r->version_from = sql_col_text(st, 7);
    r->priority = sqlite3_column_int(st, 8);
    r->created_s = sqlite3_column_int64(st, 9);
    r->paused = sqlite3_column_int(st, 10) != 0;
    r->last_fired_s = sqlite3_column_type(st, 11) == SQLITE_NULL
                          ? -1
                          : sqlite3_column_int64(st, 11);
    r->build_timeout_s = sqlite3_column_int64(st, 12);
}

void
schedule__row_release(struct schedule_row *r)
{
    free(r->name);
    free(r->composition);
    free(r->plans);
    free(r->spec);
    free(r->tz);
    free(r->build);
    free(r->version_from);
    memset(r, 0, sizeof(*r));
}

void
schedule__rows_free(struct schedule_row *rows, size_t n)
{
    for (size_t i = 0; rows != NULL && i < n; i++)
        schedule__row_release(&rows[i]);
    free(rows);
}

int
schedule__get(sqlite3 *db, const char *name, struct schedule_row *out,
              struct err *err)
{
    sqlite3_stmt *st = db_prepare(
        db, "SELECT " ROW_COLUMNS " FROM schedules WHERE name = ?", err);
    int rc;

    memset(out, 0, sizeof(*out));
    if (st == NULL)
        return -1;
    sql_bind_text(st, 1, name);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        read_row(st, out);
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return err_set(err, ENOENT, "no schedule named \"%s\"", name);
    return rc == SQLITE_ROW ? 0 : db_error(db, rc, "reading", err);
}

int
schedule__list(sqlite3 *db, struct schedule_row **rows, size_t *n,
               struct err *err)
{
    sqlite3_stmt *st = db_prepare(
        db, "SELECT " ROW_COLUMNS " FROM schedules ORDER BY name", err);

    *rows = NULL;
    *n = 0;
    if (st == NULL)
        return -1;
    if (db_rows(db, st, sizeof(**rows), read_row, (void **)rows, n, "listing",
                err) == 0)
        return 0;
    schedule__rows_free(*rows, *n);
    *rows = NULL;
    *n = 0;
    return -1;
}

/* Run one UPDATE or DELETE on the schedule called name (bound as the last
 * parameter, after value when has_value) in a transaction; ENOENT when
 * no row changed. */
static int
change_one(sqlite3 *db, const char *sql, const char *name, bool has_value,
           int64_t value, struct err *err)
{
    sqlite3_stmt *st;
    int rc;

    if (db_begin(db, err) < 0)
        return -1;
    st = db_prepare(db, sql, err);
    if (st == NULL)
        return db_end(db, -1, err);
    if (has_value)
        sqlite3_bind_int64(st, 1, value);
    sql_bind_text(st, has_value ? 2 : 1, name);
    rc = db_done(db, st, "changing", err);
    if (rc == 0 && sqlite3_changes(db) == 0)
        rc = err_set(err, ENOENT, "no schedule named \"%s\"", name);
    return db_end(db, rc, err);
}

int
schedule__remove(sqlite3 *db, const char *name, struct err *err)
{
    return change_one(db, "DELETE FROM schedules WHERE name = ?", name, false,
                      0, err);
}

int
schedule__pause(sqlite3 *db, const char *name, struct err *err)
{
    return change_one(db, "UPDATE schedules SET paused = 1 WHERE name = ?",
                      name, false, 0, err);
}

int
schedule__resume(sqlite3 *db, const char *name, int64_t now_s, struct err *err)
{
    /* only a paused schedule moves its last firing: resuming one that
     * runs must not drop a firing it owes */
    return change_one(db,
                      "UPDATE schedules SET last_fired = CASE WHEN paused "
                      "THEN max(coalesce(last_fired, ?1), ?1) ELSE "
                      "last_fired END, paused = 0 WHERE name = ?2",
                      name, true, now_s, err);
}

/* ---- firings ---- */

/* What a firing did, from parameter i on: task_id, build_log,
 * build_seconds, build_status, version. */
static void
bind_outcome(sqlite3_stmt *st, int i, const struct schedule_firing *f)
{
    sqlite3_bind_int64(st, i, f->task_id);
    sql_bind_text(st, i + 1, f->build_log);
    if (f->build_seconds >= 0)
        sqlite3_bind_double(st, i + 2, f->build_seconds);
    else
        sqlite3_bind_null(st, i + 2);
    sql_bind_text(st, i + 3, f->build_status);
    sql_bind_text(st, i + 4, f->version);
}

static int
firing_insert(sqlite3 *db, struct schedule_firing *f, struct err *err)
{
    sqlite3_stmt *st = db_prepare(
        db,
        "INSERT INTO schedule_firings (schedule_id, fire_time, started, "
        "task_id, build_log, build_seconds, build_status, version) VALUES "
        "(?, ?, ?, nullif(?, 0), ?, ?, ?, ?)",
        err);

    if (st == NULL)
        return -1;
    sqlite3_bind_int64(st, 1, f->schedule_id);
    sqlite3_bind_int64(st, 2, f->fire_s);
    sqlite3_bind_int64(st, 3, f->started_s);
    bind_outcome(st, 4, f);
    if (db_done(db, st, "recording a firing", err) < 0)
        return -1;
    f->id = sqlite3_last_insert_rowid(db);
    st = db_prepare(db,
                    "UPDATE schedules SET last_fired = max(coalesce("
                    "last_fired, ?1), ?1) WHERE id = ?2",
                    err);
    if (st == NULL)
        return -1;
    sqlite3_bind_int64(st, 1, f->fire_s);
    sqlite3_bind_int64(st, 2, f->schedule_id);
    if (db_done(db, st, "recording a firing", err) < 0)
        return -1;
    if (sqlite3_changes(db) == 0)
        return err_set(err, ENOENT, "no schedule with id %lld",
                       (long long)f->schedule_id);
    return 0;
}

int
schedule__firing_add(sqlite3 *db, struct schedule_firing *f, struct err *err)
{
    if (db_begin(db, err) < 0)
        return -1;
    return db_end(db, firing_insert(db, f, err), err);
}

int
schedule__firing_update(sqlite3 *db, const struct schedule_firing *f,
                        struct err *err)
{
    sqlite3_stmt *st;
    int rc;

    if (db_begin(db, err) < 0)
        return -1;
    st = db_prepare(db,
                    "UPDATE schedule_firings SET task_id = nullif(?, 0), "
                    "build_log = ?, build_seconds = ?, build_status = ?, "
                    "version = ? WHERE id = ?",
                    err);
    if (st == NULL)
        return db_end(db, -1, err);
    bind_outcome(st, 1, f);
    sqlite3_bind_int64(st, 6, f->id);
    rc = db_done(db, st, "updating a firing", err);
    if (rc == 0 && sqlite3_changes(db) == 0)
        rc = err_set(err, ENOENT, "no firing with id %lld", (long long)f->id);
    return db_end(db, rc, err);
}

static void
read_firing(sqlite3_stmt *st, void *p)
{
    struct schedule_firing *f = p;

    f->id = sqlite3_column_int64(st, 0);
    f->schedule_id = sqlite3_column_int64(st, 1);
    f->fire_s = sqlite3_column_int64(st, 2);
    f->started_s = sqlite3_column_int64(st, 3);
    f->task_id = sqlite3_column_int64(st, 4);
    f->build_log = sql_col_text(st, 5);
    f->build_seconds = sqlite3_column_type(st, 6) == SQLITE_NULL
                           ? -1
                           : sqlite3_column_double(st, 6);
    f->build_status = sql_col_text(st, 7);
    f->version = sql_col_text(st, 8);
}

int
schedule__firings(sqlite3 *db, int64_t schedule_id, size_t limit,
                  struct schedule_firing **out, size_t *n, struct err *err)
{
    sqlite3_stmt *st = db_prepare(
        db,
        "SELECT id, schedule_id, fire_time, started, task_id, build_log, "
        "build_seconds, build_status, version FROM schedule_firings WHERE "
        "schedule_id = ? ORDER BY fire_time DESC, id DESC LIMIT ?",
        err);

    *out = NULL;
    *n = 0;
    if (st == NULL)
        return -1;
    sqlite3_bind_int64(st, 1, schedule_id);
    sqlite3_bind_int64(st, 2, limit > INT64_MAX ? INT64_MAX : (int64_t)limit);
    if (db_rows(db, st, sizeof(**out), read_firing, (void **)out, n,
                "reading firings", err) == 0)
        return 0;
    schedule__firings_free(*out, *n);
    *out = NULL;
    *n = 0;
    return -1;
}

void
schedule__firings_free(struct schedule_firing *f, size_t n)
{
    for (size_t i = 0; f != NULL && i < n; i++) {
        free(f[i].build_log);
        free(f[i].build_status);
        free(f[i].version);
    }
    free(f);
}
