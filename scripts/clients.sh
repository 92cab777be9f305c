#!/usr/bin/env bash
# The clients people point at this server, unchanged, against the release
# binary, each operation checked for the data it returns and each error for
# what the user would see:
#
#   ra-json-server   react-admin's json-server data provider
#   ra-simple-rest   react-admin's simple-rest data provider
#   refine           Refine's simple-rest data provider (axios)
#   typed            a client generated from the served OpenAPI document by
#                    openapi-typescript, with openapi-fetch, compiled by
#                    tsc --strict (a type error fails it)
#   axios            axios itself: an array in `params` sent its default
#                    way (`userId[]=1&userId[]=2`), its errors
#   postman          the collection Postman's converter (openapi-to-postmanv2,
#                    Example mode) makes of the served document, run by
#                    newman on the sample data: every request must succeed
#   python           a client generated from the served document by
#                    openapi-python-client (scripts/clients/python_client.py)
#   sse              the change feed's clients, eventsource 4.x for Node and
#                    sseclient-py, followed through cuts and resumes: run by
#                    scripts/sse.sh, whose own packages are in scripts/sse/
#
# Installs the pinned npm packages of scripts/clients/ under target/clients
# with one npm ci, and for python the pinned packages of
# scripts/clients/requirements.txt in a virtual environment under
# target/clients-venv with pip (each only when missing or when its pins
# changed), then for each client starts the server on a free port of
# 127.0.0.1 with an empty store (postman: a copy of scripts/seed.json),
# runs its checks (scripts/clients/NAME.mjs, typed.ts, python_client.py),
# and stops the server, which must exit 0 on SIGTERM. Prints each client's
# lines and its "NAME: N passed, M failed", then "clients: N passed, M
# failed" for all; exits non-zero on any failure. Skips, saying so, only
# when Node or npm is not installed. Run by scripts/test.sh; alone:
#
#   scripts/clients.sh                   # every client
#   scripts/clients.sh refine typed      # some
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "clients: skipped: Node and npm are needed (Debian: apt-get install nodejs npm)"
    exit 0
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 18 ]; then
    echo "FAIL: Node $(node --version) has no fetch: Node 18 or later is needed"
    exit 1
fi
clients=("$@")
[ ${#clients[@]} -gt 0 ] || clients=(ra-json-server ra-simple-rest refine typed axios postman python)

# The pins: package.json names exact versions, package-lock.json every
# package under them, and npm ci installs exactly that lock. It runs only
# when the last install under target/ did not finish or was of other pins.
dir=target/clients
stamp=$dir/installed.json
if ! cat scripts/clients/package.json scripts/clients/package-lock.json | cmp -s - "$stamp"; then
    echo "installing the pinned npm packages under $dir"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp scripts/clients/package.json scripts/clients/package-lock.json "$dir/"
    if ! timeout 600 npm ci --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel error </dev/null; then
        echo "FAIL: npm ci of scripts/clients/package-lock.json under $dir"
        exit 1
    fi
    cat scripts/clients/package.json scripts/clients/package-lock.json >"$stamp"
fi
version() { node -p "require('./$dir/node_modules/$1/package.json').version"; }
echo "Node $(node --version); ra-core $(version ra-core), ra-data-json-server $(version ra-data-json-server)," \
    "ra-data-simple-rest $(version ra-data-simple-rest), @refinedev/simple-rest $(version @refinedev/simple-rest)," \
    "openapi-typescript $(version openapi-typescript), openapi-fetch $(version openapi-fetch), typescript $(version typescript)," \
    "axios $(version axios), openapi-to-postmanv2 $(version openapi-to-postmanv2), newman $(version newman)"

# The Python pins, for python only: requirements.txt names every package at
# an exact version; pip installs them in a virtual environment of their
# own, again only when the last install did not finish or was of others.
venv=target/clients-venv
if [[ " ${clients[*]} " == *" python "* ]] && ! cmp -s scripts/clients/requirements.txt "$venv/installed.txt"; then
    echo "installing the pinned Python packages under $venv"
    rm -rf "$venv"
    # Debian's python3 makes a venv only with python3-venv installed.
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
        echo "installing: python3-venv"
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv
        rm -rf "$venv"
        python3 -m venv "$venv"
    fi
    if ! timeout 600 "$venv/bin/pip" install --quiet --disable-pip-version-check -r scripts/clients/requirements.txt </dev/null; then
        echo "FAIL: pip install of scripts/clients/requirements.txt under $venv"
        exit 1
    fi
    cp scripts/clients/requirements.txt "$venv/installed.txt"
fi

# The release binary, rebuilt when the sources changed (a no-op otherwise),
# unless SERVER_BIN names another.
[ -n "${SERVER_BIN:-}" ] || cargo build --release --quiet

# Copies beside node_modules, so that their bare imports resolve as in an
# app; the generated client's files are made afresh.
cp scripts/clients/*.mjs scripts/clients/typed.ts scripts/clients/tsconfig.json "$dir/"
rm -rf "$dir/out" "$dir/api.d.ts" "$dir/python"

tmp=$(mktemp -d)
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

# stop_server: SIGTERM, and the server must exit 0 within 10 s.
stop_server() {
    kill -TERM "$pid"
    for _ in $(seq 200); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "FAIL: the server did not stop within 10 s of SIGTERM"
        return 1
    fi
    local status=0
    wait "$pid" || status=$?
    pid=
    [ "$status" -eq 0 ] || { echo "FAIL: the server exited with $status after SIGTERM"; cat "$tmp/err"; return 1; }
}

# run_typed: the generated client. Its type check and build count as one
# check each, before its own.
run_typed() {
    local bin=$dir/node_modules/.bin
    if ! timeout 60 "$bin/openapi-typescript" "$SERVER_URL/api/openapi.json" -o "$dir/api.d.ts" >"$tmp/generate" 2>&1 </dev/null; then
        echo "FAIL - openapi-typescript $SERVER_URL/api/openapi.json"
        cat "$tmp/generate"
        echo "typed: 0 passed, 1 failed"
        return 1
    fi
    echo "ok - openapi-typescript: the served document generates api.d.ts"
    if ! timeout 120 "$bin/tsc" -p "$dir/tsconfig.json" </dev/null; then
        echo "FAIL - tsc --strict: typed.ts does not type-check against the generated api.d.ts"
        echo "typed: 1 passed, 1 failed"
        return 1
    fi
    echo "ok - tsc --strict: typed.ts type-checks against api.d.ts, and is built"
    API_URL="$SERVER_URL/api" TYPED_CHECKS=2 timeout 90 node "$dir/out/typed.js" </dev/null
}

# run_python: the client openapi-python-client generates from the served
# document, as the package widgets_todos_client; the generation counts as
# one check, before the client's own.
run_python() {
    local out=$dir/python/widgets_todos_client
    mkdir -p "$dir/python"
    if ! PATH="$PWD/$venv/bin:$PATH" timeout 120 "$venv/bin/openapi-python-client" generate \
        --url "$SERVER_URL/api/openapi.json" --output-path "$out" --meta none --overwrite \
        >"$tmp/generate" 2>&1 </dev/null; then
        echo "FAIL - openapi-python-client generate --url $SERVER_URL/api/openapi.json"
        cat "$tmp/generate"
        echo "python: 0 passed, 1 failed"
        return 1
    fi
    # It warns of what it could not generate, and goes on without it.
    if grep -q -i "warning" "$tmp/generate"; then
        echo "FAIL - openapi-python-client warned:"
        cat "$tmp/generate"
        echo "python: 0 passed, 1 failed"
        return 1
    fi
    echo "ok - openapi-python-client $("$venv/bin/pip" show openapi-python-client | sed -n 's/^Version: //p'): the served document generates widgets_todos_client"
    API_URL="$SERVER_URL/api" PYTHON_CHECKS=1 PYTHONPATH="$dir/python" \
        timeout 90 "$venv/bin/python" scripts/clients/python_client.py </dev/null
}

total_passed=0
total_failed=0
status=0
for client in "${clients[@]}"; do
    case $client in
        ra-json-server | ra-simple-rest | refine | typed | axios | postman | python) ;;
        *) echo "unknown client '$client': ra-json-server, ra-simple-rest, refine, typed, axios, postman or python"; exit 2 ;;
    esac
    echo "== $client"
    # An empty store: each client creates its todos and counts on them
    # alone; but the document's examples are of the sample data.
    data=()
    if [ "$client" = postman ]; then
        cp scripts/seed.json "$tmp/db.json"
        data=(--data "$tmp/db.json")
    fi
    start_server "$tmp" --log-level warn "${data[@]}" || { pid=${SERVER_PID:-}; exit 1; }
    pid=$SERVER_PID
    ran=0
    if [ "$client" = typed ]; then
        run_typed | tee "$tmp/lines" || ran=$?
    elif [ "$client" = python ]; then
        run_python | tee "$tmp/lines" || ran=$?
    else
        API_URL="$SERVER_URL/api" timeout 90 node "$dir/$client.mjs" </dev/null | tee "$tmp/lines" || ran=$?
    fi
    summary=$(sed -n "s/^$client: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p" "$tmp/lines")
    if [ -z "$summary" ]; then
        echo "FAIL: $client ended without its summary line (status $ran; 124: out of time)"
        summary="0 1"
    fi
    read -r p f <<<"$summary"
    total_passed=$((total_passed + p))
    total_failed=$((total_failed + f))
    if [ "$ran" -ne 0 ] || [ "$f" -ne 0 ]; then
        status=1
        if [ -s "$tmp/err" ]; then
            echo "the server's log:"
            tail -n 20 "$tmp/err"
        fi
    fi
    stop_server || { status=1; total_failed=$((total_failed + 1)); }
done
scripts/sse.sh | tee "$tmp/sse" || status=1
summary=$(sed -n 's/^sse: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$tmp/sse")
read -r p f <<<"${summary:-0 1}"
total_passed=$((total_passed + p))
total_failed=$((total_failed + f))
echo "clients: $total_passed passed, $total_failed failed"
exit "$status"
