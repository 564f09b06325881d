"""Inkling: vLLM's `inkling` tokenizer mode (Inkling's encoding writes a chat
straight to ids, no template and no text) and its one-engine `inkling`
reasoning and tool parser over typed blocks. The recorded corpora run in the
shared suites; this file holds what is particular to the mode: how it is
chosen, the ids the encoding writes where a template renderer would differ,
its keyword refusals, and streams that start where the prompt leaves off."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from calls import refusal

from derender import Derenderer
from derender.cli import _tokenizer_mode, build_parser

HERE = Path(__file__).resolve().parent
MODEL = HERE / "models" / "inkling"
GOLDENS = HERE / "reference" / "goldens" / "inkling.jsonl.gz"


def golden(suffix: str) -> dict:
    with gzip.open(GOLDENS, "rt", encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    return next(c for c in cases if c["id"].endswith(suffix))


def core(mode: str = "inkling") -> Derenderer:
    return Derenderer(
        str(MODEL),
        served_model_names=["inkling"],
        tokenizer_mode=mode,
        tool_call_parser="inkling",
        reasoning_parser="inkling",
        enable_auto_tool_choice=True,
    )


def answer(case: dict, served: Derenderer, call: int = 0, state: object = None) -> tuple[int, dict]:
    request = dict(case["calls"][call]["request"])
    if state is not None:
        request["stream_state"] = state
    status, out = served.handle(case["endpoint"], json.dumps(request).encode())
    return status, json.loads(out)


def test_auto_picks_the_mode_by_architecture() -> None:
    model = str(MODEL)
    for flags, mode in (([], "inkling"), (["--tokenizer-mode", "hf"], "hf")):
        args = build_parser().parse_args(["serve", model, *flags])
        assert _tokenizer_mode(args, model, model, model) == mode


def test_the_encoding_writes_vllms_ids() -> None:
    """Tools declared first (a developer's too) as canonical JSON, history
    reasoning and calls as blocks, typed markers in user text read as the
    markers, the effort block from the request over the kwargs, /tokenize
    with messages, and no messages at all."""
    served = core()
    for suffix in (
        "/render/0835-tools_unicode_json",
        "/render/0839-developer_tools",
        "/render/0806-history_multi_turn",
        "/render/0821-tool_args_floats",
        "/render/0787-user_markers_in_text",
        "/render/0893-effort_top_and_kw",
        "/render/0888-kw_effort_str_bogus",
        "/render/0921-tokenize_messages_tools",
        "/render/0793-no_messages",
    ):
        case = golden(suffix)
        status, out = answer(case, served)
        assert status == 200, (suffix, out)
        want = case["calls"][0]["response"]
        key = "tokens" if "tokens" in want else "token_ids"
        assert out[key] == want[key], suffix


def test_keyword_refusals_read_as_vllms() -> None:
    served = core()
    for suffix in (
        "/error/0884-kw_effort_big",
        "/error/0903-continue_final_message",
        "/error/0791-unknown_role",
    ):
        got, want = refusal(served, golden(suffix))
        assert got == want, suffix


def test_text_after_a_call_stays_content_in_batch() -> None:
    """`_single_pass_parse` flushes the text a call block leaves deferred."""
    case = golden("/batch/0203-tool_then_text-tools_auto")
    status, out = answer(case, core())
    assert status == 200
    message = out["choices"][0]["message"]
    assert (
        message["content"]
        == case["calls"][0]["response"]["choices"][0]["message"]["content"]
        == "done"
    )
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["get_weather"]


def test_a_stream_starts_where_the_prompt_tail_leaves_the_format() -> None:
    """A prompt ending in `<|content_text|>` streams the output as content
    at once, chunk for chunk as vLLM does (batch starts at the header)."""
    case = golden("/stream/0596-tool_call_only-prefill_text-tok1")
    served = core()
    state = None
    for i, call in enumerate(case["calls"][:2]):
        status, out = answer(case, served, i, state)
        assert status == 200
        state = out["stream_state"]
        want = call["response"]["chunk"]["choices"][0]["delta"]
        assert out["chunk"]["choices"][0]["delta"]["content"] == want["content"], i
