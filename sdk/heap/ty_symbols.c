/*
 * ty_symbols.c — executable mappings and ELF function names (see
 * ty_symbols.h).
 *
 * An ELF file is mapped read-only and every offset in it is checked against
 * its size before use, so a truncated or odd file yields no names rather
 * than a crash. Function symbols (STT_FUNC, STT_GNU_IFUNC) are sorted by
 * address; among aliases at one address the name with the fewest leading
 * underscores wins (malloc over __libc_malloc). Local symbols in .symtab
 * follow the STT_FILE symbol of their source file, which gives pprof a file
 * name for static functions. A file whose inode differs from the mapped one
 * (rebuilt since it was loaded) or that was deleted is not read: wrong names
 * are worse than none.
 *
 * A stripped object (no .symtab: a distribution's daemon) is named from a
 * separate debug file, found as gdb and perf find it: by its GNU build id,
 * <dir>/.build-id/<xx>/<rest>.debug for each of the debug folders
 * (TESTYARD_HEAP_DEBUG_DIRS, default /usr/lib/debug), then by its
 * .gnu_debuglink name next to the object, in its .debug/ folder and under
 * each debug folder. A candidate counts only when its build id is the
 * object's (or, for an object without one, its CRC the link's), so a stale
 * debug file names nothing. Its symbols carry the object's addresses:
 * --only-keep-debug keeps the section addresses, so the object's program
 * headers give the bias for both. Files are read at a snapshot, never in a
 * signal handler; the folders are copied at the profiler's start, which
 * may be inside the first malloc, into a static buffer.
 */
#include "ty_symbols.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define FP_PROBE_MAX 512 /* functions looked at to judge frame pointers */
#define FP_PROLOGUE 32   /* bytes of a function's start looked at */
/* What is read of an ELF file: anything larger or with more sections is
 * taken for something else (a debug file of a very large program is a few
 * GiB; a linked object has a few dozen sections). */
#define ELF_MAX_BYTES ((uint64_t)8 << 30)
#define ELF_MAX_SECTIONS 8192
#define SYMS_MAX ((size_t)8 << 20) /* function symbols kept per file */
#define BUILD_ID_HEX 81            /* up to 40 bytes, as hex, and a NUL */

struct elf {
    const unsigned char *map;
    size_t size;
};

struct sym {
    uint64_t value, size;
    const char *name;
    const char *file;
};

struct ty__symtab {
    struct ty__symtab *next;
    char *path;
    uint64_t inode;
    struct elf elf;   /* the file itself: program headers */
    struct elf debug; /* a separate debug file, when its names were used */
    struct sym *syms;
    size_t n;
};

static struct ty__symtab *cache;
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
/* Colon-separated folders holding .build-id/ (ty__symbols_debug_dirs). */
static char debug_dirs[TY_SYMBOLS_DIRS_MAX] = TY_SYMBOLS_DEBUG_DIR;

/* ------------------------------------------------------------------------
 * ELF access
 */

static bool
in_file(const struct elf *e, uint64_t off, uint64_t len)
{
    return off <= e->size && len <= e->size - off;
}

static int
elf_open(const char *path, struct elf *e, uint64_t *inode)
{
    const Elf64_Ehdr *eh;
    struct stat st;
    void *map;
    /* O_NONBLOCK: a FIFO planted under a debug file's name does not
     * hang the snapshot; only a regular file is read. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
        st.st_size < (off_t)sizeof(*eh) ||
        (uint64_t)st.st_size > ELF_MAX_BYTES) {
        close(fd);
        return -EINVAL;
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return -errno;
    e->map = map;
    e->size = (size_t)st.st_size;
    eh = map;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_shnum > ELF_MAX_SECTIONS ||
        (eh->e_shnum != 0 && eh->e_shentsize != sizeof(Elf64_Shdr)) ||
        (eh->e_phnum != 0 && eh->e_phentsize != sizeof(Elf64_Phdr)) ||
        !in_file(e, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)) ||
        !in_file(e, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr))) {
        munmap(map, e->size);
        e->map = NULL;
        return -EINVAL;
    }
    if (inode != NULL)
        *inode = (uint64_t)st.st_ino;
    return 0;
}

static void
elf_close(struct elf *e)
{
    if (e->map != NULL)
        munmap((void *)e->map, e->size);
    e->map = NULL;
}

static const Elf64_Ehdr *
ehdr(const struct elf *e)
{
    return (const Elf64_Ehdr *)e->map;
}

static const Elf64_Shdr *
section(const struct elf *e, size_t i)
{
    if (i >= ehdr(e)->e_shnum)
        return NULL;
    return (const Elf64_Shdr *)(e->map + ehdr(e)->e_shoff) + i;
}

static const Elf64_Phdr *
phdr(const struct elf *e, size_t i)
{
    return (const Elf64_Phdr *)(e->map + ehdr(e)->e_phoff) + i;
}

/* The symbol table to read (.symtab, else .dynsym) and its string table. */
static const Elf64_Shdr *
symtab_section(const struct elf *e, const Elf64_Shdr **strtab)
{
    const Elf64_Shdr *found = NULL;

    for (size_t i = 0; i < ehdr(e)->e_shnum; i++) {
        const Elf64_Shdr *s = section(e, i);

        if (s->sh_type == SHT_SYMTAB ||
            (s->sh_type == SHT_DYNSYM && found == NULL))
            found = s;
    }
    if (found == NULL || found->sh_entsize != sizeof(Elf64_Sym) ||
        !in_file(e, found->sh_offset, found->sh_size))
        return NULL;
    *strtab = section(e, found->sh_link);
    if (*strtab == NULL || (*strtab)->sh_type != SHT_STRTAB ||
        (*strtab)->sh_size == 0 ||
        !in_file(e, (*strtab)->sh_offset, (*strtab)->sh_size))
        return NULL;
    return found;
}

static bool
has_symtab(const struct elf *e)
{
    for (size_t i = 0; i < ehdr(e)->e_shnum; i++)
        if (section(e, i)->sh_type == SHT_SYMTAB)
            return true;
    return false;
}

static const char *
str_at(const struct elf *e, const Elf64_Shdr *strtab, uint32_t off)
{
    const char *base = (const char *)e->map + strtab->sh_offset;

    if (off >= strtab->sh_size ||
        memchr(base + off, '\0', strtab->sh_size - off) == NULL)
        return NULL;
    return base + off;
}

typedef void (*sym_fn)(void *arg, const Elf64_Sym *sym, const char *name,
                       const char *file);

/* Call fn for every defined function symbol of e. */
static int
each_function(const struct elf *e, sym_fn fn, void *arg)
{
    const Elf64_Shdr *strtab, *st = symtab_section(e, &strtab);
    const Elf64_Sym *syms;
    const char *file = NULL;
    size_t n;

    if (st == NULL)
        return -ENOENT;
    syms = (const Elf64_Sym *)(e->map + st->sh_offset);
    n = st->sh_size / sizeof(*syms);
    for (size_t i = 1; i < n; i++) {
        int type = ELF64_ST_TYPE(syms[i].st_info);
        const char *name = str_at(e, strtab, syms[i].st_name);

        if (i >= st->sh_info)
            file = NULL; /* globals: no file */
        if (type == STT_FILE) {
            file = name;
            continue;
        }
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || name == NULL ||
            *name == '\0' || syms[i].st_shndx == SHN_UNDEF ||
            syms[i].st_value == 0)
            continue;
        fn(arg, &syms[i], name, file);
    }
    return 0;
}

/* The GNU build id note in [off, off + len) of e as hex; false when none. */
static bool
note_build_id(const struct elf *e, uint64_t off, uint64_t len, char *hex,
              size_t size)
{
    uint64_t end = off + len;

    if (!in_file(e, off, len))
        return false;
    while (end - off >= sizeof(Elf64_Nhdr)) {
        const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(e->map + off);
        uint64_t name = off + sizeof(*nh);
        uint64_t desc = name + (((uint64_t)nh->n_namesz + 3) & ~(uint64_t)3);

        off = desc + (((uint64_t)nh->n_descsz + 3) & ~(uint64_t)3);
        if (off > end)
            return false;
        if (nh->n_type != NT_GNU_BUILD_ID || nh->n_namesz != 4 ||
            memcmp(e->map + name, "GNU", 4) != 0 || nh->n_descsz == 0 ||
            (uint64_t)nh->n_descsz * 2 + 1 > size)
            continue;
        for (uint32_t k = 0; k < nh->n_descsz; k++)
            snprintf(hex + 2 * k, 3, "%02x", e->map[desc + k]);
        return true;
    }
    return false;
}

/* Hex GNU build id from the PT_NOTE segments, else (a debug file, whose
 * segments hold no bytes) the SHT_NOTE sections; "" when none. */
static void
build_id(const struct elf *e, char *hex, size_t size)
{
    hex[0] = '\0';
    for (size_t i = 0; i < ehdr(e)->e_phnum; i++) {
        const Elf64_Phdr *p = phdr(e, i);

        if (p->p_type == PT_NOTE &&
            note_build_id(e, p->p_offset, p->p_filesz, hex, size))
            return;
    }
    for (size_t i = 0; i < ehdr(e)->e_shnum; i++) {
        const Elf64_Shdr *s = section(e, i);

        if (s->sh_type == SHT_NOTE &&
            note_build_id(e, s->sh_offset, s->sh_size, hex, size))
            return;
    }
    hex[0] = '\0';
}

/* ------------------------------------------------------------------------
 * Symbol tables
 */

struct collect {
    struct sym *syms;
    size_t n, cap;
    bool failed;
};

static void
collect_sym(void *arg, const Elf64_Sym *s, const char *name, const char *file)
{
    struct collect *c = arg;

    if (c->n == SYMS_MAX)
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        struct sym *p = realloc(c->syms, cap * sizeof(*p));

        if (p == NULL) {
            c->failed = true;
            return;
        }
        c->syms = p;
        c->cap = cap;
    }
    c->syms[c->n++] = (struct sym){s->st_value, s->st_size, name, file};
}

static size_t
underscores(const char *s)
{
    size_t n = 0;

    while (s[n] == '_')
        n++;
    return n;
}

static int
sym_cmp(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;

    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    if (underscores(x->name) != underscores(y->name))
        return underscores(x->name) < underscores(y->name) ? -1 : 1;
    if ((x->size == 0) != (y->size == 0))
        return x->size == 0 ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* Sort, then keep the first symbol at each address. */
static size_t
sort_unique(struct sym *s, size_t n)
{
    size_t k = 0;

    qsort(s, n, sizeof(*s), sym_cmp);
    for (size_t i = 0; i < n; i++)
        if (k == 0 || s[k - 1].value != s[i].value)
            s[k++] = s[i];
    return k;
}

/* ------------------------------------------------------------------------
 * Separate debug files
 */

void
ty__symbols_debug_dirs(const char *dirs)
{
    size_t n = dirs != NULL ? strlen(dirs) : 0;

    pthread_mutex_lock(&cache_mu);
    if (dirs == NULL || n >= sizeof(debug_dirs))
        snprintf(debug_dirs, sizeof(debug_dirs), "%s", TY_SYMBOLS_DEBUG_DIR);
    else
        memcpy(debug_dirs, dirs, n + 1);
    pthread_mutex_unlock(&cache_mu);
}

/* The name .gnu_debuglink holds and its CRC; NULL when there is none or
 * it is not a plain file name (a '/' would leave the folders searched). */
static const char *
debuglink(const struct elf *e, uint32_t *crc)
{
    const Elf64_Shdr *strs = section(e, ehdr(e)->e_shstrndx);

    for (size_t i = 0; strs != NULL && i < ehdr(e)->e_shnum; i++) {
        const Elf64_Shdr *s = section(e, i);
        const char *name, *link;
        size_t len;

        if (s->sh_type != SHT_PROGBITS || !in_file(e, s->sh_offset, s->sh_size))
            continue;
        name = str_at(e, strs, s->sh_name);
        if (name == NULL || strcmp(name, ".gnu_debuglink") != 0)
            continue;
        link = (const char *)e->map + s->sh_offset;
        len = strnlen(link, s->sh_size);
        /* name, NUL, padding to 4, then the CRC */
        if (len == 0 || len > NAME_MAX || strchr(link, '/') != NULL ||
            strcmp(link, ".") == 0 || strcmp(link, "..") == 0 ||
            ((len + 4) & ~(size_t)3) + 4 > s->sh_size)
            return NULL;
        memcpy(crc, link + ((len + 4) & ~(size_t)3), 4);
        return link;
    }
    return NULL;
}

/* The CRC-32 .gnu_debuglink records: zlib's, over the whole file. */
static uint32_t
file_crc(const struct elf *e)
{
    uLong crc = crc32(0L, Z_NULL, 0);

    for (size_t off = 0; off < e->size;) {
        size_t n = e->size - off < (1u << 30) ? e->size - off : (1u << 30);

        crc = crc32(crc, e->map + off, (uInt)n);
        off += n;
    }
    return (uint32_t)crc;
}

/* Whether the debug file d belongs to the object: the same build id when
 * both have one, else the CRC the object's .gnu_debuglink holds (crc:
 * NULL when found by build id). */
static bool
debug_matches(const struct elf *d, const char *id, const uint32_t *crc)
{
    char did[BUILD_ID_HEX];

    if (!has_symtab(d))
        return false;
    build_id(d, did, sizeof(did));
    if (id[0] != '\0' && did[0] != '\0')
        return strcmp(did, id) == 0;
    return crc != NULL && file_crc(d) == *crc;
}

/* Open path as t's debug file when it matches. */
static bool
try_debug(struct ty__symtab *t, const char *path, const char *id,
          const uint32_t *crc)
{
    if (elf_open(path, &t->debug, NULL) < 0)
        return false;
    if (debug_matches(&t->debug, id, crc))
        return true;
    elf_close(&t->debug);
    return false;
}

/* The next folder of the colon-separated list at *at into buf; false at
 * the end. Empty and relative entries are skipped (ty_heap_env.c says
 * so). */
static bool
next_dir(const char **at, char *buf, size_t size)
{
    while (**at != '\0') {
        const char *s = *at;
        size_t n = strcspn(s, ":");

        *at = s + n + (s[n] == ':');
        if (n == 0 || s[0] != '/' || n >= size)
            continue;
        memcpy(buf, s, n);
        while (n > 1 && buf[n - 1] == '/')
            n--;
        buf[n] = '\0';
        return true;
    }
    return false;
}

/* <dir>/.build-id/xx/rest.debug, for each debug folder. */
static bool
find_by_build_id(struct ty__symtab *t, const char *dirs, const char *id)
{
    char dir[PATH_MAX], path[PATH_MAX + 128];

    if (strlen(id) < 4)
        return false;
    for (const char *at = dirs; next_dir(&at, dir, sizeof(dir));) {
        snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, id,
                 id + 2);
        if (try_debug(t, path, id, NULL))
            return true;
    }
    return false;
}

/* gdb's order: next to the object, in its .debug/ folder, then under
 * each debug folder with the object's own folder. */
static bool
find_by_link(struct ty__symtab *t, const char *dirs, const char *id)
{
    char dir[PATH_MAX], path[2 * PATH_MAX + NAME_MAX];
    const char *slash = strrchr(t->path, '/');
    uint32_t crc;
    const char *link = debuglink(&t->elf, &crc);
    int od; /* the object's folder: the first od bytes of its path */

    if (link == NULL || slash == NULL || slash - t->path >= PATH_MAX)
        return false;
    od = (int)(slash - t->path);
    snprintf(path, sizeof(path), "%.*s/%s", od, t->path, link);
    if (strcmp(path, t->path) != 0 && try_debug(t, path, id, &crc))
        return true;
    snprintf(path, sizeof(path), "%.*s/.debug/%s", od, t->path, link);
    if (try_debug(t, path, id, &crc))
        return true;
    for (const char *at = dirs; next_dir(&at, dir, sizeof(dir));) {
        snprintf(path, sizeof(path), "%s%.*s/%s", dir, od, t->path, link);
        if (try_debug(t, path, id, &crc))
            return true;
    }
    return false;
}

static int
load_names(struct ty__symtab *t, const char *dirs)
{
    struct collect c = {0};
    const struct elf *from = &t->elf;
    char id[BUILD_ID_HEX];

    build_id(&t->elf, id, sizeof(id));
    if (!has_symtab(&t->elf) &&
        (find_by_build_id(t, dirs, id) || find_by_link(t, dirs, id)))
        from = &t->debug;
    /* no symbols at all: the table still gives the mapping its build id
     * and bias, and its frames their addresses */
    if (each_function(from, collect_sym, &c) < 0 || c.failed) {
        free(c.syms);
        c = (struct collect){0};
    }
    t->syms = c.syms;
    t->n = c.n > 0 ? sort_unique(c.syms, c.n) : 0;
    return 0;
}

static struct ty__symtab *
symtab_load(const char *path, uint64_t inode)
{
    struct ty__symtab *t = calloc(1, sizeof(*t));
    uint64_t ino = 0;

    if (t == NULL)
        return NULL;
    if (elf_open(path, &t->elf, &ino) < 0 || ino != inode ||
        (t->path = strdup(path)) == NULL || load_names(t, debug_dirs) < 0) {
        elf_close(&t->elf);
        elf_close(&t->debug);
        free(t->path);
        free(t);
        return NULL;
    }
    t->inode = inode;
    return t;
}

void
ty__symbols_lock(void)
{
    pthread_mutex_lock(&cache_mu);
}

void
ty__symbols_unlock(void)
{
    pthread_mutex_unlock(&cache_mu);
}

/* The cached table of path, loading it on first use. NULL when unusable. */
static struct ty__symtab *
symtab_get(const char *path, uint64_t inode)
{
    struct ty__symtab *t;

    pthread_mutex_lock(&cache_mu);
    for (t = cache; t != NULL; t = t->next)
        if (t->inode == inode && strcmp(t->path, path) == 0)
            break;
    if (t == NULL && (t = symtab_load(path, inode)) != NULL) {
        t->next = cache;
        cache = t;
    }
    pthread_mutex_unlock(&cache_mu);
    return t;
}

static const struct sym *
sym_find(const struct ty__symtab *t, uint64_t v)
{
    size_t lo = 0, hi = t->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (t->syms[mid].value <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    if (t->syms[lo - 1].size != 0 &&
        v >= t->syms[lo - 1].value + t->syms[lo - 1].size)
        return NULL;
    return &t->syms[lo - 1];
}

/* runtime address - ELF address, from the PT_LOAD the mapping came from */
static bool
mapping_bias(const struct elf *e, const struct ty__mapping *m, intptr_t *b)
{
    long page = sysconf(_SC_PAGESIZE);
    uint64_t mask = ~(uint64_t)(page - 1);

    for (size_t i = 0; i < ehdr(e)->e_phnum; i++) {
        const Elf64_Phdr *p = phdr(e, i);

        if (p->p_type != PT_LOAD || (p->p_offset & mask) != m->offset)
            continue;
        *b = (intptr_t)(m->start - (p->p_vaddr & mask));
        return true;
    }
    return false;
}

int
ty__symbolize(struct ty__symbolizer *s, int m, uintptr_t addr,
              const char **name, const char **file)
{
    struct ty__mapping *map;
    const struct sym *sym;

    if (m < 0 || (size_t)m >= s->n)
        return -ENOENT;
    map = &s->maps[m];
    if (!map->loaded) {
        map->loaded = true;
        map->syms = symtab_get(map->path, map->inode);
        if (map->syms != NULL) {
            build_id(&map->syms->elf, map->build_id, sizeof(map->build_id));
            if (!mapping_bias(&map->syms->elf, map, &map->bias))
                map->syms = NULL;
        }
    }
    if (map->syms == NULL)
        return -ENOENT;
    sym = sym_find(map->syms, (uint64_t)((intptr_t)addr - map->bias));
    if (sym == NULL)
        return -ENOENT;
    *name = sym->name;
    *file = sym->file;
    return 0;
}

/* ------------------------------------------------------------------------
 * Mappings
 */

static int
add_mapping(struct ty__symbolizer *s, size_t *cap, const char *line)
{
    unsigned long start, end, off, inode;
    char perms[8];
    int pathat = 0;
    const char *path;

    if (sscanf(line, "%lx-%lx %7s %lx %*x:%*x %lu %n", &start, &end, perms,
               &off, &inode, &pathat) < 5 ||
        pathat == 0 || perms[2] != 'x')
        return 0;
    path = line + pathat;
    if (path[0] != '/' || strstr(path, " (deleted)") != NULL)
        return 0;
    if (s->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 32;
        struct ty__mapping *p = realloc(s->maps, ncap * sizeof(*p));

        if (p == NULL)
            return -ENOMEM;
        s->maps = p;
        *cap = ncap;
    }
    s->maps[s->n] = (struct ty__mapping){
        .start = start, .limit = end, .offset = off, .inode = inode};
    if ((s->maps[s->n].path = strdup(path)) == NULL)
        return -ENOMEM;
    s->n++;
    return 0;
}

/* pprof takes the first mapping for the main binary. */
static void
main_first(struct ty__symbolizer *s)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    if (n <= 0)
        return;
    exe[n] = '\0';
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->maps[i].path, exe) == 0) {
            struct ty__mapping m = s->maps[i];

            memmove(&s->maps[1], &s->maps[0], i * sizeof(m));
            s->maps[0] = m;
            return;
        }
    }
}

int
ty__symbolizer_init(struct ty__symbolizer *s)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char *line = NULL;
    size_t linecap = 0, cap = 0;
    int r = 0;

    s->maps = NULL;
    s->n = 0;
    if (f == NULL)
        return -errno;
    while (r == 0 && getline(&line, &linecap, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        r = add_mapping(s, &cap, line);
    }
    free(line);
    fclose(f);
    if (r < 0)
        ty__symbolizer_release(s);
    else
        main_first(s);
    return r;
}

void
ty__symbolizer_release(struct ty__symbolizer *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->maps[i].path);
    free(s->maps);
    s->maps = NULL;
    s->n = 0;
}

int
ty__symbolizer_find(const struct ty__symbolizer *s, uintptr_t addr)
{
    for (size_t i = 0; i < s->n; i++)
        if (addr >= s->maps[i].start && addr < s->maps[i].limit)
            return (int)i;
    return -1;
}

/* ------------------------------------------------------------------------
 * Frame pointer detection
 */

struct fp_probe {
    uintptr_t bias, lo, hi;
    unsigned seen, framed;
};

static bool
is_runtime_glue(const char *name)
{
    static const char *const glue[] = {"frame_dummy", "register_tm_clones",
                                       "deregister_tm_clones"};

    if (name[0] == '_' || strchr(name, '.') != NULL)
        return true;
    for (size_t i = 0; i < sizeof(glue) / sizeof(glue[0]); i++)
        if (strcmp(name, glue[i]) == 0)
            return true;
    return false;
}

/* A function that saves %rbp first either sets up a frame with it (mov
 * %rsp,%rbp follows within a few instructions, possibly after others the
 * compiler scheduled in between) or uses it as an ordinary register.
 * Functions that do not save %rbp first (leaves, shrink-wrapped prologues)
 * say nothing either way. */
static void
probe_sym(void *arg, const Elf64_Sym *s, const char *name, const char *file)
{
    static const unsigned char endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
    static const unsigned char set_fp[] = {0x48, 0x89, 0xe5};
    struct fp_probe *p = arg;
    uintptr_t at = p->bias + s->st_value;
    const unsigned char *code = (const unsigned char *)at;
    size_t len = s->st_size < FP_PROLOGUE ? s->st_size : FP_PROLOGUE;

    (void)file;
    if (p->seen >= FP_PROBE_MAX || s->st_size < 8 || at < p->lo ||
        at + len > p->hi || is_runtime_glue(name))
        return;
    if (memcmp(code, endbr64, sizeof(endbr64)) == 0) {
        code += sizeof(endbr64);
        len -= sizeof(endbr64);
    }
    if (code[0] != 0x55) /* push %rbp */
        return;
    p->seen++;
    p->framed += memmem(code + 1, len - 1, set_fp, sizeof(set_fp)) != NULL;
}

bool
ty__elf_keeps_frame_pointers(const char *path, uintptr_t bias, uintptr_t lo,
                             uintptr_t hi)
{
    struct fp_probe p = {bias, lo, hi, 0, 0};
    struct elf e;

    if (elf_open(path, &e, NULL) < 0)
        return false;
    each_function(&e, probe_sym, &p);
    elf_close(&e);
    /* Without frame pointers a saved %rbp is almost never followed by
     * mov %rsp,%rbp; with them it almost always is. */
    return p.seen > 0 && p.framed * 10 >= p.seen * 8;
}
