/*
 * syncsvc_auth.c — who may talk to the sync service: the run's secret.
 *
 * The service listens on TCP, where any local user (and, on a shared
 * engine, a container of another run) can reach it. So each run gets a
 * secret of SYNC_SECRET_BYTES random bytes from getrandom, printed as hex;
 * the orchestrator hands it to instances in their environment
 * (TESTYARD_SYNC_SECRET) and every hello must carry it. It is compared in
 * constant time, and a client without it learns nothing: every answer to a
 * connection that has not said a valid hello is the same `denied`, with no
 * run id, instance name or count in it. Refusals are logged with the
 * peer's address, at most one line a second (with how many were not
 * shown), so a client that knocks in a loop cannot flood the log.
 */
#include "sync/syncsvc_int.h"

#include "base/log.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#define REFUSAL_LOG_MS 1000

/* A secret the caller chose: 64 hex digits, nothing else. */
static int
copy_secret(struct syncsvc *svc, const char *given, struct err *err)
{
    size_t n = strlen(given);

    if (n != 2 * SVC_SECRET_BYTES || strspn(given, "0123456789abcdef") != n)
        return err_set(err, EINVAL,
                       "sync service: the secret must be %d hex digits",
                       2 * SVC_SECRET_BYTES);
    memcpy(svc->secret, given, n + 1);
    return 0;
}

int
svc__auth_init(struct syncsvc *svc, const char *given, struct err *err)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[SVC_SECRET_BYTES];
    size_t got = 0;

    if (given != NULL)
        return copy_secret(svc, given, err);
    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return err_sys(err, errno, "sync service: getrandom");
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof(raw); i++) {
        svc->secret[2 * i] = hex[raw[i] >> 4];
        svc->secret[2 * i + 1] = hex[raw[i] & 15];
    }
    svc->secret[2 * sizeof(raw)] = '\0';
    explicit_bzero(raw, sizeof(raw));
    return 0;
}

/* Whether given is the run's secret. The time taken depends on the
 * secret's length and given's, never on where they first differ. */
bool
svc__auth_ok(const struct syncsvc *svc, const char *given)
{
    const size_t n = 2 * SVC_SECRET_BYTES;
    size_t m = given != NULL ? strnlen(given, n + 1) : 0;
    volatile unsigned char diff = m != n;

    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)svc->secret[i] ^
                (unsigned char)(i < m ? given[i] : 0);
    return given != NULL && diff == 0;
}

static void
log_refusal(struct syncsvc *svc, const struct svc_ctx *c, const char *why)
{
    int64_t now = svc__now_ms();
    const char *addr = NULL;

    if (now < svc->refusal_next_ms) {
        svc->refusals_unlogged++;
        return;
    }
    if (c->frame != NULL)
        addr = zmq_msg_gets(c->frame, "Peer-Address");
    if (svc->refusals_unlogged > 0)
        log_warnx("sync service: refused a client at %s: %s (and %llu "
                  "more refusals since the last line)",
                  addr ? addr : "an unknown address", why,
                  (unsigned long long)svc->refusals_unlogged);
    else
        log_warnx("sync service: refused a client at %s: %s",
                  addr ? addr : "an unknown address", why);
    svc->refusals_unlogged = 0;
    svc->refusal_next_ms = now + REFUSAL_LOG_MS;
}

void
svc__auth_refuse(struct syncsvc *svc, const struct svc_ctx *c, int64_t id,
                 const char *why)
{
    svc__reply_status(svc, &c->peer, id, TY_WIRE_DENIED, "%s", SVC_DENIED);
    log_refusal(svc, c, why);
}
