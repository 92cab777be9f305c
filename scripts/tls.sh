#!/usr/bin/env bash
# HTTPS: builds the server with the `tls` feature (in target/tls, so the
# default build is left alone), makes a throwaway certificate for localhost
# with openssl, starts the server on a free port with --tls-cert/--tls-key,
# and walks it with scripts/smoke.sh over HTTPS, then checks several
# requests on one connection, and that plain HTTP on the same port gets no
# answer. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

cargo build --release --quiet --features tls --target-dir target/tls
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=localhost" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null

SERVER_BIN=./target/tls/release/widgets-todos start_server "$tmp" --log-level warn \
    --tls-cert "$tmp/cert.pem" --tls-key "$tmp/key.pem"
pid=$SERVER_PID
case $SERVER_URL in
    https://*) ;;
    *) echo "FAIL: the listening line does not say https: $SERVER_URL"; exit 1 ;;
esac
port=${SERVER_URL##*:}

BASE_URL="https://localhost:$port" CA_CERT="$tmp/cert.pem" sh scripts/smoke.sh | tee "$tmp/smoke"
passed=$(sed -n 's/^smoke: \([0-9]*\) passed.*/\1/p' "$tmp/smoke")

# Several requests on one TLS connection, one of them delayed: the
# connection thread must wait for each response to be written before it
# reads again (tiny_http's TLS stream is one lock), or this hangs.
statuses=$(curl -s --max-time 10 --cacert "$tmp/cert.pem" -w '%{http_code} %{num_connects}\n' \
    -o /dev/null "https://localhost:$port/api/todos" \
    -o /dev/null "https://localhost:$port/api/todos?_delay=300" \
    -o /dev/null "https://localhost:$port/api/widgets" | tr '\n' ' ')
if [ "$statuses" != "200 1 200 0 200 0 " ]; then
    echo "FAIL: three requests on one TLS connection: got '$statuses'"
    exit 1
fi

# Plain HTTP to the HTTPS port is not served.
if curl -s --max-time 5 "http://localhost:$port/api" | grep -q widgets; then
    echo "FAIL: plain HTTP was served on the HTTPS port"
    exit 1
fi
# A wrong certificate file stops start-up with a clear message.
echo "not a key" >"$tmp/bad.pem"
if ./target/tls/release/widgets-todos --port 0 --tls-cert "$tmp/cert.pem" --tls-key "$tmp/bad.pem" 2>"$tmp/bad.err"; then
    echo "FAIL: started with a bad key"
    exit 1
fi
grep -q "private key" "$tmp/bad.err" || { echo "FAIL: unclear error:"; cat "$tmp/bad.err"; exit 1; }
echo "tls: $((passed + 3)) passed, 0 failed"
