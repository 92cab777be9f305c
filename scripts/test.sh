#!/usr/bin/env bash
# The whole test suite, as CI runs it and as a newcomer should:
#   format and lint checks, unit and integration tests, the files one
#   request runs held against "Read the code" (scripts/trace.sh), then the release
#   binary started on a free port and walked by scripts/smoke.sh, the CI
#   recipe of docs/ci.md (scripts/ci-example.sh), and a copy of it made to
#   fail, which must say why, a client
#   scenario checked from the request log (scripts/record.sh), the same
#   behind nginx with the attacks it must stop, the clients people use
#   (react-admin's two data providers, Refine's, a client generated from
#   the OpenAPI document) run unchanged with Node, two clients of the
#   change feed (eventsource for Node, sseclient-py), the abuse suite, how
#   long a costly list query keeps writes waiting (scripts/listlock.py), the
#   same list queries against json-server 0.17.4 itself
#   (scripts/side_by_side.py), the server for 64-bit and 32-bit ARM, built
#   with Debian's packages and the whole of cargo test run on each under
#   qemu-user (scripts/cross.sh), the image built FROM scratch, amd64 and
#   arm64, and run under Docker (scripts/container-test.sh), the kill -9
#   crash test of --data, the data files changed by another program
#   (scripts/tampered.py), a full disk under --data (as root), the import's
#   peak memory on a json-server db.json (scripts/loadmem.py), every
#   example of README.md and docs/, and the benchmark in its quick mode,
#   alone and against HEAD's own build (scripts/bench.sh --against).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

# Each stage's heading says when it began, in seconds since the suite did,
# and the suite ends with the seconds each stage took, slowest first: where
# a slow run spent its time.
stage_names=()
stage_starts=()
stage() {
    stage_names+=("$1")
    stage_starts+=("$SECONDS")
    echo "== $1 (at $SECONDS s)"
}

# What the suite needs beyond Rust, installed only when missing (apt, so as
# root): a fresh machine needs nothing else before this script.
stage "what the suite needs (scripts/setup.sh)"
scripts/setup.sh

stage "cargo fmt --check"
cargo fmt --all -- --check
stage "cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings
stage "cargo clippy --all-targets --features tls -- -D warnings"
cargo clippy --all-targets --features tls --target-dir target/tls -- -D warnings
stage "cargo test"
tmp=$(mktemp -d)
cargo test 2>&1 | tee "$tmp/cargo-test"
cargo_passed=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$tmp/cargo-test" | awk '{ n += $1 } END { print n + 0 }')
stage "the path of one request: \"Read the code\" (src/lib.rs) against the trace"
# The debug build cargo test made, under callgrind; --limits holds the
# request's path to its limits (functions and files per request,
# function length).
scripts/trace.sh --check --limits
stage "cargo build --release"
cargo build --release

stage "smoke test against the release binary"
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
start_server "$tmp" --log-level warn
pid=$SERVER_PID
BASE_URL="$SERVER_URL" sh scripts/smoke.sh | tee "$tmp/smoke"
smoke_passed=$(sed -n 's/^smoke: \([0-9]*\) passed.*/\1/p' "$tmp/smoke")

stage "the CI recipe of docs/ci.md, run as it is written"
WIDGETS_TODOS=target/release/widgets-todos sh scripts/ci-example.sh | tee "$tmp/ci-example"
grep -q '^ci: the server answered' "$tmp/ci-example"
stage "the CI recipe made to fail: it prints the request, the status, the body and the server's log"
sed 's/Buy milk/Buy bread/' scripts/ci-example.sh >"$tmp/ci-fail.sh"
if WIDGETS_TODOS=target/release/widgets-todos sh "$tmp/ci-fail.sh" >"$tmp/ci-fail" 2>&1; then
    cat "$tmp/ci-fail"; echo "the failing variant of scripts/ci-example.sh exited 0"; exit 1
fi
for said in 'GET http://127.0.0.1:[0-9]*/api/todos?userId=1 answered 200; expected 200 with "title":"Buy bread"' \
    '^  \[{"id":1,"userId":1,"title":"Buy milk"' '^ci: the server.s last log lines:$' \
    'INFO .* GET /api/todos?userId=1 200 '; do
    grep -q "$said" "$tmp/ci-fail" || { cat "$tmp/ci-fail"; echo "the failing variant did not print: $said"; exit 1; }
done
echo "ci-fail: it exited 1, naming the request, its status and body, and the server's last log lines"

stage "the request log: a client scenario, asserted from /_admin/requests"
sh scripts/record.sh | tee "$tmp/record"
record_passed=$(sed -n 's/^record: \([0-9]*\) passed.*/\1/p' "$tmp/record")

stage "nginx in front of the release binary: attacks it stops, the smoke test through it"
scripts/proxy.sh | tee "$tmp/proxy"
proxy_passed=$(sed -n 's/^proxy: \([0-9]*\) passed.*/\1/p' "$tmp/proxy")

stage "the clients: react-admin's data providers, Refine's, axios, generated clients (TypeScript, Python), a Postman collection"
scripts/clients.sh | tee "$tmp/clients"
# Nothing to count when it skipped for want of Node and npm: it says so.
clients_passed=$(sed -n 's/^clients: \([0-9]*\) passed.*/\1/p' "$tmp/clients")


stage "abuse suite (quick) against the release binary"
python3 scripts/abuse.py --quick | tee "$tmp/abuse"
abuse_passed=$(sed -n 's/^abuse: \([0-9]*\) passed.*/\1/p' "$tmp/abuse")

stage "a costly list query (30,000 ids, _like patterns) over 100,000 todos: writes wait under 0.5 s"
python3 scripts/listlock.py | tee "$tmp/listlock"
grep -q '^listlock: ok' "$tmp/listlock"

stage "the same list queries against json-server 0.17.4 and the release binary"
python3 scripts/side_by_side.py | tee "$tmp/side-by-side"
# Nothing to count when it skipped for want of Node and npm: it says so.
side_by_side_passed=$(sed -n 's/^side-by-side: \([0-9]*\) passed.*/\1/p' "$tmp/side-by-side")

stage "HTTPS: the tls feature, the smoke test over https"
scripts/tls.sh | tee "$tmp/tls"
tls_passed=$(sed -n 's/^tls: \([0-9]*\) passed.*/\1/p' "$tmp/tls")

cross_passed=0
for target in aarch64 armv7; do
    stage "ARM: $target built with Debian's packages, cargo test under qemu-user"
    scripts/cross.sh "$target" 2>&1 | tee "$tmp/cross-$target"
    n=$(sed -n "s/^cross $target: \([0-9]*\) passed.*/\1/p" "$tmp/cross-$target")
    [ -n "$n" ] || { echo "scripts/cross.sh $target printed no count"; exit 1; }
    cross_passed=$((cross_passed + n))
done

stage "the container image: FROM scratch, amd64 and arm64, run with Docker on host networking"
scripts/container-test.sh | tee "$tmp/container"
container_passed=$(sed -n 's/^container: \([0-9]*\) passed.*/\1/p' "$tmp/container")

stage "OpenAPI: validator, and schemathesis against the release binary"
scripts/fuzz.sh | tee "$tmp/fuzz"
grep -q '^fuzz: .* 0 failures' "$tmp/fuzz"

stage "CORS in headless Chromium"
scripts/browser.sh | tee "$tmp/browser"
browser_passed=$(sed -n 's/^browser: \([0-9]*\) passed.*/\1/p' "$tmp/browser")

stage "crash test: kill -9 during writes with --data, 20 rounds"
python3 scripts/crash.py --rounds 20 | tee "$tmp/crash"
grep -q ', 0 lost,' "$tmp/crash"

stage "the data files changed by another program, then kill -9; --watch"
python3 scripts/tampered.py | tee "$tmp/tampered"
grep -q '^tampered: .* 0 failed' "$tmp/tampered"

stage "a full disk under --data (a 64 KiB tmpfs; skipped without root)"
python3 scripts/diskfull.py | tee "$tmp/diskfull"
grep -q '^diskfull: \(ok\|skipped\)' "$tmp/diskfull"

stage "the import's peak memory: a json-server db.json of 8 MB, at most 3 times the file"
python3 scripts/loadmem.py --import-mb 8 | tee "$tmp/loadmem"
grep -q '^loadmem: ok' "$tmp/loadmem"

stage "the examples of README.md and docs/, against the release binary"
python3 scripts/readme.py | tee "$tmp/readme"
readme_passed=$(sed -n 's/^readme: \([0-9]*\) passed.*/\1/p' "$tmp/readme")

stage "benchmark (quick: proves it runs, not the figures)"
scripts/bench.sh --quick
stage "benchmark against HEAD's own build (quick)"
# The A/B comparison against another revision: HEAD's own build (38 s
# the first time, 56 s without the dependencies this tree built, kept
# under target/against/), then 7 rows of 1 s.
scripts/bench.sh --against HEAD --quick

# Graceful shutdown: SIGTERM, exit status 0, within 10 s.
kill -TERM "$pid"
for _ in $(seq 200); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
done
status=0
wait "$pid" || status=$?
[ "$status" -eq 0 ] || { echo "the server exited with $status after SIGTERM:"; cat "$tmp/err"; exit 1; }
echo "== all checks passed in $SECONDS s; each stage's seconds, slowest first:"
for i in "${!stage_names[@]}"; do
    end=${stage_starts[i + 1]:-$SECONDS}
    printf '%6d s  %s\n' $((end - stage_starts[i])) "${stage_names[i]}"
done | sort -rn
echo "total: $((cargo_passed + cross_passed + smoke_passed + record_passed + proxy_passed + ${clients_passed:-0} + ${side_by_side_passed:-0} + abuse_passed + tls_passed + container_passed + browser_passed + readme_passed)) passed, 0 failed"
