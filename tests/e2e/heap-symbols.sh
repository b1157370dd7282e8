# shellcheck shell=bash
# tests/e2e/heap-symbols.sh — a stripped program under the LD_PRELOAD heap
# profiler, as a distribution's daemon comes: heap_prog.c built with cc,
# split with objcopy --only-keep-debug / strip --strip-all /
# objcopy --add-gnu-debuglink. With its debug file under
# TESTYARD_HEAP_DEBUG_DIRS (.build-id/xx/rest.debug), or found through its
# .gnu_debuglink, the profile names prog_keep_blocks; without, the frame
# keeps its address and mapping (build id, offset) and no line, reads
# heap_prog+0x<offset> in the report (an offset addr2line names against
# the debug file), the sidecar counts it unsymbolized, and the report says
# how many frames have no symbols and how to get them.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

BUILD=${BUILD:-build}
lib=$PWD/$BUILD/libtestyard-heap.so
d=$RUNS/sym
mkdir -p "$d/dbg" "$d/none"
for tool in cc objcopy strip readelf addr2line; do
    if ! command -v "$tool" >/dev/null; then
        skip "stripped programs" "$tool missing"
        finish
        exit
    fi
done
check "$lib exists (make tests)" test -f "$lib"

# split OUT [LDFLAGS...] — build heap_prog as OUT, its debug file as
# OUT.debug, and strip OUT with a .gnu_debuglink to it.
split() {
    local out=$1
    shift
    cc -O2 -g -fno-omit-frame-pointer "$@" -o "$out" tests/e2e/heap_prog.c &&
        objcopy --only-keep-debug "$out" "$out.debug" &&
        strip --strip-all "$out" &&
        objcopy --add-gnu-debuglink="$out.debug" "$out"
}

# profile DIR [VAR=value...] — run $d/heap_prog under the profiler with
# its files in DIR; its stderr in DIR/err.
profile() {
    local out=$1
    shift
    mkdir -p "$out"
    env TESTYARD_HEAP_DIR="$out" TESTYARD_HEAP_PEAK_STEP=off "$@" \
        LD_PRELOAD="$lib" "$d/heap_prog" 2>"$out/err"
}

# sidecar DIR JQ — a member of DIR's exit sidecar.
sidecar() {
    jq -r "$2" "$1"/heap-heap_prog-*-exit.json 2>/dev/null
}

# lacks STRING TEXT — TEXT does not hold STRING.
lacks() {
    ! grep -qF "$1" <<<"$2"
}


check "heap_prog builds and splits into a stripped program and its debug file" \
    split "$d/heap_prog" -Wl,--build-id
check "the stripped program has no .symtab" \
    bash -c "! readelf -S '$d/heap_prog' | grep -q '\\.symtab'"
id=$(readelf -n "$d/heap_prog" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
check "it has a build id (${id:-none})" test -n "$id"
mkdir -p "$d/dbg/.build-id/${id:0:2}"
mv "$d/heap_prog.debug" "$d/dbg/.build-id/${id:0:2}/${id:2}.debug"

# --- named through the build id ------------------------------------------
profile "$d/named" TESTYARD_HEAP_DEBUG_DIRS="$d/none:$d/dbg"
check_eq "with its debug file: the sidecar counts none of heap_prog's frames unnamed" \
    "$(sidecar "$d/named" "[.symbols.objects[] | select(.path == \"$d/heap_prog\")] | length")" 0
check "with its debug file: symbols.frames > 0" \
    test "$(sidecar "$d/named" .symbols.frames)" -gt 0
text=$(report_of "$d/named" heap_prog)
check "with its debug file: the report's top site is prog_keep_blocks" \
    grep -q '100.0%  prog_keep_blocks$' <<<"$text"
# (libc's start-up frame may stay unnamed: no site shown, nothing said)
check "with its debug file: the report says nothing of missing symbols" \
    lacks "have no symbols" "$text"
if command -v go >/dev/null; then
    check "with its debug file: go tool pprof -raw names prog_keep_blocks" \
        bash -c "HOME=$d PPROF_TMPDIR=$d go tool pprof -symbolize=none -raw \
            $d/named/heap-heap_prog-*-exit.pb.gz 2>/dev/null |
            grep -q ' prog_keep_blocks '"
else
    skip "go tool pprof names prog_keep_blocks" "go missing"
fi

# --- unnamed: no debug file ----------------------------------------------
profile "$d/bare" TESTYARD_HEAP_DEBUG_DIRS="$d/none"
check "without: the sidecar counts unsymbolized frames (> 0)" \
    test "$(sidecar "$d/bare" .symbols.unsymbolized)" -gt 0
check_eq "without: the sidecar names the object and its build id" \
    "$(sidecar "$d/bare" '.symbols.objects[0] | "\(.path) \(.build_id) \(.frames > 0)"')" \
    "$d/heap_prog $id true"
text=$(report_of "$d/bare" heap_prog)
site=$(sed -n 's/^ *[0-9.]* MiB 100.0%  \(heap_prog+0x[0-9a-f]*\)$/\1/p' <<<"$text")
check "without: the report's top site reads heap_prog+0x<offset> (${site:-none})" \
    test -n "$site"
check_eq "without: addr2line names that offset prog_keep_blocks" \
    "$(addr2line -f -e "$d/dbg/.build-id/${id:0:2}/${id:2}.debug" \
        "${site#heap_prog+}" 2>/dev/null | head -n 1)" prog_keep_blocks
# (libc's own static functions may be unnamed too, without its debug
# file: heap_prog, with more such frames, comes first)
check "without: the report says how many frames have no symbols, and where" \
    grep -qE "^    [0-9]+ of [0-9]+ frames in servers' profiles have no symbols: $d/heap_prog( \([0-9]+\) and .*)? ha(s|ve) no symbol table for them " <<<"$text"
check "without: ... and how to get them" \
    grep -qF "debug symbols, e.g. Debian's heap_prog-dbgsym, or point TESTYARD_HEAP_DEBUG_DIRS at a folder with .build-id/; or symbolize later: pprof $d/heap_prog servers/0/heap-heap_prog-" <<<"$text"
check_eq "without: summary.json's groups[0].symbols" \
    "$(jq -r '.groups[0].symbols | "\(.unsymbolized > 0) \(.frames > .unsymbolized) \(.objects[0].path) \(.objects[0].build_id)"' \
        "$d/bare/run/summary.json")" "true true $d/heap_prog $id"
check "without: report.html says it too" \
    grep -qF "frames in servers&#39; profiles have no symbols" \
    "$d/bare/run/report.html"
if command -v go >/dev/null; then
    raw=$(HOME=$d PPROF_TMPDIR=$d go tool pprof -symbolize=none -raw \
        "$d"/bare/heap-heap_prog-*-exit.pb.gz 2>/dev/null)
    check "without: go tool pprof -raw shows the mapping with its build id" \
        grep -q "heap_prog $id *$" <<<"$raw"
else
    skip "go tool pprof shows the mapping" "go missing"
fi

# --- .gnu_debuglink, without a build id ----------------------------------
split "$d/heap_prog" -Wl,--build-id=none
mkdir -p "$d/.debug" "$d/dbg$d"
cp "$d/heap_prog.debug" "$d/dbg$d/"
mv "$d/heap_prog.debug" "$d/.debug/"
profile "$d/linked" TESTYARD_HEAP_DEBUG_DIRS="$d/none"
check_eq "through .gnu_debuglink (<dir>/.debug/): every frame named" \
    "$(sidecar "$d/linked" "[.symbols.objects[] | select(.path == \"$d/heap_prog\")] | length")" 0
echo x >>"$d/.debug/heap_prog.debug"
profile "$d/stale" TESTYARD_HEAP_DEBUG_DIRS="$d/none"
check "a debug file whose CRC is not the link's names nothing" \
    test "$(sidecar "$d/stale" "[.symbols.objects[] | select(.path == \"$d/heap_prog\")][0].frames")" -gt 0

rm "$d/.debug/heap_prog.debug"
profile "$d/under" TESTYARD_HEAP_DEBUG_DIRS="$d/dbg"
check_eq "through .gnu_debuglink (<debug folder><dir>/): every frame named" \
    "$(sidecar "$d/under" "[.symbols.objects[] | select(.path == \"$d/heap_prog\")] | length")" 0

# --- a relative folder is said once ---------------------------------------
profile "$d/rel" TESTYARD_HEAP_DEBUG_DIRS="debug:$d/dbg"
check "a relative folder in TESTYARD_HEAP_DEBUG_DIRS is said on stderr" \
    grep -qx 'testyard-heap: TESTYARD_HEAP_DEBUG_DIRS: "debug" is not an absolute path; left out' \
    "$d/rel/err"
finish
