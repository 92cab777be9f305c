#!/usr/bin/env python3
"""The same list queries against json-server 0.17.4 and this server.

    python3 scripts/side_by_side.py [--binary target/release/widgets-todos]

Installs json-server 0.17.4, pinned by scripts/json-server/package.json
and package-lock.json, under target/json-server with one `npm ci` (only
when missing or when the pins changed), then starts it and the release
binary on free ports of 127.0.0.1, each on its own copy of
scripts/json-server/db.json (20 todos and 4 widgets whose titles a
pattern can tell apart). It sends each query of SAME to both
(`/todos?...` there, `/api/todos?...` here) and checks that both answer
200 with the same items in the same order; then each query of DIFFERENT,
a difference docs/json-server.md states, and checks that this server
answers as that page says, printing what json-server answered.

Prints one line per query and "side-by-side: N passed, M failed"; exits
non-zero on any failure. Skips, saying so, only when Node or npm is not
installed. Every wait is bounded (the install 300 s, each request 10 s).
Run by scripts/test.sh.
"""

import argparse
import hashlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PINS = os.path.join(ROOT, "scripts", "json-server")
INSTALL = os.path.join(ROOT, "target", "json-server")

# Queries both servers answer alike: the path after the collection.
SAME = [
    # Equality, repeated or in the array form of axios and qs: any value.
    "todos?userId=2",
    "todos?userId=1&userId=3",
    "todos?id=1&id=3&id=99",
    "todos?userId[]=1&userId[]=3",
    "todos?userId%5B%5D=4&userId%5B%5D=5",
    "todos?userId[0]=2&userId[1]=6",
    "todos?completed=true",
    "todos?completed=true&userId=2",
    "todos?title=Buy%20milk",
    # _ne: none of the values; _gte and _lte: any of them.
    "todos?userId_ne=1",
    "todos?userId_ne=1&userId_ne=2",
    "todos?id_gte=15",
    "todos?id_gte=18&id_gte=15",
    "todos?id_lte=3&id_lte=5",
    "todos?id_gte=3&id_lte=6",
    "todos?id_gte=3&id_gte=17&id_lte=4&id_lte=18",
    # _like: a regular expression, ignoring case; repeated, any.
    "todos?title_like=buy",
    "todos?title_like=BUY",
    "todos?title_like=photo&title_like=tech",
    "todos?title_like[]=photo&title_like[]=tech",
    "todos?title_like=%5Equi",
    "todos?title_like=^QUI",
    "todos?title_like=milk$",
    "todos?title_like=b.*d",
    "todos?title_like=^(buy|call)%20",
    "todos?title_like=[0-9]",
    "todos?title_like=\\d%2B:\\d%2B",
    "todos?title_like=%5C(draft",
    "todos?title_like=v1%5C.2",
    "todos?title_like=v1.2",
    "todos?title_like=%C3%A9",
    "todos?title_like=%C3%89mile$",
    "todos?title_like=^[a-d]",
    "todos?title_like=o{2}",
    "todos?title_like=buy&userId=3",
    "todos?title_like=",
    "widgets?quality_like=^g",
    "widgets?price_like=%5C%24",
    "widgets?price_like=%E2%82%AC",
    "widgets?id_ne=2&id_ne=4",
    # q: text, ignoring case.
    "todos?q=buy",
    "todos?q=BREAD",
    "todos?q=%C3%89CRIRE",
    # Order and slices.
    "todos?_sort=title&_limit=5",
    "todos?_sort=userId,title&_order=desc,asc",
    "todos?_sort=id&_order=DESC&_limit=3",
    "todos?_page=2&_limit=4",
    "todos?_start=3&_end=7",
    "todos?_start=2&_limit=3",
    "todos?userId=2&_sort=title&_order=desc",
    "todos?title_like=^b&_sort=title&_page=1&_limit=2",
]

# Differences docs/json-server.md states: the query, and the status this
# server answers with.
DIFFERENT = [
    ("todos?title_like=(draft", 400),  # json-server: 500, an uncaught SyntaxError
    ("todos?title_like=(?<=a)b", 400),  # lookbehind: JavaScript's, not here
    ("todos?userId=01", 400),  # json-server: compared as text, nothing matches
    ("todos?id_like=1", 400),  # json-server: the id's digits as text
    ("todos?q=1", 200),  # json-server: numbers too (every id with a 1)
    ("todos?q=buy&q=call", 400),  # json-server: the first
    ("todos?titel=x", 400),  # json-server: ignored, every item
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    """Status and decoded JSON body (None when not JSON)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
    finally:
        conn.close()
    try:
        return response.status, json.loads(body)
    except ValueError:
        return response.status, None


def install():
    """json-server, installed under target/ as the lock file pins it."""
    pins = b"".join(open(os.path.join(PINS, name), "rb").read()
                    for name in ("package.json", "package-lock.json"))
    stamp = os.path.join(INSTALL, "installed.sha256")
    digest = hashlib.sha256(pins).hexdigest()
    if os.path.exists(stamp) and open(stamp).read() == digest:
        return
    print(f"side-by-side: installing json-server 0.17.4 under {os.path.relpath(INSTALL, ROOT)}", flush=True)
    shutil.rmtree(INSTALL, ignore_errors=True)
    os.makedirs(INSTALL)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(PINS, name), INSTALL)
    subprocess.run(["npm", "ci", "--prefix", INSTALL, "--no-audit", "--no-fund",
                    "--ignore-scripts", "--loglevel", "error"],
                   check=True, timeout=300, stdin=subprocess.DEVNULL)
    with open(stamp, "w") as f:
        f.write(digest)


def wait_ready(port, path, proc, what):
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"side-by-side: {what} exited with status {proc.returncode}")
        try:
            if get(port, path)[0] == 200:
                return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"side-by-side: {what} did not answer {path} within 20 s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "target/release/widgets-todos"))
    args = parser.parse_args()
    if not shutil.which("node") or not shutil.which("npm"):
        print("side-by-side: skipped: Node and npm are needed (Debian: apt-get install nodejs npm)")
        return
    install()
    tmp = tempfile.mkdtemp(prefix="side-by-side-")
    procs = []
    try:
        fixture = os.path.join(PINS, "db.json")
        for name in ("theirs.json", "ours.json"):
            shutil.copy(fixture, os.path.join(tmp, name))
        theirs_port = free_port()
        bin_js = os.path.join(INSTALL, "node_modules", "json-server", "lib", "cli", "bin.js")
        theirs = subprocess.Popen(
            ["node", bin_js, os.path.join(tmp, "theirs.json"), "--host", "127.0.0.1",
             "--port", str(theirs_port), "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(theirs)
        ours = subprocess.Popen(
            [args.binary, "--host", "127.0.0.1", "--port", "0", "--log-level", "warn",
             "--data", os.path.join(tmp, "ours.json")],
            stdout=subprocess.PIPE)
        procs.append(ours)
        line = ours.stdout.readline().decode()
        if not line.startswith("listening on http://"):
            sys.exit(f"side-by-side: this server did not start: {line!r}")
        ours_port = int(line.strip().rsplit(":", 1)[1])
        wait_ready(theirs_port, "/todos", theirs, "json-server")
        version = json.load(open(os.path.join(INSTALL, "node_modules", "json-server", "package.json")))
        print(f"side-by-side: json-server {version['version']} on :{theirs_port},"
              f" this server on :{ours_port}, {os.path.relpath(fixture, ROOT)}")

        passed, failed = 0, 0
        for query in SAME:
            their_status, their_items = get(theirs_port, "/" + query)
            our_status, our_items = get(ours_port, "/api/" + query)
            ids = [item["id"] for item in our_items] if isinstance(our_items, list) else our_items
            if their_status == our_status == 200 and their_items == our_items:
                passed += 1
                print(f"same: {query} -> ids {ids}")
            else:
                failed += 1
                their_ids = ([item.get("id") for item in their_items]
                             if isinstance(their_items, list) else their_items)
                print(f"FAIL: {query}: json-server {their_status} {their_ids}, here {our_status} {ids}")
        for query, expected in DIFFERENT:
            their_status, their_items = get(theirs_port, "/" + query)
            our_status, our_items = get(ours_port, "/api/" + query)
            theirs_said = (f"{len(their_items)} items" if isinstance(their_items, list)
                           else "no JSON")
            if our_status == expected:
                passed += 1
                said = our_items.get("detail") if isinstance(our_items, dict) else f"{len(our_items)} items"
                print(f"differs, as docs/json-server.md says: {query}: json-server {their_status}"
                      f" ({theirs_said}), here {our_status} ({said})")
            else:
                failed += 1
                print(f"FAIL: {query}: here {our_status}, expected {expected}")
        print(f"side-by-side: {passed} passed, {failed} failed")
        if failed:
            sys.exit(1)
    finally:
        for proc in procs:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
