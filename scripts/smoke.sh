#!/bin/sh
# End-to-end smoke test of a running widgets-todos server, with curl only.
#
#   BASE_URL=http://127.0.0.1:8080 sh scripts/smoke.sh
#   BASE_URL=https://localhost:8443 CA_CERT=cert.pem sh scripts/smoke.sh
#   AUTH_TOKEN=... sh scripts/smoke.sh     # against a server with --auth-token
#
# Walks every route with JSON and form bodies and checks each status code
# (and a few headers and bodies). Stops at the first failure, saying which
# step failed and what came back; exits 0 when every step passed. Works on
# a server that already holds data: it only relies on the items it creates.
# Needs: sh, curl, grep, sed.
set -u

BASE_URL=${BASE_URL:-http://127.0.0.1:8080}
BASE_URL=${BASE_URL%/}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
body="$tmp/body"
head="$tmp/head"
step=0

fail() {
    echo "FAIL step $step: $*" >&2
    if [ -s "$head" ]; then sed 's/^/  < /' "$head" >&2; fi
    if [ -s "$body" ]; then sed 's/^/  | /' "$body" >&2; echo >&2; fi
    exit 1
}

# call NAME EXPECTED_STATUS METHOD PATH [CURL_ARGS...]
call() {
    name=$1 expected=$2 method=$3 path=$4
    shift 4
    step=$((step + 1))
    : >"$body"
    : >"$head"
    if [ "$method" = HEAD ]; then
        set -- --head "$@"
    else
        set -- -X "$method" "$@"
    fi
    if [ -n "${CA_CERT:-}" ]; then set -- --cacert "$CA_CERT" "$@"; fi
    if [ -n "${AUTH_TOKEN:-}" ]; then set -- -H "Authorization: Bearer $AUTH_TOKEN" "$@"; fi
    status=$(curl -sS --max-time 10 -o "$body" -D "$head" -w '%{http_code}' "$@" "$BASE_URL$path") ||
        fail "$name: curl could not reach $BASE_URL$path"
    [ "$status" = "$expected" ] || fail "$name: expected $expected, got $status ($method $path)"
    echo "ok $step - $name ($status)"
}

json() { call "$@" -H 'Content-Type: application/json' --data-binary "$DATA"; }
form() { call "$@" -H 'Content-Type: application/x-www-form-urlencoded' --data-binary "$DATA"; }

# expect_body TEXT: the last response body contains TEXT (a fixed string).
expect_body() { grep -qF -- "$1" "$body" || fail "body lacks $1"; }
# expect_header TEXT: the last response has a header line containing TEXT.
expect_header() { tr -d '\r' <"$head" | grep -qiF -- "$1" || fail "headers lack $1"; }
# The id of the item in the last response body.
last_id() { sed -n 's/^{"id":\([0-9]*\).*/\1/p' "$body"; }

call "index" 200 GET /api
expect_body '"todos":"/api/todos"'
call "index HEAD" 200 HEAD /api
expect_header 'content-length:'
call "index OPTIONS" 204 OPTIONS /api
expect_header 'allow: GET, HEAD, OPTIONS'

for kind in widgets todos; do
    call "list $kind" 200 GET "/api/$kind"
    expect_header 'content-type: application/json'
    call "list $kind HEAD" 200 HEAD "/api/$kind"
    call "list $kind OPTIONS" 204 OPTIONS "/api/$kind"
    expect_header 'allow: GET, HEAD, POST, OPTIONS'
done

DATA='{"price": "$10", "quality": "good"}' json "create widget (JSON)" 201 POST /api/widgets
w1=$(last_id)
[ -n "$w1" ] || fail "no id in the created widget"
expect_header "location: /api/widgets/$w1"
DATA='price=%E2%82%AC5&quality=fine' form "create widget (form)" 201 POST /api/widgets
w2=$(last_id)
expect_body '"price":"€5"'
call "get widget" 200 GET "/api/widgets/$w1"
expect_body '"quality":"good"'
call "get widget HEAD" 200 HEAD "/api/widgets/$w1"
call "widget OPTIONS" 204 OPTIONS "/api/widgets/$w1"
expect_header 'allow: GET, HEAD, PUT, PATCH, DELETE, OPTIONS'
DATA='{"price": "$12"}' json "update widget (PUT, JSON)" 200 PUT "/api/widgets/$w1"
expect_body '"price":"$12"'
DATA='quality=great' form "update widget (PUT, form)" 200 PUT "/api/widgets/$w1"
expect_body '"quality":"great"'
DATA='{"quality": "fair"}' call "update widget (PATCH, merge-patch)" 200 PATCH "/api/widgets/$w2" \
    -H 'Content-Type: application/merge-patch+json' --data-binary '{"quality": "fair"}'
DATA='price=7' form "update widget (PATCH, form)" 200 PATCH "/api/widgets/$w2"

DATA='{"userId": 1, "title": "Buy milk"}' json "create todo (JSON)" 201 POST /api/todos
t1=$(last_id)
expect_body '"completed":false'
expect_header "location: /api/todos/$t1"
DATA='userId=2&title=Walk+the+dog&completed=true' form "create todo (form)" 201 POST /api/todos
t2=$(last_id)
expect_body '"title":"Walk the dog"'
call "get todo" 200 GET "/api/todos/$t1"
DATA='{"completed": true}' json "update todo (PUT, JSON)" 200 PUT "/api/todos/$t1"
expect_body '"completed":true'
DATA='completed=false' form "update todo (PUT, form)" 200 PUT "/api/todos/$t2"
expect_body '"completed":false'
DATA='{"title": "Buy oat milk"}' json "update todo (PATCH, JSON)" 200 PATCH "/api/todos/$t1"
DATA='userId=3' form "update todo (PATCH, form)" 200 PATCH "/api/todos/$t2"

# List queries: a filter, a page with its Link header (only on the todos
# made here, so a server holding other data passes too).
call "filter todos" 200 GET "/api/todos?id=$t1&id=$t2&_sort=id&_order=desc"
expect_header 'x-total-count: 2'
expect_body "[{\"id\":$t2,"
call "page of todos" 200 GET "/api/todos?id=$t1&id=$t2&_page=1&_limit=1"
expect_header 'rel="next"'
expect_body "[{\"id\":$t1,"
# Conditional requests: the ETag gets a 304, a stale If-Match a 412.
call "todo with ETag" 200 GET "/api/todos/$t1"
etag=$(tr -d '\r' <"$head" | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
[ -n "$etag" ] || fail "no ETag"
call "not modified" 304 GET "/api/todos/$t1" -H "If-None-Match: $etag"
DATA='{"title": "lost update"}' json "stale If-Match" 412 PUT "/api/todos/$t1" -H 'If-Match: "stale"'
DATA='{"completed": true}' json "current If-Match" 200 PATCH "/api/todos/$t1" -H "If-Match: $etag"

# Errors: each is problem+json.
call "unknown path" 404 GET /api/nothing
expect_header 'content-type: application/problem+json'
call "malformed id" 404 GET /api/todos/abc
call "method not allowed" 405 DELETE /api/todos
expect_header 'allow: GET, HEAD, POST, OPTIONS'
call "query string" 400 GET "/api/todos/$t1?verbose=1"
call "unknown list parameter" 400 GET "/api/todos?titel=milk"
call "not acceptable" 406 GET /api/todos -H 'Accept: text/html'
DATA='{"userId": 1, "title": "x"}' call "JSON sent as form" 400 POST /api/todos --data-binary '{"userId": 1, "title": "x"}'
expect_body 'Content-Type: application/json'
DATA='{"userId": 1,' json "bad JSON" 400 POST /api/todos
DATA='title=x' call "unsupported media type" 415 POST /api/todos -H 'Content-Type: text/plain' --data-binary 'title=x'
DATA='{"userId": 0}' json "invalid fields" 422 POST /api/todos
expect_body '"errors":{"userId":'
expect_body '"message":"the todo has 2 invalid fields: '
DATA='{}' json "empty update" 422 PUT "/api/widgets/$w1"
big=$(printf '%070000d' 0)
DATA="{\"userId\": 1, \"title\": \"$big\"}" json "body too large" 413 POST /api/todos

# react-admin's simple-rest dialect, and the total it reads.
call "list in the simple-rest dialect" 200 GET "/api/todos?sort=%5B%22id%22%2C%22DESC%22%5D&range=%5B0%2C0%5D&filter=%7B%22id%22%3A%5B$t2%5D%7D"
expect_body "{\"id\":$t2,"
expect_header 'content-range: todos 0-0/1'

# DELETE answers the item deleted; Prefer: return=minimal, nothing.
for path in "/api/widgets/$w1" "/api/todos/$t1"; do
    call "delete $path" 200 DELETE "$path"
    expect_body "{\"id\":${path##*/},"
    call "gone $path" 404 GET "$path"
done
for path in "/api/widgets/$w2" "/api/todos/$t2"; do
    call "delete $path, return=minimal" 204 DELETE "$path" -H 'Prefer: return=minimal'
    expect_header 'preference-applied: return=minimal'
    call "gone $path" 404 GET "$path"
done

echo "smoke: $step passed, 0 failed"
