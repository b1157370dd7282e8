/*
 * history_names.c — the names the history holds runs of, for a page that
 * lists them before one is opened: per name how many runs, and when its
 * newest run started, how it ended and which schedule fired it.
 */
#include "history/history_int.h"

#include "base/util.h"

#include <stdlib.h>

/* The newest run of a name is its highest number (UNIQUE(name, number)
 * makes it one row). */
static const char names_sql[] =
    "SELECT r.name, c.n, coalesce(r.started, r.ended), r.outcome, "
    "r.schedule FROM history_runs r JOIN (SELECT name, count(*) AS n, "
    "max(number) AS last FROM history_runs GROUP BY name) c "
    "ON r.name = c.name AND r.number = c.last ORDER BY r.name";

static void
read_name(sqlite3_stmt *st, struct history_name *e)
{
    e->name = sql_col_text(st, 0);
    e->runs = sqlite3_column_int64(st, 1);
    e->last = sql_col_text(st, 2);
    e->last_outcome = sql_col_text(st, 3);
    e->schedule = sql_col_text(st, 4);
}

int
history_names(sqlite3 *db, struct history_name **v, size_t *n, struct err *err)
{
    sqlite3_stmt *st;
    size_t cap = 0;
    int rc;

    *v = NULL;
    *n = 0;
    if (history__prepare(db, names_sql, &st, err) < 0)
        return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        xgrow(v, &cap, *n + 1, sizeof(**v));
        read_name(st, &(*v)[(*n)++]);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return 0;
    history_names_free(*v, *n);
    *v = NULL;
    *n = 0;
    return history__sqlerr(db, err, "history database: names");
}

void
history_names_free(struct history_name *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].last);
        free(v[i].last_outcome);
        free(v[i].schedule);
    }
    free(v);
}
