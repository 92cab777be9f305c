#!/usr/bin/env bash
# Benchmark widgets-todos against the bare HTTP library (examples/baseline.rs),
# with our connection layer alone beside them (examples/layer.rs).
#
#     scripts/bench.sh            # full run: 5 interleaved rounds, ~25 minutes
#     scripts/bench.sh --quick    # every scenario once, briefly (CI)
#
# Builds the release binaries, installs Debian's wrk if it is missing, then
# runs scripts/bench.py, which prints the Markdown table the README quotes.
# Extra arguments go to bench.py (--rounds N, --duration SECONDS).
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib.sh
need wrk wrk

cargo build --release --quiet --bin widgets-todos --example baseline --example layer
exec python3 scripts/bench.py "$@"
