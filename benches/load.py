"""Bounded loopback HTTP load generator for `derender serve` (not part of the test run).

    python3 benches/load.py --start                 # spawn a server on a free port, then stop it
    python3 benches/load.py --url http://127.0.0.1:8100

Two scenarios, each N requests (default 2000) at concurrency C (default 8), each bounded by a
time limit (default 60 s):
  batch   POST /v1/chat/completions/derender, one ~200-token response per request
  stream  POST /v1/chat/completions/derender with "stream": true, 1 token per request, each
          worker continuing its own stream with the carried stream_state (a new stream
          starts when the text runs out)
Each is also run in-process against the bundled core (same bodies, core.handle, one thread) as
a baseline for what HTTP adds. Reports req/s, p50 and p99 latency, the error count, and the CPU
seconds used by this client (and by the server, when spawned with --start and one worker):
client and server share the machine. Only 127.0.0.1 is ever targeted.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).parent))
from corpus import TEXT  # noqa: E402

from derender import DEFAULT_MODEL_DIR, Derenderer  # noqa: E402

CHAT = "/v1/chat/completions/derender"
HOST = "127.0.0.1"
HEADERS = {"Content-Type": "application/json"}
REQUEST = {"messages": [{"role": "user", "content": "Plan three days in Japan."}]}
PROMPT_TOKENS = 9


@dataclass
class Result:
    name: str
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    elapsed: float = 0.0
    timed_out: bool = False
    client_cpu: float = 0.0  # seconds of CPU used by this process (the load generator)
    server_cpu: float | None = None  # seconds of CPU used by the spawned server process

    def line(self) -> str:
        lat = sorted(self.latencies)
        done = len(lat)

        def pct(q: float) -> float:
            return lat[min(done - 1, int(q * done))] * 1e3 if done else float("nan")

        rate = done / self.elapsed if self.elapsed else 0.0
        cpu = f"  cpu client {self.client_cpu:.2f} s"
        if self.server_cpu is not None:
            cpu += f" server {self.server_cpu:.2f} s"
        note = "  (time limit hit)" if self.timed_out else ""
        return (
            f"{self.name:17s} {done:6d} ok {self.errors:4d} errors {self.elapsed:6.2f} s "
            f"{rate:8.1f} req/s  p50 {pct(0.50):6.3f} ms  p99 {pct(0.99):6.3f} ms{cpu}{note}"
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def get_status(port: int, path: str) -> int:
    conn = http.client.HTTPConnection(HOST, port, timeout=2)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of a process (Linux /proc), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError, TypeError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def started_server(workers: int) -> Iterator[tuple[int, int]]:
    """`derender serve` on a free loopback port, as (port, pid); terminated on exit."""
    port = free_port()
    exe = shutil.which("derender")
    cmd = [exe] if exe else [sys.executable, "-m", "derender.cli"]
    cmd += ["serve", "--host", HOST, "--port", str(port), "--served-model-name", "qwen3"]
    cmd += ["--workers", str(workers)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise SystemExit(f"server exited early ({proc.returncode}): {err}")
            try:
                if get_status(port, "/health") == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("server not healthy within 30 s")
            time.sleep(0.1)
        yield port, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Http:
    """POSTs bodies to CHAT on one keep-alive loopback connection (reopened after an error)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn: http.client.HTTPConnection | None = None

    def __call__(self, body: bytes) -> tuple[int, bytes]:
        if self.conn is None:
            self.conn = http.client.HTTPConnection(HOST, self.port, timeout=10)
        try:
            self.conn.request("POST", CHAT, body=body, headers=HEADERS)
            resp = self.conn.getresponse()
            return resp.status, resp.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class InProcess:
    """The same bodies straight to the native core, no HTTP (what the server adds is the gap)."""

    def __init__(self, core: Derenderer) -> None:
        self.core = core

    def __call__(self, body: bytes) -> tuple[int, bytes]:
        return self.core.handle(CHAT, body)

    def close(self) -> None:
        pass


Sender = Http | InProcess
# A worker step sends one request and returns True on success.
Step = Callable[[Sender], bool]


def batch_step(model: str, ids: list[int]) -> Callable[[], Step]:
    body = json.dumps(
        {
            "model": model,
            "generate_response": {
                "request_id": "load-batch",
                "choices": [{"index": 0, "finish_reason": "length", "token_ids": ids}],
            },
            "prompt_tokens": PROMPT_TOKENS,
        }
    ).encode()

    def make() -> Step:
        def step(send: Sender) -> bool:
            status, out = send(body)
            return status == 200 and bool(json.loads(out)["choices"][0]["message"]["content"])

        return step

    return make


def stream_step(model: str, ids: list[int]) -> Callable[[], Step]:
    def make() -> Step:
        pos, state = 0, None  # this worker's stream

        def step(send: Sender) -> bool:
            nonlocal pos, state
            last = pos == len(ids) - 1
            choice = {
                "index": 0,
                "token_ids": [ids[pos]],
                "finish_reason": "length" if last else None,
            }
            body = {
                "model": model,
                "stream": True,
                "generate_chunk": {"request_id": "load-stream", "choices": [choice]},
                "stream_state": state,
                "chat_request": REQUEST,
            }
            status, out = send(json.dumps(body).encode())
            if status != 200:
                pos, state = 0, None
                return False
            state = None if last else json.loads(out)["stream_state"]
            pos = 0 if last else pos + 1
            return True

        return step

    return make


def run(
    name: str,
    sender: Callable[[], Sender],
    make: Callable[[], Step],
    n: int,
    conc: int,
    limit: float,
    server_pid: int | None = None,
) -> Result:
    """n requests from conc threads, one sender each; stops at the time limit."""
    result = Result(name)
    lock = threading.Lock()
    issued = 0
    deadline = time.monotonic() + limit

    def worker() -> None:
        nonlocal issued
        step, send = make(), sender()
        try:
            while True:
                with lock:
                    if issued >= n or time.monotonic() >= deadline:
                        return
                    issued += 1
                t0 = time.perf_counter()
                try:
                    ok = step(send)
                except (OSError, http.client.HTTPException, ValueError, KeyError):
                    ok = False
                dt = time.perf_counter() - t0
                with lock:
                    if ok:
                        result.latencies.append(dt)
                    else:
                        result.errors += 1
        finally:
            send.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(conc)]
    cpu0, server0 = time.process_time(), cpu_seconds(server_pid)
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=limit + 30)
    result.elapsed = time.perf_counter() - t0
    result.client_cpu = time.process_time() - cpu0
    server1 = cpu_seconds(server_pid)
    if server0 is not None and server1 is not None:
        result.server_cpu = server1 - server0
    result.timed_out = issued < n
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--url", help="running server, http://127.0.0.1:PORT")
    target.add_argument("--start", action="store_true", help="spawn derender serve for the run")
    parser.add_argument("--requests", "-n", type=int, default=2000)
    parser.add_argument("--concurrency", "-c", type=int, default=8)
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per scenario")
    parser.add_argument("--response-tokens", type=int, default=200)
    parser.add_argument("--model", default="qwen3", help="served model name to send")
    parser.add_argument("--workers", type=int, default=1, help="server workers with --start")
    parser.add_argument("--warmup", type=int, default=50, help="untimed requests per scenario")
    args = parser.parse_args()
    if not (args.requests > 0 and args.concurrency > 0 and 0 < args.time_limit <= 600):
        parser.error("need --requests > 0, --concurrency > 0 and 0 < --time-limit <= 600")

    url = urlsplit(args.url or f"http://{HOST}:1")
    if url.scheme != "http" or url.hostname != HOST or url.port is None:
        parser.error(f"--url must be http://{HOST}:PORT")

    core = Derenderer(str(DEFAULT_MODEL_DIR), served_model_names=[args.model])
    ids = core.encode(TEXT)
    scenarios = [
        ("batch", batch_step(args.model, ids[: args.response_tokens])),
        ("stream", stream_step(args.model, ids)),
    ]

    def measure(port: int, server_pid: int | None = None) -> None:
        print(
            f"target http://{HOST}:{port}  requests {args.requests}  concurrency "
            f"{args.concurrency}  time limit {args.time_limit:g} s"
        )
        n, limit = args.requests, args.time_limit
        for name, make in scenarios:
            http = partial(Http, port)
            run(name, http, make, args.warmup, args.concurrency, limit)
            print(run(f"{name} http", http, make, n, args.concurrency, limit, server_pid).line())
            # Baseline: the same requests to the bundled core in this process, one thread.
            direct = partial(InProcess, core)
            print(run(f"{name} in-process", direct, make, n, 1, limit).line())

    if args.start:
        with started_server(args.workers) as (port, pid):
            # With several workers the requests are served by child processes.
            measure(port, pid if args.workers == 1 else None)
    else:
        measure(url.port)


if __name__ == "__main__":
    main()
