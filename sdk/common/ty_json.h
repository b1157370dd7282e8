/*
 * ty_json.h — JSON helpers the runner and the SDK share: adding a member
 * that may be unknown to a cJSON object (a figure, a string or a time,
 * written as null when unknown rather than as -1 or ""), and the one
 * string escaper for JSON written without cJSON (metrics records, the
 * wire protocol's fast path, the runner's indented JSON).
 *
 * Shared by the SDK (heap snapshot sidecars) and the runner (result.json,
 * summary.json, the resolved composition). Internal to testyard. Strings
 * are copied into the object; o owns what is added to it.
 */
#ifndef TY_JSON_H
#define TY_JSON_H

#include "ty_buf.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* A count or a size: null when v < 0. */
void ty__json_count(cJSON *o, const char *key, int64_t v);
/* A string: null when s is NULL. */
void ty__json_string(cJSON *o, const char *key, const char *s);
/* A wall-clock time (ns since the epoch) as RFC 3339 UTC with
 * milliseconds: null when wall_ns <= 0. */
void ty__json_time(cJSON *o, const char *key, int64_t wall_ns);
/* Member key of o when it is a string (else NULL), a number (else
 * dflt). */
const char *ty__json_str(const cJSON *o, const char *key);
double ty__json_num(const cJSON *o, const char *key, double dflt);

/* Strings are escaped as RFC 8259 says and as cJSON does: " and \ with a
 * backslash, control characters (below 0x20) as \b \f \n \r \t or
 * \u00XX; every other byte, UTF-8 included, stands for itself. */
#define TY__JSON_ESC_MAX 6
/* The escape for byte c into esc (at least TY__JSON_ESC_MAX + 1 bytes,
 * NUL-terminated): its length, or 0 when c is written as it is. */
size_t ty__json_escape_byte(unsigned char c, char *esc);
/* s as a quoted, escaped JSON string, handed to put(arg, bytes, len) in
 * pieces: for writers with a buffer of their own. */
void ty__json_quote_to(const char *s,
                       void (*put)(void *arg, const char *p, size_t len),
                       void *arg);
/* s as a quoted, escaped JSON string added to b: 0, or -ENOMEM. */
int ty__json_quote(struct ty__buf *b, const char *s);

#endif
