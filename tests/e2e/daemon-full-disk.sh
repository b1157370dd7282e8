# shellcheck shell=bash
# tests/e2e/daemon-full-disk.sh — the daemon's data folder on a tiny
# tmpfs that is full: a submit is refused (exit 74, "No space left on
# device") with nothing queued and no half-made snapshot left, the daemon
# keeps serving, and once there is room again a submit runs.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/daemon.sh
. tests/helpers/daemon.sh

if ! mount -t tmpfs -o size=8m tmpfs "$DATA" 2>"$RUNS/mount.log"; then
    skip "a full data folder" "cannot mount a tmpfs here: $(head -1 "$RUNS/mount.log")"
    finish
    exit
fi
trap 'stop_daemon; umount "$DATA"; daemon_cleanup' EXIT

f=$(sleeper tiny 1 64Mi)
check "the daemon starts on the tmpfs" start_daemon
# Fill every last byte: whole blocks, then what is left one byte at a time.
dd if=/dev/zero of="$DATA/fill" bs=4k 2>/dev/null
while head -c 1 /dev/zero >>"$DATA/fill" 2>/dev/null; do :; done
ty submit "$f" >"$RUNS/full.out" 2>&1
check_eq "a full disk: the submit is refused with exit 74" "$?" 74
check "it says why" grep -q "snapshot.*No space left on device" \
    "$RUNS/full.out"
check_eq "nothing was queued" "$(ty tasks --json | jq length)" 0
check_eq "no half-made snapshot is left" \
    "$(find "$DATA/tasks" -mindepth 1 | wc -l)" 0
rm -f "$DATA/fill"
id=$(ty submit "$f" 2>/dev/null)
check "with room again a submit runs" wait_for 30 state_is "$id" "done"
check_eq "to success" "$(field "$id" .outcome)" success
finish
