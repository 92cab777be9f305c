#!/usr/bin/env python3
"""Abuse suite: hostile and broken clients against the release binary.

    python3 scripts/abuse.py [--binary target/release/widgets-todos] [--quick]

Starts the server on 127.0.0.1 with a short read and write timeout, runs
each attack, and after each one proves that a normal client is still served
within a second. Prints, per attack, what was sent and the server's RSS,
thread and descriptor counts before, during and after. Exits non-zero on the
first failed check. Every loop is bounded in count and time; all traffic
goes to 127.0.0.1. Standard library only. Clients that never read,
requests of every framing and refused bodies are in abuse_turns.py.
"""

import argparse
import os
import resource
import socket
import subprocess
import sys
import threading
import time

import abuse_turns

READ_TIMEOUT = 2  # seconds, passed to the server
HOST = "127.0.0.1"
results = []
rss_misses = []
known_gaps = []


def fail(message):
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


class Server:
    def __init__(self, binary, extra=(), nofile=None, capture_stderr=False, defaults=False):
        """`defaults`: the server's own settings, not this suite's short
        timeouts and two workers."""
        def limit():
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        ours = [] if defaults else ["--threads", "2", "--read-timeout", str(READ_TIMEOUT),
                                    "--write-timeout", str(READ_TIMEOUT)]
        args = [binary, "--host", HOST, "--port", "0", *ours, "--log-level", "warn", *extra]
        self.stderr = subprocess.PIPE if capture_stderr else subprocess.DEVNULL
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.stderr,
                                     preexec_fn=limit)
        line = self.proc.stdout.readline().decode()
        if not line.startswith("listening on http://"):
            fail(f"server did not start: {line!r}")
        host, port = line.strip().rsplit("/", 1)[1].rsplit(":", 1)
        self.addr = (host, int(port))

    def stats(self):
        status = {}
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                status[key] = value.strip()
        fds = len(os.listdir(f"/proc/{self.proc.pid}/fd"))
        return {"rss_kb": int(status["VmRSS"].split()[0]), "threads": int(status["Threads"]), "fds": fds}

    def nofile(self):
        with open(f"/proc/{self.proc.pid}/limits") as f:
            for line in f:
                if line.startswith("Max open files"):
                    return int(line.split()[3])
        return 1024

    def stderr_tail(self):
        """The last line the server wrote to stderr (after it exited)."""
        lines = self.proc.stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self.proc.terminate()
        try:
            return self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("server did not exit within 10 s of SIGTERM")


def connect(server, timeout=5.0):
    s = socket.create_connection(server.addr, timeout=timeout)
    s.settimeout(timeout)
    return s


def exchange(server, raw, timeout=5.0):
    """Sends raw bytes on a new connection; returns all bytes until close or timeout."""
    s = connect(server, timeout)
    try:
        s.sendall(raw)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
        return data
    finally:
        s.close()


def normal_get(server, path="/api/todos"):
    """A normal client must be served within a second."""
    started = time.monotonic()
    try:
        reply = exchange(server, f"GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode(), 1.0)
    except OSError as err:
        fail(f"normal GET failed: {err}")
    took = time.monotonic() - started
    if not reply.startswith(b"HTTP/1.1 200") or took > 1.0:
        fail(f"normal GET not served within 1 s (took {took:.2f}s): {reply[:80]!r}")
    return took


def settle(server, idle, limit=20.0):
    """Waits until threads are within 20% of `idle` (bounded by `limit`),
    then up to 2 s more for RSS to be."""
    deadline = time.monotonic() + limit
    while True:
        now = server.stats()
        if now["threads"] <= idle["threads"] * 1.2 + 1 or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    deadline = time.monotonic() + 2
    while now["rss_kb"] > idle["rss_kb"] * 1.2 and time.monotonic() < deadline:
        time.sleep(0.25)
        now = server.stats()
    return now


def report(name, sent, before, during, after, note=""):
    fmt = lambda s: f"{s['rss_kb'] / 1024:.1f}MB/{s['threads']}t/{s['fds']}fd"
    line = f"{name:<34} {sent:<28} {fmt(before):>18} {fmt(during):>18} {fmt(after):>18}  {note}"
    results.append(line)
    print(line, flush=True)


def check_recovered(server, idle, name):
    after = settle(server, idle)
    if after["threads"] > idle["threads"] * 1.2 + 1:
        fail(f"{name}: threads stayed at {after['threads']} (idle {idle['threads']})")
    if after["rss_kb"] > idle["rss_kb"] * 1.2:
        # A known gap, left open: glibc keeps freed per-thread
        # arena memory, so RSS does not return to idle. Reported, not failed.
        rss_misses.append(f"{name}: {after['rss_kb']} kB vs idle {idle['rss_kb']} kB")
    normal_get(server)
    return after


# ---------------------------------------------------------------- attacks


def half_open(server, idle, count):
    """`count` connections send half a request line, then nothing."""
    socks = []
    for _ in range(count):
        s = connect(server)
        s.sendall(b"GET /api HT")
        socks.append(s)
    time.sleep(0.5)
    during = server.stats()
    normal_get(server)
    started = time.monotonic()
    closed = 0
    deadline = started + READ_TIMEOUT + 5
    for s in socks:
        s.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            while s.recv(4096):
                pass
            closed += 1
        except (socket.timeout, ConnectionResetError):
            closed += isinstance(sys.exc_info()[1], ConnectionResetError)
        s.close()
    took = time.monotonic() - started
    if closed != count:
        fail(f"half-open: only {closed} of {count} closed by the server within {READ_TIMEOUT + 5}s")
    after = check_recovered(server, idle, "half-open")
    report("half-open request lines", f"{count} conns", idle, during, after,
           f"all closed by the server {took:.1f}s after the read timeout started")


def slow_bodies(server, idle, count=4):
    """Clients announce a 60 kB body (under the 64 KiB cap) and send 10 bytes."""
    socks = []
    for _ in range(count):
        s = connect(server)
        s.sendall(b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 60000\r\n\r\n{\"userId\":")
        socks.append(s)
    time.sleep(0.3)
    during = server.stats()
    took = normal_get(server)
    answered = 0
    for s in socks:
        s.settimeout(READ_TIMEOUT + 5)
        try:
            if s.recv(4096).startswith(b"HTTP/1.1 408"):
                answered += 1
        except OSError:
            pass
        s.close()
    after = check_recovered(server, idle, "slow bodies")
    report("slow request bodies", f"{count} x 10 of 60000 B", idle, during, after,
           f"normal GET in {took * 1000:.0f} ms; {answered}/{count} got 408")


def non_reader(server, idle, total):
    """One client pipelines GETs and never reads a response."""
    s = connect(server, timeout=READ_TIMEOUT + 5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    request = b"GET /api/todos HTTP/1.1\r\nHost: t\r\n\r\n"
    sent = 0
    stop_at = time.monotonic() + 10
    try:
        batch = request * 1000
        while sent < total and time.monotonic() < stop_at:
            s.sendall(batch)
            sent += 1000
    except OSError:
        pass  # the server stopped reading or closed: what we want
    during = server.stats()
    took = normal_get(server)
    s.close()
    after = check_recovered(server, idle, "non-reader")
    report("pipelining, never reading", f"{sent} GETs sent", idle, during, after,
           f"normal GET in {took * 1000:.0f} ms")


def framing(server, idle):
    """Ambiguous framing gets 400 and nothing after it is served."""
    smuggled = b"POST /api/widgets HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 32\r\n\r\n{\"price\": \"1\", \"quality\": \"bad\"}"
    cases = {
        "two Content-Length": b"Content-Length: 0\r\nContent-Length: %d\r\n" % len(smuggled),
        "Content-Length abc": b"Content-Length: abc\r\n",
        "Content-Length -1": b"Content-Length: -1\r\n",
        "Content-Length +5": b"Content-Length: +5\r\n",
        "two Transfer-Encoding": b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
        "CL and TE": b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        "TE gzip only": b"Transfer-Encoding: gzip\r\n",
    }
    before = server.stats()
    for name, headers in cases.items():
        raw = b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n" + headers + b"\r\n" + smuggled
        reply = exchange(server, raw, READ_TIMEOUT + 3)
        if not reply.startswith(b"HTTP/1.1 400"):
            fail(f"framing {name}: expected 400, got {reply[:60]!r}")
        # Nothing after our 400 may be served. tiny_http itself writes a
        # bodiless 400 when the condemned connection's read times out.
        statuses = [part[:3] for part in reply.split(b"HTTP/1.1 ")[1:]]
        if any(status != b"400" for status in statuses):
            fail(f"framing {name}: something after the 400 was served: {reply!r}")
    listing = exchange(server, b"GET /api/widgets HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    if b'"bad"' in listing:
        fail("a request smuggled in a body was served")
    after = check_recovered(server, idle, "framing")
    report("ambiguous framing + smuggling", f"{len(cases)} requests", idle, before, after, "all 400, nothing smuggled")


def post_json(body):
    head = b"POST /api/todos HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\n"
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body


def odd_inputs(server, idle):
    """Inputs that must not crash anything; each gets an answer or a close."""
    big_number = b"1" * 60000
    cases = [
        ("Content-Length 99999999999", b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n", b"413"),
        ("Content-Length u64::MAX", b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 18446744073709551615\r\n\r\n", b"413"),
        ("Content-Length 2^64", b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 18446744073709551616\r\n\r\n", None),
        ("NUL in a header", b"GET /api HTTP/1.1\r\nHost: t\r\nX-A: a\x00b\r\n\r\n", None),
        ("non-ASCII header", b"GET /api HTTP/1.1\r\nHost: t\r\nX-A: \xc3\xa9\xff\r\n\r\n", None),
        ("100 kB header value", b"GET /api HTTP/1.1\r\nHost: t\r\nConnection: close\r\nX-A: " + b"a" * 100_000 + b"\r\n\r\n", None),
        ("10,000 headers", b"GET /api HTTP/1.1\r\nHost: t\r\nConnection: close\r\n" + b"X-A: b\r\n" * 10_000 + b"\r\n", None),
        ("deeply nested JSON", post_json(b"{\"a\": " + b"[" * 50000 + b"}"), b"400"),
        # Well-formed JSON, an integer far out of range: 422, read from its
        # text without a float (docs/api.md, "Request bodies", Integers).
        ("60 kB JSON number", post_json(b"{\"userId\": " + big_number + b", \"title\": \"t\"}"), b"422"),
        ("1 MB JSON number", post_json(b"{\"userId\": " + b"1" * 1_000_000 + b"}"), b"413"),
        ("garbage bytes", bytes(range(256)) * 4 + b"\r\n\r\n", None),
    ]
    before = server.stats()
    peak = before
    for name, raw, expected in cases:
        started = time.monotonic()
        try:
            reply = exchange(server, raw, READ_TIMEOUT + 3)
        except OSError:
            reply = b""
        took = time.monotonic() - started
        status = reply[9:12]
        if expected and status != expected:
            fail(f"{name}: expected {expected.decode()}, got {reply[:80]!r}")
        if took > READ_TIMEOUT + 2.5:
            fail(f"{name}: no answer and no close within the read timeout")
        if not server.alive():
            fail(f"{name}: the server died")
        peak = max(peak, server.stats(), key=lambda s: s["rss_kb"])
        normal_get(server)
        print(f"  {name:<28} -> {status.decode() or 'closed':<6} in {took:.2f}s", flush=True)
    after = check_recovered(server, idle, "odd inputs")
    report("odd and oversized inputs", f"{len(cases)} requests", idle, peak, after, "no crash; each answered or closed")


def trickled_head(server, idle, count=3):
    """Clients that send their request head a byte at a time, each byte
    within the read timeout.

    A known gap, reported and not failed: the
    read timeout bounds each read, not the whole head, and tiny_http reads
    the head with no deadline of its own and does not hand out its sockets
    for us to close. Such a connection lasts as long as the client keeps
    trickling; it costs a thread and two descriptors, like an idle one.
    """
    socks = [connect(server) for _ in range(count)]
    head = b"GET /api/todos HTTP/1.1\r\nHost: t\r\n\r\n"
    started = time.monotonic()
    step = READ_TIMEOUT * 0.7
    sent = 0
    open_ = count
    while time.monotonic() - started < READ_TIMEOUT * 3 and sent < len(head) - 2:
        open_ = 0
        for s in socks:
            try:
                s.sendall(head[sent:sent + 1])
                open_ += 1
            except OSError:
                pass
        sent += 1
        time.sleep(step)
    lasted = time.monotonic() - started
    during = server.stats()
    took = normal_get(server)
    for s in socks:
        s.close()
    after = check_recovered(server, idle, "trickled head")
    if open_:
        known_gaps.append(f"trickled head: {open_} of {count} connections still open after "
                          f"{lasted:.0f}s, three times the read timeout: it bounds each read, "
                          "not the whole request head")
    report("trickled request head", f"{count} conns, {sent} B each", idle, during, after,
           f"normal GET in {took * 1000:.0f} ms; {open_} still open")


def http2_preface(server, idle):
    """`curl --http2-prior-knowledge`'s first bytes.

    A known gap, reported and not failed:
    tiny_http deadlocks writing its own 505, because the connection thread
    waits for the writer of the request it still holds. That thread and its
    two descriptors are never freed. Returns the idle figures raised by the
    leak, for the checks that follow.
    """
    before = server.stats()
    started = time.monotonic()
    try:
        reply = exchange(server, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", READ_TIMEOUT + 3)
    except OSError:
        reply = b""
    took = time.monotonic() - started
    normal_get(server)
    time.sleep(0.5)
    after = server.stats()
    leaked = {"threads": after["threads"] - before["threads"], "fds": after["fds"] - before["fds"]}
    if took > READ_TIMEOUT + 2.5 or leaked["threads"] > 0:
        known_gaps.append(f"HTTP/2 preface: {'no answer and no close' if took > READ_TIMEOUT + 2.5 else 'answered'}"
                          f" in {took:.1f}s; leaked {leaked['threads']} thread(s) and {leaked['fds']} "
                          "descriptor(s): tiny_http deadlocks writing its 505")
    report("HTTP/2 preface", "1 conn", idle, before, after,
           f"{reply[:12].decode(errors='replace') or 'closed'} after {took:.1f}s")
    raised = dict(idle)
    raised["threads"] += max(0, leaked["threads"])
    raised["fds"] += max(0, leaked["fds"])
    return raised


def burst(server, idle, trials, seconds, conns=64):
    """`conns` keep-alive connections at once, each then sending back to back.

    Every connection must get its first response within 1 s, in every trial.
    """
    worst = 0.0
    request = b"GET /api HTTP/1.1\r\nHost: t\r\n\r\n"
    for trial in range(trials):
        firsts = []
        errors = []
        go = threading.Barrier(conns)

        def client():
            try:
                s = connect(server, timeout=seconds + 5)
                go.wait(timeout=10)
                start = time.monotonic()
                first = None
                buf = b""
                end = start + seconds
                while time.monotonic() < end:
                    s.sendall(request)
                    while b"\r\n\r\n" not in buf or len(buf) < buf.index(b"\r\n\r\n") + 4 + 47:
                        chunk = s.recv(4096)
                        if not chunk:
                            raise OSError("closed")
                        buf += chunk
                    buf = buf[buf.index(b"\r\n\r\n") + 4 + 47:]
                    if first is None:
                        first = time.monotonic() - start
                firsts.append(first)
                s.close()
            except Exception as err:  # noqa: BLE001 - any failure fails the trial
                errors.append(repr(err))

        threads = [threading.Thread(target=client) for _ in range(conns)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(seconds + 20)
        if errors or len(firsts) != conns:
            fail(f"burst trial {trial + 1}: {len(firsts)}/{conns} ok, errors {errors[:3]}")
        slowest = max(firsts)
        worst = max(worst, slowest)
        if slowest > 1.0:
            fail(f"burst trial {trial + 1}: a connection waited {slowest:.2f}s for its first response")
    during = server.stats()
    after = check_recovered(server, idle, "burst")
    report("keep-alive burst", f"{trials} x {conns} conns x {seconds}s", idle, during, after,
           f"slowest first response {worst * 1000:.0f} ms")


def descriptor_exhaustion(binary):
    """Under a 64-descriptor limit, a flood of connections, then recovery."""
    server = Server(binary, nofile=64)
    try:
        idle = server.stats()
        flood = []
        for _ in range(100):
            try:
                flood.append(connect(server, timeout=1))
            except OSError:
                break
        time.sleep(0.5)
        during = server.stats()
        for s in flood:
            s.close()
        ended = time.monotonic()
        deadline = ended + READ_TIMEOUT + 15
        while True:
            try:
                reply = exchange(server, b"GET /api HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", 1.0)
            except OSError:
                reply = b""
            if reply.startswith(b"HTTP/1.1 200"):
                break
            if time.monotonic() > deadline or not server.alive():
                fail(f"not accepting again {READ_TIMEOUT + 15}s after the flood ended")
            time.sleep(0.05)
        took = time.monotonic() - ended
        after = server.stats()
        report("descriptor exhaustion (nofile 64)", f"{len(flood)} conns", idle, during, after,
               f"accepting again {took:.2f}s after the flood ended")
    finally:
        server.stop()


def http2_flood(binary, count, read_timeout=None):
    """`count` connections, each sending an `HTTP/2.0` request line and
    closing, as fast as 64 clients can.

    tiny_http deadlocks a connection thread for good on each such line, so
    the server cannot stay healthy: the check is that it is never alive and
    deaf for longer than the bound of docs/limits.md. Throughout and afterwards,
    either a normal GET is answered within 1 s, or the server has exited
    with status 1 and its reason, within the bound of the moment it first
    failed to answer; and its descriptors never exceed the cap's two per
    connection plus a small constant.
    """
    """With `read_timeout` None, the server runs on its default settings."""
    if read_timeout is None:
        server = Server(binary, capture_stderr=True, defaults=True)
        read_timeout = 30
    else:
        server = Server(binary, capture_stderr=True)
    # the bound of docs/limits.md (transport/accept.rs, deaf_limit): read timeout, the stuck
    # margin and the stuck period (each at most 10 s), two one-second ticks.
    bound = read_timeout + 2 * min(read_timeout, 10) + 2
    cap = min(1024, (server.nofile() - 32) // 2)
    most_fds = 2 * cap + 16
    idle = server.stats()
    sent = [0]
    refused = [0]
    stop = threading.Event()

    def attacker():
        while not stop.is_set():
            with lock:
                if sent[0] >= count:
                    return
                sent[0] += 1
            try:
                s = socket.create_connection(server.addr, timeout=1)
                s.sendall(b"GET /healthz HTTP/2.0\r\nHost: t\r\n\r\n")
                s.close()
            except OSError:
                refused[0] += 1

    lock = threading.Lock()
    attackers = [threading.Thread(target=attacker) for _ in range(64)]
    started = time.monotonic()
    for t in attackers:
        t.start()
    deaf_since = None
    exited_at = None
    worst_fds = idle["fds"]
    try:
        while True:
            if not server.alive():
                exited_at = time.monotonic()
                break
            try:
                worst_fds = max(worst_fds, server.stats()["fds"])
            except (OSError, KeyError):  # exiting: its /proc entry is going
                exited_at = time.monotonic()
                break
            if worst_fds > most_fds:
                fail(f"HTTP/2 flood: {worst_fds} descriptors, over 2 x {cap} + 16")
            try:
                reply = exchange(server, b"GET /api HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", 1.0)
            except OSError:
                reply = b""
            now = time.monotonic()
            if reply.startswith(b"HTTP/1.1 200"):
                deaf_since = None
            elif server.alive():
                deaf_since = deaf_since or now
                if now - deaf_since > bound:
                    fail(f"HTTP/2 flood: alive but deaf for {now - deaf_since:.0f}s, over the bound of {bound}s")
            if sent[0] >= count and deaf_since is None and now - started > 2:
                break
            time.sleep(0.2)
    finally:
        if server.alive():
            stop.set()
        # Once the server has exited, the rest of the lines are refused at
        # once: send them all, as the attack would.
        for t in attackers:
            t.join(60)
        stop.set()
    if server.alive():
        during = server.stats()
        note = f"alive and serving after {sent[0]} lines ({refused[0]} not connected)"
        server.proc.kill()
    else:
        code = server.proc.wait()
        reason = server.stderr_tail()
        if code != 1 or "stuck" not in reason:
            fail(f"HTTP/2 flood: exited {code}, last line {reason!r}")
        during = {"rss_kb": 0, "threads": 0, "fds": worst_fds}
        deaf = exited_at - deaf_since if deaf_since else 0
        note = (f"exited 1 after {exited_at - started:.0f}s, {deaf:.0f}s after it first failed "
                f"to answer (bound {bound}s): {reason[:60]}...")
    report("HTTP/2 request lines (flood)", f"{sent[0]} conns, cap {cap}", idle, during,
           {"rss_kb": 0, "threads": 0, "fds": worst_fds}, note + f"; most descriptors {worst_fds}")


# ------------------------------------------------------- the request log


def status_kb(server, key):
    with open(f"/proc/{server.proc.pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def next_link(link):
    """The target of `rel="next"` in a `Link` value (RFC 8288), or None."""
    for part in (link or "").split(","):
        target, _, params = part.partition(";")
        if 'rel="next"' in params:
            return target.strip().strip("<>")
    return None


def read_log(server, errors, pages_seen, first=None):
    """Walks `GET /_admin/requests` page by page, following `Link: rel="next"`;
    returns the seqs listed, in order. Every page must be complete JSON."""
    import http.client
    import json
    conn = http.client.HTTPConnection(*server.addr, timeout=120)
    target, seqs, total = "/_admin/requests", [], None
    try:
        for _ in range(10_000):
            conn.request("GET", target)
            response = conn.getresponse()
            body = response.read()
            if response.status != 200:
                raise ValueError(f"{target}: {response.status} {body[:200]!r}")
            page = json.loads(body)  # complete and valid JSON, or it raises
            if not isinstance(page, list):
                raise ValueError(f"{target}: not an array")
            if total is None:
                total = int(response.getheader("X-Total-Count"))
            seqs += [entry["seq"] for entry in page]
            pages_seen.append(len(body))
            target = next_link(response.getheader("Link"))
            if target is None:
                break
    except Exception as err:  # noqa: BLE001 - reported as the check's failure
        errors.append(repr(err)[:300])
    finally:
        conn.close()
    return seqs, total


def request_log_listing(binary, quick, full):
    """The request log's memory: `--record 100000`, then POSTs of 64 KiB bodies of the
    byte 0x01 (each 400, each recorded; each such byte is six in JSON,
    `\\u0001`), then 4 readers at once each walking the whole listing.

    The server's peak resident size (VmHWM) must stay under the ceiling and
    every page must be complete JSON, the pages together listing every
    entry once, newest first. The issue's scenario (1,100 bodies, a
    200 MB ceiling) runs with --m1-full; CI (--quick) runs 200 bodies
    against a 120 MB ceiling (79 MB measured), which a listing built whole
    (six times the log, four times over: 616 MB) exceeds five times.
    """
    import http.client
    posts, ceiling_mb = (1_100, 200) if full else ((200, 120) if quick else (400, 150))
    readers = 4
    server = Server(binary, defaults=True,
                    extra=["--record", "100000", "--threads", str(readers)])
    try:
        idle = server.stats()
        body = b"\x01" * 65_536
        conn = http.client.HTTPConnection(*server.addr, timeout=30)
        for _ in range(posts):
            conn.request("POST", "/api/todos", body, {"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            if response.status != 400:
                fail(f"request log: a POST of 64 KiB of 0x01 got {response.status}, not 400")
        conn.close()
        logged = server.stats()
        before_kb = status_kb(server, "VmHWM")
        # HEAD builds no more than GET: the same Content-Length as the first page.
        conn = http.client.HTTPConnection(*server.addr, timeout=120)
        conn.request("HEAD", "/_admin/requests")
        head = conn.getresponse()
        head.read()
        conn.close()
        errors, pages, results_ = [], [], [None] * readers

        def reader(i):
            results_[i] = read_log(server, errors, pages)

        started = time.monotonic()
        threads = [threading.Thread(target=reader, args=(i,)) for i in range(readers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        took = time.monotonic() - started
        peak_kb = status_kb(server, "VmHWM")
        during = server.stats()
        during["rss_kb"] = peak_kb
        if errors:
            fail(f"request log: a listing failed: {errors[0]}")
        for seqs, total in results_:
            if seqs != sorted(set(seqs), reverse=True) or len(seqs) != total:
                fail(f"request log: a walk listed {len(seqs)} entries of {total}, "
                     f"or not each once newest first")
        first_page = max(pages)
        if head.status != 200 or int(head.getheader("Content-Length", "0")) > first_page:
            fail(f"request log: HEAD answered {head.status} with Content-Length "
                 f"{head.getheader('Content-Length')}, more than the largest page, {first_page} B")
        if peak_kb > ceiling_mb * 1024:
            fail(f"request log: peak RSS {peak_kb / 1024:.0f} MB with {readers} readers "
                 f"(log of {posts} bodies; {logged['rss_kb'] / 1024:.0f} MB before them), "
                 f"over {ceiling_mb} MB")
        total = results_[0][1]
        normal_get(server)
        report("request log, 4 readers", f"{posts} x 64 KiB of 0x01", idle, logged, during,
               f"{total} entries in {len(pages) // readers} pages of at most "
               f"{first_page / 2**20:.1f} MiB each, walked in {took:.1f}s; peak RSS "
               f"{peak_kb / 1024:.0f} MB (before listing {before_kb / 1024:.0f} MB, ceiling {ceiling_mb} MB)")
    finally:
        server.stop()


# ------------------------------------------- refused bodies and the log

# This server's reason phrases (RFC 9110 section 15), for the statuses the
# checks below provoke.
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 413: "Content Too Large",
           415: "Unsupported Media Type"}


def parse_responses(data):
    """The responses in `data`, in order, as (status line, {lowercased
    name: value}, body); stops at the first one cut short."""
    found = []
    while b"\r\n\r\n" in data:
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        fields = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        length = int(fields.get("content-length", "0"))
        if len(rest) < length:
            break
        found.append((lines[0], fields, rest[:length]))
        data = rest[length:]
    return found


def send_and_read(server, raw, timeout):
    """Sends `raw` from another thread (the server may stop reading, as a
    client's body goes on) and reads until close, reset or `timeout`.
    Returns the bytes read and how the reading ended."""
    s = connect(server, timeout)

    def sender():
        try:
            s.sendall(raw)
        except OSError:
            pass  # the server closed or reset: what is read tells
    t = threading.Thread(target=sender)
    t.start()
    data, ended = b"", "timeout"
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                ended = "close"
                break
            data += chunk
    except socket.timeout:
        pass
    except ConnectionResetError:
        ended = "reset"
    finally:
        s.close()
        t.join(5)
    return data, ended


def refused_bodies(server, idle):
    """A body refused unread, then a GET pipelined behind it.
    Either both are answered, or the refusal says `Connection: close` and
    the server closes after it; its status line has this server's reason
    phrase; and nothing behind it gets the HTTP library's bare 400. A body
    framed by Content-Length is answered on its head, by the library (its
    reason phrases, no Connection field), and the connection closes after
    the body (docs/limits.md)."""
    # `Connection: close`: the server closes once it has answered it.
    get = b"GET /api HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    chunk = b"x" * 2000
    cases = [
        ("2 KB text/plain POST", 415, True,
         b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\n"
         b"Content-Length: 2000\r\n\r\n" + chunk),
        ("PUT to a missing item", 404, True,
         b"PUT /api/todos/999 HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
         b"Content-Length: 2000\r\n\r\n" + b" " * 2000),
        ("413 from Content-Length", 413, True,
         b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
         b"Content-Length: 100000\r\n\r\n" + b" " * 100_000),
        ("chunked 415", 415, False,
         b"POST /api/todos HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\n"
         b"Transfer-Encoding: chunked\r\n\r\n7d0\r\n" + chunk + b"\r\n0\r\n\r\n"),
    ]
    before = server.stats()
    problems, notes = [], []
    library_reasons = {413: "Payload Too Large"}
    for name, status, library, raw in cases:
        data, ended = send_and_read(server, raw + get, READ_TIMEOUT + 3)
        responses = parse_responses(data)
        if not responses:
            problems.append(f"{name}: no response ({ended}): {data[:80]!r}")
            continue
        line, fields, _ = responses[0]
        reason = library_reasons.get(status, REASONS[status]) if library else REASONS[status]
        expected = f"HTTP/1.1 {status} {reason}"
        if line != expected:
            problems.append(f"{name}: status line {line!r}, not {expected!r}")
        says_close = "close" in fields.get("connection", "").lower()
        rest = responses[1:]
        for later, later_fields, body in rest:
            if later.startswith("HTTP/1.1 400") and not body:
                problems.append(f"{name}: the request behind it got a bare 400 "
                                f"(Server: {later_fields.get('server', '-')})")
        if rest and says_close:
            problems.append(f"{name}: said Connection: close, then answered {rest[0][0]!r}")
        if not rest:
            if ended == "timeout":
                problems.append(f"{name}: the request behind it was neither answered nor closed")
            elif not says_close and not library:
                problems.append(f"{name}: the connection was closed ({ended}) after a {status} "
                                "that did not say Connection: close")
        elif rest[0][0] != "HTTP/1.1 200 OK":
            problems.append(f"{name}: the request behind it got {rest[0][0]!r}")
        notes.append(f"{status} {'+ close' if not rest else '+ 200'}")
    if problems:
        fail("refused bodies: " + "; ".join(problems))
    after = check_recovered(server, idle, "refused bodies")
    report("bodies refused unread", f"{len(cases)} + a GET behind", idle, before, after,
           ", ".join(notes))


def access_log_controls(binary):
    """Control characters of a request line reach the access
    log only escaped: no byte below 0x20 but the line ends, and no DEL."""
    server = Server(binary, extra=["--log-level", "info"], capture_stderr=True)
    try:
        idle = server.stats()
        lines = [
            b"GET /api/todos\x1b[2J\x1b[31mX HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
            b"G\x1b[1mET /api HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
            b"GET /a\x08\x0b\x0c\x00\x7f\tb HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        ]
        for line in lines:
            exchange(server, line, READ_TIMEOUT + 3)
        normal_get(server)
        after = server.stats()
    finally:
        code = server.stop()
    log = server.proc.stderr.read()
    if code != 0:
        fail(f"access log: the server exited {code}")
    bad = sorted({b for b in log if (b < 0x20 and b != 0x0a) or b == 0x7f})
    if bad:
        shown = [line for line in log.split(b"\n") if any(b in line for b in bad)]
        fail(f"access log: control bytes {[hex(b) for b in bad]} written as sent: {shown[:2]!r}")
    if b"G\\x1b[1mET /api 405" not in log:
        fail(f"access log: no escaped line for the ESC in a method: {log[-400:]!r}")
    report("control bytes in request lines", f"{len(lines)} requests", idle, idle, after,
           "the access log shows them escaped (\\x1b)")


# ------------------------------------------------------- the change feed

LIVE = b"Accept: text/event-stream\r\n"


def subscribe(server, target="/api/events", rcvbuf=None):
    """A live subscriber to the feed, once it has read its head and opening
    lines (from then on every write is in its stream). `rcvbuf` shrinks
    its receive buffer, for a subscriber that will stop reading."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(5)
    s.connect(server.addr)
    s.sendall(f"GET {target} HTTP/1.1\r\nHost: t\r\n".encode() + LIVE + b"\r\n")
    data = b""
    # The opening lines end with a blank line, then the chunk's CR LF.
    while not (b"\r\n\r\n" in data and data.endswith((b"\n\n", b"\n\n\r\n"))):
        if b"\r\n\r\n" in data and not data.startswith(b"HTTP/1.1 200"):
            break
        chunk = s.recv(4096)
        if not chunk:
            fail(f"the feed closed before its opening lines: {data!r}")
        data += chunk
    if not data.startswith(b"HTTP/1.1 200"):
        fail(f"the feed answered {data[:60]!r}")
    return s


def patch_burst(server, count, body, batch=500):
    """PATCHes todo 1 `count` times, pipelined `batch` at a time on one
    keep-alive connection; the writes per second."""
    s = connect(server, timeout=30)
    request = (b"PATCH /api/todos/1 HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
               b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    started = time.monotonic()
    done = 0
    pending = b""
    while done < count:
        n = min(batch, count - done)
        s.sendall(request * n)
        answered = 0
        while answered < n:
            chunk = s.recv(1 << 20)
            if not chunk:
                fail(f"the writer's connection closed after {done + answered} writes")
            pending += chunk
            while (end := pending.find(b"\r\n\r\n")) >= 0:
                head = pending[:end]
                length = int(head.split(b"Content-Length: ", 1)[1].split(b"\r\n", 1)[0])
                if len(pending) < end + 4 + length:
                    break
                if not head.startswith(b"HTTP/1.1 200"):
                    fail(f"a write failed: {head[:40]!r}")
                pending = pending[end + 4 + length:]
                answered += 1
        done += n
    s.close()
    return count / (time.monotonic() - started)


class Sampler:
    """The server's highest RSS while a `with` block runs (every 50 ms)."""

    def __init__(self, server):
        self.server, self.peak, self.running = server, 0, True
        self.thread = threading.Thread(target=self.sample)

    def sample(self):
        while self.running and self.server.alive():
            self.peak = max(self.peak, self.server.stats()["rss_kb"])
            time.sleep(0.05)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.running = False
        self.thread.join()


def feed_non_reader(binary, writes, full):
    """A subscriber that never reads while `writes` writes are made.
    Two servers take the same writes, in turns of a tenth each, one with
    the stuck subscriber: their rates compare within one run, so that drift
    on a shared machine hits both alike. The writes are not slowed beyond
    the bench's bound (0.9 of the rate without; enforced at full scale
    only, a measurement for a quiet machine), the feed's memory stays
    within its bound (--events-kept events, each the item's JSON and about
    300 bytes), and the subscriber is disconnected with a log line."""
    kept = 1024
    flags = ["--events-kept", str(kept), "--max-subscribers", "1"]
    plain, server = Server(binary, extra=flags), Server(binary, extra=flags, capture_stderr=True)
    try:
        title = "x" * 1000  # the item's JSON: about 1.1 kB
        body = ('{"title": "%s"}' % title).encode()
        for each in (plain, server):
            created = exchange(each, post_json(('{"userId": 1, "title": "%s"}' % title).encode()), 5)
            if b" 201 " not in created.split(b"\r\n")[0]:
                fail(f"feed: cannot create the todo: {created[:80]!r}")
            patch_burst(each, min(writes, 2000), body)  # warm-up
        idle = server.stats()
        stuck = subscribe(server, rcvbuf=4096)
        times = {plain: 0.0, server: 0.0}
        with Sampler(server) as with_stuck:
            for turn in range(20):
                for each in ((plain, server) if turn % 2 == 0 else (server, plain)):
                    times[each] += (writes // 20) / patch_burst(each, writes // 20, body)
        during = server.stats()
        rate_alone, rate_stuck = writes / times[plain], writes / times[server]
        ratio = rate_stuck / rate_alone
        # What the feed may hold, and the subscriber's buffer of one write.
        bound_kb = kept * (1100 + 300) // 1024 + 128
        grew_kb = with_stuck.peak - idle["rss_kb"]
        if grew_kb > bound_kb + 4096:
            fail(f"feed: RSS grew {grew_kb} kB with a stuck subscriber (bound {bound_kb} kB + 4 MB of noise)")
        if full and ratio < 0.9:
            fail(f"feed: writes slowed to {ratio:.2f} of their rate with a stuck subscriber")
        # Its writes block for --write-timeout, then it is disconnected.
        deadline = time.monotonic() + READ_TIMEOUT + 10
        freed = False
        while time.monotonic() < deadline and not freed:
            time.sleep(0.2)
            probe = exchange(server, b"GET /api/events?_limit=0 HTTP/1.1\r\nHost: t\r\n" + LIVE
                             + b"\r\n", 2)
            freed = probe.startswith(b"HTTP/1.1 200")
        stuck.close()
        if not freed:
            fail("feed: the stuck subscriber still holds its place")
        after = server.stats()
        normal_get(server)
    finally:
        plain.stop()
        code = server.stop()
    log = server.proc.stderr.read().decode(errors="replace")
    if code != 0:
        fail(f"feed: the server exited {code}")
    said = [line for line in log.splitlines() if "subscriber to /api/events" in line]
    if not said:
        fail(f"feed: no log line for the disconnected subscriber: {log[-300:]!r}")
    report("feed: a subscriber never reads", f"{writes} writes x 1.1 kB", idle, during, after,
           f"{rate_alone:.0f} writes/s without, {rate_stuck:.0f} with it ({ratio:.2f}); peak RSS "
           f"+{grew_kb} kB (bound {bound_kb} kB); logged: {said[0].split('a subscriber', 1)[-1][:50]}")


def feed_sigterm(binary, count=64):
    """SIGTERM with `count` subscribers connected: every stream ends,
    and the server exits 0 within 1 s."""
    server = Server(binary, extra=["--max-subscribers", str(count)], defaults=True)
    try:
        idle = server.stats()
        subscribers = [subscribe(server) for _ in range(count)]
        during = server.stats()
        started = time.monotonic()
        server.proc.terminate()
        try:
            code = server.proc.wait(10)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            fail(f"feed: no exit within 10 s of SIGTERM with {count} subscribers")
        took = time.monotonic() - started
        ended = 0
        for s in subscribers:
            try:
                while s.recv(4096):
                    pass
                ended += 1
            except OSError:
                ended += 1
            s.close()
    finally:
        if server.alive():
            server.proc.kill()
    if code != 0 or took > 1.0:
        fail(f"feed: SIGTERM with {count} subscribers: exit {code} after {took:.2f} s")
    report("feed: SIGTERM, subscribers", f"{count} subscribers", idle, during, during,
           f"exit 0 in {took * 1000:.0f} ms; {ended}/{count} streams ended")


def feed_stalled_sigterm(binary, count=4, writes=3000):
    """SIGTERM with `count` subscribers that never read, after `writes`
    writes of 1.1 kB items (their streams blocked in a write): every stream
    ends at once, and the server exits 0 within 1 s."""
    server = Server(binary, defaults=True)
    try:
        idle = server.stats()
        title = "x" * 1000
        created = exchange(server, post_json(('{"userId": 1, "title": "%s"}' % title).encode()), 5)
        if b" 201 " not in created.split(b"\r\n")[0]:
            fail(f"feed: cannot create the todo: {created[:80]!r}")
        stalled = [subscribe(server, rcvbuf=4096) for _ in range(count)]
        patch_burst(server, writes, ('{"title": "%s"}' % title).encode())
        during = server.stats()
        started = time.monotonic()
        server.proc.terminate()
        try:
            code = server.proc.wait(10)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            fail(f"feed: no exit within 10 s of SIGTERM with {count} stalled subscribers")
        took = time.monotonic() - started
        for s in stalled:
            s.close()
    finally:
        if server.alive():
            server.proc.kill()
    if code != 0 or took > 1.0:
        fail(f"feed: SIGTERM with {count} stalled subscribers: exit {code} after {took:.2f} s")
    report("feed: SIGTERM, stalled streams", f"{count} never read, {writes} writes", idle, during,
           during, f"exit 0 in {took * 1000:.0f} ms")


def feed_left(binary, count=64, rounds=3):
    """`count` subscribers (every place) connect and leave at once, with no
    write since: a new subscriber is admitted within 1 s, `rounds` times."""
    server = Server(binary, extra=["--max-subscribers", str(count)], defaults=True)
    try:
        idle = server.stats()
        worst = 0.0
        for _ in range(rounds):
            gone = [subscribe(server) for _ in range(count)]
            during = server.stats()
            for s in gone:
                s.close()
            started = time.monotonic()
            newcomer = subscribe(server)
            worst = max(worst, time.monotonic() - started)
            newcomer.close()
        after = server.stats()
        if worst > 1.0:
            fail(f"feed: a newcomer waited {worst:.2f} s for places subscribers had left")
    finally:
        server.stop()
    report("feed: subscribers that left", f"{count} leave, x{rounds}", idle, during, after,
           f"a newcomer admitted within {worst * 1000:.0f} ms at worst")


def read_response(s):
    """The status of one response read from a keep-alive connection, its
    body skipped; None when the connection closed or failed."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, body = data.split(b"\r\n\r\n", 1)
        length = int(head.lower().split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
        while len(body) < length:
            chunk = s.recv(65536)
            if not chunk:
                return None
            body += chunk
        return int(head.split(b" ", 2)[1])
    except (OSError, ValueError, IndexError):
        return None


def idle_holders(binary, clients, flags, seconds=15.0, every=2.0, slow=0):
    """Keep-alive clients holding every place of the connection cap, each
    sending a request every `every` s (and connecting again when the server
    closes its connection), after `slow` clients that send a request head a
    byte a second, never ending it; meanwhile a new connection asks /healthz every
    0.5 s for `seconds`: at most one may fail (no 200 within 1 s)."""
    server = Server(binary, extra=flags, defaults=True)
    heads = [connect(server) for _ in range(slow)]
    for s in heads:
        s.sendall(b"GET /api HTTP/1.1\r\nHost: t\r\nX-Slow: ")
    request = b"GET /api HTTP/1.1\r\nHost: t\r\n\r\n"
    running = True
    reconnects = [0]

    def trickle():
        while running:
            for s in heads:
                try:
                    s.sendall(b"x")
                except OSError:
                    pass
            time.sleep(1.0)

    def holder(count):
        socks = [None] * count
        while running:
            round_started = time.monotonic()
            for i in range(count):
                if not running:
                    break
                try:
                    if socks[i] is None:
                        socks[i] = connect(server)
                    socks[i].sendall(request)
                    if read_response(socks[i]) == 200:
                        continue
                except OSError:
                    pass
                if socks[i] is not None:
                    socks[i].close()
                socks[i] = None
                reconnects[0] += 1
            time.sleep(max(0.0, every - (time.monotonic() - round_started)))
        for s in socks:
            if s is not None:
                s.close()

    try:
        idle = server.stats()
        groups = 8 if clients > 64 else 1
        threads = [threading.Thread(target=holder, args=(clients // groups,)) for _ in range(groups)]
        threads.append(threading.Thread(target=trickle))
        for t in threads:
            t.start()
        time.sleep(every + 1)
        during = server.stats()
        reconnects[0] = 0
        failures, worst, probes = 0, 0.0, 0
        ends = time.monotonic() + seconds
        while time.monotonic() < ends:
            started = time.monotonic()
            reply = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", 1.0)
            took = time.monotonic() - started
            probes += 1
            if not reply.startswith(b"HTTP/1.1 200"):
                failures += 1
            else:
                worst = max(worst, took)
            time.sleep(max(0.0, 0.5 - took))
        running = False
        for t in threads:
            t.join()
        after = server.stats()
        if failures > 1:
            fail(f"idle: {failures} of {probes} /healthz from new connections failed with "
                 f"{clients} keep-alive clients holding the cap")
    finally:
        running = False
        server.stop()
        for s in heads:
            s.close()
    held = f"{clients} clients" + (f", {slow} slow heads" if slow else "")
    report("idle: keep-alive holders at the cap", f"{held}, {' '.join(flags) or 'defaults'}",
           idle, during, after, f"{probes - failures}/{probes} /healthz answered (worst "
           f"{worst * 1000:.0f} ms); {reconnects[0]} holder reconnections")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default="target/release/widgets-todos")
    parser.add_argument("--quick", action="store_true", help="fewer connections and trials")
    parser.add_argument("--m1-full", action="store_true",
                        help="only the request log listing, at the issue's full scale (1,100 bodies)")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.m1_full:
        request_log_listing(args.binary, quick=False, full=True)
        print(f"abuse: {len(results)} passed, 0 failed", flush=True)
        return
    request_log_listing(args.binary, args.quick, full=False)
    access_log_controls(args.binary)
    abuse_turns.run(args.binary, args.quick, Server, report)
    feed_non_reader(args.binary, 20_000 if args.quick else 100_000, full=not args.quick)
    feed_sigterm(args.binary)
    feed_stalled_sigterm(args.binary)
    feed_left(args.binary)
    if args.quick:
        idle_holders(args.binary, 16, ["--max-connections", "16"])
    else:
        idle_holders(args.binary, 1024, [])
    idle_holders(args.binary, 11, ["--max-connections", "20", "--read-timeout", "2"], 10.0, 1.5, slow=9)

    server = Server(args.binary)
    try:
        normal_get(server)
        time.sleep(0.5)
        idle = server.stats()
        print(f"idle: {idle}", flush=True)
        print(f"{'attack':<34} {'sent':<28} {'before':>18} {'during':>18} {'after':>18}", flush=True)
        refused_bodies(server, idle)
        half_open(server, idle, 200 if args.quick else min(2000, hard // 2 - 100))
        slow_bodies(server, idle)
        non_reader(server, idle, 20_000 if args.quick else 200_000)
        framing(server, idle)
        odd_inputs(server, idle)
        burst(server, idle, 3 if args.quick else 20, 1 if args.quick else 5)
        trickled_head(server, idle)
        idle = http2_preface(server, idle)
        if server.stop() != 0:
            fail("the server did not exit 0 on SIGTERM after the attacks")
    finally:
        if server.alive():
            server.proc.kill()
    descriptor_exhaustion(args.binary)
    if args.quick:
        http2_flood(args.binary, 3000, READ_TIMEOUT)
    else:
        http2_flood(args.binary, 10_000)
    for gap in known_gaps:
        print(f"note: known gap: {gap}", flush=True)
    for miss in rss_misses:
        print(f"note: RSS above idle + 20% after {miss}", flush=True)
    print(f"abuse: {len(results)} passed, 0 failed", flush=True)


if __name__ == "__main__":
    main()
