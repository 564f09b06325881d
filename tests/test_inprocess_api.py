"""The in-process API (`derender.IncrementalDetokenizer`, `derender.StreamParser`,
`Derenderer.call`) gives the server's answers: the golden streams (vLLM 0.33.0's
recorded requests) are run through both, call for call."""

from __future__ import annotations

import base64
import copy
import json
import re
import zlib
from typing import Any

import pytest
from calls import config_core, post
from families import FAMILIES, PLAIN_CONFIGS
from goldens import EXHAUSTIVE, load_cases

from derender import (
    BadRequestError,
    Derenderer,
    IncrementalDetokenizer,
    NotFoundError,
    StreamParser,
)

CHAT = "/v1/chat/completions/derender"
PARSER_CONFIGS = [f["config"] for f in FAMILIES.values()]
# The normal run takes one stream in SAMPLE per config; the slow run all.
SAMPLE = 1 if EXHAUSTIVE else 4
# Unsent ids: vLLM's default shape, and Mistral's 9 letters and digits in a
# call slot's `id` field.
UNSENT_ID = re.compile(r'chatcmpl-tool-[0-9a-f]{16}|(?<="id":")[A-Za-z0-9]{9}(?=")')


def chat_streams(config: str) -> list[dict]:
    """The config's one-lane chat streams the in-process objects take: token
    chunks with no logprobs, every call answered 200."""
    picked = []
    for case in load_cases(config):
        calls = case["calls"]
        if case["kind"] != "stream" or case["endpoint"] != CHAT:
            continue
        if zlib.crc32(case["id"].encode()) % SAMPLE:
            continue
        requests = [c["request"] for c in calls]
        one_lane = all(c.get("state_lane", 0) == 0 for c in calls)
        usable = all(
            c["status"] == 200
            and len(r["generate_chunk"]["choices"]) == 1
            and r["generate_chunk"]["choices"][0].get("logprobs") is None
            for c, r in zip(calls, requests, strict=True)
        )
        if one_lane and usable:
            picked.append(case)
    return picked


def chunk(request: dict) -> tuple[list[int], str | None, Any]:
    choice = request["generate_chunk"]["choices"][0]
    return choice.get("token_ids") or [], choice.get("finish_reason"), choice.get("stop_reason")


def server_stream(core: Derenderer, requests: list[dict]) -> list[dict]:
    """The server's answers to the stream, each call carrying the last state."""
    state, answers = None, []
    for request in requests:
        body = {**request, "stream_state": state}
        status, out = post(core, CHAT, body)
        assert status == 200, out
        state = out["stream_state"]
        answers.append(out)
    return answers


def comparable(choice: dict, ids: dict[str, str]) -> dict:
    """A chunk's choice without what the objects are not given (logprobs), its
    random tool-call ids read through `ids` (ours -> the server's, learnt here)."""
    out = {k: v for k, v in choice.items() if k not in ("logprobs", "token_ids")}
    for call in out["delta"].get("tool_calls") or []:
        if call.get("id") is not None:
            call["id"] = ids.setdefault(call["id"], f"<call {len(ids)}>")
    return out


def state_text(state: dict, ids: dict[str, str]) -> str:
    """A compact stream_state's payload, tool-call ids read through `ids`."""
    data = state["data"]
    text = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)).decode()
    for ours, name in ids.items():
        text = text.replace(ours, name)
    # A call a filter dropped (parallel_tool_calls: false, a marker read as
    # text) kept its unsent id.
    return UNSENT_ID.sub("<unsent>", text)


@pytest.mark.parametrize("config", PARSER_CONFIGS)
def test_stream_parser_gives_the_servers_chunks_and_state(config: str) -> None:
    core = config_core(config)
    cases = chat_streams(config)
    assert cases, f"{config}: no usable golden chat stream"
    failures = []
    for case in cases:
        requests = [c["request"] for c in case["calls"]]
        answers = server_stream(core, requests)
        first = requests[0]
        parser = StreamParser(core, first["chat_request"], first.get("prompt_token_ids"))
        middle = len(requests) // 2
        resumed: StreamParser | None = None
        # Tool-call ids are drawn at random: each side's map to one naming.
        ours: dict[str, str] = {}
        theirs: dict[str, str] = {}
        restored: dict[str, str] = {}
        for i, (request, answer) in enumerate(zip(requests, answers, strict=True)):
            if i == middle:
                # A parser restored from the snapshot continues as the server does.
                snapshot = parser.snapshot()
                prompt = request.get("prompt_token_ids")
                resumed = StreamParser(core, first["chat_request"], prompt, snapshot)
                restored = dict(ours)
            ids, finish, stop = chunk(request)
            got = parser.push(ids, finish, stop)
            want = answer["chunk"]["choices"][0] if answer["chunk"]["choices"] else None
            if got is None or want is None:
                if got != want:
                    failures.append(f"{case['id']} call {i}: {got} != {want}")
                continue
            mine = comparable(copy.deepcopy(got), ours)
            if mine != comparable(want, theirs):
                failures.append(f"{case['id']} call {i}: {got} != {want}")
                break
            if resumed is not None:
                again = resumed.push(ids, finish, stop)
                if again is None or comparable(again, restored) != mine:
                    failures.append(f"{case['id']} call {i}: the restored parser differs")
                    break
        else:
            state = answers[-1]["stream_state"]
            if state_text(parser.snapshot(), ours) != state_text(state, theirs):
                failures.append(f"{case['id']}: snapshot() is not the server's stream_state")
    assert failures == []


@pytest.mark.parametrize("config", PLAIN_CONFIGS)
def test_incremental_detokenizer_gives_the_servers_text(config: str) -> None:
    core = config_core(config)
    # Stop strings are cut by the server, not by a detokenizer.
    cases = [
        c
        for c in chat_streams(config)
        if not any(isinstance(chunk(r["request"])[2], str) for r in c["calls"])
    ]
    assert cases, f"{config}: no usable golden chat stream"
    failures = []
    for case in cases:
        requests = [c["request"] for c in case["calls"]]
        chat_request = requests[0].get("chat_request") or {}
        skip = chat_request.get("skip_special_tokens", True)
        prompt = requests[0].get("prompt_token_ids")
        detok = IncrementalDetokenizer(core, prompt, skip_special_tokens=skip)
        stepped = IncrementalDetokenizer(core, prompt, skip_special_tokens=skip)
        for i, (request, answer) in enumerate(
            zip(requests, server_stream(core, requests), strict=True)
        ):
            ids, _, _ = chunk(request)
            want = answer["chunk"]["choices"][0]["delta"].get("content") or ""
            got = detok.decode(ids)
            one_by_one = "".join(stepped.step(t) for t in ids)
            if got != want or one_by_one != want:
                failures.append(f"{case['id']} call {i}: {got!r} / {one_by_one!r} != {want!r}")
                break
    assert failures == []


def test_call_answers_dicts_and_raises_the_envelope_as_a_typed_error() -> None:
    core = config_core("qwen3_hermes")
    request = {"model": "qwen3", "messages": [{"role": "user", "content": "hi"}]}
    status, want = post(core, "/v1/chat/completions/render", request)
    assert status == 200
    got = core.call("/v1/chat/completions/render", request)
    assert got.pop("request_id").startswith("chatcmpl-")
    assert got == {k: v for k, v in want.items() if k != "request_id"}
    with pytest.raises(BadRequestError) as bad:
        core.call("/v1/chat/completions/render", {"messages": "hello"})
    assert (bad.value.status, bad.value.param) == (400, "body.messages")
    status, envelope = post(core, "/v1/chat/completions/render", {"messages": "hello"})
    assert bad.value.envelope() == envelope
    with pytest.raises(NotFoundError):
        core.call("/v1/chat/completions/render", {**request, "model": "other"})


def test_stream_parser_refuses_what_the_server_refuses() -> None:
    core = config_core("qwen3_hermes")
    with pytest.raises(BadRequestError) as no_prompt:
        StreamParser(core, {"messages": [{"role": "user", "content": "hi"}]})
    assert "prompt_token_ids is required" in no_prompt.value.message
    with pytest.raises(BadRequestError):
        StreamParser(core, {"messages": "hi", "stop": 3}, [1])
    plain = config_core(PLAIN_CONFIGS[0])
    with pytest.raises(BadRequestError, match="no parser configured"):
        StreamParser(plain, {"messages": [{"role": "user", "content": "hi"}]}, [1])
    parser = StreamParser(core, {"messages": [{"role": "user", "content": "hi"}]}, [1])
    with pytest.raises(BadRequestError, match="exceeds max_model_len"):
        parser.push([1] * (core.max_model_len + 1))
    state = json.loads(json.dumps(parser.snapshot()))
    state["data"] = state["data"][:-4]
    with pytest.raises(BadRequestError, match="stream_state"):
        StreamParser(core, {"messages": [{"role": "user", "content": "hi"}]}, [1], state)
