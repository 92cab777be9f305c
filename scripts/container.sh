#!/usr/bin/env bash
# Builds the container image, in one command:
#
#   scripts/container.sh [TAG]              # TAG defaults to widgets-todos (:latest)
#   scripts/container.sh --arm64 [TAG]      # for 64-bit ARM; TAG defaults to widgets-todos:arm64
#
# 1. the server as a static binary: glibc linked in (`+crt-static`, a
#    static-pie), with the standard toolchain and no extra target. The
#    explicit `--target` keeps it in target/<host>/release, away from the
#    normal release build, and keeps RUSTFLAGS off build scripts and
#    procedural macros, which cannot be static. With --arm64, the static
#    aarch64 binary of scripts/cross.sh instead (cross-compiled: nothing
#    is emulated to build the image);
# 2. the build context in target/container/: that binary, an empty data/
#    directory, and scripts/container/Dockerfile;
# 3. `docker build`: a FROM scratch image holding only those, so no
#    registry is needed; with --arm64, `--platform linux/arm64`, so the
#    image says which machines it is for.
#
# Prints the image's size in bytes on its last line. Needs cargo, a running
# Docker engine (checked first: without one it exits 1 at once, saying how
# to start one), and a GNU/Linux host (x86_64 or aarch64).
set -euo pipefail
cd "$(dirname "$0")/.."

# A reachable engine first: the build takes minutes, and its end is no
# place to learn that there is nothing to build the image with.
if ! command -v docker >/dev/null 2>&1; then
    echo "container.sh: there is no docker command: install Docker (Debian, as root: apt-get install docker.io), start its engine, then run this again (docs/containers.md)" >&2
    exit 1
fi
if ! why=$(docker info 2>&1 >/dev/null); then
    why=$(printf '%s\n' "$why" | grep -m 1 -i 'cannot connect\|error' || printf '%s\n' "$why" | head -n 1)
    cat >&2 <<EOF
container.sh: no container engine answers: ${why:-docker info failed}
Start one, then run this again (docs/containers.md, "What it needs"):
  - with systemd, as root: systemctl start docker
  - without systemd (a container, a CI runner), as root:
      dockerd --bridge=none --iptables=false >/var/log/dockerd.log 2>&1 &
    (without a bridge, run the image with --network host, as the docs do)
  - Docker Desktop: start the application
EOF
    exit 1
fi

platform=()
if [ "${1:-}" = --arm64 ]; then
    shift
    tag=${1:-widgets-todos:arm64}
    scripts/cross.sh aarch64 --no-test
    binary=target/cross/aarch64/aarch64-unknown-linux-gnu/release/widgets-todos
    platform=(--platform linux/arm64)
else
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
fi
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
docker build "${platform[@]}" --tag "$tag" "$context"
size=$(docker image inspect --format '{{.Size}}' "$tag")
echo "image $tag: $size bytes"
