/*
 * test_json.c — the one JSON string escaper (sdk/common/ty_json.c): every
 * control character, the two characters JSON reserves, UTF-8 left alone,
 * and byte for byte what cJSON writes for every byte value.
 */
#include "th.h"
#include "ty_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *
quoted(const char *s)
{
    struct ty__buf b = {0};
    char *out;

    CHECK_EQ_INT(ty__json_quote(&b, s), 0);
    out = strdup(b.buf ? b.buf : "");
    ty__buf_release(&b);
    return out;
}

/* Each byte below 0x20 by name or as \u00XX, as RFC 8259 allows. */
static void
t_controls(void)
{
    static const char *const named[0x20] = {
        ['\b'] = "\\b", ['\f'] = "\\f", ['\n'] = "\\n",
        ['\r'] = "\\r", ['\t'] = "\\t",
    };

    for (int c = 1; c < 0x20; c++) {
        char in[2] = {(char)c, '\0'}, want[16];
        char *got = quoted(in);

        if (named[c] != NULL)
            snprintf(want, sizeof(want), "\"%s\"", named[c]);
        else
            snprintf(want, sizeof(want), "\"\\u%04x\"", c);
        CHECK_MSG(strcmp(got, want) == 0, "0x%02x: %s, want %s", c, got, want);
        free(got);
    }
}

static void
t_reserved_and_utf8(void)
{
    char *got = quoted("a\"b\\c/d \xc3\xa9 \xe2\x82\xac \x7f");

    CHECK_EQ_STR(got, "\"a\\\"b\\\\c/d \xc3\xa9 \xe2\x82\xac \x7f\"");
    free(got);
    got = quoted("");
    CHECK_EQ_STR(got, "\"\"");
    free(got);
}

/* The escaper and cJSON agree on every byte, so a file reads the same
 * whichever of them wrote it. */
static void
t_same_as_cjson(void)
{
    for (int c = 1; c < 256; c++) {
        char in[4] = {'x', (char)c, 'y', '\0'};
        cJSON *s = cJSON_CreateString(in);
        char *want = cJSON_PrintUnformatted(s);
        char *got = quoted(in);

        CHECK_MSG(want != NULL && strcmp(got, want) == 0,
                  "0x%02x: %s, cJSON %s", c, got, want ? want : "(null)");
        free(got);
        cJSON_free(want);
        cJSON_Delete(s);
    }
}

static void
t_escape_byte(void)
{
    char esc[TY__JSON_ESC_MAX + 1];

    CHECK_EQ_INT(ty__json_escape_byte('a', esc), 0);
    CHECK_EQ_INT(ty__json_escape_byte(0xc3, esc), 0);
    CHECK_EQ_INT(ty__json_escape_byte('"', esc), 2);
    CHECK_EQ_STR(esc, "\\\"");
    CHECK_EQ_INT(ty__json_escape_byte(0x1f, esc), TY__JSON_ESC_MAX);
    CHECK_EQ_STR(esc, "\\u001f");
}

static const struct th_case cases[] = {
    {"controls", t_controls},
    {"reserved_and_utf8", t_reserved_and_utf8},
    {"same_as_cjson", t_same_as_cjson},
    {"escape_byte", t_escape_byte},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
