/*
 * imagebuild.c — the image of a plan from what is on this machine (see
 * builder/builder.h for the layout of the image).
 *
 * Libraries are resolved by running the binary's own dynamic loader in
 * list mode (`/lib64/ld-linux-x86-64.so.2 --list BINARY`, through
 * proc_run_opts, no shell). The loader is the one authority on what it
 * will load: it applies RPATH and RUNPATH with $ORIGIN, LD_LIBRARY_PATH,
 * ld.so.cache, the glibc-hwcaps subfolders and the default folders, in its
 * own order, which re-implementing from DT_NEEDED and the cache would only
 * approximate. In list mode it maps and relocates the objects but never
 * runs the program. A static executable (no PT_INTERP) needs nothing and
 * is not given to the loader, which would crash on it.
 *
 * One library is loaded without being named: glibc's backtrace() (which
 * the heap profiler's unwinder falls back on) dlopens libgcc_s.so.1 at run
 * time, and without it finds no frames. It is added, with what it
 * resolves to, from where the loader would find it: the folder of the libc
 * the binary resolves to, else the entry `ldconfig -p` gives for the
 * binary's machine; a host without one builds the image without it.
 *
 * The context is written once, through a tee that hashes it while it is
 * spooled to an unlinked temporary file; the hash names the tag, and the
 * file is uploaded to /build only when no image has that tag. Everything
 * in it has fixed owners (0:0) and mtimes (0), so the hash depends on
 * contents, names and modes only.
 */
#include "builder/builder.h"

#include "base/proc.h"
#include "base/strbuf.h"
#include "base/strvec.h"
#include "sha256.h"
#include "base/tar.h"
#include "base/util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

#define LIST_MAX (1u << 20) /* bytes of loader output we accept */
#define MISSING_FMT                                                            \
    "%s needs %.*s, which the dynamic loader cannot find (install it, or "     \
    "set LD_LIBRARY_PATH or the binary's RUNPATH)"

/* --- ELF --------------------------------------------------------------- */

int
imagebuild_elf_interp(const char *path, char *interp, size_t size,
                      struct err *err)
{
    cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf64_Ehdr eh;
    Elf64_Phdr ph;

    interp[0] = '\0';
    if (fd < 0)
        return err_sys(err, errno, "%s", path);
    if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        return err_set(err, ENOEXEC, "%s: not an ELF file", path);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64)
        return err_set(err, ENOEXEC, "%s: only 64-bit ELF is supported", path);
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        off_t at = (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize);

        if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph))
            return err_set(err, ENOEXEC, "%s: truncated ELF", path);
        if (ph.p_type != PT_INTERP)
            continue;
        if (ph.p_filesz == 0 || ph.p_filesz >= size ||
            pread(fd, interp, ph.p_filesz, (off_t)ph.p_offset) !=
                (ssize_t)ph.p_filesz)
            return err_set(err, ENOEXEC, "%s: bad PT_INTERP", path);
        interp[ph.p_filesz] = '\0';
        return 0;
    }
    return 0;
}

/* The e_machine of a 64-bit ELF file, or -1. */
static int
elf_machine(const char *path)
{
    cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf64_Ehdr eh;

    if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64)
        return -1;
    return eh.e_machine;
}

/* --- the loader in list mode ------------------------------------------ */

/* Our environment without what would change or pollute the listing. */
static char **
loader_env(void)
{
    static const char *const drop[] = {"LD_PRELOAD=", "LD_AUDIT=", "LD_TRACE_",
                                       "LD_DEBUG", "LD_BIND_"};
    struct strvec env = {0};

    for (char **e = environ; e && *e; e++) {
        bool keep = true;

        for (size_t i = 0; i < ARRAY_LEN(drop); i++)
            if (strncmp(*e, drop[i], strlen(drop[i])) == 0)
                keep = false;
        if (keep)
            strvec_push(&env, *e);
    }
    return strvec_detach(&env);
}

/* Run `loader --list path` in loader_env(); its stdout and stderr into
 * out. Returns its exit status, or -1 when it could not be run. */
static int
run_loader(const char *loader, const char *path, struct strbuf *out,
           struct err *err)
{
    char *argv[] = {(char *)loader, "--list", (char *)path, NULL};
    char **env = loader_env();
    struct proc_opts o = {.env = env, .max_out = LIST_MAX};
    int rc = proc_run_opts(argv, &o, out, err);

    strv_free(env);
    return rc;
}

/* The path in "<path> (0x...)". */
static char *
path_before_address(const char *s)
{
    const char *end = strstr(s, " (0x");

    return xstrndup(s, end ? (size_t)(end - s) : strlen(s));
}

/* One line of the listing: a resolved path goes to paths, a library the
 * loader could not find to missing; vdso and notes are skipped. */
static void
list_line(const char *line, struct strvec *paths, struct strbuf *missing)
{
    const char *arrow = strstr(line, " => ");

    line += strspn(line, " \t");
    if (arrow != NULL) {
        const char *to = arrow + 4;

        if (strncmp(to, "not found", 9) == 0)
            strbuf_addf(missing, "%s%.*s", missing->len ? ", " : "",
                        (int)(arrow - line), line);
        else if (to[0] == '/')
            strvec_push_owned(paths, path_before_address(to));
    } else if (line[0] == '/') {
        strvec_push_owned(paths, path_before_address(line));
    }
}

static int
parse_listing(const char *path, char *text, struct strvec *paths,
              struct err *err)
{
    struct strbuf missing;
    char *save = NULL;

    strbuf_init(&missing);
    for (char *l = strtok_r(text, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save))
        list_line(l, paths, &missing);
    if (missing.len > 0) {
        err_set(err, ENOENT, MISSING_FMT, path, (int)missing.len, missing.buf);
        strbuf_release(&missing);
        return -1;
    }
    strbuf_release(&missing);
    return 0;
}

/* The loader stops at the first library it cannot load, saying
 * "<path>: error while loading shared libraries: <name>: cannot open
 * shared object file: ..."; anything else is reported as it is. */
static int
loader_failed(const char *loader, const char *path, int status, const char *out,
              struct err *err)
{
    static const char marker[] = "error while loading shared libraries: ";
    const char *m = strstr(out, marker);

    if (m != NULL && strstr(m, ": cannot open shared object file") != NULL) {
        m += sizeof(marker) - 1;
        return err_set(err, ENOENT, MISSING_FMT, path, (int)strcspn(m, ":"), m);
    }
    return err_set(err, ENOEXEC, "%s --list %s failed (status %d): %.300s",
                   loader, path, status, out);
}

/* Add what the ELF object at path resolves to (through loader, or its own
 * PT_INTERP when loader is NULL) to paths. */
static int
resolve_into(const char *path, const char *loader, struct strvec *paths,
             struct err *err)
{
    char interp[256];
    struct strbuf out;
    int rc;

    if (imagebuild_elf_interp(path, interp, sizeof(interp), err) < 0)
        return -1;
    if (interp[0] == '\0' && loader == NULL)
        return 0; /* static: needs nothing */
    if (interp[0] != '\0')
        loader = interp;
    strbuf_init(&out);
    strbuf_adds(&out, "");
    rc = run_loader(loader, path, &out, err);
    if (rc > 0)
        rc = loader_failed(loader, path, rc, out.buf, err);
    if (rc == 0)
        rc = parse_listing(path, out.buf, paths, err);
    strbuf_release(&out);
    if (rc == 0)
        strvec_push(paths, loader);
    return rc;
}

char **
imagebuild_resolve(const char *path, struct err *err)
{
    struct strvec paths = {0};

    if (resolve_into(path, NULL, &paths, err) < 0) {
        strvec_release(&paths);
        return NULL;
    }
    strvec_sort_uniq(&paths);
    return strvec_detach(&paths);
}

/* --- libgcc_s, which backtrace() loads --------------------------------- */

#define LIBGCC_S "libgcc_s.so.1"

/* libgcc_s.so.1 as `ldconfig -p` lists it for the machine of binary:
 * "\tlibgcc_s.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libgcc_s.so.1". */
static char *
libgcc_s_from_cache(const char *binary)
{
    static const char *const ldconfig[] = {"/sbin/ldconfig",
                                           "/usr/sbin/ldconfig"};
    int machine = elf_machine(binary);
    char *found = NULL;

    for (size_t i = 0; i < ARRAY_LEN(ldconfig) && found == NULL; i++) {
        char *argv[] = {(char *)ldconfig[i], "-p", NULL};
        struct strbuf out;
        char *save = NULL;

        strbuf_init(&out);
        strbuf_adds(&out, "");
        if (proc_run(argv, &out, NULL) == 0)
            for (char *l = strtok_r(out.buf, "\n", &save); l && !found;
                 l = strtok_r(NULL, "\n", &save)) {
                const char *to = strstr(l, " => ");

                l += strspn(l, " \t");
                if (to != NULL &&
                    strncmp(l, LIBGCC_S " ", sizeof(LIBGCC_S)) == 0 &&
                    elf_machine(to + 4) == machine)
                    found = xstrdup(to + 4);
            }
        strbuf_release(&out);
    }
    return found;
}

/* Where the loader would find libgcc_s.so.1 for a binary that resolved to
 * libs, or NULL (a static binary, or none on this host). */
static char *
libgcc_s_path(const char *binary, const struct strvec *libs)
{
    for (size_t i = 0; i < libs->n; i++) {
        const char *slash = strrchr(libs->v[i], '/');
        char *p;

        if (slash == NULL || strcmp(slash + 1, "libc.so.6") != 0)
            continue;
        p = xasprintf("%.*s/" LIBGCC_S, (int)(slash - libs->v[i]), libs->v[i]);
        if (path_exists(p))
            return p;
        free(p);
        return libgcc_s_from_cache(binary);
    }
    return NULL;
}

/* Add libgcc_s.so.1 and what it resolves to (through loader). */
static int
add_libgcc_s(const char *binary, const char *loader, struct strvec *libs,
             struct err *err)
{
    char *p = libgcc_s_path(binary, libs);

    if (p == NULL)
        return 0;
    strvec_push_owned(libs, p);
    return resolve_into(p, loader, libs, err);
}

/* --- names ------------------------------------------------------------ */

char *
imagebuild_repo(const char *plan)
{
    struct strbuf sb;

    strbuf_init(&sb);
    strbuf_adds(&sb, "testyard/");
    for (const char *p = plan; *p; p++) {
        char c = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

        if (ok)
            strbuf_addc(&sb, c);
        else if (sb.buf[sb.len - 1] != '-' && sb.buf[sb.len - 1] != '/')
            strbuf_addc(&sb, '-');
    }
    while (sb.buf[sb.len - 1] == '-')
        sb.buf[--sb.len] = '\0';
    if (sb.buf[sb.len - 1] == '/')
        strbuf_adds(&sb, "plan");
    return strbuf_detach(&sb);
}

char *
imagebuild_template_path(struct err *err)
{
    const char *env = getenv("TESTYARD_DOCKER_DIR");
    cleanup_free char *dir = exe_dir();
    char *p;

    if (env && env[0])
        return path_join(env, "Dockerfile.plan");
    for (int up = 0; dir && up <= 4; up++) {
        char *up_dir = path_dirname(dir);

        p = xasprintf("%s/docker/Dockerfile.plan", dir);
        if (path_exists(p)) {
            free(up_dir);
            return p;
        }
        free(p);
        free(dir);
        dir = up_dir;
    }
    p = xasprintf("%s/share/testyard/docker/Dockerfile.plan", TY_PREFIX);
    if (path_exists(p))
        return p;
    free(p);
    err_set(err, ENOENT,
            "docker/Dockerfile.plan not found next to the "
            "program or in %s/share/testyard/docker (set "
            "TESTYARD_DOCKER_DIR)",
            TY_PREFIX);
    return NULL;
}

/* --- the context -------------------------------------------------------- */

/* One entry of the context: a folder, a host file, or generated text. */
struct entry {
    char *name; /* in the tar */
    char *host; /* host file, or NULL */
    const char *text;
    unsigned mode; /* for folders and text */
};

struct context {
    struct entry *e;
    size_t n, cap;
    struct strvec libdirs;
};

static const char nsswitch[] = "passwd: files\ngroup: files\n"
                               "hosts: files dns\n";
/* testyard: the image's own user (docker/Dockerfile.plan: USER), for a
 * container started by hand; a run gives each container a user of its
 * own (runner/backend/backend_ids.c). */
static const char passwd[] =
    "root:x:0:0:root:/root:/sbin/nologin\n"
    "testyard:x:65532:65532:testyard:/tmp:/sbin/nologin\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n";
static const char group[] = "root:x:0:\ntestyard:x:65532:\n"
                            "nogroup:x:65534:\n";

static void
ctx_add(struct context *c, char *name, char *host, const char *text,
        unsigned mode)
{
    xgrow(&c->e, &c->cap, c->n + 1, sizeof(*c->e));
    c->e[c->n++] = (struct entry){name, host, text, mode};
}

/* rootfs/<path>, with an entry for each folder above it. */
static void
ctx_add_rootfs(struct context *c, const char *path, char *host,
               const char *text, unsigned mode)
{
    const char *p = path;

    while ((p = strchr(p + 1, '/')) != NULL)
        ctx_add(c, xasprintf("rootfs%.*s", (int)(p - path), path), NULL, NULL,
                0755);
    ctx_add(c, xasprintf("rootfs%s", path), host, text, mode);
}

static int
cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name,
                  ((const struct entry *)b)->name);
}

/* Sort by name and drop repeated folders. */
static void
ctx_sort(struct context *c)
{
    size_t out = 0;

    qsort(c->e, c->n, sizeof(*c->e), cmp_entry);
    for (size_t i = 0; i < c->n; i++) {
        if (out > 0 && strcmp(c->e[out - 1].name, c->e[i].name) == 0) {
            free(c->e[i].name);
            free(c->e[i].host);
        } else {
            c->e[out++] = c->e[i];
        }
    }
    c->n = out;
}

static void
ctx_release(struct context *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->e[i].name);
        free(c->e[i].host);
    }
    free(c->e);
    strvec_release(&c->libdirs);
}

/* The libraries of binary and the extra files, and what they resolve to. */
static int
ctx_collect(struct context *c, const struct imagebuild_opts *o,
            const char *plan_path, struct err *err)
{
    struct strvec libs = {0};
    char interp[256] = "";
    int rc = resolve_into(o->binary, NULL, &libs, err);

    if (rc == 0)
        rc = imagebuild_elf_interp(o->binary, interp, sizeof(interp), err);
    for (size_t i = 0; rc == 0 && o->extra && o->extra[i]; i++) {
        char ei[256];

        strvec_push(&libs, o->extra[i]);
        if (imagebuild_elf_interp(o->extra[i], ei, sizeof(ei), NULL) == 0)
            rc = resolve_into(o->extra[i], interp[0] ? interp : NULL, &libs,
                              err);
    }
    if (rc == 0 && interp[0] != '\0')
        rc = add_libgcc_s(o->binary, interp, &libs, err);
    strvec_sort_uniq(&libs);
    for (size_t i = 0; rc == 0 && i < libs.n; i++) {
        ctx_add_rootfs(c, libs.v[i], xstrdup(libs.v[i]), NULL, 0);
        strvec_push_owned(&c->libdirs, path_dirname(libs.v[i]));
    }
    strvec_sort_uniq(&c->libdirs);
    ctx_add_rootfs(c, plan_path, xstrdup(o->binary), NULL, 0);
    strvec_release(&libs);
    return rc;
}

static void
ctx_add_etc(struct context *c)
{
    ctx_add_rootfs(c, "/etc/nsswitch.conf", NULL, nsswitch, 0644);
    ctx_add_rootfs(c, "/etc/passwd", NULL, passwd, 0644);
    ctx_add_rootfs(c, "/etc/group", NULL, group, 0644);
    ctx_add_rootfs(c, "/tmp", NULL, NULL, 01777);
    ctx_add(c, xstrdup("rootfs"), NULL, NULL, 0755);
}

/* --- the Dockerfile ------------------------------------------------------ */

struct subst {
    const char *name;
    const char *value;
};

/* Fill {{NAME}} placeholders of tmpl; an unknown one is an error. */
static char *
fill_template(const char *tmpl, const struct subst *s, size_t ns,
              const char *where, struct err *err)
{
    struct strbuf sb;
    const char *p = tmpl, *open;

    strbuf_init(&sb);
    while ((open = strstr(p, "{{")) != NULL) {
        const char *close = strstr(open, "}}");
        size_t i = 0;

        strbuf_add(&sb, p, (size_t)(open - p));
        for (; close && i < ns; i++)
            if (strlen(s[i].name) == (size_t)(close - open - 2) &&
                strncmp(open + 2, s[i].name, strlen(s[i].name)) == 0)
                break;
        if (close == NULL || i == ns) {
            err_set(err, EINVAL, "%s: unknown placeholder %.20s", where, open);
            strbuf_release(&sb);
            return NULL;
        }
        strbuf_adds(&sb, s[i].value);
        p = close + 2;
    }
    strbuf_adds(&sb, p);
    return strbuf_detach(&sb);
}

static char *
dockerfile(const struct imagebuild_opts *o, const struct context *c,
           const char *entry, struct err *err)
{
    cleanup_free char *path = o->template_path ? xstrdup(o->template_path)
                                               : imagebuild_template_path(err);
    cleanup_free char *tmpl = NULL;
    struct strbuf dirs;
    char *out;

    if (path == NULL || (tmpl = file_read(path, 1 << 20, NULL, err)) == NULL)
        return NULL;
    strbuf_init(&dirs);
    strbuf_adds(&dirs, "");
    for (size_t i = 0; i < c->libdirs.n; i++)
        strbuf_addf(&dirs, "%s%s", i ? ":" : "", c->libdirs.v[i]);
    out = fill_template(tmpl,
                        (const struct subst[]){{"PLAN", o->plan},
                                               {"ENTRYPOINT", entry},
                                               {"LIBRARY_PATH", dirs.buf}},
                        3, path, err);
    strbuf_release(&dirs);
    return out;
}

/* --- writing and building --------------------------------------------- */

/* Hash what goes into the archive while writing it to fd. */
struct tee {
    int fd;
    struct sha256 h;
};

static int
tee_write(void *arg, const void *data, size_t len, struct err *err)
{
    struct tee *t = arg;

    ty__sha256_update(&t->h, data, len);
    if (fd_write_all(t->fd, data, len) < 0)
        return err_sys(err, errno, "writing the build context");
    return 0;
}

static int
write_entry(struct tar *t, const struct entry *e, struct err *err)
{
    struct tar_meta m = {e->mode, 0, 0, 0};
    cleanup_close int fd = -1;
    struct stat st;

    if (e->text != NULL)
        return tar_add_data(t, e->name, &m, e->text, strlen(e->text), err);
    if (e->host == NULL)
        return tar_add_dir(t, e->name, &m, err);
    /* open follows links: a library is copied as the file it names */
    if ((fd = open(e->host, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0)
        return err_sys(err, errno, "%s", e->host);
    if (!S_ISREG(st.st_mode))
        return err_set(err, EINVAL, "%s: not a regular file", e->host);
    m.mode = st.st_mode & 0755;
    return tar_add_fd(t, e->name, &m, fd, (uint64_t)st.st_size, err);
}

static int
write_context(struct tar *t, const struct context *c, const char *df,
              struct err *err)
{
    struct tar_meta m = {0644, 0, 0, 0};

    if (tar_add_data(t, "Dockerfile", &m, df, strlen(df), err) < 0)
        return -1;
    for (size_t i = 0; i < c->n; i++)
        if (write_entry(t, &c->e[i], err) < 0)
            return -1;
    return tar_finish(t, err);
}

static char *
make_tag(const char *plan, struct sha256 *h)
{
    uint8_t dig[SHA256_LEN];
    char hex[SHA256_HEX_LEN];
    cleanup_free char *repo = imagebuild_repo(plan);

    ty__sha256_final(h, dig);
    ty__sha256_hex(dig, hex);
    return xasprintf("%s:%.16s", repo, hex);
}

/* Where the plan's executable goes in the image: /plan/<name>. */
static char *
plan_file(const char *plan)
{
    cleanup_free char *repo = imagebuild_repo(plan);

    return xasprintf("/plan/%s", strchr(repo, '/') + 1);
}

int
imagebuild_context(const struct imagebuild_opts *o, int fd, char **tag_out,
                   uint64_t *files_out, struct err *err)
{
    cleanup_free char *plan_path = NULL;
    cleanup_free char *df = NULL;
    struct context c = {0};
    struct tee tee = {.fd = fd};
    struct tar *t = NULL;
    int rc = -1;

    plan_path = plan_file(o->plan);
    ty__sha256_init(&tee.h);
    if (ctx_collect(&c, o, plan_path, err) < 0)
        goto out;
    ctx_add_etc(&c);
    ctx_sort(&c);
    if ((df = dockerfile(o, &c, plan_path, err)) == NULL)
        goto out;
    t = tar_new_cb(tee_write, &tee, false);
    if (write_context(t, &c, df, err) < 0)
        goto out;
    *tag_out = make_tag(o->plan, &tee.h);
    if (files_out)
        *files_out = tar_entries(t);
    rc = 0;
out:
    tar_destroy(&t);
    ctx_release(&c);
    return rc;
}

/* An unlinked temporary file for the context. */
static int
spool_fd(struct err *err)
{
    const char *dir = getenv("TMPDIR");
    int fd = open(dir && dir[0] ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC,
                  0600);

    if (fd < 0)
        return err_sys(err, errno, "temporary file for the build context");
    return fd;
}

static int
find_existing(struct docker *d, struct imagebuild_result *res, struct err *err)
{
    struct err e = {0};
    cJSON *j = docker_image_inspect(d, res->tag, &e);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "Id");

    if (j == NULL && e.code == ENOENT)
        return 0;
    if (j == NULL) {
        if (err)
            *err = e;
        return -1;
    }
    res->image_id = xstrdup(cJSON_IsString(id) ? id->valuestring : "");
    cJSON_Delete(j);
    return 1;
}

/* first, then the caller's labels; the array is the caller's to free. */
static const char **
image_labels(const char *first, const char *const *more)
{
    size_t n = 0;
    const char **v;

    while (more && more[n])
        n++;
    v = xcalloc(n + 2, sizeof(*v));
    v[0] = first;
    for (size_t i = 0; i < n; i++)
        v[i + 1] = more[i];
    return v;
}

int
imagebuild_build(struct docker *d, const struct imagebuild_opts *o,
                 struct imagebuild_result *res, struct err *err)
{
    cleanup_close int fd = spool_fd(err);
    cleanup_free char *label = xasprintf("testyard.plan=%s", o->plan);
    cleanup_free const char **labels = image_labels(label, o->labels);
    struct docker_build_opts bo = {.labels = labels,
                                   .progress = o->progress,
                                   .arg = o->arg,
                                   .cancel = o->cancel};
    int found;

    memset(res, 0, sizeof(*res));
    if (fd < 0 || imagebuild_context(o, fd, &res->tag, &res->files, err) < 0)
        return -1;
    res->context_bytes = (uint64_t)lseek(fd, 0, SEEK_CUR);
    if ((found = find_existing(d, res, err)) != 0)
        return found < 0 ? -1 : 0;
    bo.tag = res->tag;
    if (lseek(fd, 0, SEEK_SET) < 0)
        return err_sys(err, errno, "build context");
    if (docker_build(d, fd, &bo, &res->image_id, err) < 0)
        return -1;
    res->built = true;
    return 0;
}

void
imagebuild_result_release(struct imagebuild_result *res)
{
    free(res->tag);
    free(res->image_id);
    memset(res, 0, sizeof(*res));
}
