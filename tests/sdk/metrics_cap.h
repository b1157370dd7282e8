/*
 * metrics_cap.h — SDK metrics captured in memory, for the tests of
 * results.out, diagnostics.out, work.csv and the load driver
 * (tests/sdk/test_metrics.c, test_work.c, test_load.c).
 *
 * cap_handle makes a bare handle (no coordinator) whose metrics module
 * sends every file's lines to capture() instead of ty__output_append: the
 * lines of results.out, diagnostics.out and work.csv pile up in the
 * buffers below (under cap_lock while the sampler thread runs). The
 * readers take the captured text and return what the caller owns as
 * they say.
 */
#ifndef TY_METRICS_CAP_H
#define TY_METRICS_CAP_H

#include "ty_buf.h"

#include <cjson/cJSON.h>
#include <pthread.h>

struct ty;

extern pthread_mutex_t cap_lock;
extern struct ty__buf cap_results, cap_diag, cap_work;
extern int cap_calls; /* sink calls, every file */

/* The sink itself. */
int capture(struct ty *ty, const char *file, const char *data, size_t len);
/* Empty the buffers. */
void cap_reset(void);
/* A handle with metrics started, TESTYARD_DIAGNOSTICS_INTERVAL=interval,
 * capturing; cap_handle_free ends its metrics (the last lines come then)
 * and frees it. */
struct ty *cap_handle(const char *interval);
void cap_handle_free(struct ty *ty);
/* A handle from the environment of a standalone instance (no coordinator,
 * no deadline, TEST_OUTPUTS_PATH the case's folder) with metrics started
 * through the real sink: files appear under th_tmpdir(). NULL (a failed
 * check) when the environment is refused. ty__metrics_fini and
 * ty__destroy end it. */
struct ty *standalone_handle(const char *interval);

/* Occurrences of needle in text (NULL: 0). */
int count_lines(const char *text, const char *needle);
/* Every line of text is a Testground record (a failed check otherwise);
 * returns how many. */
int check_records(const char *text);
/* The last record of name and type in text, parsed (caller deletes);
 * NULL when there is none. */
cJSON *last_record(const char *text, const char *type, const char *name);
/* A record's measures[key], NAN when missing. */
double measure(const cJSON *rec, const char *key);

#endif
