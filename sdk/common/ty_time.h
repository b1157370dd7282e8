/*
 * ty_time.h — the clocks and the RFC 3339 timestamps of testyard.
 *
 * Shared by the SDK (metrics, events, heap sidecars, the crash line) and
 * the runner (which links the SDK's core objects): one formatter, so every
 * file a run leaves writes time the same way, and one parser for the times
 * the runner reads back (reports, Docker's container states). Internal to
 * testyard.
 */
#ifndef TY_TIME_H
#define TY_TIME_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds and milliseconds. */
int64_t ty__now_ns(void);
int64_t ty__now_ms(void);
/* CLOCK_REALTIME in nanoseconds since the epoch. */
int64_t ty__wall_ns(void);

/* v (>= 0) as exactly width decimal digits at out, no NUL; returns
 * width. Async-signal-safe, like the formatter below. */
size_t ty__put_digits(char *out, int64_t v, int width);

/* Characters in "2026-11-29T18:45:29.123Z". */
#define TY_RFC3339_LEN 24

/* wall_ns (nanoseconds since the epoch) as RFC 3339 UTC with milliseconds,
 * "2026-11-29T18:45:29.123Z", NUL-terminated and cut to size. Calls no
 * gmtime and no stdio, so a signal handler may use it. */
void ty__format_rfc3339(int64_t wall_ns, char *buf, size_t size);

/* An RFC 3339 time ("2026-11-29T18:45:29.123Z", "2026-11-29T20:45:29+02:00";
 * a fraction of any length, digits past nanoseconds dropped; no zone reads
 * as UTC) to nanoseconds since the epoch in *wall_ns. 0, -EINVAL when s is
 * not such a time (NULL, out-of-range fields, anything after the zone), or
 * -ERANGE before 1970 or from 2262-04-11T23:47:16Z, past int64_t. */
int ty__parse_rfc3339(const char *s, int64_t *wall_ns);

#endif
