/*
 * test_strbuf.c — the runner's buffer (runner/base/strbuf.c) over the
 * shared one: what it holds, what it hands over, and that a size past
 * size_t ends the process with a message instead of wrapping around.
 */
#include "base/strbuf.h"
#include "th.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void
t_adds(void)
{
    struct strbuf sb;
    char *s;

    strbuf_init(&sb);
    strbuf_adds(&sb, "a");
    strbuf_addc(&sb, '=');
    strbuf_addf(&sb, "%05d", 42);
    strbuf_add(&sb, "xyz", 2);
    CHECK_EQ_STR(sb.buf, "a=00042xy");
    CHECK_EQ_INT(sb.len, 9);
    for (int i = 0; i < 300; i++)
        strbuf_addc(&sb, '.');
    CHECK_EQ_INT(sb.len, 309);
    CHECK_EQ_INT(strlen(sb.buf), 309);
    s = strbuf_detach(&sb);
    CHECK(sb.buf == NULL && sb.len == 0);
    CHECK(strncmp(s, "a=00042xy...", 12) == 0);
    free(s);
    s = strbuf_detach(&sb);
    CHECK_EQ_STR(s, ""); /* nothing added: "", never NULL */
    free(s);
}

static void
t_overflow_fatal(void)
{
    char log[] = "/tmp/ty-strbuf-XXXXXX", text[512] = "";
    int fd = mkstemp(log), status = 0;
    pid_t pid;
    ssize_t n;

    CHECK(fd >= 0);
    pid = fork();
    if (pid == 0) {
        struct strbuf sb = {0};

        dup2(fd, 2);
        strbuf_adds(&sb, "0123456789");
        strbuf_add(&sb, "x", SIZE_MAX - 5);
        _exit(0); /* not reached when the size is refused */
    }
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 70,
              "status %d: wanted exit 70", status);
    n = pread(fd, text, sizeof(text) - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    CHECK_CONTAINS(text, "out of memory growing a buffer of 10 bytes");
    close(fd);
    unlink(log);
}

static const struct th_case cases[] = {
    {"adds", t_adds},
    {"overflow_fatal", t_overflow_fatal},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
