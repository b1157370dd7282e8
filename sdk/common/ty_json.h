/*
 * ty_json.h — adding a member that may be unknown to a cJSON object: a
 * figure, a string or a time, written as null when unknown rather than as
 * -1 or "".
 *
 * Shared by the SDK (heap snapshot sidecars) and the runner (result.json,
 * summary.json, the resolved composition). Internal to testyard. Strings
 * are copied into the object; o owns what is added to it.
 */
#ifndef TY_JSON_H
#define TY_JSON_H

#include <cjson/cJSON.h>
#include <stdint.h>

/* A count or a size: null when v < 0. */
void ty__json_count(cJSON *o, const char *key, int64_t v);
/* A string: null when s is NULL. */
void ty__json_string(cJSON *o, const char *key, const char *s);
/* A wall-clock time (ns since the epoch) as RFC 3339 UTC with
 * milliseconds: null when wall_ns <= 0. */
void ty__json_time(cJSON *o, const char *key, int64_t wall_ns);

#endif
