/*
 * ty_json.c — cJSON members that may be unknown, and JSON string
 * escaping (see ty_json.h).
 *
 * Every file testyard writes says "unknown" the same way, as null, so a
 * reader tests one thing; times go through ty_time.c's formatter.
 */
#include "ty_json.h"

#include "ty_time.h"

#include <errno.h>
#include <string.h>

void
ty__json_count(cJSON *o, const char *key, int64_t v)
{
    if (v < 0)
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, (double)v);
}

const char *
ty__json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

double
ty__json_num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

void
ty__json_string(cJSON *o, const char *key, const char *s)
{
    if (s == NULL)
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddStringToObject(o, key, s);
}

void
ty__json_time(cJSON *o, const char *key, int64_t wall_ns)
{
    char buf[TY_RFC3339_LEN + 1];

    if (wall_ns <= 0) {
        cJSON_AddNullToObject(o, key);
        return;
    }
    ty__format_rfc3339(wall_ns, buf, sizeof(buf));
    cJSON_AddStringToObject(o, key, buf);
}

size_t
ty__json_escape_byte(unsigned char c, char *esc)
{
    static const char hex[] = "0123456789abcdef";
    static const char named[] = {
        ['"'] = '"',  ['\\'] = '\\', ['\b'] = 'b', ['\f'] = 'f',
        ['\n'] = 'n', ['\r'] = 'r',  ['\t'] = 't'};

    if (c < sizeof(named) && named[c] != 0) {
        esc[0] = '\\';
        esc[1] = named[c];
        esc[2] = '\0';
        return 2;
    }
    if (c >= 0x20)
        return 0;
    memcpy(esc, "\\u00", 4);
    esc[4] = hex[c >> 4];
    esc[5] = hex[c & 15];
    esc[6] = '\0';
    return TY__JSON_ESC_MAX;
}

void
ty__json_quote_to(const char *s,
                  void (*put)(void *arg, const char *p, size_t len), void *arg)
{
    const char *run = s;
    char esc[TY__JSON_ESC_MAX + 1];

    put(arg, "\"", 1);
    for (; *s != '\0'; s++) {
        size_t n = ty__json_escape_byte((unsigned char)*s, esc);

        if (n == 0)
            continue;
        put(arg, run, (size_t)(s - run));
        put(arg, esc, n);
        run = s + 1;
    }
    put(arg, run, (size_t)(s - run));
    put(arg, "\"", 1);
}

static void
put_buf(void *arg, const char *p, size_t len)
{
    ty__buf_add(arg, p, len);
}

int
ty__json_quote(struct ty__buf *b, const char *s)
{
    ty__json_quote_to(s, put_buf, b);
    return b->oom ? -ENOMEM : 0;
}
