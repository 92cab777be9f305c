#!/usr/bin/env python3
"""Memory and time of loading a --data file, against creating the same todos by POST;
and with --import-mb, the peak memory of `widgets-todos import`.

    python3 scripts/loadmem.py [--counts 100000,1000000] [--binary target/release/widgets-todos]
    python3 scripts/loadmem.py --import-mb 32

For each count N it writes a fixture of N todos (the shape scripts/bench.py
seeds: titles of up to 28 bytes), then:

- load: starts the server with --data on a copy of it and times exec until
  the `listening on` line, then reads VmRSS (resident memory now) and
  VmHWM (its peak) from /proc/PID/status;
- post: starts the server without --data and creates the same N todos with
  POST, pipelined on one connection, then reads VmRSS likewise.

It prints a Markdown table and fails if the RSS after loading is more than
1.5 times the RSS after the POSTs (docs/persistence.md). Both servers run
with --threads 2 and --max-items N (at least the default 100,000); they are
killed afterwards (no final snapshot). 127.0.0.1 only; every wait is
bounded. Takes about a minute for the default counts on 2 cores, so it is
not part of scripts/test.sh; build the release binary first
(`cargo build --release`).

With --import-mb M it does only this: writes a json-server db.json of about
M MB (todos as json-server keeps them: ids as text, a `createdAt` the
import leaves out; and a collection of posts), runs `widgets-todos import`
on it, and reads the import's peak resident memory from the kernel when it
is reaped (wait4's ru_maxrss, the figure `/usr/bin/time -v` prints as
"Maximum resident set size"). It fails if that peak is more than 3 times
the file's size (docs/json-server.md). scripts/test.sh runs it at 8 MB
(a few seconds); the figure for 32 MB in docs/json-server.md is from
`--import-mb 32`.
"""

import argparse
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 1.5  # the RSS after loading may be at most this times that after POSTs
IMPORT_LIMIT = 3  # the import's peak RSS may be at most this times its file


def fail(message):
    print(f"loadmem: FAIL: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def todo_body(n):
    """The n-th todo, as scripts/bench.py seeds them."""
    return {"userId": n % 10 + 1, "title": f"benchmark todo number {n}", "completed": n % 2 == 0}


def write_fixture(path, count):
    with open(path, "w") as f:
        f.write('{"todos": [\n')
        f.write(",\n".join(json.dumps({"id": n, **todo_body(n)}) for n in range(1, count + 1)))
        f.write("\n]}\n")


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    fail(f"no {field} in /proc/{pid}/status")


def start(binary, extra, limit=120):
    """The server process, its address, and the seconds from exec until its
    `listening on` line."""
    args = [binary, "--host", "127.0.0.1", "--port", "0", "--threads", "2",
            "--log-level", "warn", *extra]
    started = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # The line comes whole, flushed at once; a server that fails to start
    # closes stdout instead.
    ready, _, _ = select.select([proc.stdout], [], [], limit)
    line = proc.stdout.readline().decode() if ready else ""
    took = time.perf_counter() - started
    if not line.startswith("listening on http://"):
        proc.kill()
        fail(f"the server did not start: {line!r} {proc.stderr.read().decode()[:500]}")
    host, port = line.strip().rsplit("/", 1)[1].rsplit(":", 1)
    return proc, (host, int(port)), took


def stop(proc):
    proc.kill()
    proc.wait()


def post_all(addr, count):
    """Creates todos 1..count, pipelined in batches on one connection."""
    sock = socket.create_connection(addr, timeout=60)
    batch = 1000
    for first in range(1, count + 1, batch):
        numbers = range(first, min(first + batch, count + 1))
        requests = []
        for n in numbers:
            body = json.dumps(todo_body(n)).encode()
            requests.append(b"POST /api/todos HTTP/1.1\r\nHost: loadmem\r\n"
                            b"Content-Type: application/json\r\n"
                            b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        sock.sendall(b"".join(requests))
        # Every response ends with its JSON body, a todo; count them.
        wire = b""
        while wire.count(b"HTTP/1.1 ") < len(numbers) or not wire.endswith(b"}"):
            chunk = sock.recv(1 << 16)
            if not chunk:
                fail("the server closed the connection while we posted")
            wire += chunk
        if wire.count(b"HTTP/1.1 201 ") != len(numbers):
            fail(f"not every POST answered 201: {wire[:300]!r}")
    sock.close()


def write_json_server_fixture(path, megabytes):
    """A json-server db.json of about `megabytes` MB; returns how many todos."""
    target = megabytes * 1_000_000
    size, n = 0, 0
    with open(path, "w") as f:
        f.write('{"todos": [\n')
        while size < target:
            n += 1
            todo = {"id": str(n), **todo_body(n), "createdAt": "2024-01-01T00:00:00.000Z"}
            line = ("" if n == 1 else ",\n") + json.dumps(todo)
            f.write(line)
            size += len(line)
        f.write('\n],\n"posts": [{"id": 1, "title": "json-server", "author": "typicode"}]}\n')
    return n


def import_peak(binary, megabytes, limit=300):
    """Runs the import on a fixture of `megabytes` MB; prints its figures
    and fails if its peak RSS is more than IMPORT_LIMIT times the file."""
    workdir = tempfile.mkdtemp(prefix="loadmem-import-")
    try:
        db, out = os.path.join(workdir, "db.json"), os.path.join(workdir, "data.json")
        count = write_json_server_fixture(db, megabytes)
        size = os.path.getsize(db)
        with open(os.path.join(workdir, "report"), "w+b") as report:
            started = time.perf_counter()
            proc = subprocess.Popen([binary, "import", db, "--out", out],
                                    stdout=report, stderr=subprocess.STDOUT)
            # Reaped here, not by Popen, for its resource usage.
            timer = threading.Timer(limit, proc.kill)
            timer.start()
            _, status, usage = os.wait4(proc.pid, 0)
            timer.cancel()
            took = time.perf_counter() - started
            proc.returncode = os.waitstatus_to_exitcode(status)
            report.seek(0)
            said = report.read().decode(errors="replace")
        if proc.returncode != 0:
            fail(f"the import exited with {proc.returncode}: {said[:500]}")
        if f"todos: kept {count} of" not in said:
            fail(f"the import did not keep the {count} todos: {said[:500]}")
        peak = usage.ru_maxrss * 1024  # Linux gives kilobytes
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    ratio = peak / size
    print("| db.json | todos | import's peak RSS | ratio | time |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {size / 1e6:.1f} MB | {count:,} | {peak / 1e6:.1f} MB | {ratio:.2f} | {took:.2f} s |")
    if ratio > IMPORT_LIMIT:
        fail(f"the import peaks at {ratio:.2f} times its file (at most {IMPORT_LIMIT})")
    print(f"loadmem: ok, the import peaks at {ratio:.2f} times its file")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="100000,1000000")
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "widgets-todos"))
    parser.add_argument("--import-mb", type=int,
                        help="only measure the import's peak memory on a db.json of this many MB")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    if not os.path.exists(args.binary):
        fail(f"no {args.binary}: run cargo build --release first")
    if args.import_mb:
        import_peak(args.binary, args.import_mb)
        return

    rows = []
    workdir = tempfile.mkdtemp(prefix="loadmem-")
    try:
        for count in counts:
            max_items = ["--max-items", str(max(count, 100_000))]
            fixture = os.path.join(workdir, f"fixture-{count}.json")
            write_fixture(fixture, count)
            data = os.path.join(workdir, "data.json")
            shutil.copyfile(fixture, data)

            proc, _, took = start(args.binary, ["--data", data, *max_items])
            loaded, peak = status_kb(proc.pid, "VmRSS"), status_kb(proc.pid, "VmHWM")
            stop(proc)
            for leftover in (data, data + ".journal"):
                os.remove(leftover)

            proc, addr, _ = start(args.binary, max_items)
            post_all(addr, count)
            posted = status_kb(proc.pid, "VmRSS")
            stop(proc)

            rows.append((count, os.path.getsize(fixture), took, loaded, peak, posted))
            os.remove(fixture)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print("| todos | fixture | start-up | RSS after loading | peak while loading | RSS after POSTs | ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for count, size, took, loaded, peak, posted in rows:
        ratio = loaded / posted
        worst = max(worst, ratio)
        print(f"| {count:,} | {size / 1e6:.1f} MB | {took:.2f} s | {loaded / 1024:.1f} MB "
              f"| {peak / 1024:.1f} MB | {posted / 1024:.1f} MB | {ratio:.2f} |")
    if worst > LIMIT:
        fail(f"loading costs {worst:.2f} times the memory of the same todos created by POST "
             f"(at most {LIMIT})")
    print(f"loadmem: ok, loading costs at most {worst:.2f} times the memory of POSTing")


if __name__ == "__main__":
    main()
