/*
 * base/jsonpretty.h — JSON text for people: two-space indents, one member or
 * element per line, "key": value, empty containers as {} and [], a final
 * newline (the layout jq prints). cJSON's own pretty printer uses tabs and
 * keeps arrays on one line.
 */
#ifndef TY_JSONPRETTY_H
#define TY_JSONPRETTY_H

#include <cjson/cJSON.h>

/* The text of item; caller owns it. */
char *jsonpretty_print(const cJSON *item);

#endif
