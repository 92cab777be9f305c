#!/usr/bin/env python3
"""The functions of src/ that one request runs, measured with callgrind.

    python3 scripts/trace.py BINARY 'GET /api/todos/1' [BODY] [-- SERVER FLAGS]
    python3 scripts/trace.py BINARY --check [--limits]
    python3 scripts/trace.py BINARY --limits

scripts/trace.sh builds the debug binary and calls this; its header says
what callgrind measures and why a debug build. Python 3, standard library
only. A POST, PUT or PATCH without BODY sends a small valid item.

How it measures. The server runs under `valgrind --tool=callgrind
--instr-atstart=no --separate-threads=yes` with `--port 0 --threads 1
--log-level warn` and the flags given. Nothing is counted during start-up
and a warm-up on one keep-alive connection: three POSTs to each collection
(items to read), then one request like the measured one (caches filled).
Then `callgrind_control -i on` and `-z` (counters zeroed), the request 20
times on that connection, `callgrind_control -i off`. Every function whose
file is under src/ and that ran in that window counts, in the threads that
did at least 5% of the window's instructions (a thread that only woke up,
the watchdog or the accept loop, is not on the request's path). A function
is one demangled name: the generic instances of a function share its name,
and all the closures of `f` share one, `f::{{closure}}`, counted apart from
`f`. This is how the issue's table and ../shared/tools/path_trace.py count.

The order. Callgrind records who called whom, and from which line, but
not when. The order printed is a depth-first walk of that call graph:
- one thread after the other: first the threads that receive bytes from
  the socket and send none (the request's head comes in there), then
  those that receive and send, then those that only send (the response
  goes out there); ties in callgrind's thread order;
- in a thread, from the functions that were already running when counting
  began (nobody called them in the window: a worker's loop), each
  function's callees in the order of the lines that call them, a callee
  met again not walked twice; functions outside src/ (the standard
  library, the HTTP library) are walked through but not printed. Each
  generic instance and each closure is a node of its own (callgrind runs
  with --demangle=no), so a walk through `Option::map` reaches the
  closure given to that `map`, not those given to every other.
A file comes where its first function comes. Limits: a call graph knows
no time, so code that runs after a later line (a loop's next turn, a
closure handed to another function, a `Drop` at the end of a scope) is
placed by the line it is called from; a function called from several
places is placed at the first one the walk meets; and the thread order
is a rule of thumb about sockets, not an observation.

The line. `file:line` is where the function starts: the `fn` line of the
function of that name whose body holds the lines it ran, found in the
source. Callgrind alone gives only the lines that ran, and the lowest of
them (its first instruction, in a debug build the `fn` line itself) is
what is printed for a closure, and for a function a macro or a derive
wrote (the line of the macro or the derive).

The check (--check). src/lib.rs's doc comment has a section `# Read the
code`. In it, a paragraph (not a list item) that names a request in
backquotes, `` `GET /api/todos/1` ``, opens that request's list, up to
the next paragraph that names one; each item of the list (`1.`, `-`)
that starts with backquoted paths of src/, `` `transport.rs`: ... ``
or `` `store.rs`, `store/items.rs`: ... ``, adds them to it. Other
prose, other backquotes and code blocks are ignored. Every request the
section names is traced on the defaults (a request of BODIES with its
body), those of CHECKED must be among them, and the check fails when the files the
section names for a request and the files the trace shows differ, in
either direction. The limits on each path are printed as information,
and enforced with --limits (alone or with --check): a function's length
runs from its `fn` line to its closing brace; and no function of a
feature that is off on the defaults (OFF: failure on purpose, the request
log, the delay) may run on a request of LIMITS.
"""

import collections
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
REQUESTS = 20
TODO = b'{"userId":1,"title":"trace"}'
WIDGET = b'{"price":"$1","quality":"good"}'
# What the check requires "Read the code" to describe.
CHECKED = ("GET /api/todos/1", "POST /api/todos", "GET /api/todos?_page=1&_limit=5", "PATCH /api/todos/1")
# (functions, files) at most, and the length of a function on these paths.
# Every path takes its lock through error.rs, the one place a poisoned lock
# is decided, which is a file on each. The GET's and the POST's are a little
# above what they run today, so that they do not grow; the list's and the
# PATCH's are the bound every route's path is held to: 60 functions in 9
# files, as few as a reader can follow in one go.
LIMITS = {
    "GET /api/todos/1": (40, 7),
    "POST /api/todos": (65, 8),
    "GET /api/todos?_page=1&_limit=5": (60, 9),
    "PATCH /api/todos/1": (60, 9),
}
# A body to trace a request with instead of the small valid item: none
# today. The PATCH sends the item too, a change of two fields, so that its
# limit holds for the usual update.
BODIES = {}
MAX_LINES = 80
# Features that are off on the defaults, so that none of their functions may
# run on a request the limits trace: (what, the file or the function's name).
OFF = (("failure on purpose (--faults)", re.compile(r"^app/faults\.rs$"), None),
       ("the request log (--record)", re.compile(r"^app/record\.rs$"), None),
       ("the delay (--delay, _delay)", None, re.compile(r"(^|::)[a-z_]*delay[a-z_]*$")))
# libc's calls that receive and send bytes (the thread order, above).
RECEIVE = re.compile(r"^(__libc_)?(recv|recvfrom|recvmsg|read|readv)$")
SEND = re.compile(r"^(__libc_)?(send|sendto|sendmsg|write|writev)$")


class Failure(Exception):
    pass


# ---- the server under callgrind, and the requests ----------------------


def exchange(sock, method, target, body):
    """Sends one request and reads its response; returns the status line."""
    head = f"{method} {target} HTTP/1.1\r\nHost: trace\r\n"
    if body:
        kind = "application/json" if body[:1] in (b"{", b"[") else "application/x-www-form-urlencoded"
        head += f"Content-Type: {kind}\r\nContent-Length: {len(body)}\r\n"
    sock.sendall(head.encode() + b"\r\n" + body)
    data = b""
    while b"\r\n\r\n" not in data:
        data += receive(sock, f"before answering {method} {target}")
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = lines[0]
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip().lower()
    code = int(status.split()[1])
    if method == "HEAD" or code in (204, 304):
        pass
    elif fields.get("transfer-encoding") == "chunked":
        while not rest.endswith(b"0\r\n\r\n"):
            rest += receive(sock, "in a chunked body")
    else:
        need = int(fields.get("content-length", "0"))
        while len(rest) < need:
            rest += receive(sock, "in a body")
    if fields.get("connection") == "close":
        raise Failure(f"the server closes the connection after {method} {target} ({status}): "
                      "a trace needs a request answered on a kept-alive connection")
    return status


def receive(sock, where):
    chunk = sock.recv(65536)
    if not chunk:
        raise Failure(f"the server closed the connection {where}")
    return chunk


def run(binary, method, target, body, flags, work):
    """Runs the server under callgrind and the requests; returns the measured statuses."""
    out = open(os.path.join(work, "stdout"), "wb")
    err = open(os.path.join(work, "stderr"), "wb")
    # --compress-pos=no: every line number in the output is absolute, which is simpler to read.
    proc = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes",
         "--compress-pos=no", "--demangle=no", "--callgrind-out-file=" + os.path.join(work, "callgrind.out"),
         binary, "--port", "0", "--threads", "1", "--log-level", "warn", *flags],
        stdout=out, stderr=err, cwd=work, stdin=subprocess.DEVNULL)

    def control(*args):
        subprocess.run(["callgrind_control", *args, str(proc.pid)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60, check=True)

    try:
        address = listening(proc, work)
        with socket.create_connection(address, 10) as sock:
            sock.settimeout(60)
            for _ in range(3):
                exchange(sock, "POST", "/api/todos", TODO)
                exchange(sock, "POST", "/api/widgets", WIDGET)
            exchange(sock, method, target, body)
            control("-i", "on")
            control("-z")
            statuses = [exchange(sock, method, target, body) for _ in range(REQUESTS)]
            control("-i", "off")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out.close()
        err.close()
    return statuses


def listening(proc, work):
    """The address the server prints once it listens (it chose a free port)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with open(os.path.join(work, "stdout"), encoding="utf-8", errors="replace") as f:
            m = re.search(r"^listening on http://([\d.]+):(\d+)", f.read(), re.M)
        if m:
            return m.group(1), int(m.group(2))
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    with open(os.path.join(work, "stderr"), encoding="utf-8", errors="replace") as f:
        said = [line for line in f if not re.match(r"==\d+==", line)]  # valgrind's own lines
    raise Failure("the server did not start under valgrind:\n" + "".join(said).rstrip())


# ---- callgrind's output --------------------------------------------------


class Thread:
    """One thread's part of callgrind's output (one file with --separate-threads=yes)."""

    def __init__(self, path):
        self.number = 0
        self.total = 0
        self.file = {}  # function -> its source file
        self.cost = collections.Counter()  # function -> instructions of its own
        self.lines = collections.defaultdict(set)  # function -> the lines of its own file it ran
        self.calls = collections.Counter()  # function -> calls to it
        self.callees = collections.defaultdict(dict)  # caller -> {callee: (line, order)}
        self.parse(path)

    def parse(self, path):
        names, files, objects = {}, {}, {}

        def named(table, spec):
            # "(12) name" defines id 12, "(12)" refers to it (--compress-strings).
            m = re.match(r"\((\d+)\)(?: (.*))?$", spec)
            if not m:
                return spec
            if m.group(2) is not None:
                table[m.group(1)] = m.group(2)
            return table[m.group(1)]

        fn = file = here = callee = None
        own_line = 0  # the last line of the function's own file, for calls from inlined code
        call = False
        order = 0
        summed = 0
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line[:1].isdigit():
                    parts = line.split()
                    number = int(parts[0])
                    cost = int(parts[1]) if len(parts) > 1 else 0
                    if here == file and number:
                        own_line = number
                    if call:  # the line a call is made from, and its inclusive cost
                        call = False
                        order += 1
                        seen = self.callees[fn].get(callee)
                        key = (own_line, order)
                        if seen is None or key < seen:
                            self.callees[fn][callee] = key
                    elif fn is not None:
                        self.cost[fn] += cost
                        summed += cost
                        if here == file and number:
                            self.lines[fn].add(number)
                    continue
                key, _, value = line.rstrip("\n").partition("=")
                if key == "fl":
                    file = here = named(files, value)
                elif key in ("fi", "fe"):
                    here = named(files, value)
                elif key == "fn":
                    fn = named(names, value)
                    self.file.setdefault(fn, file)
                    here = file
                    own_line = 0
                elif key in ("cfi", "cfl"):
                    named(files, value)
                elif key in ("ob", "cob"):
                    named(objects, value)
                elif key == "cfn":
                    callee = named(names, value)
                elif key == "calls":
                    self.calls[callee] += int(value.split()[0])
                    call = True
                elif line.startswith("thread:"):
                    self.number = int(line.split()[1])
                elif line.startswith("totals:"):
                    self.total = int(line.split()[1])
        self.total = self.total or summed

    def ran(self):
        return [fn for fn in self.file if self.cost[fn] or self.calls[fn]]

    def uses(self, pattern):
        return any(pattern.match(fn) for fn in self.ran())

    def walk(self):
        """The functions in the order of a depth-first walk of the call graph."""
        called = {callee for caller, callees in self.callees.items()
                  for callee in callees if callee != caller}
        roots = sorted((fn for fn in self.ran() if fn not in called),
                       key=lambda fn: (self.file.get(fn) or "", min(self.lines[fn], default=0), fn))
        seen, walked, stack = set(), [], list(reversed(roots))
        while stack:
            fn = stack.pop()
            if fn in seen:
                continue
            seen.add(fn)
            walked.append(fn)
            callees = self.callees.get(fn, {})
            stack.extend(sorted(callees, key=callees.get, reverse=True))
        return walked


# ---- names ---------------------------------------------------------------

# callgrind runs with --demangle=no: each closure and each generic instance of a
# function is then a symbol of its own, so the call graph does not join the callers
# of `Option::map` for one closure to the closures of every other `Option::map`.
# Names of src/ are demangled here, as valgrind would (Rust's "legacy" mangling, the
# default for a crate), to count and print them.
ESCAPES = {"SP": "@", "BP": "*", "RF": "&", "LT": "<", "GT": ">", "LP": "(", "RP": ")", "C": ","}


def demangle(symbol):
    """`_ZN3foo3bar17h0123456789abcdefE` -> `foo::bar`; None when not a legacy Rust symbol."""
    m = re.match(r"^_?_ZN(.*)E(\.llvm\.[\w.]+)?$", symbol)
    if not m:
        return None
    rest, parts = m.group(1), []
    while rest:
        n = re.match(r"\d+", rest)
        if not n:
            return None
        size = int(n.group())
        part, rest = rest[n.end():n.end() + size], rest[n.end() + size:]
        parts.append(part)
    if parts and re.fullmatch(r"h[0-9a-f]{16}", parts[-1]):
        parts.pop()
    out = []
    for part in parts:
        if part.startswith("_$"):
            part = part[1:]
        part = re.sub(r"\$(SP|BP|RF|LT|GT|LP|RP|C|u[0-9a-f]+)\$",
                      lambda e: ESCAPES.get(e.group(1)) or chr(int(e.group(1)[1:], 16)), part)
        out.append(part.replace("..", "::"))
    return "::".join(out)


# ---- the source ----------------------------------------------------------


TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*)
  | (?P<block>/\*)
  | (?P<raw>b?r(?P<hashes>\#*)")
  | (?P<string>b?"(?:\\.|[^"\\])*")
  | (?P<char>b?'(?:\\(?:u\{[0-9a-fA-F]*\}|x..|.)|[^\\'\n])')
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[{}();])
  | (?P<newline>\n)
""", re.X | re.S)


def functions(path):
    """[(name, first line, last line)] of every `fn` with a body in a Rust file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tokens = []  # (kind, text, line)
    line, i = 1, 0
    while i < len(text):
        m = TOKEN.search(text, i)
        if not m:
            break
        kind = m.lastgroup if m.lastgroup != "hashes" else "raw"
        if kind == "block":  # nested /* */
            depth, j = 1, m.end()
            while depth and j < len(text):
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            end = j
        elif kind == "raw":
            end = text.find('"' + m.group("hashes"), m.end())
            end = len(text) if end < 0 else end + 1 + len(m.group("hashes"))
        else:
            end = m.end()
        if kind in ("word", "punct"):
            tokens.append((kind, m.group(), line + text.count("\n", i, m.start())))
        line += text.count("\n", i, end)
        i = end
    found = []
    for k, (kind, word, start) in enumerate(tokens):
        if word != "fn" or k + 1 >= len(tokens) or tokens[k + 1][0] != "word":
            continue
        depth, j = 0, k + 2
        while j < len(tokens) and not (depth == 0 and tokens[j][1] in "{;"):
            depth += {"(": 1, ")": -1}.get(tokens[j][1], 0)
            j += 1
        if j == len(tokens) or tokens[j][1] == ";":
            continue  # a declaration without a body
        braces = 0
        for _, punct, end in tokens[j:]:
            braces += {"{": 1, "}": -1}.get(punct, 0)
            if braces == 0:
                found.append((tokens[k + 1][1], start, end))
                break
    return found


class Source:
    def __init__(self, src):
        self.src = src
        self.spans = {}

    def spans_of(self, path):
        if path not in self.spans:
            self.spans[path] = functions(os.path.join(self.src, path))
        return self.spans[path]

    def start(self, path, name, lines):
        """(first line, length) of the function `name` whose body holds the lines it ran."""
        line = min(lines, default=0)
        if name.endswith("}}"):  # a closure, a constant: its own first line
            return line, None
        short = re.sub(r"<[^<>]*>", "", name)
        while "<" in short:
            short = re.sub(r"<[^<>]*>", "", short)
        short = short.rsplit("::", 1)[-1]
        around = [(-sum(start <= n <= end for n in lines), end - start, start, end)
                  for fn, start, end in self.spans_of(path) if fn == short]
        around = [span for span in around if span[0] < 0]
        if not around:
            return line, None  # written by a macro or a derive
        *_, start, end = min(around)
        return start, end - start + 1


# ---- one trace -----------------------------------------------------------


class Trace:
    def __init__(self, request, statuses, threads, src):
        self.request = request
        self.statuses = statuses
        total = sum(t.total for t in threads) or 1
        self.threads = [t for t in threads if t.total >= 0.05 * total]
        # The request comes in where bytes are received, and goes out where they are sent.
        self.threads.sort(key=lambda t: (not t.uses(RECEIVE), t.uses(SEND), t.number))
        self.all_threads = len(threads)
        source = Source(src)
        # One function is one demangled name: its instances and the threads it ran in, together.
        found = {}  # name -> (file under src/, calls, lines it ran)
        order = []
        for thread in self.threads:
            for fn in thread.walk():
                path = under(thread.file.get(fn), src)
                if path is None:
                    continue
                name = demangle(fn)
                if name is None:
                    raise Failure(f"cannot demangle {fn} (src/{path}): trace.py reads Rust's legacy "
                                  "symbol mangling, the default for a crate")
                if name not in found:
                    order.append(name)
                    found[name] = (path, 0, set())
                _, calls, lines = found[name]
                found[name] = (path, calls + thread.calls[fn], lines | thread.lines[fn])
        self.functions = []  # (file under src/, name, line, length, calls per request), in order
        for name in order:
            path, calls, lines = found[name]
            line, length = source.start(path, name, lines)
            self.functions.append((path, name, line, length, calls / REQUESTS))
        self.files = []
        for path, *_ in self.functions:
            if path not in self.files:
                self.files.append(path)

    def by_file(self):
        return [(path, [f for f in self.functions if f[0] == path]) for path in self.files]

    def summary(self):
        return f"{len(self.files)} files, {len(self.functions)} functions of src/"


def under(path, src):
    """The path relative to src/ of a file callgrind names, or None outside src/."""
    if not path:
        return None
    if not os.path.isabs(path):
        path = os.path.join(os.path.dirname(src), path)
    path = os.path.abspath(path)
    if not path.startswith(src + os.sep) or not os.path.isfile(path):
        return None
    return os.path.relpath(path, src)


REQUEST_LINE = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+ (/\S*|\*)$")


def trace(binary, request, body=None, flags=(), src=SRC):
    method, _, target = request.partition(" ")
    if body is None:
        body = BODIES.get(request, b"")
        if not body and method in ("POST", "PUT", "PATCH"):
            body = WIDGET if "/widgets" in target else TODO
    with tempfile.TemporaryDirectory(prefix="trace-") as work:
        try:
            statuses = run(binary, method, target, body, list(flags), work)
        except (OSError, subprocess.SubprocessError) as error:
            raise Failure(f"{request}: {error}") from error
        threads = [Thread(os.path.join(work, name)) for name in sorted(os.listdir(work))
                   if name.startswith("callgrind.out") and os.path.getsize(os.path.join(work, name))]
    return Trace(request, statuses, threads, src)


# ---- printing ------------------------------------------------------------


def short_name(fn, path, crate):
    module = "::".join([crate, *os.path.splitext(path)[0].split(os.sep)])
    module = re.sub(r"::(mod|lib|main)$", "", module)
    fn = fn.replace(module + "::", "")
    return fn.replace(crate + "::", "crate::")


def show(t, crate):
    counted = collections.Counter(t.statuses)
    answers = ", ".join(f"{s}" + (f" (x{n})" if len(counted) > 1 else "") for s, n in counted.items())
    print(f"{t.request}: {answers}")
    print(f"{REQUESTS} requests measured on one connection, in {len(t.threads)} of the server's "
          f"{t.all_threads} threads\n(those with at least 5% of the instructions).")
    print("The functions of src/ they ran, by file, in the order the request meets them, with")
    print("their calls per request (an average; 0: already running when counting began).")
    width = max((len(f"src/{p}:{line}") for p, _, line, _, _ in t.functions), default=0)
    for number, (path, functions) in enumerate(t.by_file(), 1):
        print(f"\n{number:2}. src/{path}: {len(functions)} function{'s' * (len(functions) != 1)}")
        for _, fn, line, _, calls in functions:
            where = f"src/{path}:{line}"
            print(f"    {where:<{width}} {calls:>5.3g}  {short_name(fn, path, crate)}")
    print(f"\n{t.summary()}")


# ---- the check of "Read the code" ----------------------------------------

REQUEST = re.compile(r"`(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (/[^`\s]*)`")
ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+")
LEADING_PATHS = re.compile(r"`(?:src/)?([\w/.-]+\.rs)`(?:(?:\s*,\s*|\s+and\s+|\s*,\s*and\s+)`(?:src/)?([\w/.-]+\.rs)`)*")
PATH = re.compile(r"`(?:src/)?([\w/.-]+\.rs)`")


def read_the_code(lib):
    """{request: [files]} from the section "Read the code" of lib.rs's doc comment.

    The section is cut into blocks: a list item with its continuation lines, or
    a paragraph. A paragraph naming a request in backquotes opens that request's
    list; a list item starting with backquoted paths adds them to the open list.
    Everything else, code blocks included, is prose to the check."""
    docs = []
    with open(lib, encoding="utf-8") as f:
        for line in f:
            if line.startswith("//!"):
                docs.append(line[3:].removeprefix(" ").rstrip("\n"))
    section, inside, fenced = [], False, False
    for line in docs:
        if line.lstrip().startswith("```"):
            fenced = not fenced
            line = ""
        elif fenced:
            line = ""
        elif line.startswith("#"):
            inside = line.lstrip("#").strip().lower() == "read the code"
            continue
        if inside:
            section.append(line)
    if not section:
        raise Failure(f"{lib} has no section '# Read the code' in its doc comment")
    blocks = []  # [is an item, text]
    for line in section:
        if not line.strip():
            blocks.append(None)
        elif ITEM.match(line):
            blocks.append([True, ITEM.sub("", line, count=1)])
        elif blocks and blocks[-1] is not None:
            blocks[-1][1] += " " + line.strip()
        else:
            blocks.append([False, line.strip()])
    named, request = {}, None
    for block in filter(None, blocks):
        is_item, text = block
        if is_item:
            lead = LEADING_PATHS.match(text)
            if lead and request is not None:
                named[request].extend(PATH.findall(lead.group(0)))
        else:
            m = REQUEST.search(text)
            if m:
                request = f"{m.group(1)} {m.group(2)}"
                named.setdefault(request, [])
    return named


def check(binary, enforce_limits, check_docs):
    lib = os.path.join(SRC, "lib.rs")
    named = read_the_code(lib) if check_docs else {}
    requests = list(named) if check_docs else list(LIMITS)
    wrong = []
    for request in CHECKED if check_docs else ():
        if request not in named:
            wrong.append(f"'Read the code' in src/lib.rs names no list of files for `{request}`")
    for request in LIMITS:
        if request not in requests:
            requests.append(request)
    traces = {}
    for request in requests:
        t = trace(binary, request)
        traces[request] = t
        print(f"{request}: {', '.join(sorted(set(t.statuses)))}; {t.summary()}")
        print(f"  in the order met: {', '.join(t.files)}")
        if request not in named:
            continue
        said, ran = set(named[request]), set(t.files)
        if said == ran:
            print(f"  'Read the code' names the same {len(said)} files")
            continue
        wrong.append(f"'Read the code' (src/lib.rs) and the trace disagree on {request}: "
                     "name there every file the trace shows, and no other "
                     "(how a list is written: the header of scripts/trace.py)")
        print(f"  'Read the code' names {len(said)} files, the trace shows {len(ran)}:")
        for path in sorted(ran - said):
            print(f"    ran, not named:  src/{path}")
        for path in sorted(said - ran):
            print(f"    named, not run:  src/{path}")
    over = limits(traces)
    print("limits of the paths" + ("" if enforce_limits else " (information; --limits enforces them)") + ":")
    for line in over[1]:
        print(f"  {line}")
    if enforce_limits:
        wrong.extend(over[0])
    return wrong


def limits(traces):
    """(what is over, lines to print) for the limits of the paths."""
    over, lines = [], []
    lengths = {}
    for request, (most_functions, most_files) in LIMITS.items():
        t = traces[request]
        ok = len(t.functions) <= most_functions and len(t.files) <= most_files
        lines.append(f"{request}: {len(t.functions)} functions (at most {most_functions}), "
                     f"{len(t.files)} files (at most {most_files}): {'ok' if ok else 'OVER'}")
        if not ok:
            over.append(f"{request} runs {len(t.functions)} functions in {len(t.files)} files: "
                        f"at most {most_functions} in at most {most_files}")
        for what, in_file, named in OFF:
            ran = [f"src/{path}:{line} {fn.rsplit('::', 1)[-1]}" for path, fn, line, _, _ in t.functions
                   if (in_file and in_file.search(path)) or (named and named.search(fn.replace("::{{closure}}", "")))]
            if ran:
                lines.append(f"  {what} is off, and runs: {', '.join(ran)}")
                over.append(f"{request} runs {what}, which is off: {', '.join(ran)}")
        for path, fn, line, length, _ in t.functions:
            if length is not None:
                lengths[(path, line)] = (length, fn)
    ranked = sorted(lengths.items(), key=lambda item: -item[1][0])
    if ranked:
        (path, line), (length, fn) = ranked[0]
        lines.append(f"the longest function on these paths: src/{path}:{line} "
                     f"{fn.rsplit('::', 1)[-1]}, {length} lines (at most {MAX_LINES})")
    for (path, line), (length, fn) in ranked:
        if length > MAX_LINES:
            lines.append(f"  over {MAX_LINES} lines: src/{path}:{line} {fn.rsplit('::', 1)[-1]}, {length} lines")
            over.append(f"src/{path}:{line} {fn.rsplit('::', 1)[-1]} is {length} lines long: "
                        f"at most {MAX_LINES}")
    return over, lines


def crate_name():
    try:
        import tomllib
        with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
            cargo = tomllib.load(f)
        return cargo.get("lib", {}).get("name") or cargo["package"]["name"].replace("-", "_")
    except (ImportError, OSError, KeyError):
        return "crate"


USAGE = """usage: scripts/trace.sh 'METHOD /target' [BODY] [-- SERVER FLAGS]
       scripts/trace.sh --check [--limits]
       scripts/trace.sh --limits"""


def main(argv):
    binary, args, flags = os.path.abspath(argv[0]), argv[1:], []
    if "--" in args:
        args, flags = args[:args.index("--")], args[args.index("--") + 1:]
    modes = {"--check", "--limits"}
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if args else 2
    if args[0] in modes:
        usage = None if set(args) <= modes and not flags else "--check and --limits take nothing else"
    elif args[0].startswith("-"):
        usage = f"unknown option {args[0]}"
    elif not REQUEST_LINE.match(args[0]):
        usage = f"a request is 'METHOD /target', as 'GET /api/todos/1', not {args[0]!r}"
    else:
        usage = None if len(args) <= 2 else "one request and at most one body; server flags go after --"
    if usage:
        print(f"trace: {usage}\n{USAGE}", file=sys.stderr)
        return 2
    try:
        if args[0] in modes:
            wrong = check(binary, "--limits" in args, "--check" in args)
            for line in wrong:
                print(f"trace: FAIL: {line}")
            print("trace: ok" if not wrong else f"trace: {len(wrong)} failed")
            return 1 if wrong else 0
        body = args[1].encode() if len(args) == 2 else None
        show(trace(binary, args[0], body, flags), crate_name())
        return 0
    except Failure as failure:
        print(f"trace: {failure}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `scripts/trace.sh ... | head` ends quietly
    sys.exit(main(sys.argv[1:]))
