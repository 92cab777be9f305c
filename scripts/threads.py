#!/usr/bin/env python3
"""How many threads the server runs with --threads N and C keep-alive
connections, counted from /proc/PID/task, by name.

    python3 scripts/threads.py [--threads 2] [--connections 6]
                               [--binary target/debug/widgets-todos]

It starts the server on 127.0.0.1 (port 0) with --threads N, opens C
connections, sends one GET /api on each and reads its answer, leaving
every connection open (keep-alive), then reads the name of each thread
in /proc/PID/task/*/comm. docs/configuration.md quotes what it prints
for the defaults above. Linux only; Python 3, standard library only;
every wait is bounded.
"""

import argparse
import collections
import os
import re
import socket
import subprocess
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=6)
    parser.add_argument("--binary", default="target/debug/widgets-todos")
    args = parser.parse_args()
    proc = subprocess.Popen(
        [args.binary, "--host", "127.0.0.1", "--port", "0", "--threads", str(args.threads)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        m = re.match(r"listening on http://([\d.]+):(\d+)", line)
        if not m:
            print(f"threads: the server did not start: {line!r}", file=sys.stderr)
            return 1
        address = (m.group(1), int(m.group(2)))
        connections = []
        for _ in range(args.connections):
            sock = socket.create_connection(address, 10)
            sock.settimeout(10)
            sock.sendall(b"GET /api HTTP/1.1\r\nHost: threads\r\n\r\n")
            data = b""
            while b"\r\n\r\n" not in data:
                data += sock.recv(4096)
            connections.append(sock)
        time.sleep(0.5)  # threads started for the connections have named themselves
        task = f"/proc/{proc.pid}/task"
        names = []
        for tid in os.listdir(task):
            with open(f"{task}/{tid}/comm") as f:
                names.append(f.read().strip())
        counted = collections.Counter(names)
        print(f"--threads {args.threads}, {args.connections} keep-alive connections: "
              f"{len(names)} threads")
        for name, n in sorted(counted.items()):
            print(f"  {n:3}  {name}")
        for sock in connections:
            sock.close()
        return 0
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    sys.exit(main())
