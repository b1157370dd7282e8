/*
 * test_buf.c — the shared growable buffer (sdk/common/ty_buf.c): growth
 * past the first capacity, formatting, and a size past size_t refused
 * without touching what the buffer holds.
 */
#include "th.h"
#include "ty_buf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void
t_grows(void)
{
    struct ty__buf b = {0};
    size_t caps = 0, last = 0;

    for (int i = 0; i < 1000; i++) {
        CHECK_EQ_INT(ty__buf_addc(&b, (char)('a' + i % 26)), 0);
        if (b.cap != last) {
            CHECK_MSG(last == 0 ? b.cap == TY__BUF_MIN : b.cap == last * 2,
                      "capacity %zu after %zu", b.cap, last);
            last = b.cap;
            caps++;
        }
    }
    CHECK_EQ_INT(b.len, 1000);
    CHECK_EQ_INT(strlen(b.buf), 1000);
    CHECK_EQ_INT(caps, 3); /* 256, 512, 1024 */
    CHECK(b.buf[0] == 'a' && b.buf[999] == 'a' + 999 % 26);
    CHECK(!b.oom);
    ty__buf_release(&b);
    CHECK(b.buf == NULL && b.len == 0 && b.cap == 0);
}

static void
t_formats(void)
{
    struct ty__buf b = {0};
    char big[700];

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    CHECK_EQ_INT(ty__buf_addf(&b, "%d-%s", 42, "a"), 0);
    CHECK_EQ_INT(ty__buf_adds(&b, "|"), 0);
    CHECK_EQ_INT(ty__buf_addf(&b, "%s", big), 0);
    CHECK_EQ_INT(b.len, 5 + 699);
    CHECK(strncmp(b.buf, "42-a|xxx", 8) == 0);
    CHECK_EQ_INT(ty__buf_add(&b, NULL, 0), 0);
    CHECK_EQ_INT(b.len, 704);
    ty__buf_release(&b);
}

static void
t_overflow_refused(void)
{
    struct ty__buf b = {0};

    CHECK_EQ_INT(ty__buf_adds(&b, "kept"), 0);
    CHECK_EQ_INT(ty__buf_reserve(&b, SIZE_MAX - 4), -ENOMEM);
    CHECK(b.oom);
    CHECK_EQ_STR(b.buf, "kept");
    CHECK_EQ_INT(b.len, 4);
    /* sticky: later additions do nothing */
    CHECK_EQ_INT(ty__buf_adds(&b, "more"), -ENOMEM);
    CHECK_EQ_STR(b.buf, "kept");
    ty__buf_release(&b);
    CHECK(!b.oom);
    CHECK_EQ_INT(ty__buf_add(&b, "x", SIZE_MAX), -ENOMEM);
    CHECK(b.buf == NULL && b.oom);
    ty__buf_release(&b);
}

static const struct th_case cases[] = {
    {"grows", t_grows},
    {"formats", t_formats},
    {"overflow_refused", t_overflow_refused},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}
