#!/usr/bin/env bash
# Two clients of the change feed nobody here wrote, unchanged and pinned,
# each following /api/events through two cuts and resumes (scripts/sse/):
#
#   eventsource    eventsource 4.x for Node (package-lock.json), which
#                  drops an `id:` sent without `data:`
#   sseclient-py   sseclient-py over requests (requirements.txt, exact
#                  versions), which reads the body in 128-byte blocks
#
# Installs them under target/sse (npm ci, and a venv with pip; only when
# missing or when the pins changed), then for each starts the release
# binary on a free port of 127.0.0.1 and runs the client's script, which
# must see every write once, in order. Prints each client's lines, then
# "sse: N passed, M failed"; exits non-zero on any failure. Skips Node's
# client, saying so, when Node 20 or later and npm are not installed. Run
# by scripts/test.sh; alone: scripts/sse.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

dir=target/sse
mkdir -p "$dir"
node_ok=
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 \
    && [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ]; then
    node_ok=1
    stamp=$dir/npm-installed
    if ! cat scripts/sse/package.json scripts/sse/package-lock.json | cmp -s - "$stamp"; then
        echo "installing the pinned npm packages under $dir"
        rm -rf "$dir/node_modules" "$stamp"
        cp scripts/sse/package.json scripts/sse/package-lock.json "$dir/"
        timeout 300 npm ci --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel error </dev/null
        cat scripts/sse/package.json scripts/sse/package-lock.json >"$stamp"
    fi
else
    echo "sse: eventsource skipped: Node 20 or later and npm are needed"
fi
stamp=$dir/pip-installed
if ! cmp -s scripts/sse/requirements.txt "$stamp"; then
    echo "installing the pinned Python packages into $dir/venv"
    rm -rf "$dir/venv" "$stamp"
    python3 -m venv "$dir/venv"
    timeout 300 "$dir/venv/bin/pip" install --quiet --disable-pip-version-check \
        --only-binary=:all: -r scripts/sse/requirements.txt </dev/null
    cp scripts/sse/requirements.txt "$stamp"
fi
cp scripts/sse/follow.mjs scripts/sse/follow.py "$dir/"

[ -n "${SERVER_BIN:-}" ] || cargo build --release --quiet

tmp=$(mktemp -d)
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

total_passed=0
total_failed=0
status=0
run() {
    local name=$1
    shift
    echo "== $name"
    # A fresh file: the last server's listening line must not be read.
    rm -f "$tmp/out"
    start_server "$tmp" --log-level warn
    pid=$SERVER_PID
    local ran=0
    SERVER_URL=$SERVER_URL timeout 60 "$@" </dev/null | tee "$tmp/lines" || ran=$?
    kill -TERM "$pid"
    wait "$pid" || { echo "FAIL: the server did not exit 0 after SIGTERM"; ran=1; }
    pid=
    local summary
    summary=$(sed -n "s/^$name: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p" "$tmp/lines")
    [ -n "$summary" ] || { echo "FAIL: $name ended without its summary (status $ran; 124: out of time)"; summary="0 1"; }
    read -r p f <<<"$summary"
    total_passed=$((total_passed + p))
    total_failed=$((total_failed + f))
    if [ "$ran" -ne 0 ] || [ "$f" -ne 0 ]; then
        status=1
        tail -n 20 "$tmp/err"
    fi
}
[ -z "$node_ok" ] || run eventsource node "$dir/follow.mjs"
run sseclient-py "$dir/venv/bin/python" "$dir/follow.py"
echo "sse: $total_passed passed, $total_failed failed"
exit "$status"
