"""History replay of a parsed stream: Rust (native core) vs a pure-Python baseline.

    python3 -m pytest benches/bench_parse_replay.py --benchmark-only -q

vLLM's streaming chat derender carries the whole output in `stream_state`
(`output_token_ids` + `output_chunk_lens`); every call builds a fresh parser and feeds it
every earlier chunk before parsing the new one. This measures one such call at output
position N (N-1 one-token chunks replayed, then the N-th token) for N = 256, 1024, 4096, on a
realistic reasoning-then-tool-call output (qwen3 reasoning + hermes tools):

  native         `core.handle("/v1/chat/completions/derender", body)` with `"stream": true`
                 and the N-1 chunk history (Derenderer with --reasoning-parser qwen3
                 --tool-call-parser hermes); only `core.handle` is timed (the body bytes are
                 built beforehand). Includes request JSON parsing, the replay's incremental
                 detokenization, and building the answer.
  python         the same replay in Python: vLLM's incremental detokenization
                 (`PyIncremental` of bench_detok.py, special tokens kept) and vLLM's
                 `DelegatingParser.parse_delta` orchestration over the sample plugins
                 (examples/plugins: qwen3 reasoning split + hermes tool parser).
  python_parse   the same without detokenization (text deltas decoded beforehand).
  plugin         for scale, not compared: the native call with the two sample plugins
                 registered (--tool-parser-plugin / --reasoning-parser-plugin): the replay
                 runs in Rust and calls the Python parsers for every chunk.

Before timing, each size checks that the methods agree (the Python stream assembles to the
native batch answer; the timed call's delta is the same from native, plugin and the last
Python step), and every benchmark checks its own answer again. The medians and their
ratios to `native` are printed at the end (benches/conftest.py). Not part of the test run
(pytest only collects tests/). Needs `tokenizers` and `pytest-benchmark` (the `bench` extra).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from bench_detok import PyIncremental
from corpus import TEXT
from tokenizers import Tokenizer

from derender import DEFAULT_MODEL_DIR, Derenderer

ROOT = Path(__file__).resolve().parent.parent
CHAT = "/v1/chat/completions/derender"
SIZES = (256, 1024, 4096)
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


def native_delta(answer: tuple[int, bytes]) -> dict:
    """The delta of a `core.handle` answer to a `native_body` call."""
    status, out = answer
    assert status == 200, out
    return json.loads(out)["chunk"]["choices"][0]["delta"]


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
) -> list[dict | None]:
    """One call: fresh detokenizer and parsers, every chunk fed in order. With `texts`,
    the text deltas are given (no detokenization)."""
    reasoning_cls, tool_cls = plugins
    detok = None if texts is not None else PyIncremental(tok, skip_special_tokens=False)
    parser = PyDelegating(reasoning_cls(tok), tool_cls(tok), CHAT_REQUEST)
    deltas = []
    for i, tid in enumerate(ids):
        text = texts[i] if texts is not None else detok.step(tid)  # type: ignore[union-attr]
        deltas.append(parser.parse_delta(text, [tid]))
    return deltas


def set_fields(delta: dict | None) -> dict:
    """A delta without its unset fields (`None`, empty), to compare native and Python."""
    return {k: v for k, v in (delta or {}).items() if v not in (None, "", [])}


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


# --- fixtures -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def core() -> Derenderer:
    return Derenderer(
        str(DEFAULT_MODEL_DIR),
        served_model_names=["qwen3"],
        reasoning_parser="qwen3",
        tool_call_parser="hermes",
        enable_auto_tool_choice=True,
    )


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    with gzip.open(DEFAULT_MODEL_DIR / "tokenizer.json.gz") as f:
        return Tokenizer.from_str(f.read().decode())


@pytest.fixture(scope="module")
def plugins() -> tuple[Any, Any]:
    """The sample plugins' classes: (qwen3 reasoning, hermes tools)."""
    return (
        load_example("qwen3_reasoning_plugin").Qwen3ReasoningPlugin,
        load_example("hermes_plugin").HermesPlugin,
    )


@pytest.fixture(scope="module")
def plugin_core(plugins: tuple[Any, Any]) -> Derenderer:
    return Derenderer(
        str(DEFAULT_MODEL_DIR),
        served_model_names=["qwen3"],
        reasoning_parser="qwen3_py",
        tool_call_parser="hermes_py",
        enable_auto_tool_choice=True,
        reasoning_parser_plugins={"qwen3_py": plugins[0]},
        tool_parser_plugins={"hermes_py": plugins[1]},
    )


@dataclass(frozen=True)
class Case:
    n: int
    ids: list[int]
    raw: bytes  # the native call's body at position n
    texts: list[str]  # the text delta of each id (for python_parse)
    delta: dict  # the timed call's delta (its set fields), the same from every method


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"N={n}")
def case(
    request: pytest.FixtureRequest,
    core: Derenderer,
    plugin_core: Derenderer,
    tok: Tokenizer,
    plugins: tuple[Any, Any],
) -> Case:
    """One output size, checked once: every method gives the same answer."""
    n = request.param
    ids = output_ids(core, n)
    prompt = core.encode("<|im_start|>user\nPlan it.<|im_end|>\n<|im_start|>assistant\n")
    # Same answer both ways: the Python stream adds up to the native batch message.
    deltas = python_replay(tok, plugins, ids)
    reasoning, content, name, arguments = assemble(deltas)
    message = native_batch(core, ids, prompt)
    call = message["tool_calls"][0]["function"]
    assert reasoning == message["reasoning"], "reasoning differs"
    assert (name, json.loads(arguments)) == (call["name"], json.loads(call["arguments"]))
    assert content.strip() == (message["content"] or "").strip()
    # The timed call's own answer agrees too (its last id, `</tool_call>`, adds nothing to
    # the call already streamed: every method answers an empty delta).
    raw = native_body(ids, prompt)
    python_last = set_fields(deltas[-1])
    delta = set_fields(native_delta(core.handle(CHAT, raw)))
    assert delta == python_last, (delta, python_last)
    plugin_delta = set_fields(native_delta(plugin_core.handle(CHAT, raw)))
    assert plugin_delta == python_last, plugin_delta
    detok = PyIncremental(tok, skip_special_tokens=False)
    texts = [detok.step(t) for t in ids]
    assert assemble(python_replay(tok, plugins, ids, texts)) == assemble(deltas)
    return Case(n, ids, raw, texts, python_last)


# --- benchmarks ---------------------------------------------------------------------------


def native_fields(answer: tuple[int, bytes]) -> dict:
    return set_fields(native_delta(answer))


def python_fields(deltas: list[dict | None]) -> dict:
    return set_fields(deltas[-1])


def run(
    benchmark,
    replay_results: dict[int, dict[str, float]],
    case: Case,
    method: str,
    fn: Callable[[], Any],
    fields: Callable[[Any], dict],
) -> None:
    """Time fn() (one call at position N), check its answer, record the median in ms."""
    benchmark.group = f"N={case.n}"
    benchmark.extra_info["n"] = case.n
    assert fields(benchmark(fn)) == case.delta
    median_ms = benchmark.stats.stats.median * 1e3
    benchmark.extra_info["ms_median"] = round(median_ms, 3)
    replay_results.setdefault(case.n, {})[method] = median_ms


def test_native(benchmark, replay_results, core: Derenderer, case: Case) -> None:
    fn = partial(core.handle, CHAT, case.raw)
    run(benchmark, replay_results, case, "native", fn, native_fields)


def test_python(benchmark, replay_results, tok: Tokenizer, plugins, case: Case) -> None:
    fn = partial(python_replay, tok, plugins, case.ids)
    run(benchmark, replay_results, case, "python", fn, python_fields)


def test_python_parse(benchmark, replay_results, tok: Tokenizer, plugins, case: Case) -> None:
    fn = partial(python_replay, tok, plugins, case.ids, case.texts)
    run(benchmark, replay_results, case, "python_parse", fn, python_fields)


def test_plugin(benchmark, replay_results, plugin_core: Derenderer, case: Case) -> None:
    """Not one of the compared methods: the native replay calling the Python plugins."""
    fn = partial(plugin_core.handle, CHAT, case.raw)
    run(benchmark, replay_results, case, "plugin", fn, native_fields)
