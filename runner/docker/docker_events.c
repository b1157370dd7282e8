/*
 * docker_events.c — GET /events: the engine's event stream, one JSON
 * object per line, for as long as the connection stays open. The backend
 * runs it in a thread of its own and turns "die" and "oom" into outcomes
 * and membership changes; a cancellation token (or the callback) ends it.
 */
#include "docker/docker_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct events {
    int (*cb)(void *arg, const struct docker_event *ev);
    void *arg;
    bool stopped; /* the callback asked to stop */
};

/* timeNano does not fit a double's 53 bits, so it is read from the text
 * of the line; "time" (seconds) is the fallback. */
static int64_t
time_ns(const cJSON *j, const char *line)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "timeNano");
    const char *p = strstr(line, "\"timeNano\":");

    if (cJSON_IsNumber(v) && p != NULL)
        return strtoll(p + 11, NULL, 10);
    v = cJSON_GetObjectItemCaseSensitive(j, "time");
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble * 1000000000 : 0;
}

static int
event_line(void *arg, char *line, struct err *err)
{
    struct events *e = arg;
    const cJSON *actor;
    struct docker_event ev;
    cJSON *j;
    int rc;

    if (line[0] == '\0')
        return 0;
    ev.time_ns = 0;
    if ((j = cJSON_Parse(line)) == NULL)
        return err_set(err, EPROTO, "Docker events: not JSON: %.80s", line);
    actor = cJSON_GetObjectItemCaseSensitive(j, "Actor");
    ev.type = docker__str(j, "Type") ? docker__str(j, "Type") : "";
    ev.action = docker__str(j, "Action") ? docker__str(j, "Action") : "";
    ev.id = docker__str(actor, "ID") ? docker__str(actor, "ID") : "";
    ev.attributes = cJSON_GetObjectItemCaseSensitive(actor, "Attributes");
    ev.time_ns = time_ns(j, line);
    ev.raw = j;
    rc = e->cb(e->arg, &ev) != 0 ? 1 : 0;
    cJSON_Delete(j);
    if (rc)
        e->stopped = true;
    return rc;
}

static char *
events_path(const struct docker_events_opts *o)
{
    cleanup_free char *f = docker__filters(o->labels, o->types, o->events);

    if (o->since > 0)
        return xasprintf("/events?filters=%s&since=%lld", f,
                         (long long)o->since);
    return xasprintf("/events?filters=%s", f);
}

int
docker_events(struct docker *d, const struct docker_events_opts *o,
              int (*cb)(void *arg, const struct docker_event *ev), void *arg,
              struct err *err)
{
    struct events e = {cb, arg, false};
    struct docker_lines lines;
    cleanup_free char *path = events_path(o);
    struct docker_req r = {.method = "GET",
                           .path = path,
                           .body_fd = -1,
                           .stream = true,
                           .cancel = o->cancel,
                           .on_data = docker__lines_feed,
                           .arg = &lines,
                           .on_ready = o->ready,
                           .ready_arg = arg};
    struct docker_resp resp;
    struct err e2 = {0};
    int rc;

    docker__lines_init(&lines, event_line, &e);
    rc = docker__call(d, &r, &resp, &e2);
    docker__lines_release(&lines);
    docker__resp_release(&resp);
    if (rc < 0 && e2.code == ECANCELED)
        return 0;
    if (rc < 0) {
        if (err)
            *err = e2;
        return -1;
    }
    if (e.stopped || (o->cancel && docker_cancel_fired(o->cancel)))
        return 0;
    return err_set(err, EPIPE, "Docker events: the engine ended the stream");
}
