/*
 * test_docker_spec.c — what local:docker asks the engine for a black-box
 * group, without an engine: the environment (a plan's and a packed
 * program's PATH, an image's own ENV left standing, run.env winning, the
 * heap profiler first in LD_PRELOAD), Entrypoint, Cmd and WorkingDir for
 * each way of naming the program, the profiler's read-only mounts; and,
 * against the fake engine, a run.image that is missing: one pull, and
 * when it fails one line that starts where the composition named the
 * image, exit status 69, nothing else asked of the engine.
 */
#include "backend/backend_docker_int.h"
#include "base/strvec.h"
#include "builder/builder.h"
#include "config/config.h"
#include "fakedocker.h"
#include "fakedocker_client.h"
#include "th.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *no_args[] = {NULL};
static char *no_env[] = {NULL};
static char *hog_cmd[] = {"/usr/bin/hog", "--step", "1M", NULL};
static char *hog_args[] = {"--tag", "x", NULL};
static char *img_cmd[] = {"/app/run.sh", NULL};
static char *user_path[] = {"PATH=/opt/bin", "HOGTAG=a", NULL};
static char *inst_env[] = {"TEST_RUN=r1",
                           "TEST_OUTPUTS_PATH=/host/out",
                           "TEST_TEMP_PATH=/host/tmp",
                           "HOME=/host/tmp",
                           "PATH=/usr/bin:/bin",
                           "LD_PRELOAD=/usr/lib/libmine.so",
                           NULL};
static char *heap_files[] = {"/build/libtestyard-heap.so",
                             "/lib/x86_64-linux-gnu/libcjson.so.1", NULL};

/* Groups: the plan's, a packed program, an image with a command, an
 * image alone with args, an image alone. */
static struct composition_group groups[] = {
    {.id = "plan", .args = no_args, .env = no_env},
    {.id = "packed",
     .command = hog_cmd,
     .args = hog_args,
     .env = user_path,
     .heap_preload = true},
    {.id = "img",
     .image = "hog:1",
     .command = img_cmd,
     .args = hog_args,
     .env = no_env,
     .workdir = "/data"},
    {.id = "imgargs", .image = "hog:1", .args = hog_args, .env = no_env},
    {.id = "imgonly", .image = "hog:1", .args = no_args, .env = no_env},
};

static struct composition comp = {.groups = groups, .ngroups = 5};

static struct dk_group dgroups[] = {
    {0},
    {.image = "testyard/cmd-hog:0123", .packed = true},
    {.image = "hog:1", .preload = "/img/libimg.so"},
    {.image = "hog:1"},
    {.image = "hog:1"},
};

static void
setup(struct dk_backend *k, struct backend_instance *in, const char *group)
{
    memset(k, 0, sizeof(*k));
    k->cfg.comp = &comp;
    k->cfg.run_id = "r1";
    k->cfg.plan_name = "hogs";
    k->image = "testyard/hogs:1";
    k->groups = dgroups;
    k->heap_files = heap_files;
    k->base.instance_uid = -1;
    memset(in, 0, sizeof(*in));
    in->group = group;
    in->env = inst_env;
    in->outdir = "/host/out";
    in->tempdir = "/host/tmp";
}

static bool
has(char **v, const char *s)
{
    for (size_t i = 0; v && v[i]; i++)
        if (strcmp(v[i], s) == 0)
            return true;
    return false;
}

static const char *
value(char **v, const char *key)
{
    for (size_t i = 0; v && v[i]; i++)
        if (strncmp(v[i], key, strlen(key)) == 0)
            return v[i] + strlen(key);
    return NULL;
}

static void
t_env(void)
{
    struct dk_backend k;
    struct backend_instance in;
    char **env;

    setup(&k, &in, "plan");
    env = dk__container_env(&k, &in);
    CHECK(has(env, "PATH=/plan:/usr/bin:/bin"));
    CHECK(has(env, "HOME=/temp") && has(env, "TEST_OUTPUTS_PATH=/outputs"));
    CHECK(has(env, "TEST_TEMP_PATH=/temp") && has(env, "TEST_RUN=r1"));
    CHECK_EQ_STR(value(env, "LD_PRELOAD="), "/usr/lib/libmine.so");
    strv_free(env);

    /* an image testyard did not make keeps its own PATH */
    setup(&k, &in, "imgonly");
    env = dk__container_env(&k, &in);
    CHECK(value(env, "PATH=") == NULL);
    CHECK(has(env, "HOME=/temp"));
    strv_free(env);

    /* run.env's PATH wins; the profiler goes first in LD_PRELOAD */
    setup(&k, &in, "packed");
    in.heap_preload = true;
    in.env = (char *[]){"TEST_RUN=r1", "PATH=/opt/bin", "HOGTAG=a",
                        "LD_PRELOAD=/usr/lib/libmine.so", NULL};
    env = dk__container_env(&k, &in);
    CHECK(has(env, "PATH=/opt/bin") && !has(env, "PATH=/plan:/usr/bin:/bin"));
    CHECK(has(env, "HOGTAG=a"));
    CHECK_EQ_STR(value(env, "LD_PRELOAD="),
                 HEAPLIB_MOUNT_DIR "/" HEAPLIB_NAME ":/usr/lib/libmine.so");
    strv_free(env);

    /* without one in the environment, the image's own comes after it */
    setup(&k, &in, "img");
    in.heap_preload = true;
    in.env = (char *[]){"TEST_RUN=r1", NULL};
    env = dk__container_env(&k, &in);
    CHECK_EQ_STR(value(env, "LD_PRELOAD="),
                 HEAPLIB_MOUNT_DIR "/" HEAPLIB_NAME ":/img/libimg.so");
    strv_free(env);
}

/* The create body's member as compact JSON ("null" when absent). */
static char *
member(const cJSON *cfg, const char *name)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(cfg, name);
    char *s = m ? cJSON_PrintUnformatted(m) : NULL;
    char *out = xstrdup(s ? s : "null");

    cJSON_free(s);
    return out;
}

static void
check_spec(const char *group, const char *image, const char *entry,
           const char *cmd, const char *workdir)
{
    struct dk_backend k;
    struct backend_instance in;
    char *env[] = {NULL}, *labels[] = {NULL}, *binds[] = {NULL};
    cJSON *cfg;
    char *got;

    setup(&k, &in, group);
    cfg = dk__container_config(&k, &in, env, labels, binds);
    got = member(cfg, "Image");
    CHECK_MSG(strcmp(got, image) == 0, "%s: Image %s", group, got);
    free(got);
    got = member(cfg, "Entrypoint");
    CHECK_MSG(strcmp(got, entry) == 0, "%s: Entrypoint %s", group, got);
    free(got);
    got = member(cfg, "Cmd");
    CHECK_MSG(strcmp(got, cmd) == 0, "%s: Cmd %s", group, got);
    free(got);
    got = member(cfg, "WorkingDir");
    CHECK_MSG(strcmp(got, workdir) == 0, "%s: WorkingDir %s", group, got);
    free(got);
    got = member(cJSON_GetObjectItem(cfg, "HostConfig"), "ReadonlyRootfs");
    CHECK_MSG(strcmp(got, "true") == 0, "%s: ReadonlyRootfs %s", group, got);
    free(got);
    cJSON_Delete(cfg);
}

static void
t_config(void)
{
    check_spec("plan", "\"testyard/hogs:1\"", "null", "null", "null");
    check_spec("packed", "\"testyard/cmd-hog:0123\"", "null",
               "[\"--step\",\"1M\",\"--tag\",\"x\"]", "\"/temp\"");
    check_spec("img", "\"hog:1\"", "[\"/app/run.sh\"]", "[\"--tag\",\"x\"]",
               "\"/data\"");
    check_spec("imgargs", "\"hog:1\"", "null", "[\"--tag\",\"x\"]", "null");
    check_spec("imgonly", "\"hog:1\"", "null", "null", "null");
}

static void
t_binds(void)
{
    struct dk_backend k;
    struct backend_instance in;
    char **b;

    setup(&k, &in, "packed");
    in.heap_preload = true;
    b = dk__make_binds(&k, &in);
    CHECK_EQ_INT((int)strv_len(b), 4);
    CHECK(has(b, "/host/out:/outputs") && has(b, "/host/tmp:/temp"));
    CHECK(has(b, "/build/libtestyard-heap.so:" HEAPLIB_MOUNT_DIR
                 "/libtestyard-heap.so:ro"));
    CHECK(has(b, "/lib/x86_64-linux-gnu/libcjson.so.1:" HEAPLIB_MOUNT_DIR
                 "/libcjson.so.1:ro"));
    strv_free(b);
    in.heap_preload = false;
    b = dk__make_binds(&k, &in);
    CHECK_EQ_INT((int)strv_len(b), 2);
    strv_free(b);
}

/* The profiler's files: itself first, none of glibc's. */
static void
t_heap_files(void)
{
    struct err err = {0};
    cleanup_free char *dir = exe_dir();
    char *lib = xasprintf("%s/../" HEAPLIB_NAME, dir);
    char **files;

    if (!path_exists(lib)) {
        free(lib);
        th_skip("libtestyard-heap.so is not built next to the tests");
    }
    files = heaplib_files(lib, &err);
    CHECK_MSG(files != NULL, "%s", err.msg);
    CHECK(files && strcmp(files[0], lib) == 0);
    for (size_t i = 0; files && files[i]; i++) {
        CHECK_MSG(strstr(files[i], "/libc.so") == NULL &&
                      strstr(files[i], "/ld-linux") == NULL &&
                      strstr(files[i], "/libm.so") == NULL,
                  "glibc's own: %s", files[i]);
        CHECK_MSG(files[i][0] == '/', "not absolute: %s", files[i]);
    }
    CHECK(files && has(files, "/lib/x86_64-linux-gnu/libcjson.so.1"));
    strv_free(files);
    free(lib);
}

/* A backend on the fake engine with one run.image group. */
static struct dk_backend *
fake_backend(struct fakedocker *f, const struct composition *c)
{
    struct backend_config cfg = {.comp = c, .run_id = "r1", .run_fd = -1};
    struct err err = {0};
    struct backend *b = backend_docker_new(&cfg, &err);
    struct dk_backend *k = (struct dk_backend *)b;

    k->d = fakedocker_client(f);
    return k;
}

static void
t_missing_image(void)
{
    struct composition_group g = {
        .id = "g",
        .image = "ghost:1",
        .args = no_args,
        .env = no_env,
        .program_at = "c.yaml:7:12: groups[0].run.image",
    };
    struct composition c = {.groups = &g, .ngroups = 1};
    struct fakedocker *f = fakedocker_new(false);
    struct dk_backend *k = fake_backend(f, &c);
    struct backend *b = &k->base;
    struct err err = {0};
    char *log;

    fakedocker_answer(f, "GET", "/v1.41/images/ghost:1/json", 404,
                      "{\"message\":\"No such image: ghost:1\"}");
    fakedocker_answer(f, "POST", "/v1.41/images/create", 404,
                      "{\"message\":\"pull access denied for ghost\"}");
    CHECK(dk__images_prepare(k, &err) < 0);
    CHECK_EQ_STR(err.msg, "c.yaml:7:12: groups[0].run.image: image "
                          "\"ghost:1\" is not in the engine and could not be "
                          "pulled (pull access denied for ghost); build or "
                          "load it first");
    CHECK_EQ_INT(err.status, EXIT_UNAVAILABLE);
    log = fakedocker_log(f, true);
    CHECK_EQ_STR(log, "GET /v1.41/images/ghost:1/json\n"
                      "POST /v1.41/images/create?fromImage=ghost&tag=1\n");
    free(log);
    backend_destroy(&b);
    fakedocker_destroy(&f);
}

/* A pull that is refused midway (200, then an error line); a pull that
 * works, and the image's own LD_PRELOAD read from it. */
static void
t_pull(void)
{
    struct composition_group g = {
        .id = "g", .image = "reg:5000/a/b", .args = no_args, .env = no_env};
    struct composition c = {.groups = &g, .ngroups = 1};
    struct fakedocker *f = fakedocker_new(false);
    struct dk_backend *k = fake_backend(f, &c);
    struct backend *b = &k->base;
    struct err err = {0};
    char *log;

    fakedocker_answer(f, "POST", "/v1.41/images/create", 200,
                      "{\"status\":\"Pulling\"}\n"
                      "{\"errorDetail\":{\"message\":\"unauthorized\"},"
                      "\"error\":\"unauthorized\"}\n");
    CHECK(docker_image_pull(k->d, "reg:5000/a/b", 1000, NULL, &err) < 0);
    CHECK_EQ_STR(err.msg, "unauthorized");
    CHECK(docker_image_pull(k->d, "a@sha256:00", 1000, NULL, &err) < 0);
    /* a registry that never answers: bounded */
    fakedocker_route(f, &(struct fakedocker_route){.method = "POST",
                                                   .path = "/v1.41/images/"
                                                           "create",
                                                   .nth = 1,
                                                   .status = 200,
                                                   .body = "{}",
                                                   .delay_ms = 3000});
    {
        int64_t t0 = now_mono_ns();

        CHECK(docker_image_pull(k->d, "slow:1", 200, NULL, &err) < 0);
        CHECK_MSG(err.code == ETIMEDOUT, "%d %s", err.code, err.msg);
        CHECK(now_mono_ns() - t0 < 2000000000LL);
    }
    fakedocker_answer(f, "POST", "/v1.41/images/create", 200,
                      "{\"status\":\"Downloaded\"}\n");
    fakedocker_answer(f, "GET", "/v1.41/images/reg:5000/a/b/json", 200,
                      "{\"Id\":\"sha256:1\",\"Config\":{\"Env\":["
                      "\"PATH=/bin\",\"LD_PRELOAD=/x.so\"]}}");
    fakedocker_fail_nth(f, "GET", "/v1.41/images/reg:5000/a/b/json", 1, 404,
                        "{\"message\":\"No such image\"}");
    CHECK_MSG(dk__images_prepare(k, &err) == 0, "%s", err.msg);
    CHECK_EQ_STR(k->groups[0].image, "reg:5000/a/b");
    CHECK_EQ_STR(k->groups[0].preload, "/x.so");
    CHECK(!k->groups[0].packed && k->image == NULL);
    log = fakedocker_log(f, true);
    CHECK_EQ_STR(log, "POST /v1.41/images/create?fromImage=reg%3A5000%2Fa%2Fb"
                      "&tag=latest\n"
                      "POST /v1.41/images/create?fromImage=a%40sha256%3A00\n"
                      "POST /v1.41/images/create?fromImage=slow&tag=1\n"
                      "GET /v1.41/images/reg:5000/a/b/json\n"
                      "POST /v1.41/images/create?fromImage=reg%3A5000%2Fa%2Fb"
                      "&tag=latest\n"
                      "GET /v1.41/images/reg:5000/a/b/json\n");
    free(log);
    backend_destroy(&b);
    fakedocker_destroy(&f);
}

/* A container's memory cgroup names the container; the root cgroup, where
 * cgroup v1 moves a task that is exiting, or another container's, is not
 * taken for it. */
static void
t_cgroup_of_container(void)
{
    const char *id =
        "4f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0";

    CHECK(dk__cgroup_is_container(
        "/sys/fs/cgroup/memory/docker/"
        "4f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0",
        id));
    CHECK(dk__cgroup_is_container(
        "/sys/fs/cgroup/system.slice/"
        "docker-4f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccd"
        "deeff0.scope",
        id));
    CHECK(!dk__cgroup_is_container("/sys/fs/cgroup/memory", id));
    CHECK(!dk__cgroup_is_container("/sys/fs/cgroup/memory/", id));
    CHECK(!dk__cgroup_is_container("/sys/fs/cgroup/memory/docker", id));
    CHECK(!dk__cgroup_is_container(
        "/sys/fs/cgroup/memory/docker/"
        "aaaa2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0",
        id));
    /* the id in a parent's name, not the container's own */
    CHECK(!dk__cgroup_is_container(
        "/sys/fs/cgroup/memory/"
        "4f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0/x",
        id));
    CHECK(!dk__cgroup_is_container("/sys/fs/cgroup/memory/docker/x", NULL));
    CHECK(!dk__cgroup_is_container("/sys/fs/cgroup/memory/docker/ab", "ab"));
}

static const struct th_case cases[] = {
    {"env", t_env},
    {"config", t_config},
    {"binds", t_binds},
    {"heap_files", t_heap_files},
    {"missing_image", t_missing_image},
    {"pull", t_pull},
    {"cgroup_of_container", t_cgroup_of_container},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
