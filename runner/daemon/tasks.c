/*
 * tasks.c — the tasks table: one row per submitted composition, from
 * queued to its end, and its object in the HTTP API.
 */
#include "daemon/daemon_int.h"

#include "base/sql.h"
#include "base/util.h"
#include "ty_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const steps[] = {
    "CREATE TABLE tasks("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT NOT NULL, comp_name TEXT NOT NULL, path TEXT NOT NULL,"
    " file TEXT NOT NULL, origin TEXT NOT NULL,"
    " priority INTEGER NOT NULL DEFAULT 0,"
    " state TEXT NOT NULL, outcome TEXT, exit_status INTEGER NOT NULL,"
    " reason TEXT, submitted_ns INTEGER NOT NULL,"
    " started_ns INTEGER NOT NULL DEFAULT 0,"
    " ended_ns INTEGER NOT NULL DEFAULT 0,"
    " pid INTEGER NOT NULL DEFAULT 0, pid_start INTEGER NOT NULL DEFAULT 0,"
    " need_memory INTEGER NOT NULL, need_millicpu INTEGER NOT NULL,"
    " need_unlimited INTEGER NOT NULL, groups TEXT, cancel INTEGER NOT NULL"
    " DEFAULT 0);"
    "CREATE INDEX tasks_state ON tasks(state);",
    /* 2: a task a schedule fired: its name, the version and the build's
     * time */
    "ALTER TABLE tasks ADD COLUMN schedule TEXT;"
    "ALTER TABLE tasks ADD COLUMN version TEXT;"
    "ALTER TABLE tasks ADD COLUMN build_seconds REAL NOT NULL DEFAULT -1;",
};

int
daemon__migrate(sqlite3 *db, struct err *err)
{
    return sql_migrate(db, "daemon", steps, (int)ARRAY_LEN(steps), err);
}

static const char *const state_names[] = {
    "queued", "running", "done", "canceled", "interrupted", "refused",
};

const char *
daemon__state_name(enum task_state s)
{
    return state_names[s];
}

static enum task_state
state_of(const char *s)
{
    for (size_t i = 0; i < ARRAY_LEN(state_names); i++)
        if (s != NULL && strcmp(s, state_names[i]) == 0)
            return (enum task_state)i;
    return TASK_INTERRUPTED;
}

bool
daemon__state_ended(enum task_state s)
{
    return s != TASK_QUEUED && s != TASK_RUNNING;
}

void
daemon__task_release(struct daemon_task *t)
{
    free(t->name);
    free(t->comp_name);
    free(t->path);
    free(t->file);
    free(t->origin);
    free(t->outcome);
    free(t->reason);
    free(t->groups);
    free(t->schedule);
    free(t->version);
    memset(t, 0, sizeof(*t));
}

#define COLUMNS                                                                \
    "id, name, comp_name, path, file, origin, priority, state, outcome, "      \
    "exit_status, reason, submitted_ns, started_ns, ended_ns, pid, "           \
    "pid_start, need_memory, need_millicpu, need_unlimited, groups, cancel, "  \
    "schedule, version, build_seconds"

static char *
text(sqlite3_stmt *st, int col)
{
    const unsigned char *s = sqlite3_column_text(st, col);

    return s ? xstrdup((const char *)s) : NULL;
}

static void
from_row(sqlite3_stmt *st, struct daemon_task *t)
{
    t->id = sqlite3_column_int64(st, 0);
    t->name = text(st, 1);
    t->comp_name = text(st, 2);
    t->path = text(st, 3);
    t->file = text(st, 4);
    t->origin = text(st, 5);
    t->priority = sqlite3_column_int64(st, 6);
    t->state = state_of((const char *)sqlite3_column_text(st, 7));
    t->outcome = text(st, 8);
    t->exit_status = sqlite3_column_int(st, 9);
    t->reason = text(st, 10);
    t->submitted_ns = sqlite3_column_int64(st, 11);
    t->started_ns = sqlite3_column_int64(st, 12);
    t->ended_ns = sqlite3_column_int64(st, 13);
    t->pid = (long)sqlite3_column_int64(st, 14);
    t->pid_start = (unsigned long long)sqlite3_column_int64(st, 15);
    t->need.memory_bytes = (uint64_t)sqlite3_column_int64(st, 16);
    t->need.millicpu = sqlite3_column_int64(st, 17);
    t->need.unlimited_memory = sqlite3_column_int(st, 18) != 0;
    t->groups = text(st, 19);
    t->cancel = sqlite3_column_int(st, 20) != 0;
    t->schedule = text(st, 21);
    t->version = text(st, 22);
    t->build_seconds = sqlite3_column_double(st, 23);
}

static int
db_fail(sqlite3 *db, sqlite3_stmt *st, struct err *err)
{
    err_set(err, EIO, "database: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return err_status(err, EXIT_SOFTWARE);
}

int
daemon__tasks_load(sqlite3 *db, const char *where, struct daemon_task **v,
                   size_t *n, struct err *err)
{
    cleanup_free char *sql =
        xasprintf("SELECT " COLUMNS " FROM tasks%s%s ORDER BY id",
                  where ? " WHERE " : "", where ? where : "");
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc;

    *v = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, st, err);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        xgrow(v, &cap, *n + 1, sizeof(**v));
        memset(&(*v)[*n], 0, sizeof(**v));
        from_row(st, &(*v)[(*n)++]);
    }
    if (rc != SQLITE_DONE)
        return db_fail(db, st, err);
    sqlite3_finalize(st);
    return 0;
}

int
daemon__task_get(sqlite3 *db, int64_t id, struct daemon_task *t,
                 struct err *err)
{
    char where[64];
    struct daemon_task *v;
    size_t n;

    snprintf(where, sizeof(where), "id = %lld", (long long)id);
    if (daemon__tasks_load(db, where, &v, &n, err) < 0)
        return -1;
    if (n == 0) {
        free(v);
        err_set(err, ENOENT, "no task %lld", (long long)id);
        return err_status(err, EXIT_NOINPUT);
    }
    *t = v[0];
    free(v);
    return 0;
}

/* The mutable columns, from ?1 in the order of COLUMNS from state. */
static void
bind_mutable(sqlite3_stmt *st, const struct daemon_task *t)
{
    sql_bind_text(st, 1, daemon__state_name(t->state));
    sql_bind_text(st, 2, t->outcome);
    sqlite3_bind_int(st, 3, t->exit_status);
    sql_bind_text(st, 4, t->reason);
    sqlite3_bind_int64(st, 5, t->started_ns);
    sqlite3_bind_int64(st, 6, t->ended_ns);
    sqlite3_bind_int64(st, 7, t->pid);
    sqlite3_bind_int64(st, 8, (sqlite3_int64)t->pid_start);
    sql_bind_text(st, 9, t->groups);
    sqlite3_bind_int(st, 10, t->cancel);
}

/* The insert's own columns, after the mutable ones. */
static void
bind_insert(sqlite3_stmt *st, const struct daemon_task *t)
{
    bind_mutable(st, t);
    sql_bind_text(st, 11, t->name);
    sql_bind_text(st, 12, t->comp_name);
    sql_bind_text(st, 13, t->path);
    sql_bind_text(st, 14, t->file);
    sql_bind_text(st, 15, t->origin);
    sqlite3_bind_int64(st, 16, t->priority);
    sqlite3_bind_int64(st, 17, t->submitted_ns);
    sqlite3_bind_int64(st, 18, (sqlite3_int64)t->need.memory_bytes);
    sqlite3_bind_int64(st, 19, t->need.millicpu);
    sqlite3_bind_int(st, 20, t->need.unlimited_memory);
    sql_bind_text(st, 21, t->schedule);
    sql_bind_text(st, 22, t->version);
    sqlite3_bind_double(st, 23, t->build_seconds);
}

static void
bind_update(sqlite3_stmt *st, const struct daemon_task *t)
{
    bind_mutable(st, t);
    sqlite3_bind_int64(st, 11, t->id);
}

/* One statement writing t, its values bound by bind. */
static int
write_row(sqlite3 *db, const char *sql,
          void (*bind)(sqlite3_stmt *, const struct daemon_task *),
          const struct daemon_task *t, struct err *err)
{
    sqlite3_stmt *st = NULL;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, st, err);
    bind(st, t);
    if (sqlite3_step(st) != SQLITE_DONE)
        return db_fail(db, st, err);
    sqlite3_finalize(st);
    return 0;
}

int
daemon__task_insert(sqlite3 *db, struct daemon_task *t, struct err *err)
{
    static const char sql[] =
        "INSERT INTO tasks(state, outcome, exit_status, reason, started_ns,"
        " ended_ns, pid, pid_start, groups, cancel, name, comp_name, path,"
        " file, origin, priority, submitted_ns, need_memory, need_millicpu,"
        " need_unlimited, schedule, version, build_seconds) VALUES (?1, ?2,"
        " ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,"
        " ?18, ?19, ?20, ?21, ?22, ?23)";

    if (write_row(db, sql, bind_insert, t, err) < 0)
        return -1;
    t->id = sqlite3_last_insert_rowid(db);
    return 0;
}

int
daemon__task_update(sqlite3 *db, const struct daemon_task *t, struct err *err)
{
    static const char sql[] =
        "UPDATE tasks SET state = ?1, outcome = ?2, exit_status = ?3,"
        " reason = ?4, started_ns = ?5, ended_ns = ?6, pid = ?7,"
        " pid_start = ?8, groups = ?9, cancel = ?10 WHERE id = ?11";

    return write_row(db, sql, bind_update, t, err);
}

static void
add_need(cJSON *o, const struct admit_need *n)
{
    cJSON *need = cJSON_AddObjectToObject(o, "need");

    ty__json_count(need, "memory_bytes",
                   n->unlimited_memory ? -1 : (int64_t)n->memory_bytes);
    cJSON_AddNumberToObject(need, "millicpu", (double)n->millicpu);
    cJSON_AddBoolToObject(need, "unlimited_memory", n->unlimited_memory);
}

static void
add_run(cJSON *o, const struct daemon_task *t, const char *data_dir)
{
    char id[40];
    cleanup_free char *dir = NULL;

    if (t->started_ns == 0) {
        cJSON_AddNullToObject(o, "run_id");
        cJSON_AddNullToObject(o, "run_dir");
        return;
    }
    snprintf(id, sizeof(id), "task-%lld", (long long)t->id);
    dir = xasprintf("%s/runs/%s", data_dir, id);
    cJSON_AddStringToObject(o, "run_id", id);
    cJSON_AddStringToObject(o, "run_dir", dir);
}

static double
duration_s(const struct daemon_task *t)
{
    int64_t end = t->ended_ns ? t->ended_ns : now_wall_ns();

    return t->started_ns ? (double)(end - t->started_ns) / 1e9 : -1;
}

cJSON *
daemon__task_json(const struct daemon_task *t, const char *data_dir)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *groups = t->groups ? cJSON_Parse(t->groups) : NULL;

    cJSON_AddNumberToObject(o, "id", (double)t->id);
    cJSON_AddStringToObject(o, "name", t->name);
    cJSON_AddStringToObject(o, "composition", t->comp_name);
    cJSON_AddStringToObject(o, "path", t->path);
    cJSON_AddNumberToObject(o, "priority", (double)t->priority);
    cJSON_AddStringToObject(o, "state", daemon__state_name(t->state));
    ty__json_string(o, "outcome", t->outcome);
    ty__json_count(o, "exit_status", t->exit_status);
    ty__json_string(o, "reason", t->reason);
    ty__json_time(o, "submitted", t->submitted_ns);
    ty__json_time(o, "started", t->started_ns);
    ty__json_time(o, "ended", t->ended_ns);
    if (t->started_ns)
        cJSON_AddNumberToObject(o, "duration_s", duration_s(t));
    else
        cJSON_AddNullToObject(o, "duration_s");
    ty__json_string(o, "schedule", t->schedule);
    ty__json_string(o, "version", t->version);
    if (t->build_seconds >= 0)
        cJSON_AddNumberToObject(o, "build_seconds", t->build_seconds);
    else
        cJSON_AddNullToObject(o, "build_seconds");
    add_run(o, t, data_dir);
    add_need(o, &t->need);
    cJSON_AddItemToObject(o, "groups", groups ? groups : cJSON_CreateArray());
    return o;
}
