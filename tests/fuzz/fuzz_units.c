/*
 * fuzz_units.c — sizes, durations and CPU amounts as users write them
 * (sdk/common/ty_units.c), with the properties the callers rely on: a parser
 * either succeeds or says why, a valid size has a unit system, a duration
 * is never negative, and the human forms of any value fit their buffer.
 */
#include "fuzz.h"
#include "ty_units.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_why(int rc, const char *why, const char *what, const char *s)
{
    if (rc != 0 && rc != -1)
        fuzz_fail("%s(\"%s\") returned %d", what, s, rc);
    if (rc < 0 && why[0] == '\0')
        fuzz_fail("%s(\"%s\") failed without saying why", what, s);
}

static void
check_formats(uint64_t bytes, int64_t ns)
{
    char buf[32];

    ty__format_bytes(bytes, buf, sizeof(buf));
    if (strlen(buf) == 0)
        fuzz_fail("format_bytes(%llu) is empty", (unsigned long long)bytes);
    ty__format_duration(ns, buf, sizeof(buf));
    if (strlen(buf) == 0)
        fuzz_fail("format_duration(%lld) is empty", (long long)ns);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    char why[128] = "";
    uint64_t bytes = 0, raw = 0;
    int64_t ns = 0, mcpu = 0;
    int rc;

    rc = ty__parse_size(s, &bytes, why, sizeof(why));
    check_why(rc, why, "parse_size", s);
    if (rc == 0 && ty__size_system(s) == NULL)
        fuzz_fail("\"%s\" is a size without a unit system", s);
    why[0] = '\0';
    rc = ty__parse_duration(s, &ns, why, sizeof(why));
    check_why(rc, why, "parse_duration", s);
    if (rc == 0 && ns < 0)
        fuzz_fail("\"%s\" is a negative duration %lld", s, (long long)ns);
    why[0] = '\0';
    rc = ty__parse_cpu(s, &mcpu, why, sizeof(why));
    check_why(rc, why, "parse_cpu", s);
    if (rc == 0 && mcpu < 0)
        fuzz_fail("\"%s\" is a negative cpu amount %lld", s, (long long)mcpu);
    check_formats(bytes, ns);
    memcpy(&raw, data, size < sizeof(raw) ? size : sizeof(raw));
    check_formats(raw, (int64_t)raw);
    free(s);
    return 0;
}
