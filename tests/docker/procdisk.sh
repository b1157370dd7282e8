# shellcheck shell=bash
# tests/docker/procdisk.sh — processes.csv and disk.csv on local:docker:
# tests/e2e/procs_prog.c packed into an image (run.command) forks two
# children and names the three (pd-parent 20 MiB, pd-small 40 MiB,
# pd-busy 60 MiB and spinning); processes.csv lists them from the
# container's cgroup with their RSS and the busy one's CPU rising, the
# container's init too. It writes a sparse file (1 GiB apparent, 4 MiB
# written) and a hard link in outputs/state and in /tmp/pd-abs inside the
# container: disk.csv counts 4 MiB allocated once for both, the relative
# path from the host's outputs folder, the absolute one through the
# container's root; a container path that is a link is not followed.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/helpers/lib.sh
. tests/helpers/lib.sh
# shellcheck source=tests/helpers/docker.sh
. tests/helpers/docker.sh
# shellcheck source=tests/helpers/series.sh
. tests/helpers/series.sh

need_docker "process and disk series on local:docker"

procdisk_run docker pd-docker local:docker \
    "[state, /tmp/pd-abs, /tmp/missing, /proc/self]" \
    "--sparse, state, --sparse, /tmp/pd-abs"
check "docker: the container's init is listed too (docker-init)" \
    grep -q ',docker-init,' "$out/processes.csv"
check_disk docker "$out/disk.csv" /tmp/pd-abs
check_eq "docker: a container path not there has empty figures" \
    "$(disk_last "$out/disk.csv" /tmp/missing)" ",,"
check_eq "docker: a container path that is a link is not followed" \
    "$(disk_last "$out/disk.csv" /proc/self)" ",,"
check "docker: the run's log says the link was not followed" \
    grep -q "run.disk /proc/self: cannot be walked.*links are not followed" \
    "$RUNS/pd-docker.log"
check "docker: no .partial file is left" \
    test -z "$(find "$RUNS/pd-docker" -name '*.partial')"
check_eq "docker: no container of the run is left" \
    "$(containers_of_run pd-docker)" 0
[ "$TAPFAIL" = 0 ] || show_log pd-docker
finish
