/*
 * cmd_doctor.c — `testyard doctor`: is this machine ready for local:docker
 * runs? One line per check, "ok", "FAIL" (with how to fix it) or "skip"
 * (a check that needs the engine when none answers). The checks are a
 * table; each fills a detail and, when it fails, a fix.
 *
 * Exit status: 0 when every check passes, 69 when no engine answers, 1
 * when another check fails.
 */
#include "base/strbuf.h"
#include "cmd.h"
#include "docker/docker.h"
#include "base/proc.h"
#include "base/tar.h"
#include "ty_cgroup.h"
#include "ty_units.h"
#include "base/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Oldest engine API our requests work with (wait?condition= is 1.30). */
#define API_OLDEST 1030

struct doctor {
    struct docker *d;
    cJSON *info;
    struct err engine_err;
    struct strbuf detail, fix;
};

enum verdict { OK, FAIL, SKIP };

static int
api_num(const char *v)
{
    int a = 0, b = 0;

    return sscanf(v ? v : "", "%d.%d", &a, &b) == 2 ? a * 1000 + b : -1;
}

static const char *
info_str(const struct doctor *dr, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(dr->info, key);

    return cJSON_IsString(v) ? v->valuestring : "";
}

static bool
info_true(const struct doctor *dr, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dr->info, key));
}

static const char *
engine_fix(int code)
{
    static const struct {
        int code;
        const char *fix;
    } fixes[] = {
        {ENOENT, "start the engine (sudo dockerd &, or scripts/docker-up), "
                 "or set DOCKER_HOST=unix:///path/to/docker.sock"},
        {ECONNREFUSED, "start dockerd (sudo dockerd &, or scripts/"
                       "docker-up), or point DOCKER_HOST at a running one"},
        {EACCES, "sudo usermod -aG docker $USER and log in again, or run "
                 "as root"},
        {EINVAL, "set DOCKER_HOST to unix:///path/to/docker.sock or "
                 "tcp://host:port"},
    };

    for (size_t i = 0; i < ARRAY_LEN(fixes); i++)
        if (fixes[i].code == code)
            return fixes[i].fix;
    return "check DOCKER_HOST and that dockerd runs (its log says why)";
}

static enum verdict
check_engine(struct doctor *dr)
{
    if (dr->d == NULL) {
        const char *msg = dr->engine_err.msg;
        const char *hint = strstr(msg, " (");

        /* the client's own hint in parentheses gives way to the fix */
        strbuf_add(&dr->detail, msg, hint ? (size_t)(hint - msg) : strlen(msg));
        strbuf_adds(&dr->fix, engine_fix(dr->engine_err.code));
        return FAIL;
    }
    strbuf_addf(&dr->detail, "Docker %s answers at %s",
                docker_engine_version(dr->d), docker_host(dr->d));
    return OK;
}

static enum verdict
check_api(struct doctor *dr)
{
    strbuf_addf(&dr->detail,
                "speaking %s (engine %s, oldest %s; testyard "
                "knows up to %s)",
                docker_api_version(dr->d), docker_engine_api(dr->d),
                docker_engine_min_api(dr->d), DOCKER_API_NEWEST);
    if (api_num(docker_engine_api(dr->d)) >= API_OLDEST)
        return OK;
    strbuf_adds(&dr->fix, "upgrade Docker (apt-get install docker.io): "
                          "testyard needs API 1.30 or newer");
    return FAIL;
}

static enum verdict
check_cgroup(struct doctor *dr)
{
    enum ty__cgver ver = TY_CG_NONE;
    const char *mount = ty__cgroup_memory_mount(&ver);

    strbuf_addf(&dr->detail,
                "engine: cgroup v%s (%s driver); host memory "
                "controller: %s",
                info_str(dr, "CgroupVersion")[0] ? info_str(dr, "CgroupVersion")
                                                 : "?",
                info_str(dr, "CgroupDriver"), mount ? mount : "none");
    if (mount == NULL || !info_true(dr, "MemoryLimit")) {
        strbuf_adds(&dr->fix, "enable the memory controller: boot with "
                              "cgroup_enable=memory");
        return FAIL;
    }
    if (!info_true(dr, "SwapLimit")) {
        strbuf_adds(&dr->fix, "memory limits would allow swap: boot with "
                              "swapaccount=1 (cgroup v1) or use cgroup v2");
        return FAIL;
    }
    return OK;
}

static enum verdict
check_storage(struct doctor *dr)
{
    const char *driver = info_str(dr, "Driver");

    if (driver[0] == '\0') {
        strbuf_adds(&dr->detail, "the engine reports no storage driver");
        strbuf_adds(&dr->fix, "check the engine's configuration "
                              "(/etc/docker/daemon.json)");
        return FAIL;
    }
    strbuf_addf(&dr->detail, "%s%s", driver,
                strcmp(driver, "vfs") == 0
                    ? " (works, but copies each image per container; "
                      "overlay2 is faster)"
                    : "");
    return OK;
}

/* A two-file context: FROM scratch, COPY one file. */
static int
probe_context(int fd, struct err *err)
{
    static const char df[] = "FROM scratch\nCOPY probe /probe\n";
    struct tar_meta m = {0644, 0, 0, 0};
    struct tar *t = tar_new_fd(fd, false);
    int rc = 0;

    if (tar_add_data(t, "Dockerfile", &m, df, strlen(df), err) < 0 ||
        tar_add_data(t, "probe", &m, "testyard\n", 9, err) < 0 ||
        tar_finish(t, err) < 0)
        rc = -1;
    tar_destroy(&t);
    return rc < 0 || lseek(fd, 0, SEEK_SET) < 0 ? -1 : 0;
}

static enum verdict
check_build(struct doctor *dr)
{
    const char *tmp = getenv("TMPDIR");
    cleanup_close int fd = open(tmp && tmp[0] ? tmp : "/tmp",
                                O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    cleanup_free char *tag =
        xasprintf("testyard/doctor-probe:%d", (int)getpid());
    struct docker_build_opts o = {
        .tag = tag, .labels = (const char *const[]){"testyard.doctor=1", NULL}};
    int64_t t0 = now_mono_ns();
    struct err err = {0};
    char *id = NULL, took[32];

    if (fd < 0 || probe_context(fd, &err) < 0 ||
        docker_build(dr->d, fd, &o, &id, &err) < 0) {
        strbuf_addf(&dr->detail, "%s", fd < 0 ? strerror(errno) : err.msg);
        strbuf_adds(&dr->fix, "see the engine's log (journalctl -u docker, "
                              "or /var/log/testyard-dockerd.log)");
        return FAIL;
    }
    ty__format_duration(now_mono_ns() - t0, took, sizeof(took));
    strbuf_addf(&dr->detail, "FROM scratch image built in %s", took);
    docker_image_remove(dr->d, id, true, NULL);
    free(id);
    return OK;
}

/* A tool's --version or pkg-config answers at once; one that hangs fails
 * its check rather than the doctor. */
#define DOCTOR_TOOL_TIMEOUT_MS 10000

/* argv[0] found in PATH and runs. */
static bool
runs(char *const argv[])
{
    struct proc_opts o = {.timeout_ms = DOCTOR_TOOL_TIMEOUT_MS};
    struct err err = {0};

    return proc_run_opts(argv, &o, NULL, &err) == 0;
}

/* Something plans need and the Debian package that provides it. */
struct need {
    const char *name, *package;
};

/* Each need is there when `name --version` runs or, for pkg_config,
 * `pkg-config --exists name` succeeds; the missing ones make the fix. */
static enum verdict
check_needs(struct doctor *dr, const struct need *needs, size_t n,
            bool pkg_config, const char *found)
{
    struct strbuf missing;

    strbuf_init(&missing);
    for (size_t i = 0; i < n; i++) {
        char *name = (char *)needs[i].name;
        char *module[] = {"pkg-config", "--exists", name, NULL};
        char *tool[] = {name, "--version", NULL};

        if (!runs(pkg_config ? module : tool))
            strbuf_addf(&missing, " %s", needs[i].package);
    }
    if (missing.len == 0) {
        strbuf_adds(&dr->detail, found);
        return OK;
    }
    strbuf_addf(&dr->detail, "missing:%s", missing.buf);
    strbuf_addf(&dr->fix, "apt-get install%s", missing.buf);
    strbuf_release(&missing);
    return FAIL;
}

static enum verdict
check_tools(struct doctor *dr)
{
    static const struct need tools[] = {
        {"cc", "gcc"}, {"pkg-config", "pkg-config"}, {"make", "make"}};

    return check_needs(dr, tools, ARRAY_LEN(tools), false,
                       "cc, pkg-config and make run");
}

static enum verdict
check_libraries(struct doctor *dr)
{
    static const struct need libs[] = {{"libzmq", "libzmq3-dev"},
                                       {"libcjson", "libcjson-dev"},
                                       {"yaml-0.1", "libyaml-dev"},
                                       {"zlib", "zlib1g-dev"},
                                       {"libcurl", "libcurl4-openssl-dev"}};

    return check_needs(dr, libs, ARRAY_LEN(libs), true,
                       "libzmq, libcjson, yaml-0.1, zlib and libcurl found "
                       "by pkg-config");
}

static enum verdict
check_ports(struct doctor *dr)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t alen = sizeof(a);
    cleanup_close int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(fd, 16) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) < 0) {
        strbuf_addf(&dr->detail, "cannot listen on 127.0.0.1: %s",
                    strerror(errno));
        strbuf_adds(&dr->fix, "bring the loopback interface up (ip link "
                              "set lo up) and check firewall rules");
        return FAIL;
    }
    strbuf_addf(&dr->detail, "127.0.0.1 accepts listeners (tried port %d)",
                ntohs(a.sin_port));
    return OK;
}

static const struct {
    const char *name;
    enum verdict (*fn)(struct doctor *dr);
    bool needs_engine;
} checks[] = {
    {"engine", check_engine, false},
    {"api version", check_api, true},
    {"cgroups", check_cgroup, true},
    {"storage driver", check_storage, true},
    {"scratch build", check_build, true},
    {"tools", check_tools, false},
    {"libraries", check_libraries, false},
    {"loopback", check_ports, false},
};

static int
run_checks(struct doctor *dr)
{
    static const char *const words[] = {"ok", "FAIL", "skip"};
    int failed = 0;

    for (size_t i = 0; i < ARRAY_LEN(checks); i++) {
        enum verdict v = SKIP;

        strbuf_init(&dr->detail);
        strbuf_init(&dr->fix);
        if (checks[i].needs_engine && dr->d == NULL)
            strbuf_adds(&dr->detail, "no engine");
        else
            v = checks[i].fn(dr);
        printf("%-4s  %s: %s%s%s\n", words[v], checks[i].name,
               dr->detail.buf ? dr->detail.buf : "",
               dr->fix.len ? " -- fix: " : "", dr->fix.len ? dr->fix.buf : "");
        fflush(stdout);
        failed += v == FAIL;
        strbuf_release(&dr->detail);
        strbuf_release(&dr->fix);
    }
    return failed;
}

static void
usage(FILE *out)
{
    fprintf(out, "usage: testyard doctor\n\nCheck that local:docker runs "
                 "can work here: the engine, its API\nversion, cgroups and "
                 "storage driver, a FROM scratch build, the\ncompiler and "
                 "libraries plans need, and loopback ports. Each check\n"
                 "prints ok, FAIL with a fix, or skip.\n\nExit status: 0 all "
                 "passed, 1 a check failed, 69 no engine answers.\n");
}

static const struct cmd_usage doctor_usage = {"doctor", NULL, usage};

/* 0 to go on, 1 after --help, -1 on a usage error (cmd.h). */
static int
parse_args(int argc, char **argv, struct err *err)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const struct cmd_spec spec = {&doctor_usage, ":h", longopts, NULL,
                                         0};

    return cmd_parse(&spec, argc, argv, NULL, err);
}

int
cmd_doctor(int argc, char **argv)
{
    struct doctor dr = {0};
    struct err err = {0};
    int failed;
    int rc = parse_args(argc, argv, &err);

    if (rc != 0)
        return cmd_args_end(&doctor_usage, rc, &err);
    dr.d = docker_new(NULL, &dr.engine_err);
    if (dr.d != NULL)
        dr.info = docker_info(dr.d, NULL);
    failed = run_checks(&dr);
    cJSON_Delete(dr.info);
    docker_destroy(&dr.d);
    if (dr.engine_err.msg[0] != '\0')
        return EXIT_UNAVAILABLE;
    return failed ? 1 : 0;
}
