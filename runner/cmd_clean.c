/*
 * cmd_clean.c — `testyard clean [--run ID] [--runs DIR] [--force]
 * [--dry-run]`: remove what runs whose coordinator was killed left behind.
 * A killed coordinator cannot clean up after itself; this is how its
 * orphans go, and only its: every container and network carries its
 * coordinator's identity as labels (base/run_lock.h), so a run whose
 * coordinator is alive — on this shared engine, another user's — is
 * skipped and said so. Run folders and cgroups on this host are
 * cmd_clean_runs.c's.
 *
 * Running containers are killed first, then removed with their anonymous
 * volumes; networks go last, once no container holds them. Removals run
 * on a few threads (the engine serialises little of a remove) and are
 * reported in list order. Exit 0 when everything found was removed, 1 when
 * some removal failed or the run named was left alone, 69 when no engine
 * answers (after the host's part is done).
 */
#include "cmd.h"
#include "cmd_clean_int.h"
#include "docker/docker.h"
#include "base/run_lock.h"
#include "base/util.h"

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
    bool skip; /* its coordinator may be alive */
    char why[400];
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
    fprintf(out,
            "usage: testyard clean [--run ID] [--runs DIR] [--force] "
            "[--dry-run]\n\n"
            "Remove what runs whose coordinator is gone (killed, or its host\n"
            "restarted) left behind: containers and networks (label\n"
            "testyard.run; running ones are killed first), cgroups, and the\n"
            "scratch in their run folders (.sync/, .tmp/), and mark those\n"
            "runs interrupted. A run whose coordinator is alive on this host,\n"
            "or runs on another host, is skipped and the reason printed.\n\n"
            "  --run ID     only run ID; when its coordinator may be alive it\n"
            "               is left alone (exit 1) unless --force\n"
            "  --force      with --run: remove it anyway (a live coordinator\n"
            "               on this host sees its instances killed and ends\n"
            "               the run itself)\n"
            "  --runs DIR   where run folders are (default: $TESTYARD_RUNS,\n"
            "               else runs)\n"
            "  --dry-run    list what would be removed, remove nothing\n\n"
            "Exit status: 0 done, 1 some removal failed or the run named was\n"
            "left alone, 64 usage, 69 no Docker engine answers.\n");
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

/* Whether what these labels name may go: its coordinator is gone (or
 * --force); why says why not. */
static bool
removable(const struct clean_opts *o, const cJSON *obj, char *why, size_t size)
{
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(obj, "Labels");
    struct run_identity id;
    char w[320];

    if (run_identity_from_labels(labels, &id) < 0) {
        snprintf(why, size,
                 "no coordinator labels (made by an older "
                 "testyard?): can't tell whether its coordinator "
                 "lives");
        return o->force;
    }
    switch (run_identity_check(&id, w, sizeof(w))) {
    case RUN_DEAD:
        return true;
    case RUN_ALIVE:
        snprintf(why, size, "alive: %s", w);
        break;
    default:
        snprintf(why, size, "its coordinator runs %s", w);
    }
    return o->force;
}

/* One item per container of the list, then one per network. */
static struct item *
make_items(const struct clean_opts *o, const cJSON *containers,
           const cJSON *networks, size_t *n)
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
        items[i].skip = !removable(o, c, items[i].why, sizeof(items[i].why));
        i++;
    }
    cJSON_ArrayForEach (c, networks) {
        items[i].id = str_of(c, "Id");
        snprintf(items[i].name, sizeof(items[i].name), "%s", str_of(c, "Name"));
        items[i].run = label_of(c, "Labels", "testyard.run");
        items[i].network = true;
        items[i].skip = !removable(o, c, items[i].why, sizeof(items[i].why));
        i++;
    }
    *n = i;
    return items;
}

/* Kill if running, then remove; one already gone is fine, and leaves no
 * error in it->err. */
static int
remove_item(struct docker *d, struct item *it)
{
    struct err e = {0};
    int rc;

    if (it->skip)
        return 0;
    if (!it->network && it->running &&
        docker_container_kill(d, it->id, "SIGKILL", &e) < 0 &&
        e.code != EBUSY && e.code != ENOENT) {
        it->err = e;
        return -1;
    }
    err_clear(&e);
    rc = it->network ? docker_network_remove(d, it->id, &e)
                     : docker_container_remove(d, it->id, true, &e);
    if (rc < 0 && e.code != ENOENT) {
        it->err = e;
        return -1;
    }
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

/* What was removed, in list order; each skipped run once. */
static void
report(const struct clean_opts *o, const struct item *items, size_t n,
       struct clean_tally *t)
{
    size_t nc = 0, nn = 0;

    for (size_t i = 0; i < n; i++) {
        const struct item *it = &items[i];

        if (it->skip) {
            clean__skip(o, it->run, it->why, t);
            continue;
        }
        if (it->rc < 0) {
            fprintf(stderr, "testyard clean: %s %s: %s\n",
                    it->network ? "network" : "container", it->name,
                    it->err.msg);
            t->failed++;
            continue;
        }
        printf("%s %s %s (%.12s) of run %s%s\n",
               o->dry ? "would remove" : "removed",
               it->network ? "network" : "container", it->name, it->id, it->run,
               it->running ? (o->dry ? ", running" : ", killed first") : "");
        if (it->network)
            nn++;
        else
            nc++;
    }
    if (nc + nn > 0)
        printf("%s %zu container%s and %zu network%s\n",
               o->dry ? "would remove" : "removed", nc, nc == 1 ? "" : "s", nn,
               nn == 1 ? "" : "s");
    t->removed += nc + nn;
}

/* A plain run id: what `run` accepts, so no path. */
static bool
plain_id(const char *s)
{
    size_t n = strlen(s);

    return n > 0 && n <= 128 && s[0] != '.' &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789._-") == n;
}

static const struct cmd_usage clean_usage = {"clean", NULL, usage};

static int
clean_opt(int c, char *arg, void *ctx, struct err *err)
{
    struct clean_opts *o = ctx;

    switch (c) {
    case 'r':
        o->run = arg;
        if (!plain_id(o->run))
            return cmd_usage_err(err, CMD_EVALUE,
                                 "--run: expected a run id (letters, "
                                 "digits, '.', '_', '-'; not '.' first), "
                                 "got '%s'",
                                 o->run);
        break;
    case 'R':
        o->runs = arg;
        break;
    case 'f':
        o->force = true;
        break;
    default: /* 'n' */
        o->dry = true;
    }
    return 0;
}

/* 0 to go on, 1 after --help, -1 on a usage error (cmd.h). */
static int
parse_args(int argc, char **argv, struct clean_opts *o, struct err *err)
{
    static const struct option longopts[] = {
        {"run", required_argument, NULL, 'r'},
        {"runs", required_argument, NULL, 'R'},
        {"force", no_argument, NULL, 'f'},
        {"dry-run", no_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const struct cmd_spec spec = {&clean_usage, ":h", longopts,
                                         clean_opt, 0};
    int rc = cmd_parse(&spec, argc, argv, o, err);

    if (rc == 0 && o->force && o->run == NULL)
        return cmd_usage_err(err, CMD_ESHAPE, "--force needs --run ID");
    return rc;
}

void
clean__skip(const struct clean_opts *o, const char *id, const char *why,
            struct clean_tally *t)
{
    for (size_t i = 0; i < t->nseen; i++)
        if (strcmp(t->seen[i], id) == 0)
            return;
    xgrow(&t->seen, &t->capseen, t->nseen + 1, sizeof(*t->seen));
    t->seen[t->nseen++] = xstrdup(id);
    if (o->run != NULL && strcmp(o->run, id) == 0) {
        fprintf(stderr,
                "testyard clean: run %s: %s; nothing removed (--force "
                "removes it anyway)\n",
                id, why);
        t->refused++;
        return;
    }
    printf("skipped run %s: %s\n", id, why);
    t->skipped++;
}

/* Containers and networks; 0, or EXIT_UNAVAILABLE without an engine. */
static int
clean_docker(const struct clean_opts *o, struct clean_tally *t)
{
    cleanup_free char *label =
        o->run ? xasprintf("testyard.run=%s", o->run) : xstrdup("testyard.run");
    struct err err = {0};
    cJSON *cs = NULL, *ns = NULL;
    struct item *items = NULL;
    struct docker *d;
    size_t n = 0;
    int rc = 0;

    if ((d = docker_new(NULL, &err)) == NULL ||
        (cs = docker_container_list(d, (const char *[]){label, NULL}, true,
                                    &err)) == NULL ||
        (ns = docker_network_list(d, (const char *[]){label, NULL}, &err)) ==
            NULL) {
        fprintf(stderr,
                "testyard clean: containers and networks not looked "
                "at: %s\n",
                err.msg);
        rc = EXIT_UNAVAILABLE;
    } else {
        items = make_items(o, cs, ns, &n);
        if (!o->dry)
            remove_all(d, items, n);
        report(o, items, n, t);
    }
    free(items);
    cJSON_Delete(cs);
    cJSON_Delete(ns);
    docker_destroy(&d);
    return rc;
}

static void
tally_release(struct clean_tally *t)
{
    for (size_t i = 0; i < t->nseen; i++)
        free(t->seen[i]);
    free(t->seen);
}

int
cmd_clean(int argc, char **argv)
{
    struct clean_opts o = {.runs = getenv("TESTYARD_RUNS")};
    struct clean_tally t = {0};
    struct err err = {0};
    int rc = parse_args(argc, argv, &o, &err);

    if (rc != 0)
        return cmd_args_end(&clean_usage, rc, &err);
    if (o.runs == NULL || o.runs[0] == '\0')
        o.runs = "runs";
    /* Containers first, so that none still writes in a run folder whose
     * scratch goes next. */
    rc = clean_docker(&o, &t);
    clean__runs(&o, &t);
    if (t.removed + t.skipped + t.refused + t.failed == 0)
        printf("nothing to clean\n");
    else if (t.removed == 0 && t.skipped > 0)
        printf("nothing removed; %zu run%s skipped\n", t.skipped,
               t.skipped == 1 ? "" : "s");
    tally_release(&t);
    if (rc == 0 && t.failed + t.refused > 0)
        rc = 1;
    return rc;
}
