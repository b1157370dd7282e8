/*
 * token.c — the bearer token every API request carries: 64 hex digits of
 * getrandom(2) in DATA/token (0600), made at the daemon's first start and
 * read by the command line; compared in constant time.
 */
#include "daemon/daemon_int.h"

#include "base/fsat.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static bool
is_token(const char *s, size_t len)
{
    if (len != DAEMON_TOKEN_LEN)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

int
daemon__random_token(char out[DAEMON_TOKEN_LEN + 1], struct err *err)
{
    unsigned char raw[DAEMON_TOKEN_LEN / 2];

    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        return err_sys(err, errno, "getrandom");
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

static int
create(int datafd, char out[DAEMON_TOKEN_LEN + 1], struct err *err)
{
    cleanup_close int fd = -1;

    if (daemon__random_token(out, err) < 0)
        return -1;
    /* O_EXCL: two first starts racing keep one token */
    fd =
        fsat_open(datafd, DAEMON_TOKEN, O_WRONLY | O_CREAT | O_EXCL, 0600, err);
    if (fd < 0)
        return err_prefix(err, "%s", DAEMON_TOKEN);
    if (fd_write_all(fd, out, DAEMON_TOKEN_LEN) < 0 ||
        fd_write_all(fd, "\n", 1) < 0 || fsync(fd) < 0) {
        err_sys(err, errno, "%s", DAEMON_TOKEN);
        unlinkat(datafd, DAEMON_TOKEN, 0);
        return -1;
    }
    return 0;
}

int
daemon__token_load(int datafd, bool make, char out[DAEMON_TOKEN_LEN + 1],
                   struct err *err)
{
    struct err e = {0};
    size_t len;
    cleanup_free char *s = fsat_read(datafd, DAEMON_TOKEN, 256, &len, &e);
    struct stat st;

    if (s == NULL && e.code == ENOENT && make)
        return create(datafd, out, err);
    if (s == NULL) {
        *err = e;
        return err_prefix(err, "%s", DAEMON_TOKEN);
    }
    if (len > 0 && s[len - 1] == '\n')
        s[--len] = '\0';
    if (!is_token(s, len))
        return err_set(err, EINVAL, "%s: expected 64 hex digits", DAEMON_TOKEN);
    if (make && fstatat(datafd, DAEMON_TOKEN, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        (st.st_mode & 077) != 0)
        return err_set(err, EPERM,
                       "%s: readable by others (mode %o); chmod 600 it",
                       DAEMON_TOKEN, st.st_mode & 0777);
    memcpy(out, s, DAEMON_TOKEN_LEN + 1);
    return 0;
}

bool
daemon__token_equal(const char *given, const char *token)
{
    size_t n = given ? strlen(given) : 0;
    unsigned char diff = n != DAEMON_TOKEN_LEN;

    /* every byte is looked at whatever differs, so the time says nothing
     * of how much of a guess was right */
    for (size_t i = 0; i < DAEMON_TOKEN_LEN; i++)
        diff |= (unsigned char)(token[i] ^ (i < n ? given[i] : 0));
    return diff == 0;
}
