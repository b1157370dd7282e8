/*
 * sched_fixture.h — times for the schedule tests (test_schedule*.c; linked
 * into every unit test like the other fixtures).
 */
#ifndef TY_SCHED_FIXTURE_H
#define TY_SCHED_FIXTURE_H

#include <stdint.h>

/* An RFC 3339 literal as unix seconds; a bad one fails the case. */
int64_t fx_time(const char *s);
/* Unix seconds as RFC 3339 (the number itself when negative or
 * INT64_MAX) into buf, which it returns. */
const char *fx_fmt(int64_t s, char buf[32]);

#define T(s) fx_time(s)

#endif
