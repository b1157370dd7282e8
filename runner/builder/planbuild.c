/*
 * planbuild.c — compile a plan against the SDK, cached by content hash
 * (see builder/builder.h).
 *
 * The SDK is found next to the running program when it runs from a build
 * tree (build/testyard → build/libtestyard.a and sdk/include/testyard.h),
 * else under the install prefix; TESTYARD_SDK_INCLUDE and TESTYARD_SDK_LIB
 * override both. The hash covers the compiler command line, every source
 * and header in the plan folder, the SDK header and library, so any change
 * to one of them gives a new binary and an unchanged plan is reused.
 * The LD_PRELOAD heap profiler is found the same way.
 */
#include "builder/builder.h"

#include "base/proc.h"
#include "base/strbuf.h"
#include "base/strvec.h"
#include "sha256.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sdk_paths {
    char *include; /* folder holding testyard.h */
    char *lib;     /* path of libtestyard.a */
};

static bool
sdk_try(struct sdk_paths *p, const char *inc, const char *lib)
{
    cleanup_free char *h = path_join(inc, "testyard.h");

    if (!path_exists(h) || !path_exists(lib))
        return false;
    p->include = xstrdup(inc);
    p->lib = xstrdup(lib);
    return true;
}

static int
sdk_find(struct sdk_paths *p, struct err *err)
{
    cleanup_free char *dir = exe_dir();
    cleanup_free char *lib = path_join(dir, "libtestyard.a");
    cleanup_free char *inc1 = path_join(dir, "../sdk/include");
    cleanup_free char *inc2 = path_join(dir, "../../sdk/include");
    const char *ei = getenv("TESTYARD_SDK_INCLUDE");
    const char *el = getenv("TESTYARD_SDK_LIB");

    if (ei != NULL && el != NULL && sdk_try(p, ei, el))
        return 0;
    if (sdk_try(p, inc1, lib) || sdk_try(p, inc2, lib))
        return 0;
    if (sdk_try(p, TY_PREFIX "/include", TY_PREFIX "/lib/libtestyard.a"))
        return 0;
    return err_set(err, ENOENT,
                   "cannot find the SDK (testyard.h and libtestyard.a) next "
                   "to %s or under %s; set TESTYARD_SDK_INCLUDE and "
                   "TESTYARD_SDK_LIB",
                   dir, TY_PREFIX);
}

char *
planbuild_heap_library(struct err *err)
{
    static const char lib[] = "libtestyard-heap.so";
    cleanup_free char *dir = exe_dir();
    char *at[] = {
        dir ? path_join(dir, lib) : NULL,
        dir ? xasprintf("%s/../lib/%s", dir, lib) : NULL,
        xstrdup(TY_PREFIX "/lib/libtestyard-heap.so"),
    };
    char *found = NULL;

    for (size_t i = 0; i < ARRAY_LEN(at); i++) {
        if (found == NULL && at[i] != NULL && path_exists(at[i]))
            found = realpath(at[i], NULL);
        free(at[i]);
    }
    if (found == NULL)
        err_set(err, ENOENT,
                "cannot find the heap profiler %s next to %s, in its "
                "../lib or in %s/lib",
                lib, dir ? dir : "the testyard program", TY_PREFIX);
    return found;
}

static void
sdk_release(struct sdk_paths *p)
{
    free(p->include);
    free(p->lib);
}

char *
planbuild_cache_dir(void)
{
    const char *c = getenv("TESTYARD_CACHE");
    const char *x = getenv("XDG_CACHE_HOME");
    const char *h = getenv("HOME");

    if (c != NULL && *c != '\0')
        return xstrdup(c);
    if (x != NULL && *x != '\0')
        return path_join(x, "testyard");
    return xasprintf("%s/.cache/testyard", h && *h ? h : "/tmp");
}

/* Split pkg-config output on blanks and add each word. */
static void
args_add_words(struct strvec *a, const char *s)
{
    cleanup_free char *copy = xstrdup(s);
    char *save = NULL;

    for (char *w = strtok_r(copy, " \t\n", &save); w != NULL;
         w = strtok_r(NULL, " \t\n", &save))
        strvec_push(a, w);
}

static int
pkg_config(const char *what, char *const *pkgs, size_t npkgs, struct strvec *a,
           struct err *err)
{
    struct strvec pc = {0};
    struct strbuf out;
    int rc;

    strbuf_init(&out);
    strvec_push(&pc, "pkg-config");
    strvec_push(&pc, what);
    strvec_push(&pc, "libcjson");
    strvec_push(&pc, "zlib");
    for (size_t i = 0; i < npkgs; i++)
        strvec_push(&pc, pkgs[i]);
    rc = proc_run(pc.v, &out, err);
    if (rc != 0) {
        if (rc > 0)
            err_set(err, EINVAL, "pkg-config %s failed: %s", what,
                    out.buf ? out.buf : "");
        strvec_release(&pc);
        strbuf_release(&out);
        return -1;
    }
    args_add_words(a, out.buf ? out.buf : "");
    strvec_release(&pc);
    strbuf_release(&out);
    return 0;
}

static int
compile_args(const struct planbuild_spec *s, const struct sdk_paths *sdk,
             struct strvec *a, struct err *err)
{
    const char *cc = getenv("CC");

    strvec_push(a, cc && *cc ? cc : "cc");
    args_add_words(a, "-std=gnu11 -O2 -g -fno-omit-frame-pointer -pthread");
#ifdef TY_SANITIZE
    args_add_words(a, "-fsanitize=address,undefined");
#endif
    strvec_push(a, "-I");
    strvec_push(a, sdk->include);
    for (size_t i = 0; i < s->ncflags; i++)
        strvec_push(a, s->cflags[i]);
    if (pkg_config("--cflags", s->pkg_config, s->npkg_config, a, err) < 0)
        return -1;
    for (size_t i = 0; i < s->nsources; i++) {
        cleanup_free char *src = path_join(s->dir, s->sources[i]);

        strvec_push(a, src);
    }
    strvec_push(a, "-rdynamic");
    strvec_push(a, sdk->lib);
    if (pkg_config("--libs", s->pkg_config, s->npkg_config, a, err) < 0)
        return -1;
    for (size_t i = 0; i < s->nldlibs; i++)
        strvec_push(a, s->ldlibs[i]);
    args_add_words(a, "-lm -ldl -pthread");
    return 0;
}

static int
hash_file(struct sha256 *h, const char *path, struct err *err)
{
    size_t len;
    cleanup_free char *data = file_read(path, 256u << 20, &len, err);

    if (data == NULL)
        return -1;
    ty__sha256_update(h, path, strlen(path) + 1);
    ty__sha256_update(h, data, len);
    return 0;
}

/* Headers in the plan folder are inputs too. */
static int
hash_headers(struct sha256 *h, const char *dir, struct err *err)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort);
    int rc = 0;

    if (n < 0)
        return err_sys(err, errno, "%s", dir);
    for (int i = 0; i < n; i++) {
        size_t l = strlen(names[i]->d_name);

        if (rc == 0 && l > 2 && strcmp(names[i]->d_name + l - 2, ".h") == 0) {
            cleanup_free char *p = path_join(dir, names[i]->d_name);

            rc = hash_file(h, p, err);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

static int
build_hash(const struct planbuild_spec *s, const struct sdk_paths *sdk,
           const struct strvec *a, char hex[17], struct err *err)
{
    cleanup_free char *hdr = path_join(sdk->include, "testyard.h");
    struct sha256 h;
    uint8_t digest[32];

    ty__sha256_init(&h);
    for (size_t i = 0; i < a->n; i++)
        ty__sha256_update(&h, a->v[i], strlen(a->v[i]) + 1);
    for (size_t i = 0; i < s->nsources; i++) {
        cleanup_free char *src = path_join(s->dir, s->sources[i]);

        if (hash_file(&h, src, err) < 0)
            return err_prefix(err, "plan %s", s->name);
    }
    if (hash_headers(&h, s->dir, err) < 0 || hash_file(&h, hdr, err) < 0 ||
        hash_file(&h, sdk->lib, err) < 0)
        return -1;
    ty__sha256_final(&h, digest);
    for (int i = 0; i < 8; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return 0;
}

static int
write_log(const char *log_path, const struct strvec *a,
          const struct strbuf *out)
{
    struct strbuf sb;
    int rc;

    strbuf_init(&sb);
    strbuf_adds(&sb, "$");
    for (size_t i = 0; i < a->n; i++)
        strbuf_addf(&sb, " %s", a->v[i]);
    strbuf_addf(&sb, "\n%s", out->buf ? out->buf : "");
    rc = file_write_atomic(log_path, sb.buf, sb.len, NULL);
    strbuf_release(&sb);
    return rc;
}

/* The first line of compiler output that says "error", for the message. */
static void
first_error(const char *out, char *buf, size_t size)
{
    const char *p = out ? strstr(out, "error") : NULL;
    const char *start, *end;

    buf[0] = '\0';
    if (p == NULL)
        return;
    for (start = p; start > out && start[-1] != '\n'; start--)
        ;
    end = strchr(p, '\n');
    snprintf(buf, size, "%.*s",
             (int)(end ? (size_t)(end - start) : strlen(start)), start);
}

static int
compile(const struct planbuild_spec *s, struct strvec *a, const char *bin,
        const char *log_path, struct err *err)
{
    cleanup_free char *tmp = xasprintf("%s.tmp.%d", bin, (int)getpid());
    struct strbuf out;
    char first[512];
    int rc;

    strvec_push(a, "-o");
    strvec_push(a, tmp);
    strbuf_init(&out);
    rc = proc_run(a->v, &out, err);
    write_log(log_path, a, &out);
    if (rc != 0) {
        unlink(tmp);
        if (rc > 0) {
            first_error(out.buf, first, sizeof(first));
            err_set(err, EINVAL,
                    "plan %s failed to compile%s%s; full output in %s", s->name,
                    first[0] ? ": " : "", first, log_path);
            err_status(err, EXIT_DATAERR);
        }
        strbuf_release(&out);
        return -1;
    }
    strbuf_release(&out);
    if (rename(tmp, bin) < 0) {
        unlink(tmp);
        return err_sys(err, errno, "rename %s", bin);
    }
    return 0;
}

char *
planbuild(const struct planbuild_spec *spec, int *cached, struct err *err)
{
    struct sdk_paths sdk = {0};
    struct strvec a = {0};
    char hex[17];
    cleanup_free char *cache = planbuild_cache_dir();
    cleanup_free char *dir = NULL;
    cleanup_free char *log_path = NULL;
    char *bin = NULL;

    *cached = 0;
    if (sdk_find(&sdk, err) < 0)
        return NULL;
    if (compile_args(spec, &sdk, &a, err) < 0 ||
        build_hash(spec, &sdk, &a, hex, err) < 0)
        goto out;
    dir = xasprintf("%s/plans/%s-%s", cache, spec->name, hex);
    bin = path_join(dir, spec->name);
    log_path = path_join(dir, "build.log");
    if (path_exists(bin)) {
        *cached = 1;
        goto out;
    }
    if (mkdir_p(dir, err) < 0 || compile(spec, &a, bin, log_path, err) < 0) {
        free(bin);
        bin = NULL;
    }
out:
    strvec_release(&a);
    sdk_release(&sdk);
    return bin;
}
