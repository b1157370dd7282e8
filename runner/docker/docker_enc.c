/*
 * docker_enc.c — the small encodings the Docker client needs: percent-
 * encoding for URLs, the filters= JSON of list and events endpoints, label
 * objects, and a line splitter for the engine's JSON-lines streams (build
 * progress and events).
 */
#include "docker/docker_int.h"

#include "base/strbuf.h"

#include <stdlib.h>
#include <string.h>

static char *
esc(const char *s, const char *keep)
{
    static const char hex[] = "0123456789ABCDEF";
    struct strbuf sb;

    strbuf_init(&sb);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || strchr("-._~", *p) ||
            strchr(keep, *p)) {
            strbuf_addc(&sb, (char)*p);
        } else {
            strbuf_addc(&sb, '%');
            strbuf_addc(&sb, hex[*p >> 4]);
            strbuf_addc(&sb, hex[*p & 15]);
        }
    }
    return strbuf_detach(&sb);
}

char *
docker__esc_query(const char *s)
{
    return esc(s, "");
}

char *
docker__esc_path(const char *s)
{
    return esc(s, "/:@");
}

static void
add_list(cJSON *obj, const char *key, const char *const *items)
{
    cJSON *arr;

    if (items == NULL || items[0] == NULL)
        return;
    arr = cJSON_AddArrayToObject(obj, key);
    for (size_t i = 0; items[i]; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(items[i]));
}

char *
docker__filters(const char *const *labels, const char *const *types,
                const char *const *events)
{
    cJSON *f = cJSON_CreateObject();
    char *text, *out;

    add_list(f, "label", labels);
    add_list(f, "type", types);
    add_list(f, "event", events);
    text = cJSON_PrintUnformatted(f);
    out = docker__esc_query(text);
    cJSON_free(text);
    cJSON_Delete(f);
    return out;
}

cJSON *
docker__labels_object(const char *const *labels)
{
    cJSON *obj = cJSON_CreateObject();

    for (size_t i = 0; labels && labels[i]; i++) {
        const char *eq = strchr(labels[i], '=');
        char *key = eq ? xstrndup(labels[i], (size_t)(eq - labels[i]))
                       : xstrdup(labels[i]);

        cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
        cJSON_AddStringToObject(obj, key, eq ? eq + 1 : "");
        free(key);
    }
    return obj;
}

const char *
docker__str(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

void
docker__lines_init(struct docker_lines *l,
                   int (*line)(void *arg, char *line, struct err *err),
                   void *arg)
{
    strbuf_init(&l->buf);
    l->line = line;
    l->arg = arg;
}

void
docker__lines_release(struct docker_lines *l)
{
    strbuf_release(&l->buf);
}

int
docker__lines_feed(void *arg, const char *data, size_t len, struct err *err)
{
    struct docker_lines *l = arg;
    size_t start = 0;
    int rc = 0;

    strbuf_add(&l->buf, data, len);
    for (size_t i = 0; i < l->buf.len && rc == 0; i++) {
        if (l->buf.buf[i] != '\n')
            continue;
        l->buf.buf[i] = '\0';
        if (i > start && l->buf.buf[i - 1] == '\r')
            l->buf.buf[i - 1] = '\0';
        rc = l->line(l->arg, l->buf.buf + start, err);
        start = i + 1;
    }
    memmove(l->buf.buf, l->buf.buf + start, l->buf.len - start);
    l->buf.len -= start;
    l->buf.buf[l->buf.len] = '\0';
    return rc;
}
