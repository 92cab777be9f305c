#!/usr/bin/env bash
# Benchmark widgets-todos against the bare HTTP library (examples/baseline.rs),
# with our connection layer alone (examples/layer.rs) and a minimal server
# that stores (examples/minimal.rs) beside them.
#
#     scripts/bench.sh            # full run: 5 interleaved rounds, ~35 minutes
#     scripts/bench.sh --quick    # every scenario once, briefly (CI)
#     scripts/bench.sh --peer     # json-server 0.17.4 beside them (needs npm)
#
# Builds the release binaries, installs Debian's wrk if it is missing (and
# with --peer json-server, from the npm registry, under target/peer), then
# runs scripts/bench.py, which prints the Markdown tables of scripts/PERFORMANCE.md
# (the full run ends with issue [12]'s, from scripts/scale.py: a few minutes
# more, and 89 MB of fixture kept under target/scale/).
# Extra arguments go to bench.py (--rounds N, --duration SECONDS, --peer).
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib.sh
need wrk wrk

cargo build --release --quiet --bin widgets-todos --example baseline --example layer --example minimal
for arg in "$@"; do
    if [ "$arg" = --peer ] && [ ! -f target/peer/node_modules/json-server/lib/cli/bin.js ]; then
        command -v npm >/dev/null || { echo "bench: --peer needs Node.js and npm" >&2; exit 1; }
        echo "installing: json-server 0.17.4 under target/peer"
        mkdir -p target/peer
        npm install --prefix target/peer --no-audit --no-fund --silent json-server@0.17.4
    fi
done
python3 scripts/bench.py "$@"

# Full mode only, last: issue [12]'s table at 100,000 and 1,000,000 todos
# (with json-server on the same data under --peer), and the 80/20 mix over
# a million todos against 200.
case " $* " in
    *" --quick "*) ;;
    *)
        peer=
        case " $* " in *" --peer "*) peer=--peer ;; esac
        echo
        python3 scripts/scale.py $peer
        echo
        python3 scripts/scale.py --mix --counts 1000000 --duration 25
        ;;
esac
