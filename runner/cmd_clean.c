/*
 * cmd_clean.c — `testyard clean [--run ID] [--dry-run]`: remove the
 * containers and networks testyard left behind, found by their
 * testyard.run label (every run's, or one run's). A coordinator that was
 * killed cannot clean up after itself; this is how its orphans go.
 *
 * Running containers are killed first, then removed with their anonymous
 * volumes; networks go last, once no container holds them. Removals run
 * on a few threads (the engine serialises little of a remove) and are
 * reported in list order. Exit 0 when everything found was removed, 1 when
 * some removal failed, 69 when no engine answers.
 */
#include "cmd.h"
#include "docker.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLEAN_WORKERS 4

struct item {
    const char *id;
    char name[128];
    const char *run;
    bool running;
    bool network;
    int rc;
    struct err err;
};

struct pool {
    struct docker *d;
    struct item *items;
    size_t n, next;
    pthread_mutex_t mu;
};

static void
usage(FILE *out)
{
    fprintf(out, "usage: testyard clean [--run ID] [--dry-run]\n\n"
                 "Remove the containers and networks testyard created (label\n"
                 "testyard.run), killing running containers first.\n\n"
                 "  --run ID     only those of run ID\n"
                 "  --dry-run    list what would be removed, remove nothing\n\n"
                 "Exit status: 0 done, 1 some removal failed, 64 usage,\n"
                 "69 no Docker engine answers.\n");
}

static const char *
label_of(const cJSON *obj, const char *key, const char *name)
{
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(obj, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels, name);

    return cJSON_IsString(v) ? v->valuestring : "?";
}

static const char *
str_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsString(v) ? v->valuestring : "";
}

/* One item per container of the list, then one per network. */
static struct item *
make_items(const cJSON *containers, const cJSON *networks, size_t *n)
{
    size_t count =
        (size_t)(cJSON_GetArraySize(containers) + cJSON_GetArraySize(networks));
    struct item *items = xcalloc(count ? count : 1, sizeof(*items));
    const cJSON *c;
    size_t i = 0;

    cJSON_ArrayForEach (c, containers) {
        const cJSON *names = cJSON_GetObjectItemCaseSensitive(c, "Names");
        const cJSON *first = cJSON_GetArrayItem(names, 0);
        const char *state = str_of(c, "State");

        items[i].id = str_of(c, "Id");
        snprintf(items[i].name, sizeof(items[i].name), "%s",
                 cJSON_IsString(first) ? first->valuestring + 1 : "");
        items[i].run = label_of(c, "Labels", "testyard.run");
        items[i].running = strcmp(state, "running") == 0 ||
                           strcmp(state, "paused") == 0 ||
                           strcmp(state, "restarting") == 0;
        i++;
    }
    cJSON_ArrayForEach (c, networks) {
        items[i].id = str_of(c, "Id");
        snprintf(items[i].name, sizeof(items[i].name), "%s", str_of(c, "Name"));
        items[i].run = label_of(c, "Labels", "testyard.run");
        items[i].network = true;
        i++;
    }
    *n = i;
    return items;
}

/* Kill if running, then remove; a container already gone is fine. */
static int
remove_item(struct docker *d, struct item *it)
{
    struct err e = {0};

    if (it->network)
        return docker_network_remove(d, it->id, &it->err) < 0 &&
                       it->err.code != ENOENT
                   ? -1
                   : 0;
    if (it->running && docker_container_kill(d, it->id, "SIGKILL", &e) < 0 &&
        e.code != EBUSY && e.code != ENOENT) {
        it->err = e;
        return -1;
    }
    if (docker_container_remove(d, it->id, true, &it->err) < 0 &&
        it->err.code != ENOENT)
        return -1;
    return 0;
}

static void *
worker(void *arg)
{
    struct pool *p = arg;

    for (;;) {
        struct item *it = NULL;

        pthread_mutex_lock(&p->mu);
        /* networks only after every container is done */
        if (p->next < p->n && !p->items[p->next].network)
            it = &p->items[p->next++];
        pthread_mutex_unlock(&p->mu);
        if (it == NULL)
            return NULL;
        it->rc = remove_item(p->d, it);
    }
}

static void
remove_all(struct docker *d, struct item *items, size_t n)
{
    struct pool p = {.d = d, .items = items, .n = n};
    pthread_t th[CLEAN_WORKERS];
    size_t started = 0;

    pthread_mutex_init(&p.mu, NULL);
    for (; started < CLEAN_WORKERS; started++)
        if (pthread_create(&th[started], NULL, worker, &p) != 0)
            break;
    if (started == 0)
        worker(&p);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (; p.next < n; p.next++) /* the networks */
        items[p.next].rc = remove_item(d, &items[p.next]);
    pthread_mutex_destroy(&p.mu);
}

static int
report(const struct item *items, size_t n, bool dry)
{
    size_t nc = 0, nn = 0, failed = 0;

    for (size_t i = 0; i < n; i++) {
        const struct item *it = &items[i];

        if (it->rc < 0) {
            fprintf(stderr, "testyard clean: %s %s: %s\n",
                    it->network ? "network" : "container", it->name,
                    it->err.msg);
            failed++;
            continue;
        }
        printf("%s %s %s (%.12s) of run %s%s\n",
               dry ? "would remove" : "removed",
               it->network ? "network" : "container", it->name, it->id, it->run,
               it->running ? (dry ? ", running" : ", killed first") : "");
        if (it->network)
            nn++;
        else
            nc++;
    }
    if (nc + nn + failed == 0)
        printf("nothing to clean\n");
    else
        printf("%s %zu container%s and %zu network%s\n",
               dry ? "would remove" : "removed", nc, nc == 1 ? "" : "s", nn,
               nn == 1 ? "" : "s");
    return failed ? 1 : 0;
}

static int
parse_args(int argc, char **argv, const char **run, bool *dry)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--dry-run") == 0) {
            *dry = true;
        } else if (strcmp(argv[i], "--run") == 0 && i + 1 < argc) {
            *run = argv[++i];
        } else {
            fprintf(stderr, "testyard clean: unexpected argument '%s'\n",
                    argv[i]);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    return -1;
}

int
cmd_clean(int argc, char **argv)
{
    const char *run = NULL;
    bool dry = false;
    struct err err = {0};
    int rc = parse_args(argc, argv, &run, &dry);
    cleanup_free char *label = NULL;
    cJSON *cs = NULL, *ns = NULL;
    struct item *items = NULL;
    struct docker *d;
    size_t n = 0;

    if (rc >= 0)
        return rc;
    label = run ? xasprintf("testyard.run=%s", run) : xstrdup("testyard.run");
    if ((d = docker_new(NULL, &err)) == NULL ||
        (cs = docker_container_list(d, (const char *[]){label, NULL}, true,
                                    &err)) == NULL ||
        (ns = docker_network_list(d, (const char *[]){label, NULL}, &err)) ==
            NULL) {
        fprintf(stderr, "testyard clean: %s\n", err.msg);
        rc = EXIT_UNAVAILABLE;
    } else {
        items = make_items(cs, ns, &n);
        if (!dry)
            remove_all(d, items, n);
        rc = report(items, n, dry);
    }
    free(items);
    cJSON_Delete(cs);
    cJSON_Delete(ns);
    docker_destroy(&d);
    return rc;
}
