"""Kimi K3: vLLM's `kimi_k3` tokenizer mode (K3's XTML encoding written segment
by segment to ids, no template) and its `kimi_k3` reasoning and tool parsers.
The recorded corpora run in the shared suites; this file holds what is
particular to the mode: how it is chosen, the ids where a text renderer would
differ (caller text that spells a marker stays text), the renderer's keyword
refusals, how `tool_choice: none` still unwraps the response channel, and the
reasoning-only composition."""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path

from calls import config_core, refusal, rendered
from goldens import load_cases

from derender import Derenderer
from derender.cli import _tokenizer_mode, build_parser

HERE = Path(__file__).resolve().parent
MODEL = HERE / "models" / "kimi_k3"
OPEN, CLOSE, SEP = 151672, 151673, 151674


@functools.cache
def cases() -> tuple[dict, ...]:
    return tuple(load_cases("kimi_k3"))


def golden(suffix: str) -> dict:
    return next(c for c in cases() if c["id"].endswith(suffix))


def core(tools: bool = True) -> Derenderer:
    """The config's core, or the reasoning parser alone."""
    if tools:
        return config_core("kimi_k3")
    mode = {"tokenizer_mode": "kimi_k3", "reasoning_parser": "kimi_k3"}
    return Derenderer(str(MODEL), served_model_names=["kimi_k3"], **mode)


def answer(case: dict, served: Derenderer) -> tuple[int, dict]:
    request = case["calls"][0]["request"]
    status, out = served.handle(case["endpoint"], json.dumps(request).encode())
    return status, json.loads(out)


def test_auto_picks_the_mode_by_architecture() -> None:
    model = str(MODEL)
    for flags, mode in (([], "kimi_k3"), (["--tokenizer-mode", "hf"], "hf")):
        args = build_parser().parse_args(["serve", model, *flags])
        assert _tokenizer_mode(args, model, model, model) == mode


def test_the_encoding_writes_vllms_ids() -> None:
    """Markers typed in caller text are ordinary text; tool results sorted
    into call order (by id and by alias); typed arguments; the tools'
    declaration with sorted keys; the response-format and tool-choice notes;
    thinking off; no messages at all; /tokenize with messages."""
    served = core()
    for suffix in (
        "/render/0660-markers_in_user_text",
        "/render/0661-special_in_user_text",
        "/render/0722-tool_history_two_reordered",
        "/render/0724-tool_history_alias_ids",
        "/render/0731-tool_args_typed",
        "/render/0702-tools_key_order",
        "/render/0739-rf_json_schema",
        "/render/0709-tool_choice_required",
        "/render/0637-simple-nothink",
        "/render/0657-empty_messages",
    ):
        case = golden(suffix)
        status, out = answer(case, served)
        assert status == 200, (suffix, out)
        want = case["calls"][0]["response"]
        assert out["token_ids"] == want["token_ids"], suffix
    # The user's `<|open|>` is never the marker's id: only the encoding's own
    # are (each opened or closed tag ends in one `<|sep|>`).
    case = golden("/render/0660-markers_in_user_text")
    text = case["calls"][0]["request"]["messages"][-1]["content"]
    assert "<|open|>" in text
    status, out = answer(case, served)
    ids = out["token_ids"]
    assert ids.count(OPEN) + ids.count(CLOSE) == ids.count(SEP)


def test_keyword_refusals_read_as_vllms() -> None:
    served = core()
    for suffix in (
        "/error/0690-effort_medium",
        "/error/0692-kw_thinking_effort_medium",
        "/error/0728-tool_without_call",
        "/error/0749-kw_image_prompts_unused",
    ):
        got, want = refusal(served, golden(suffix))
        assert got == want, suffix


def test_images_are_refused_with_a_400() -> None:
    """vLLM fetches the image for its multimodal processor (a 500 when the host
    cannot be reached); derender builds none and says so (docs/divergences.md)."""
    status, out = answer(golden("/error/0668-parts_image_url_refused"), core())
    assert status == 400
    assert "derender does not render images" in out["error"]["message"]


def test_tool_choice_none_still_unwraps_the_response_channel() -> None:
    """`KimiK3Parser` runs the tool parser whatever the tool choice: with
    `none` its calls are dropped and its content (the response body) kept."""
    served = core()
    for suffix, calls in (
        ("/batch/0179-tool_content_then_call-tools_none", 0),
        ("/batch/0178-tool_content_then_call-tools_auto", 1),
    ):
        case = golden(suffix)
        status, out = answer(case, served)
        assert status == 200, out
        got = out["choices"][0]["message"]
        want = case["calls"][0]["response"]["choices"][0]["message"]
        assert "<|" not in (got["content"] or "")
        assert got["content"] == want["content"], suffix
        assert len(got.get("tool_calls") or []) == calls, suffix


def _stream_fields(out: dict) -> list:
    choices = (out.get("chunk") or out).get("choices")
    if choices is not None:
        # Chat deltas and messages, or completion texts.
        parts = [c.get("delta") or c.get("message") or {"content": c.get("text")} for c in choices]
        return [
            (p.get("content"), p.get("reasoning"), c.get("finish_reason"))
            for p, c in zip(parts, choices, strict=True)
        ]
    return [out.get("error", {}).get("message")]


def test_the_reasoning_only_composition_answers_as_vllm() -> None:
    """Without a tool parser, `KimiK3Parser` recomputes the streamed content
    from the text after reasoning, wrapper markers stripped: every batch
    answer and stream chunk of live vLLM started that way."""
    path = HERE / "reference" / "reasoning_only" / "kimi_k3.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    served = core(tools=False)
    for case in cases:
        states: dict = {}
        for i, call in enumerate(case["calls"]):
            lane = call.get("state_lane", 0)
            request = dict(call["request"])
            if request.get("stream_state") == "$PREV_STATE":
                request["stream_state"] = states.get(lane)
            status, raw = served.handle(case["endpoint"], json.dumps(request).encode())
            out = json.loads(raw)
            assert status == call["status"], (case["id"], i, out)
            assert _stream_fields(out) == _stream_fields(call["response"]), (case["id"], i)
            if status == 200 and out.get("stream_state") is not None:
                states[lane] = out["stream_state"]


def test_seeded_random_chats_render_as_vllm() -> None:
    """Random conversations (markers and empty parts in caller text, colliding
    call ids, aliases, `reasoning_content` that /tokenize ignores, kwargs and
    formats) rendered by live vLLM (record_render_fuzz.py)."""
    path = HERE / "reference" / "render_fuzz" / "kimi_k3.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        recorded = [json.loads(line) for line in f if line.strip()]
    served = core()
    for case in recorded:
        status, raw = served.handle(case["endpoint"], json.dumps(case["request"]).encode())
        got = (status, rendered(status, json.loads(raw)))
        assert got == (case["status"], rendered(case["status"], case["response"])), case["id"]
