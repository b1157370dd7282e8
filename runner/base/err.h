/*
 * base/err.h — the error object every fallible runner function takes last.
 *
 * A function that can fail takes `struct err *err` as its last argument,
 * returns 0 (or a non-NULL pointer) on success and -1 (or NULL) after filling
 * `err`. Callers add context with err_prefix() and return; only main() and the
 * cmd_* functions print an error, once, and pick the exit status from
 * err->status. The struct is held by value by the caller; nothing in it is
 * heap-allocated. Messages longer than ERR_MSG_MAX - 1 bytes are cut
 * there. None of these functions changes errno, so `err_sys(err, errno,
 * ...)` may be followed by a look at errno.
 *
 * An error that a caller recovers from (a fallback taken, a file that may
 * be missing) is cleared with err_clear() before the struct is used
 * again, so that its message cannot show up in a later error or be
 * printed as if it were one.
 */
#ifndef TY_ERR_H
#define TY_ERR_H

#include <stdarg.h>

/* sysexits codes used as exit statuses (see README "Exit status"). */
enum {
    EXIT_PLAN_FAILED = 1,
    EXIT_USAGE = 64,
    EXIT_DATAERR = 65,     /* bad composition or manifest */
    EXIT_NOINPUT = 66,     /* a file named on the command line is missing */
    EXIT_UNAVAILABLE = 69, /* Docker or another needed service */
    EXIT_SOFTWARE = 70,    /* internal error */
    EXIT_OSERR = 71,
    EXIT_CANTCREAT = 73,
    EXIT_IOERR = 74,
    EXIT_CANCELED = 130, /* run canceled by SIGINT / SIGTERM */
};

#define ERR_MSG_MAX 1024

struct err {
    int code;   /* errno-style code, 0 when unset */
    int status; /* exit status the CLI should use, 0 = pick default */
    char msg[ERR_MSG_MAX];
};

/* Fill err (may be NULL) with a new error and return -1: code and
 * message, and no status (err_status sets one after), so nothing of an
 * error before it is left. */
int err_set(struct err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Like err_set, with the message of strerror(code) appended after ": ". */
int err_sys(struct err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Set the exit status the CLI should use for this error; returns -1. */
int err_status(struct err *err, int status);
/* Prepend "<context>: " to the message; returns -1. */
int err_prefix(struct err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Forget the error: code, status and message (NULL-safe). */
void err_clear(struct err *err);
/* The exit status for an output that could not be written because of
 * errno code: 74 (EXIT_IOERR) for a full disk or an I/O error, 73
 * (EXIT_CANTCREAT) otherwise. */
int err_io_status(int code);

/* The first failure to write one of the runner's own outputs on a thread
 * that has no caller to return it to (the log pumps and followers that
 * write run.out and run.err); the run picks it up at its end and exits
 * 73 or 74 with it. Thread-safe; later notes are dropped. */
void err_output_note(const struct err *e);
/* 1 with *out filled (and the note cleared) when one was noted, else 0. */
int err_output_take(struct err *out);

#endif
