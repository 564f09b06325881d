"""Which worker of a `derender serve --workers N` holds a connection (Linux
/proc), and keep-alive connections held by two different workers.
A plain module: tests import these helpers from here, never from another
test module."""

from __future__ import annotations

import http.client
import json
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

HOST = "127.0.0.1"


def worker_pids(server_pid: int) -> list[int]:
    """The supervisor's children (uvicorn workers and multiprocessing helpers)."""
    pids: list[int] = []
    for task in os.listdir(f"/proc/{server_pid}/task"):
        with open(f"/proc/{server_pid}/task/{task}/children") as f:
            pids += [int(p) for p in f.read().split()]
    return pids


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[len("socket:[") : -1]))
    return inodes


def worker_of(server_pid: int, server_port: int, conn: http.client.HTTPConnection) -> int | None:
    """The worker whose accepted socket is the other end of `conn`; None while
    no worker has accepted it."""
    assert conn.sock is not None
    client_port = conn.sock.getsockname()[1]
    with open("/proc/net/tcp") as f:
        rows = [line.split() for line in f.read().splitlines()[1:]]
    inodes = {
        int(row[9])
        for row in rows
        if int(row[1].split(":")[1], 16) == server_port
        and int(row[2].split(":")[1], 16) == client_port
    } - {0}  # a connection not yet accepted has no inode
    owners = [pid for pid in worker_pids(server_pid) if inodes & _socket_inodes(pid)]
    assert len(owners) <= 1, (inodes, owners)
    return owners[0] if owners else None


class Connection:
    """One keep-alive loopback connection: POST JSON, get (status, JSON)."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection(HOST, port, timeout=30)
        self.port = port

    def get(self, path: str) -> int:
        self.conn.request("GET", path)
        response = self.conn.getresponse()
        response.read()
        return response.status

    def post(self, path: str, body: dict) -> tuple[int, dict]:
        data = json.dumps(body).encode()
        self.conn.request("POST", path, body=data, headers={"Content-Type": "application/json"})
        response = self.conn.getresponse()
        return response.status, json.loads(response.read())

    def close(self) -> None:
        self.conn.close()


def _accepted_by(server, conn: http.client.HTTPConnection, tries: int) -> int | None:
    for _ in range(tries):
        pid = worker_of(server.proc.pid, server.port, conn)
        if pid is not None:
            return pid
        threading.Event().wait(0.01)
    return None


@contextmanager
def connections_to_two_workers(server) -> Iterator[list[Connection]]:
    """Two connections held by two different workers of a `--workers N`
    server. The first one's worker is paused (SIGSTOP, a fraction of a second)
    while the second connects, so another worker accepts it; retried (bounded)
    while the other workers are still starting."""
    first = Connection(server.port)
    assert first.get("/health") == 200
    busy = worker_of(server.proc.pid, server.port, first.conn)
    assert busy is not None
    for _ in range(100):
        second = Connection(server.port)
        os.kill(busy, signal.SIGSTOP)
        try:
            second.conn.connect()  # queued by the kernel; only a running worker accepts it
            other = _accepted_by(server, second.conn, tries=20)
        finally:
            os.kill(busy, signal.SIGCONT)
        if other is not None and other != busy:
            break
        second.close()
        threading.Event().wait(0.1)
    else:
        first.close()
        pytest.fail("no second worker accepted a connection")
    try:
        assert second.get("/health") == 200
        yield [first, second]
    finally:
        first.close()
        second.close()
