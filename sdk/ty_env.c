/*
 * ty_env.c — the run environment and typed parameters.
 *
 * An instance learns its world from environment variables: Testground's
 * names (TEST_PLAN, TEST_CASE, TEST_RUN, TEST_GROUP_ID, TEST_INSTANCE_COUNT,
 * TEST_GROUP_INSTANCE_COUNT, TEST_INSTANCE_PARAMS, TEST_OUTPUTS_PATH,
 * TEST_TEMP_PATH) and testyard's (TESTYARD_GROUP_INDEX,
 * TESTYARD_GLOBAL_INDEX, TESTYARD_PARAMS, TESTYARD_DEADLINE_MS); the sync
 * endpoint is read by ty_sync.c. Parameters become one cJSON object, read
 * only after the handle is built, so any thread may read them.
 *
 * TESTYARD_PARAMS is a JSON object (numbers, bools, strings; sizes and
 * durations as the strings the user wrote; arrays as JSON arrays) and wins
 * over TEST_INSTANCE_PARAMS, Testground's "k=v|k=v" form, where every value
 * is a string (one that parses as a JSON array becomes an array). Typed
 * getters convert: "512MB" is a size, "250ms" a duration, "42" an int.
 */
#include "ty_int.h"
#include "ty_units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the handle -------------------------------------------------------- */

static char *
env_str(const char *name, const char *dflt)
{
    const char *v = getenv(name);

    return strdup(v != NULL && v[0] != '\0' ? v : dflt);
}

/* A whole number >= 0 from the environment; -1 and why when malformed. */
static int
env_int(const char *name, int dflt, int *out, char *why, size_t whylen)
{
    const char *v = getenv(name);
    char *end;
    long long n;

    *out = dflt;
    if (v == NULL || v[0] == '\0')
        return 0;
    errno = 0;
    n = strtoll(v, &end, 10);
    if (errno != 0 || *end != '\0' || n < 0 || n > 1000000000) {
        snprintf(why, whylen, "%s: expected a whole number, got \"%.64s\"",
                 name, v);
        return -1;
    }
    *out = (int)n;
    return 0;
}

/* TESTYARD_DEADLINE_MS is Unix wall ms; the handle keeps monotonic ms. */
static int
env_deadline(struct ty *ty, char *why, size_t whylen)
{
    const char *v = getenv("TESTYARD_DEADLINE_MS");
    struct timespec wall;
    char *end;
    long long ms;

    if (v == NULL || v[0] == '\0')
        return 0;
    errno = 0;
    ms = strtoll(v, &end, 10);
    if (errno != 0 || *end != '\0' || ms <= 0) {
        snprintf(why, whylen,
                 "TESTYARD_DEADLINE_MS: expected Unix time in "
                 "milliseconds, got \"%.64s\"",
                 v);
        return -1;
    }
    clock_gettime(CLOCK_REALTIME, &wall);
    ty->deadline_ms =
        ty__now_ms() +
        (ms - ((int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000));
    if (ty->deadline_ms <= 0)
        ty->deadline_ms = 1;
    return 0;
}

/* Testground's "k=v|k=v"; a value that is a JSON array becomes one. */
static cJSON *
parse_kv(const char *s, char *why, size_t whylen)
{
    cJSON *o = cJSON_CreateObject();
    char *copy = strdup(s), *save = NULL;

    for (char *kv = strtok_r(copy, "|", &save); kv != NULL;
         kv = strtok_r(NULL, "|", &save)) {
        char *eq = strchr(kv, '=');
        cJSON *arr = NULL;

        if (eq == NULL || eq == kv) {
            snprintf(why, whylen,
                     "TEST_INSTANCE_PARAMS: expected key=value, "
                     "got \"%.64s\"",
                     kv);
            cJSON_Delete(o);
            free(copy);
            return NULL;
        }
        *eq = '\0';
        if (eq[1] == '[')
            arr = cJSON_Parse(eq + 1);
        if (arr != NULL && !cJSON_IsArray(arr))
            cJSON_Delete(arr), arr = NULL;
        cJSON_DeleteItemFromObjectCaseSensitive(o, kv);
        cJSON_AddItemToObject(o, kv, arr ? arr : cJSON_CreateString(eq + 1));
    }
    free(copy);
    return o;
}

static int
env_params(struct ty *ty, char *why, size_t whylen)
{
    const char *js = getenv("TESTYARD_PARAMS");
    const char *kv = getenv("TEST_INSTANCE_PARAMS");

    if (js != NULL && js[0] != '\0') {
        ty->params = cJSON_Parse(js);
        if (ty->params == NULL || !cJSON_IsObject(ty->params)) {
            snprintf(why, whylen, "TESTYARD_PARAMS: expected a JSON object");
            return -1;
        }
        return 0;
    }
    ty->params = kv ? parse_kv(kv, why, whylen) : cJSON_CreateObject();
    return ty->params ? 0 : -1;
}

static int
env_read(struct ty *ty, char *why, size_t whylen)
{
    const char *tmp = getenv("TMPDIR");

    ty->plan = env_str("TEST_PLAN", "");
    ty->case_name = env_str("TEST_CASE", "");
    ty->run_id = env_str("TEST_RUN", "");
    ty->group_id = env_str("TEST_GROUP_ID", "");
    ty->outputs_path = env_str("TEST_OUTPUTS_PATH", ".");
    ty->temp_path = env_str("TEST_TEMP_PATH", tmp && tmp[0] ? tmp : "/tmp");
    if (!ty->plan || !ty->case_name || !ty->run_id || !ty->group_id ||
        !ty->outputs_path || !ty->temp_path) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    if (env_int("TEST_INSTANCE_COUNT", 1, &ty->instance_count, why, whylen) <
            0 ||
        env_int("TEST_GROUP_INSTANCE_COUNT", ty->instance_count,
                &ty->group_instance_count, why, whylen) < 0 ||
        env_int("TESTYARD_PLAN_INSTANCES", ty->instance_count,
                &ty->plan_instance_count, why, whylen) < 0 ||
        env_int("TESTYARD_GROUP_INDEX", 0, &ty->group_index, why, whylen) < 0 ||
        env_int("TESTYARD_GLOBAL_INDEX", 0, &ty->global_index, why, whylen) < 0)
        return -1;
    return env_deadline(ty, why, whylen) < 0 ? -1 : env_params(ty, why, whylen);
}

/* Numbers every handle, so a thread's last message is never mistaken for
 * one about a new handle that reuses a freed one's address. */
static uint64_t handle_serial;

struct ty *
ty__new_from_env(char *why, size_t whylen)
{
    struct ty *ty = calloc(1, sizeof(*ty));

    if (ty == NULL) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&ty->lock, NULL);
    ty->serial = __atomic_add_fetch(&handle_serial, 1, __ATOMIC_RELAXED);
    if (env_read(ty, why, whylen) < 0) {
        ty__destroy(&ty);
        return NULL;
    }
    return ty;
}

void
ty__destroy(struct ty **pty)
{
    struct ty *ty = *pty;

    if (ty == NULL)
        return;
    ty__sync_close(ty);
    free(ty->plan);
    free(ty->case_name);
    free(ty->run_id);
    free(ty->group_id);
    free(ty->outputs_path);
    free(ty->temp_path);
    free(ty->fail_reason);
    cJSON_Delete(ty->params);
    pthread_mutex_destroy(&ty->lock);
    free(ty);
    *pty = NULL;
}

/* ---- getters ----------------------------------------------------------- */

const char *
ty_plan(const struct ty *ty)
{
    return ty->plan;
}

const char *
ty_case_name(const struct ty *ty)
{
    return ty->case_name;
}

const char *
ty_run_id(const struct ty *ty)
{
    return ty->run_id;
}

const char *
ty_group_id(const struct ty *ty)
{
    return ty->group_id;
}

const char *
ty_outputs_path(const struct ty *ty)
{
    return ty->outputs_path;
}

const char *
ty_temp_path(const struct ty *ty)
{
    return ty->temp_path;
}

int
ty_instance_count(const struct ty *ty)
{
    return ty->instance_count;
}

int
ty_plan_instance_count(const struct ty *ty)
{
    return ty->plan_instance_count;
}

int
ty_group_index(const struct ty *ty)
{
    return ty->group_index;
}

int
ty_global_index(const struct ty *ty)
{
    return ty->global_index;
}

int
ty_group_instance_count(const struct ty *ty)
{
    return ty->group_instance_count;
}

/* ---- conversions: a JSON value to a type, or the phrase expected ------- */

typedef const char *(*conv_fn)(const cJSON *v, void *out);

static const char *
conv_string(const cJSON *v, void *out)
{
    if (!cJSON_IsString(v))
        return "a string";
    *(const char **)out = v->valuestring;
    return NULL;
}

static const char *
conv_int(const cJSON *v, void *out)
{
    char *end;
    long long n;

    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;

        if (d != floor(d) || d < -9.2e18 || d > 9.2e18)
            return "an integer";
        *(int64_t *)out = (int64_t)d;
        return NULL;
    }
    if (!cJSON_IsString(v) || v->valuestring[0] == '\0')
        return "an integer";
    errno = 0;
    n = strtoll(v->valuestring, &end, 10);
    if (errno != 0 || *end != '\0')
        return "an integer";
    *(int64_t *)out = n;
    return NULL;
}

static const char *
conv_float(const cJSON *v, void *out)
{
    char *end;
    double d;

    if (cJSON_IsNumber(v)) {
        *(double *)out = v->valuedouble;
        return NULL;
    }
    if (!cJSON_IsString(v) || v->valuestring[0] == '\0')
        return "a number";
    errno = 0;
    d = strtod(v->valuestring, &end);
    if (errno != 0 || *end != '\0' || !isfinite(d))
        return "a number";
    *(double *)out = d;
    return NULL;
}

/* Go's strconv.ParseBool forms, as Testground plans write them. */
static const char *
conv_bool(const cJSON *v, void *out)
{
    static const char *const yes[] = {"1", "t", "T", "true", "TRUE", "True"};
    static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};

    if (cJSON_IsBool(v)) {
        *(bool *)out = cJSON_IsTrue(v);
        return NULL;
    }
    for (size_t i = 0; cJSON_IsString(v) && i < 6; i++) {
        if (strcmp(v->valuestring, yes[i]) == 0 ||
            strcmp(v->valuestring, no[i]) == 0) {
            *(bool *)out = strcmp(v->valuestring, yes[i]) == 0;
            return NULL;
        }
    }
    return "true or false";
}

static const char *
conv_size(const cJSON *v, void *out)
{
    char why[128];

    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;

        if (d != floor(d) || d < 0 || d > 1.8e19)
            return "a size like 512MB or 64Mi";
        *(uint64_t *)out = (uint64_t)d;
        return NULL;
    }
    if (!cJSON_IsString(v) ||
        ty__parse_size(v->valuestring, out, why, sizeof(why)) < 0)
        return "a size like 512MB or 64Mi";
    return NULL;
}

static const char *
conv_duration(const cJSON *v, void *out)
{
    char why[128];

    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;

        if (d != floor(d) || d < -9.2e18 || d > 9.2e18)
            return "a duration like 250ms or 30s";
        *(int64_t *)out = (int64_t)d;
        return NULL;
    }
    if (!cJSON_IsString(v) ||
        ty__parse_duration(v->valuestring, out, why, sizeof(why)) < 0)
        return "a duration like 250ms or 30s";
    return NULL;
}

/* ---- typed access ------------------------------------------------------ */

static const cJSON *
param(struct ty *ty, const char *name)
{
    const cJSON *v =
        name ? cJSON_GetObjectItemCaseSensitive(ty->params, name) : NULL;

    if (v == NULL)
        ty__seterr(ty, -ENOENT, "parameter \"%s\" is not set",
                   name ? name : "(null)");
    return v;
}

static int
bad_type(struct ty *ty, const char *label, const cJSON *v, const char *what)
{
    char *shown = cJSON_PrintUnformatted(v);
    int rc = ty__seterr(ty, -EINVAL, "parameter %s: expected %s, got %.80s",
                        label, what, shown ? shown : "?");

    free(shown);
    return rc;
}

static int
get_scalar(struct ty *ty, const char *name, conv_fn conv, void *out)
{
    const cJSON *v = param(ty, name);
    const char *what;
    char label[300];

    if (v == NULL)
        return -ENOENT;
    what = conv(v, out);
    if (what == NULL)
        return 0;
    snprintf(label, sizeof(label), "\"%s\"", name);
    return bad_type(ty, label, v, what);
}

static int
get_elem(struct ty *ty, const char *name, size_t i, conv_fn conv, void *out)
{
    const cJSON *v = param(ty, name), *e;
    const char *what;
    char label[300];

    if (v == NULL)
        return -ENOENT;
    snprintf(label, sizeof(label), "\"%s\"", name);
    if (!cJSON_IsArray(v))
        return bad_type(ty, label, v, "an array");
    e = i <= INT32_MAX ? cJSON_GetArrayItem(v, (int)i) : NULL;
    if (e == NULL)
        return ty__seterr(ty, -ENOENT,
                          "parameter \"%s\": no element %zu "
                          "(it has %d)",
                          name, i, cJSON_GetArraySize(v));
    what = conv(e, out);
    if (what == NULL)
        return 0;
    snprintf(label, sizeof(label), "\"%s\"[%zu]", name, i);
    return bad_type(ty, label, e, what);
}

bool
ty_param_has(const struct ty *ty, const char *name)
{
    return name && cJSON_GetObjectItemCaseSensitive(ty->params, name);
}

int
ty_param_string(struct ty *ty, const char *name, const char **out)
{
    return get_scalar(ty, name, conv_string, out);
}

int
ty_param_int(struct ty *ty, const char *name, int64_t *out)
{
    return get_scalar(ty, name, conv_int, out);
}

int
ty_param_float(struct ty *ty, const char *name, double *out)
{
    return get_scalar(ty, name, conv_float, out);
}

int
ty_param_bool(struct ty *ty, const char *name, bool *out)
{
    return get_scalar(ty, name, conv_bool, out);
}

int
ty_param_size(struct ty *ty, const char *name, uint64_t *out)
{
    return get_scalar(ty, name, conv_size, out);
}

int
ty_param_duration(struct ty *ty, const char *name, int64_t *out)
{
    return get_scalar(ty, name, conv_duration, out);
}

int
ty_param_enum(struct ty *ty, const char *name, const char **out)
{
    return get_scalar(ty, name, conv_string, out);
}

int
ty_param_array_len(struct ty *ty, const char *name, size_t *len)
{
    const cJSON *v = param(ty, name);

    if (v == NULL)
        return -ENOENT;
    if (!cJSON_IsArray(v))
        return ty__seterr(ty, -EINVAL,
                          "parameter \"%s\": expected an "
                          "array",
                          name);
    *len = (size_t)cJSON_GetArraySize(v);
    return 0;
}

int
ty_param_array_string(struct ty *ty, const char *name, size_t i,
                      const char **out)
{
    return get_elem(ty, name, i, conv_string, out);
}

int
ty_param_array_int(struct ty *ty, const char *name, size_t i, int64_t *out)
{
    return get_elem(ty, name, i, conv_int, out);
}

int
ty_param_array_float(struct ty *ty, const char *name, size_t i, double *out)
{
    return get_elem(ty, name, i, conv_float, out);
}

int
ty_param_array_bool(struct ty *ty, const char *name, size_t i, bool *out)
{
    return get_elem(ty, name, i, conv_bool, out);
}

int
ty_param_array_size(struct ty *ty, const char *name, size_t i, uint64_t *out)
{
    return get_elem(ty, name, i, conv_size, out);
}

int
ty_param_array_duration(struct ty *ty, const char *name, size_t i, int64_t *out)
{
    return get_elem(ty, name, i, conv_duration, out);
}
