#!/usr/bin/env python3
"""Big stores: the table of the big stores, at 100,000 and 1,000,000 todos.

    python3 scripts/scale.py [--counts 100000,1000000] [--reps 11] [--no-post]
                             [--binary target/release/widgets-todos]
    python3 scripts/scale.py --mix [--counts 1000000]

For each count N it writes a fixture of N todos under target/scale/ (the
todos scripts/loadmem.py and scripts/bench.py seed: titles of up to 28
bytes, 89 MB at a million; kept for the next run, never committed), and:

- starts the server with --data on a fresh copy of it, and times exec
  until its `listening on` line; reads VmRSS and VmHWM (the peak) from
  /proc/PID/status;
- on one keep-alive connection, after three GETs of one todo (the first
  requests after start-up cost a few ms more, whatever they ask), with no
  write in between, times each list query `--reps` times after one read
  that warms it, and takes the median
  (client-side, so it includes about 0.1 ms of Python and loopback):
  `?_page=1&_limit=10`, `?_sort=title&_limit=10`, `?q=bike&_limit=10`;
- times `?_sort=title&_limit=10` right after a write (a PATCH of todo 1),
  three times, the median: what a sorted read costs under writes;
- reads the whole list twice, and says how many bytes it has and how much
  RSS the process kept after (the cached list, if it keeps it);
- unless --no-post, starts a server without --data and creates the same N
  todos by POST (scripts/loadmem.py's way), then reads VmRSS: the RSS
  after loading is compared with that (the bound: at most 1.5x).

--peer adds json-server 0.17.4 on the same fixture (start-up until its
first answer, RSS, the queries on its own paths, the whole list).

--mix measures instead the 80/20 read/write mix of scripts/bench.py
(GET /api/todos/7, PUT /api/todos/8, 16 connections, wrk) over a store of
200 todos and one of N, in memory (--generate), in turns of one second,
and prints the ratio of N to 200 (the bound: at least 0.8).

Servers run with --threads 2 and --max-items N (at least 100,000), and
are killed afterwards (no final snapshot). 127.0.0.1 only; every wait is
bounded. Build the release binary first (`cargo build --release`).
scripts/bench.sh (full mode) prints the same rows through `measure`.
"""

import argparse
import http.client
import json
import os
import shutil
import statistics
import sys
import time

import loadmem

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKDIR = os.path.join(ROOT, "target", "scale")
QUERIES = (
    ("`?_page=1&_limit=10`", "/api/todos?_page=1&_limit=10"),
    ("`?_sort=title&_limit=10`", "/api/todos?_sort=title&_limit=10"),
    ("`?q=bike&_limit=10`", "/api/todos?q=bike&_limit=10"),
)
SORTED = QUERIES[1][1]


def fail(message):
    print(f"scale: FAIL: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def fixture(count):
    """The fixture of `count` todos under target/scale/, written once."""
    os.makedirs(WORKDIR, exist_ok=True)
    path = os.path.join(WORKDIR, f"fixture-{count}.json")
    if not os.path.exists(path):
        loadmem.write_fixture(path + ".tmp", count)
        os.rename(path + ".tmp", path)
    return path


def fresh_copy(source):
    """A copy of `source` with no journal beside it, for one server."""
    data = os.path.join(WORKDIR, "data.json")
    for leftover in (data, data + ".journal"):
        if os.path.exists(leftover):
            os.remove(leftover)
    shutil.copyfile(source, data)
    return data


def timed(conn, method, path, body=None):
    """Milliseconds for one request and its whole response, and the body."""
    headers = {"Content-Type": "application/json"} if body else {}
    started = time.perf_counter()
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    payload = response.read()
    took = (time.perf_counter() - started) * 1000
    if response.status != 200:
        fail(f"{method} {path} answered {response.status}: {payload[:200]!r}")
    return took, payload


def measure(count, binary, reps=11, post=True):
    """One column of the table: a dict of figures for `count` todos."""
    max_items = ["--max-items", str(max(count, 100_000))]
    data = fresh_copy(fixture(count))
    proc, addr, took = loadmem.start(binary, ["--data", data, *max_items])
    row = {"count": count, "fixture": os.path.getsize(data), "startup": took * 1000,
           "rss": loadmem.status_kb(proc.pid, "VmRSS"), "peak": loadmem.status_kb(proc.pid, "VmHWM")}
    try:
        conn = http.client.HTTPConnection(*addr, timeout=120)
        for _ in range(3):
            # The first requests after start-up cost a few milliseconds
            # more (a new connection thread, the workers' first
            # allocations), whatever is asked.
            timed(conn, "GET", "/api/todos/1")
        for label, path in QUERIES:
            timed(conn, "GET", path)
            row[label] = statistics.median(timed(conn, "GET", path)[0] for _ in range(reps))
        after_write = []
        for n in range(3):
            patch = json.dumps({"completed": n % 2 == 0})
            timed(conn, "PATCH", "/api/todos/1", patch)
            after_write.append(timed(conn, "GET", SORTED)[0])
        row["sorted after a write"] = statistics.median(after_write)
        before = loadmem.status_kb(proc.pid, "VmRSS")
        first, listed = timed(conn, "GET", "/api/todos")
        second, again = timed(conn, "GET", "/api/todos")
        if listed != again or len(json.loads(listed)) != count:
            fail(f"the whole list of {count} is not the same twice, or not whole")
        row["list bytes"] = len(listed)
        row["list first"], row["list second"] = first, second
        # The worker frees a response's memory just after its last byte.
        time.sleep(0.5)
        row["list kept"] = loadmem.status_kb(proc.pid, "VmRSS") - before
        row["list peak"] = loadmem.status_kb(proc.pid, "VmHWM")
        conn.close()
    finally:
        loadmem.stop(proc)
    if post:
        proc, addr, _ = loadmem.start(binary, max_items, limit=600)
        try:
            loadmem.post_all(addr, count)
            row["posted"] = loadmem.status_kb(proc.pid, "VmRSS")
        finally:
            loadmem.stop(proc)
    return row


def measure_peer(count, reps=3):
    """json-server 0.17.4 (installed by scripts/bench.sh --peer) on the
    same fixture: start-up until its first answer, RSS, the three queries
    on its own paths, and the whole list. It rewrites its whole file on
    every write, so it gets no write here."""
    import subprocess
    import bench
    data = fresh_copy(fixture(count))
    port = bench.free_port()
    started = time.perf_counter()
    proc = subprocess.Popen([*bench.PIN_SERVER, "node", bench.PEER, "--host", "127.0.0.1",
                             "--port", str(port), "--quiet", data],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        took = bench.first_answer(port, proc, started, limit=600, path="/todos?_limit=1")
        if took is None:
            fail(f"json-server did not answer within 600 s with {count:,} todos")
        row = {"who": "json-server, ", "count": count, "fixture": os.path.getsize(data),
               "startup": took * 1000, "rss": loadmem.status_kb(proc.pid, "VmRSS"),
               "peak": loadmem.status_kb(proc.pid, "VmHWM")}
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        for label, path in QUERIES:
            path = path.replace("/api/todos", "/todos")
            timed(conn, "GET", path)
            row[label] = statistics.median(timed(conn, "GET", path)[0] for _ in range(reps))
        first, listed = timed(conn, "GET", "/todos")
        second, _ = timed(conn, "GET", "/todos")
        row["list bytes"], row["list first"], row["list second"] = len(listed), first, second
        conn.close()
    finally:
        proc.kill()
        proc.wait()
    return row


def table(rows):
    """The issue's table: a row per figure, a column per count."""
    def mb(kb):
        return f"{kb / 1024:.1f} MB"

    lines = ["| what | " + " | ".join(f"{r.get('who', '')}{r['count']:,} todos "
                                      f"({r['fixture'] / 1e6:.0f} MB)" for r in rows) + " |",
             "|---|" + "---|" * len(rows)]

    def line(what, cell):
        lines.append(f"| {what} | " + " | ".join(cell(r) for r in rows) + " |")

    line("start-up until listening", lambda r: f"{r['startup']:,.0f} ms")
    line("RSS after start-up", lambda r: f"{mb(r['rss'])}, peak {mb(r['peak'])}" + (
        f" ({mb(r['posted'])} when created by POST: {r['rss'] / r['posted']:.2f}x)"
        if "posted" in r else ""))
    for label, _ in QUERIES:
        line(label, lambda r, label=label: f"{r[label]:.2f} ms")
    line("`?_sort=title&_limit=10` right after a write",
         lambda r: f"{r['sorted after a write']:,.0f} ms" if "sorted after a write" in r else "")
    line("the whole list: bytes, first and second read",
         lambda r: f"{r['list bytes'] / 1e6:.1f} MB, {r['list first']:,.0f} ms, "
                   f"{r['list second']:,.0f} ms")
    line("RSS kept after reading the whole list",
         lambda r: f"{mb(r['list kept'])} (peak {mb(r['list peak'])})" if "list kept" in r else "")
    return "\n".join(lines)


def mix(count, duration, binary):
    """Requests per second of the 80/20 mix over 200 todos and over
    `count`, in memory, interleaved; and their ratio."""
    import bench
    import tempfile
    script = os.path.join(tempfile.mkdtemp(prefix="scale-"), "mix.lua")
    with open(script, "w") as f:
        f.write(bench.SCENARIOS["80% GET / 20% PUT"])
    servers = [(n, bench.Running(binary, ["--log-level", "warn", "--generate",
                                                f"todos={n}"]))
               for n in (bench.STORED, count)]
    try:
        rates = bench.interleaved(servers, script, 16, duration)
    finally:
        for _, server in servers:
            server.stop()
    return rates[bench.STORED], rates[count]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="100000,1000000")
    parser.add_argument("--reps", type=int, default=11)
    parser.add_argument("--no-post", action="store_true")
    parser.add_argument("--mix", action="store_true")
    parser.add_argument("--peer", action="store_true",
                        help="json-server 0.17.4 beside it (installed by scripts/bench.sh --peer)")
    parser.add_argument("--duration", type=int, default=10, help="--mix: turns of 1 s each")
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "widgets-todos"))
    args = parser.parse_args()
    if not os.path.exists(args.binary):
        fail(f"no {args.binary}: run cargo build --release first")
    counts = [int(c) for c in args.counts.split(",")]
    if args.mix:
        for count in counts:
            small, big = mix(count, args.duration, args.binary)
            print(f"80% GET / 20% PUT, 16 conns: {bench_rate(small)} req/s with 200 todos, "
                  f"{bench_rate(big)} with {count:,}: ratio {big / small:.2f}", flush=True)
        return
    rows = []
    for count in counts:
        rows.append(measure(count, args.binary, args.reps, not args.no_post))
        if args.peer:
            rows.append(measure_peer(count))
    print(table(rows))


def bench_rate(rate):
    return f"{rate:,.0f}"


if __name__ == "__main__":
    main()
