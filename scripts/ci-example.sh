#!/bin/sh
# Start widgets-todos on a free port with a copy of a fixture, wait until
# it answers, run the checks, stop it, and expect exit status 0.
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

# The port, from the one line on stdout (up to 10 s).
port=
for _ in $(seq 100); do
    port=$(sed -n 's/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/stdout")
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/stderr"; exit 1; }
    sleep 0.1
done
[ -n "$port" ] || { echo "no listening line within 10 s"; cat "$work/stderr"; exit 1; }

# Ready: /healthz answers 200 (up to 10 tries, a second apart).
tries=1
until "$server" healthcheck --port "$port"; do
    [ "$tries" -lt 10 ] || { echo "not healthy after 10 tries"; exit 1; }
    tries=$((tries + 1))
    sleep 1
done

# The checks.
base="http://127.0.0.1:$port"
curl -fsS "$base/api/todos?userId=1" | grep -q '"title":"Buy milk"'
BASE_URL=$base sh scripts/smoke.sh

# Stop by PID; a clean stop is exit status 0.
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" -eq 0 ] || { echo "the server exited with $status"; cat "$work/stderr"; exit 1; }
echo "ci: the server answered, the checks passed, it stopped with 0"
