#!/usr/bin/env bash
# Benchmark widgets-todos against the bare HTTP library (examples/baseline.rs),
# with our connection layer alone (examples/layer.rs) and a minimal server
# that stores (examples/bench_store.rs) beside them.
#
#     scripts/bench.sh            # full run: 5 interleaved rounds, ~35 minutes
#     scripts/bench.sh --quick    # every scenario once, briefly (CI)
#     scripts/bench.sh --peer     # json-server 0.17.4 beside them (needs npm)
#     scripts/bench.sh --against REV            # this tree against revision REV
#     scripts/bench.sh --against REV --quick    # the same, once, briefly (CI)
#
# Builds the release binaries, installs Debian's wrk if it is missing (and
# with --peer json-server, from the npm registry, under target/peer), then
# runs scripts/bench.py, which prints the Markdown tables of scripts/PERFORMANCE.md
# (the full run ends with the big stores' table, from scripts/scale.py: a few minutes
# more, and 89 MB of fixture kept under target/scale/).
# Extra arguments go to bench.py (--rounds N, --duration SECONDS, --peer).
#
# --against REV builds this tree's release binary, and REV's once (git
# archive into target/against/COMMIT, with its own target directory,
# seeded with a copy of this tree's built dependencies and removed after:
# only target/against/COMMIT/widgets-todos is kept, so a second run does
# not build it again), then runs scripts/bench_against.py:
# bench.py's scenarios on both, taking turns (see scripts/PERFORMANCE.md,
# "Against another revision"). --rounds and --duration go to it too.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib.sh

against=
args=()
while [ $# -gt 0 ]; do
    case $1 in
        --against)
            [ $# -ge 2 ] || { echo "bench: --against needs a revision, such as --against main" >&2; exit 2; }
            against=$2
            shift 2
            ;;
        --against=*) against=${1#--against=}; shift ;;
        *) args+=("$1"); shift ;;
    esac
done
set -- ${args[@]+"${args[@]}"}

if [ -n "$against" ]; then
    case " $* " in
        *" --peer "*) echo "bench: --against compares two builds of this server; run --peer apart" >&2; exit 2 ;;
    esac
    commit=$(git rev-parse --verify --quiet "$against^{commit}") ||
        { echo "bench: --against $against: no such revision in this repository (git fetch it first?)" >&2; exit 2; }
    need wrk wrk
    dir=target/against/$commit
    old=$dir/widgets-todos
    cargo build --release --quiet --bin widgets-todos
    if [ -x "$old" ]; then
        echo "bench: $against ($commit) already built: $old"
    else
        echo "bench: building $against ($commit) under $dir"
        rm -rf "$dir"
        mkdir -p "$dir/src" "$dir/target/release"
        git archive "$commit" | tar -x -C "$dir/src"
        # This tree's dependencies, built just above in the same profile,
        # are REV's too where its Cargo.lock agrees: given a copy, cargo
        # builds only what differs. Not this crate's own artifacts: cargo
        # would take them for REV's, whose files git archive dates from
        # the commit, before them.
        cp -a target/release/deps target/release/build target/release/.fingerprint "$dir/target/release/"
        rm -rf "$dir"/target/release/.fingerprint/widgets-todos-* "$dir"/target/release/build/widgets-todos-* \
            "$dir"/target/release/deps/*widgets_todos*
        cargo build --release --quiet --locked --bin widgets-todos \
            --manifest-path "$dir/src/Cargo.toml" --target-dir "$dir/target"
        # Kept only once whole: an interrupted build leaves no binary.
        cp "$dir/target/release/widgets-todos" "$old.part"
        mv "$old.part" "$old"
        rm -rf "$dir/src" "$dir/target"
    fi
    exec python3 scripts/bench_against.py --old "$old" --label "$against" "$@"
fi

need wrk wrk

cargo build --release --quiet --bin widgets-todos --example baseline --example layer --example bench_store
for arg in "$@"; do
    if [ "$arg" = --peer ] && [ ! -f target/peer/node_modules/json-server/lib/cli/bin.js ]; then
        command -v npm >/dev/null || { echo "bench: --peer needs Node.js and npm" >&2; exit 1; }
        echo "installing: json-server 0.17.4 under target/peer"
        mkdir -p target/peer
        npm install --prefix target/peer --no-audit --no-fund --silent json-server@0.17.4
    fi
done
python3 scripts/bench.py "$@"

# Full mode only, last: the big stores' table at 100,000 and 1,000,000 todos
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
