/*
 * test_imagebuild.c — the image builder without an engine: libraries
 * resolved by the loader (dynamic, static, missing, from
 * LD_LIBRARY_PATH), repository names, the build context as GNU tar lists
 * it (with libgcc_s.so.1, which backtrace() loads, from next to libc or
 * from ld.so.cache), the Dockerfile made from the template, and a tag that
 * follows the content and nothing else.
 */
#include "base/strvec.h"
#include "builder/builder.h"
#include "th.h"
#include "th_proc.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *
write_src(const char *name, const char *text)
{
    char *path = path_join(th_tmpdir(), name);
    struct err err = {0};

    CHECK(file_write_atomic(path, text, strlen(text), &err) == 0);
    return path;
}

/* Compile src into out with extra flags; skip the case without cc. */
static void
compile(const char *src, const char *out, const char *flag1, const char *flag2)
{
    char *argv[] = {"cc",        "-O1",         "-o",          (char *)out,
                    (char *)src, (char *)flag1, (char *)flag2, NULL};

    if (th_run((char *[]){"cc", "--version", NULL}) != 0)
        th_skip("no C compiler (apt-get install gcc)");
    CHECK_EQ_INT(th_run(argv), 0);
}

static bool
has(char **v, const char *s)
{
    for (size_t i = 0; v && v[i]; i++)
        if (strcmp(v[i], s) == 0)
            return true;
    return false;
}

static void
t_resolve_dynamic(void)
{
    char *src = write_src("m.c", "#include <math.h>\n#include <stdio.h>\n"
                                 "int main(int c, char **v) {\n"
                                 "  printf(\"%f\\n\", cos(c)); (void)v;\n"
                                 "  return 0; }\n");
    char *bin = path_join(th_tmpdir(), "m");
    struct err err = {0};
    char **libs;

    compile(src, bin, "-lm", NULL);
    libs = imagebuild_resolve(bin, &err);
    CHECK_MSG(libs != NULL, "%s", err.msg);
    CHECK(has(libs, "/lib64/ld-linux-x86-64.so.2"));
    CHECK(has(libs, "/lib/x86_64-linux-gnu/libc.so.6"));
    CHECK(has(libs, "/lib/x86_64-linux-gnu/libm.so.6"));
    for (size_t i = 0; libs && libs[i]; i++) {
        CHECK_MSG(libs[i][0] == '/', "not absolute: %s", libs[i]);
        CHECK_MSG(strstr(libs[i], "vdso") == NULL, "vdso listed");
        if (libs[i + 1])
            CHECK(strcmp(libs[i], libs[i + 1]) < 0);
    }
    strv_free(libs);
    free(src);
    free(bin);
}

static void
t_resolve_static_and_errors(void)
{
    char *src = write_src("s.c", "int main(void) { return 0; }\n");
    char *bin = path_join(th_tmpdir(), "s");
    struct err err = {0};
    char **libs;

    compile(src, bin, "-static", NULL);
    libs = imagebuild_resolve(bin, &err);
    CHECK_MSG(libs != NULL && libs[0] == NULL, "static: %s", err.msg);
    strv_free(libs);
    CHECK(imagebuild_resolve(src, &err) == NULL);
    CHECK_CONTAINS(err.msg, "not an ELF file");
    CHECK(imagebuild_resolve("/nonexistent/plan", &err) == NULL);
    CHECK_EQ_INT(err.code, ENOENT);
    free(src);
    free(bin);
}

/* A program linked against a library in the temporary folder: the loader
 * cannot find it until LD_LIBRARY_PATH names the folder. */
static void
t_resolve_missing_and_library_path(void)
{
    const char *tmp = th_tmpdir();
    char *lsrc = write_src("t.c", "int ty_answer(void) { return 42; }\n");
    char *psrc = write_src("p.c", "int ty_answer(void);\n"
                                  "int main(void) { return ty_answer(); }\n");
    char *lib = path_join(tmp, "libtyanswer.so");
    char *bin = path_join(tmp, "p");
    char *ldir = xasprintf("-L%s", tmp);
    struct err err = {0};
    char **libs;

    compile(lsrc, lib, "-shared", "-fPIC");
    {
        char *argv[] = {"cc", "-o", bin, psrc, ldir, "-ltyanswer", NULL};

        CHECK_EQ_INT(th_run(argv), 0);
    }
    unsetenv("LD_LIBRARY_PATH");
    CHECK(imagebuild_resolve(bin, &err) == NULL);
    CHECK_CONTAINS(err.msg, "needs libtyanswer.so, which the dynamic "
                            "loader cannot find");
    setenv("LD_LIBRARY_PATH", tmp, 1);
    libs = imagebuild_resolve(bin, &err);
    CHECK_MSG(libs != NULL, "%s", err.msg);
    CHECK(has(libs, lib));
    strv_free(libs);
    unsetenv("LD_LIBRARY_PATH");
    free(lsrc);
    free(psrc);
    free(lib);
    free(bin);
    free(ldir);
}

static void
t_repo_names(void)
{
    static const struct {
        const char *plan, *repo;
    } v[] = {
        {"ping", "testyard/ping"},
        {"Memory_Stress.v2", "testyard/memory-stress-v2"},
        {"a  b", "testyard/a-b"},
        {"--", "testyard/plan"},
        {"x-", "testyard/x"},
    };

    for (size_t i = 0; i < ARRAY_LEN(v); i++) {
        char *r = imagebuild_repo(v[i].plan);

        CHECK_EQ_STR(r, v[i].repo);
        free(r);
    }
}

/* Write the context of bin to a file; returns the tag. */
static char *
context_of(const char *bin, const char *file, const char *tmpl, struct err *err)
{
    struct imagebuild_opts o = {
        .plan = "Ping", .binary = bin, .template_path = tmpl};
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char *tag = NULL;
    uint64_t files = 0;

    if (imagebuild_context(&o, fd, &tag, &files, err) == 0)
        CHECK(files > 10);
    close(fd);
    return tag;
}

static void
t_context_layout_and_tag(void)
{
    const char *tmp = th_tmpdir();
    char *src = write_src("h.c", "#include <stdio.h>\nint main(void) { "
                                 "puts(\"hi\"); return 0; }\n");
    char *bin = path_join(tmp, "hello");
    char *ctx = path_join(tmp, "ctx.tar");
    struct err err = {0};
    char *tag1, *tag2, *tag3, *cmd, *out;

    compile(src, bin, NULL, NULL);
    tag1 = context_of(bin, ctx, "docker/Dockerfile.plan", &err);
    CHECK_MSG(tag1 != NULL, "%s", err.msg);
    CHECK(tag1 && strncmp(tag1, "testyard/ping:", 14) == 0 &&
          strlen(tag1) == 14 + 16);
    cmd = xasprintf("tar -tvf %s", ctx);
    out = th_sh(cmd);
    CHECK_CONTAINS(out, "-rw-r--r-- 0/0");
    CHECK_CONTAINS(out, " 1970-01-01 00:00 Dockerfile\n");
    CHECK_CONTAINS(out, "-rwxr-xr-x 0/0");
    CHECK_CONTAINS(out, " rootfs/plan/ping\n");
    CHECK_CONTAINS(out, " rootfs/lib64/ld-linux-x86-64.so.2\n");
    CHECK_CONTAINS(out, " rootfs/lib/x86_64-linux-gnu/libc.so.6\n");
    /* not needed by hello, but loaded by backtrace() at run time */
    if (path_exists("/lib/x86_64-linux-gnu/libgcc_s.so.1"))
        CHECK_CONTAINS(out, " rootfs/lib/x86_64-linux-gnu/libgcc_s.so.1\n");
    CHECK_CONTAINS(out, "drwxrwxrwt 0/0               0 1970-01-01 00:00 "
                        "rootfs/tmp/\n");
    CHECK_CONTAINS(out, " rootfs/etc/nsswitch.conf\n");
    CHECK(strstr(out, "->") == NULL); /* no symlinks: files themselves */
    free(out);
    free(cmd);
    cmd = xasprintf("tar -xOf %s Dockerfile", ctx);
    out = th_sh(cmd);
    CHECK_CONTAINS(out, "FROM scratch\n");
    CHECK_CONTAINS(out, "ENTRYPOINT [\"/plan/ping\"]\n");
    CHECK_CONTAINS(out, "ENV LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/lib64\n");
    CHECK_CONTAINS(out, "USER 65532:65532\n");
    CHECK(strstr(out, "{{") == NULL);
    free(out);
    free(cmd);
    /* the image's user has an entry, so tools that look it up work */
    cmd = xasprintf("tar -xOf %s rootfs/etc/passwd rootfs/etc/group", ctx);
    out = th_sh(cmd);
    CHECK_CONTAINS(out, "testyard:x:65532:65532:");
    CHECK_CONTAINS(out, "testyard:x:65532:\n");
    free(out);
    free(cmd);
    /* same content, same tag; a different binary, a different one */
    tag2 = context_of(bin, ctx, "docker/Dockerfile.plan", &err);
    CHECK_EQ_STR(tag2, tag1);
    free(src);
    src = write_src("h.c", "#include <stdio.h>\nint main(void) { "
                           "puts(\"ho\"); return 0; }\n");
    compile(src, bin, NULL, NULL);
    tag3 = context_of(bin, ctx, "docker/Dockerfile.plan", &err);
    CHECK(tag3 && strcmp(tag3, tag1) != 0);
    free(tag1);
    free(tag2);
    free(tag3);
    free(src);
    free(bin);
    free(ctx);
}

/* A libc in a folder without libgcc_s.so.1 (a copy, found first through
 * LD_LIBRARY_PATH): libgcc_s comes from where ld.so.cache says. */
static void
t_context_libgcc_s_from_cache(void)
{
    const char *tmp = th_tmpdir();
    const char *host = "/lib/x86_64-linux-gnu/libgcc_s.so.1";
    char *src = write_src("g.c", "int main(void) { return 0; }\n");
    char *bin = path_join(tmp, "g");
    char *ctx = path_join(tmp, "ctx.tar");
    char *cmd, *out;
    struct err err = {0};
    char *tag;

    if (!path_exists(host))
        th_skip("no /lib/x86_64-linux-gnu/libgcc_s.so.1 on this host");
    compile(src, bin, NULL, NULL);
    cmd = xasprintf("cp /lib/x86_64-linux-gnu/libc.so.6 %s/", tmp);
    CHECK_EQ_INT(th_run((char *[]){"sh", "-c", cmd, NULL}), 0);
    free(cmd);
    setenv("LD_LIBRARY_PATH", tmp, 1);
    tag = context_of(bin, ctx, "docker/Dockerfile.plan", &err);
    unsetenv("LD_LIBRARY_PATH");
    CHECK_MSG(tag != NULL, "%s", err.msg);
    cmd = xasprintf("tar -tf %s", ctx);
    out = th_sh(cmd);
    CHECK_CONTAINS(out, "rootfs/lib/x86_64-linux-gnu/libgcc_s.so.1\n");
    free(cmd);
    cmd = xasprintf("rootfs%s/libc.so.6\n", tmp);
    CHECK_CONTAINS(out, cmd);
    free(cmd);
    free(out);
    free(tag);
    free(src);
    free(bin);
    free(ctx);
}

static void
t_template_errors(void)
{
    char *tmpl = write_src("Dockerfile.bad", "FROM scratch\nENV X={{NOPE}}\n");
    char *ctx = path_join(th_tmpdir(), "ctx.tar");
    struct err err = {0};
    char *tag;

    tag = context_of("/bin/true", ctx, tmpl, &err);
    CHECK(tag == NULL);
    CHECK_CONTAINS(err.msg, "unknown placeholder {{NOPE}}");
    free(tmpl);
    tmpl = path_join(th_tmpdir(), "missing");
    CHECK(context_of("/bin/true", ctx, tmpl, &err) == NULL);
    CHECK_EQ_INT(err.code, ENOENT);
    free(tmpl);
    free(ctx);
}

static void
t_template_found_from_build_tree(void)
{
    struct err err = {0};
    char *p;

    unsetenv("TESTYARD_DOCKER_DIR");
    p = imagebuild_template_path(&err);
    CHECK_MSG(p != NULL, "%s", err.msg);
    CHECK(p && path_exists(p));
    CHECK(p && strstr(p, "/docker/Dockerfile.plan") != NULL);
    free(p);
    setenv("TESTYARD_DOCKER_DIR", "/somewhere", 1);
    p = imagebuild_template_path(&err);
    CHECK_EQ_STR(p, "/somewhere/Dockerfile.plan");
    free(p);
    unsetenv("TESTYARD_DOCKER_DIR");
}

static const struct th_case cases[] = {
    {"resolve_dynamic", t_resolve_dynamic},
    {"resolve_static_and_errors", t_resolve_static_and_errors},
    {"resolve_missing_and_library_path", t_resolve_missing_and_library_path},
    {"repo_names", t_repo_names},
    {"context_layout_and_tag", t_context_layout_and_tag},
    {"context_libgcc_s_from_cache", t_context_libgcc_s_from_cache},
    {"template_errors", t_template_errors},
    {"template_found_from_build_tree", t_template_found_from_build_tree},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
