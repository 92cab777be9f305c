#!/usr/bin/env python3
"""A full disk under --data, for real: a 64 KiB tmpfs (root only).

    sudo python3 scripts/diskfull.py [--binary target/release/widgets-todos]

Mounts a 64 KiB tmpfs, starts the release binary with --data on it, and has
several clients create todos with long titles at once until the disk is
full, the last write cut off part way. Then it checks that:

- the write that failed got 503 problem+json, and every write after it too;
- the list holds exactly the todos whose creates were acknowledged (201),
  and X-Total-Count agrees: no failed write is left in memory;
- the journal holds exactly their records: the part of the failed batch
  that reached the disk was cut back out (on tmpfs, whose fsync costs
  nothing, batches stay small, and that part is a record cut short);
- after kill -9 and a restart on the same files (the tmpfs made larger),
  the same todos are there, none more, and the next id is
  the one after the last acknowledged.

Without root it prints why it skipped and exits 0. 127.0.0.1 only; every
wait is bounded. (`cargo test` covers the same with a journal linked to
/dev/full, which needs no mount.)
"""

import argparse
import http.client
import json
import os
import select
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIENTS = 8
TITLE = "x" * 900  # about 1 KB a record: the disk fills after some 60


def fail(message):
    print(f"diskfull: FAIL: {message}", flush=True)
    sys.exit(1)


def start(binary, data):
    proc = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", "0", "--data", data,
                             "--log-level", "error"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    line = proc.stdout.readline().decode() if ready else ""
    if not line.startswith("listening on http://"):
        proc.kill()
        fail(f"the server did not start: {line!r} {proc.stderr.read().decode()[:500]}")
    host, port = line.strip().rsplit("/", 1)[1].rsplit(":", 1)
    return proc, (host, int(port))


def request(addr, method, path, body=None):
    conn = http.client.HTTPConnection(*addr, timeout=30)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    conn.request(method, path, body=json.dumps(body) if body is not None else None,
                 headers=headers)
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    return response.status, dict(response.getheaders()), payload


def fill(addr):
    """Creates todos from several clients at once until every client has
    been refused; returns the acknowledged ids and the refusals' statuses."""
    acked, refused, lock = [], [], threading.Lock()

    def client(number):
        for n in range(1000):  # far more than fit in 64 KiB
            status, headers, payload = request(addr, "POST", "/api/todos",
                                               {"userId": number + 1, "title": TITLE})
            with lock:
                if status == 201:
                    acked.append(json.loads(payload)["id"])
                else:
                    refused.append((status, headers.get("Content-Type")))
                    return

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
        if thread.is_alive():
            fail("a client was still writing after 120 s")
    return sorted(acked), refused


def listed(addr):
    status, headers, payload = request(addr, "GET", "/api/todos")
    if status != 200:
        fail(f"GET /api/todos answered {status}")
    return [todo["id"] for todo in json.loads(payload)], headers.get("X-Total-Count")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "widgets-todos"))
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("diskfull: skipped: mounting a tmpfs needs root", flush=True)
        return
    if not os.path.exists(args.binary):
        fail(f"no {args.binary}: run cargo build --release first")

    mount = tempfile.mkdtemp(prefix="diskfull-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mount], check=True)
    proc = None
    try:
        data = os.path.join(mount, "data.json")
        proc, addr = start(args.binary, data)
        acked, refused = fill(addr)
        if not acked:
            fail("no create succeeded before the disk was full")
        if set(refused) != {(503, "application/problem+json")}:
            fail(f"the refused writes got {sorted(set(refused))}, not only 503 problem+json")
        status, _, _ = request(addr, "POST", "/api/todos", {"userId": 1, "title": "after"})
        if status != 503:
            fail(f"a write after the failure got {status}, not 503")
        ids, total = listed(addr)
        if ids != acked or total != str(len(acked)):
            fail(f"in memory: {len(ids)} todos (X-Total-Count {total}), "
                 f"but {len(acked)} acknowledged; extra ids {sorted(set(ids) - set(acked))}")
        # The part of the failed batch that reached the disk is cut back
        # out: the journal holds exactly the acknowledged records.
        with open(data + ".journal", "rb") as f:
            journal = f.read()
        whole = journal.count(b"\n")
        if whole != len(acked) or not journal.endswith(b"\n"):
            fail(f"the journal holds {whole} whole records for {len(acked)} acknowledged, "
                 f"and ends in {journal[-40:]!r}")
        proc.kill()
        proc.wait()

        subprocess.run(["mount", "-o", "remount,size=1m", mount], check=True)
        proc, addr = start(args.binary, data)
        ids, total = listed(addr)
        if ids != acked:
            fail(f"after a restart: extra ids {sorted(set(ids) - set(acked))}, "
                 f"missing ids {sorted(set(acked) - set(ids))}")
        status, _, payload = request(addr, "POST", "/api/todos", {"userId": 1, "title": "next"})
        if status != 201 or json.loads(payload)["id"] != acked[-1] + 1:
            fail(f"the next create got {status} {payload[:200]!r}, not id {acked[-1] + 1}")
        print(f"diskfull: ok: {len(acked)} creates acknowledged, {len(refused)} refused with 503, "
              f"journal {len(journal)} bytes when full; nothing more in memory or after a restart",
              flush=True)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        subprocess.run(["umount", mount], check=False)
        os.rmdir(mount)


if __name__ == "__main__":
    main()
