/*
 * base/instlog.h — an instance's run.out and run.err as the runner writes them.
 *
 * Each stream is capped: past `limit` bytes only the first and the last
 * half of the limit are kept, with one line between them saying how many
 * bytes were cut. While the instance runs the files live in the runner's
 * own folder, <run>/.runner/<group>/<index>/ (mode 0700, out of the
 * instance's reach); instlog_finish() moves them into the instance's
 * folder <run>/<group>/<index>/ with a rename relative to that folder's
 * descriptor, replacing whatever the instance left under those names (a
 * rename replaces a link, it never follows one).
 *
 * One thread at a time uses an instlog. Ownership: the caller owns the
 * instlog (instlog_destroy); run_fd is borrowed and must outlive it.
 */
#ifndef TY_INSTLOG_H
#define TY_INSTLOG_H

#include "base/err.h"

#include <stddef.h>
#include <stdint.h>

#define INSTLOG_DEFAULT_LIMIT ((uint64_t)64 << 20) /* 64 MiB per stream */
#define INSTLOG_MIN_LIMIT ((uint64_t)4 << 10)      /* 4 KiB */
#define INSTLOG_RUNNER_DIR ".runner"

struct instlog;

/* Create <run_fd>/.runner/<group>/<index>/run.out and run.err (the
 * folders too), each capped at limit bytes (0 = the default). */
struct instlog *instlog_open(int run_fd, const char *group, int index,
                             uint64_t limit, struct err *err);
/* Append to stdout (stream 1) or stderr (stream 2). After a write error
 * the stream stops taking bytes and instlog_finish reports it. */
int instlog_write(struct instlog *l, int stream, const void *data, size_t len,
                  struct err *err);
/* Lay out what was cut and move both files into the instance's folder
 * (made when missing). Idempotent. */
int instlog_finish(struct instlog *l, struct err *err);
/* After instlog_finish, take bytes again for an instance started anew:
 * each stream goes on where it stopped (the cap counts what came before),
 * in a file back in the runner's folder; the next instlog_finish puts the
 * whole stream in place over the one it put there before. A no-op when
 * not finished. */
int instlog_resume(struct instlog *l, struct err *err);
/* Bytes offered to a stream so far (kept or cut). */
uint64_t instlog_total(const struct instlog *l, int stream);
/* Close (without finishing: unfinished files stay in .runner); NULL-safe,
 * sets *l to NULL. */
void instlog_destroy(struct instlog **l);

#endif
