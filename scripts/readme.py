#!/usr/bin/env python3
"""Runs every example of README.md and docs/*.md against the release binary
and checks that they show what the server really sends; checks the links
between those files, and that no paragraph or table row is said twice.

    python3 scripts/readme.py [FILE.md ...]

Python 3, standard library only. Builds the release binary with
`cargo build --release` when it is missing ($SERVER_BIN names another one).
Without arguments it reads README.md, then every docs/*.md in order of
name; the links and repeats are checked only then, over all of them.

What runs. Every ```console block, in order. In a block, a line starting
with `$ ` is a command (a line ending in `\\` continues it on the next
line); the lines after it, up to the next command or the end of the block,
are its output. Each command runs with bash, in a temporary directory, with
`widgets-todos` on the PATH, and `localhost:8080` and `127.0.0.1:8080`
rewritten to the server under test. Blocks fenced otherwise (```sh,
```json, ...) never run: use them for what must not (installation, docker,
starting a server, other machines).

The servers. Each file is a walk of its own: unless marked, a block talks
to the file's walk-through server, started before the file's first such
block as the README tells a reader to start it: `widgets-todos --data
db.json`, where db.json is a fresh copy of scripts/seed.json. Its state
carries on from block to block within the file, so a file's examples must
work top to bottom, in order; no file depends on another, so the order of
files does not matter. A block that needs other flags is marked by an HTML
comment on the line before its fence (blank lines between are allowed):

    <!-- readme-test: server --allow-reset --data db.json -->

That block gets a server of its own, started with exactly those flags (none
at all: an empty store on the defaults) in a fresh directory holding a
fresh copy of the seed as db.json (and `scripts`, a link to the
repository's, so that `scripts/...` works as it does in a clone), and
stopped after it; the next block is
back on the walk-through server. Every server runs on 127.0.0.1 with
`--port 0` added.

What is compared. The output after a `$ ` line is compared with what the
command printed (carriage returns removed, trailing blank lines ignored).
When it starts with `HTTP/` it is a response (`curl -i`, `curl -I`):

- the status line, exactly;
- the headers shown, up to the first blank line: each must be sent, names
  in any case, values exactly, and no other header may be sent, in any
  order, unless a line `...` stands among them (then the block is partial
  and only the headers shown are checked);
- the body after the blank line: exactly, or as JSON when both sides are
  JSON (so it may be spread over several lines). After a `...` line the
  blank line may be left out.

Other output is compared exactly, or as JSON when both sides are JSON.

Values that vary. The value of `Date` is never compared (only that it is
sent). A header value written as a lower-case word in angle brackets, such
as `ETag: <etag>`, stands for any value. In a JSON body, such a word inside
a string stands for any text there: `"instance": "urn:request:<id>"`
matches every request id; and one standing bare where a value goes,
`"duration_ms":<ms>`, for any number. Outside JSON, such a word stands for
any text on its line (`port <port>`). Nothing else is ignored: ETags are
hashes of the body, so the same data gives the same tags.

Copies of files. A block marked by `<!-- readme-test: file PATH -->` on
the line before its fence must be exactly the file PATH of the repository
(a script shown to be copied, which CI runs as it is).

Links and repeats. Every relative link `[text](path#anchor)` must name a
file of the repository and, for a .md file, a heading of it (GitHub's
anchors: lower case, punctuation dropped, spaces as dashes). A paragraph
or a table row of 80 characters or more, outside code blocks, may stand
in one place only: a rule is said once, and linked to elsewhere.

References a reader cannot follow. In README.md and the files of src/,
docs/, scripts/, tests/ and examples/ (their prose: comments and
docstrings in code): no issue number (two digits in square brackets), no hash of one of this
repository's commits, and no path of the repository's (`src/...`,
`scripts/...`, a `NAME.md`) that names a file not there.

Prints one line per example and `readme: N passed, M failed`; on a
mismatch, a diff (expected, then actual). Exits 1 if any check failed.
"""

import difflib
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = os.path.join(ROOT, "scripts", "seed.json")
MARKER = re.compile(r"^<!--\s*readme-test:\s*server\b(.*?)-->\s*$")
COPY = re.compile(r"^<!--\s*readme-test:\s*file\s+(\S+)\s*-->\s*$")
HEADER = re.compile(r"^([A-Za-z0-9-]+):[ \t]*(.*?)[ \t]*$")
PLACEHOLDER = re.compile(r"^<[a-z][a-z0-9 -]*>$")
# The same word inside a JSON string.
IN_STRING = re.compile(r"<[a-z][a-z0-9 -]*>")
# The same word bare, where a JSON value goes: any number. It is read as a
# string that starts with NUMBER, which no README text holds.
BARE = re.compile(r"(?<=[:\[,])(\s*)(<[a-z][a-z0-9 -]*>)(?=\s*[,}\]])")
NUMBER = "\0"
DEFAULT_FLAGS = ["--data", "db.json"]
COMMAND_TIMEOUT = 30
START_TIMEOUT = 10


def parse(path):
    """The examples of the README: a list of blocks, each a dict with its
    line, its server flags (None for the walk-through server) and its
    examples (line, command, expected output lines)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = []
    marker = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = MARKER.match(line.strip())
        if m:
            marker = shlex.split(m.group(1))
            i += 1
            continue
        if line.strip().startswith("```"):
            fence = line.strip()
            i += 1
            body_start = i
            while i < len(lines) and lines[i].strip() != "```":
                i += 1
            if fence == "```console":
                blocks.append(block(lines[body_start:i], body_start + 1, marker))
            marker = None
            i += 1
            continue
        if line.strip():
            marker = None
        i += 1
    return blocks


def block(lines, first_line, flags):
    examples = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            if line.strip():
                raise SystemExit(f"line {first_line + i}: output before any `$ ` command")
            i += 1
            continue
        start = first_line + i
        command = [line[2:]]
        while command[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            command.append(lines[i])
        i += 1
        output = []
        while i < len(lines) and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        while output and not output[-1].strip():
            output.pop()
        examples.append({"line": start, "command": "\n".join(command), "expected": output})
    return {"line": first_line, "flags": flags, "examples": examples}


class Server:
    """A release binary on a free port of 127.0.0.1, in a fresh directory
    holding a copy of the seed as db.json."""

    def __init__(self, binary, flags):
        self.dir = tempfile.mkdtemp(prefix="readme-")
        shutil.copy(SEED, os.path.join(self.dir, "db.json"))
        # So that `scripts/...` names what it does in a clone of the repository.
        os.symlink(os.path.join(ROOT, "scripts"), os.path.join(self.dir, "scripts"))
        self.err = open(os.path.join(self.dir, "stderr"), "w+b")
        self.proc = subprocess.Popen(
            [binary, "--host", "127.0.0.1", "--port", "0", *flags],
            cwd=self.dir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.err,
        )
        first = []
        reader = threading.Thread(target=lambda: first.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(START_TIMEOUT)
        m = re.match(rb"listening on https?://([^\s]+):(\d+)", first[0] if first else b"")
        if not m:
            self.stop()
            raise SystemExit(f"the server ({' '.join(flags)}) did not start:\n{self.stderr()}")
        self.port = m.group(2).decode()

    def stderr(self):
        self.err.flush()
        self.err.seek(0)
        return self.err.read().decode("utf-8", "replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc.stdout.close()
        self.err.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def run(command, server, bindir):
    command = re.sub(r"\b(localhost|127\.0\.0\.1):8080\b", "127.0.0.1:" + server.port, command)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    try:
        done = subprocess.run(
            ["bash", "-c", command], cwd=server.dir, env=env, stdin=subprocess.DEVNULL,
            capture_output=True, timeout=COMMAND_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return None, f"timed out after {COMMAND_TIMEOUT} s"
    out = done.stdout.decode("utf-8", "replace").replace("\r", "")
    lines = out.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    stderr = done.stderr.decode("utf-8", "replace") if done.returncode else ""
    if done.returncode:
        stderr = f"(exit status {done.returncode}) " + stderr
    return lines, stderr


def same_text(expected, actual):
    """Equal as JSON when both are JSON, else exactly."""
    e, a = "\n".join(expected).strip(), "\n".join(actual).strip()
    try:
        return same_json(json.loads(BARE.sub(r'\1"\\u0000\2"', e)), json.loads(a))
    except ValueError:
        return e == a or same_lines(e.split("\n"), a.split("\n"))


def same_lines(expected, actual):
    """Line by line, a `<word>` in an expected line matching any text."""
    if len(expected) != len(actual):
        return False
    for e, a in zip(expected, actual):
        pattern = ".+".join(re.escape(part) for part in IN_STRING.split(e.rstrip()))
        if re.fullmatch(pattern, a.rstrip()) is None:
            return False
    return True


def same_json(expected, actual):
    """Equal, but a `<word>` inside an expected string matches any text."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            same_json(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            same_json(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, str) and expected.startswith(NUMBER):
        return isinstance(actual, (int, float)) and not isinstance(actual, bool)
    if isinstance(expected, str) and isinstance(actual, str) and IN_STRING.search(expected):
        parts = IN_STRING.split(expected)
        pattern = ".+".join(re.escape(part) for part in parts)
        return re.fullmatch(pattern, actual, re.DOTALL) is not None
    return expected == actual


def split_response(lines):
    """(status line, headers as (name, value), partial, body lines)."""
    status, headers, partial, i = lines[0], [], False, 1
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            break
        if line.strip() == "...":
            partial = True
            i += 1
            if i < len(lines) and lines[i].strip() and not HEADER.match(lines[i]):
                break
            continue
        m = HEADER.match(line)
        if not m:
            break
        headers.append((m.group(1).lower(), m.group(2)))
        i += 1
    return status, headers, partial, lines[i:]


def compare(expected, actual):
    """None when the output matches, else what differs."""
    if not expected or not expected[0].startswith("HTTP/"):
        return None if same_text(expected, actual) else "the output differs"
    if not actual or not actual[0].startswith("HTTP/"):
        return "no HTTP response"
    e_status, e_headers, partial, e_body = split_response(expected)
    a_status, a_headers, _, a_body = split_response(actual)
    problems = []
    if e_status.strip() != a_status.strip():
        problems.append(f"status line: expected {e_status.strip()!r}, got {a_status.strip()!r}")
    pool = list(a_headers)
    for name, value in e_headers:
        found = next((h for h in pool if h[0] == name and
                      (name == "date" or PLACEHOLDER.match(value) or h[1] == value)), None)
        if found:
            pool.remove(found)
        else:
            problems.append(f"header not sent as shown: {name}: {value}")
    if not partial:
        problems += [f"header sent but not shown: {n}: {v}" for n, v in pool]
    if not same_text(e_body, a_body):
        problems.append("body differs")
    return "; ".join(problems) or None


def for_diff(lines):
    """The lines with a JSON body laid out one array element a line, the
    same way on both sides of a diff."""
    start = 0
    if lines and lines[0].startswith("HTTP/"):
        start = next((i + 1 for i, line in enumerate(lines) if not line.strip()), len(lines))
    try:
        value = json.loads("\n".join(lines[start:]))
    except ValueError:
        return lines
    compact = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, list) and value:
        body = ["[" + compact(value[0])] + [" " + compact(v) for v in value[1:]]
        body = [line + "," for line in body[:-1]] + [body[-1] + "]"]
    else:
        body = [compact(value)]
    return lines[:start] + body


def same_dates(expected, actual):
    """The actual lines with the Date header shown as the README shows it,
    so that a diff shows only what counts."""
    shown = next((line for line in expected if line.lower().startswith("date:")), None)
    if shown is None:
        return actual
    return [shown if line.lower().startswith("date:") else line for line in actual]


def binary():
    path = os.environ.get("SERVER_BIN") or os.path.join(ROOT, "target", "release", "widgets-todos")
    if not os.path.exists(path):
        print("== cargo build --release", flush=True)
        subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True, timeout=3600)
    return os.path.abspath(path)


def heading_anchors(path):
    """The anchors GitHub gives the headings of a Markdown file."""
    anchors, seen, fence = set(), {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fence = not fence
            m = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
                n = seen.get(slug, 0)
                seen[slug] = n + 1
                anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


LINK = re.compile(r"\]\(([^()\s]+)\)")


def prose(path):
    """(line number, text) of each paragraph and table row outside code
    blocks and HTML comments."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, para, start, fence = [], [], 0, False
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fence = not fence
        if fence or line.lstrip().startswith("```") or not line.strip() or line.startswith("#"):
            if para:
                out.append((start, " ".join(para)))
            para = []
            continue
        if line.startswith("|"):
            if para:
                out.append((start, " ".join(para)))
            para = []
            if not re.match(r"^\|[-| :]*\|$", line.strip()):
                out.append((n, line.strip()))
            continue
        if not para:
            start = n
        para.append(line.strip())
    if para:
        out.append((start, " ".join(para)))
    return out


def copies(path):
    """(line, file named, block's text) of each block marked as a copy of a
    file of the repository."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, named = [], None
    for n, line in enumerate(lines):
        m = COPY.match(line.strip())
        if m:
            named = m.group(1)
        elif line.strip().startswith("```") and named:
            end = next((i for i in range(n + 1, len(lines)) if lines[i].strip() == "```"), len(lines))
            out.append((n + 1, named, "\n".join(lines[n + 1:end]) + "\n"))
            named = None
        elif line.strip():
            named = None
    return out


def check_docs(files):
    """Problems with the links between the files, with text said twice, and
    with blocks that are no longer the file they show."""
    problems, said = [], {}
    for path in files:
        rel = os.path.relpath(path, ROOT)
        for n, named, text in copies(path):
            try:
                with open(os.path.join(ROOT, named), encoding="utf-8") as f:
                    same = f.read() == text
            except OSError:
                same = False
            if not same:
                problems.append(f"{rel}:{n}: the block is not the file {named} as it is")
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        fence = False
        for n, line in enumerate(lines, 1):
            if line.lstrip().startswith("```"):
                fence = not fence
            if fence:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue
                file, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
                if not os.path.exists(dest):
                    problems.append(f"{rel}:{n}: link to a missing file: {target}")
                elif anchor and dest.endswith(".md") and anchor not in heading_anchors(dest):
                    problems.append(f"{rel}:{n}: link to a missing heading: {target}")
        for n, para in prose(path):
            if len(para) < 80:
                continue
            if para in said:
                problems.append(f"{rel}:{n}: said twice, first at {said[para]}: {para[:60]}...")
            else:
                said[para] = f"{rel}:{n}"
    return problems


ISSUE = re.compile(r'(?:^|(?<=[\s(,"]))\[\d{1,2}\](?!\()')
HASH = re.compile(r"(?<![\w/.-])[0-9a-f]{7,40}(?![\w-])")
NAMED = re.compile(r"(?<![\w./-])((?:src|scripts|docs|tests|examples)/[\w./-]*\w\."
                   r"(?:rs|md|py|sh|json|mjs|ts|toml|html)|[A-Z][\w-]*\.md)\b")


def prose_lines(rel, text):
    """(line number, text) of what a reader reads as prose in a file: all of
    a .md file outside code blocks; comments and docstrings elsewhere."""
    marker = "#" if rel.endswith((".py", ".sh", ".toml")) else "//"
    fence = docstring = False
    for n, line in enumerate(text.split("\n"), 1):
        if rel.endswith(".md"):
            if line.lstrip().startswith("```"):
                fence = not fence
            if not fence:
                yield n, line
            continue
        if rel.endswith(".py") and '"""' in line:
            docstring ^= line.count('"""') % 2 == 1
            yield n, line
            continue
        if docstring:
            yield n, line
        elif marker in line:
            yield n, line[line.index(marker):]


def check_references():
    """Issue numbers, commit hashes and missing files named in prose."""
    listed = subprocess.run(
        ["git", "ls-files", "README.md", "src", "docs", "scripts", "tests", "examples"],
        cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    names = {os.path.basename(f) for f in subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
        check=True).stdout.split()}
    commits = {}

    def is_commit(token):
        if token not in commits:
            kind = subprocess.run(["git", "cat-file", "-t", token], cwd=ROOT,
                                  capture_output=True, text=True).stdout.strip()
            commits[token] = kind == "commit"
        return commits[token]

    problems = []
    for rel in listed:
        if rel.endswith(("package-lock.json", ".json", ".lock")):
            continue
        try:
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in prose_lines(rel, text):
            for m in ISSUE.finditer(line):
                problems.append(f"{rel}:{n}: an issue number, {m.group(0)}: say what and why instead")
            for m in HASH.finditer(line):
                if any(c.isalpha() for c in m.group(0)) and is_commit(m.group(0)):
                    problems.append(f"{rel}:{n}: a commit hash, {m.group(0)}: name what it was instead")
            for m in NAMED.finditer(line):
                named = m.group(1)
                there = (os.path.exists(os.path.join(ROOT, named)) if "/" in named
                         else named in names)
                if not there and not re.search(r"\b(NAME|FILE)\b", named):
                    problems.append(f"{rel}:{n}: names {named}, which is not in the repository")
    return problems


def main():
    explicit = sys.argv[1:]
    files = explicit or [os.path.join(ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "*.md")))
    exe = binary()
    bindir = tempfile.mkdtemp(prefix="readme-bin-")
    os.symlink(exe, os.path.join(bindir, "widgets-todos"))
    passed = failed = 0
    try:
        for path in files:
            p, f = run_file(path, exe, bindir, passed + failed)
            passed, failed = passed + p, failed + f
    finally:
        shutil.rmtree(bindir, ignore_errors=True)
    if not explicit:
        for problem in check_docs(files):
            failed += 1
            print(f"FAIL {passed + failed} - {problem}")
        passed += 1
        print(f"ok {passed + failed} - links and repeats across {len(files)} files")
        for problem in check_references():
            failed += 1
            print(f"FAIL {passed + failed} - {problem}")
        passed += 1
        print(f"ok {passed + failed} - no issue numbers, commit hashes or missing files named")
    print(f"readme: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


def run_file(path, exe, bindir, done):
    """Runs the examples of one file; (passed, failed)."""
    blocks = parse(path)
    rel = os.path.relpath(path, ROOT)
    passed = failed = 0
    walk = None
    try:
        for b in blocks:
            if b["flags"] is None and walk is None:
                walk = Server(exe, DEFAULT_FLAGS)
            server = walk if b["flags"] is None else Server(exe, b["flags"])
            try:
                for ex in b["examples"]:
                    actual, stderr = run(ex["command"], server, bindir)
                    problem = "the command " + stderr if actual is None else compare(ex["expected"], actual)
                    first = ex["command"].split("\n")[0]
                    name = f"{rel}:{ex['line']}: $ {first[:70]}"
                    count = done + passed + failed + 1
                    if problem is None:
                        passed += 1
                        print(f"ok {count} - {name}")
                        continue
                    failed += 1
                    print(f"FAIL {count} - {name}: {problem}")
                    diff = difflib.unified_diff(for_diff(ex["expected"]),
                                                for_diff(same_dates(ex["expected"], actual or [])),
                                                rel, "server", lineterm="", n=99)
                    for line in diff:
                        print("    " + line)
                    if stderr and stderr.strip():
                        print("    stderr: " + stderr.strip().replace("\n", "\n    stderr: "))
            finally:
                if server is not walk:
                    server.stop()
    finally:
        if walk:
            walk.stop()
    return passed, failed


if __name__ == "__main__":
    main()
