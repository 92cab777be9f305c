#!/usr/bin/env bash
# The server for ARM, built on an x86-64 Debian machine and tested there
# under emulation (docs/arm.md):
#
#   scripts/cross.sh aarch64 [--no-test]   # 64-bit ARM: Raspberry Pi 3/4/5, ARM servers
#   scripts/cross.sh armv7 [--no-test]     # 32-bit ARM (hard float): Raspberry Pi 2 and up
#
# 1. installs, when missing, Debian's packages and nothing else: Debian's
#    own Rust (`rustc-web`, `cargo-web`), the cross C compiler and its C
#    library (the linker, and glibc to link in), and `qemu-user-static`
#    with `binfmt-support` (qemu-user runs an ARM program as if it were
#    native, and binfmt_misc makes the kernel hand every ARM program to it,
#    so the tests can spawn the server);
# 2. lays out the target's standard library: the rlibs of Debian's
#    `libstd-rust-web-dev` for the target's architecture, at exactly the
#    version of `rustc-web`, unpacked under target/cross/sysroot-ARCH and
#    given to rustc with `--sysroot`. This leaves dpkg's architectures as
#    they are (no `dpkg --add-architecture`), so the machine's own
#    `apt-get update` does not start fetching ARM indexes;
# 3. builds the static release binary (glibc linked in, `+crt-static`)
#    in target/cross/TARGET/, with /usr/bin/cargo and /usr/bin/rustc
#    named explicitly: a rustup toolchain on the PATH is not used, nor
#    changed;
# 4. runs the whole of `cargo test` (unit tests and tests/api, which
#    spawns the binary built with them) for the target, under qemu-user.
#    The tests are built in the `cross-test` profile (Cargo.toml): the
#    release profile's optimisation, as the emulated debug build is slow
#    enough that bounds meant for a loaded machine do not hold, but
#    without its link-time optimisation, which took minutes for each test
#    binary. Of the examples only the first one a learner reads is built,
#    which tests/api/examples.rs runs; the benchmark's are only compiled,
#    which the x86-64 suite does.
#
# Idempotent: what is installed or built is not done again. Prints the
# binary's size and, last, "cross TARGET: N passed, 0 failed".
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/cross.sh aarch64|armv7 [--no-test]" >&2; exit 2; }
[ $# -ge 1 ] || usage
case $1 in
    aarch64) triple=aarch64-unknown-linux-gnu arch=arm64 gnu=aarch64-linux-gnu qemu=aarch64 ;;
    armv7) triple=armv7-unknown-linux-gnueabihf arch=armhf gnu=arm-linux-gnueabihf qemu=arm ;;
    *) usage ;;
esac
name=$1
test=yes
[ "${2:-}" != --no-test ] || test=no
[ "$(uname -m)" = x86_64 ] || { echo "cross.sh: runs on an x86-64 host; on ARM itself, cargo build --release (docs/arm.md)" >&2; exit 2; }
cargo=/usr/bin/cargo
export RUSTC=/usr/bin/rustc

# 1. Debian's packages, only those missing.
installed() { [ "$(dpkg-query -W -f '${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
packages=(rustc-web cargo-web "gcc-$gnu" "libc6-dev-$arch-cross" qemu-user-static binfmt-support)
missing=()
for package in "${packages[@]}"; do installed "$package" || missing+=("$package"); done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    apt-get update || true # an index of another suite may lag: the install says what it lacks
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=300 "${missing[@]}"
fi
version=$(dpkg-query -W -f '${Version}' rustc-web)
echo "Debian's $($RUSTC -V) ($version), for $triple"

# 2. The target's standard library, from Debian's package for $arch.
sysroot=$PWD/target/cross/sysroot-$arch
if [ "$(cat "$sysroot/version" 2>/dev/null)" != "$version" ]; then
    work=$PWD/target/cross/apt-$arch
    rm -rf "$sysroot" "$work"
    mkdir -p "$work/lists/partial" "$work/archives/partial"
    : >"$work/status"
    # apt with its own lists and the target's architecture alone: the
    # ordinary client, the archive's signatures checked, nothing of the
    # machine's apt state touched.
    apt_own=(-o "Dir::State::Lists=$work/lists" -o "Dir::State::Status=$work/status"
        -o "Dir::Cache=$work" -o "Dir::Cache::Archives=$work/archives"
        -o "APT::Architecture=$arch" -o "APT::Architectures::=$arch" -o APT::Sandbox::User=root)
    apt-get "${apt_own[@]}" update >"$work/update.log" 2>&1 || true
    deb=
    if (cd "$work" && apt-get "${apt_own[@]}" download "libstd-rust-web-dev=$version" >"$work/download.log" 2>&1); then
        deb=$(ls "$work"/libstd-rust-web-dev_*.deb)
    else
        # A mirror may serve a suite's index for one architecture older
        # than its Release file ("File has unexpected size ... Mirror sync
        # in progress?"), and apt then drops the whole suite. The package
        # is in the pool all the same: its path and SHA-256 are read from
        # that index, and apt's own downloader checks the file against it.
        line=$(apt-cache madison rustc-web | awk -F ' [|] ' -v v="$version" '$2 == v { print $3; exit }')
        base=${line%% *}
        suite=$(echo "$line" | awk '{ print $2 }')
        [ -n "$base" ] && [ -n "$suite" ] || { cat "$work/download.log"; echo "cross.sh: no source of rustc-web $version"; exit 1; }
        echo "cross.sh: apt could not fetch libstd-rust-web-dev:$arch $version ($(grep -h -m 1 'E: ' "$work/update.log" "$work/download.log" | head -n 1 | cut -c 1-200)); reading ${suite%%/*}'s $arch index instead"
        /usr/lib/apt/apt-helper -o APT::Sandbox::User=root download-file "$base/dists/${suite%%/*}/${suite#*/}/binary-$arch/Packages.xz" "$work/Packages.xz" >/dev/null
        entry=$(xz -dc "$work/Packages.xz" | awk -v RS= -v v="$version" '$0 ~ /^Package: libstd-rust-web-dev\n/ && index($0, "\nVersion: " v "\n")')
        file=$(sed -n 's/^Filename: //p' <<<"$entry")
        sha=$(sed -n 's/^SHA256: //p' <<<"$entry")
        [ -n "$file" ] && [ -n "$sha" ] || { echo "cross.sh: libstd-rust-web-dev $version is not in the $arch index"; exit 1; }
        deb=$work/$(basename "$file")
        /usr/lib/apt/apt-helper -o APT::Sandbox::User=root download-file "$base/$file" "$deb" "SHA256:$sha" >/dev/null
    fi
    mkdir -p "$sysroot"
    dpkg-deb -x "$deb" "$work/unpacked"
    mv "$work/unpacked/usr/lib" "$sysroot/lib"
    [ -d "$sysroot/lib/rustlib/$triple/lib" ] || { echo "cross.sh: no $triple in $deb"; exit 1; }
    echo "$version" >"$sysroot/version"
    rm -rf "$work"
fi

# 3. The static release binary.
upper=$(echo "$triple" | tr 'a-z-' 'A-Z_')
export "CARGO_TARGET_${upper}_LINKER=$gnu-gcc"
export "CARGO_TARGET_${upper}_RUSTFLAGS=--sysroot=$sysroot -C target-feature=+crt-static"
target_dir=target/cross/$name
# aarch64 at opt-level 2 rather than the release profile's 3: 54 KB less
# code, which keeps its binary under 2.5 MB with room to grow
# (docs/arm.md), while on x86-64 the two levels serve at the same rates
# within the benchmark's noise (scripts/bench_against.py --old). On armv7
# it saves nothing (the binary was 32 KB larger).
[ "$name" != aarch64 ] || export CARGO_PROFILE_RELEASE_OPT_LEVEL=2
started=$SECONDS
nice -n 10 "$cargo" build --release --locked --target "$triple" --target-dir "$target_dir"
binary=$target_dir/$triple/release/widgets-todos
if readelf -l "$binary" | grep -q 'program interpreter'; then
    echo "cross.sh: $binary is not static (it asks for a program interpreter)" >&2
    exit 1
fi
size=$(stat -c %s "$binary")
echo "built $binary: $size bytes, static, in $((SECONDS - started)) s"
# The file grows in steps of the largest page the linker allows for on
# the target (64 KiB for aarch64, whose kernels use 4, 16 or 64 KiB
# pages; 4 KiB for armv7): it ends the part made read-only after start-up
# (RELRO) on such a page and pads the file to get there. The room left
# in the padding is how much code or data can be added before the next
# step. readelf gives the two LOAD segments' offsets, sizes and alignment
# (the page), in hex.
read -r -a loads < <(readelf -lW "$binary" | awk '$1 == "LOAD" { printf "%s %s %s ", $2, $5, $NF } END { print "" }')
room=$((loads[3] - loads[0] - loads[1]))
echo "cross $name: $room bytes of room before the binary's next $((loads[2] / 1024)) KiB step"
if [ "$name" = aarch64 ] && [ "$size" -gt 2500000 ]; then
    echo "cross.sh: the aarch64 binary is $size bytes, over its 2,500,000 (docs/arm.md)" >&2
    exit 1
fi
[ "$test" = yes ] || exit 0

# 4. The kernel hands ARM programs to qemu (binfmt_misc), so the tests
#    can spawn the server.
. scripts/lib.sh
binfmt "$qemu"
"$binary" --version >/dev/null

# Idle memory: the server started on its defaults, a second after its
# listening line. Under qemu-user the figure is qemu's process, the
# emulator's own memory included: a real ARM machine shows less.
dir=$(mktemp -d)
trap 'kill "$SERVER_PID" 2>/dev/null || true; rm -rf "$dir"' EXIT
SERVER_BIN=$binary start_server "$dir" --log-level warn
sleep 1
rss=$(sed -n 's/^VmRSS:[[:space:]]*//p' "/proc/$SERVER_PID/status")
kill -TERM "$SERVER_PID"
status=0
wait "$SERVER_PID" || status=$?
[ "$status" -eq 0 ] || { cat "$dir/err"; echo "cross.sh: the $name server exited with $status after SIGTERM"; exit 1; }
echo "cross $name: binary $(stat -c %s "$binary") bytes; idle VmRSS $rss under qemu-$qemu (qemu included); SIGTERM: exit status 0"

# The whole of cargo test, for the target, under qemu-user.
started=$SECONDS
log=$dir/test.log
nice -n 10 "$cargo" build --profile cross-test --locked --example minimal --target "$triple" --target-dir "$target_dir"
nice -n 10 "$cargo" test --profile cross-test --locked --lib --tests --target "$triple" --target-dir "$target_dir" 2>&1 | tee "$log"
results=$(grep '^test result: ' "$log")
passed=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' <<<"$results" | awk '{ n += $1 } END { print n + 0 }')
if grep -v ' 0 ignored' <<<"$results"; then
    echo "cross.sh: a test was skipped on $name" >&2
    exit 1
fi
echo "cross $name: tests built and run in $((SECONDS - started)) s under qemu-$qemu"
echo "cross $name: $passed passed, 0 failed"
