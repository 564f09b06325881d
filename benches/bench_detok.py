"""Per-token incremental detokenization cost on the same ~1000 ids (not part of the test run).

    python3 -m pytest benches/bench_detok.py --benchmark-only -q

Compared, one id at a time unless noted:
  native_stream     derender core, /v1/completions/derender, "stream": true, 1 id per call,
                    carried stream_state (includes json.dumps of each body and json.loads of
                    each answer, as an in-process caller must do)
  native_stream, 16 ids per call   the same with 16 ids per call (scale reference)
  native_batch      derender core, one batch call with all ids (generate_responses)
  native_detokenizer  derender.IncrementalDetokenizer.step (the typed in-process API)
  native_stream_parser  derender.StreamParser.push, 1 id per call, on a qwen3 + hermes core
                    (reasoning and tool-call parsing on top of the detokenization)
  hf_decode_stream  tokenizers.decoders.DecodeStream.step
  py_vllm           pure-Python vLLM detokenize_incrementally with the bounded window
  hf_batch_decode   Tokenizer.decode(ids), one call (reference point for native_batch)
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable
from functools import partial

import pytest
from corpus import TEXT
from tokenizers import Tokenizer
from tokenizers.decoders import DecodeStream

from derender import DEFAULT_MODEL_DIR, Derenderer, IncrementalDetokenizer, StreamParser

CMPL = "/v1/completions/derender"
REQUEST = {"prompt": "hi", "skip_special_tokens": True}
FFFD = "\ufffd"


@pytest.fixture(scope="module")
def core() -> Derenderer:
    return Derenderer(str(DEFAULT_MODEL_DIR), served_model_names=["qwen3"])


@pytest.fixture(scope="module")
def parser_core() -> Derenderer:
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
def ids(core: Derenderer, tok: Tokenizer) -> list[int]:
    """The benchmark ids, checked once: every method decodes them to the same full text."""
    ids = core.encode(TEXT)
    assert 900 <= len(ids) <= 1200
    assert native_batch(core, ids) == TEXT
    assert native_stream(core, ids) == TEXT
    assert native_detokenizer(core, ids) == TEXT
    assert hf_decode_stream(tok, ids) == TEXT
    assert py_vllm(tok, ids) == TEXT
    assert hf_batch_decode(tok, ids) == TEXT
    return ids


# --- a. derender native -------------------------------------------------------------------


def native_stream(
    core: Derenderer, ids: list[int], inside: list[float] | None = None, per_call: int = 1
) -> str:
    """per_call ids per call with the carried state; appends the seconds spent in core.handle."""
    state, parts, spent = None, [], 0.0
    for i in range(0, len(ids), per_call):
        last = i + per_call >= len(ids)
        chunk = ids[i : i + per_call]
        choice = {"index": 0, "token_ids": chunk, "finish_reason": "length" if last else None}
        body = {
            "stream": True,
            "generate_chunk": {"request_id": "s", "choices": [choice]},
            "stream_state": state,
            "completion_request": REQUEST,
        }
        raw = json.dumps(body).encode()
        t0 = time.perf_counter()
        status, out = core.handle(CMPL, raw)
        spent += time.perf_counter() - t0
        assert status == 200, out
        answer = json.loads(out)
        state = answer["stream_state"]
        parts.append(answer["chunk"]["choices"][0]["text"] or "")
    if inside is not None:
        inside.append(spent)
    return "".join(parts)


def native_batch(core: Derenderer, ids: list[int]) -> str:
    gen = {
        "request_id": "b",
        "choices": [{"index": 0, "finish_reason": "length", "token_ids": ids}],
    }
    body = {"generate_responses": [gen], "completion_request": REQUEST}
    status, out = core.handle(CMPL, json.dumps(body).encode())
    assert status == 200, out
    return json.loads(out)["choices"][0]["text"]


def native_detokenizer(core: Derenderer, ids: list[int]) -> str:
    detok = IncrementalDetokenizer(core)
    step = detok.step
    return "".join([step(tid) for tid in ids])


CHAT_REQUEST = {"model": "qwen3", "messages": [{"role": "user", "content": "hi"}]}
# A prompt whose template left no reasoning open: the output is plain content.
PROMPT = [151644, 872, 198, 6023, 151645, 198, 151644, 77091, 198]


def native_stream_parser(core: Derenderer, ids: list[int]) -> str:
    parser = StreamParser(core, CHAT_REQUEST, PROMPT)
    push = parser.push
    parts = [push([tid])["delta"] for tid in ids]
    return "".join((d.get("content") or "") + (d.get("reasoning") or "") for d in parts)


# --- b. HF tokenizers DecodeStream ---------------------------------------------------------


def hf_decode_stream(tok: Tokenizer, ids: list[int]) -> str:
    stream = DecodeStream(skip_special_tokens=True)
    parts = [stream.step(tok, tid) for tid in ids]
    return "".join(p for p in parts if p is not None)


# --- c. pure-Python vLLM detokenize_incrementally, bounded window --------------------------


class PyIncremental:
    """vLLM's detokenize_incrementally, trimming the window after each step as derender does."""

    def __init__(self, tok: Tokenizer, skip_special_tokens: bool = True) -> None:
        self.tok = tok
        self.decode = tok.decoder.decode
        specials = tok.get_added_tokens_decoder().items()
        self.skip = {i for i, t in specials if t.special} if skip_special_tokens else set()
        self.prev_tokens: list[str] = []
        self.prefix_offset = 0
        self.read_offset = 0

    def step(self, tid: int) -> str:
        piece = None if tid in self.skip else self.tok.id_to_token(tid)
        tokens = self.prev_tokens + ([] if piece is None else [piece])
        prefix_text = self.decode(tokens[self.prefix_offset : self.read_offset])
        new_text = self.decode(tokens[self.prefix_offset :])
        delta = ""
        if len(new_text) > len(prefix_text) and not new_text.endswith(FFFD):
            delta = new_text[len(prefix_text) :]
            self.prefix_offset, self.read_offset = self.read_offset, len(tokens)
        # Bounded window: drop what can never be read again and rebase the offsets.
        self.prev_tokens = tokens[self.prefix_offset :]
        self.read_offset -= self.prefix_offset
        self.prefix_offset = 0
        return delta


def py_vllm(tok: Tokenizer, ids: list[int]) -> str:
    detok = PyIncremental(tok)
    return "".join(detok.step(tid) for tid in ids)


def hf_batch_decode(tok: Tokenizer, ids: list[int]) -> str:
    return tok.decode(ids, skip_special_tokens=True)


# --- benchmarks ---------------------------------------------------------------------------


def run(benchmark, results: dict[str, float], name: str, fn: Callable[[], str], n: int) -> None:
    assert benchmark(fn) == TEXT
    per_token_us = benchmark.stats.stats.median / n * 1e6
    benchmark.extra_info["us_per_token_median"] = round(per_token_us, 3)
    results[name] = per_token_us


def test_native_stream(benchmark, results, core: Derenderer, ids: list[int]) -> None:
    run(benchmark, results, "native_stream", lambda: native_stream(core, ids), len(ids))


def test_native_stream_inside_handle(benchmark, results, core: Derenderer, ids: list[int]) -> None:
    """The same stream; the extra figure is only the time spent inside core.handle."""
    inside: list[float] = []
    assert benchmark(lambda: native_stream(core, ids, inside)) == TEXT
    per_token_us = sorted(inside)[len(inside) // 2] / len(ids) * 1e6
    benchmark.extra_info["us_per_token_inside_handle_median"] = round(per_token_us, 3)
    results["native_stream, inside core.handle only"] = per_token_us


def test_native_stream_16_per_call(benchmark, results, core: Derenderer, ids: list[int]) -> None:
    """Not one of the compared methods: the same stream with 16 ids per call, for scale."""
    fn = partial(native_stream, core, ids, per_call=16)
    run(benchmark, results, "native_stream, 16 ids per call", fn, len(ids))


def test_native_detokenizer(benchmark, results, core: Derenderer, ids: list[int]) -> None:
    run(benchmark, results, "native_detokenizer", lambda: native_detokenizer(core, ids), len(ids))


def test_native_stream_parser(benchmark, results, parser_core: Derenderer, ids: list[int]) -> None:
    fn = partial(native_stream_parser, parser_core, ids)
    run(benchmark, results, "native_stream_parser", fn, len(ids))


def test_native_batch(benchmark, results, core: Derenderer, ids: list[int]) -> None:
    run(benchmark, results, "native_batch", lambda: native_batch(core, ids), len(ids))


def test_hf_decode_stream(benchmark, results, tok: Tokenizer, ids: list[int]) -> None:
    run(benchmark, results, "hf_decode_stream", lambda: hf_decode_stream(tok, ids), len(ids))


def test_py_vllm(benchmark, results, tok: Tokenizer, ids: list[int]) -> None:
    run(benchmark, results, "py_vllm", lambda: py_vllm(tok, ids), len(ids))


def test_hf_batch_decode(benchmark, results, tok: Tokenizer, ids: list[int]) -> None:
    run(benchmark, results, "hf_batch_decode", lambda: hf_batch_decode(tok, ids), len(ids))
