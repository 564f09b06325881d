"""O(delta) streaming: compact vs replay `stream_state` on the parser path, vs vLLM 0.33.0.

    python3 benches/bench_stream_state.py                      # the full run (several minutes)
    python3 benches/bench_stream_state.py --tokens 300 --repeats 2   # a quick smoke run
    python3 benches/bench_stream_state.py --json out.json --ports 8830-8839

Replicates the method of the vLLM baseline (docs/benchmarks.md, "O(delta) streaming"): a chat
request with one user message rendered by `/v1/chat/completions/render` to a 1991-id prompt;
4096 output ids of `<think>` + ~2460 ids of reasoning + `</think>` + an answer (seeded, realistic
text from corpus.py), the last chunk carrying `finish_reason: "length"`; one
`/v1/chat/completions/derender` call per id (`stream: true`), the full `prompt_token_ids` and the
same `chat_request` on every call, the `stream_state` of each answer sent with the next call, on
one keep-alive `http.client` connection (JSON with default separators, like replay.py's
Client). A call's latency is the client's wall time from encoding the request to decoding the
answer. Point latencies at positions 16 / 256 / 1024 / 4096: the call delivering id #p, repeated
`--repeats` times with the state returned for id #p-1; the median is reported.

In one run, side by side (reasoning parser qwen3, tool parser hermes, auto tool choice):
  1. HTTP, a `derender serve` in the default compact mode: point latencies, their ratio
     @4096 / @16 (target <= 1.2), the whole stream's wall time; also the variant where the
     client sends `prompt_token_ids` on the first call only (compact states remember it).
  2. HTTP, a second server with `--stream-state-mode replay` (vLLM's history format: every call
     replays all output so far). Its stream is capped by `--replay-cap-seconds`; past the cap the
     whole-stream figures are extrapolated with a least-squares line over the measured calls, as
     the baseline doc does, and the table says so.
  3. In-process (`Derenderer.handle`, no HTTP): the whole stream, compact vs replay.
  4. Request and response bytes (and the `stream_state` part of each) at 256 / 1024 / 4096 for
     compact, compact without the prompt after the first call, and replay (vLLM's format).
  5. A table with the figures and ratios, against the vLLM 0.33.0 figures quoted from the
     baseline doc; `--json PATH` writes everything as JSON.

Every stream is checked against the batch derender of the same ids (reasoning, content and
finish reason must be equal). Servers are spawned with `python -m derender.cli serve` on free
loopback ports (`--ports LO-HI` restricts them to a range) and stopped at the end; only
127.0.0.1 is contacted. The client is single-threaded. Not part of the test run (pytest only
collects tests/).
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from corpus import TEXT  # noqa: E402

import derender  # noqa: E402
from derender import DEFAULT_MODEL_DIR, Derenderer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
CHAT = "/v1/chat/completions/derender"
RENDER = "/v1/chat/completions/render"
MODEL = "qwen3"
PARSER_FLAGS = ["--reasoning-parser", "qwen3", "--tool-call-parser", "hermes"]
PARSER_FLAGS += ["--enable-auto-tool-choice"]
POINTS = (16, 256, 1024, 4096)
SIZE_POINTS = (256, 1024, 4096)
PROMPT_TOKENS = 1991
FULL_TOKENS = 4096
REASONING_TOKENS = 2460  # of FULL_TOKENS; scaled for --tokens
REQUEST_TIMEOUT = 120.0
STARTUP_TIMEOUT = 60.0

# vLLM 0.33.0 on this kind of machine, quoted from the project's shared docs (vllm-baseline.md)
# (qwen3_hermes = the same parser flags; qwen3_plain = no parsers).
VLLM_LATENCY_MS = {16: 5.83, 256: 22.9, 1024: 79.9, 4096: 285.9}
VLLM_PLAIN_LATENCY_MS = {16: 2.96, 256: 2.97, 1024: 2.93, 4096: 3.12}
VLLM_REQUEST_BYTES = {256: 21_471, 1024: 27_995, 4096: 54_094}
VLLM_RESPONSE_BYTES = {256: 2_318, 1024: 7_303, 4096: 27_261}
VLLM_STREAM_SECONDS = 590.0  # extrapolated (3165 calls measured in 360 s)
VLLM_PLAIN_STREAM_SECONDS = 12.1
VLLM_TOTAL_REQUEST_MB = 150.0  # extrapolated
VLLM_TOTAL_RESPONSE_MB = 57.0  # extrapolated

Json = dict[str, Any]


# --- inputs ---------------------------------------------------------------------------------


def paragraphs() -> list[str]:
    """The corpus split into paragraphs, a fenced code block kept whole."""
    out: list[str] = []
    for part in TEXT.split("\n\n"):
        if out and out[-1].count("```") % 2 == 1:
            out[-1] += "\n\n" + part
        else:
            out.append(part)
    return out


def seeded_text(rng: random.Random, min_chars: int) -> str:
    """Corpus paragraphs in seeded orders, joined, at least `min_chars` long."""
    parts: list[str] = []
    size = 0
    pool = paragraphs()
    while size < min_chars:
        rng.shuffle(pool)
        parts += pool
        size = sum(len(p) + 2 for p in parts)
    return "\n\n".join(parts)


def cut_to_tokens(text: str, count: Callable[[str], int], target: int) -> str:
    """The longest prefix of `text` with `count(prefix) <= target` (binary search on
    characters; token counts grow with the prefix up to merges at the cut)."""
    lo, hi = 0, len(text)
    if count(text) <= target:
        return text
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(text[:mid]) <= target:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def post_core(core: Derenderer, path: str, body: Json) -> Json:
    status, out = core.handle(path, json.dumps(body, ensure_ascii=False).encode())
    if status != 200:
        raise SystemExit(f"{path} answered {status}: {out[:500]!r}")
    answer: Json = json.loads(out)
    return answer


@dataclass
class Inputs:
    chat_request: Json
    prompt: list[int]
    ids: list[int]
    think_end: int | None  # 1-based position of `</think>` in ids
    batch: Json  # reasoning, content, finish of the batch derender of ids

    def describe(self) -> Json:
        request_bytes = len(json.dumps(self.chat_request, ensure_ascii=False).encode())
        prompt_bytes = len(json.dumps(self.prompt).encode())
        return {
            "prompt_token_ids": len(self.prompt),
            "prompt_token_ids_json_bytes": prompt_bytes,
            "chat_request_json_bytes": request_bytes,
            "output_ids": len(self.ids),
            "think_end_position": self.think_end,
        }


def build_inputs(core: Derenderer, tokens: int, seed: int) -> Inputs:
    """The chat request, its rendered prompt and the output ids, all seeded."""
    rng = random.Random(seed)

    def request_for(content: str) -> Json:
        messages = [{"role": "user", "content": content}]
        return {"model": MODEL, "messages": messages, "max_tokens": tokens, "stream": True}

    def prompt_len(content: str) -> int:
        return len(post_core(core, RENDER, request_for(content))["token_ids"])

    content = cut_to_tokens(seeded_text(rng, 8 * PROMPT_TOKENS), prompt_len, PROMPT_TOKENS)
    chat_request = request_for(content)
    prompt: list[int] = post_core(core, RENDER, chat_request)["token_ids"]

    reasoning_target = math.ceil(tokens * REASONING_TOKENS / FULL_TOKENS)
    reasoning = cut_to_tokens(
        seeded_text(rng, 8 * reasoning_target), lambda t: len(core.encode(t)), reasoning_target
    )
    answer = seeded_text(rng, 8 * tokens)
    ids = core.encode("<think>\n" + reasoning + "\n</think>\n\n" + answer)[:tokens]
    if len(ids) != tokens:
        raise SystemExit(f"the output text gave {len(ids)} ids, not {tokens}")
    end = core.encode("</think>")
    think_end = ids.index(end[0]) + 1 if len(end) == 1 and end[0] in ids else None

    choice = {"index": 0, "finish_reason": "length", "token_ids": ids}
    body = {
        "model": MODEL,
        "generate_response": {"request_id": "bench-batch", "choices": [choice]},
        "prompt_token_ids": prompt,
        "chat_request": chat_request,
    }
    message = post_core(core, CHAT, body)["choices"][0]
    batch = {
        "reasoning": message["message"].get("reasoning") or "",
        "content": message["message"].get("content") or "",
        "finish": message["finish_reason"],
    }
    return Inputs(chat_request, prompt, ids, think_end, batch)


def chunk_body(inputs: Inputs, pos: int, state: Any, with_prompt: bool) -> Json:
    """The request delivering output id #pos (1-based), shaped like vLLM's recorded requests."""
    last = pos == len(inputs.ids)
    choice = {
        "index": 0,
        "finish_reason": "length" if last else None,
        "stop_reason": None,
        "token_ids": [inputs.ids[pos - 1]],
        "routed_experts": None,
        "sampling_mask": None,
        "weight_versions": None,
        "logprobs": None,
    }
    body: Json = {
        "stream": True,
        "model": MODEL,
        "generate_chunk": {
            "request_id": "bench-stream",
            "usage": None,
            "output_mode": "tokens",
            "choices": [choice],
        },
        "stream_state": state,
        "prompt_tokens": len(inputs.prompt),
    }
    if with_prompt:
        body["prompt_token_ids"] = inputs.prompt
    body["chat_request"] = inputs.chat_request
    return body


def replay_state(inputs: Inputs, pos: int) -> Json:
    """The replay-mode (vLLM) state returned for id #pos-1 of this stream, built as the parser
    path builds it: every earlier id, one chunk each, the last 4 ids as logprob context."""
    ids = inputs.ids[: pos - 1]
    return {
        "prev_tokens": [],
        "prefix_offset": 0,
        "read_offset": 0,
        "role_sent": True,
        "logprob_context_token_ids": ids[-4:],
        "logprob_text_offset": 0,
        "output_token_ids": ids,
        "output_chunk_lens": [1] * len(ids),
        "tools_streamed": False,
        "last_tool_call_ids": [],
    }


# --- transports -----------------------------------------------------------------------------


class HttpClient:
    """One keep-alive loopback connection (as replay.py's Client), reopened after an error."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn: http.client.HTTPConnection | None = None

    def send(self, path: str, data: bytes) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/json"}
        for attempt in range(3):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(HOST, self.port, timeout=REQUEST_TIMEOUT)
            try:
                self.conn.request("POST", path, body=data, headers=headers)
                resp = self.conn.getresponse()
                return resp.status, resp.read()
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt == 2:
                    raise
                time.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class InProcess:
    """`core.handle` in this process; also sums the time spent inside it."""

    def __init__(self, core: Derenderer) -> None:
        self.core = core
        self.inside = 0.0

    def send(self, path: str, data: bytes) -> tuple[int, bytes]:
        t0 = time.perf_counter()
        status, out = self.core.handle(path, data)
        self.inside += time.perf_counter() - t0
        return status, out


Transport = HttpClient | InProcess


@dataclass
class Reply:
    answer: Json
    seconds: float
    request_bytes: int
    response_bytes: int


def timed_post(transport: Transport, body: Json) -> Reply:
    """One stream call: encode, send, read, decode (the client's whole cost)."""
    t0 = time.perf_counter()
    data = json.dumps(body, ensure_ascii=False).encode()
    status, out = transport.send(CHAT, data)
    answer: Json = json.loads(out)
    seconds = time.perf_counter() - t0
    if status != 200:
        raise SystemExit(f"a stream call answered {status}: {out[:500]!r}")
    return Reply(answer, seconds, len(data), len(out))


def state_bytes(state: Any, *, compact: bool) -> int:
    """A state's JSON size: as the client sends it (default separators) or as the server
    answers it (compact separators)."""
    if state is None:
        return 0
    separators = (",", ":") if compact else None
    return len(json.dumps(state, ensure_ascii=False, separators=separators).encode())


# --- servers --------------------------------------------------------------------------------


def parse_ports(spec: str | None) -> range | None:
    if not spec:
        return None
    lo, _, hi = spec.partition("-")
    ports = range(int(lo), int(hi or lo) + 1)
    if not ports or ports.start < 1024 or ports.stop > 65536:
        raise SystemExit(f"--ports {spec}: need LO-HI within 1024-65535")
    return ports


def free_port(ports: range | None) -> int:
    for port in ports or [0]:
        with socket.socket() as s:
            try:
                s.bind((HOST, port))
            except OSError:
                continue
            chosen: int = s.getsockname()[1]
            return chosen
    raise SystemExit(f"no free port in {ports}")


def health(port: int) -> bool:
    conn = http.client.HTTPConnection(HOST, port, timeout=2)
    try:
        conn.request("GET", "/health")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process (Linux /proc), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Server:
    port: int
    pid: int


@contextmanager
def serve(extra: list[str], ports: range | None) -> Iterator[Server]:
    """`derender serve` (this interpreter's derender) on a free loopback port; stopped on exit."""
    port = free_port(ports)
    cmd = [sys.executable, "-m", "derender.cli", "serve", str(DEFAULT_MODEL_DIR)]
    cmd += ["--host", HOST, "--port", str(port), "--served-model-name", MODEL]
    cmd += PARSER_FLAGS + extra
    env = {k: v for k, v in os.environ.items() if k != "DERENDER_STREAM_STATE_SECRET"}
    package_root = str(Path(derender.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while not health(port):
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    tail = log.read()[-2000:].decode(errors="replace")
                    raise SystemExit(f"server on port {port} did not start: {tail}")
                time.sleep(0.1)
            yield Server(port, proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# --- measurements ---------------------------------------------------------------------------


@dataclass
class Sizes:
    request: int
    request_state: int
    response: int
    response_state: int


@dataclass
class Stream:
    """One whole stream, position 1 to the end or to the time cap."""

    name: str
    tokens: int
    calls: int = 0
    elapsed: float = 0.0
    inside_core: float | None = None  # in-process: seconds inside core.handle
    server_cpu: float | None = None
    request_total: int = 0
    response_total: int = 0
    capped: bool = False
    fit: Json | None = None  # the extrapolation, when capped
    sizes: dict[int, Sizes] = field(default_factory=dict)
    matches_batch: bool | None = None
    max_response_state: int = 0
    latencies: list[float] = field(default_factory=list, repr=False)
    request_bytes: list[int] = field(default_factory=list, repr=False)
    response_bytes: list[int] = field(default_factory=list, repr=False)

    @property
    def total_seconds(self) -> float:
        return float(self.fit["seconds"]) if self.fit else self.elapsed

    def summary(self) -> Json:
        out = asdict(self)
        for key in ("latencies", "request_bytes", "response_bytes"):
            del out[key]
        out["total_seconds"] = self.total_seconds
        out["median_ms_by_window"] = windows(self.latencies)
        return out


def windows(latencies: list[float]) -> dict[str, float]:
    """Median latency (ms) of the calls at positions a..b, a few windows along the stream."""
    out = {}
    for a, b in [(1, 100), (500, 600), (1500, 1600), (2500, 2600), (3500, 3600), (3997, 4096)]:
        if len(latencies) >= b:
            out[f"{a}-{b}"] = statistics.median(latencies[a - 1 : b]) * 1e3
    return out


def extrapolate(values: list[float], measured: float, n: int) -> tuple[float, float, float]:
    """`measured` plus a least-squares line over `values` (one per position from 1) for the
    positions after them up to n; returns (total, intercept, slope)."""
    xs = [float(x) for x in range(1, len(values) + 1)]
    slope, intercept = statistics.linear_regression(xs, values)
    rest = sum(intercept + slope * x for x in range(len(values) + 1, n + 1))
    return measured + rest, intercept, slope


def run_stream(
    name: str,
    transport: Transport,
    inputs: Inputs,
    with_prompt: bool,
    cap: float,
    keep: set[int],
    server: Server | None = None,
) -> tuple[Stream, dict[int, Any]]:
    """Stream every id, one per call; returns the run and the states returned for the ids
    before the positions in `keep` (state for #p-1 under key p)."""
    n = len(inputs.ids)
    run = Stream(name, n)
    states: dict[int, Any] = {}
    assembled = {"reasoning": "", "content": "", "finish": None}
    state: Any = None
    cpu0 = cpu_seconds(server.pid) if server else None
    inside0 = transport.inside if isinstance(transport, InProcess) else 0.0
    t0 = time.perf_counter()
    for pos in range(1, n + 1):
        body = chunk_body(inputs, pos, state, with_prompt or state is None)
        reply = timed_post(transport, body)
        run.latencies.append(reply.seconds)
        run.request_bytes.append(reply.request_bytes)
        run.response_bytes.append(reply.response_bytes)
        sent_state, state = state, reply.answer["stream_state"]
        returned = state_bytes(state, compact=True)
        run.max_response_state = max(run.max_response_state, returned)
        if pos in SIZE_POINTS or pos == n:
            sent = state_bytes(sent_state, compact=False)
            run.sizes[pos] = Sizes(reply.request_bytes, sent, reply.response_bytes, returned)
        if pos + 1 in keep:
            states[pos + 1] = state
        for choice in reply.answer["chunk"]["choices"]:
            assembled["reasoning"] += choice["delta"].get("reasoning") or ""
            assembled["content"] += choice["delta"].get("content") or ""
            assembled["finish"] = choice.get("finish_reason") or assembled["finish"]
        if pos < n and time.perf_counter() - t0 > cap:
            run.capped = True
            break
    run.elapsed = time.perf_counter() - t0
    run.calls = len(run.latencies)
    run.request_total = sum(run.request_bytes)
    run.response_total = sum(run.response_bytes)
    if isinstance(transport, InProcess):
        run.inside_core = transport.inside - inside0
    if server is not None:
        cpu1 = cpu_seconds(server.pid)
        run.server_cpu = cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None
    if run.capped:
        seconds, a, b = extrapolate(run.latencies, run.elapsed, n)
        req, ra, rb = extrapolate([float(x) for x in run.request_bytes], run.request_total, n)
        resp, sa, sb = extrapolate([float(x) for x in run.response_bytes], run.response_total, n)
        run.fit = {
            "seconds": seconds,
            "latency_ms": [a * 1e3, b * 1e3],
            "request_bytes_total": req,
            "request_bytes": [ra, rb],
            "response_bytes_total": resp,
            "response_bytes": [sa, sb],
        }
    else:
        run.matches_batch = assembled == inputs.batch
    return run, states


def point_latencies(
    transport: Transport,
    inputs: Inputs,
    states: dict[int, Any],
    points: list[int],
    repeats: int,
    with_prompt: bool,
    sizes: dict[int, Sizes] | None = None,
) -> dict[int, float]:
    """Median ms of the call delivering id #p with the state returned for #p-1; the call's
    bytes go to `sizes` where it has none for p (a capped stream)."""
    out = {}
    for p in points:
        if p not in states:
            continue
        body = chunk_body(inputs, p, states[p], with_prompt)
        replies = [timed_post(transport, body) for _ in range(repeats)]
        out[p] = statistics.median(r.seconds for r in replies) * 1e3
        sized = p in SIZE_POINTS or p == len(inputs.ids)
        if sizes is not None and sized and p not in sizes:
            r = replies[-1]
            sent = state_bytes(states[p], compact=False)
            returned = state_bytes(r.answer["stream_state"], compact=True)
            sizes[p] = Sizes(r.request_bytes, sent, r.response_bytes, returned)
    return out


# --- report ---------------------------------------------------------------------------------


def fmt(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:,.2f}x"


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = [
        "| " + " | ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows
    ]
    return "\n".join([line, rule, *body])


def report(res: Json) -> str:
    n = res["inputs"]["output_ids"]
    lat: dict[str, dict[int, float]] = res["latency_ms"]
    runs: dict[str, Json] = res["streams"]
    points = sorted({p for d in lat.values() for p in d})
    full = n == FULL_TOKENS
    out = []

    out.append(f"Point latency, ms (median of {res['repeats']}; the call delivering id #p):")
    rows = []
    for p in points:
        c, cn, r = lat["compact"].get(p), lat["compact_no_prompt"].get(p), lat["replay"].get(p)
        v = VLLM_LATENCY_MS.get(p)
        rows.append([str(p), fmt(c, 3), fmt(cn, 3), fmt(r, 3), fmt(v), ratio(r, c), ratio(v, c)])
    first, last = points[0], points[-1]
    growth = [
        ratio(lat[k].get(last), lat[k].get(first))
        for k in ("compact", "compact_no_prompt", "replay")
    ]
    vllm_growth = ratio(VLLM_LATENCY_MS[4096], VLLM_LATENCY_MS[16]) if full else "-"
    rows.append([f"@{last} / @{first}", *growth, vllm_growth, "", ""])
    headers = ["p", "compact", "compact, prompt once", "replay", "vLLM 0.33"]
    out.append(table([*headers, "replay / compact", "vLLM / compact"], rows))
    target = lat["compact"].get(last, math.nan) / lat["compact"].get(first, math.nan)
    verdict = "met" if target <= 1.2 else "NOT met"
    out.append(f"compact @{last} / @{first} = {target:.2f} (target <= 1.2: {verdict})")

    out.append("")
    out.append(f"Whole stream, {n} calls of one id:")
    rows = []
    for key, label in [
        ("http_compact", "HTTP compact"),
        ("http_compact_no_prompt", "HTTP compact, prompt once"),
        ("http_replay", "HTTP replay"),
        ("inproc_compact", "in-process compact"),
        ("inproc_replay", "in-process replay"),
    ]:
        run = runs[key]
        fit = run["fit"]
        total = run["total_seconds"]
        note = (
            "" if fit is None else f"extrapolated: {run['calls']} calls in {run['elapsed']:.1f} s"
        )
        req = fit["request_bytes_total"] if fit else run["request_total"]
        resp = fit["response_bytes_total"] if fit else run["response_total"]
        rows.append(
            [
                label,
                fmt(total, 2),
                fmt(run["server_cpu"], 2),
                fmt(run["inside_core"], 2),
                fmt(req / 1e6, 1),
                fmt(resp / 1e6, 1),
                fmt(run["max_response_state"] / 1e3, 1),
                {True: "yes", False: "NO", None: "-"}[run["matches_batch"]],
                note,
            ]
        )
    if full:
        vllm = "vLLM 0.33 parser (doc)"
        note = "extrapolated in the doc"
        sizes = [fmt(VLLM_TOTAL_REQUEST_MB, 1), fmt(VLLM_TOTAL_RESPONSE_MB, 1)]
        rows.append([vllm, fmt(VLLM_STREAM_SECONDS, 1), "-", "-", *sizes, "-", "-", note])
        plain = "vLLM 0.33 plain, no parser (doc)"
        wall = fmt(VLLM_PLAIN_STREAM_SECONDS, 1)
        rows.append([plain, wall, "-", "-", "79.1", "2.7", "-", "-", "measured in the doc"])
    headers = ["stream", "wall s", "server CPU s", "in core.handle s", "request MB", "response MB"]
    headers += ["max state KB", "= batch", "note"]
    out.append(table(headers, rows))
    out.append(
        "wall = the client's time for the whole stream (extrapolated past a cap); in-process "
        "wall - in core.handle = the client's JSON work; max state = largest stream_state answered"
    )
    hc, hr = runs["http_compact"]["total_seconds"], runs["http_replay"]["total_seconds"]
    ic, ir = runs["inproc_compact"]["total_seconds"], runs["inproc_replay"]["total_seconds"]
    out.append(
        f"HTTP replay / compact: {ratio(hr, hc)}; in-process replay / compact: {ratio(ir, ic)}"
    )
    if full:
        out.append(
            f"vLLM parser stream / HTTP compact: {ratio(VLLM_STREAM_SECONDS, hc)}; "
            f"vLLM plain stream / HTTP compact: {ratio(VLLM_PLAIN_STREAM_SECONDS, hc)}"
        )

    out.append("")
    out.append("Bytes of the call delivering id #p (state = the stream_state part alone):")
    rows = []
    for p in sorted({p for run in runs.values() for p in run["sizes"]}):
        for key, label in [
            ("http_compact", "compact"),
            ("http_compact_no_prompt", "compact, prompt once"),
            ("http_replay", "replay (vLLM format)"),
        ]:
            s = runs[key]["sizes"].get(p)
            if s is None:
                continue
            vreq, vresp = VLLM_REQUEST_BYTES.get(p), VLLM_RESPONSE_BYTES.get(p)
            rows.append(
                [
                    str(p),
                    label,
                    f"{s['request']:,}",
                    f"{s['request_state']:,}",
                    f"{s['response']:,}",
                    f"{s['response_state']:,}",
                    ratio(s["request"], vreq),
                    ratio(s["response"], vresp),
                ]
            )
        if p in VLLM_REQUEST_BYTES:
            vreq, vresp = VLLM_REQUEST_BYTES[p], VLLM_RESPONSE_BYTES[p]
            rows.append([str(p), "vLLM 0.33 (doc)", f"{vreq:,}", "-", f"{vresp:,}", "-", "", ""])
    headers = ["p", "run", "request B", "req state B", "response B", "resp state B"]
    out.append(table([*headers, "req / vLLM", "resp / vLLM"], rows))
    i = res["inputs"]
    out.append(
        f"Inputs: prompt {i['prompt_token_ids']} ids ({i['prompt_token_ids_json_bytes']:,} B "
        f"of JSON), chat_request {i['chat_request_json_bytes']:,} B, {n} output ids, "
        f"</think> at #{i['think_end_position']}."
    )
    return "\n".join(out)


# --- main -----------------------------------------------------------------------------------


def environment() -> Json:
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%h %s"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    native = Path(derender._native.__file__)
    built = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(native.stat().st_mtime))
    return {
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "commit": commit,
        "native_module": str(native),
        "native_built": built,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=FULL_TOKENS, help="output ids per stream")
    parser.add_argument("--repeats", type=int, default=5, help="calls per point latency")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument("--ports", default=None, help="LO-HI: spawn the servers on ports here")
    parser.add_argument(
        "--cap-seconds", type=float, default=300.0, help="time cap of each compact stream"
    )
    parser.add_argument(
        "--replay-cap-seconds",
        type=float,
        default=360.0,
        help="time cap of each replay stream (the baseline's 6 minutes); extrapolated past it",
    )
    args = parser.parse_args()
    if not 16 <= args.tokens <= 16_384 or not 1 <= args.repeats <= 50:
        parser.error("need 16 <= --tokens <= 16384 and 1 <= --repeats <= 50")
    if not (0 < args.cap_seconds <= 3600 and 0 < args.replay_cap_seconds <= 3600):
        parser.error("caps must be within (0, 3600] seconds")
    ports = parse_ports(args.ports)

    env = environment()
    print(f"{env['started']}  commit {env['commit']}  native built {env['native_built']}")
    kwargs: Json = {
        "served_model_names": [MODEL],
        "reasoning_parser": "qwen3",
        "tool_call_parser": "hermes",
        "enable_auto_tool_choice": True,
    }
    compact_core = Derenderer(str(DEFAULT_MODEL_DIR), stream_state_mode="compact", **kwargs)
    replay_core = Derenderer(str(DEFAULT_MODEL_DIR), stream_state_mode="replay", **kwargs)
    inputs = build_inputs(compact_core, args.tokens, args.seed)
    n = len(inputs.ids)
    points = sorted({p for p in POINTS if p <= n} | {n})
    keep = set(points)
    print(json.dumps(inputs.describe()))

    streams: dict[str, Stream] = {}
    latency: dict[str, dict[int, float]] = {}

    def done(run: Stream) -> None:
        streams[run.name] = run
        cap = "  (cap hit)" if run.capped else ""
        print(f"  {run.name}: {run.calls} calls, {run.elapsed:.2f} s{cap}", flush=True)

    print("in-process streams ...", flush=True)
    cap, replay_cap = args.cap_seconds, args.replay_cap_seconds
    done(run_stream("inproc_compact", InProcess(compact_core), inputs, True, cap, set())[0])
    run, real_replay_states = run_stream(
        "inproc_replay", InProcess(replay_core), inputs, True, replay_cap, keep
    )
    done(run)

    with serve([], ports) as server:
        print(f"HTTP compact server on port {server.port} ...", flush=True)
        client = HttpClient(server.port)
        status, rendered = client.send(RENDER, json.dumps(inputs.chat_request).encode())
        if status != 200 or json.loads(rendered)["token_ids"] != inputs.prompt:
            raise SystemExit("the server's render differs from the in-process render")
        for name, with_prompt in [("compact", True), ("compact_no_prompt", False)]:
            run, states = run_stream(f"http_{name}", client, inputs, with_prompt, cap, keep, server)
            done(run)
            latency[name] = point_latencies(
                client, inputs, states, points, args.repeats, with_prompt
            )
        client.close()

    with serve(["--stream-state-mode", "replay"], ports) as server:
        print(f"HTTP replay server on port {server.port} ...", flush=True)
        client = HttpClient(server.port)
        run, states = run_stream("http_replay", client, inputs, True, replay_cap, keep, server)
        done(run)
        real_replay_states.update(states)
        # Past the cap, a state built as the replay path builds it (checked against every
        # real one we have).
        for p, state in real_replay_states.items():
            if state != replay_state(inputs, p):
                raise SystemExit(f"the synthesized replay state for #{p} differs from the real one")
        synthesized = [p for p in points if p not in states]
        states.update({p: replay_state(inputs, p) for p in synthesized})
        latency["replay"] = point_latencies(
            client, inputs, states, points, args.repeats, True, sizes=run.sizes
        )
        client.close()

    env["loadavg_end"] = os.getloadavg()
    res: Json = {
        "environment": env,
        "repeats": args.repeats,
        "seed": args.seed,
        "inputs": inputs.describe(),
        "latency_ms": latency,
        "replay_points_with_synthesized_state": synthesized,
        "streams": {k: v.summary() for k, v in streams.items()},
        "vllm_baseline": {
            "latency_ms": VLLM_LATENCY_MS,
            "plain_latency_ms": VLLM_PLAIN_LATENCY_MS,
            "request_bytes": VLLM_REQUEST_BYTES,
            "response_bytes": VLLM_RESPONSE_BYTES,
            "stream_seconds": VLLM_STREAM_SECONDS,
            "plain_stream_seconds": VLLM_PLAIN_STREAM_SECONDS,
        },
    }
    print()
    print(report(res))
    if synthesized:
        print(f"replay points {synthesized}: past the cap, with a synthesized state")
    loads = [" ".join(f"{x:.2f}" for x in env[k]) for k in ("loadavg_start", "loadavg_end")]
    print(f"load average (1/5/15 min): start {loads[0]}, end {loads[1]}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
