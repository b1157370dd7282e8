# shellcheck shell=bash
# tests/e2e/procdisk.sh — processes.csv and disk.csv on local:exec:
# tests/e2e/procs_prog.c, a program that knows nothing of testyard, forks
# two children and names the three (pd-parent 20 MiB, pd-small 40 MiB,
# pd-busy 60 MiB and spinning); it writes a sparse file (1 GiB apparent,
# 4 MiB written) and a hard link to it in outputs/state and in a host
# folder. processes.csv has the three with their RSS, the busy one's CPU
# rising; disk.csv counts the 4 MiB allocated once, a path not there has
# empty figures; process_sample: off writes none. Without root (as
# nobody: no cgroups) the processes are found as the main process's
# descendants.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/series.sh
. tests/helpers/series.sh

ABS=$RUNS/host-state
procdisk_run exec pd-exec local:exec "[state, $ABS, missing]" \
    "--sparse, state, --sparse, $ABS"
check_disk exec "$out/disk.csv" "$ABS"
check_eq "exec: a path not there has a row with empty figures" \
    "$(disk_last "$out/disk.csv" missing)" ",,"
check "exec: no .partial file is left" \
    test -z "$(find "$RUNS/pd-exec" -name '*.partial')"
[ "$TAPFAIL" = 0 ] || show_log pd-exec

f=$(composition pd-off <<EOF
metadata: {name: pd-off}
global:
  runner: local:exec
  run_config: {timeout: 1m, process_sample: off}
groups:
  - id: pd
    instances: {count: 1}
    run: {command: [$PROCS_PROG, --hold-ms, "300"]}
EOF
)
rc=$(run_comp pd-off "$f")
check_eq "off: the run succeeds" "$rc" 0
check "off: no processes.csv, and no disk.csv without run.disk" \
    test ! -e "$RUNS/pd-off/pd/0/processes.csv" -a \
    ! -e "$RUNS/pd-off/pd/0/disk.csv"
check "off: memory.csv is there all the same" \
    test -s "$RUNS/pd-off/pd/0/memory.csv"

if [ "$(id -u)" -ne 0 ]; then
    skip "exec without cgroups: processes by descent" "needs root to switch to nobody"
else
    chmod 0755 "$RUNS" "$RUNS/bin"
    mkdir -m 0777 "$RUNS/nobody"
    tycopy=$RUNS/bin/testyard
    cp "$TY" "$tycopy"
    f=$(procdisk_comp pd-nobody local:exec "[state]" "--sparse, state")
    chmod 0644 "$f"
    setpriv --reuid=65534 --regid=65534 --clear-groups -- \
        env HOME="$RUNS/nobody" "$tycopy" run --runs "$RUNS/nobody" \
        --run-id pd-nobody --no-progress "$f" >"$RUNS/pd-nobody.log" 2>&1
    rc=$?
    check_eq "nobody: the run succeeds" "$rc" 0
    check "nobody: it ran without cgroups (said so)" \
        grep -q "cgroups" "$RUNS/pd-nobody.log"
    check_processes nobody "$RUNS/nobody/pd-nobody/pd/0/processes.csv"
    check_disk nobody "$RUNS/nobody/pd-nobody/pd/0/disk.csv" state
    [ "$TAPFAIL" = 0 ] || sed 's/^/#   /' "$RUNS/pd-nobody.log" | tail -20
fi
finish
