/*
 * suggest.c — edit distances for "did you mean ...?" (see
 * config/suggest_int.h).
 *
 * Error messages for unknown keys, parameters and enum values call this with
 * the names that would have been accepted. The inputs are short, so the
 * plain dynamic-programming table (three rows, for the swap case) is
 * plenty.
 */
#include "config/suggest_int.h"

#include <ctype.h>
#include <string.h>

static size_t
lower_copy(char *dst, const char *src)
{
    size_t n = 0;

    while (n < SUGGEST_MAX_LEN && src[n] != '\0') {
        dst[n] = (char)tolower((unsigned char)src[n]);
        n++;
    }
    dst[n] = '\0';
    return n;
}

static size_t
min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;

    return m < c ? m : c;
}

size_t
suggest__distance(const char *a, const char *b)
{
    char s[SUGGEST_MAX_LEN + 1], t[SUGGEST_MAX_LEN + 1];
    size_t rows[3][SUGGEST_MAX_LEN + 1];
    size_t n = lower_copy(s, a), m = lower_copy(t, b);
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

    for (size_t j = 0; j <= m; j++)
        prev[j] = j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t cost = s[i - 1] == t[j - 1] ? 0 : 1;

            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && s[i - 1] == t[j - 2] &&
                s[i - 2] == t[j - 1] && prev2[j - 2] + 1 < cur[j])
                cur[j] = prev2[j - 2] + 1;
        }
        size_t *tmp = prev2;
        prev2 = prev;
        prev = cur;
        cur = tmp;
    }
    return prev[m];
}

static size_t
max_edits(const char *word)
{
    size_t len = strlen(word);

    if (len < 4)
        return 1;
    return len < 8 ? 2 : 3;
}

const char *
suggest__closest(const char *word, const char *const *cands, size_t ncands)
{
    const char *best = NULL;
    size_t best_d = max_edits(word) + 1;

    for (size_t i = 0; i < ncands; i++) {
        size_t d = suggest__distance(word, cands[i]);

        /* "a" is one edit from "id" but nobody meant it: an edit count
         * as long as the candidate itself is no suggestion. */
        if (d < best_d && d < strlen(cands[i])) {
            best = cands[i];
            best_d = d;
        }
    }
    return best;
}
