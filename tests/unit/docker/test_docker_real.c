/*
 * test_docker_real.c — the Docker client, the image builder and the
 * clean and doctor commands against the real engine. Every case skips,
 * saying why, when no engine answers. Everything created carries the
 * label testyard.test=1 and is removed at the end of its case.
 *
 * The cases also measure what the backend's tuning needs: how long an
 * image build takes, how long one create+start takes, and how many
 * starts a second the engine manages with 8 concurrent callers. Those
 * figures are printed as TAP comments ("# measure: ...").
 */
#include "base/strbuf.h"
#include "cmd.h"
#include "docker/docker.h"
#include "builder/builder.h"
#include "base/run_lock.h"
#include "th.h"
#include "th_proc.h"
#include "ty_cgroup.h"
#include "base/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MiB (1024 * 1024)

static const char plan_src[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "#include <unistd.h>\n"
    "static const char token[] = \"%s\";\n"
    "int main(int argc, char **argv) {\n"
    "  const char *mode = argc > 1 ? argv[1] : \"hello\";\n"
    "  const char *out = getenv(\"TEST_OUTPUTS_PATH\");\n"
    "  if (!strcmp(mode, \"oom\"))\n"
    "    for (;;) { char *p = malloc(1 << 20); if (!p) return 3;\n"
    "               memset(p, 1, 1 << 20); }\n"
    "  if (!strcmp(mode, \"sleep\")) {\n"
    "    puts(\"sleeping\"); fflush(stdout); sleep(60); return 0; }\n"
    "  printf(\"hello from plan %%s\\n\", getenv(\"TEST_X\"));\n"
    "  fflush(stdout);\n"
    "  fprintf(stderr, \"to stderr\\n\");\n"
    "  if (out) { char p[256]; FILE *f;\n"
    "    snprintf(p, sizeof(p), \"%%s/hello.txt\", out);\n"
    "    if ((f = fopen(p, \"w\")) != NULL) { fputs(token, f); fclose(f); }}\n"
    "  return argc > 5 ? (int)strlen(token) : 0;\n"
    "}\n";

static const char *
token(void)
{
    return getenv("TY_TEST_TOKEN");
}

static struct docker *
connect_or_skip(void)
{
    static char why[ERR_MSG_MAX + 64];
    struct err err = {0};
    struct docker *d = docker_new(NULL, &err);

    if (d == NULL) {
        snprintf(why, sizeof(why), "no Docker engine answers: %s", err.msg);
        th_skip(why);
    }
    return d;
}

/* Compile the test plan (with this run's token in it). */
static char *
compile_plan(void)
{
    char *src = path_join(th_tmpdir(), "plan.c");
    char *bin = path_join(th_tmpdir(), "plan");
    char *text = xasprintf(plan_src, token());
    struct err err = {0};

    CHECK(file_write_atomic(src, text, strlen(text), &err) == 0);
    CHECK_EQ_INT(th_run((char *const[]){"cc", "-O1", "-o", bin, src, NULL}), 0);
    free(text);
    free(src);
    return bin;
}

static int
build_plan(struct docker *d, const char *bin, struct imagebuild_result *res,
           struct err *err)
{
    struct imagebuild_opts o = {
        .plan = "testyard-selftest",
        .binary = bin,
        .labels = (const char *const[]){"testyard.test=1", NULL},
        .template_path = "docker/Dockerfile.plan",
    };

    return imagebuild_build(d, &o, res, err);
}

/* Remove every container and network of this test run, and the image. */
static void
cleanup(struct docker *d, const char *image)
{
    cleanup_free char *label = xasprintf("testyard.run=test-%s", token());
    const char *const labels[] = {"testyard.test=1", label, NULL};
    cJSON *list = docker_container_list(d, labels, true, NULL), *c;

    cJSON_ArrayForEach (c, list) {
        const char *id = cJSON_GetObjectItem(c, "Id")->valuestring;

        docker_container_remove(d, id, true, NULL);
    }
    cJSON_Delete(list);
    list = docker_network_list(d, labels, NULL);
    cJSON_ArrayForEach (c, list) {
        const char *id = cJSON_GetObjectItem(c, "Id")->valuestring;

        docker_network_remove(d, id, NULL);
    }
    cJSON_Delete(list);
    if (image)
        docker_image_remove(d, image, true, NULL);
}

/* Create (not start) one container of the test plan. */
/* Labels naming a coordinator on this host that is gone (no such pid),
 * so that `clean` takes what carries them. Static strings. */
static const char *const *
dead_coordinator(void)
{
    static char v[RUN_LABELS_N][320];
    static const char *labels[RUN_LABELS_N + 1];
    struct run_identity id;

    run_identity_of(0, &id, NULL);
    snprintf(v[0], sizeof(v[0]), "testyard.coordinator.pid=999999999");
    snprintf(v[1], sizeof(v[1]), "testyard.coordinator.start=1");
    snprintf(v[2], sizeof(v[2]), "testyard.coordinator.boot=%s", id.boot_id);
    snprintf(v[3], sizeof(v[3]), "testyard.coordinator.host=%s", id.host);
    for (int i = 0; i < RUN_LABELS_N; i++)
        labels[i] = v[i];
    return labels;
}

static char *
create(struct docker *d, const char *image, const char *mode, int n,
       const char *outputs, const char *network)
{
    const char *const *dead = dead_coordinator();
    cleanup_free char *run_label = xasprintf("testyard.run=test-%s", token());
    cleanup_free char *name = xasprintf("ty-test-%s-%d", token(), n);
    cleanup_free char *bind =
        outputs ? xasprintf("%s:/outputs", outputs) : NULL;
    struct docker_container_spec s = {
        .image = image,
        .cmd = (const char *const[]){mode, NULL},
        .env = (const char *const[]){"TEST_X=42", "TEST_OUTPUTS_PATH=/outputs",
                                     NULL},
        .labels =
            (const char *const[]){"testyard.test=1", run_label,
                                  "testyard.plan=testyard-selftest",
                                  "testyard.group=g", "testyard.index=0",
                                  dead[0], dead[1], dead[2], dead[3], NULL},
        .binds = bind ? (const char *const[]){bind, NULL} : NULL,
        .network_mode = network ? network : "host",
        .memory = 64 * MiB,
        .memory_swap = 64 * MiB,
        .nano_cpus = 500000000,
        .pids_limit = 64,
        .no_new_privileges = true,
        .cap_drop_all = true,
        .init = true,
    };
    cJSON *cfg = docker_container_config(&s);
    struct err err = {0};
    char *id = NULL;

    CHECK_MSG(docker_container_create(d, name, cfg, &id, &err) == 0, "%s",
              err.msg);
    cJSON_Delete(cfg);
    return id;
}

static double
secs_since(int64_t t0)
{
    return (double)(now_mono_ns() - t0) / 1e9;
}

static void
t_engine_basics(void)
{
    struct docker *d = connect_or_skip();
    struct err err = {0};
    cJSON *v = docker_version(d, &err), *info = docker_info(d, &err);

    CHECK(docker_ping(d, &err) == 0);
    CHECK(v && cJSON_GetObjectItem(v, "ApiVersion"));
    CHECK(info && cJSON_GetObjectItem(info, "Driver"));
    CHECK(strlen(docker_api_version(d)) >= 4);
    printf("# engine %s, API %s (speaking %s), driver %s\n",
           docker_engine_version(d), docker_engine_api(d),
           docker_api_version(d),
           cJSON_GetObjectItem(info, "Driver")->valuestring);
    cJSON_Delete(v);
    cJSON_Delete(info);
    docker_destroy(&d);
}

static int
collect_logs(void *arg, int stream, const char *data, size_t len,
             struct err *err)
{
    struct strbuf *sb = arg;

    (void)err;
    strbuf_addf(&sb[stream == 2], "%.*s", (int)len, data);
    return 0;
}

/* The limits as the engine reads them back. */
static void
check_limits(struct docker *d, const char *id)
{
    struct err err = {0};
    cJSON *j = docker_container_inspect(d, id, &err);
    cJSON *hc = cJSON_GetObjectItem(j, "HostConfig");

    CHECK_EQ_INT(cJSON_GetObjectItem(hc, "Memory")->valuedouble, 64 * MiB);
    CHECK_EQ_INT(cJSON_GetObjectItem(hc, "MemorySwap")->valuedouble, 64 * MiB);
    CHECK_EQ_INT(cJSON_GetObjectItem(hc, "NanoCpus")->valuedouble, 5e8);
    CHECK_EQ_INT(cJSON_GetObjectItem(hc, "PidsLimit")->valuedouble, 64);
    CHECK_EQ_STR(
        cJSON_GetArrayItem(cJSON_GetObjectItem(hc, "CapDrop"), 0)->valuestring,
        "ALL");
    cJSON_Delete(j);
}

static void
t_image_run_limits(void)
{
    struct docker *d = connect_or_skip();
    char *bin = compile_plan(), *id, *outputs = path_join(th_tmpdir(), "o");
    struct imagebuild_result r1, r2;
    struct strbuf logs[2];
    struct err err = {0};
    int64_t t0 = now_mono_ns();
    double build_s, start_s;
    int code = -1;
    char *hello;

    CHECK(mkdir_p(outputs, &err) == 0);
    /* the image runs as its own user (testyard, 65532) when none is
     * given: the folder it writes must be that user's */
    if (chown(outputs, 65532, 65532) < 0)
        CHECK(chmod(outputs, 0777) == 0);
    CHECK_MSG(build_plan(d, bin, &r1, &err) == 0, "%s", err.msg);
    build_s = secs_since(t0);
    CHECK(r1.built);
    t0 = now_mono_ns();
    CHECK_MSG(build_plan(d, bin, &r2, &err) == 0, "%s", err.msg);
    CHECK(!r2.built);
    CHECK_EQ_STR(r2.tag, r1.tag);
    CHECK_EQ_STR(r2.image_id, r1.image_id);
    printf("# measure: image build %.2f s (%llu files, %.1f MB context); "
           "skipped rebuild %.3f s\n",
           build_s, (unsigned long long)r1.files,
           (double)r1.context_bytes / 1e6, secs_since(t0));
    t0 = now_mono_ns();
    id = create(d, r1.tag, "hello", 0, outputs, NULL);
    CHECK_MSG(docker_container_start(d, id, &err) == 0, "%s", err.msg);
    start_s = secs_since(t0);
    printf("# measure: create+start of one container %.3f s\n", start_s);
    CHECK(docker_container_wait(d, id, DOCKER_WAIT_NOT_RUNNING, NULL, &code,
                                &err) == 0);
    CHECK_EQ_INT(code, 0);
    strbuf_init(&logs[0]);
    strbuf_init(&logs[1]);
    CHECK(docker_container_logs(d, id, NULL, collect_logs, logs, &err) == 0);
    CHECK_EQ_STR(logs[0].buf, "hello from plan 42\n");
    CHECK_EQ_STR(logs[1].buf, "to stderr\n");
    check_limits(d, id);
    hello = path_join(outputs, "hello.txt");
    free(outputs);
    outputs = file_read(hello, 4096, NULL, &err);
    CHECK_EQ_STR(outputs, token());
    CHECK(docker_container_remove(d, id, false, &err) == 0);
    CHECK(docker_container_inspect(d, id, &err) == NULL && err.code == ENOENT);
    cleanup(d, r1.tag);
    CHECK_EQ_INT(docker_image_exists(d, r1.tag, &err), 0);
    strbuf_release(&logs[0]);
    strbuf_release(&logs[1]);
    imagebuild_result_release(&r1);
    imagebuild_result_release(&r2);
    free(hello);
    free(outputs);
    free(id);
    free(bin);
    docker_destroy(&d);
}

struct evrun {
    struct docker *d;
    struct docker_events_opts o;
    struct strbuf seen;
    int ready, rc;
    pthread_mutex_t mu;
    struct err err;
};

static void
ev_ready(void *arg)
{
    struct evrun *e = arg;

    pthread_mutex_lock(&e->mu);
    e->ready = 1;
    pthread_mutex_unlock(&e->mu);
}

static int
ev_seen(void *arg, const struct docker_event *ev)
{
    struct evrun *e = arg;
    const cJSON *code = cJSON_GetObjectItem(ev->attributes, "exitCode");

    pthread_mutex_lock(&e->mu);
    strbuf_addf(&e->seen, "%s%s ", ev->action,
                cJSON_IsString(code) ? code->valuestring : "");
    pthread_mutex_unlock(&e->mu);
    return 0;
}

static void *
ev_thread(void *arg)
{
    struct evrun *e = arg;

    e->rc = docker_events(e->d, &e->o, ev_seen, e, &e->err);
    return NULL;
}

static bool
ev_has(struct evrun *e, const char *what)
{
    bool has;

    pthread_mutex_lock(&e->mu);
    has = e->seen.buf && strstr(e->seen.buf, what);
    pthread_mutex_unlock(&e->mu);
    return has;
}

static bool
ev_is_ready(struct evrun *e)
{
    bool ready;

    pthread_mutex_lock(&e->mu);
    ready = e->ready;
    pthread_mutex_unlock(&e->mu);
    return ready;
}

/* An instance that allocates past 64 MiB: killed by the kernel, reported
 * as OOMKilled with 137, and the events stream says "oom" and "die". */
static void
t_oom_and_events(void)
{
    struct docker *d = connect_or_skip();
    cleanup_free char *label = xasprintf("testyard.run=test-%s", token());
    struct evrun e = {.d = d};
    struct imagebuild_result r;
    struct docker_state st;
    struct err err = {0};
    char *bin = compile_plan(), *id;
    pthread_t th;
    int code = -1;

    strbuf_init(&e.seen);
    pthread_mutex_init(&e.mu, NULL);
    e.o.labels = (const char *const[]){label, NULL};
    e.o.types = (const char *const[]){"container", NULL};
    e.o.ready = ev_ready;
    e.o.cancel = docker_cancel_new();
    pthread_create(&th, NULL, ev_thread, &e);
    CHECK_MSG(build_plan(d, bin, &r, &err) == 0, "%s", err.msg);
    for (int i = 0; i < 500 && !ev_is_ready(&e); i++)
        usleep(10000);
    CHECK(ev_is_ready(&e));
    id = create(d, r.tag, "oom", 1, NULL, NULL);
    CHECK(docker_container_start(d, id, &err) == 0);
    CHECK(docker_container_wait(d, id, DOCKER_WAIT_NOT_RUNNING, NULL, &code,
                                &err) == 0);
    CHECK_EQ_INT(code, 137);
    CHECK(docker_container_state(d, id, &st, &err) == 0);
    CHECK(st.oom_killed);
    CHECK(st.finished_ns > st.started_ns && st.started_ns > 0);
    for (int i = 0; i < 300 && !ev_has(&e, "die137"); i++)
        usleep(10000);
    docker_cancel_fire(e.o.cancel);
    pthread_join(th, NULL);
    CHECK_MSG(e.rc == 0, "%s", e.err.msg);
    /* The engine sends `oom` and `die` in either order. */
    CHECK_CONTAINS(e.seen.buf, "create start ");
    CHECK_CONTAINS(e.seen.buf, " oom ");
    CHECK_CONTAINS(e.seen.buf, " die137 ");
    cleanup(d, r.tag);
    docker_cancel_destroy(&e.o.cancel);
    pthread_mutex_destroy(&e.mu);
    strbuf_release(&e.seen);
    imagebuild_result_release(&r);
    free(id);
    free(bin);
    docker_destroy(&d);
}

/* The limits reach the kernel: the container's memory cgroup has them. */
static void
t_limits_in_cgroup(void)
{
    struct docker *d = connect_or_skip();
    struct imagebuild_result r;
    struct docker_state st;
    struct ty__cgmem mem;
    struct err err = {0};
    enum ty__cgver ver;
    char *bin = compile_plan(), *id, *dir;
    int code = -1;

    CHECK_MSG(build_plan(d, bin, &r, &err) == 0, "%s", err.msg);
    id = create(d, r.tag, "sleep", 2, NULL, NULL);
    CHECK(docker_container_start(d, id, &err) == 0);
    CHECK(docker_container_state(d, id, &st, &err) == 0);
    CHECK(st.running && st.pid > 0);
    dir = ty__cgroup_memory_dir(st.pid, &ver);
    CHECK_MSG(dir != NULL, "no memory cgroup for pid %d", st.pid);
    CHECK(dir && ty__cgroup_read_memory(dir, ver, &mem) == 0);
    CHECK_EQ_INT(mem.limit, 64 * MiB);
    if (dir && ver == TY_CG_V1) {
        char *sw = path_join(dir, "memory.memsw.limit_in_bytes");
        char *text = file_read(sw, 64, NULL, &err);

        CHECK_EQ_INT(text ? atoll(text) : -1, 64 * MiB);
        free(text);
        free(sw);
    }
    CHECK(docker_container_kill(d, id, NULL, &err) == 0);
    CHECK(docker_container_wait(d, id, DOCKER_WAIT_NOT_RUNNING, NULL, &code,
                                &err) == 0);
    CHECK_EQ_INT(code, 137);
    CHECK(docker_container_kill(d, id, NULL, &err) < 0);
    CHECK_EQ_INT(err.code, EBUSY);
    cleanup(d, r.tag);
    imagebuild_result_release(&r);
    free(dir);
    free(id);
    free(bin);
    docker_destroy(&d);
}

struct starter {
    struct docker *d;
    const char *image;
    pthread_mutex_t *mu;
    int *next, total, failures;
};

static void *
starter_main(void *arg)
{
    struct starter *s = arg;

    for (;;) {
        struct err err = {0};
        char *id;
        int n;

        pthread_mutex_lock(s->mu);
        n = (*s->next)++;
        pthread_mutex_unlock(s->mu);
        if (n >= s->total)
            return NULL;
        id = create(s->d, s->image, "hello", 100 + n, NULL, NULL);
        if (id == NULL || docker_container_start(s->d, id, &err) < 0)
            s->failures++;
        free(id);
    }
}

/* 24 create+start with 8 callers at once on one shared client. */
static void
t_concurrent_starts(void)
{
    struct docker *d = connect_or_skip();
    char *bin = compile_plan();
    struct imagebuild_result r;
    struct err err = {0};
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    struct starter s[8];
    pthread_t th[8];
    int next = 0, total = 24;
    int64_t t0;
    double secs;

    CHECK_MSG(build_plan(d, bin, &r, &err) == 0, "%s", err.msg);
    t0 = now_mono_ns();
    for (int i = 0; i < 8; i++) {
        s[i] = (struct starter){d, r.tag, &mu, &next, total, 0};
        pthread_create(&th[i], NULL, starter_main, &s[i]);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_INT(s[i].failures, 0);
    }
    secs = secs_since(t0);
    printf("# measure: %d create+start with 8 concurrent callers in %.2f s: "
           "%.1f starts/s\n",
           total, secs, total / secs);
    cleanup(d, r.tag);
    imagebuild_result_release(&r);
    free(bin);
    docker_destroy(&d);
}

/* A per-run bridge network: created with labels, found by them, used by
 * a container, removed. */
static void
t_network_lifecycle(void)
{
    struct docker *d = connect_or_skip();
    cleanup_free char *label = xasprintf("testyard.run=test-%s", token());
    cleanup_free char *name = xasprintf("ty-test-%s", token());
    const char *const labels[] = {"testyard.test=1", label, NULL};
    char *bin = compile_plan(), *nid = NULL, *id;
    struct imagebuild_result r;
    struct err err = {0};
    cJSON *list;
    int code = -1;

    CHECK_MSG(docker_network_create(d, name, labels, &nid, &err) == 0, "%s",
              err.msg);
    CHECK(docker_network_create(d, name, labels, NULL, &err) < 0);
    list = docker_network_list(d, labels, &err);
    CHECK_EQ_INT(cJSON_GetArraySize(list), 1);
    cJSON_Delete(list);
    CHECK_MSG(build_plan(d, bin, &r, &err) == 0, "%s", err.msg);
    id = create(d, r.tag, "hello", 3, NULL, name);
    CHECK(docker_container_start(d, id, &err) == 0);
    CHECK(docker_container_wait(d, id, DOCKER_WAIT_NOT_RUNNING, NULL, &code,
                                &err) == 0);
    CHECK_EQ_INT(code, 0);
    CHECK(docker_container_remove(d, id, true, &err) == 0);
    CHECK_MSG(docker_network_remove(d, nid, &err) == 0, "%s", err.msg);
    list = docker_network_list(d, labels, &err);
    CHECK_EQ_INT(cJSON_GetArraySize(list), 0);
    cJSON_Delete(list);
    cleanup(d, r.tag);
    imagebuild_result_release(&r);
    free(nid);
    free(id);
    free(bin);
    docker_destroy(&d);
}

struct follow {
    struct docker *d;
    const char *id;
    struct docker_logs_opts o;
    struct strbuf out;
    pthread_mutex_t mu;
    int rc;
    struct err err;
};

static int
follow_out(void *arg, int stream, const char *data, size_t len, struct err *err)
{
    struct follow *f = arg;

    (void)stream;
    (void)err;
    pthread_mutex_lock(&f->mu);
    strbuf_add(&f->out, data, len);
    pthread_mutex_unlock(&f->mu);
    return 0;
}

static void *
follow_main(void *arg)
{
    struct follow *f = arg;

    f->rc = docker_container_logs(f->d, f->id, &f->o, follow_out, f, &f->err);
    return NULL;
}

static bool
follow_has(struct follow *f, const char *s)
{
    bool has;

    pthread_mutex_lock(&f->mu);
    has = f->out.buf && strstr(f->out.buf, s);
    pthread_mutex_unlock(&f->mu);
    return has;
}

/* Following a running container's logs, then canceling from this thread,
 * ends the call at once with ECANCELED. */
static void
t_logs_follow_cancel(void)
{
    struct docker *d = connect_or_skip();
    struct follow f = {.d = d, .o = {.follow = true}};
    char *bin = compile_plan();
    struct imagebuild_result r;
    struct err err = {0};
    pthread_t th;
    int64_t t0;

    strbuf_init(&f.out);
    pthread_mutex_init(&f.mu, NULL);
    f.o.cancel = docker_cancel_new();
    CHECK_MSG(build_plan(d, bin, &r, &err) == 0, "%s", err.msg);
    f.id = create(d, r.tag, "sleep", 4, NULL, NULL);
    CHECK(docker_container_start(d, f.id, &err) == 0);
    pthread_create(&th, NULL, follow_main, &f);
    for (int i = 0; i < 500 && !follow_has(&f, "sleeping\n"); i++)
        usleep(10000);
    CHECK(follow_has(&f, "sleeping\n"));
    t0 = now_mono_ns();
    docker_cancel_fire(f.o.cancel);
    pthread_join(th, NULL);
    CHECK_MSG(secs_since(t0) < 1.0, "cancel took %.2f s", secs_since(t0));
    CHECK_EQ_INT(f.rc, -1);
    CHECK_EQ_INT(f.err.code, ECANCELED);
    cleanup(d, r.tag);
    docker_cancel_destroy(&f.o.cancel);
    pthread_mutex_destroy(&f.mu);
    strbuf_release(&f.out);
    imagebuild_result_release(&r);
    free((char *)f.id);
    free(bin);
    docker_destroy(&d);
}

static void
t_clean_command(void)
{
    struct docker *d = connect_or_skip();
    cleanup_free char *run = xasprintf("test-%s", token());
    cleanup_free char *label = xasprintf("testyard.run=%s", run);
    cleanup_free char *name = xasprintf("ty-test-%s", token());
    const char *const *dead = dead_coordinator();
    const char *const labels[] = {"testyard.test=1", label, NULL};
    const char *const net_labels[] = {
        "testyard.test=1", label, dead[0], dead[1], dead[2], dead[3], NULL};
    char *bin = compile_plan(), *a, *b, *out;
    struct imagebuild_result r;
    struct err err = {0};
    cJSON *list;

    CHECK_MSG(build_plan(d, bin, &r, &err) == 0, "%s", err.msg);
    a = create(d, r.tag, "sleep", 5, NULL, NULL);
    b = create(d, r.tag, "hello", 6, NULL, NULL);
    CHECK(docker_container_start(d, a, &err) == 0);
    CHECK(docker_network_create(d, name, net_labels, NULL, &err) == 0);
    CHECK_EQ_INT(
        th_captured(cmd_clean, 4,
                    (char *[]){"clean", "--run", run, "--dry-run", NULL}, &out),
        0);
    CHECK_CONTAINS(out, "would remove container ty-test-");
    CHECK_CONTAINS(out, ", running\n");
    CHECK_CONTAINS(out, "would remove 2 containers and 1 network\n");
    free(out);
    list = docker_container_list(d, labels, true, &err);
    CHECK_EQ_INT(cJSON_GetArraySize(list), 2);
    cJSON_Delete(list);
    CHECK_EQ_INT(th_captured(cmd_clean, 3,
                             (char *[]){"clean", "--run", run, NULL}, &out),
                 0);
    CHECK_CONTAINS(out, ", killed first\n");
    CHECK_CONTAINS(out, "removed 2 containers and 1 network\n");
    free(out);
    list = docker_container_list(d, labels, true, &err);
    CHECK_EQ_INT(cJSON_GetArraySize(list), 0);
    cJSON_Delete(list);
    list = docker_network_list(d, labels, &err);
    CHECK_EQ_INT(cJSON_GetArraySize(list), 0);
    cJSON_Delete(list);
    CHECK_EQ_INT(th_captured(cmd_clean, 3,
                             (char *[]){"clean", "--run", run, NULL}, &out),
                 0);
    CHECK_EQ_STR(out, "nothing to clean\n");
    free(out);
    cleanup(d, r.tag);
    imagebuild_result_release(&r);
    free(a);
    free(b);
    free(bin);
    docker_destroy(&d);
}

static void
t_doctor_command(void)
{
    struct docker *d = connect_or_skip();
    const char *host = getenv("DOCKER_HOST");
    char *saved = host ? xstrdup(host) : NULL;
    char *out;

    docker_destroy(&d);
    CHECK_EQ_INT(th_captured(cmd_doctor, 1, (char *[]){"doctor", NULL}, &out),
                 0);
    CHECK_CONTAINS(out, "ok    engine: Docker ");
    CHECK_CONTAINS(out, "ok    scratch build: FROM scratch image built");
    CHECK(strstr(out, "FAIL") == NULL);
    free(out);
    setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock", 1);
    CHECK_EQ_INT(th_captured(cmd_doctor, 1, (char *[]){"doctor", NULL}, &out),
                 EXIT_UNAVAILABLE);
    CHECK_CONTAINS(out, "FAIL  engine: cannot reach the Docker engine");
    CHECK_CONTAINS(out, "-- fix: start the engine");
    CHECK_CONTAINS(out, "skip  scratch build: no engine\n");
    free(out);
    CHECK_EQ_INT(th_captured(cmd_clean, 1, (char *[]){"clean", NULL}, &out),
                 EXIT_UNAVAILABLE);
    free(out);
    if (saved)
        setenv("DOCKER_HOST", saved, 1);
    else
        unsetenv("DOCKER_HOST");
    free(saved);
}

static const struct th_case cases[] = {
    {"engine_basics", t_engine_basics},
    {"image_run_limits", t_image_run_limits},
    {"oom_and_events", t_oom_and_events},
    {"limits_in_cgroup", t_limits_in_cgroup},
    {"concurrent_starts", t_concurrent_starts},
    {"network_lifecycle", t_network_lifecycle},
    {"logs_follow_cancel", t_logs_follow_cancel},
    {"clean_command", t_clean_command},
    {"doctor_command", t_doctor_command},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    char tok[64];

    snprintf(tok, sizeof(tok), "%d-%lld", (int)getpid(),
             (long long)(now_wall_ns() / 1000000));
    setenv("TY_TEST_TOKEN", tok, 0);
    return th_main(argc, argv, cases);
}
