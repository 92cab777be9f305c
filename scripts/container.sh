#!/usr/bin/env bash
# Builds the container image, in one command:
#
#   scripts/container.sh [TAG]        # TAG defaults to widgets-todos (:latest)
#
# 1. the server as a static binary: glibc linked in (`+crt-static`, a
#    static-pie), with the standard toolchain and no extra target. The
#    explicit `--target` keeps it in target/<host>/release, away from the
#    normal release build, and keeps RUSTFLAGS off build scripts and
#    procedural macros, which cannot be static;
# 2. the build context in target/container/: that binary, an empty data/
#    directory, and scripts/container/Dockerfile;
# 3. `docker build`: a FROM scratch image holding only those, so no
#    registry is needed.
#
# Prints the image's size in bytes on its last line. Needs cargo, a running
# Docker engine, and a GNU/Linux host (x86_64 or aarch64).
set -euo pipefail
cd "$(dirname "$0")/.."

tag=${1:-widgets-todos}
host=$(rustc -vV | sed -n 's/^host: //p')
case $host in
    *-unknown-linux-gnu) ;;
    *)
        echo "container.sh: the image needs a static Linux binary, built on a GNU/Linux host; this is $host" >&2
        exit 2
        ;;
esac

RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --target "$host"
binary=target/$host/release/widgets-todos
# A dynamic binary would fail in the image with a bare "no such file or
# directory" (its loader is missing): say so here instead.
if readelf -l "$binary" | grep -q 'program interpreter'; then
    echo "container.sh: $binary is not static (it asks for a program interpreter)" >&2
    exit 1
fi

context=target/container
rm -rf "$context"
mkdir -p "$context/data"
cp "$binary" "$context/widgets-todos"
cp scripts/container/Dockerfile "$context/Dockerfile"
docker build --tag "$tag" "$context"
size=$(docker image inspect --format '{{.Size}}' "$tag")
echo "image $tag: $size bytes"
