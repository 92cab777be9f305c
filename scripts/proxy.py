#!/usr/bin/env python3
"""nginx in front of the server: what it must pass unchanged, what it must stop.

    python3 scripts/proxy.py --proxy URL --server URL --server-pid PID \\
        --header-timeout S [--auth-token TOKEN] [--connections N]

Run by scripts/proxy.sh, which starts the release binary and nginx, with
scripts/nginx/widgets-todos.conf, in front of it. Two parts:

1. Pass-through: the same requests sent to the server directly and through
   nginx get the same status, body and header fields (nginx's own Date,
   Server and Connection aside): ETag, Link, X-Total-Count, Location,
   WWW-Authenticate, Allow, Access-Control-*, on HEAD, 304, 204, a CORS
   preflight and a chunked request body too; and the body limit falls on
   the same byte. An event of /api/events reaches its subscriber within
   100 ms of its write's response.
2. Attacks the server's HTTP library cannot survive, sent to nginx:
   request lines saying HTTP/2.0 or HTTP/3.0 (the library deadlocks on its
   own 505 and leaks a thread and two descriptors for good), request heads
   trickled a byte a second (the library has no deadline for a whole head),
   and a 64 MiB header line (it has no limit on a line's size). Before,
   during and after each, the server's thread and descriptor counts must
   be at their idle level: nothing reached it. After each, a normal GET
   through nginx and one sent directly are each answered within 1 s.

Prints one "ok" line per check with its figures; exits 1 on the first
failure. Every loop is bounded in count and time; all traffic goes to
127.0.0.1. Standard library only.
"""

import argparse
import http.client
import os
import selectors
import socket
import threading
import time
import urllib.parse

passed = 0


def fail(message):
    print(f"FAIL: {message}", flush=True)
    raise SystemExit(1)


def ok(message):
    global passed
    passed += 1
    print(f"ok {passed} - {message}", flush=True)


def address(url):
    parts = urllib.parse.urlsplit(url)
    return parts.hostname, parts.port


# ------------------------------------------------------------ the server


class Server:
    """The server's process, to count its threads and descriptors."""

    def __init__(self, pid):
        self.pid = pid

    def stats(self):
        with open(f"/proc/{self.pid}/status") as f:
            threads = next(int(line.split()[1]) for line in f if line.startswith("Threads:"))
        fds = len(os.listdir(f"/proc/{self.pid}/fd"))
        return {"threads": threads, "fds": fds}


def connections_to(port):
    """The client ports of the established TCP connections to `port` on
    this machine (from /proc/net/tcp: state 01 is ESTABLISHED)."""
    found = set()
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                lines = f.read().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            local, remote, state = line.split()[1:4]
            if state == "01" and int(local.rsplit(":", 1)[1], 16) == port:
                found.add(int(remote.rsplit(":", 1)[1], 16))
    return found


def show(stats):
    return f"{stats['threads']} threads, {stats['fds']} fds"


def at_idle(server, idle, limit=8.0):
    """Waits (at most `limit` seconds) until the server's counts are at or
    below `idle`, and returns them. A connection thread the server no longer
    needs waits 5 s for another connection before it exits, so a direct
    request leaves one behind for that long."""
    deadline = time.monotonic() + limit
    while True:
        now = server.stats()
        if now["threads"] <= idle["threads"] and now["fds"] <= idle["fds"]:
            return now
        if time.monotonic() > deadline:
            return now
        time.sleep(0.05)


def check_idle(server, idle, what):
    now = server.stats()
    if now["threads"] > idle["threads"] or now["fds"] > idle["fds"]:
        fail(f"{what}: the server has {show(now)}, idle is {show(idle)}")
    return now


# ------------------------------------------------------------ HTTP


def exchange(addr, raw, timeout=5.0):
    """Sends raw bytes on a new connection; returns every byte until the
    peer closes (or `timeout` passes with nothing more)."""
    with socket.create_connection(addr, timeout=timeout) as s:
        s.sendall(raw)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not chunk:
                break
            data += chunk
        return data


def request(url, method, path, headers=None, body=None, chunked=False):
    """One request on a new connection: (status, [(name, value)], body).
    Each carries the same X-Request-Id, which the server echoes (and nginx
    passes through), so an answer sent directly and one through nginx
    compare equal."""
    headers = {"X-Request-Id": "proxy-test", **(headers or {})}
    host, port = address(url)
    conn = http.client.HTTPConnection(host, port, timeout=5)
    try:
        if chunked:
            # Two chunks, so the body really is sent in pieces.
            middle = len(body) // 2
            conn.request(method, path, body=iter([body[:middle], body[middle:]]),
                         headers=headers or {}, encode_chunked=True)
        else:
            conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.getheaders(), response.read()
    finally:
        conn.close()


def statuses(reply):
    """The status codes of the responses in `reply`, in order (each
    response framed by its Content-Length; none of nginx's are chunked)."""
    found = []
    while reply:
        head, end, rest = reply.partition(b"\r\n\r\n")
        if not end:
            break
        lines = head.split(b"\r\n")
        found.append(int(lines[0].split(b" ")[1]))
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        reply = rest[length:]
    return found


def header(fields, name):
    values = [value for key, value in fields if key.lower() == name.lower()]
    return values[0] if values else None


# Fields nginx writes itself (RFC 9110 section 7.6.1: Connection and the
# fields it names are hop-by-hop; Date and Server describe nginx's answer).
PROXY_OWN = {"date", "server", "connection", "keep-alive", "transfer-encoding"}


def end_to_end(fields):
    return sorted((key.lower(), value) for key, value in fields if key.lower() not in PROXY_OWN)


def normal_gets(args, when):
    """A normal GET through nginx and one sent directly, each within 1 s."""
    for name, url in (("through nginx", args.proxy), ("directly", args.server)):
        started = time.monotonic()
        raw = b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
        try:
            reply = exchange(address(url), raw, 1.0)
        except OSError as err:
            fail(f"{when}: a normal GET {name} failed: {err}")
        took = time.monotonic() - started
        if not reply.startswith(b"HTTP/1.1 200") or took > 1.0:
            fail(f"{when}: a normal GET {name} was not answered within 1 s "
                 f"({took:.2f} s): {reply[:60]!r}")
    ok(f"{when}: a normal GET through nginx and one sent directly each answered within 1 s")


# ------------------------------------------------------------ part 1


def keep_alive(args):
    """nginx keeps its connection to the server open: 20 requests in a
    row, each on a new connection to nginx, all reach the server on the
    one connection nginx already had."""
    server_port = address(args.server)[1]
    request(args.proxy, "GET", "/healthz")
    before = connections_to(server_port)
    for _ in range(20):
        status, _, _ = request(args.proxy, "GET", "/healthz")
        if status != 200:
            fail(f"GET /healthz through nginx: {status}")
    after = connections_to(server_port)
    if len(before) != 1 or before != after:
        fail(f"keep-alive to the server: connections from ports {sorted(before)} before 20 requests, "
             f"{sorted(after)} after")
    ok(f"20 requests through nginx reached the server on the one connection it keeps open "
       f"(from port {after.pop()})")


def codings(args):
    """What the HTTP library refuses before the server sees it, and nginx
    fixes (docs/limits.md): `Transfer-Encoding: Chunked` in
    capitals and a chunked body with trailer fields get the library's bare
    400 when sent directly, and are served through nginx, which decodes the
    body and forwards it with a Content-Length."""
    auth = f"Authorization: Bearer {args.auth_token}\r\n" if args.auth_token else ""
    body = b'{"userId": 1, "title": "coded"}'
    chunk = f"{len(body):x}\r\n".encode() + body + b"\r\n"
    cases = [
        ("Transfer-Encoding: Chunked", "Chunked", b"0\r\n\r\n"),
        ("a trailer field", "chunked", b"0\r\nX-Trailer: 1\r\n\r\n"),
    ]
    for what, coding, end in cases:
        head = (f"POST /api/todos HTTP/1.1\r\nHost: t\r\n{auth}Content-Type: application/json\r\n"
                f"Transfer-Encoding: {coding}\r\nConnection: close\r\n\r\n").encode()
        direct = statuses(exchange(address(args.server), head + chunk + end))
        proxied = statuses(exchange(address(args.proxy), head + chunk + end))
        if 400 not in direct:
            fail(f"{what} sent directly: {direct}, not the library's 400 (the bound the docs state)")
        if proxied[:1] != [201]:
            fail(f"{what} through nginx: {proxied}, not 201")
        ok(f"{what}: the library's 400 directly, 201 through nginx")


def pass_through(args):
    auth = {"Authorization": f"Bearer {args.auth_token}"} if args.auth_token else {}
    json = {**auth, "Content-Type": "application/json"}

    def create(url, title):
        status, fields, body = request(url, "POST", "/api/todos", json,
                                       f'{{"userId": 1, "title": "{title}"}}'.encode())
        if status != 201:
            fail(f"create through {url}: {status} {body!r}")
        return int(body.split(b'"id":')[1].split(b",")[0]), fields

    # Location is a path; nginx must not make it absolute or rewrite it.
    a, fields = create(args.proxy, "through nginx")
    if header(fields, "Location") != f"/api/todos/{a}":
        fail(f"Location through nginx is {header(fields, 'Location')!r}, not /api/todos/{a}")
    b, _ = create(args.proxy, "second")
    ok(f"POST through nginx: 201, Location: /api/todos/{a} unchanged")

    origin = {"Origin": "http://app.example"}
    _, fields, _ = request(args.server, "GET", f"/api/todos/{a}", auth)
    etag = header(fields, "ETag")
    if not etag:
        fail(f"GET /api/todos/{a} has no ETag to revalidate with")
    cases = [
        ("GET an item (ETag, Cache-Control)", "GET", f"/api/todos/{a}", auth, None),
        ("HEAD an item (Content-Length kept)", "HEAD", f"/api/todos/{a}", auth, None),
        ("If-None-Match: 304 with its ETag", "GET", f"/api/todos/{a}", {**auth, "If-None-Match": etag}, None),
        ("a page (Link, X-Total-Count)", "GET", f"/api/todos?id={a}&id={b}&_page=1&_limit=1", auth, None),
        ("CORS on a GET (Access-Control-*)", "GET", f"/api/todos/{a}", {**auth, **origin}, None),
        ("CORS preflight (OPTIONS, 204)", "OPTIONS", f"/api/todos/{a}",
         {**origin, "Access-Control-Request-Method": "PATCH",
          "Access-Control-Request-Headers": "content-type, authorization"}, None),
        ("no token: 401 with WWW-Authenticate", "GET", "/api/todos", {}, None),
        ("405 with Allow", "DELETE", "/api/todos", auth, None),
        ("404 problem+json", "GET", "/api/nothing", auth, None),
        ("422 problem+json", "POST", "/api/todos", json, b'{"userId": 0}'),
    ]
    for name, method, path, headers, body in cases:
        direct = request(args.server, method, path, headers, body)
        proxied = request(args.proxy, method, path, headers, body)
        if direct[0] != proxied[0] or direct[2] != proxied[2] or end_to_end(direct[1]) != end_to_end(proxied[1]):
            fail(f"{name}: directly {direct[0]} {end_to_end(direct[1])} {direct[2][:80]!r}\n"
                 f"  through nginx {proxied[0]} {end_to_end(proxied[1])} {proxied[2][:80]!r}")
        ok(f"{name}: {proxied[0]}, the same fields and body through nginx")

    # DELETE with Prefer: return=minimal: one item each way, the same 204
    # with no body; without it, 200 with the item deleted.
    minimal = {**auth, "Prefer": "return=minimal"}
    direct = request(args.server, "DELETE", f"/api/todos/{a}", minimal)
    proxied = request(args.proxy, "DELETE", f"/api/todos/{b}", minimal)
    if direct[0] != 204 or proxied[0] != 204 or end_to_end(direct[1]) != end_to_end(proxied[1]):
        fail(f"DELETE: directly {direct[0]} {direct[1]}, through nginx {proxied[0]} {proxied[1]}")
    ok("DELETE, Prefer: return=minimal: 204, the same fields through nginx")
    c, _ = create(args.proxy, "third")
    status, _, body = request(args.proxy, "DELETE", f"/api/todos/{c}", auth)
    if status != 200 or f'{{"id":{c},'.encode() not in body:
        fail(f"DELETE through nginx: {status} {body[:80]!r}")
    ok("DELETE through nginx: 200 with the item deleted")

    # A chunked request body: nginx reads it whole and sends it on with a
    # Content-Length (RFC 9112 section 7.1).
    status, _, body = request(args.proxy, "POST", "/api/todos", json,
                              b'{"userId": 2, "title": "sent in chunks"}', chunked=True)
    if status != 201 or b"sent in chunks" not in body:
        fail(f"chunked body through nginx: {status} {body!r}")
    ok("a chunked request body through nginx: 201")

    # The body limit falls on the same byte: 65536 bytes reach the server,
    # 65537 are refused by nginx, with problem+json as the server would.
    todo = b'{"userId": 3, "title": "exactly the limit"}'
    at_limit = todo[:-1] + b" " * (65536 - len(todo)) + b"}"
    status, _, body = request(args.proxy, "POST", "/api/todos", json, at_limit)
    if status != 201:
        fail(f"a body of 65536 bytes through nginx: {status} {body[:80]!r}")
    over = at_limit + b" "
    for name, url, chunked in (("directly", args.server, False), ("through nginx", args.proxy, False),
                               ("chunked, through nginx", args.proxy, True)):
        status, fields, body = request(url, "POST", "/api/todos", json, over, chunked)
        if status != 413 or header(fields, "Content-Type") != "application/problem+json":
            fail(f"a body of 65537 bytes {name}: {status} {header(fields, 'Content-Type')} {body[:80]!r}")
        # The server sends Cache-Control on every response; nginx's own
        # answers have none.
        from_nginx = header(fields, "Cache-Control") is None
        if from_nginx != (url == args.proxy):
            fail(f"a body of 65537 bytes {name} was refused by {'nginx' if from_nginx else 'the server'}")
    ok("a body of 65536 bytes reaches the server; 65537 get 413 problem+json, "
       "directly and through nginx, chunked or not")

    # nginx's error pages are internal: asked for, they are an unknown path.
    status, fields, body = request(args.proxy, "GET", "/_proxy/400")
    if status != 404 or header(fields, "Content-Type") != "application/problem+json":
        fail(f"GET /_proxy/400 through nginx: {status} {header(fields, 'Content-Type')} {body[:80]!r}")
    ok("GET /_proxy/400, an error page of nginx's: 404 problem+json")


# ------------------------------------------------------------ part 2


def http2_lines(args, server, idle):
    """HTTP/2.0 and HTTP/3.0 request lines, in every position on a
    connection. nginx answers 505 itself (400 to the HTTP/2 preface, whose
    method PRI and target * it does not take); nothing reaches the server."""
    addr = address(args.proxy)
    line = b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n"
    count, workers = args.connections, 50
    lock = threading.Lock()
    state = {"next": 0, "answered": 0, "bad": None}
    deadline = time.monotonic() + 60

    def worker():
        while time.monotonic() < deadline:
            with lock:
                if state["next"] >= count or state["bad"] is not None:
                    return
                state["next"] += 1
            try:
                reply = exchange(addr, line)
            except OSError as err:
                reply = repr(err).encode()
            with lock:
                if reply.startswith(b"HTTP/1.1 505 "):
                    state["answered"] += 1
                else:
                    state["bad"] = reply[:80]  # b"" when nothing came back

    started = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for t in threads:
        t.start()
    # The server's highest counts while the connections come and go.
    during = server.stats()
    while any(t.is_alive() for t in threads):
        now = server.stats()
        during = {key: max(during[key], now[key]) for key in during}
        time.sleep(0.05)
    for t in threads:
        t.join()
    took = time.monotonic() - started
    if state["bad"] is not None or state["answered"] != count:
        fail(f"HTTP/2.0 request lines: {state['answered']} of {count} got 505 "
             f"in {took:.1f} s; one got {state['bad']!r}; the server has {show(server.stats())}, "
             f"idle is {show(idle)}")
    if during["threads"] > idle["threads"] or during["fds"] > idle["fds"]:
        fail(f"during the HTTP/2.0 request lines the server had {show(during)}, idle is {show(idle)}")
    ok(f"{count} connections sending `GET /healthz HTTP/2.0` ({workers} at a time): "
       f"each got 505 from nginx in {took:.1f} s; the server stayed at {show(during)}")

    reply = exchange(addr, line)
    if b"Content-Type: application/problem+json" not in reply or b'"status":505' not in reply:
        fail(f"nginx's 505 is not problem+json: {reply!r}")
    others = [
        ("the HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", [400]),
        ("HTTP/3.0", b"GET /healthz HTTP/3.0\r\nHost: x\r\n\r\n", [505]),
        ("HTTP/2.0 second on a keep-alive connection",
         b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + line, [200, 505]),
    ]
    for name, raw, expected in others:
        for _ in range(10):
            reply = exchange(addr, raw)
            if statuses(reply) != expected or b"application/problem+json" not in reply:
                fail(f"{name}: expected {expected} and problem+json, got {reply[:300]!r}")
    # The same, the HTTP/2.0 request sent only after the first response.
    for _ in range(10):
        with socket.create_connection(addr, timeout=5) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            first = s.recv(65536)
            s.sendall(line)
            second = b""
            while chunk := s.recv(65536):
                second += chunk
        if not first.startswith(b"HTTP/1.1 200 ") or not second.startswith(b"HTTP/1.1 505 "):
            fail(f"HTTP/2.0 after a response: {first[:40]!r} then {second[:40]!r}")
    ok("the HTTP/2 preface (400), HTTP/3.0, and HTTP/2.0 after a request "
       "on a keep-alive connection (pipelined or not): 10 each, all answered by nginx "
       "as problem+json")


def trickled_heads(args, server, idle, count=200):
    """`count` connections each send a request head a byte a second and never
    finish it. nginx must close each when its header timeout ends (it sends
    nothing; its log says 408), all at once, not one after another."""
    addr = address(args.proxy)
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
    timeout = args.header_timeout
    selector = selectors.DefaultSelector()
    opened = {}
    for _ in range(count):
        s = socket.create_connection(addr, timeout=5)
        s.setblocking(False)
        selector.register(s, selectors.EVENT_READ)
        opened[s] = time.monotonic()
    lasted = []
    sent = 0
    during = None
    deadline = time.monotonic() + timeout + 10
    next_byte = time.monotonic()
    while opened and time.monotonic() < deadline:
        if time.monotonic() >= next_byte:
            for s in list(opened):
                try:
                    s.send(head[sent % len(head):][:1])
                except OSError:
                    pass  # closed by nginx; the read below sees it
            sent += 1
            next_byte += 1.0
            if during is None and sent > timeout / 2:
                during = check_idle(server, idle, "while heads were trickled")
                normal_gets(args, f"while {count} heads were trickled")
        for key, _ in selector.select(timeout=max(0.0, next_byte - time.monotonic())):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if data:
                continue  # an answer (nginx sends none); wait for the close
            lasted.append(time.monotonic() - opened.pop(s))
            selector.unregister(s)
            s.close()
    for s in opened:
        s.close()
    if opened:
        fail(f"trickled heads: {len(opened)} of {count} still open {timeout + 10} s after they began")
    if min(lasted) < timeout - 0.5 or max(lasted) > timeout + 3:
        fail(f"trickled heads: closed after {min(lasted):.1f} to {max(lasted):.1f} s, "
             f"not at the header timeout of {timeout} s")
    ok(f"{count} heads trickled a byte a second: nginx closed each {min(lasted):.1f} to "
       f"{max(lasted):.1f} s after it opened (its header timeout is {timeout} s); "
       f"the server stayed at {show(during)}")


def held_open(args, server, idle, count=50):
    """`count` idle keep-alive connections, each after one request, and
    `count` requests whose body stopped after 10 of its 1,000 bytes:
    nginx holds them all; the server holds none of them."""
    addr = address(args.proxy)
    held = []
    try:
        # One at a time, so nginx sends every request on its one kept
        # connection to the server.
        for _ in range(count):
            s = socket.create_connection(addr, timeout=5)
            held.append(s)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            if not s.recv(65536).startswith(b"HTTP/1.1 200 "):
                fail("GET /healthz through nginx was not answered")
        for _ in range(count):
            s = socket.create_connection(addr, timeout=5)
            held.append(s)
            s.sendall(b"POST /api/todos HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 1000\r\n\r\n{\"userId\":")
        # Nothing must happen, so there is no event to wait for: give a
        # wrong configuration 0.2 s to pass them on.
        time.sleep(0.2)
        during = check_idle(server, idle, f"while nginx held {2 * count} connections")
    finally:
        for s in held:
            s.close()
    ok(f"{count} idle keep-alive connections and {count} half-sent bodies, held by nginx; "
       f"the server stayed at {show(during)}")


def large_heads(args, server, idle):
    """One header line of 64 MiB, header fields of 36 kB, and a request line
    of 9 KiB: nginx refuses each (431, 431, 414, as problem+json); the
    server sees none of them."""
    addr = address(args.proxy)
    size = 64 * 1024 * 1024
    started = time.monotonic()
    with socket.create_connection(addr, timeout=10) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
        block = b"a" * (1024 * 1024)
        sent = 0
        try:
            while sent < size:
                s.sendall(block)
                sent += len(block)
            s.sendall(b"\r\n\r\n")
        except OSError:
            pass  # nginx stopped reading; its answer is read below
        during = check_idle(server, idle, "while a 64 MiB header line was sent")
        reply = b""
        try:
            while chunk := s.recv(65536):
                reply += chunk
        except OSError:
            pass
    took = time.monotonic() - started
    if not reply.startswith(b"HTTP/1.1 431 ") or b"application/problem+json" not in reply:
        fail(f"a 64 MiB header line: {reply[:200]!r}")
    ok(f"a 64 MiB header line: 431 problem+json from nginx, which read and dropped the "
       f"{sent // 1024 // 1024} MiB sent in {took:.1f} s; the server stayed at {show(during)}")

    # A whole head may fill nginx's first 1 KiB buffer and its four large
    # ones of 8 KiB: about 33 kB. 30 kB of header fields pass; 36 kB don't.
    def fields(count):
        return b"".join(b"X-Field-%03d: %s\r\n" % (i, b"b" * 80) for i in range(count))
    reply = exchange(addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + fields(315) + b"\r\n")
    if not reply.startswith(b"HTTP/1.1 200 "):
        fail(f"315 header fields (30 kB): {reply[:200]!r}")
    reply = exchange(addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + fields(380) + b"\r\n")
    if not reply.startswith(b"HTTP/1.1 431 ") or b"application/problem+json" not in reply:
        fail(f"380 header fields (36 kB): {reply[:200]!r}")
    reply = exchange(addr, b"GET /healthz?" + b"q" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    if not reply.startswith(b"HTTP/1.1 414 ") or b"application/problem+json" not in reply:
        fail(f"a 9 KiB request line: {reply[:200]!r}")
    ok("header fields of 30 kB pass; of 36 kB: 431; a 9 KiB request line: 414; "
       "each refusal problem+json from nginx")


def event_latency(args, rounds=20):
    """Each event reaches a subscriber through nginx within 100 ms of
    its write's response (nginx must not hold it in a buffer)."""
    try:
        worst = events_through(args, rounds)
    except socket.timeout:
        fail("the event stream through nginx sent nothing for 5 s: nginx holds it in a buffer")
    if worst > 0.1:
        fail(f"an event reached its subscriber through nginx {worst * 1000:.0f} ms after its write's response")
    ok(f"each of {rounds} events reached a subscriber through nginx at most "
       f"{worst * 1000:.1f} ms after its write's response")


def events_through(args, rounds):
    """Subscribes through nginx, writes `rounds` todos one after the other;
    the longest time from a write's response to its event."""
    auth = f"Authorization: Bearer {args.auth_token}\r\n" if args.auth_token else ""
    with socket.create_connection(address(args.proxy), timeout=5) as sub:
        # `_limit`: the stream ends after the last, and the server with it.
        sub.sendall(f"GET /api/events?collection=todos&_limit={rounds} HTTP/1.1\r\nHost: t\r\n"
                    f"Accept: text/event-stream\r\n{auth}\r\n".encode())
        seen = b""
        while b"\r\n\r\n" not in seen or b"\nid: " not in seen:
            chunk = sub.recv(65536)
            if not chunk:
                fail(f"the event stream through nginx closed at once: {seen!r}")
            seen += chunk
        if not seen.startswith(b"HTTP/1.1 200") or b"text/event-stream" not in seen:
            fail(f"GET /api/events through nginx: {seen[:200]!r}")
        headers = {"Authorization": f"Bearer {args.auth_token}"} if args.auth_token else {}
        headers["Content-Type"] = "application/json"
        worst = 0.0
        for n in range(rounds):
            status, _, body = request(args.proxy, "POST", "/api/todos", headers,
                                      f'{{"userId": 1, "title": "event {n}"}}'.encode())
            answered = time.monotonic()
            if status != 201:
                fail(f"POST through nginx: {status} {body!r}")
            item = int(body.split(b'"id":')[1].split(b",")[0])
            wanted = b'"collection":"todos","id":%d,' % item
            while wanted not in seen:
                chunk = sub.recv(65536)
                if not chunk:
                    fail("the event stream through nginx ended")
                seen += chunk
            worst = max(worst, time.monotonic() - answered)
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proxy", required=True, help="nginx's URL")
    parser.add_argument("--server", required=True, help="the server's own URL")
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--header-timeout", type=float, required=True,
                        help="nginx's client_header_timeout, in seconds")
    parser.add_argument("--auth-token", help="the server's --auth-token")
    parser.add_argument("--connections", type=int, default=10_000,
                        help="connections sending an HTTP/2.0 request line")
    args = parser.parse_args()
    server = Server(args.server_pid)

    # Idle: after one request through nginx, which keeps that connection
    # to the server open for the next one (its upstream keepalive), as it
    # would in use.
    request(args.proxy, "GET", "/healthz")
    idle = server.stats()
    print(f"idle: {show(idle)}", flush=True)

    keep_alive(args)
    pass_through(args)
    codings(args)
    event_latency(args)
    for attack in (http2_lines, trickled_heads, held_open, large_heads):
        # A direct request leaves a connection thread waiting 5 s for
        # another connection: wait for it to go, then begin.
        before = at_idle(server, idle)
        check_idle(server, idle, f"before {attack.__name__}")
        attack(args, server, idle)
        after = at_idle(server, idle)
        check_idle(server, idle, f"after {attack.__name__}")
        print(f"  server before {show(before)}, after {show(after)}", flush=True)
        normal_gets(args, f"after {attack.__name__}")
    print(f"proxy.py: {passed} checks passed", flush=True)


if __name__ == "__main__":
    main()
