/*
 * config/suggest_int.h — "did you mean ...?" for misspelt keys, parameter names
 * and enum values.
 *
 * Distances are optimal-string-alignment edit distances (insert, delete,
 * substitute, swap two neighbours) over the ASCII-lowercased words, so
 * `memroy` is one edit from `memory` and `Runner` none from `runner`.
 * Nothing here allocates on the caller's behalf; returned strings are
 * borrowed from the candidates passed in.
 */
#ifndef TY_SUGGEST_H
#define TY_SUGGEST_H

#include <stddef.h>

/* Edit distance between a and b, ignoring ASCII case. Words longer than
 * SUGGEST_MAX_LEN bytes are compared by their first SUGGEST_MAX_LEN. */
#define SUGGEST_MAX_LEN 64
size_t suggest__distance(const char *a, const char *b);

/* The candidate closest to word when it is close enough to be a likely
 * typo (one edit for words under 4 letters, two under 8, three beyond),
 * the first of equals winning; NULL when none is. Borrowed from cands. */
const char *suggest__closest(const char *word, const char *const *cands,
                             size_t ncands);

#endif
