#!/usr/bin/env bash
# react-admin's json-server data provider, unchanged, against the release
# binary: installs the pinned npm packages of scripts/react-admin/ under
# target/react-admin (only when missing or when the pins changed), starts
# the server on a free port of 127.0.0.1 with an empty store, and runs
# scripts/react-admin/test.mjs with Node, which calls every data-provider
# operation and checks its result. Exits non-zero on any failure; skips,
# saying so, only when Node or npm is not installed. Run by scripts/test.sh;
# takes a few seconds once the packages are installed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "react-admin: skipped: Node and npm are needed (Debian: apt-get install nodejs npm)"
    exit 0
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 18 ]; then
    echo "FAIL: Node $(node --version) has no fetch: Node 18 or later is needed"
    exit 1
fi

# The pins: package.json names exact versions, package-lock.json every
# package under them, and npm ci installs exactly that lock. It runs only
# when the last install under target/ did not finish or was of other pins.
dir=target/react-admin
stamp=$dir/installed.json
if ! cat scripts/react-admin/package.json scripts/react-admin/package-lock.json | cmp -s - "$stamp"; then
    echo "installing the pinned npm packages under $dir"
    rm -f "$stamp"
    mkdir -p "$dir"
    cp scripts/react-admin/package.json scripts/react-admin/package-lock.json "$dir/"
    if ! timeout 600 npm ci --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel error </dev/null; then
        echo "FAIL: npm ci of scripts/react-admin/package-lock.json under $dir"
        exit 1
    fi
    cat scripts/react-admin/package.json scripts/react-admin/package-lock.json >"$stamp"
fi
echo "ra-data-json-server $(node -p "require('./$dir/node_modules/ra-data-json-server/package.json').version"), ra-core $(node -p "require('./$dir/node_modules/ra-core/package.json').version"), Node $(node --version)"

# The release binary, rebuilt when the sources changed (a no-op otherwise),
# unless SERVER_BIN names another.
[ -n "${SERVER_BIN:-}" ] || cargo build --release --quiet

tmp=$(mktemp -d)
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
# An empty store: the test creates its todos and counts on them alone.
start_server "$tmp" --log-level warn || { pid=${SERVER_PID:-}; exit 1; }
pid=$SERVER_PID
echo "server on $SERVER_URL"

# A copy beside node_modules, so that its bare import resolves as in an app.
cp scripts/react-admin/test.mjs "$dir/test.mjs"
status=0
API_URL="$SERVER_URL/api" timeout 90 node "$dir/test.mjs" </dev/null || status=$?
if [ "$status" -ne 0 ]; then
    [ "$status" -ne 124 ] || echo "FAIL: test.mjs did not finish within 90 s"
    if [ -s "$tmp/err" ]; then
        echo "the server's log:"
        tail -n 20 "$tmp/err"
    fi
    exit 1
fi

# The server stops cleanly after all that.
kill -TERM "$pid"
for _ in $(seq 200); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
done
kill -0 "$pid" 2>/dev/null && { echo "FAIL: the server did not stop within 10 s of SIGTERM"; exit 1; }
status=0
wait "$pid" || status=$?
pid=
[ "$status" -eq 0 ] || { echo "FAIL: the server exited with $status after SIGTERM"; cat "$tmp/err"; exit 1; }
