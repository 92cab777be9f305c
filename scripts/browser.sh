#!/usr/bin/env bash
# CORS in a real browser: headless Chromium (Debian's chromium, installed
# here if missing) loads scripts/browser/page.html from a second local port
# and, from that other origin, POSTs JSON with a custom header (a preflight),
# reads X-Total-Count, Location, ETag and Content-Range (exposed headers),
# GETs with credentials: 'include' (the origin echoed, credentials
# allowed), and DELETEs, reading the todo deleted, from the release binary; an
# EventSource on /api/events, opened before the POST, must see the todo
# created. The page writes its verdict into the DOM, read back with
# --dump-dom. To show the check can fail, it is run a second time against a
# server started with --no-cors, where the browser must refuse. 127.0.0.1
# only; every wait is bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

need chromium chromium

cargo build --release --quiet
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

# The page's own origin: another port, served by Python.
page_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$page_port" --bind 127.0.0.1 --directory scripts/browser >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:$page_port/page.html" && break
    sleep 0.05
done

# page_result [SERVER_FLAGS...]: the verdict the page shows against a fresh
# server started with those flags.
page_result() {
    start_server "$tmp" --log-level warn "$@" || return 0
    local pid=$SERVER_PID api=$SERVER_URL
    pids+=("$pid")
    rm -rf "$tmp/profile"
    timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$tmp/profile" --virtual-time-budget=10000 \
        --dump-dom "http://127.0.0.1:$page_port/page.html?api=$api" >"$tmp/dom" 2>"$tmp/chromium.log" || true
    kill "$pid" 2>/dev/null || true
    sed -n 's/.*<pre id="result">\([^<]*\)<.*/\1/p' "$tmp/dom"
}

result=$(page_result)
echo "browser, CORS on: $result"
case $result in
    "RESULT: ok"*) ;;
    *) echo "FAIL: the cross-origin calls did not work in Chromium"; tail -5 "$tmp/chromium.log"; exit 1 ;;
esac
refused=$(page_result --no-cors)
echo "browser, --no-cors: $refused"
case $refused in
    "RESULT: error"*) ;;
    *) echo "FAIL: without CORS the browser should have refused"; exit 1 ;;
esac
echo "browser: 2 passed, 0 failed"
