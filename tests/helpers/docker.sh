# shellcheck shell=bash
# tests/helpers/docker.sh — what the local:docker suites share (sourced
# after tests/helpers/lib.sh): the engine's API, reached where DOCKER_HOST
# says (unix://PATH or tcp://HOST:PORT; default unix:///var/run/docker.sock)
# as testyard itself reaches it, and what a run leaves on it.
#
# No suite calls the docker CLI or names the socket itself: everything goes
# through docker_api, so DOCKER_HOST points every suite, and every
# testyard it starts, at the same engine.

DOCKER_ENGINE=${DOCKER_HOST:-unix:///var/run/docker.sock}

# docker_api PATH [CURL-ARGS...] — a request to the engine (GET unless
# CURL-ARGS say otherwise: -X DELETE, -d BODY); the body on stdout, false
# on an HTTP error or no answer.
docker_api() {
    local path=$1
    shift
    case "$DOCKER_ENGINE" in
    unix://*)
        curl -sf --unix-socket "${DOCKER_ENGINE#unix://}" "$@" \
            "http://docker$path" ;;
    tcp://*) curl -sf "$@" "http://${DOCKER_ENGINE#tcp://}$path" ;;
    *) return 1 ;;
    esac
}

# docker_socket — the engine's unix socket (empty when DOCKER_HOST is not
# unix://).
docker_socket() {
    case "$DOCKER_ENGINE" in
    unix://*) echo "${DOCKER_ENGINE#unix://}" ;;
    esac
}

# need_docker WHAT — go on when an engine answers; otherwise WHAT is
# skipped and the suite ends here.
need_docker() {
    docker_api /_ping >/dev/null 2>&1 && return 0
    skip "$1" "no Docker engine answers at $DOCKER_ENGINE (scripts/docker-up starts one as root, or set DOCKER_HOST)"
    finish
    exit
}

# run_filter ID — the URL-encoded filter for the run's label.
run_filter() {
    echo "filters=%7B%22label%22%3A%5B%22testyard.run%3D$1%22%5D%7D"
}

# containers_of_run ID — how many containers (any state) carry the run's
# label.
containers_of_run() {
    docker_api "/containers/json?all=1&$(run_filter "$1")" | jq length
}

# container_of_run ID [all] — the id of one container of the run (a
# running one, or any with "all"); empty when there is none.
container_of_run() {
    docker_api "/containers/json?${2:+all=1&}$(run_filter "$1")" |
        jq -r '.[0].Id // empty' 2>/dev/null
}

# networks_of_run ID — how many networks carry the run's label.
networks_of_run() {
    docker_api "/networks?$(run_filter "$1")" | jq length
}

# remove_run_containers ID — force-remove what a failed run left.
remove_run_containers() {
    local c
    docker_api "/containers/json?all=1&$(run_filter "$1")" | jq -r '.[].Id' |
        while read -r c; do
            docker_api "/containers/$c?force=1" -X DELETE >/dev/null
        done
}
