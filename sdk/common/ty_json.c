/*
 * ty_json.c — cJSON members that may be unknown (see ty_json.h).
 *
 * Every file testyard writes says "unknown" the same way, as null, so a
 * reader tests one thing; times go through ty_time.c's formatter.
 */
#include "ty_json.h"

#include "ty_time.h"

void
ty__json_count(cJSON *o, const char *key, int64_t v)
{
    if (v < 0)
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, (double)v);
}

void
ty__json_string(cJSON *o, const char *key, const char *s)
{
    if (s == NULL)
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddStringToObject(o, key, s);
}

void
ty__json_time(cJSON *o, const char *key, int64_t wall_ns)
{
    char buf[TY_RFC3339_LEN + 1];

    if (wall_ns <= 0) {
        cJSON_AddNullToObject(o, key);
        return;
    }
    ty__format_rfc3339(wall_ns, buf, sizeof(buf));
    cJSON_AddStringToObject(o, key, buf);
}
