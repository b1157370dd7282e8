/*
 * schedules.c — the schedules through the API: add (the composition
 * checked at once as submit checks it, the spec and zone parsed; nothing
 * stored when either is wrong), list (with the last firing's task and the
 * next firing), remove, pause and resume. Changes wake the main loop,
 * which fires what is due.
 */
#include "daemon/daemon_int.h"
#include "daemon/schedule_int.h"

#include "backend/backend.h"
#include "base/util.h"
#include "ty_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUILD_TIMEOUT_S 3600

static const char *
opt_str(const cJSON *req, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, key);

    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

static int
bad(int *http, struct err *err, const char *what)
{
    *http = 400;
    err_set(err, EINVAL, "%s", what);
    return err_status(err, EXIT_USAGE);
}

/* The request into r (borrowed from req). */
static int
read_add(const cJSON *req, struct schedule_row *r, int *http, struct err *err)
{
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(req, "priority");
    const cJSON *to = cJSON_GetObjectItemCaseSensitive(req, "build_timeout_s");

    r->composition = (char *)opt_str(req, "composition");
    r->plans = (char *)opt_str(req, "plans");
    r->spec = (char *)opt_str(req, "spec");
    r->tz = (char *)opt_str(req, "tz");
    r->name = (char *)opt_str(req, "name");
    r->build = (char *)opt_str(req, "build");
    r->version_from = (char *)opt_str(req, "version_from");
    if (r->composition == NULL || r->composition[0] != '/')
        return bad(http, err, "composition: expected an absolute path");
    if (r->spec == NULL)
        return bad(http, err, "spec: expected \"every D\" or \"cron EXPR\"");
    if (pr != NULL && !cJSON_IsNull(pr) &&
        (!cJSON_IsNumber(pr) || pr->valuedouble != (double)pr->valueint))
        return bad(http, err, "priority: expected a whole number");
    if (to != NULL && !cJSON_IsNull(to) &&
        (!cJSON_IsNumber(to) || to->valuedouble < 0))
        return bad(http, err, "build_timeout_s: expected seconds");
    r->priority = cJSON_IsNumber(pr) ? pr->valueint : 0;
    r->build_timeout_s =
        cJSON_IsNumber(to) ? (int64_t)to->valuedouble : BUILD_TIMEOUT_S;
    return 0;
}

static void
next_changed(struct daemon *d)
{
    __atomic_store_n(&d->next_fire_s, 0, __ATOMIC_SEQ_CST);
    daemon__wake(d);
}

int
daemon__schedule_add(struct daemon *d, const cJSON *req, cJSON **out, int *http,
                     struct err *err)
{
    struct schedule_row r = {0};
    struct composition *c;
    cleanup_free char *name = NULL;
    int64_t now_s, id;
    bool bad_spec;
    int rc;

    if (read_add(req, &r, http, err) < 0)
        return -1;
    if ((c = daemon__load(d, r.composition, r.plans, http, err)) == NULL)
        return -1;
    name = xstrdup(r.name ? r.name : c->name);
    composition_destroy(&c);
    r.name = name;
    if ((now_s = schedule__clock_now(err)) < 0) {
        *http = 500;
        return err_status(err, EXIT_SOFTWARE);
    }
    r.created_s = now_s;
    pthread_mutex_lock(&d->mu);
    rc = schedule__add(d->db, &r, &id, err);
    pthread_mutex_unlock(&d->mu);
    if (rc < 0 && err->code == EEXIST) {
        *http = 409;
        return err_status(err, EXIT_DATAERR);
    }
    if (rc < 0) { /* a bad spec, name or an unknown zone: the options' */
        bad_spec = err->code == EINVAL || err->code == ENOENT;
        *http = bad_spec ? 400 : 500;
        return err_status(err, bad_spec ? EXIT_USAGE : EXIT_SOFTWARE);
    }
    next_changed(d);
    *http = 201;
    *out = cJSON_CreateObject();
    cJSON_AddStringToObject(*out, "name", name);
    cJSON_AddNumberToObject(*out, "id", (double)id);
    return 0;
}

static void
add_time(cJSON *o, const char *key, int64_t s)
{
    if (s < 0 || s == INT64_MAX)
        cJSON_AddNullToObject(o, key);
    else
        ty__json_time(o, key, s * 1000000000);
}

/* The task of the schedule's last firing: {id, state, outcome} or null. */
static void
add_last(struct daemon *d, cJSON *o, int64_t schedule_id)
{
    struct schedule_firing *f = NULL;
    struct daemon_task t = {0};
    struct err err = {0};
    size_t n = 0;
    cJSON *last;

    if (schedule__firings(d->db, schedule_id, 1, &f, &n, &err) < 0 || n == 0 ||
        f[0].task_id == 0 ||
        daemon__task_get(d->db, f[0].task_id, &t, &err) < 0) {
        cJSON_AddNullToObject(o, "last_task");
        schedule__firings_free(f, n);
        return;
    }
    last = cJSON_AddObjectToObject(o, "last_task");
    cJSON_AddNumberToObject(last, "id", (double)t.id);
    cJSON_AddStringToObject(last, "state", daemon__state_name(t.state));
    ty__json_string(last, "outcome", t.outcome);
    ty__json_string(last, "version", t.version);
    schedule__firings_free(f, n);
    daemon__task_release(&t);
}

static cJSON *
row_json(struct daemon *d, const struct schedule_row *r, int64_t now_s)
{
    cJSON *o = cJSON_CreateObject();
    struct schedule_spec spec;
    struct err err = {0};
    int64_t next = -1;

    if (schedule__spec_init(&spec, r->spec, r->tz, r->created_s, &err) == 0) {
        next = r->paused ? -1
                         : schedule__next(&spec, r->last_fired_s > now_s
                                                     ? r->last_fired_s
                                                     : now_s);
        schedule__spec_release(&spec);
    }
    cJSON_AddNumberToObject(o, "id", (double)r->id);
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "composition", r->composition);
    ty__json_string(o, "plans", r->plans);
    cJSON_AddStringToObject(o, "spec", r->spec);
    cJSON_AddStringToObject(o, "tz", r->tz ? r->tz : "UTC");
    ty__json_string(o, "build", r->build);
    cJSON_AddNumberToObject(o, "build_timeout_s", (double)r->build_timeout_s);
    ty__json_string(o, "version_from", r->version_from);
    cJSON_AddNumberToObject(o, "priority", r->priority);
    cJSON_AddBoolToObject(o, "paused", r->paused);
    add_time(o, "created", r->created_s);
    add_time(o, "last_fired", r->last_fired_s);
    add_time(o, "next", next);
    add_last(d, o, r->id);
    return o;
}

int
daemon__schedules_json(struct daemon *d, cJSON **out, struct err *err)
{
    struct schedule_row *rows = NULL;
    size_t n = 0;
    int64_t now_s = schedule__clock_now(err);

    if (now_s < 0)
        return err_status(err, EXIT_SOFTWARE);
    pthread_mutex_lock(&d->mu);
    if (schedule__list(d->db, &rows, &n, err) < 0) {
        pthread_mutex_unlock(&d->mu);
        return err_status(err, EXIT_SOFTWARE);
    }
    *out = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(*out, row_json(d, &rows[i], now_s));
    pthread_mutex_unlock(&d->mu);
    schedule__rows_free(rows, n);
    return 0;
}

int
daemon__schedule_change(struct daemon *d, const char *name, const char *what,
                        struct err *err)
{
    int64_t now_s = 0;
    int rc;

    if (strcmp(what, "resume") == 0 && (now_s = schedule__clock_now(err)) < 0)
        return err_status(err, EXIT_SOFTWARE);
    pthread_mutex_lock(&d->mu);
    if (strcmp(what, "remove") == 0)
        rc = schedule__remove(d->db, name, err);
    else if (strcmp(what, "pause") == 0)
        rc = schedule__pause(d->db, name, err);
    else
        rc = schedule__resume(d->db, name, now_s, err);
    pthread_mutex_unlock(&d->mu);
    if (rc < 0)
        return err_status(err,
                          err->code == ENOENT ? EXIT_NOINPUT : EXIT_SOFTWARE);
    next_changed(d);
    return 0;
}
