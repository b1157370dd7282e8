/*
 * comp_fixture.h — loading a composition written by a test, for
 * tests/unit/config/test_composition*.c (linked into every unit test).
 *
 * The composition is <tmp>/comps/<name>, next to <tmp>/plans/ms whose
 * manifest.yaml is the test's, so global.plan: ms finds it. Runners are
 * the backends' registry unless the test gives its own.
 */
#ifndef TY_COMP_FIXTURE_H
#define TY_COMP_FIXTURE_H

#include "config/config.h"

/* Load text as comps/<name> with opts (o.runners NULL: the registry's);
 * err is cleared first. Caller owns the result (NULL after filling err). */
struct composition *comp_fixture_load(const char *manifest, const char *name,
                                      const char *text,
                                      struct composition_opts o,
                                      struct err *err);
/* What composition_to_json gives for that composition, unformatted and
 * without its "composition" key (the file's path); "" after a failed
 * check when it does not load. Caller owns it. */
char *comp_fixture_json(const char *manifest, const char *name,
                        const char *text);

#endif
