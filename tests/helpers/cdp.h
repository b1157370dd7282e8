/*
 * cdp.h — what the two files of the browser driver share: cdp.c reads
 * the script and runs its steps, cdp_proto.c starts and stops Chromium
 * and speaks the DevTools protocol to it over the pipe. Private to them
 * (not one of the helpers linked into the tests).
 *
 * Errors: a function that can fail returns -1 (or NULL) after writing
 * its reason into `why`, a buffer of CDP_WHY bytes. Deadlines are in
 * milliseconds of cdp_now_ms().
 */
#ifndef CDP_H
#define CDP_H

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ty_buf.h"

#define CDP_WHY 1024
#define CDP_LOADS 8

struct cdp {
    pid_t pid;         /* Chromium, leader of its own process group; 0: none */
    int to_fd;         /* its fd 3 */
    int from_fd;       /* its fd 4 */
    char tmp[256];     /* the profile and its log, removed at the end */
    struct ty__buf in; /* bytes read that do not yet end a message */
    size_t scanned;    /* bytes of `in` known to hold no NUL */
    int next_id;
    char session[128];
    bool dismiss;
    bool gone;                 /* the pipe closed or the page crashed */
    char loads[CDP_LOADS][64]; /* loaderIds whose load event came */
    int nloads;
    int status;     /* HTTP status of the last document response */
    cJSON *headers; /* for Network.setExtraHTTPHeaders */
};

/* Chromium's --window-size ("W,H"); every message on stderr when set;
 * the signal that came (SIGINT, SIGTERM, SIGHUP), which are blocked but
 * inside the waits of cdp_proto.c (cdp_run_mask). */
extern const char *cdp_window_size;
extern bool cdp_verbose;
extern volatile sig_atomic_t cdp_signal;
extern sigset_t cdp_run_mask;

int64_t cdp_now_ms(void);
void cdp_fail(char *why, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Sleep ms, or less when a signal comes. */
void cdp_nap(int64_t ms);
/* o's string member key, or NULL (borrowed). */
const char *cdp_str_at(const cJSON *o, const char *key);
/* What an exceptionDetails says: the exception's description, else its
 * text, else "?" (borrowed). */
const char *cdp_exception_text(const cJSON *details);

/* Handle what Chromium sends until deadline or until the answer to id
 * (returned, the caller's); NULL with why filled otherwise. id 0: return
 * after one message, its event handled (a non-NULL not to be freed). */
cJSON *cdp_pump(struct cdp *c, int id, int64_t deadline, char *why);
/* Run a command, to the page when to_page (params is taken): its result,
 * the caller's, or NULL with why filled ("Page.navigate: timed out"). */
cJSON *cdp_call(struct cdp *c, const char *method, cJSON *params, bool to_page,
                int64_t deadline, char *why);
/* cdp_call to the page, for commands whose result is not needed. */
int cdp_run_cmd(struct cdp *c, const char *method, cJSON *params,
                int64_t deadline, char *why);

/* Start Chromium ($CHROMIUM, default /usr/bin/chromium) with a fresh
 * profile in a temporary folder ($TMPDIR, default /tmp). */
int cdp_start(struct cdp *c, char *why);
/* Create a page, attach to it and enable what the steps use. */
int cdp_attach(struct cdp *c, int64_t deadline, char *why);
/* Close Chromium, kill what is left of it, remove the folder. */
void cdp_stop(struct cdp *c);
/* What Chromium wrote on stderr, to stderr (after a failed start). */
void cdp_log_tail(const struct cdp *c);

#endif
