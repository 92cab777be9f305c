#!/usr/bin/env python3
"""Crash test for --data: kill -9 mid-write, restart, check every acknowledged write.

    python3 scripts/crash.py [--rounds 20] [--clients 6] [--binary target/release/widgets-todos]

Each round starts the release binary with --data in a fresh temporary
directory's file (the same file across rounds), lets several clients
create, update and delete todos and widgets at full speed, and kills the
server with SIGKILL at a random moment. It then restarts the server and
checks, against what the clients saw acknowledged:

- every acknowledged create and update is there with its acknowledged content;
- every acknowledged delete is gone;
- a write that was in flight when the server died is either fully there or
  fully absent (it was never acknowledged, so either is allowed);
- nothing else is there, ids are unique, and no id is ever handed out twice
  (a create never returns an id seen before, across all rounds);
- the server starts every time.

Each client owns the items it creates, so every item has one writer and
its acknowledged state is exact. Prints rounds, acknowledged operations
and losses; exits non-zero on any loss or violation. 127.0.0.1 only;
every wait is bounded.
"""

import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GONE = "deleted"
COLLECTIONS = ("todos", "widgets")


def fail(message):
    print(f"crash: FAIL: {message}", flush=True)
    sys.exit(1)


def start(binary, data):
    started = time.monotonic()
    proc = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", "0", "--data", data,
                             "--log-level", "warn"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stdout.readline().decode()
    if not line.startswith("listening on http://"):
        proc.kill()
        fail(f"the server did not start: {line!r} {proc.stderr.read().decode()}")
    host, port = line.strip().rsplit("/", 1)[1].rsplit(":", 1)
    return proc, (host, int(port)), time.monotonic() - started


class Client(threading.Thread):
    """Writes its own items until the server dies."""

    def __init__(self, number, addr, items, seen_ids, seed):
        super().__init__(daemon=True)
        self.number = number
        self.addr = addr
        # (collection, id) -> acknowledged content, or GONE; shared across rounds.
        self.items = items
        self.seen_ids = seen_ids
        self.random = random.Random(seed)
        self.acked = 0
        self.inflight = None  # (kind, collection, id or None, content)
        self.violations = []
        self.ops = 0

    def body(self, collection):
        self.ops += 1
        tag = f"c{self.number}-{time.monotonic_ns()}-{self.ops}"
        if collection == "todos":
            return {"userId": self.number + 1, "title": tag, "completed": self.ops % 2 == 0}
        return {"price": f"${self.ops}", "quality": tag}

    def run(self):
        try:
            conn = http.client.HTTPConnection(*self.addr, timeout=5)
            while True:
                self.step(conn)
        except (OSError, http.client.HTTPException):
            return  # the server was killed

    def step(self, conn):
        mine = [key for key, content in self.items.items() if content != GONE]
        choice = self.random.random()
        collection = self.random.choice(COLLECTIONS)
        if not mine or choice < 0.4:
            content = self.body(collection)
            self.inflight = ("create", collection, None, content)
            status, answer = request(conn, "POST", f"/api/{collection}", content)
            if status != 201:
                self.violations.append(f"POST answered {status}: {answer}")
                return
            key = (collection, answer["id"])
            if key in self.seen_ids:
                self.violations.append(f"id {key} handed out twice")
            self.seen_ids.add(key)
            self.items[key] = answer
        elif choice < 0.8:
            key = self.random.choice(mine)
            change = self.body(key[0])
            expected = dict(self.items[key], **change)
            self.inflight = ("update", key[0], key[1], expected)
            status, answer = request(conn, "PATCH", f"/api/{key[0]}/{key[1]}", change)
            if status != 200 or answer != expected:
                self.violations.append(f"PATCH {key} answered {status}: {answer}")
                return
            self.items[key] = answer
        else:
            key = self.random.choice(mine)
            self.inflight = ("delete", key[0], key[1], None)
            status, answer = request(conn, "DELETE", f"/api/{key[0]}/{key[1]}", None)
            if status != 200 or answer != self.items[key]:
                self.violations.append(f"DELETE {key} answered {status}: {answer}")
                return
            self.items[key] = GONE
        self.inflight = None
        self.acked += 1


def request(conn, method, path, body):
    headers = {}
    payload = None
    if body is not None:
        payload = json.dumps(body)
        headers["Content-Type"] = "application/json"
    conn.request(method, path, payload, headers)
    response = conn.getresponse()
    data = response.read()
    return response.status, (json.loads(data) if data else None)


def fetch_all(addr):
    conn = http.client.HTTPConnection(*addr, timeout=10)
    found = {}
    for collection in COLLECTIONS:
        status, items = request(conn, "GET", f"/api/{collection}", None)
        if status != 200:
            fail(f"GET /api/{collection} answered {status}")
        for item in items:
            key = (collection, item["id"])
            if key in found:
                fail(f"id {key} appears twice in the list")
            found[key] = item
    conn.close()
    return found


def check(found, clients, seen_ids):
    """Compares the restarted server with what was acknowledged; returns losses."""
    losses = []
    known = set()
    for client in clients:
        inflight = client.inflight
        for key, content in client.items.items():
            known.add(key)
            now = found.get(key)
            allowed = [None if content == GONE else content]
            if inflight and inflight[0] != "create" and (inflight[1], inflight[2]) == key:
                allowed.append(None if inflight[0] == "delete" else inflight[3])
            if now not in allowed:
                losses.append(f"{key}: acknowledged {content}, found {now}")
            # Settle an in-flight write the way it turned out.
            client.items[key] = GONE if now is None else now
        if inflight and inflight[0] == "create":
            # Never acknowledged: it may have landed under an id no one saw.
            for key, item in found.items():
                if key not in known and key[0] == inflight[1] and \
                        all(item.get(k) == v for k, v in inflight[3].items()):
                    known.add(key)
                    seen_ids.add(key)
                    client.items[key] = item
                    break
        client.inflight = None
    for key in found:
        if key not in known:
            losses.append(f"{key}: present, but no client ever wrote it: {found[key]}")
    return losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "widgets-todos"))
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    workdir = tempfile.mkdtemp(prefix="crash-")
    data = os.path.join(workdir, "data.json")
    items = [dict() for _ in range(args.clients)]
    seen_ids = set()
    acked = 0
    losses = []
    starts = []
    print(f"crash: {args.rounds} rounds, {args.clients} clients, seed {seed}, data {data}",
          flush=True)
    for round_no in range(1, args.rounds + 1):
        proc, addr, took = start(args.binary, data)
        starts.append(took)
        if round_no > 1:
            found = fetch_all(addr)
            round_losses = check(found, clients, seen_ids)
            losses.extend(f"round {round_no - 1}: {loss}" for loss in round_losses)
        clients = [Client(n, addr, items[n], seen_ids, rng.random()) for n in range(args.clients)]
        for client in clients:
            client.start()
        time.sleep(rng.uniform(0.1, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        for client in clients:
            client.join(timeout=10)
            if client.is_alive():
                fail("a client did not notice the server was gone")
            acked += client.acked
            for violation in client.violations:
                losses.append(f"round {round_no}: {violation}")
        print(f"  round {round_no}: {sum(c.acked for c in clients)} acknowledged, "
              f"restart in {took * 1000:.0f} ms", flush=True)
    # The last round's writes, checked after one more restart.
    proc, addr, took = start(args.binary, data)
    starts.append(took)
    found = fetch_all(addr)
    losses.extend(f"round {args.rounds}: {loss}" for loss in check(found, clients, seen_ids))
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)

    for loss in losses[:20]:
        print(f"  LOSS {loss}")
    print(f"crash: {args.rounds} rounds of kill -9, {acked} acknowledged operations, "
          f"{len(found)} items at the end, {len(losses)} lost, "
          f"slowest restart {max(starts) * 1000:.0f} ms", flush=True)
    if losses:
        sys.exit(1)


if __name__ == "__main__":
    main()
