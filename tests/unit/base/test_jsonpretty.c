/*
 * test_jsonpretty.c — the indented JSON that validate prints.
 */
#include "base/jsonpretty.h"
#include "th.h"

#include <stdlib.h>
#include <string.h>

static void
check_pretty(const char *json, const char *want)
{
    cJSON *j = cJSON_Parse(json);
    char *got = j ? jsonpretty_print(j) : NULL;

    CHECK_EQ_STR(got, want);
    free(got);
    cJSON_Delete(j);
}

static void
t_layout(void)
{
    check_pretty("{}", "{}\n");
    check_pretty("[]", "[]\n");
    check_pretty("{\"a\":[1,2.5,true,null],\"b\":{},\"c\":[]}", "{\n"
                                                                "  \"a\": [\n"
                                                                "    1,\n"
                                                                "    2.5,\n"
                                                                "    true,\n"
                                                                "    null\n"
                                                                "  ],\n"
                                                                "  \"b\": {},\n"
                                                                "  \"c\": []\n"
                                                                "}\n");
    check_pretty("[{\"x\":\"y\"}]", "[\n  {\n    \"x\": \"y\"\n  }\n]\n");
}

static void
t_escapes(void)
{
    check_pretty("{\"q\\\"k\":\"a\\\\b\\n\\t\\u0001\\u00e9/\"}",
                 "{\n  \"q\\\"k\": \"a\\\\b\\n\\t\\u0001\xc3\xa9/\"\n}\n");
    /* the escapes cJSON and every other JSON writer of testyard use */
    check_pretty("[\"\\b\\f\\r\\u001f\\u007f\"]",
                 "[\n  \"\\b\\f\\r\\u001f\x7f\"\n]\n");
}

static void
t_raw_numbers(void)
{
    cJSON *o = cJSON_CreateObject();
    char *got;

    cJSON_AddRawToObject(o, "ns", "1080000000000000");
    cJSON_AddNumberToObject(o, "d", 0.25);
    got = jsonpretty_print(o);
    CHECK_EQ_STR(got, "{\n  \"ns\": 1080000000000000,\n  \"d\": 0.25\n}\n");
    free(got);
    cJSON_Delete(o);
}

static const struct th_case cases[] = {
    {"layout", t_layout},
    {"escapes", t_escapes},
    {"raw_numbers", t_raw_numbers},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
