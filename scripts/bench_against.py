#!/usr/bin/env python3
"""A/B benchmark: the server of this tree against another build, in one run.

    python3 scripts/bench_against.py --old BINARY --label REV [--quick]
                                     [--rounds N] [--duration TURNS]

Called by `scripts/bench.sh --against REV`, which builds both binaries
(REV's once, kept under target/against/) and installs wrk. It runs the
scenarios of scripts/bench.py (imported: the same wrk scripts, the same
200 seeded todos, the same pinning and 2 workers) on the two servers.
For every row and round both are started fresh and seeded alike, then
measured in turns of one second, --duration turns each, the order
reversing every turn and the starting order every round, so that drift on
a shared machine hits both alike. Prints per row the two rates (median of
the rounds, min-max) and new / old, the median of the rounds' ratios with
their range (each ratio taken within one round); then idle RSS, binary
size and start-up time (exec to the first 200, median of N, taken in
turns) of both. Rows with a ratio below 0.95 are marked. Then, for the new
build alone, POST with 64 subscribers to /api/events against POST with
none (bench.subscribed_posts; the bound is 0.9 at least).

--quick runs the rows at 16 connections, once, one turn each: CI uses it
to prove that the comparison runs (about 20 s), not to judge the figures.
A scenario whose responses are not all 2xx fails the run in either mode.
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time

import bench
from bench import Running, fail, fmt_rate, paired_ratio

# A row whose median ratio is below this is marked: a change may cost no row
# more than 5%.
WORSE = 0.95


def measure(binaries, runs, scripts, rounds, turns):
    """Requests per second of each binary (name -> path) for each run
    (scenario, connections), one value per round."""
    rates = {(run, who): [] for run in runs for who in binaries}
    order = list(binaries.items())
    for round_no in range(1, rounds + 1):
        # Whoever starts first in a round starts second in the next.
        turn_order = order if round_no % 2 else order[::-1]
        for run in runs:
            name, conns = run
            servers = []
            for who, binary in turn_order:
                server = Running(binary, ["--log-level", "warn"])
                server.seed()
                servers.append((who, server))
            try:
                measured = bench.interleaved(servers, scripts[name], conns, turns)
            finally:
                for _, server in servers:
                    server.stop()
            for who, rate in measured.items():
                rates[(run, who)].append(rate)
            print(f"  round {round_no}: {name} at {conns}: "
                  + ", ".join(f"{who} {rates[(run, who)][-1]:,.0f}" for who in binaries),
                  flush=True)
    return rates


def footprint(binaries, startups):
    """Idle RSS (kB, 200 todos seeded), binary size (bytes) and the
    median start-up time (s) of each binary; the start-ups taken in turns."""
    figures = {}
    for who, binary in binaries.items():
        server = Running(binary, ["--log-level", "warn"])
        server.seed()
        time.sleep(0.5)
        figures[who] = {"idle": server.status("VmRSS"), "size": os.path.getsize(binary)}
        server.stop()
    starts = {who: [] for who in binaries}
    for _ in range(startups):
        for who, binary in binaries.items():
            starts[who].append(bench.startup_time(binary))
    for who in binaries:
        figures[who]["start"] = statistics.median(starts[who])
    return figures


def describe_tree():
    """This tree's commit, `-dirty` with uncommitted changes."""
    out = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                         text=True, cwd=bench.ROOT)
    return out.stdout.strip() or "this tree"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", required=True, help="the binary to compare against")
    parser.add_argument("--label", required=True, help="what --old was built from, for the table")
    parser.add_argument("--quick", action="store_true", help="the rows at 16 connections, once")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=5,
                        help="one-second turns per server, row and round")
    args = parser.parse_args()
    binaries = {"new": bench.SERVER, "old": args.old}
    for binary in binaries.values():
        if not os.access(binary, os.X_OK):
            fail(f"{binary} is missing: run scripts/bench.sh --against REV, which builds it")
    if args.quick:
        rounds, turns, startups = 1, 1, 3
        runs = [run for run in bench.RUNS if run[1] == 16]
    else:
        rounds, turns, startups = args.rounds, args.duration, 15
        runs = bench.RUNS
    new = describe_tree()
    print(f"bench: new ({new}) against old ({args.label}): {rounds} round(s), {turns} "
          f"one-second turn(s) per server and row, {bench.THREADS} workers, {bench.CORES} cores, "
          f"servers {'on core 0, wrk on core 1' if bench.PIN_SERVER else 'unpinned'}", flush=True)
    scripts = bench.write_scripts(tempfile.mkdtemp(prefix="bench-against-"))
    rates = measure(binaries, runs, scripts, rounds, turns)
    figures = footprint(binaries, startups)
    # The change feed: the new build alone (the old may have no feed).
    feed = {kind: bench.subscribed_posts(bench.SERVER, scripts["POST"], rounds, turns, target)
            for kind, target in bench.FEED_RUNS}

    print()
    print(f"new: {new}; old: {args.label}")
    print()
    print("| scenario | conns | new req/s, median (min-max) | old req/s, median (min-max) "
          "| new / old, median of rounds (min-max) |")
    print("|---|---|---|---|---|")
    worst = None
    for run in runs:
        name, conns = run
        new_rates, old_rates = rates[(run, "new")], rates[(run, "old")]
        ratio = statistics.median(n / o for n, o in zip(new_rates, old_rates))
        mark = " (below 0.95)" if ratio < WORSE else ""
        if worst is None or ratio < worst[0]:
            worst = (ratio, f"{name} at {conns}")
        print(f"| {name} | {conns} | {fmt_rate(new_rates)} | {fmt_rate(old_rates)} "
              f"| {paired_ratio(new_rates, old_rates)}{mark} |")
    print()
    n, o = figures["new"], figures["old"]
    print("| | new | old |")
    print("|---|---|---|")
    print(f"| idle RSS (200 todos) | {n['idle'] / 1024:.1f} MB | {o['idle'] / 1024:.1f} MB |")
    print(f"| binary size | {n['size']:,} B | {o['size']:,} B |")
    print(f"| start-up, exec to first 200 (median of {startups}) "
          f"| {n['start'] * 1000:.1f} ms | {o['start'] * 1000:.1f} ms |")
    print()
    for kind, target in bench.FEED_RUNS:
        with_, none = feed[kind]["subscribed"], feed[kind]["none"]
        ratio = statistics.median(n / o for n, o in zip(with_, none))
        bound = " (below the bound, 0.9)" if kind == "idle" and ratio < 0.9 else ""
        print(f"new alone, POST at 16 with 64 {kind} subscribers (`{target}`) / with none: "
              f"{paired_ratio(with_, none)}{bound}")
    print()
    print(f"lowest row: {worst[1]}, {worst[0]:.2f}"
          + (f" (below {WORSE})" if worst[0] < WORSE else ""), flush=True)
    if args.quick:
        print("quick: one turn per row proves that the comparison runs; "
              "the figures mean nothing (run it without --quick on a quiet machine)")


if __name__ == "__main__":
    main()
