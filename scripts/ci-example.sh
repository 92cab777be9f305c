#!/bin/sh
# Start widgets-todos on a free port with a copy of a fixture, wait until
# it answers, run the checks, stop it, and expect exit status 0. A check
# that fails prints the request, the status and body it got, and the
# server's last log lines, then exits 1.
# Copy it into your CI; docs/ci.md explains each step.
set -eu
server=${WIDGETS_TODOS:-widgets-todos}
work=$(mktemp -d)
pid=
# Whatever happens, leave no server running and no files behind.
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cp scripts/seed.json "$work/db.json"     # a copy: the server rewrites its data file
"$server" --port 0 --data "$work/db.json" >"$work/stdout" 2>"$work/stderr" &
pid=$!

# fail WHAT: say what failed, show the server's last log lines, exit 1.
fail() {
    echo "ci: FAILED: $1"
    sleep 0.2    # the access log reaches stderr within 50 ms
    echo "ci: the server's last log lines:"
    tail -n 20 "$work/stderr" | sed 's/^/  /'
    exit 1
}

# check PATH TEXT: GET PATH must answer 200 with TEXT in its body.
check() {
    status=$(curl -sS -o "$work/body" -w '%{http_code}' "$base$1" 2>"$work/curl") ||
        fail "GET $base$1: no response ($(cat "$work/curl"))"
    if [ "$status" != 200 ] || ! grep -qF -- "$2" "$work/body"; then
        echo "ci: GET $base$1 answered $status; expected 200 with $2 in the body, which was:"
        sed 's/^/  /' "$work/body"; echo
        fail "GET $1"
    fi
    echo "ci: ok: GET $1 has $2"
}

# The port, from the one line on stdout (up to 10 s).
port=
for _ in $(seq 100); do
    port=$(sed -n 's/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/stdout")
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || fail "the server exited at start-up"
    sleep 0.1
done
[ -n "$port" ] || fail "no listening line within 10 s"

# Ready: /healthz answers 200 (up to 10 tries, a second apart).
tries=1
until "$server" healthcheck --port "$port"; do
    [ "$tries" -lt 10 ] || fail "not healthy after 10 tries"
    tries=$((tries + 1))
    sleep 1
done

# The checks.
base="http://127.0.0.1:$port"
check "/api/todos?userId=1" '"title":"Buy milk"'
BASE_URL=$base sh scripts/smoke.sh || fail "scripts/smoke.sh, at the step it names above"

# Stop by PID; a clean stop is exit status 0.
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" -eq 0 ] || fail "the server exited with $status"
echo "ci: the server answered, the checks passed, it stopped with 0"
