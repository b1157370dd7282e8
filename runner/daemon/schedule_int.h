/*
 * daemon/schedule_int.h — recurring runs: when a schedule fires, how it is
 * kept in the database, and the build and version taken before each run.
 *
 * Private to runner/daemon/. The daemon's firing loop and `testyard
 * schedule` call these; nothing here starts a task (the daemon does).
 *
 *   spec      "every DURATION" (anchored on the schedule's creation) or
 *             "cron M H DOM MON DOW" computed on the wall clock of an IANA
 *             time zone read from its TZif file (schedule_tz.c)
 *   next/due  the next firing after a time; the one firing owed for any
 *             number of missed ones (the latest)
 *   db        tables `schedules` and `schedule_firings`, one transaction
 *             per change
 *   build     `/bin/sh -c CMD` in a folder, output to a capped log, with a
 *             deadline that kills its process group; the git version of a
 *             folder
 *   clock     TESTYARD_CLOCK, a testing hook that sets "now"
 *
 * Times are unix seconds (int64_t) throughout. Errors as everywhere in the
 * runner: 0 or a pointer on success, -1 or NULL with err filled.
 * Ownership: `char *` fields of what a function fills are the caller's,
 * released with the matching *_release; `const char *` are borrowed.
 */
#ifndef TY_SCHEDULE_INT_H
#define TY_SCHEDULE_INT_H

#include "base/err.h"

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- time zones (schedule_tz.c) ---- */

struct schedule_tz;

/* Load the zone `name`: "UTC" (also "" or NULL; built in) or an IANA name
 * ("Europe/Berlin") read from $TZDIR or /usr/share/zoneinfo. ENOENT for
 * an unknown zone, EINVAL for a name with "..", a leading "/" or odd
 * characters, or a file that is not TZif. Caller owns the result. */
struct schedule_tz *schedule__tz_load(const char *name, struct err *err);
void schedule__tz_destroy(struct schedule_tz **tz);
/* The zone's name as loaded ("UTC" for the built-in one). Borrowed. */
const char *schedule__tz_name(const struct schedule_tz *tz);
/* Seconds east of UTC in effect at t (NULL tz: UTC, 0). */
int32_t schedule__tz_offset(const struct schedule_tz *tz, int64_t t);

/* Civil dates (proleptic Gregorian): days since 1970-01-01 and back. */
int64_t schedule__days_from_civil(int64_t y, int m, int d);
void schedule__civil_from_days(int64_t days, int64_t *y, int *m, int *d);
/* a / b rounded down (b > 0). */
int64_t schedule__floor_div(int64_t a, int64_t b);

/* ---- specs (schedule_spec.c, schedule_next.c) ---- */

enum schedule_kind { SCHEDULE_EVERY, SCHEDULE_CRON };

/* A parsed cron expression: one bit per allowed value. */
struct schedule_cron {
    uint64_t minute; /* bits 0..59 */
    uint32_t hour;   /* bits 0..23 */
    uint32_t dom;    /* bits 1..31 */
    uint16_t month;  /* bits 1..12 */
    uint8_t dow;     /* bits 0..6, 0 = Sunday (7 is folded into 0) */
    bool dom_any;    /* the field was "*": unrestricted */
    bool dow_any;
    bool fixed_time; /* neither minute nor hour holds a '*': a time that a
                      * spring-forward skips fires at the jump */
};

struct schedule_spec {
    enum schedule_kind kind;
    int64_t every_s;           /* SCHEDULE_EVERY: the period, >= 60 */
    struct schedule_cron cron; /* SCHEDULE_CRON */
    int64_t created_s;         /* the anchor of "every"; no firing before */
    struct schedule_tz *tz;    /* owned; cron times are this zone's wall
                                * clock */
};

#define SCHEDULE_EVERY_MIN_S 60

/* "5 * * * *" → *out. Errors name the field, what was found and what was
 * expected: `field 3 (day of month): found "32", expected a number from
 * 1 to 31` (EINVAL). A spec that can never fire ("0 0 31 2 *") is refused
 * too. */
int schedule__cron_parse(const char *expr, struct schedule_cron *out,
                         struct err *err);
/* "24h", "1h30m" (the project's duration parser) → whole seconds, at least
 * SCHEDULE_EVERY_MIN_S (EINVAL otherwise). */
int schedule__every_parse(const char *dur, int64_t *every_s, struct err *err);
/* The spec text kept in the database: "every 24h" or "cron 30 2 * * *"
 * (what `schedule add --every X` / `--cron X` stores: "every " or "cron "
 * then the option's value). With the zone name (NULL: UTC) and the
 * creation time. On failure nothing is left to release. */
int schedule__spec_init(struct schedule_spec *spec, const char *text,
                        const char *tz, int64_t created_s, struct err *err);
void schedule__spec_release(struct schedule_spec *spec);

/* The first firing strictly after `after_s`, never before or at
 * created_s; INT64_MAX when there is none (cannot happen for a spec that
 * parsed, kept for safety). */
int64_t schedule__next(const struct schedule_spec *spec, int64_t after_s);
/* The latest firing at or before now_s, or -1 when there is none after
 * created_s. */
int64_t schedule__prev(const struct schedule_spec *spec, int64_t now_s);
/* Is a firing owed? last_fired_s: the firing time last acted on (< 0:
 * never, created_s counts). 1 with *fire_s the latest firing in
 * (last_fired_s, now_s] — one, however many were missed — else 0. */
int schedule__due(const struct schedule_spec *spec, int64_t last_fired_s,
                  int64_t now_s, int64_t *fire_s);

/* ---- the clock (schedule_build.c) ---- */

/* Now, in unix seconds. A testing hook: when TESTYARD_CLOCK is set it is
 * an RFC 3339 time, or the path of a file holding one (read on every
 * call, so a test moves time by rewriting it), and that is "now"; a value
 * that cannot be read is -1 with err filled (no silent fallback). Unset
 * or empty: the real clock. */
int64_t schedule__clock_now(struct err *err);

/* ---- the database (schedule_db.c) ---- */

#define SCHEDULE_SCHEMA_VERSION 2

/* Create or upgrade the tables (and the shared `schema` table) in one
 * transaction; refuses (EPROTO) a database whose schedules schema is newer
 * than this program. */
int schedule__migrate(sqlite3 *db, struct err *err);

/* One schedule. On input (schedule__add) the strings are borrowed; filled
 * by schedule__get/list they are owned (schedule__row_release). */
struct schedule_row {
    int64_t id;
    char *name;         /* unique: letters, digits, . _ - (64 at most) */
    char *composition;  /* absolute path */
    char *plans;        /* absolute folder or NULL */
    char *spec;         /* "every 24h" | "cron M H DOM MON DOW" */
    char *tz;           /* IANA name or "UTC" (NULL on input: UTC) */
    char *build;        /* shell command or NULL */
    char *version_from; /* folder or NULL */
    int priority;
    int64_t build_timeout_s; /* the build's deadline; 0: none */
    int64_t created_s;
    bool paused;
    int64_t last_fired_s; /* the firing time last acted on (or the time
                           * of the last resume: firings owed while
                           * paused are dropped); -1 never */
};
void schedule__row_release(struct schedule_row *r);

/* Insert r (its spec and zone are checked by parsing them; the name must
 * be new: EEXIST "schedule \"x\" exists"); *id gets its id (id may be
 * NULL). */
int schedule__add(sqlite3 *db, const struct schedule_row *r, int64_t *id,
                  struct err *err);
/* By name; ENOENT `no schedule named "x"`. */
int schedule__get(sqlite3 *db, const char *name, struct schedule_row *out,
                  struct err *err);
/* All schedules by name; *rows (owned, schedule__rows_free) and *n. */
int schedule__list(sqlite3 *db, struct schedule_row **rows, size_t *n,
                   struct err *err);
void schedule__rows_free(struct schedule_row *rows, size_t n);
/* Remove a schedule and its firings (ENOENT when none). */
int schedule__remove(sqlite3 *db, const char *name, struct err *err);
/* Pause, or resume at now_s (last_fired moves to now_s, so what was owed
 * while paused does not fire). ENOENT when none; pausing a paused one is
 * no error. */
int schedule__pause(sqlite3 *db, const char *name, struct err *err);
int schedule__resume(sqlite3 *db, const char *name, int64_t now_s,
                     struct err *err);

/* What a firing did. Strings borrowed on input, owned when read back
 * (schedule__firings_free). */
struct schedule_firing {
    int64_t id;
    int64_t schedule_id;
    int64_t fire_s;       /* the scheduled time it stands for */
    int64_t started_s;    /* when the daemon acted on it */
    int64_t task_id;      /* 0: none (yet) */
    char *build_log;      /* path of the build's log, NULL: no build */
    double build_seconds; /* < 0: no build */
    char *build_status;   /* "ok", "build-failed", or NULL: no build */
    char *version;        /* git commit (maybe "-dirty"), NULL: none */
};
/* Record a firing and move the schedule's last_fired to f->fire_s, in
 * one transaction; sets f->id. Record it before the build and the task
 * start, so a crash then does not fire it again; fill in the rest with
 * schedule__firing_update. */
int schedule__firing_add(sqlite3 *db, struct schedule_firing *f,
                         struct err *err);
/* Rewrite task_id, build_log, build_seconds, build_status and version of
 * firing f->id. */
int schedule__firing_update(sqlite3 *db, const struct schedule_firing *f,
                            struct err *err);
/* The latest `limit` firings of a schedule, newest first. */
int schedule__firings(sqlite3 *db, int64_t schedule_id, size_t limit,
                      struct schedule_firing **out, size_t *n, struct err *err);
void schedule__firings_free(struct schedule_firing *f, size_t n);

/* ---- build and version (schedule_build.c) ---- */

#define SCHEDULE_BUILD_LOG_MAX (8u << 20)

/* How a build went. "build-failed" (status non-zero, killed, timed out,
 * or its folder missing) is a task outcome of its own. */
struct schedule_build {
    bool ok;          /* exit status 0 */
    bool timed_out;   /* killed (its process group) at the deadline */
    bool stopped;     /* killed (its process group) for a stop */
    int exit_status;  /* 0..255, 128+signal; -1 when it did not run */
    double seconds;   /* wall time it took */
    bool log_cut;     /* the output reached SCHEDULE_BUILD_LOG_MAX */
    char reason[256]; /* "" when ok, else "build exited with status 2",
                       * "build timed out after 10m00s", ... */
};
/* NULL for a build that succeeded, else "build-failed". */
const char *schedule__build_outcome(const struct schedule_build *b);
/* Run `/bin/sh -c cmd` in cwd with stdin /dev/null, stdout and stderr into
 * log_path (created or truncated, mode 0644; a "$ cmd" line first and a
 * closing line with the status), at most SCHEDULE_BUILD_LOG_MAX bytes of
 * output; timeout_ns > 0 kills its whole process group then. Returns 0
 * when out says how it went (a failed build too), -1 only when the log
 * cannot be written or no process started (err: a full disk is ENOSPC
 * with status 74). stop (NULL: none) kills it when it becomes true, as
 * the timeout does: out->stopped. */
int schedule__build(const char *cmd, const char *cwd, const char *log_path,
                    int64_t timeout_ns, const atomic_bool *stop,
                    struct schedule_build *out, struct err *err);
/* `git -C dir rev-parse HEAD`, with "-dirty" added when `git status
 * --porcelain` prints anything, into out (at least 72 bytes). -1 (and
 * git's first line of error) when dir is no git work tree. */
int schedule__version(const char *dir, char *out, size_t len, struct err *err);

#endif
