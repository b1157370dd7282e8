# shellcheck shell=bash
# tests/e2e/install.sh — `make install` gives a working program elsewhere:
# the installed testyard finds its SDK, plans and templates under PREFIX,
# compiles the placebo plan against the installed SDK and runs it, and a
# program built with `pkg-config testyard` links.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

prefix="$RUNS/prefix"
if make -s BUILD="$RUNS/build" PREFIX="$prefix" install >"$RUNS/install.log" 2>&1; then
    ok "make install PREFIX=..."
else
    not_ok "make install PREFIX=..."
    sed 's/^/#   /' "$RUNS/install.log" | tail -n 20
fi

for f in bin/testyard lib/libtestyard.a lib/libtestyard.so \
    lib/libtestyard-heap.so include/testyard.h lib/pkgconfig/testyard.pc \
    share/testyard/plans/placebo/manifest.yaml \
    share/testyard/docker/Dockerfile.plan; do
    check "installed $f" [ -f "$prefix/$f" ]
done

f=$(composition installed <<'EOF2'
global: {plan: placebo, case: barrier, runner: local:exec}
groups: [{id: g, instances: {count: 2}}]
EOF2
)
(cd "$RUNS" && TESTYARD_CACHE="$RUNS/cache" "$prefix/bin/testyard" run \
    --runs "$RUNS/installed-runs" --run-id inst "$f" >"$RUNS/inst.log" 2>&1)
rc=$?
check_eq "the installed program runs placebo with the installed SDK" "$rc" 0
[ "$rc" = 0 ] || sed 's/^/#   /' "$RUNS/inst.log" | tail -n 20
check "it compiled against the installed header" \
    grep -q -- "-I $prefix/include" "$RUNS"/cache/plans/placebo-*/build.log

cat >"$RUNS/hello.c" <<'EOF2'
#include <testyard.h>
static int run(struct ty *ty) { (void)ty; return 0; }
static const struct ty_case cases[] = {{"ok", run}, {NULL, NULL}};
int main(int argc, char **argv) { return ty_main(argc, argv, cases); }
EOF2
read -r -a flags <<<"$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" \
    pkg-config --cflags --libs testyard)"
if cc -o "$RUNS/hello" "$RUNS/hello.c" "${flags[@]}" >"$RUNS/cc.log" 2>&1; then
    ok "a plan links with pkg-config testyard"
    check "and runs standalone" env TEST_CASE=ok LD_LIBRARY_PATH="$prefix/lib" \
        TEST_OUTPUTS_PATH="$RUNS" "$RUNS/hello"
else
    not_ok "a plan links with pkg-config testyard"
    sed 's/^/#   /' "$RUNS/cc.log"
fi

finish
