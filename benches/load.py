"""Bounded loopback HTTP load and soak generator for `derender serve` (not part of the test run).

    python3 benches/load.py --start                       # every scenario, spawned server
    python3 benches/load.py --start --workers 2 -c 16
    python3 benches/load.py --start --soak 600 -c 8       # 10-minute soak, parser + batch mix
    python3 benches/load.py --url http://127.0.0.1:8100 --server-pid PID

The server (`--start`) is the bundled Qwen3 model with the parsers a Qwen3 deployment runs:
`--reasoning-parser qwen3 --tool-call-parser hermes --enable-auto-tool-choice` (compact stream
states, the default). Scenarios, each N requests (default 2000) at concurrency C (default 8),
each bounded by a time limit (default 60 s):
  batch   POST /v1/chat/completions/derender: one ~200-id reasoning-then-answer output per
          request, with the chat request
  stream  POST /v1/completions/derender with "stream": true: the plain path (no parser), one id
          per request, each client thread continuing its own stream with the carried state
  parser  POST /v1/chat/completions/derender with "stream": true: a <think> reasoning, an answer
          and a hermes tool call, one id per request, the rendered prompt's ids and the chat
          request (with its tools) on every call as vLLM's docs ask (--prompt-once: the first
          call only, which compact states allow)
Every answer is checked: a batch message, and every finished stream's assembled text and tool
call, must equal what the same requests give in-process. Each scenario is also run in-process
against the bundled core (same bodies, core.handle, one thread) as a baseline for what HTTP adds.

--soak SECONDS runs the --soak-mix scenarios (default parser,batch: client threads assigned in
turn) at concurrency C for that long, sampling the server's resident memory (VmRSS of the server
process and its workers, from /proc) every --sample-every seconds, and reports req/s, p50/p99,
errors, RSS before the warm-up, at the start (after it), at the end, the peak, and the growth.

Reports the CPU seconds used by this client and by the server (its process tree, from /proc):
client and server share the machine. Only 127.0.0.1 is ever targeted.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shlex
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
CMPL = "/v1/completions/derender"
RENDER = "/v1/chat/completions/render"
HOST = "127.0.0.1"
HEADERS = {"Content-Type": "application/json"}
PARSER_FLAGS = ["--reasoning-parser", "qwen3", "--tool-call-parser", "hermes"]
PARSER_FLAGS += ["--enable-auto-tool-choice"]
THINK, END_THINK, IM_END = 151667, 151668, 151645
WEATHER = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
CHAT_REQUEST = {
    "messages": [
        {"role": "user", "content": "Plan three days in Japan and check Kyoto's weather."}
    ],
    "tools": [{"type": "function", "function": WEATHER}],
}
COMPLETION_REQUEST = {"prompt": "Plan three days in Japan."}
MAX_SOAK_SECONDS = 7200


@dataclass
class Result:
    name: str
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    timed_out: bool = False
    client_cpu: float = 0.0  # seconds of CPU used by this process (the load generator)
    server_cpu: float | None = None  # seconds of CPU used by the server's process tree

    def add(self, dt: float, error: str | None) -> None:
        if error is None:
            self.latencies.append(dt)
        else:
            self.errors += 1
            if len(self.error_samples) < 5:
                self.error_samples.append(error)

    def pct(self, q: float) -> float:
        lat = sorted(self.latencies)
        return lat[min(len(lat) - 1, int(q * len(lat)))] * 1e3 if lat else float("nan")

    def rate(self) -> float:
        return len(self.latencies) / self.elapsed if self.elapsed else 0.0

    def line(self) -> str:
        cpu = f"  cpu client {self.client_cpu:.2f} s"
        if self.server_cpu is not None:
            cpu += f" server {self.server_cpu:.2f} s"
        note = "  (time limit hit)" if self.timed_out else ""
        return (
            f"{self.name:17s} {len(self.latencies):7d} ok {self.errors:4d} errors "
            f"{self.elapsed:7.2f} s {self.rate():8.1f} req/s  p50 {self.pct(0.50):6.3f} ms  "
            f"p99 {self.pct(0.99):6.3f} ms{cpu}{note}"
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


# --- the server's process tree, from /proc ------------------------------------


def process_tree(pid: int) -> list[int]:
    """`pid` and its descendants (a `--workers N` supervisor and its workers)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return out


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of a process tree (Linux /proc), or None."""
    if pid is None:
        return None
    total = 0.0
    for p in process_tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def rss_kib(pid: int) -> dict[int, int]:
    """VmRSS (KiB) of each process of the tree."""
    out = {}
    for p in process_tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    out[p] = int(line.split()[1])
        except OSError:
            continue
    return out


@contextmanager
def started_server(workers: int, port: int, extra: list[str]) -> Iterator[tuple[int, int]]:
    """`derender serve` on a loopback port (0: a free one), as (port, pid); stopped on exit."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "derender.cli", "serve", "--host", HOST, "--port", str(port)]
    cmd += ["--served-model-name", "qwen3", "--workers", str(workers), *PARSER_FLAGS, *extra]
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
        if workers > 1:  # /health answered by one worker; give the others their start-up
            time.sleep(3)
        yield port, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- senders --------------------------------------------------------------------


class Http:
    """POSTs bodies on one keep-alive loopback connection (reopened after an error)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn: http.client.HTTPConnection | None = None

    def __call__(self, path: str, body: bytes) -> tuple[int, bytes]:
        if self.conn is None:
            self.conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
        try:
            self.conn.request("POST", path, body=body, headers=HEADERS)
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

    def __call__(self, path: str, body: bytes) -> tuple[int, bytes]:
        return self.core.handle(path, body)

    def close(self) -> None:
        pass


Sender = Http | InProcess
# A worker step sends one request and returns None on success, else what went wrong.
Step = Callable[[Sender], str | None]


# --- scenarios ----------------------------------------------------------------------


@dataclass
class Workload:
    """The ids and requests every scenario sends, and the answers they must get."""

    model: str
    prompt_ids: list[int]
    batch_ids: list[int]
    plain_ids: list[int]
    parser_ids: list[int]
    prompt_once: bool = False
    want_batch: dict = field(default_factory=dict)
    want_plain: str = ""
    want_parser: tuple = ()


def build_workload(core: Derenderer, model: str, response_tokens: int, prompt_once: bool):
    status, out = core.handle(RENDER, json.dumps({"model": model, **CHAT_REQUEST}).encode())
    if status != 200:
        raise SystemExit(f"render failed: {out[:300]!r}")
    prompt_ids = json.loads(out)["token_ids"]
    text = core.encode(TEXT)
    reasoning = text[: max(1, response_tokens // 2)]
    answer = core.encode("\n\nHere is the plan; let me check the weather in Kyoto first.")
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "京都 Kyoto"}}\n</tool_call>'
    batch = [THINK, *reasoning, END_THINK, *text[-max(1, response_tokens // 2) :]]
    parser = [THINK, *reasoning, END_THINK, *answer, *core.encode(call), IM_END]
    work = Workload(model, prompt_ids, batch, text[:response_tokens], parser, prompt_once)
    # What the in-process core answers is what every HTTP answer must equal.
    direct = InProcess(core)
    status, out = direct(CHAT, batch_body(work))
    work.want_batch = json.loads(out)["choices"][0]["message"]
    work.want_plain = run_stream(direct, plain_body, work, work.plain_ids)
    work.want_parser = run_stream(direct, parser_body, work, work.parser_ids)
    assert work.want_parser[2][0][0] == "get_weather", work.want_parser
    return work


def batch_body(work: Workload) -> bytes:
    choice = {"index": 0, "finish_reason": "length", "token_ids": work.batch_ids}
    body = {
        "model": work.model,
        "generate_response": {"request_id": "load-batch", "choices": [choice]},
        "prompt_tokens": len(work.prompt_ids),
        "chat_request": CHAT_REQUEST,
    }
    return json.dumps(body).encode()


def plain_body(work: Workload, ids: list[int], state, finish: str | None, first: bool) -> bytes:
    choice = {"index": 0, "token_ids": ids, "finish_reason": finish}
    body = {
        "model": work.model,
        "stream": True,
        "generate_chunk": {"request_id": "load-stream", "choices": [choice]},
        "stream_state": state,
        "prompt_token_ids": work.prompt_ids,
        "completion_request": COMPLETION_REQUEST,
    }
    return json.dumps(body).encode()


def parser_body(work: Workload, ids: list[int], state, finish: str | None, first: bool) -> bytes:
    choice = {"index": 0, "token_ids": ids, "finish_reason": finish}
    body = {
        "model": work.model,
        "stream": True,
        "generate_chunk": {"request_id": "load-parser", "choices": [choice]},
        "stream_state": state,
        "chat_request": CHAT_REQUEST,
    }
    if first or not work.prompt_once:
        body["prompt_token_ids"] = work.prompt_ids
    return json.dumps(body).encode()


class Assembled:
    """A stream's text so far: the plain path's text, or the chat path's
    reasoning, content and tool calls."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, list[str]] = {}

    def add(self, chunk: dict) -> None:
        for choice in chunk["choices"]:
            if "delta" not in choice:
                self.text.append(choice.get("text") or "")
                continue
            delta = choice["delta"]
            self.reasoning.append(delta.get("reasoning") or "")
            self.text.append(delta.get("content") or "")
            for tc in delta.get("tool_calls") or []:
                parts = self.calls.setdefault(tc["index"], ["", ""])
                fn = tc.get("function") or {}
                parts[0] += fn.get("name") or ""
                parts[1] += fn.get("arguments") or ""

    def result(self, chat: bool):
        if not chat:
            return "".join(self.text)
        calls = tuple(tuple(self.calls[i]) for i in sorted(self.calls))
        return ("".join(self.reasoning), "".join(self.text), calls)


def run_stream(send: Sender, make_body, work: Workload, ids: list[int]):
    """One whole stream, one id per call (the reference answers)."""
    state, got = None, Assembled()
    for k, tok in enumerate(ids):
        finish = "stop" if k == len(ids) - 1 else None
        path = CHAT if make_body is parser_body else CMPL
        status, out = send(path, make_body(work, [tok], state, finish, k == 0))
        assert status == 200, out[:300]
        answer = json.loads(out)
        state = answer["stream_state"]
        got.add(answer["chunk"])
    return got.result(make_body is parser_body)


def batch_step(work: Workload) -> Callable[[], Step]:
    body = batch_body(work)

    def make() -> Step:
        def step(send: Sender) -> str | None:
            status, out = send(CHAT, body)
            if status != 200:
                return f"batch {status}: {out[:200]!r}"
            if json.loads(out)["choices"][0]["message"] != work.want_batch:
                return "batch: a different message"
            return None

        return step

    return make


def stream_step(work: Workload, chat: bool) -> Callable[[], Step]:
    ids = work.parser_ids if chat else work.plain_ids
    make_body, path = (parser_body, CHAT) if chat else (plain_body, CMPL)
    want = work.want_parser if chat else work.want_plain
    name = "parser" if chat else "stream"

    def make() -> Step:
        pos, state, got = 0, None, Assembled()  # this client thread's stream

        def step(send: Sender) -> str | None:
            nonlocal pos, state, got
            last = pos == len(ids) - 1
            body = make_body(work, [ids[pos]], state, "stop" if last else None, pos == 0)
            going = False
            try:
                status, out = send(path, body)
                if status != 200:
                    return f"{name} {status} at #{pos}: {out[:200]!r}"
                answer = json.loads(out)
                got.add(answer["chunk"])
                state = answer["stream_state"]
                if last and got.result(chat) != want:
                    return f"{name}: the assembled stream differs"
                going = not last
                return None
            finally:  # the next id, or a new stream after the last one or a failure
                if going:
                    pos += 1
                else:
                    pos, state, got = 0, None, Assembled()

        return step

    return make


# --- running ----------------------------------------------------------------------


def worker_loop(step: Step, send: Sender, result: Result, lock, more: Callable[[], bool]) -> None:
    try:
        while more():
            t0 = time.perf_counter()
            try:
                error = step(send)
            except (OSError, http.client.HTTPException, ValueError, KeyError) as exc:
                error = f"{type(exc).__name__}: {exc}"
            dt = time.perf_counter() - t0
            with lock:
                result.add(dt, error)
    finally:
        send.close()


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

    def more() -> bool:
        nonlocal issued
        with lock:
            if issued >= n or time.monotonic() >= deadline:
                return False
            issued += 1
            return True

    threads = [
        threading.Thread(target=worker_loop, args=(make(), sender(), result, lock, more))
        for _ in range(conc)
    ]
    cpu0, server0 = time.process_time(), cpu_seconds(server_pid)
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=limit + 60)
    result.elapsed = time.perf_counter() - t0
    result.client_cpu = time.process_time() - cpu0
    server1 = cpu_seconds(server_pid)
    if server0 is not None and server1 is not None:
        result.server_cpu = server1 - server0
    result.timed_out = issued < n
    return result


def soak(
    scenarios: dict[str, Callable[[], Step]],
    mix: list[str],
    port: int,
    conc: int,
    seconds: float,
    every: float,
    server_pid: int | None,
    warmup: float,
) -> dict:
    """The `mix` scenarios (client threads assigned in turn) for `seconds`,
    sampling the server's RSS every `every` seconds."""
    before = sum(rss_kib(server_pid).values()) if server_pid else None
    # Warm-up at full concurrency (allocator pools, thread pools, caches), untimed.
    warm = {k: Result(k) for k in mix}
    _soak_threads(scenarios, mix, port, conc, warmup, warm)
    samples: list[tuple[float, int]] = []
    stop = threading.Event()

    def sampler() -> None:
        t0 = time.monotonic()
        while True:
            if server_pid:
                samples.append((time.monotonic() - t0, sum(rss_kib(server_pid).values())))
            if stop.wait(every):
                return

    results = {k: Result(k) for k in mix}
    sampling = threading.Thread(target=sampler, daemon=True)
    cpu0, server0 = time.process_time(), cpu_seconds(server_pid)
    sampling.start()
    elapsed = _soak_threads(scenarios, mix, port, conc, seconds, results)
    stop.set()
    sampling.join()
    server1 = cpu_seconds(server_pid)
    if server_pid:
        samples.append((elapsed, sum(rss_kib(server_pid).values())))
    every_result = Result("all")
    for r in results.values():
        r.elapsed = elapsed
        every_result.latencies += r.latencies
        every_result.errors += r.errors
        every_result.error_samples += r.error_samples
    every_result.elapsed = elapsed
    every_result.client_cpu = time.process_time() - cpu0
    if server0 is not None and server1 is not None:
        every_result.server_cpu = server1 - server0
    return {
        "results": [*results.values(), every_result],
        "warmup_errors": sum(r.errors for r in warm.values()),
        "rss_before_warmup_kib": before,
        "samples": samples,
    }


def _soak_threads(scenarios, mix, port, conc, seconds, results) -> float:
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def more() -> bool:
        return time.monotonic() < deadline

    threads = []
    for i in range(conc):
        name = mix[i % len(mix)]
        args = (scenarios[name](), Http(port), results[name], lock, more)
        threads.append(threading.Thread(target=worker_loop, args=args))
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 60)
    return time.perf_counter() - t0


def print_soak(report: dict, conc: int, mix: list[str], seconds: float) -> None:
    print(f"soak {seconds:g} s  concurrency {conc}  mix {','.join(mix)}")
    for r in report["results"]:
        print(r.line())
        for e in r.error_samples:
            print(f"    error: {e}")
    all_result = report["results"][-1]
    if all_result.server_cpu is not None:
        print(f"server CPU {all_result.server_cpu / all_result.elapsed:.2f} cores on average")
    samples = report["samples"]
    if not samples:
        print("RSS: not sampled (pass --server-pid with --url)")
        return
    start, end = samples[0][1], samples[-1][1]
    peak = max(v for _, v in samples)
    before = report["rss_before_warmup_kib"]
    half = samples[len(samples) // 2][1]
    print(
        f"RSS MiB: before warm-up {before / 1024:.1f}, start {start / 1024:.1f}, "
        f"middle {half / 1024:.1f}, end {end / 1024:.1f}, peak {peak / 1024:.1f}; "
        f"growth start->end {100 * (end - start) / start:+.2f} %, "
        f"middle->end {100 * (end - half) / half:+.2f} %"
    )
    print("RSS samples (s: MiB): " + ", ".join(f"{t:.0f}: {v / 1024:.1f}" for t, v in samples))


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
    parser.add_argument("--port", type=int, default=0, help="port for --start (default: free)")
    parser.add_argument(
        "--server-args", default="", help="more `derender serve` flags with --start, quoted"
    )
    parser.add_argument("--server-pid", type=int, default=None, help="server to sample, --url")
    parser.add_argument("--warmup", type=int, default=50, help="untimed requests per scenario")
    parser.add_argument(
        "--scenarios", default="batch,stream,parser", help="comma-separated, of batch,stream,parser"
    )
    parser.add_argument("--no-in-process", action="store_true", help="skip the baselines")
    parser.add_argument(
        "--prompt-once", action="store_true", help="parser streams send the prompt once"
    )
    parser.add_argument("--soak", type=float, default=None, help="soak for this many seconds")
    parser.add_argument("--soak-mix", default="parser,batch", help="scenarios of the soak")
    parser.add_argument("--soak-warmup", type=float, default=20.0, help="untimed seconds")
    parser.add_argument("--sample-every", type=float, default=10.0, help="RSS sampling period")
    parser.add_argument("--json", default=None, help="write the soak report here")
    args = parser.parse_args()
    if not (args.requests > 0 and args.concurrency > 0 and 0 < args.time_limit <= 600):
        parser.error("need --requests > 0, --concurrency > 0 and 0 < --time-limit <= 600")
    if args.soak is not None and not 0 < args.soak <= MAX_SOAK_SECONDS:
        parser.error(f"need 0 < --soak <= {MAX_SOAK_SECONDS}")
    if not 0.5 <= args.sample_every <= 600:
        parser.error("need 0.5 <= --sample-every <= 600")
    url = urlsplit(args.url or f"http://{HOST}:1")
    if url.scheme != "http" or url.hostname != HOST or url.port is None:
        parser.error(f"--url must be http://{HOST}:PORT")

    core = Derenderer(
        str(DEFAULT_MODEL_DIR),
        served_model_names=[args.model],
        reasoning_parser="qwen3",
        tool_call_parser="hermes",
        enable_auto_tool_choice=True,
    )
    work = build_workload(core, args.model, args.response_tokens, args.prompt_once)
    scenarios = {
        "batch": batch_step(work),
        "stream": stream_step(work, chat=False),
        "parser": stream_step(work, chat=True),
    }
    chosen = args.scenarios.split(",")
    mix = args.soak_mix.split(",")
    for name in chosen + mix:
        if name not in scenarios:
            parser.error(f"unknown scenario {name!r}")

    def measure(port: int, server_pid: int | None = None) -> None:
        if args.soak is not None:
            report = soak(
                scenarios,
                mix,
                port,
                args.concurrency,
                args.soak,
                args.sample_every,
                server_pid,
                args.soak_warmup,
            )
            print_soak(report, args.concurrency, mix, args.soak)
            if args.json:
                out = dict(report, results=[_summary(r) for r in report["results"]])
                Path(args.json).write_text(json.dumps(out, indent=1))
            return
        print(
            f"target http://{HOST}:{port}  requests {args.requests}  concurrency "
            f"{args.concurrency}  time limit {args.time_limit:g} s"
        )
        n, limit = args.requests, args.time_limit
        for name in chosen:
            make = scenarios[name]
            http = partial(Http, port)
            run(name, http, make, args.warmup, args.concurrency, limit)
            print(run(f"{name} http", http, make, n, args.concurrency, limit, server_pid).line())
            if not args.no_in_process:
                # Baseline: the same requests to the bundled core in this process, one thread.
                direct = partial(InProcess, core)
                print(run(f"{name} in-process", direct, make, n, 1, limit).line())

    if args.start:
        extra = shlex.split(args.server_args)
        with started_server(args.workers, args.port, extra) as (port, pid):
            measure(port, pid)
    else:
        measure(url.port, args.server_pid)


def _summary(r: Result) -> dict:
    return {
        "name": r.name,
        "ok": len(r.latencies),
        "errors": r.errors,
        "error_samples": r.error_samples,
        "elapsed_s": r.elapsed,
        "req_per_s": r.rate(),
        "p50_ms": r.pct(0.5),
        "p99_ms": r.pct(0.99),
        "client_cpu_s": r.client_cpu,
        "server_cpu_s": r.server_cpu,
    }


if __name__ == "__main__":
    main()
