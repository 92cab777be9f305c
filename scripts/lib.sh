# Helpers the test scripts share. Source it (`. scripts/lib.sh`); bash only.

# need COMMAND PACKAGE: installs Debian's PACKAGE when COMMAND is missing.
need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    echo "installing: $2"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$2"
}

# start_server DIR [FLAGS...]: starts the server ($SERVER_BIN, by default the
# release binary) on a free port of 127.0.0.1 with FLAGS, its stdout and
# stderr in DIR/out and DIR/err (a stale DIR/out is removed first), and
# waits up to 60 s for its listening line (a loaded machine can take long
# to start a process); one that does not come in time is stopped. Sets
# SERVER_PID and SERVER_URL (http://127.0.0.1:PORT or https://).
start_server() {
    local dir=$1
    shift
    rm -f "$dir/out"
    "${SERVER_BIN:-./target/release/widgets-todos}" --port 0 "$@" >"$dir/out" 2>"$dir/err" &
    SERVER_PID=$!
    for _ in $(seq 1200); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        grep -q '^listening on ' "$dir/out" && break
        sleep 0.05
    done
    SERVER_URL=$(sed -n 's/^listening on //p' "$dir/out")
    if [ -z "$SERVER_URL" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        echo "the server did not start:"
        cat "$dir/err"
        return 1
    fi
}

# binfmt QEMU: makes the kernel run programs of QEMU's architecture (arm,
# aarch64) with qemu-user-static, as root: binfmt_misc mounted, and the
# interpreter that the package registered enabled. qemu-user-static
# registers with the F flag (the interpreter is opened once, at
# registration), so it works inside containers too.
binfmt() {
    [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    if ! grep -qx enabled "/proc/sys/fs/binfmt_misc/qemu-$1" 2>/dev/null; then
        update-binfmts --enable "qemu-$1" || update-binfmts --import "qemu-$1"
    fi
    grep -qx enabled "/proc/sys/fs/binfmt_misc/qemu-$1" || {
        echo "binfmt_misc has no qemu-$1: its programs cannot run here" >&2
        return 1
    }
}
