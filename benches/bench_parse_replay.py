"""History replay of a parsed stream: Rust (native core) vs a pure-Python baseline.

    python3 benches/bench_parse_replay.py [--sizes 256 1024 4096] [--repeat 5]

vLLM's streaming chat derender carries the whole output in `stream_state`
(`output_token_ids` + `output_chunk_lens`); every call builds a fresh parser and feeds it
every earlier chunk before parsing the new one. This measures one such call at output
position N (N-1 one-token chunks replayed, then the N-th token), on a realistic
reasoning-then-tool-call output (qwen3 reasoning + hermes tools):

  native         `core.handle("/v1/chat/completions/derender", body)` with `"stream": true`
                 and the N-1 chunk history (Derenderer with --reasoning-parser qwen3
                 --tool-call-parser hermes); only the time inside `core.handle` (the body
                 bytes are built beforehand). Includes request JSON parsing, the replay's
                 incremental detokenization, and building the answer.
  python         the same replay in Python: vLLM's incremental detokenization
                 (`PyIncremental` of bench_detok.py, special tokens kept) and vLLM's
                 `DelegatingParser.parse_delta` orchestration over the sample plugins
                 (examples/plugins: qwen3 reasoning split + hermes tool parser).
  python parse   the same without detokenization (text deltas decoded beforehand).
  plugin         for scale, not compared: the native call with the two sample plugins
                 registered (--tool-parser-plugin / --reasoning-parser-plugin): the replay
                 runs in Rust and calls the Python parsers for every chunk.

Not part of the test run. Needs `tokenizers` (the `bench` extra).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench_detok import PyIncremental
from corpus import TEXT
from tokenizers import Tokenizer

from derender import DEFAULT_MODEL_DIR, Derenderer

ROOT = Path(__file__).resolve().parent.parent
CHAT = "/v1/chat/completions/derender"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "plan_trip",
            "description": "Save a travel plan",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "notes": {"type": "string"},
                },
            },
        },
    }
]
CHAT_REQUEST = {"model": "qwen3", "messages": [{"role": "user", "content": "Plan it."}]}
CHAT_REQUEST["tools"] = TOOLS
CALL = {
    "name": "plan_trip",
    "arguments": {
        "city": "Kyoto",
        "days": 3,
        "notes": "Fushimi Inari before 4 p.m. (伏見稲荷大社), bamboo grove early, ramen 🍜.",
    },
}


def load_example(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(
        name, ROOT / "examples" / "plugins" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def output_ids(core: Derenderer, n: int) -> list[int]:
    """`<think>` + reasoning cut to fit + `</think>` + one hermes call: exactly n ids."""
    head = core.encode("<think>\n")
    tail = core.encode("\n</think>\n\n<tool_call>\n" + json.dumps(CALL, ensure_ascii=False))
    tail += core.encode("\n</tool_call>")
    reasoning = core.encode(TEXT)
    while len(reasoning) < n:
        reasoning += reasoning
    ids = head + reasoning[: n - len(head) - len(tail)] + tail
    assert len(ids) == n
    return ids


# --- native -----------------------------------------------------------------------------


def native_body(ids: list[int], prompt: list[int]) -> bytes:
    """The call at position len(ids): history of len(ids)-1 one-token chunks."""
    history = ids[:-1]
    state = {
        "prev_tokens": [],
        "prefix_offset": 0,
        "read_offset": 0,
        "role_sent": True,
        "logprob_context_token_ids": [],
        "logprob_text_offset": 0,
        "output_token_ids": history,
        "output_chunk_lens": [1] * len(history),
        "tools_streamed": True,
        "last_tool_call_ids": ["chatcmpl-tool-0000000000000000"],
    }
    body = {
        "stream": True,
        "model": "qwen3",
        "generate_chunk": {
            "request_id": "bench",
            "choices": [{"index": 0, "token_ids": ids[-1:], "finish_reason": None}],
        },
        "stream_state": state,
        "prompt_token_ids": prompt,
        "chat_request": CHAT_REQUEST,
    }
    return json.dumps(body).encode()


def native_call(core: Derenderer, raw: bytes) -> tuple[float, dict]:
    t0 = time.perf_counter()
    status, out = core.handle(CHAT, raw)
    spent = time.perf_counter() - t0
    assert status == 200, out
    return spent, json.loads(out)["chunk"]["choices"][0]["delta"]


def native_batch(core: Derenderer, ids: list[int], prompt: list[int]) -> dict:
    body = {
        "model": "qwen3",
        "generate_response": {
            "request_id": "b",
            "choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}],
        },
        "prompt_token_ids": prompt,
        "chat_request": CHAT_REQUEST,
    }
    status, out = core.handle(CHAT, json.dumps(body).encode())
    assert status == 200, out
    return json.loads(out)["choices"][0]["message"]


# --- python -------------------------------------------------------------------------------


class PyDelegating:
    """vLLM's `DelegatingParser.parse_delta` for legacy (text) parsers: reasoning first;
    once it ends, the tool parser sees the text after the end marker as a fresh stream."""

    def __init__(self, reasoning: Any, tools: Any, request: dict) -> None:
        self.reasoning, self.tools, self.request = reasoning, tools, request
        self.reasoning_ended = False
        self.tool_text_started = False
        self.previous_text = ""
        self.previous_ids: list[int] = []

    def parse_delta(self, delta_text: str, delta_ids: list[int]) -> dict | None:
        current_text = self.previous_text + delta_text
        current_ids = self.previous_ids + delta_ids
        message = None
        if not self.reasoning_ended:
            message = self.reasoning.extract_reasoning_streaming(
                self.previous_text, current_text, delta_text,
                self.previous_ids, current_ids, delta_ids,
            )  # fmt: skip
            if self.reasoning.is_reasoning_end(delta_ids):
                self.reasoning_ended = True
                current_ids = self.reasoning.extract_content_ids(delta_ids)
                current_text = delta_text = (message or {}).get("content") or ""
        if self.reasoning_ended:
            if not self.tool_text_started:
                self.tool_text_started = True
                self.previous_text, self.previous_ids = "", []
                delta_text, delta_ids = current_text, current_ids
            reasoning = (message or {}).get("reasoning")
            message = self.tools.extract_tool_calls_streaming(
                self.previous_text, current_text, delta_text,
                self.previous_ids, current_ids, delta_ids, self.request,
            )  # fmt: skip
            if reasoning:
                message = {**(message or {}), "reasoning": reasoning}
        self.previous_text, self.previous_ids = current_text, current_ids
        return message


def python_replay(
    tok: Tokenizer, plugins: tuple[Any, Any], ids: list[int], texts: list[str] | None = None
) -> tuple[float, list[dict | None]]:
    """One call: fresh detokenizer and parsers, every chunk fed in order. With `texts`,
    the text deltas are given (no detokenization)."""
    reasoning_cls, tool_cls = plugins
    t0 = time.perf_counter()
    detok = None if texts is not None else PyIncremental(tok, skip_special_tokens=False)
    parser = PyDelegating(reasoning_cls(tok), tool_cls(tok), CHAT_REQUEST)
    deltas = []
    for i, tid in enumerate(ids):
        text = texts[i] if texts is not None else detok.step(tid)  # type: ignore[union-attr]
        deltas.append(parser.parse_delta(text, [tid]))
    return time.perf_counter() - t0, deltas


def assemble(deltas: list[dict | None]) -> tuple[str, str, str, str]:
    reasoning = content = name = args = ""
    for d in deltas:
        if not d:
            continue
        reasoning += d.get("reasoning") or ""
        content += d.get("content") or ""
        for call in d.get("tool_calls") or []:
            function = call.get("function") or {}
            name += function.get("name") or ""
            args += function.get("arguments") or ""
    return reasoning, content, name, args


# --- run ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096])
    ap.add_argument("--repeat", type=int, default=5, help="timed calls per method and size")
    args = ap.parse_args(argv)

    core = Derenderer(
        str(DEFAULT_MODEL_DIR),
        served_model_names=["qwen3"],
        reasoning_parser="qwen3",
        tool_call_parser="hermes",
        enable_auto_tool_choice=True,
    )
    with gzip.open(DEFAULT_MODEL_DIR / "tokenizer.json.gz") as f:
        tok = Tokenizer.from_str(f.read().decode())
    plugins = (
        load_example("qwen3_reasoning_plugin").Qwen3ReasoningPlugin,
        load_example("hermes_plugin").HermesPlugin,
    )
    plugin_core = Derenderer(
        str(DEFAULT_MODEL_DIR),
        served_model_names=["qwen3"],
        reasoning_parser="qwen3_py",
        tool_call_parser="hermes_py",
        enable_auto_tool_choice=True,
        reasoning_parser_plugins={"qwen3_py": plugins[0]},
        tool_parser_plugins={"hermes_py": plugins[1]},
    )
    prompt = core.encode("<|im_start|>user\nPlan it.<|im_end|>\n<|im_start|>assistant\n")

    rows = []
    for n in args.sizes:
        ids = output_ids(core, n)
        # Same answer both ways: the Python stream adds up to the native batch message.
        _, deltas = python_replay(tok, plugins, ids)
        reasoning, content, name, arguments = assemble(deltas)
        message = native_batch(core, ids, prompt)
        call = message["tool_calls"][0]["function"]
        assert reasoning == message["reasoning"], "reasoning differs"
        assert (name, json.loads(arguments)) == (call["name"], json.loads(call["arguments"]))
        assert content.strip() == (message["content"] or "").strip()
        # The timed call's own answer agrees too.
        raw = native_body(ids, prompt)
        _, native_delta = native_call(core, raw)
        python_last = deltas[-1] or {}
        assert native_delta.get("tool_calls") == python_last.get("tool_calls"), (
            native_delta,
            python_last,
        )
        _, plugin_delta = native_call(plugin_core, raw)
        assert plugin_delta.get("tool_calls") == python_last.get("tool_calls"), plugin_delta
        detok = PyIncremental(tok, skip_special_tokens=False)
        texts = [detok.step(t) for t in ids]

        native_s, python_s, parse_s, plugin_s = [], [], [], []
        for _ in range(args.repeat):  # interleaved, so load changes hit all alike
            native_s.append(native_call(core, raw)[0])
            python_s.append(python_replay(tok, plugins, ids)[0])
            parse_s.append(python_replay(tok, plugins, ids, texts)[0])
            plugin_s.append(native_call(plugin_core, raw)[0])
        med = [statistics.median(x) * 1e3 for x in (native_s, python_s, parse_s, plugin_s)]
        rows.append((n, *med))

    print(f"one call at output position N (median of {args.repeat}, ms)")
    heads = ("native", "python", "py parse", "plugin")
    print(f"{'N':>6}" + "".join(f" {h:>9}" for h in heads) + "  py/native  parse/native")
    for n, native, python, parse, plugin in rows:
        print(
            f"{n:>6} {native:>9.3f} {python:>9.3f} {parse:>9.3f} {plugin:>9.3f}"
            f" {python / native:>9.1f}x {parse / native:>12.1f}x"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
