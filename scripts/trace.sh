#!/usr/bin/env bash
# Which functions of src/ one request runs, file by file, in the order the
# request meets them:
#
#   scripts/trace.sh 'GET /api/todos/1'
#   scripts/trace.sh 'POST /api/todos' '{"userId":1,"title":"x"}'
#   scripts/trace.sh 'GET /api/todos/1' -- --faults     (server flags after --)
#   scripts/trace.sh --check [--limits]    what CI runs: "Read the code" against the trace
#   scripts/trace.sh --limits              the limits of the paths alone
#
# How. Valgrind runs the server on a simulated processor; its tool callgrind
# counts every instruction the server executes, by function, and records who
# called whom from which line. Counting is switched on only while the same
# request is sent 20 times on one connection (after start-up and a warm-up),
# so what it shows is what a request costs, not what starting costs. A POST
# without a body sends a small valid item.
#
# Why a debug build. An optimized build inlines small functions into their
# callers, so they vanish from the count; the debug build keeps every
# function a reader sees in the source as a function of its own, which is
# what a reader follows. It is slower, which does not matter here: this
# counts functions, it does not time them (scripts/bench.sh does).
#
# The measuring, the order and its limits, and the check are explained at
# the top of scripts/trace.py, which does the work (Python 3, standard
# library only). Valgrind comes from scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null 2>&1; then
    echo "trace: valgrind is missing: run scripts/setup.sh (as root), or apt-get install valgrind" >&2
    exit 1
fi
cargo build --quiet
exec python3 scripts/trace.py "${CARGO_TARGET_DIR:-target}/debug/widgets-todos" "$@"
