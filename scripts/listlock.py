#!/usr/bin/env python3
"""How long a costly list query keeps the other requests waiting.

    python3 scripts/listlock.py [--binary target/release/widgets-todos] [--todos 100000]

Starts the release binary with `--generate todos=N` (100,000 by default)
and sends, one at a time, the list queries that cost the most per item:
a filter on 30,000 ids (react-admin's `filter={"id":[...]}`, a 200 KB
URL, and json-server's `id=3&id=6&...`, 270 KB), `_like` patterns at
the length bound that make the regular expression work hardest, and a
filter every item passes, sorted and sent whole.
While each runs, a second connection sends POSTs to the same collection
and a third asks /healthz, back to back; a list read holds the
collection's lock, so a write waits for it.

Prints, per query, its own time and the slowest POST and /healthz
answered while it ran; fails when a POST or /healthz took 0.5 s or more.
The figures in docs/queries.md ("Cost") come from here. 127.0.0.1 only,
every wait bounded; standard library only.
"""

import argparse
import http.client
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOUND = 0.5  # seconds a POST or /healthz may wait


def request(port, method, path, body=None):
    """Status and seconds taken."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/json"} if body else {}
    started = time.monotonic()
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status, time.monotonic() - started


def during(port, path):
    """Runs the list query `path`; meanwhile POSTs and /healthz, back to
    back. The list's status and time, and the slowest of each other."""
    done = threading.Event()
    listed = {}

    def read():
        listed["status"], listed["time"] = request(port, "GET", path)
        done.set()

    slowest = {"POST": 0.0, "healthz": 0.0}
    statuses = set()

    def others(name, method, target, body):
        # At least one, then until the list is answered (at most 60 s).
        deadline = time.monotonic() + 60
        while True:
            status, took = request(port, method, target, body)
            statuses.add((name, status))
            slowest[name] = max(slowest[name], took)
            if done.is_set() or time.monotonic() > deadline:
                return

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.005)  # the list read first, as a client that waits for it
    body = json.dumps({"userId": 1, "title": "written meanwhile"})
    threads = [
        threading.Thread(target=others, args=("POST", "POST", "/api/todos", body)),
        threading.Thread(target=others, args=("healthz", "GET", "/healthz", None)),
    ]
    for thread in threads:
        thread.start()
    reader.join(70)
    for thread in threads:
        thread.join(70)
    return listed.get("status"), listed.get("time", 0.0), slowest, statuses


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "target/release/widgets-todos"))
    parser.add_argument("--todos", type=int, default=100_000)
    args = parser.parse_args()

    server = subprocess.Popen(
        [args.binary, "--host", "127.0.0.1", "--port", "0", "--log-level", "warn",
         "--generate", f"todos={args.todos}", "--max-items", str(args.todos * 2)],
        stdout=subprocess.PIPE)
    failed = []
    try:
        line = server.stdout.readline().decode()
        if not line.startswith("listening on http://"):
            sys.exit(f"listlock: the server did not start: {line!r}")
        port = int(line.strip().rsplit(":", 1)[1])
        ids = [n * 3 for n in range(1, 30_001)]
        filter_ = urllib.parse.quote(json.dumps({"id": ids}, separators=(",", ":")))
        # Patterns of 100 characters (the bound) that keep many states of
        # the Pike VM alive on every character of every title.
        alternatives = "w0"
        for n in range(1, 100):
            if len(alternatives) + len(f"|w{n}") > 100:
                break
            alternatives += f"|w{n}"
        classes = "[a-z]" * 20
        queries = [
            ("filter of 30,000 ids", f"/api/todos?filter={filter_}&_limit=10"),
            ("id=... 30,000 times", "/api/todos?" + "&".join(f"id={n}" for n in ids) + "&_limit=10"),
            ("_like, 27 alternatives", "/api/todos?title_like=" + urllib.parse.quote(alternatives)),
            ("_like, 20 classes", "/api/todos?title_like=" + urllib.parse.quote(classes)),
            ("_like, one word", "/api/todos?title_like=%5Ebuy.*milk&_sort=title"),
            # Every item matches: sorted and serialized whole, 7 MB.
            ("id_gte=1&_sort=title", "/api/todos?id_gte=1&_sort=title"),
        ]
        for name, path in queries:
            status, took, slowest, statuses = during(port, path)
            bad = sorted(s for s in statuses if s[1] not in (200, 201))
            ok = status == 200 and not bad and max(slowest.values()) < BOUND
            print(f"listlock: {name} ({len(path) // 1000} KB URL): {status} in {took * 1000:.0f} ms;"
                  f" meanwhile the slowest POST {slowest['POST'] * 1000:.0f} ms,"
                  f" /healthz {slowest['healthz'] * 1000:.0f} ms"
                  + ("" if ok else f"  FAIL (bound {BOUND} s; other statuses {bad})"), flush=True)
            if not ok:
                failed.append(name)
    finally:
        server.terminate()
        server.wait(10)
    if failed:
        sys.exit(f"listlock: {len(failed)} failed: {', '.join(failed)}")
    print(f"listlock: ok, {len(queries)} queries over {args.todos} todos")


if __name__ == "__main__":
    main()
