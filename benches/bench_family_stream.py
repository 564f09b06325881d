"""An encoder family's parser stream, one id per call: derender vs live vLLM 0.33.0.

    PYTHONPATH=<derender build> python3 benches/bench_family_stream.py          # gpt-oss, full
    PYTHONPATH=<derender build> python3 benches/bench_family_stream.py --family kimi_k3
    PYTHONPATH=<derender build> python3 benches/bench_family_stream.py --family cohere
    PYTHONPATH=<derender build> python3 benches/bench_family_stream.py --tokens 300 --repeats 2
    python3 benches/bench_family_stream.py --json out.json --vllm-cap-seconds 240

The method of bench_stream_state.py (whose helpers this imports), on a family's fixture with
its config's parser flags (`--family`, FAMILIES below):

- `harmony` (issue 20): tests/models/gpt_oss (the real o200k_harmony vocabulary),
  `--reasoning-parser openai_gptoss --tool-call-parser openai --enable-auto-tool-choice`,
  `VLLM_SYSTEM_START_DATE=2026-01-15`; output `<|channel|>analysis<|message|>` + reasoning +
  `<|end|><|start|>assistant<|channel|>final<|message|>` + answer.
- `kimi_k3` (issue 21): tests/models/kimi_k3 (a stand-in vocabulary; vLLM runs its remote-code
  tokenizer module, `--trust-remote-code`), `--tool-call-parser kimi_k3 --enable-auto-tool-choice
  --reasoning-parser kimi_k3`; output reasoning (the prompt ends in `<|open|>think<|sep|>`) +
  `<|close|>think<|sep|><|open|>response<|sep|>` + answer.
- `cohere` (issue 21): tests/models/cohere_command (Cohere's real vocabulary; vLLM needs
  `cohere-melody` in its venv), `--tokenizer-mode cohere --tool-call-parser cohere_command4
  --enable-auto-tool-choice --reasoning-parser cohere_command4`; output `<|START_THINKING|>` +
  reasoning + `<|END_THINKING|><|START_RESPONSE|>` + answer.

- Prompt: one user message of seeded corpus text, rendered by `/v1/chat/completions/render`,
  cut to 1991 prompt ids.
- Output: the family's reasoning opener + seeded reasoning (~60 % of the ids) + its transition
  to the answer + a seeded answer, encoded with the model's tokenizer and cut to exactly
  --tokens ids (4096); the last chunk carries `finish_reason: "length"`.
- One `POST /v1/chat/completions/derender` per id (`stream: true`), the full `prompt_token_ids`
  and the same `chat_request` on every call, the `stream_state` of each answer sent with the
  next call, on one keep-alive `http.client` connection. Point latency at 16 / 256 / 1024 / 4096:
  the call delivering id #p re-sent --repeats times with the state returned for #p-1; median.

In one run, side by side, with the same client:
  1. `derender serve` (this interpreter's derender, default compact states);
  2. `derender serve --stream-state-mode replay` (vLLM's history format), capped by
     --replay-cap-seconds;
  3. live vLLM 0.33.0 (`vllm launch render`, VLLM_TARGET_DEVICE=cpu, the same flags) on a temp
     copy of the fixture (tokenizer.json unpacked; for gpt-oss, TIKTOKEN_ENCODINGS_BASE at an
     unpacked o200k_base.tiktoken), its own `stream_state` echoed back. Its per-call cost grows
     with the position: the stream is capped by --vllm-cap-seconds and the whole-stream time past
     the cap is extrapolated with bench_stream_state.py's least-squares line over the measured
     calls. Point latencies past the cap use a state built as vLLM builds it (checked equal to
     every real state the stream returned).

Every uncapped derender stream is checked to assemble (reasoning, content, finish reason) to
derender's batch answer for the same ids; vLLM's batch answer and render are checked equal to
derender's. Only 127.0.0.1 is used; the servers are stopped at the end (vLLM's process group).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ["VLLM_SYSTEM_START_DATE"] = "2026-01-15"  # the pinned Harmony date, before derender

sys.path.insert(0, str(Path(__file__).parent))
import bench_stream_state as bss  # noqa: E402
from bench_stream_state import (  # noqa: E402
    CHAT,
    HOST,
    RENDER,
    HttpClient,
    Inputs,
    Server,
    Stream,
    cut_to_tokens,
    environment,
    extrapolate,
    fmt,
    free_port,
    health,
    parse_ports,
    point_latencies,
    post_core,
    ratio,
    replay_state,
    run_stream,
    seeded_text,
    table,
)

import derender  # noqa: E402
from derender import Derenderer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# vLLM 0.33.0 lives in a private venv, never in derender's dependencies: name its `vllm`.
VLLM = Path(os.environ.get("DERENDER_BENCH_VLLM", "vllm"))
POINTS = (16, 256, 1024, 4096)
PROMPT_TOKENS = 1991
FULL_TOKENS = 4096
REASONING_SHARE = 2460 / 4096


@dataclass(frozen=True)
class Family:
    """What the bench needs of a family: its fixture, served name and parser flags, the text
    around the reasoning in an output, and what vLLM needs to start on the fixture."""

    model_dir: Path
    model: str
    reasoning_parser: str
    tool_parser: str
    opener: str  # before the reasoning
    to_answer: str  # between the reasoning and the answer
    vllm_flags: tuple[str, ...] = ()
    tokenizer_mode: str | None = None  # the mode `serve` picks (auto) for the in-process core
    tiktoken: bool = False  # o200k_base.tiktoken.gz in the fixture, for TIKTOKEN_ENCODINGS_BASE

    @property
    def parser_flags(self) -> list[str]:
        return [
            "--reasoning-parser",
            self.reasoning_parser,
            "--tool-call-parser",
            self.tool_parser,
            "--enable-auto-tool-choice",
        ]


FAMILIES = {
    "harmony": Family(
        ROOT / "tests" / "models" / "gpt_oss",
        "gpt-oss",
        "openai_gptoss",
        "openai",
        "<|channel|>analysis<|message|>",
        "<|end|><|start|>assistant<|channel|>final<|message|>",
        tiktoken=True,
    ),
    "kimi_k3": Family(
        ROOT / "tests" / "models" / "kimi_k3",
        "kimi_k3",
        "kimi_k3",
        "kimi_k3",
        "",
        "<|close|>think<|sep|><|open|>response<|sep|>",
        vllm_flags=("--trust-remote-code",),
        tokenizer_mode="kimi_k3",
    ),
    "cohere": Family(
        ROOT / "tests" / "models" / "cohere_command",
        "cohere_command4",
        "cohere_command4",
        "cohere_command4",
        "<|START_THINKING|>",
        "<|END_THINKING|><|START_RESPONSE|>",
        vllm_flags=("--tokenizer-mode", "cohere"),  # only the flag picks it, in both servers
        tokenizer_mode="cohere",
    ),
}
FAMILY = FAMILIES["harmony"]
STARTUP_TIMEOUT = 60.0
VLLM_STARTUP_TIMEOUT = 240.0

Json = dict[str, Any]


# --- inputs ---------------------------------------------------------------------------------


def build_inputs(core: Derenderer, tokens: int, seed: int) -> Inputs:
    """The chat request, its rendered prompt and the family's output ids, all seeded."""
    rng = random.Random(seed)

    def request_for(content: str) -> Json:
        messages = [{"role": "user", "content": content}]
        return {"model": FAMILY.model, "messages": messages, "max_tokens": tokens, "stream": True}

    def prompt_len(content: str) -> int:
        return len(post_core(core, RENDER, request_for(content))["token_ids"])

    content = cut_to_tokens(seeded_text(rng, 8 * PROMPT_TOKENS), prompt_len, PROMPT_TOKENS)
    chat_request = request_for(content)
    prompt: list[int] = post_core(core, RENDER, chat_request)["token_ids"]

    reasoning_target = math.ceil(tokens * REASONING_SHARE)
    reasoning = cut_to_tokens(
        seeded_text(rng, 8 * reasoning_target), lambda t: len(core.encode(t)), reasoning_target
    )
    answer = seeded_text(rng, 8 * tokens)
    ids = core.encode(FAMILY.opener + reasoning + FAMILY.to_answer + answer)[:tokens]
    if len(ids) != tokens:
        raise SystemExit(f"the output text gave {len(ids)} ids, not {tokens}")
    marker = core.encode(FAMILY.to_answer)
    final_at = next(
        (i + len(marker) for i in range(len(ids)) if ids[i : i + len(marker)] == marker), None
    )
    batch = batch_answer(core.handle, chat_request, prompt, ids)
    return Inputs(chat_request, prompt, ids, final_at, batch)


def batch_body(chat_request: Json, prompt: list[int], ids: list[int]) -> Json:
    choice = {"index": 0, "finish_reason": "length", "token_ids": ids}
    return {
        "model": FAMILY.model,
        "generate_response": {"request_id": "bench-batch", "choices": [choice]},
        "prompt_token_ids": prompt,
        "chat_request": chat_request,
    }


def batch_answer(send: Any, chat_request: Json, prompt: list[int], ids: list[int]) -> Json:
    """reasoning, content and finish reason of a batch derender of `ids` via `send`."""
    data = json.dumps(batch_body(chat_request, prompt, ids), ensure_ascii=False).encode()
    status, out = send(CHAT, data)
    if status != 200:
        raise SystemExit(f"batch derender answered {status}: {out[:500]!r}")
    choice = json.loads(out)["choices"][0]
    return {
        "reasoning": choice["message"].get("reasoning") or "",
        "content": choice["message"].get("content") or "",
        "finish": choice["finish_reason"],
    }


# --- servers --------------------------------------------------------------------------------


@contextmanager
def spawned(
    cmd: list[str], env: dict[str, str], port: int, timeout: float, label: str
) -> Iterator[Server]:
    """A server in its own process group, waited for on /health; the group is stopped on
    exit (SIGTERM, then SIGKILL after 20 s)."""
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            deadline = time.monotonic() + timeout
            while not health(port):
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    tail = log.read()[-3000:].decode(errors="replace")
                    raise SystemExit(f"{label} on port {port} did not start: {tail}")
                time.sleep(0.25)
            yield Server(port, proc.pid)
        finally:
            for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue


def derender_serve(extra: list[str], ports: range | None) -> Any:
    """`python -m derender.cli serve` of this interpreter's derender (PYTHONPATH passed on)."""
    port = free_port(ports)
    cmd = [sys.executable, "-m", "derender.cli", "serve", str(FAMILY.model_dir)]
    cmd += ["--host", HOST, "--port", str(port), "--served-model-name", FAMILY.model]
    cmd += FAMILY.parser_flags + list(FAMILY.vllm_flags) + extra
    env = {k: v for k, v in os.environ.items() if k != "DERENDER_STREAM_STATE_SECRET"}
    package_root = str(Path(derender.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    return spawned(cmd, env, port, STARTUP_TIMEOUT, "derender serve")


@contextmanager
def vllm_serve(vllm: Path, ports: range | None) -> Iterator[Server]:
    """`vllm launch render` on a temp copy of the fixture, as its README says: tokenizer.json
    unpacked (and o200k_base.tiktoken unpacked under TIKTOKEN_ENCODINGS_BASE for gpt-oss)."""
    with tempfile.TemporaryDirectory(prefix="family-vllm-") as tmp:
        model = Path(tmp) / "model"
        shutil.copytree(FAMILY.model_dir, model)
        with (
            gzip.open(model / "tokenizer.json.gz") as src,
            open(model / "tokenizer.json", "wb") as dst,
        ):
            shutil.copyfileobj(src, dst)
        (model / "tokenizer.json.gz").unlink()
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env.update(VLLM_SYSTEM_START_DATE="2026-01-15", VLLM_TARGET_DEVICE="cpu")
        if FAMILY.tiktoken:
            enc = Path(tmp) / "enc"
            enc.mkdir()
            with gzip.open(model / "o200k_base.tiktoken.gz") as src:
                (enc / "o200k_base.tiktoken").write_bytes(src.read())
            env["TIKTOKEN_ENCODINGS_BASE"] = str(enc)
        port = free_port(ports)
        cmd = [str(vllm), "launch", "render", str(model), "--host", HOST, "--port", str(port)]
        cmd += ["--served-model-name", FAMILY.model, *FAMILY.parser_flags, *FAMILY.vllm_flags]
        with spawned(cmd, env, port, VLLM_STARTUP_TIMEOUT, "vllm launch render") as server:
            yield server


def check_render(client: HttpClient, inputs: Inputs, label: str) -> None:
    status, out = client.send(RENDER, json.dumps(inputs.chat_request).encode())
    if status != 200 or json.loads(out)["token_ids"] != inputs.prompt:
        raise SystemExit(f"{label}'s render differs from the in-process render")


def synthesize(name: str, inputs: Inputs, states: dict[int, Any], points: list[int]) -> list[int]:
    """Fill the point states a capped history-format stream did not reach with states built
    as the replay path builds them, after checking that construction on every real one."""
    for p, state in states.items():
        if state != replay_state(inputs, p):
            raise SystemExit(f"{name}: the synthesized state for #{p} differs from the real one")
    missing = [p for p in points if p not in states]
    states.update({p: replay_state(inputs, p) for p in missing})
    return missing


# --- report ---------------------------------------------------------------------------------

RUNS = [
    ("compact", "derender compact"),
    ("replay", "derender replay"),
    ("vllm", "vLLM 0.33.0 (live)"),
]


def report(res: Json) -> str:
    n = res["inputs"]["output_ids"]
    lat: dict[str, dict[int, float]] = res["latency_ms"]
    runs: dict[str, Json] = res["streams"]
    shown = [(k, label) for k, label in RUNS if k in runs]
    points = sorted({p for d in lat.values() for p in d})
    out = [f"Point latency, ms (median of {res['repeats']}; the call delivering id #p):"]
    rows = []
    for p in points:
        cells = [fmt(lat[k].get(p), 3) for k, _ in shown]
        rows.append([str(p), *cells, ratio(lat["vllm"].get(p), lat["compact"].get(p))])
    first, last = points[0], points[-1]
    growth = [ratio(lat[k].get(last), lat[k].get(first)) for k, _ in shown]
    rows.append([f"@{last} / @{first}", *growth, ""])
    out.append(table(["p", *(label for _, label in shown), "vLLM / compact"], rows))
    target = lat["compact"][last] / lat["compact"][first]
    verdict = "met" if target <= 1.2 else "NOT met"
    out.append(f"derender compact @{last} / @{first} = {target:.2f} (target <= 1.2: {verdict})")
    synth = res["points_with_synthesized_state"]
    for key, label in shown:
        if synth.get(key):
            out.append(f"{label}: points {synth[key]} past its stream's cap, synthesized state")

    out.append("")
    out.append(f"Whole stream, {n} calls of one id:")
    rows = []
    for key, label in shown:
        run = runs[key]
        fit = run["fit"]
        note = (
            "measured"
            if fit is None
            else f"extrapolated (least squares): {run['calls']} calls in {run['elapsed']:.1f} s"
        )
        req = fit["request_bytes_total"] if fit else run["request_total"]
        resp = fit["response_bytes_total"] if fit else run["response_total"]
        rows.append(
            [
                label,
                fmt(run["total_seconds"], 2),
                fmt(run["server_cpu"], 2),
                fmt(req / 1e6, 1),
                fmt(resp / 1e6, 1),
                fmt(run["max_response_state"] / 1e3, 1),
                {True: "yes", False: "NO", None: "-"}[run["matches_batch"]],
                note,
            ]
        )
    headers = ["stream", "wall s", "server CPU s", "request MB", "response MB", "max state KB"]
    out.append(table([*headers, "= batch", "note"], rows))
    c, v = runs["compact"]["total_seconds"], runs["vllm"]["total_seconds"]
    line = f"derender compact / vLLM whole stream: {c / v:.4f} (vLLM {ratio(v, c)} slower)"
    if "replay" in runs:
        line += f"; derender replay / vLLM: {runs['replay']['total_seconds'] / v:.4f}"
    out.append(line)
    i = res["inputs"]
    out.append(
        f"Inputs: prompt {i['prompt_token_ids']} ids, chat_request {i['chat_request_json_bytes']:,}"
        f" B, {n} output ids, answer from #{i['think_end_position']}; vLLM batch = "
        f"derender batch: {res['vllm_batch_matches']}."
    )
    return "\n".join(out)


# --- main -----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=FULL_TOKENS, help="output ids per stream")
    parser.add_argument("--repeats", type=int, default=5, help="calls per point latency")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument("--ports", default=None, help="LO-HI: spawn the servers on ports here")
    parser.add_argument(
        "--vllm",
        type=Path,
        default=VLLM,
        help="the vllm 0.33.0 executable (default: $DERENDER_BENCH_VLLM, else vllm on PATH)",
    )
    parser.add_argument("--cap-seconds", type=float, default=300.0, help="compact stream cap")
    parser.add_argument(
        "--replay-cap-seconds", type=float, default=120.0, help="derender replay stream cap"
    )
    parser.add_argument(
        "--vllm-cap-seconds",
        type=float,
        default=240.0,
        help="vLLM stream cap; its whole-stream time is extrapolated past it",
    )
    parser.add_argument("--no-replay", action="store_true", help="skip derender replay mode")
    parser.add_argument("--family", choices=sorted(FAMILIES), default="harmony")
    args = parser.parse_args()
    global FAMILY
    FAMILY = FAMILIES[args.family]
    bss.MODEL = FAMILY.model  # chunk_body (used by run_stream / point_latencies) names it
    if not 16 <= args.tokens <= 16_384 or not 1 <= args.repeats <= 50:
        parser.error("need 16 <= --tokens <= 16384 and 1 <= --repeats <= 50")
    caps = (args.cap_seconds, args.replay_cap_seconds, args.vllm_cap_seconds)
    if not all(0 < c <= 3600 for c in caps):
        parser.error("caps must be within (0, 3600] seconds")
    ports = parse_ports(args.ports)

    env = environment()
    env["derender"] = derender.__file__
    env["uptime_start"] = uptime()
    print(f"{env['started']}  commit {env['commit']}  native built {env['native_built']}")
    print(f"derender from {env['derender']}; {env['uptime_start']}")
    core = Derenderer(
        str(FAMILY.model_dir),
        served_model_names=[FAMILY.model],
        reasoning_parser=FAMILY.reasoning_parser,
        tool_call_parser=FAMILY.tool_parser,
        enable_auto_tool_choice=True,
        tokenizer_mode=FAMILY.tokenizer_mode,
    )
    inputs = build_inputs(core, args.tokens, args.seed)
    n = len(inputs.ids)
    points = sorted({p for p in POINTS if p <= n} | {n})
    keep = set(points)
    print(json.dumps(inputs.describe()), flush=True)

    streams: dict[str, Stream] = {}
    latency: dict[str, dict[int, float]] = {}
    synthesized: dict[str, list[int]] = {}

    def done(key: str, run: Stream) -> None:
        streams[key] = run
        cap = "  (cap hit)" if run.capped else ""
        check = {True: "= batch", False: "DIFFERS from batch", None: "unchecked"}
        print(
            f"  {run.name}: {run.calls} calls, {run.elapsed:.2f} s{cap}, "
            f"{check[run.matches_batch]}",
            flush=True,
        )

    modes = [("compact", [], args.cap_seconds)]
    if not args.no_replay:
        modes.append(("replay", ["--stream-state-mode", "replay"], args.replay_cap_seconds))
    for key, extra, cap in modes:
        with derender_serve(extra, ports) as server:
            print(f"derender {key} server on port {server.port} ...", flush=True)
            client = HttpClient(server.port)
            check_render(client, inputs, "derender serve")
            run, states = run_stream(f"derender_{key}", client, inputs, True, cap, keep, server)
            done(key, run)
            if key == "replay":
                synthesized[key] = synthesize(key, inputs, states, points)
            latency[key] = point_latencies(
                client, inputs, states, points, args.repeats, True, sizes=run.sizes
            )
            client.close()

    with vllm_serve(args.vllm, ports) as server:
        print(f"vLLM server (pid {server.pid}) on port {server.port} ...", flush=True)
        client = HttpClient(server.port)
        check_render(client, inputs, "vLLM")
        vllm_batch = batch_answer(client.send, inputs.chat_request, inputs.prompt, inputs.ids)
        vllm_batch_matches = vllm_batch == inputs.batch
        print(f"  vLLM batch = derender batch: {vllm_batch_matches}", flush=True)
        run, states = run_stream("vllm", client, inputs, True, args.vllm_cap_seconds, keep, server)
        done("vllm", run)
        synthesized["vllm"] = synthesize("vllm", inputs, states, points)
        latency["vllm"] = point_latencies(
            client, inputs, states, points, args.repeats, True, sizes=run.sizes
        )
        client.close()

    env["loadavg_end"] = os.getloadavg()
    env["uptime_end"] = uptime()
    res: Json = {
        "family": args.family,
        "environment": env,
        "repeats": args.repeats,
        "seed": args.seed,
        "inputs": inputs.describe(),
        "latency_ms": latency,
        "points_with_synthesized_state": synthesized,
        "streams": {k: v.summary() for k, v in streams.items()},
        "vllm_batch_matches": vllm_batch_matches,
        "extrapolation": extrapolate.__doc__,
    }
    print()
    print(report(res))
    print(f"uptime: start {env['uptime_start']}; end {env['uptime_end']}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {args.json}")


def uptime() -> str:
    try:
        return subprocess.run(
            ["uptime"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        return f"load average: {load}"


if __name__ == "__main__":
    main()
