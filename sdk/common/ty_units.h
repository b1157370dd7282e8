/*
 * ty_units.h — sizes, durations and CPU amounts as users write them.
 *
 * Shared by the runner (composition checking) and the SDK (typed parameter
 * access), so both read "512MB" the same way. Internal to testyard: not part
 * of the public header.
 *
 *   sizes      512Mi 2048Mi 1GiB 1.5Gi (IEC, powers of 1024)
 *              512MB 8GB 100k 1M (SI, powers of 1000)  4096 4096B (bytes)
 *   durations  250ms 30s 10m 1h 1m30s 1.5s 0  (ns us µs ms s m h, Go style)
 *   cpu        1000m 250m (millicpus)  0.5 2 (cpus)
 *   signals    USR1 SIGUSR2 RTMIN+3 12 none (TESTYARD_HEAP_SIGNAL: the
 *              profiler reads it, the coordinator reads it from an
 *              instance's environment before signalling it)
 */
#ifndef TY_UNITS_H
#define TY_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Each parser returns 0 and the value, or -1 and a phrase for an error
 * message in why (e.g. "expected a size like 512Mi or 512MB"), never both. */
int ty__parse_size(const char *s, uint64_t *bytes, char *why, size_t whylen);
int ty__parse_duration(const char *s, int64_t *ns, char *why, size_t whylen);
int ty__parse_cpu(const char *s, int64_t *millicpus, char *why, size_t whylen);

/* A signal as TESTYARD_HEAP_SIGNAL names it: "USR1", "USR2", "SIGUSR2",
 * "RTMIN+3", a number from 1, or "none" or "0" (returns 0); -1 when it is
 * none of these. */
int ty__parse_signal(const char *s);

/* "SI" or "IEC" or "bytes": what a valid size string's unit means. */
const char *ty__size_system(const char *s);
/* Human forms, buf of at least 32 bytes: "512.0 MiB"; durations as
 * "850 ns", "12 us", "850 ms", "12.3 s" (below ten minutes), "62m03s",
 * and "-" for a negative one (unknown). */
void ty__format_bytes(uint64_t bytes, char *buf, size_t size);
/* A chart's axis label of bytes >= 0, where most values are round: "0 B",
 * "512 KiB", "1.5 MiB" (whole units without decimals, else one). */
void ty__format_bytes_tick(double bytes, char *buf, size_t size);
void ty__format_duration(int64_t ns, char *buf, size_t size);

#endif
