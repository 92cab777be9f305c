"""sseclient-py over requests, unchanged, following the change feed through
two cuts, as scripts/sse.sh runs it:

    SERVER_URL=http://127.0.0.1:PORT python follow.py

The same scenario as follow.mjs. sseclient-py parses a stream and leaves
reconnecting to its user; this script does it as an EventSource does:
after the stream's `retry:` milliseconds, with `Last-Event-ID` set to the
id of the last event it got. requests reads the body in blocks of 128
bytes: each event must come at once all the same. Prints "ok"/"FAIL"
lines, then "sseclient-py: N passed, M failed".
"""

import json
import os
import socket
import threading
import time
import urllib.parse

import requests
import sseclient

SERVER = urllib.parse.urlsplit(os.environ["SERVER_URL"])
counts = {"passed": 0, "failed": 0}


def check(ok, what):
    print(f"{'ok' if ok else 'FAIL'} - {what}", flush=True)
    counts["passed" if ok else "failed"] += 1


class Relay:
    """Pipes each connection to the server; `cut` ends them all. Notes the
    Last-Event-ID each request carries."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open, self.resumed_from, self.lock = [], [], threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection((SERVER.hostname, SERVER.port))
            with self.lock:
                self.open += [client, upstream]
            threading.Thread(target=self.pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self.pipe, args=(upstream, client, False), daemon=True).start()

    def pipe(self, source, sink, request):
        try:
            first = True
            while data := source.recv(65536):
                if request and first:
                    head = data.decode("latin-1")
                    found = [line.split(":", 1)[1].strip() for line in head.split("\r\n")
                             if line.lower().startswith("last-event-id:")]
                    self.resumed_from.append(found[0] if found else None)
                    first = False
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        with self.lock:
            for s in self.open:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.open = []


relay = Relay()
feed = f"http://127.0.0.1:{relay.port}/api/events"
state = {"position": None, "last": None, "seen": [], "resyncs": 0, "running": True}


def follow():
    """An EventSource's loop over sseclient-py."""
    retry = 1.0
    while state["running"]:
        headers = {"Accept": "text/event-stream"}
        if state["last"] is not None:
            headers["Last-Event-ID"] = state["last"]
        try:
            with requests.get(feed, stream=True, headers=headers, timeout=(5, 30)) as response:
                for event in sseclient.SSEClient(response).events():
                    if event.retry:
                        retry = int(event.retry) / 1000
                    if event.id is not None:
                        state["last"] = event.id
                    if event.event == "position":
                        state["position"] = event.id
                    elif event.event == "resync":
                        state["resyncs"] += 1
                    elif event.event == "created":
                        state["seen"].append(json.loads(event.data)["id"])
        except requests.exceptions.RequestException:
            pass
        time.sleep(retry)


created = []


def write(n):
    for _ in range(n):
        body = {"userId": 1, "title": f"sseclient-py {len(created) + 1}"}
        response = requests.post(f"{os.environ['SERVER_URL']}/api/todos", json=body, timeout=5)
        created.append(response.json()["id"])


def until(what, ok, seconds=10):
    deadline = time.monotonic() + seconds
    while not ok() and time.monotonic() < deadline:
        time.sleep(0.02)
    check(ok(), what)


threading.Thread(target=follow, daemon=True).start()
until("the stream opens with its position", lambda: state["position"] is not None)
position = state["position"]
relay.cut()
write(5)
until("after a cut before any event, the writes made meanwhile come",
      lambda: len(state["seen"]) >= 5)
resumed = relay.resumed_from[1] if len(relay.resumed_from) > 1 else None
check(resumed == position, f"it resumed from the opening position (Last-Event-ID: {resumed})")
write(5)
# Each event at once, though requests reads 128-byte blocks: no other
# write follows to push it out.
until("live writes come, each at once", lambda: len(state["seen"]) >= 10, seconds=2)
last = state["last"]
relay.cut()
write(5)
until("after a cut between events, the writes made meanwhile come",
      lambda: len(state["seen"]) >= 15)
resumed = relay.resumed_from[2] if len(relay.resumed_from) > 2 else None
check(resumed == last, f"it resumed from the last event (Last-Event-ID: {resumed})")
check(state["seen"] == created, "every write once, in order")
check(state["resyncs"] == 0, "no resync")
state["running"] = False
relay.cut()
print(f"sseclient-py: {counts['passed']} passed, {counts['failed']} failed", flush=True)
os._exit(0 if counts["failed"] == 0 else 1)
