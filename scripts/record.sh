#!/bin/sh
# The request log, end to end: a client creates a todo, completes it
# and deletes it, and then the test asserts from GET /_admin/requests alone
# what the client sent, in order (oldest first): methods, targets, bodies,
# statuses, and the request ids its responses carried.
#
#   sh scripts/record.sh        # starts the release binary with --record 100
#   BASE_URL=http://127.0.0.1:8080 sh scripts/record.sh   # a server running
#                               # with --record (AUTH_TOKEN=... if it needs one)
#
# Against a server that has served others, it reads only the entries after
# the newest one it finds (`since`), so nobody else's requests may reach it
# meanwhile. Prints one line per check and `record: N passed, M failed`;
# exits non-zero on the first failure. Needs: sh, curl, python3.
set -u
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d) || exit 1
pid=
cleanup() {
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
passed=0

fail() {
    echo "FAIL: $*"
    if [ -s "$tmp/body" ]; then sed 's/^/  | /' "$tmp/body"; echo; fi
    echo "record: $passed passed, 1 failed"
    exit 1
}

ok() {
    passed=$((passed + 1))
    echo "ok $passed - $*"
}

if [ -z "${BASE_URL:-}" ]; then
    "${SERVER_BIN:-./target/release/widgets-todos}" --port 0 --record 100 --log-level warn \
        >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    i=0
    while [ "$i" -lt 200 ] && ! grep -q '^listening on ' "$tmp/out"; do
        sleep 0.05
        i=$((i + 1))
    done
    BASE_URL=$(sed -n 's/^listening on //p' "$tmp/out")
    [ -n "$BASE_URL" ] || { cat "$tmp/err"; fail "the server did not start"; }
fi
BASE_URL=${BASE_URL%/}

# call NAME EXPECTED_STATUS METHOD PATH [CURL_ARGS...]: the response's body
# in $tmp/body, and its X-Request-Id in $id.
call() {
    name=$1 expected=$2 method=$3 path=$4
    shift 4
    if [ -n "${AUTH_TOKEN:-}" ]; then set -- -H "Authorization: Bearer $AUTH_TOKEN" "$@"; fi
    status=$(curl -sS --max-time 10 -X "$method" -o "$tmp/body" -D "$tmp/head" \
        -w '%{http_code}' "$@" "$BASE_URL$path") || fail "$name: curl could not reach $BASE_URL$path"
    [ "$status" = "$expected" ] || fail "$name: expected $expected, got $status ($method $path)"
    id=$(tr -d '\r' <"$tmp/head" | sed -n 's/^[Xx]-[Rr]equest-[Ii][Dd]: //p')
    [ -n "$id" ] || fail "$name: no X-Request-Id"
    ok "$name ($status)"
}

# The newest entry before the scenario: only what comes after it counts.
call "the log before" 200 GET "/_admin/requests?limit=1"
since=$(python3 -c 'import json, sys; e = json.load(sys.stdin); print(e[0]["seq"] if e else 0)' \
    <"$tmp/body") || fail "the log is not a JSON array"

# The client scenario.
create='{"userId": 1, "title": "Buy milk"}'
call "create a todo" 201 POST /api/todos -H 'Content-Type: application/json' --data-binary "$create"
created_id=$id
todo=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])' <"$tmp/body") ||
    fail "no id in the created todo"
complete='{"completed": true}'
call "complete it" 200 PATCH "/api/todos/$todo" -H 'Content-Type: application/json' \
    --data-binary "$complete"
completed_id=$id
call "delete it" 200 DELETE "/api/todos/$todo"
deleted_id=$id

# What the client sent, from the request log alone.
call "the journal after" 200 GET "/_admin/requests?since=$since"
python3 - "$tmp/body" "$todo" "$create" "$complete" "$created_id" "$completed_id" "$deleted_id" \
    >"$tmp/checks" <<'EOF'
import json
import sys

path, todo, create, complete, *ids = sys.argv[1:]
entries = json.load(open(path))
n = 0


def check(name, ok, shown):
    global n
    if not ok:
        print(f"FAIL: {name}: {shown}")
        sys.exit(1)
    n += 1
    print(f"ok - {name}")


check("three requests since the scenario began", len(entries) == 3, entries)
# The journal lists the newest first; the client's order is the reverse.
post, patch, delete = reversed(entries)
expected = [
    (post, "POST", "/api/todos", create, 201),
    (patch, "PATCH", f"/api/todos/{todo}", complete, 200),
    (delete, "DELETE", f"/api/todos/{todo}", None, 200),
]
for (entry, method, target, body, status), request_id in zip(expected, ids):
    what = f"{method} {target}"
    check(f"{what}: the method, in order", entry["method"] == method, entry)
    check(f"{what}: the target", entry["target"] == target, entry)
    check(f"{what}: the body as sent", entry["body"] == body, entry)
    check(f"{what}: the status", entry["status"] == status, entry)
    check(f"{what}: the id of its response", entry["id"] == request_id, entry)
check("PATCH sent completed=true", json.loads(patch["body"]) == {"completed": True}, patch)
check(
    "POST and PATCH sent JSON",
    all(e["headers"].get("Content-Type") == "application/json" for e in (post, patch)),
    [post["headers"], patch["headers"]],
)
check("seq grows in the client's order", post["seq"] < patch["seq"] < delete["seq"], entries)
EOF
checked=$?
while IFS= read -r line; do
    case $line in
        "ok - "*) ok "${line#ok - }" ;;
        *) echo "$line" ;;
    esac
done <"$tmp/checks"
[ "$checked" -eq 0 ] || fail "the journal does not show what the client sent"
echo "record: $passed passed, 0 failed"
