"""gpt-oss (Harmony) output parsing against vLLM's own HarmonyParser.

Replays the seeded random-sequence oracle (reference/harmony_oracle.jsonl.gz,
recorded in-process from vLLM 0.33.0 by reference/record_harmony_oracle.py)
through derender's chat derender route: every sequence as a batch, and as
streams chunked one id per call (`tok1`) and in seeded sizes 1-5 (`rand`),
each carrying the stream_state derender returned. The normal run replays every
third sequence; DERENDER_EXHAUSTIVE=1 replays them all.

Stream deltas are compared as vLLM's streaming derender sends them: where its
processor returned None vLLM sends an empty delta, so a null oracle delta
equals a delta without content, reasoning or tool calls; `role` (first chunk)
and the random tool call ids are left out.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from derender import Derenderer

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "reference" / "harmony_oracle.jsonl.gz"
CHAT = "/v1/chat/completions/derender"
SHOWN = 5


def load() -> tuple[dict, list[dict]]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as f:
        header, *records = map(json.loads, f)
    return header["header"], records


HEADER, RECORDS = load()
EXHAUSTIVE = os.environ.get("DERENDER_EXHAUSTIVE") == "1"
SAMPLE = RECORDS if EXHAUSTIVE else RECORDS[::3]


@pytest.fixture(scope="module")
def core() -> Derenderer:
    flags = HEADER["flags"]
    value = lambda name: flags[flags.index(name) + 1]  # noqa: E731
    return Derenderer(
        str(HERE / "models" / "gpt_oss"),
        served_model_names=[HEADER["served_model_name"]],
        reasoning_parser=value("--reasoning-parser"),
        tool_call_parser=value("--tool-call-parser"),
        enable_auto_tool_choice="--enable-auto-tool-choice" in flags,
    )


def chat_request(record: dict) -> dict:
    return {**HEADER["chat_request"], "include_reasoning": record["include_reasoning"]}


def post(core: Derenderer, body: dict) -> tuple[int, dict]:
    status, out = core.handle(CHAT, json.dumps(body).encode(), "application/json", None)
    return status, json.loads(out)


def calls(tool_calls: list[dict] | None) -> list[list]:
    return [[tc["function"]["name"], tc["function"]["arguments"]] for tc in tool_calls or []]


def delta(d: dict | None) -> dict:
    """A delta's content, reasoning and tool calls (index, name, arguments);
    null (vLLM's processor returned None) is the empty delta vLLM sends."""
    out: dict = {}
    for key in ("content", "reasoning"):
        if (d or {}).get(key) is not None:
            out[key] = d[key]
    tcs = (d or {}).get("tool_calls")
    if tcs and isinstance(tcs[0], dict):
        tcs = [
            [
                tc["index"],
                (tc.get("function") or {}).get("name"),
                (tc.get("function") or {}).get("arguments"),
            ]
            for tc in tcs
        ]
    if tcs:
        out["tool_calls"] = tcs
    return out


def show(record: dict, what: str) -> str:
    return (
        f"n={record['n']} kind={record['kind']} include_reasoning={record['include_reasoning']}"
        f" finish={record['finish']} ids={record['ids']}: {what}"
    )


def fail_report(mismatches: list[str], total: int) -> str:
    head = f"{len(mismatches)} of {total} sequences differ from vLLM; first {SHOWN}:\n"
    return head + "\n".join(mismatches[:SHOWN])


def test_batch_matches_vllm(core: Derenderer) -> None:
    mismatches = []
    for record in SAMPLE:
        body = {
            "generate_response": {
                "request_id": "b",
                "choices": [
                    {"index": 0, "token_ids": record["ids"], "finish_reason": record["finish"]}
                ],
            },
            "prompt_tokens": len(HEADER["prompt_token_ids"]),
            "prompt_token_ids": HEADER["prompt_token_ids"],
            "chat_request": chat_request(record),
        }
        status, out = post(core, body)
        if status != 200:
            mismatches.append(show(record, f"status {status}: {out}"))
            continue
        choice = out["choices"][0]
        message = choice["message"]
        got = {
            "reasoning": message.get("reasoning"),
            "content": message.get("content"),
            "tool_calls": calls(message.get("tool_calls")),
            "finish_reason": choice["finish_reason"],
        }
        if got != record["batch"]:
            mismatches.append(show(record, f"vllm {record['batch']} derender {got}"))
    assert not mismatches, fail_report(mismatches, len(SAMPLE))


def replay_stream(core: Derenderer, record: dict, lens: list[int]) -> tuple[list, str | None]:
    ids, state, deltas, finish_reason, start = record["ids"], None, [], None, 0
    for i, k in enumerate(lens):
        last = i == len(lens) - 1
        choice = {
            "index": 0,
            "token_ids": ids[start : start + k],
            "finish_reason": record["finish"] if last else None,
        }
        body = {
            "stream": True,
            "generate_chunk": {"request_id": "s", "choices": [choice]},
            "stream_state": state,
            "prompt_tokens": len(HEADER["prompt_token_ids"]),
            "prompt_token_ids": HEADER["prompt_token_ids"],
            "chat_request": chat_request(record),
        }
        status, out = post(core, body)
        if status != 200:
            raise AssertionError(f"chunk {i}: status {status}: {out}")
        state = out["stream_state"]
        (c,) = out["chunk"]["choices"]
        deltas.append(delta(c["delta"]))
        if last:
            finish_reason = c["finish_reason"]
        start += k
    return deltas, finish_reason


@pytest.mark.parametrize("chunking", ["tok1", "rand"])
def test_stream_matches_vllm(core: Derenderer, chunking: str) -> None:
    mismatches = []
    for record in SAMPLE:
        expected = record["streams"][chunking]
        lens = expected["lens"] or [1] * len(record["ids"])
        try:
            deltas, finish_reason = replay_stream(core, record, lens)
        except AssertionError as e:
            mismatches.append(show(record, str(e)))
            continue
        want = [delta(d) for d in expected["deltas"]]
        if deltas != want:
            i = next(i for i, (a, b) in enumerate(zip(deltas, want, strict=True)) if a != b)
            mismatches.append(
                show(record, f"lens={lens} chunk {i}: vllm {want[i]} derender {deltas[i]}")
            )
        elif finish_reason != expected["finish_reason"]:
            mismatches.append(
                show(record, f"finish vllm {expected['finish_reason']} derender {finish_reason}")
            )
    assert not mismatches, fail_report(mismatches, len(SAMPLE))
