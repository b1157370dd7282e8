/*
 * th_db.c — see th_db.h.
 */
#include "th_db.h"

#include <stddef.h>

int64_t
th_db_count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t n = -1;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}
