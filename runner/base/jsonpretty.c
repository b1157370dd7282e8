/*
 * jsonpretty.c — indenting JSON for output people read and golden files
 * compare (see base/jsonpretty.h). Numbers are printed by cJSON, so they read
 * the same as everywhere else; strings are escaped by ty_json.c's escaper,
 * as in every JSON file testyard writes.
 */
#include "base/jsonpretty.h"

#include "base/log.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "ty_json.h"

#include <stdlib.h>

static void
add_string(struct strbuf *sb, const char *s)
{
    if (ty__json_quote(sb, s) < 0)
        fatalx("out of memory writing a JSON string");
}

static void
indent(struct strbuf *sb, int depth)
{
    for (int i = 0; i < depth; i++)
        strbuf_adds(sb, "  ");
}

static void add_value(struct strbuf *sb, const cJSON *item, int depth);

static void
add_container(struct strbuf *sb, const cJSON *item, int depth, bool object)
{
    const cJSON *child = item->child;

    if (child == NULL) {
        strbuf_adds(sb, object ? "{}" : "[]");
        return;
    }
    strbuf_adds(sb, object ? "{\n" : "[\n");
    for (; child != NULL; child = child->next) {
        indent(sb, depth + 1);
        if (object) {
            add_string(sb, child->string ? child->string : "");
            strbuf_adds(sb, ": ");
        }
        add_value(sb, child, depth + 1);
        strbuf_adds(sb, child->next ? ",\n" : "\n");
    }
    indent(sb, depth);
    strbuf_addc(sb, object ? '}' : ']');
}

static void
add_value(struct strbuf *sb, const cJSON *item, int depth)
{
    char *text;

    if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
        add_container(sb, item, depth, cJSON_IsObject(item));
    } else if (cJSON_IsString(item)) {
        add_string(sb, item->valuestring);
    } else {
        text = cJSON_PrintUnformatted(item);
        strbuf_adds(sb, text ? text : "null");
        free(text);
    }
}

char *
jsonpretty_print(const cJSON *item)
{
    struct strbuf sb;

    strbuf_init(&sb);
    add_value(&sb, item, 0);
    strbuf_addc(&sb, '\n');
    return strbuf_detach(&sb);
}
