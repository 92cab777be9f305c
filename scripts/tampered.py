#!/usr/bin/env python3
"""The data files changed by another program while the server runs, then kill -9.

    python3 scripts/tampered.py [--binary target/release/widgets-todos]

Each scenario starts the release binary with --data in a fresh temporary
directory, on 127.0.0.1 and a free port, and checks what a restart after
`kill -9` loads against what the server acknowledged:

- the journal replaced (copied and renamed over, as an editor's save or a
  sync tool does), deleted, or cut to half its length, and the snapshot
  deleted, each between two batches of 100 acknowledged POSTs: all 200
  todos load, and the server logged a warning while it ran (the time from
  the change to the warning is printed);
- four runs of 8,000 acknowledged POSTs, each ended by kill -9: the
  journal holds at most 12,000 records after the last (the count toward
  compaction starts from what the journal holds);
- `--watch` with a json-server db.json of todos: an edit by another
  program (a todo added, one changed) is served (the time it took is
  printed, and must be under 2 s), an edit that is not JSON is logged and
  changes nothing, and a restart after kill -9 loads every write
  acknowledged through the API and the edit.

Prints a line per check and `tampered: N checks, 0 failed`; exits
non-zero on any failure. Every wait is bounded; about 30 s in all.
"""

import argparse
import http.client
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH = 100
FAILED = []
CHECKS = []
RUNNING = []


class Server:
    """The binary on a free port, its log (stderr) read line by line."""

    def __init__(self, binary, args):
        self.proc = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", "0", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        RUNNING.append(self.proc)
        line = self.proc.stdout.readline().decode()
        if not line.startswith("listening on http://"):
            self.proc.kill()
            raise RuntimeError(f"the server did not start: {line!r} "
                               f"{self.proc.stderr.read().decode()}")
        host, port = line.strip().rsplit("/", 1)[1].rsplit(":", 1)
        self.addr = (host, int(port))
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.conn = http.client.HTTPConnection(*self.addr, timeout=10)

    def _read(self):
        for line in self.proc.stderr:
            self.lines.put(line.decode(errors="replace").rstrip("\n"))

    def wait_for(self, *said, limit=10.0):
        """The first log line saying all of `said` within `limit` s, or None."""
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                return None
            if all(s in line for s in said):
                return line

    def request(self, method, path, body=None):
        payload = None if body is None else json.dumps(body)
        headers = {"Content-Type": "application/json"} if body is not None else {}
        self.conn.request(method, path, payload, headers)
        response = self.conn.getresponse()
        data = response.read()
        return response.status, (json.loads(data) if data else None)

    def create(self, title):
        status, answer = self.request("POST", "/api/todos", {"userId": 1, "title": title})
        if status != 201:
            raise RuntimeError(f"POST answered {status}: {answer}")
        return answer["id"]

    def titles(self):
        status, todos = self.request("GET", "/api/todos")
        if status != 200:
            raise RuntimeError(f"GET /api/todos answered {status}")
        return [todo["title"] for todo in todos]

    def kill_9(self):
        self.proc.kill()
        self.proc.wait(timeout=10)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def check(name, ok, detail):
    print(f"  {'ok' if ok else 'FAIL'}: {name}: {detail}", flush=True)
    CHECKS.append(name)
    if not ok:
        FAILED.append(name)


def restarted_titles(binary, data):
    server = Server(binary, ["--data", data, "--log-level", "warn"])
    titles = server.titles()
    server.stop()
    return titles


def journal_of(data):
    return data + ".journal"


def replace_journal(data):
    shutil.copy(journal_of(data), data + ".copy")
    os.rename(data + ".copy", journal_of(data))


def delete_journal(data):
    os.remove(journal_of(data))


def cut_journal(data):
    with open(journal_of(data), "r+b") as journal:
        journal.truncate(os.path.getsize(journal_of(data)) // 2)


def delete_snapshot(data):
    os.remove(data)


def between_batches(binary, workdir, name, named, change):
    """100 POSTs, `change`, 100 POSTs, the warning, kill -9, restart."""
    data = os.path.join(workdir, f"{name.replace(' ', '-')}.json")
    server = Server(binary, ["--data", data, "--log-level", "warn"])
    expected = [f"t{n}" for n in range(2 * BATCH)]
    for title in expected[:BATCH]:
        server.create(title)
    changed = time.monotonic()
    change(data)
    for title in expected[BATCH:]:
        server.create(title)
    warning = server.wait_for("WARN", os.path.basename(data) + named, "by another program")
    took = time.monotonic() - changed
    server.kill_9()
    found = restarted_titles(binary, data)
    check(name, warning is not None and found == expected,
          f"{len(set(found) & set(expected))} of {len(expected)} acknowledged todos after "
          f"kill -9; " + (f"warned {took:.1f} s after the change" if warning else "no warning"))


def four_crashed_runs(binary, workdir, writes=8000, clients=16):
    """Four runs of `writes` writes (a create, then three updates of it),
    each ended by kill -9: the journal's records after the last. The
    store ends with 8,000 items: fewer than the 10,000 records after which
    a journal is compacted (with more items, it is compacted after as many
    records as there are items; docs/persistence.md, "Cost")."""
    data = os.path.join(workdir, "four-runs.json")
    started = time.monotonic()
    for _ in range(4):
        server = Server(binary, ["--data", data, "--log-level", "warn"])
        per_client = writes // clients

        def write(server=server):
            conn = http.client.HTTPConnection(*server.addr, timeout=10)
            headers = {"Content-Type": "application/json"}
            last = None
            for n in range(per_client):
                if n % 4 == 0:
                    body = {"userId": 1, "title": "x"}
                    conn.request("POST", "/api/todos", json.dumps(body), headers)
                else:
                    body = {"title": f"x{n}"}
                    conn.request("PATCH", f"/api/todos/{last}", json.dumps(body), headers)
                response = conn.getresponse()
                answer = json.loads(response.read())
                if response.status not in (200, 201):
                    raise RuntimeError(f"answered {response.status}: {answer}")
                last = answer["id"]

        threads = [threading.Thread(target=write) for _ in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        server.kill_9()
    with open(journal_of(data), "rb") as journal:
        records = sum(1 for _ in journal)
    count = len(restarted_titles(binary, data))
    check("four runs of 8,000 writes, each ended by kill -9",
          records <= 12000 and count == 4 * (writes // 4),
          f"the journal holds {records} records after the last (at most 12,000), "
          f"{count} todos load; {time.monotonic() - started:.1f} s")


def watch(binary, workdir):
    """--watch with a json-server db.json of todos."""
    data = os.path.join(workdir, "db.json")
    with open(data, "w") as db:
        json.dump({"todos": [{"userId": 1, "id": 1, "title": "Buy milk", "completed": False}]}, db)
    server = Server(binary, ["--watch", data])
    server.create("api 1")
    # The file shows what the server holds within about a second.
    deadline = time.monotonic() + 10
    while "api 1" not in open(data).read():
        if time.monotonic() > deadline:
            check("--watch", False, "the API's write never reached db.json")
            server.kill_9()
            return
        time.sleep(0.05)
    db = json.load(open(data))
    db["todos"][0]["title"] = "Buy oat milk"
    db["todos"].append({"userId": 2, "id": 10, "title": "by hand", "completed": True})
    with open(data + ".save", "w") as saved:
        json.dump(db, saved)
    edited = time.monotonic()
    os.rename(data + ".save", data)
    served = None
    while time.monotonic() - edited < 10:
        if server.request("GET", "/api/todos/10")[0] == 200:
            served = time.monotonic() - edited
            break
        time.sleep(0.02)
    changed = server.request("GET", "/api/todos/1")[1] or {}
    check("--watch: an edit is served", served is not None and served < 2
          and changed.get("title") == "Buy oat milk",
          f"served {served:.2f} s after the edit (under 2 s)" if served else "never served")
    server.create("api 2")

    with open(data, "w") as db:
        db.write('{"todos": [')
    warning = server.wait_for("WARN", "db.json", "not valid JSON")
    unchanged = server.request("GET", "/api/todos/10")[0] == 200
    check("--watch: an edit that is not JSON changes nothing", warning is not None and unchanged,
          "logged, and the data served stays as it was" if warning else "no warning")
    server.create("api 3")
    server.kill_9()
    found = restarted_titles(binary, data)
    expected = ["Buy oat milk", "api 1", "by hand", "api 2", "api 3"]
    check("--watch: kill -9, restart", found == expected, f"loaded {found}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "widgets-todos"))
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="tampered-")
    started = time.monotonic()
    scenarios = [
        ("journal replaced", ".journal was replaced", replace_journal),
        ("journal deleted", ".journal was deleted", delete_journal),
        ("journal cut", ".journal was cut", cut_journal),
        ("snapshot deleted", " was deleted", delete_snapshot),
    ]
    runs = [(name, lambda n=name, w=named, c=change: between_batches(args.binary, workdir, n, w, c))
            for name, named, change in scenarios]
    runs.append(("four runs", lambda: four_crashed_runs(args.binary, workdir)))
    runs.append(("--watch", lambda: watch(args.binary, workdir)))
    for name, run in runs:
        try:
            run()
        except (OSError, RuntimeError, http.client.HTTPException, ValueError) as err:
            check(name, False, str(err).strip())
    for proc in RUNNING:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    shutil.rmtree(workdir, ignore_errors=True)
    print(f"tampered: {len(CHECKS)} checks, {len(FAILED)} failed, "
          f"{time.monotonic() - started:.0f} s", flush=True)
    if FAILED:
        sys.exit(1)


if __name__ == "__main__":
    main()
