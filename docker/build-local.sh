#!/usr/bin/env bash
# Build the api and worker images from the repository's Dockerfile on a machine with no Docker
# engine, no pullable public images and no package index reachable from inside a build:
#   1. a Debian 12 base image (Python 3.11) made from Debian packages with mmdebstrap;
#   2. a wheelhouse image: every wheel uv.lock pins, downloaded on this host and hash-checked,
#      plus the pip and uv settings that install from it alone;
#   3. `buildah bud --target api|worker` with BASE_IMAGE and WHEELHOUSE pointing at those two.
# Needs root, Debian's `buildah` and `mmdebstrap`, uv, and pip on a Linux x86_64 Python 3.11.
# Usage: docker/build-local.sh [TAG]   (images: localhost/skincare-api:TAG, skincare-worker:TAG)
set -euo pipefail
cd "$(dirname "$0")/.."

TAG=${1:-latest}
WORK=dist/images
BASE=localhost/bookworm-python:3.11
WHEELHOUSE=localhost/skincare-wheelhouse:$TAG
UV_VERSION=$(sed -n 's/^ARG UV_VERSION=//p' Dockerfile)

buildah() { command buildah --storage-driver vfs "$@"; }

timed() {
    local started=$SECONDS
    "$@"
    echo "build-local: $* took $((SECONDS - started)) s"
}

base_image() {
    if buildah inspect --type image "$BASE" >/dev/null 2>&1; then
        echo "build-local: $BASE exists, kept (buildah rmi it to rebuild)"
        return
    fi
    mkdir -p "$WORK/base"
    # passwd for useradd, as python:3.11-slim has; no docs, man pages or translations.
    mmdebstrap --variant=minbase --include=python3,python3-venv,ca-certificates,passwd \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
        bookworm "$WORK/base/rootfs.tar"
    printf 'FROM scratch\nADD rootfs.tar /\nCMD ["python3"]\n' >"$WORK/base/Containerfile"
    buildah bud --isolation chroot --format docker -t "$BASE" "$WORK/base"
    rm "$WORK/base/rootfs.tar"
}

wheelhouse_image() {
    local dir=$WORK/wheelhouse
    python3 -c 'import platform, sys; assert sys.version_info[:2] == (3, 11) and platform.machine() == "x86_64"' \
        || { echo "build-local: the wheels must be fetched by a Linux x86_64 Python 3.11" >&2; exit 2; }
    rm -rf "$dir" && mkdir -p "$dir/wheels" "$dir/etc/uv"
    uv export --locked --no-dev --all-packages --no-emit-workspace --format requirements-txt \
        --quiet --output-file "$dir/requirements.txt"
    # The exported hashes put pip in hash-checking mode: the wheels are the ones uv.lock pins.
    python3 -m pip download --quiet --only-binary=:all: --dest "$dir/wheels" -r "$dir/requirements.txt"
    # uv itself, and hatchling to build our packages' wheels inside the image.
    python3 -m pip download --quiet --only-binary=:all: --dest "$dir/wheels" "uv==$UV_VERSION" hatchling
    printf '[global]\nno-index = true\nfind-links = /wheels\n' >"$dir/etc/pip.conf"
    printf 'no-index = true\nfind-links = ["/wheels"]\n' >"$dir/etc/uv/uv.toml"
    printf 'FROM scratch\nCOPY wheels /wheels\nCOPY etc /etc\n' >"$dir/Containerfile"
    buildah bud --isolation chroot --format docker -t "$WHEELHOUSE" "$dir"
}

app_image() {
    # --format docker: the OCI format has no HEALTHCHECK. --layers: the worker reuses the
    # api build's stages, and a source-only change reuses the dependency layer.
    buildah bud --isolation chroot --format docker --layers --force-rm \
        --build-arg "BASE_IMAGE=$BASE" --build-arg "WHEELHOUSE=$WHEELHOUSE" \
        --target "$1" -t "localhost/skincare-$1:$TAG" .
}

timed base_image
timed wheelhouse_image
timed app_image api
timed app_image worker
buildah images --filter reference='localhost/*'
