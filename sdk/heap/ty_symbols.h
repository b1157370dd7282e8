/*
 * ty_symbols.h — where code is and what it is called: the executable
 * mappings of this process (/proc/self/maps) and the function names of the
 * ELF files behind them (.symtab; for a stripped file the .symtab of its
 * separate debug file, found by build id or .gnu_debuglink under the debug
 * folders; else .dynsym).
 *
 * Used by heap profiles to fill pprof's mappings, locations and functions.
 * Symbol tables are read once per file and kept, mapped read-only, until the
 * process exits; names returned are borrowed from them and stay valid.
 * Internal to testyard.
 */
#ifndef TY_SYMBOLS_H
#define TY_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ty__symtab;

/* One executable mapping of a file. */
struct ty__mapping {
    uintptr_t start, limit, offset;
    char *path;        /* owned by the symbolizer */
    char build_id[81]; /* lowercase hex, "" when none */
    uint64_t inode;
    struct ty__symtab *syms; /* NULL when the file could not be read; it
                                may hold no names */
    intptr_t bias;           /* runtime address - ELF virtual address */
    bool loaded;             /* symbols looked for */
};

struct ty__symbolizer {
    struct ty__mapping *maps; /* the main program first, then by address */
    size_t n;
};

/* Where separate debug files are looked for by default, and the longest
 * list of folders kept. */
#define TY_SYMBOLS_DEBUG_DIR "/usr/lib/debug"
#define TY_SYMBOLS_DIRS_MAX 4096

/* Look for debug files under these colon-separated folders (each holding
 * .build-id/xx/....debug; relative entries are skipped) from now on; NULL
 * or a list of TY_SYMBOLS_DIRS_MAX bytes or more: the default. Copied;
 * allocates nothing. Files whose names were already read keep them. */
void ty__symbols_debug_dirs(const char *dirs);

/* Read this process's executable file mappings. Returns 0 or -errno. */
int ty__symbolizer_init(struct ty__symbolizer *s);
void ty__symbolizer_release(struct ty__symbolizer *s);

/* Index of the mapping that holds addr, or -1. */
int ty__symbolizer_find(const struct ty__symbolizer *s, uintptr_t addr);

/* The function whose code holds addr (an address inside the mapping at
 * index m). Returns 0 with *name (and *file, the source file when the
 * symbol table says, else NULL) set, or -ENOENT. */
int ty__symbolize(struct ty__symbolizer *s, int m, uintptr_t addr,
                  const char **name, const char **file);

/* Hold the symbol-table cache across fork(): a snapshot thread that was
 * naming frames in the parent would leave the child's copy locked (the
 * heap profiler's fork handlers call these, before its own locks). */
void ty__symbols_lock(void);
void ty__symbols_unlock(void);

/* True when most functions of the ELF file at path, loaded with the given
 * bias, start by setting up a frame pointer (push %rbp; mov %rsp,%rbp),
 * i.e. it was built with -fno-omit-frame-pointer. Only functions whose code
 * lies in [lo, hi) are looked at; it reads that code in memory. */
bool ty__elf_keeps_frame_pointers(const char *path, uintptr_t bias,
                                  uintptr_t lo, uintptr_t hi);

#endif
