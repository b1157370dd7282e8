# shellcheck shell=bash
# tests/e2e/cli.sh — one command-line convention in every command: --help
# prints the usage on stdout and exits 0; an unknown option, an option
# without its argument and a wrong number of operands each print one line
# of the same shape ("testyard CMD: ...") followed by the usage on stderr
# and exit 64; a bad option value is one line ("testyard: --opt: ...").
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh

# try ARGS... — run testyard; stdout to $RUNS/out, stderr to $RUNS/err;
# prints the exit status.
try() {
    "$TY" "$@" >"$RUNS/out" 2>"$RUNS/err"
    echo $?
}

first_err() { head -1 "$RUNS/err"; }

for cmd in validate describe run report compare collect clean doctor; do
    rc=$(try "$cmd" --help)
    check_eq "$cmd --help: exit 0" "$rc" 0
    check "$cmd --help: the usage on stdout" \
        grep -q "^usage: testyard $cmd" "$RUNS/out"
    check "$cmd --help: nothing on stderr" [ ! -s "$RUNS/err" ]

    rc=$(try "$cmd" --no-such-option x)
    check_eq "$cmd --no-such-option: exit 64" "$rc" 64
    check_eq "$cmd --no-such-option: the message" "$(first_err)" \
        "testyard $cmd: unknown option '--no-such-option'"
    check "$cmd --no-such-option: then the usage" \
        grep -q "^usage: testyard $cmd" "$RUNS/err"
    check "$cmd --no-such-option: nothing on stdout" [ ! -s "$RUNS/out" ]

    rc=$(try "$cmd" -Z x)
    check_eq "$cmd -Z: the message" "$rc $(first_err)" \
        "64 testyard $cmd: unknown option '-Z'"
done

for c in "validate --plans" "describe -p" "run --runs" "report --top" \
    "compare --json" "collect -o" "clean --run"; do
    read -r -a args <<<"$c"
    rc=$(try "${args[@]}")
    check_eq "$c (no value): exit 64 and the message" "$rc $(first_err)" \
        "64 testyard ${args[0]}: missing argument for '${args[1]}'"
done

rc=$(try validate a.yaml b.yaml)
check_eq "validate with two files" "$rc $(first_err)" \
    "64 testyard validate: expected one FILE"
rc=$(try run)
check_eq "run with no composition" "$rc $(first_err)" \
    "64 testyard run: expected one COMPOSITION"
rc=$(try compare "$RUNS")
check_eq "compare with one run" "$rc $(first_err)" \
    "64 testyard compare: expected RUN_A and RUN_B"
rc=$(try clean leftover)
check_eq "clean takes no operand" "$rc $(first_err)" \
    "64 testyard clean: unexpected argument 'leftover'"

rc=$(try report --top many "$RUNS")
check_eq "report --top many: one line" "$rc $(cat "$RUNS/err")" \
    "64 testyard: --top: expected a positive whole number, got \"many\""
rc=$(try clean --run ../x)
check_eq "clean --run ../x: exit 64" "$rc" 64
check "clean --run ../x: one line on what a run id is" \
    grep -q "^testyard: --run: expected a run id" "$RUNS/err"
check_eq "clean --run ../x: in one line" "$(wc -l <"$RUNS/err")" 1

rc=$(try --no-such-option)
check_eq "testyard --no-such-option" "$rc $(first_err)" \
    "64 testyard: unknown option '--no-such-option'"
rc=$(try)
check_eq "testyard alone" "$rc $(first_err)" "64 testyard: expected a command"
rc=$(try --version)
check_eq "testyard --version: exit 0" "$rc" 0
check "testyard --version: the version" grep -qx "testyard [0-9.]*" "$RUNS/out"
finish
