/*
 * fuzz.h — what the libFuzzer harnesses in tests/fuzz/ share (fuzz.c).
 *
 * Loaders that only take a path get their input through a file in a
 * scratch folder the process makes on first use and removes at exit.
 * Ownership: returned char * are the caller's; the scratch folder's name
 * is borrowed and lives as long as the process.
 */
#ifndef TY_FUZZ_H
#define TY_FUZZ_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The scratch folder (aborts when it cannot be made). */
const char *fuzz_dir(void);
/* Write size bytes to <scratch>/<name> (folders made as needed) and
 * return its path. */
char *fuzz_file(const char *name, const uint8_t *data, size_t size);
/* The checkout the harness was built in: TY_FUZZ_ROOT, else two folders
 * above the program (build/fuzz/<target>). */
char *fuzz_root(void);
/* data as a NUL-terminated string. */
char *fuzz_cstr(const uint8_t *data, size_t size);
/* Whether two JSON values print the same (cJSON_Compare takes the first
 * of repeated keys, so it calls equal trees different). */
bool fuzz_json_same(const cJSON *a, const cJSON *b);
/* A property the code under test broke: print it and abort, which
 * libFuzzer reports as a crash with the input. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)))
__attribute__((noreturn));

#endif
