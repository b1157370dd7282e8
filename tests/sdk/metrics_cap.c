/*
 * metrics_cap.c — SDK metrics captured in memory (see metrics_cap.h).
 */
#include "metrics_cap.h"

#include "th.h"
#include "ty_int.h"
#include "ty_metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
struct ty__buf cap_results, cap_diag, cap_work;
int cap_calls;

int
capture(struct ty *ty, const char *file, const char *data, size_t len)
{
    (void)ty;
    pthread_mutex_lock(&cap_lock);
    cap_calls++;
    if (strcmp(file, "results.out") == 0)
        ty__buf_add(&cap_results, data, len);
    else if (strcmp(file, "diagnostics.out") == 0)
        ty__buf_add(&cap_diag, data, len);
    else if (strcmp(file, TY__WORK_FILE) == 0)
        ty__buf_add(&cap_work, data, len);
    pthread_mutex_unlock(&cap_lock);
    return 0;
}

void
cap_reset(void)
{
    pthread_mutex_lock(&cap_lock);
    ty__buf_release(&cap_results);
    ty__buf_release(&cap_diag);
    ty__buf_release(&cap_work);
    cap_calls = 0;
    pthread_mutex_unlock(&cap_lock);
}

struct ty *
cap_handle(const char *interval)
{
    struct ty *ty = calloc(1, sizeof(*ty));

    pthread_mutex_init(&ty->lock, NULL);
    ty->outputs_path = strdup(th_tmpdir());
    setenv("TESTYARD_DIAGNOSTICS_INTERVAL", interval, 1);
    ty__metrics_set_sink(capture);
    ty__metrics_init(ty);
    CHECK(ty->metrics != NULL);
    return ty;
}

void
cap_handle_free(struct ty *ty)
{
    ty__metrics_fini(ty);
    CHECK(ty->metrics == NULL);
    pthread_mutex_destroy(&ty->lock);
    free(ty->outputs_path);
    free(ty);
}

struct ty *
standalone_handle(const char *interval)
{
    char why[256];
    struct ty *ty;

    unsetenv("SYNC_SERVICE_HOST");
    unsetenv("SYNC_SERVICE_PORT");
    unsetenv("TESTYARD_SYNC_URL");
    unsetenv("TESTYARD_DEADLINE_MS");
    setenv("TEST_OUTPUTS_PATH", th_tmpdir(), 1);
    setenv("TESTYARD_DIAGNOSTICS_INTERVAL", interval, 1);
    ty = ty__new_from_env(why, sizeof(why));
    CHECK_MSG(ty != NULL, "%s", why);
    if (ty == NULL)
        return NULL;
    ty__metrics_set_sink(NULL);
    ty__metrics_init(ty);
    return ty;
}

int
count_lines(const char *text, const char *needle)
{
    int n = 0;

    for (const char *p = text; p && (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

int
check_records(const char *text)
{
    int n = 0;

    for (const char *p = text; p != NULL && *p != '\0'; n++) {
        const char *end = strchr(p, '\n');
        cJSON *j = end ? cJSON_ParseWithLength(p, (size_t)(end - p)) : NULL;

        CHECK_MSG(j != NULL, "not JSON: %.*s", (int)(end ? end - p : 40), p);
        if (j != NULL) {
            CHECK(cJSON_IsNumber(cJSON_GetObjectItem(j, "ts")));
            CHECK(cJSON_IsString(cJSON_GetObjectItem(j, "type")));
            CHECK(cJSON_IsString(cJSON_GetObjectItem(j, "name")));
            CHECK(cJSON_IsObject(cJSON_GetObjectItem(j, "measures")));
        }
        cJSON_Delete(j);
        p = end ? end + 1 : NULL;
    }
    return n;
}

cJSON *
last_record(const char *text, const char *type, const char *name)
{
    cJSON *found = NULL;

    for (const char *p = text; p != NULL && *p != '\0';) {
        const char *end = strchr(p, '\n');
        cJSON *j = end ? cJSON_ParseWithLength(p, (size_t)(end - p)) : NULL;
        cJSON *t = cJSON_GetObjectItem(j, "type");
        cJSON *nm = cJSON_GetObjectItem(j, "name");

        if (cJSON_IsString(t) && cJSON_IsString(nm) &&
            strcmp(t->valuestring, type) == 0 &&
            strcmp(nm->valuestring, name) == 0) {
            cJSON_Delete(found);
            found = j;
        } else {
            cJSON_Delete(j);
        }
        p = end ? end + 1 : NULL;
    }
    return found;
}

double
measure(const cJSON *rec, const char *key)
{
    const cJSON *v =
        cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "measures"), key);

    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
