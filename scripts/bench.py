#!/usr/bin/env python3
"""Benchmark: widgets-todos against the bare HTTP library, in one run.

    python3 scripts/bench.py [--quick] [--rounds N] [--duration SECONDS] [--peer]

Called by scripts/bench.sh, which builds the binaries and installs wrk.
For every scenario and round it starts the baseline (examples/baseline.rs),
our connection layer answering fixed replies (examples/layer.rs), a
minimal server that stores (examples/bench_store.rs) and the real server, each
fresh, the two that store seeded with the same 200 todos the others answer
with, and measures them with wrk in turns of one second
(the order reversing every turn), --duration turns each, so that drift on a
shared machine hits all alike. The servers are pinned to core 0 and wrk to
core 1 when there are two or more cores. Prints a Markdown table of
medians, min-max over the rounds, and the ratios to the baseline: the
median of the rounds' ratios, each taken within one round, with their
range. The layer's ratio is what the real server could reach with an
application that cost nothing; the minimal server's, about what any server
reaches that reads, parses and keeps what it is sent. Then the memory, size and
start-up figures, POST with 64 subscribers to /api/events against none
(the bound: at least 0.9), GET one and PUT with 100,000 todos stored against 200,
durable POSTs and list queries over big stores. (In full mode,
scripts/bench.sh then runs scripts/scale.py for the big stores' table:
start-up, memory and list queries with 100,000 and 1,000,000 todos loaded
with --data, and the 80/20 mix over a million todos against 200.) Only
ratios from one run
mean anything: absolute numbers drift with whatever else the machine is
doing.

--peer adds json-server 0.17.4 (Node), the tool this server stands in
for, to the four scenarios of the json-server reference table and to the
memory and start-up figures: in each round, right after the others'
turns, alone on the core. It must be
installed under target/peer (scripts/bench.sh --peer does that with npm).

--quick runs every scenario once, briefly: CI uses it to prove that the
script still runs, not to judge the figures. A scenario whose responses are
not all 2xx fails the run in either mode.
"""

import argparse
import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER = os.path.join(ROOT, "target", "release", "widgets-todos")
BASELINE = os.path.join(ROOT, "target", "release", "examples", "baseline")
LAYER = os.path.join(ROOT, "target", "release", "examples", "layer")
MINIMAL = os.path.join(ROOT, "target", "release", "examples", "bench_store")
PEER = os.path.join(ROOT, "target", "peer", "node_modules", "json-server", "lib", "cli", "bin.js")
THREADS = 2  # workers, for every server
STORED = 200  # todos in the store, as the examples answer (LIST_LEN)

CORES = len(os.sched_getaffinity(0))
PIN_SERVER = ["taskset", "-c", "0"] if CORES >= 2 else []
PIN_WRK = ["taskset", "-c", "1"] if CORES >= 2 else []


def todo_body(n):
    """The n-th seeded todo, as examples/baseline.rs builds it."""
    return {"userId": n % 10 + 1, "title": f"benchmark todo number {n}", "completed": n % 2 == 0}


POST_BODY = json.dumps(todo_body(STORED + 1))
PUT_BODY = json.dumps({"completed": True})
JSON_HEADER = '{["Content-Type"] = "application/json"}'

# name -> (method/path description, Lua script). Every script reaches items
# 1..200, which every server has.
SCENARIOS = {
    "GET one": f"""
wrk.method = "GET"
wrk.path = "/api/todos/7"
""",
    f"GET list of {STORED}": """
wrk.method = "GET"
wrk.path = "/api/todos"
""",
    "POST": f"""
wrk.method = "POST"
wrk.path = "/api/todos"
wrk.headers["Content-Type"] = "application/json"
wrk.body = {json.dumps(POST_BODY)}
""",
    "PUT": f"""
wrk.method = "PUT"
wrk.path = "/api/todos/8"
wrk.headers["Content-Type"] = "application/json"
wrk.body = {json.dumps(PUT_BODY)}
""",
    # Each thread deletes the todos it created, one DELETE after each POST.
    "DELETE then POST": f"""
local ids = {{}}
local post
function init(args)
  post = wrk.format("POST", "/api/todos", {JSON_HEADER}, {json.dumps(POST_BODY)})
end
function request()
  local id = table.remove(ids)
  if id then return wrk.format("DELETE", "/api/todos/" .. id) end
  return post
end
function response(status, headers, body)
  local location = headers["Location"]
  if status == 201 and location then table.insert(ids, location:match("%d+$")) end
end
""",
    "80% GET / 20% PUT": f"""
local get, put
local n = 0
function init(args)
  get = wrk.format("GET", "/api/todos/7")
  put = wrk.format("PUT", "/api/todos/8", {JSON_HEADER}, {json.dumps(PUT_BODY)})
end
function request()
  n = n + 1
  if n % 5 == 0 then return put end
  return get
end
""",
}
# The runs json-server takes part in with --peer: the columns of the
# json-server reference table (scripts/PERFORMANCE.md).
PEER_RUNS = (("GET one", 64), (f"GET list of {STORED}", 16), ("POST", 16),
             ("80% GET / 20% PUT", 16))
CLOSE_SCENARIO = ("GET one, Connection: close", """
wrk.method = "GET"
wrk.path = "/api/todos/7"
wrk.headers["Connection"] = "close"
""")

# Every row of the main table: each scenario at 16 and 64 connections,
# and the closing one at 16. (scripts/bench_against.py runs them too.)
RUNS = [(name, conns) for name in SCENARIOS for conns in (16, 64)] + [(CLOSE_SCENARIO[0], 16)]


def fail(message):
    print(f"bench: FAIL: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


class Running:
    """A server process on 127.0.0.1, port 0, pinned to core 0."""

    def __init__(self, binary, extra=(), log=None, threads=THREADS):
        workers = ["--threads", str(threads)] if threads else []
        args = [*PIN_SERVER, binary, "--host", "127.0.0.1", "--port", "0",
                *workers, "--max-items", "100000000", *extra]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE,
                                     stderr=log or subprocess.DEVNULL)
        line = self.proc.stdout.readline().decode()
        if not line.startswith("listening on http://"):
            self.proc.kill()
            fail(f"{binary} did not start: {line!r}")
        self.url = line.strip().split(" ", 2)[2]
        host, port = self.url.rsplit("/", 1)[1].rsplit(":", 1)
        self.addr = (host, int(port))

    def seed(self, count=STORED):
        """Creates todos 1..count, pipelined in batches on one connection."""
        sock = socket.create_connection(self.addr, timeout=30)
        batch = 500
        for start in range(1, count + 1, batch):
            numbers = range(start, min(start + batch, count + 1))
            requests = []
            for n in numbers:
                body = json.dumps(todo_body(n)).encode()
                requests.append(b"POST /api/todos HTTP/1.1\r\nHost: bench\r\n"
                                b"Content-Type: application/json\r\n"
                                b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            sock.sendall(b"".join(requests))
            # Every response ends with its JSON body, a todo; count them.
            wire = b""
            while wire.count(b"HTTP/1.1 ") < len(numbers) or not wire.endswith(b"}"):
                chunk = sock.recv(1 << 16)
                if not chunk:
                    fail("seeding: the server closed the connection")
                wire += chunk
            if wire.count(b"HTTP/1.1 201 ") != len(numbers):
                fail(f"seeding: not every POST answered 201: {wire[:200]!r}")
        sock.close()

    def script(self, path):
        """The wrk script to load this server with, for the scenario `path`."""
        return path

    def status(self, field):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peer_command(workdir, port):
    """json-server on `port`, over a fresh copy of a store of the same 200
    todos. It serves them at /todos, not /api/todos (see `Peer.script`)."""
    db = os.path.join(workdir, "peer-db.json")
    fixture(db, STORED)
    return [*PIN_SERVER, "node", PEER, "--host", "127.0.0.1", "--port", str(port), "--quiet", db]


def peer_script(path):
    """The wrk script `path` as json-server takes it: its own paths (its
    --routes rewriting of /api/... cost it about a sixth of its GETs)."""
    return path[:-len(".lua")] + ".peer.lua"


class Peer(Running):
    """json-server 0.17.4 on 127.0.0.1, pinned to core 0, holding the same
    200 todos as the seeded server. It prints no address, so it is ready
    when it first answers."""

    def __init__(self, workdir, warm_up=None):
        port = free_port()
        started = time.perf_counter()
        self.proc = subprocess.Popen(peer_command(workdir, port),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addr = ("127.0.0.1", port)
        self.url = f"http://127.0.0.1:{port}"
        if first_answer(port, self.proc, started, path="/todos") is None:
            self.stop()
            fail("json-server did not answer within 30 s of starting")
        if warm_up:
            # Node compiles its hot paths as they run: unwarmed, its first
            # second served a third fewer GETs than its third.
            wrk(self.url, peer_script(warm_up), 16, 2)

    def script(self, path):
        return peer_script(path)


def first_answer(port, proc, started, limit=30, path="/api/todos"):
    """Seconds from `started` (a `time.perf_counter()`) until GET `path` on
    `port` first answers 200, or None if `proc` exits or `limit` seconds
    pass first."""
    while time.perf_counter() - started < limit and proc.poll() is None:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                return time.perf_counter() - started
        except OSError:
            time.sleep(0.0005)
    return None


def write_scripts(workdir):
    """Writes the wrk script of every scenario (and json-server's copy)
    into `workdir`; returns their paths by scenario name."""
    scripts = {}
    for name, body in [*SCENARIOS.items(), CLOSE_SCENARIO]:
        path = os.path.join(workdir, re.sub(r"\W+", "_", name) + ".lua")
        with open(path, "w") as f:
            f.write(body)
        with open(peer_script(path), "w") as f:
            f.write(body.replace('"/api/todos', '"/todos'))
        scripts[name] = path
    return scripts


def wrk(url, script_path, connections, duration):
    """Requests per second from one wrk run; fails on any non-2xx answer."""
    args = [*PIN_WRK, "wrk", "-t1", f"-c{connections}", f"-d{duration}s",
            "-s", script_path, url]
    out = subprocess.run(args, capture_output=True, text=True, timeout=duration + 60)
    if out.returncode != 0:
        fail(f"wrk failed: {out.stderr.strip()}")
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out.stdout)
    errors = re.search(r"Socket errors: (.*)", out.stdout)
    if bad:
        fail(f"{bad.group(1)} non-2xx answers from {url} with {script_path}:\n{out.stdout}")
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out.stdout)
    if not rate:
        fail(f"no rate in wrk's output:\n{out.stdout}")
    if errors and "timeout" in errors.group(1) and not re.search(r"timeout 0\b", errors.group(1)):
        print(f"  note: {errors.group(0)}", flush=True)
    return float(rate.group(1))


def interleaved(servers, script_path, connections, duration):
    """Mean requests per second of each of `servers` (name, Running), all
    running at once, measured in turns of one second, `duration` turns
    each, the order reversing every turn. Drift on a shared machine comes
    and goes within seconds; taking turns second by second shares it out
    far more evenly than one run of `duration` seconds after another."""
    rates = {who: [] for who, _ in servers}
    for turn in range(duration):
        for who, server in (servers if turn % 2 == 0 else servers[::-1]):
            rates[who].append(wrk(server.url, server.script(script_path), connections, 1))
    return {who: statistics.fmean(values) for who, values in rates.items()}


def fixture(path, count):
    """A --data file holding `count` todos, as the seeded store holds them."""
    with open(path, "w") as f:
        f.write('{"todos": [\n')
        f.write(",\n".join(json.dumps({"id": n, **todo_body(n)}) for n in range(1, count + 1)))
        f.write("\n]}\n")


def fresh_data(workdir, source):
    """A copy of the fixture `source` with no journal, for one run."""
    path = os.path.join(workdir, "data.json")
    for leftover in (path, path + ".journal"):
        if os.path.exists(leftover):
            os.remove(leftover)
    with open(source, "rb") as src, open(path, "wb") as dst:
        dst.write(src.read())
    return path


def startup_time(binary, extra=()):
    """Seconds from exec to the first 200 on GET /api/todos."""
    return startup(lambda port: [*PIN_SERVER, binary, "--host", "127.0.0.1", "--port", str(port),
                                 "--threads", str(THREADS), "--log-level", "warn", *extra])


def startup(command, path="/api/todos"):
    """Seconds from exec of `command(port)` to its first 200 on GET `path`."""
    port = free_port()
    argv = command(port)
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        took = first_answer(port, proc, started, limit=10, path=path)
        if took is None:
            fail(f"{argv[len(PIN_SERVER)]} did not answer within 10 s of starting")
        return took
    finally:
        proc.terminate()
        proc.wait()


def fmt_rate(values):
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def paired_ratio(numerators, denominators):
    """The median of the rounds' ratios, each taken within one round, and
    their range. A round measures both sides back to back, so drift in what
    else the machine is doing cancels out of each round's ratio; a ratio of
    medians can pair a good minute for one side with a bad one for the
    other."""
    ratios = [n / d for n, d in zip(numerators, denominators)]
    if len(ratios) == 1:
        return f"{ratios[0]:.2f}"
    return f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"


def delay_check(delayed=100, quick=20):
    """`delayed` concurrent GETs with `_delay=1000` on 2 workers, and
    `quick` undelayed GETs sent meanwhile, one at a time. Returns when the
    last delayed one finished (s) and the undelayed ones' times (ms)."""
    server = Running(SERVER, ["--log-level", "warn"])
    server.seed()

    def get(path):
        with socket.create_connection(server.addr, timeout=10) as sock:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode())
            wire = b""
            while chunk := sock.recv(1 << 16):
                wire += chunk
        if not wire.startswith(b"HTTP/1.1 200"):
            fail(f"delay check: {path} answered {wire[:40]!r}")

    finished = []
    started = time.monotonic()
    threads = [threading.Thread(target=lambda: (get("/api/todos?_delay=1000"),
                                                finished.append(time.monotonic())))
               for _ in range(delayed)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)
    times = []
    for _ in range(quick):
        begun = time.monotonic()
        get("/api/todos")
        times.append((time.monotonic() - begun) * 1000)
    for thread in threads:
        thread.join(15)
    server.stop()
    if len(finished) != delayed:
        fail(f"delay check: {len(finished)} of {delayed} delayed requests finished")
    return max(finished) - started, times


# Subscribers to /api/events (the change feed) in a process of their own, on the
# client's core: each reads its head, then every event as it comes and
# drops it, on one thread (a selector), as any client would.
SUBSCRIBERS = r"""
import selectors, socket, sys
host, port, count, target = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
selector = selectors.DefaultSelector()
for _ in range(count):
    s = socket.create_connection((host, port))
    s.sendall(b"GET " + target.encode() + b" HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n")
    head = b""
    # The opening lines end with a blank line (then, chunked, the chunk's CR LF).
    while b"\r\n\r\n" not in head or not head.endswith((b"\n\n", b"\n\n\r\n")):
        chunk = s.recv(4096)
        if not chunk:
            sys.exit("the feed closed: " + repr(head))
        head += chunk
    if not head.startswith(b"HTTP/1.1 200"):
        sys.exit("the feed answered " + repr(head[:60]))
    selector.register(s, selectors.EVENT_READ)
print("subscribed", flush=True)
while selector.get_map():
    for key, _ in selector.select():
        if not key.fileobj.recv(1 << 16):
            selector.unregister(key.fileobj)
            print("disconnected", flush=True)
"""


class Subscribers:
    """`count` clients subscribed to a server's `target` (/api/events and a
    query), reading."""

    def __init__(self, server, count, target):
        host, port = server.addr
        self.proc = subprocess.Popen([*PIN_WRK, sys.executable, "-c", SUBSCRIBERS, host,
                                      str(port), str(count), target], stdout=subprocess.PIPE)
        if self.proc.stdout.readline() != b"subscribed\n":
            self.proc.kill()
            fail(f"{count} subscribers could not subscribe")

    def stop(self):
        """Stops them; how many the server disconnected meanwhile (fell
        behind the events it keeps)."""
        self.proc.kill()
        said = self.proc.stdout.read()
        self.proc.wait()
        return said.count(b"disconnected")


# The feed's subscribers: idle ones, subscribed to the widgets while the
# benchmark writes todos (sent nothing but a keep-alive comment every 15 s:
# what the feed costs the writers), and ones sent every event (what
# delivering 64 copies of each costs too; on 2 cores, their reading also
# takes from wrk's core).
FEED_RUNS = (("idle", "/api/events?collection=widgets"), ("reading", "/api/events"))


def subscribed_posts(binary, script, rounds, turns, target, count=64, conns=16):
    """POST at `conns` connections on two fresh servers of `binary`, one
    with `count` subscribers to `target` and one with none, measured in
    turns: the rates of each, one value per round. The bound asks the first to
    be at least 0.9 of the second with idle subscribers."""
    rates = {"none": [], "subscribed": []}
    for round_no in range(rounds):
        plain, watched = Running(binary, ["--log-level", "warn"]), Running(binary, ["--log-level", "warn"])
        plain.seed()
        watched.seed()
        readers = Subscribers(watched, count, target)
        servers = [("none", plain), ("subscribed", watched)]
        try:
            measured = interleaved(servers if round_no % 2 == 0 else servers[::-1],
                                   script, conns, turns)
        finally:
            dropped = readers.stop()
            plain.stop()
            watched.stop()
        # An idle subscriber is sent nothing: dropping one is a bug. One
        # sent every event may fall behind the ring of --events-kept when
        # its reader, a Python process on wrk's core, cannot keep up with
        # the writes; that is the feed's bound at work, reported.
        if dropped and "collection=widgets" in target:
            fail(f"{dropped} idle subscriber(s) disconnected during the run")
        if dropped:
            print(f"  round {round_no + 1}: {dropped} of {count} subscribers fell behind "
                  "the events kept and were disconnected", flush=True)
        for who, rate in measured.items():
            rates[who].append(rate)
        print(f"  round {round_no + 1}: POST at {conns}, {count} subscribers to {target}: "
              f"{rates['subscribed'][-1]:,.0f}, none: {rates['none'][-1]:,.0f}", flush=True)
    return rates


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="every scenario once, briefly")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run")
    parser.add_argument("--peer", action="store_true",
                        help="also measure json-server 0.17.4 (installed by bench.sh --peer)")
    args = parser.parse_args()
    rounds, duration, startups = (1, 1, 3) if args.quick else (args.rounds, args.duration, 10)
    for binary in (SERVER, BASELINE, LAYER, MINIMAL):
        if not os.access(binary, os.X_OK):
            fail(f"{binary} is missing: run scripts/bench.sh, which builds it")
    if args.peer and not os.path.exists(PEER):
        fail(f"{PEER} is missing: run scripts/bench.sh --peer, which installs it")

    workdir = tempfile.mkdtemp(prefix="bench-")
    scripts = write_scripts(workdir)
    runs = RUNS
    measures = ("baseline", "layer", "minimal", "server", "peer")
    rates = {(run, who): [] for run in runs for who in measures}
    log_rates = {"info": [], "warn": []}
    log_path = os.path.join(workdir, "access.log")

    print(f"bench: {rounds} round(s) of {duration} s per run, {THREADS} workers, "
          f"{CORES} cores, server {'on core 0, wrk on core 1' if PIN_SERVER else 'unpinned'}",
          flush=True)
    for round_no in range(1, rounds + 1):
        # The order in which they start, and take their turns, reverses
        # every round, so that whatever one leaves behind for the next
        # (sockets in TIME_WAIT, a warm cache) favours none.
        order = (("baseline", BASELINE), ("layer", LAYER), ("minimal", MINIMAL),
                 ("server", SERVER))
        if round_no % 2 == 0:
            order = order[::-1]
        for run in runs:
            name, conns = run
            servers = []
            for who, binary in order:
                server = Running(binary, ["--log-level", "warn"])
                if who in ("minimal", "server"):
                    server.seed()
                servers.append((who, server))
            for who, rate in interleaved(servers, scripts[name], conns, duration).items():
                rates[(run, who)].append(rate)
            for _, server in servers:
                server.stop()
            if args.peer and run in PEER_RUNS:
                # Alone on the core: Node keeps working (collecting garbage,
                # compiling) after a turn ends, which would slow whoever
                # came next.
                peer = Peer(workdir, warm_up=scripts["GET one"])
                rates[(run, "peer")].append(
                    interleaved([("peer", peer)], scripts[name], conns, duration)["peer"])
                peer.stop()
            measured = [who for who in measures if len(rates[(run, who)]) == round_no]
            print(f"  round {round_no}: {name} at {conns}: "
                  + ", ".join(f"{who} {rates[(run, who)][-1]:,.0f}" for who in measured),
                  flush=True)
        # The access log's cost: the same server at info (a line per
        # request, written to a file) and at warn.
        with open(log_path, "w") as log:
            servers = [(level, Running(SERVER, ["--log-level", level], log=log))
                       for level in ("info", "warn")]
            for _, server in servers:
                server.seed()
            for level, rate in interleaved(servers, scripts["GET one"], 64, duration).items():
                log_rates[level].append(rate)
            for _, server in servers:
                server.stop()
        print(f"  round {round_no}: access log: info {log_rates['info'][-1]:,.0f}, "
              f"warn {log_rates['warn'][-1]:,.0f}", flush=True)

    # Durable writes (--data, default workers): POST at 16 connections with
    # 200 and with 100,000 todos stored, and start-up with 100,000.
    fixtures = {}
    for count in (STORED, 100_000):
        fixtures[count] = os.path.join(workdir, f"fixture-{count}.json")
        fixture(fixtures[count], count)
    durable = {count: [] for count in fixtures}
    for _ in range(rounds):
        for count, source in fixtures.items():
            data = fresh_data(workdir, source)
            server = Running(SERVER, ["--log-level", "warn", "--data", data], threads=None)
            durable[count].append(wrk(server.url, scripts["POST"], 16, duration))
            server.stop()
    # List queries over big stores: a page, and a filter matching a third.
    query_paths = {"`?_page=50&_limit=20`": "/api/todos?_page=50&_limit=20",
                   "`?userId=3`": "/api/todos?userId=3"}
    query_rates = {(label, count): [] for label in query_paths for count in (10_000, 100_000)}
    fixtures[10_000] = os.path.join(workdir, "fixture-10000.json")
    fixture(fixtures[10_000], 10_000)
    for label, path in query_paths.items():
        script = os.path.join(workdir, re.sub(r"\W+", "_", label) + ".lua")
        with open(script, "w") as f:
            f.write(f'wrk.method = "GET"\nwrk.path = "{path}"\n')
        scripts[label] = script
    for _ in range(rounds):
        for count in (10_000, 100_000):
            data = fresh_data(workdir, fixtures[count])
            server = Running(SERVER, ["--log-level", "warn", "--data", data])
            for label in query_paths:
                query_rates[(label, count)].append(wrk(server.url, scripts[label], 16, duration))
            server.stop()

    # One item in a big store: GET one and PUT (in memory) with 200 and
    # with 100,000 todos stored.
    sizes = (STORED, 100_000)
    big = {(name, count): [] for name in ("GET one", "PUT") for count in sizes}
    stored_rss = {count: [] for count in sizes}  # kB, right after seeding
    for _ in range(rounds):
        for count in sizes:
            server = Running(SERVER, ["--log-level", "warn"])
            server.seed(count)
            stored_rss[count].append(server.status("VmRSS"))
            for name in ("GET one", "PUT"):
                big[(name, count)].append(wrk(server.url, scripts[name], 16, duration))
            server.stop()

    delay_took, undelayed = delay_check()
    feed = {kind: subscribed_posts(SERVER, scripts["POST"], rounds, duration, target)
            for kind, target in FEED_RUNS}

    durable_starts = []
    for _ in range(startups):
        data = fresh_data(workdir, fixtures[100_000])
        durable_starts.append(startup_time(SERVER, ["--data", data]))
    print(f"  durable POST: {', '.join(f'{c}: {fmt_rate(r)}' for c, r in durable.items())}",
          flush=True)

    memory = {}
    for who, binary in (("baseline", BASELINE), ("server", SERVER)):
        server = Running(binary, ["--log-level", "warn"])
        if who == "server":
            server.seed()
        time.sleep(0.5)
        idle = server.status("VmRSS")
        wrk(server.url, scripts["GET one"], 256, duration)
        peak = server.status("VmHWM")
        server.stop()
        starts = [startup_time(binary) for _ in range(startups)]
        memory[who] = (idle, peak, os.path.getsize(binary), statistics.median(starts))
    if args.peer:
        peer = Peer(workdir)
        time.sleep(0.5)
        idle = peer.status("VmRSS")
        peer.stop()
        starts = [startup(lambda port: peer_command(workdir, port), path="/todos")
                  for _ in range(startups)]
        memory["peer"] = (idle, statistics.median(starts))

    print()
    peer_head = " | json-server req/s | widgets-todos / json-server |" if args.peer else " |"
    print("| scenario | conns | baseline req/s, median (min-max) "
          "| widgets-todos req/s, median (min-max) | ratio, median of rounds (min-max) "
          "| layer alone: ratio | minimal store: ratio" + peer_head)
    print("|---|---|---|---|---|---|---|" + ("---|---|" if args.peer else ""))
    for run in runs:
        name, conns = run
        base, layer, minimal, real, peer = (rates[(run, who)] for who in measures)
        peer_cells = ""
        if args.peer:
            peer_cells = (f" {fmt_rate(peer)} | {paired_ratio(real, peer)} |" if peer
                          else " | |")
        print(f"| {name} | {conns} | {fmt_rate(base)} | {fmt_rate(real)} "
              f"| {paired_ratio(real, base)} | {paired_ratio(layer, base)} "
              f"| {paired_ratio(minimal, base)} |" + peer_cells)
    info, warn = log_rates["info"], log_rates["warn"]
    print(f"| GET one, `--log-level info` vs `warn` | 64 | {fmt_rate(warn)} (warn) "
          f"| {fmt_rate(info)} (info) | {paired_ratio(info, warn)} | | |"
          + (" | |" if args.peer else ""))
    for kind, target in FEED_RUNS:
        none, subscribed = feed[kind]["none"], feed[kind]["subscribed"]
        print(f"| POST, 64 {kind} subscribers (`{target}`) vs none | 16 | {fmt_rate(none)} (none) "
              f"| {fmt_rate(subscribed)} (64 subscribers) | {paired_ratio(subscribed, none)} | | |"
              + (" | |" if args.peer else ""))
    print()
    p = memory.get("peer")
    print("| | baseline | widgets-todos |" + (" json-server |" if p else ""))
    print("|---|---|---|" + ("---|" if p else ""))
    b, s = memory["baseline"], memory["server"]
    print(f"| idle RSS | {b[0] / 1024:.1f} MB | {s[0] / 1024:.1f} MB (200 todos) |"
          + (f" {p[0] / 1024:.1f} MB (200 todos) |" if p else ""))
    print(f"| peak RSS, 256 connections | {b[1] / 1024:.1f} MB | {s[1] / 1024:.1f} MB |"
          + (" |" if p else ""))
    print(f"| binary size (stripped) | {b[2]:,} B | {s[2]:,} B |" + (" |" if p else ""))
    print(f"| start-up, exec to first 200 (median of {startups}) "
          f"| {b[3] * 1000:.1f} ms | {s[3] * 1000:.1f} ms |"
          + (f" {p[1] * 1000:.0f} ms |" if p else ""))
    small_rss, big_rss = (statistics.median(stored_rss[count]) for count in sizes)
    per_todo = (big_rss - small_rss) * 1024 / (sizes[1] - sizes[0])
    print(f"| RSS with {sizes[1]:,} todos stored (in memory) | | {big_rss / 1024:.1f} MB "
          f"({per_todo:.0f} B per todo) |")
    print()
    print("| `--data` (durable, default workers) | widgets-todos |")
    print("|---|---|")
    for count in (STORED, 100_000):
        rates_ = durable[count]
        print(f"| POST, 16 conns, {count:,} todos stored | {fmt_rate(rates_)} req/s |")
    print(f"| start-up with 100,000 todos, exec to first 200 (median of {startups}) "
          f"| {statistics.median(durable_starts) * 1000:.0f} ms |")
    print()
    print("| one item, 16 conns, in memory | 200 todos | 100,000 todos | ratio |")
    print("|---|---|---|---|")
    for name in ("GET one", "PUT"):
        small, large = big[(name, STORED)], big[(name, 100_000)]
        print(f"| {name} | {fmt_rate(small)} | {fmt_rate(large)} "
              f"| {paired_ratio(large, small)} |")
    print()
    print(f"Latency simulation, 2 workers: 100 concurrent GETs with `_delay=1000` all "
          f"finished in {delay_took:.2f} s; 20 undelayed GETs sent meanwhile took "
          f"{statistics.median(undelayed):.2f} ms (median; {max(undelayed):.2f} ms at most).")
    print()
    print("| list query, 16 conns | 10,000 todos | 100,000 todos |")
    print("|---|---|---|")
    for label in query_paths:
        print(f"| GET {label} | {fmt_rate(query_rates[(label, 10_000)])} "
              f"| {fmt_rate(query_rates[(label, 100_000)])} |")


if __name__ == "__main__":
    main()
