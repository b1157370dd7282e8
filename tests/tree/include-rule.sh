#!/bin/bash
# The include rule of docs/style.md (scripts/check-includes, run by
# `make lint`): clean on the tree as it is, and each kind of breach planted
# in a copy of the tree is named with its file and line.
set -u
cd "$(dirname "$0")/../.." || exit 1
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; shift; printf '#   %s\n' "$@"; }

if out=$(scripts/check-includes 2>&1) && [ -z "$out" ]; then
    ok "the tree keeps the rule"
else
    notok "the tree keeps the rule" "$out"
fi

copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
git ls-files -z | tar --null -cf - -T - | tar -xf - -C "$copy"

# plant FILE LINE: insert LINE after the first include of FILE.
plant() {
    local f=$copy/$1
    awk -v l="$2" 'done != 1 && /^#include/ { print; print l; done = 1; next } { print }' \
        "$f" >"$f.new" && mv "$f.new" "$f"
}

# expect_breach DESC FILE TEXT: the checker fails and names FILE:line with TEXT
expect_breach() {
    local out rc
    out=$(cd "$copy" && scripts/check-includes 2>&1)
    rc=$?
    if [ $rc -eq 1 ] && printf '%s\n' "$out" | grep -q -F "$2:" &&
        printf '%s\n' "$out" | grep -q -F "$3"; then
        ok "$1"
    else
        notok "$1" "status $rc, wanted 1 and a line $2:N ... $3" "$out"
    fi
}

reset() {
    rm -rf "$copy" && mkdir -p "$copy" &&
        git ls-files -z | tar --null -cf - -T - | tar -xf - -C "$copy"
}

plant runner/run/run.c '#include "docker/docker_int.h"'
expect_breach "a foreign module's private header" runner/run/run.c \
    "docker/docker_int.h, private to runner/docker/"

reset
plant runner/cmd_run.c '#include "report/report_int.h"'
expect_breach "the command line takes a module's private header" \
    runner/cmd_run.c "report/report_int.h, private to runner/report/"

reset
plant runner/report/report.c '#include "util.h"'
expect_breach "a runner header not written from runner/" \
    runner/report/report.c '"base/util.h"'

reset
plant runner/sync/syncsvc.c '#include "ty_conn.h"'
expect_breach "the runner reaches past sdk/common" runner/sync/syncsvc.c \
    "sdk/common/ only"

reset
plant sdk/common/ty_io.c '#include "ty_int.h"'
expect_breach "sdk/common reaches into the SDK" sdk/common/ty_io.c \
    "sdk/common/ includes nothing but sdk/common/"

reset
plant plans/placebo/main.c '#include "ty_int.h"'
expect_breach "a plan reaches SDK internals" plans/placebo/main.c \
    "testyard.h and its own files only"

# white-box tests may include a module's private header
reset
plant tests/unit/base/test_tar.c '#include "report/report_int.h"'
if out=$(cd "$copy" && scripts/check-includes 2>&1); then
    ok "tests may include private headers"
else
    notok "tests may include private headers" "$out"
fi
