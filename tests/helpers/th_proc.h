/*
 * th_proc.h — processes for tests: running a program, reading what a
 * shell command prints, capturing what a command function prints, and a
 * child that allocates memory (for cgroup limits and the memory monitor).
 *
 * libc only, like every helper, because every test program links them.
 * Returned strings are the caller's to free.
 */
#ifndef TY_TH_PROC_H
#define TY_TH_PROC_H

#include <sys/types.h>

/* Run argv[0] (searched in PATH) without a shell, its stdout to /dev/null
 * so that it cannot mix with the TAP lines; stderr is kept. Returns the
 * exit status (128+signal when killed), -1 when it could not be forked. */
/* This program's path, for exec (readlink of /proc/self/exe, so a child
 * runs this program even under valgrind). */
const char *th_self_exe(void);
int th_run(char *const argv[]);
/* What `sh -c cmd` prints on stdout ("" when nothing or on failure). */
char *th_sh(const char *cmd);
/* Call fn(argc, argv) with stdout going to a file; returns what fn returns
 * and puts what it printed in *out. */
int th_captured(int (*fn)(int, char **), int argc, char **argv, char **out);

/* The allocating child: this test program started again with
 *   --alloc MIB STEP_MS HOLD_MS
 * touches MIB MiB of memory, sleeping STEP_MS after each 8 MiB, then holds
 * it HOLD_MS and exits 0 (2 when it cannot map the memory). A test's main
 * hands such an argv to th_alloc_main before th_main. */
int th_alloc_main(char **argv);
/* Fork; in the child call enter(arg) (moving into a cgroup: exit 100 when
 * it returns < 0), then exec this program as the allocating child (exit
 * 101 when that fails). Returns the child's pid; a fork failure fails the
 * case. */
pid_t th_spawn_alloc(int (*enter)(const void *arg), const void *arg,
                     const char *mib, const char *step_ms, const char *hold_ms);
/* Wait for pid; its wait status. */
int th_wait(pid_t pid);

#endif
