"""A stream whose text has left batch's answer can only be vLLM's stream, so
it follows vLLM's on the three points where derender otherwise answers as
batch (docs/divergences.md): a stop token that ends a chunk before a
finish-only chunk, a stop string the engine reports on the final chunk, and
usage without the request's `prompt_tokens`. Half of each such stream from
each answer would be neither."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from calls import CHAT, PROMPT, assemble, batch, config_core, one_token_chunks, post, stream

LLAMA_EOT = 128009
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
        },
    }
]
REQUEST = {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}


def finish_only(ids: list[int], last: int) -> list[tuple]:
    """`ids` then the stop token `last` in one chunk, the finish alone after."""
    return [(ids, None, None), ([last], None, None), ([], "stop", None)]


def usage_chunk(core, state: str, request: dict, prompt_ids: list[int]) -> dict:
    """The usage-only chunk that ends a stream; the engine counts 12 prompt tokens."""
    body = {
        "stream": True,
        "generate_chunk": {
            "request_id": "s",
            "usage": {"prompt_tokens": 12, "total_tokens": 20, "completion_tokens": 8},
            "choices": [],
        },
        "stream_state": state,
        "prompt_token_ids": prompt_ids,
        "chat_request": request,
    }
    status, out = post(core, CHAT, body)
    assert status == 200, out
    return out["chunk"]["usage"]


def test_text_before_a_json_call_shows_the_stop_token_as_vllms_stream_does():
    """llama3_json streams text that does not open with a call as content,
    where batch reads the call anywhere: the stream is vLLM's, `<|eot_id|>`
    included."""
    core = config_core("llama3_json")
    text = core.encode('Sure. {"name": "f", "parameters": {"a": 1}}')
    message = batch(core, [*text, LLAMA_EOT], REQUEST)["message"]
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["f"]
    got = assemble(stream(core, CHAT, finish_only(text, LLAMA_EOT), "chat_request", REQUEST))
    assert got["content"] == 'Sure. {"name": "f", "parameters": {"a": 1}}<|eot_id|>'
    assert got["calls"] == {}


def test_usage_takes_the_engines_prompt_count_once_calls_were_dropped():
    """Without tools, the mistral stream drops the calls it parses, as
    vLLM's does, where batch answers JSON it cannot read (a brace short) as
    content: its usage is vLLM's stream's too. A stream equal to batch's
    answer reports 0."""
    core = config_core("mistral")
    request = {"messages": [{"role": "user", "content": "hi"}]}
    prompt = core.encode("hi")
    json_text = '[{"name": "f", "arguments": {"a": 1}]'
    call = [5, *core.encode(json_text)]
    chunks = one_token_chunks(call)
    answers = stream(core, CHAT, chunks, "chat_request", request, prompt_ids=prompt)
    assert assemble(answers)["content"] == ""
    assert batch(core, call, request)["message"]["content"] == json_text
    assert usage_chunk(core, answers[-1]["stream_state"], request, prompt)["prompt_tokens"] == 12

    text = core.encode("Hello there.")
    answers = stream(core, CHAT, [(text, "stop", None)], "chat_request", request, prompt_ids=prompt)
    assert assemble(answers)["content"].strip() == batch(core, text, request)["message"]["content"]
    assert usage_chunk(core, answers[-1]["stream_state"], request, prompt)["prompt_tokens"] == 0


def test_a_family_whose_stream_follows_vllms_keeps_the_stop_string():
    """K2 Horizon's stream is vLLM's wherever vLLM's disagrees with batch;
    vLLM's stream keeps a stop string the engine reports at the end."""
    core = config_core("k2_horizon")
    request = {"messages": [{"role": "user", "content": "hi"}]}
    head, tail = core.encode("Done. "), core.encode("###")
    answers = stream(
        core, CHAT, [(head, None, None), (tail, "stop", "###")], "chat_request", request
    )
    got = assemble(answers)
    assert (got["reasoning"] + got["content"]).endswith("Done. ###")


def test_phi4_mini_stream_sends_nothing_and_shows_the_stop_token_as_vllms():
    """vLLM's phi4_mini_json stream sends none of the text, which batch
    answers: a stop token before the finish is vLLM's too (no stop_reason
    left for the finish-only chunk, where holding it back reported one)."""
    core = config_core("phi4_mini")
    ids = core.encode("Sure. Some text.")
    end = core.encode("<|end|>")
    answers = stream(core, CHAT, finish_only(ids, end[-1]), "chat_request", REQUEST)
    assert assemble(answers)["content"] == ""
    assert answers[-1]["chunk"]["choices"][0]["stop_reason"] is None
    assert batch(core, [*ids, end[-1]], REQUEST)["message"]["content"] == "Sure. Some text."


def test_glm_stream_reads_a_prompt_whose_tool_markup_ends_reasoning():
    """GLM-4.5/4.7 streams follow vLLM's: a prompt holding `<tool_call>` (the
    tools' instructions) ends reasoning for vLLM's stream, so an answer
    without `<think>` streams as content, where batch answers reasoning. A
    `<think>` block then streams with its trailing whitespace held back,
    as vLLM's engine holds it on the tool side too."""
    core = config_core("glm47")
    tool_call, think, end_think = 151657, 151667, 151668
    prompt = [*PROMPT[:-3], tool_call, *PROMPT[-3:]]
    text = core.encode("Plain answer.")
    one = [([t], None, None) for t in text]
    got = assemble(stream(core, CHAT, one, "chat_request", REQUEST, prompt_ids=prompt))
    assert (got["reasoning"], got["content"]) == ("", "Plain answer.")
    assert batch(core, text, REQUEST)["message"]["reasoning"] == "Plain answer."

    ids = [think, *core.encode("\nhmm\n"), end_think, *core.encode("Yes.")]
    answers = stream(
        core, CHAT, [([t], None, None) for t in ids], "chat_request", REQUEST, prompt_ids=prompt
    )
    pieces = [a["chunk"]["choices"][0]["delta"].get("reasoning") or "" for a in answers]
    assert "".join(pieces) == "\nhmm"
    # The lone "\n" goes out with the next piece; the last "\n" never does.
    assert all(p.strip() for p in pieces if p)
    assert assemble(answers)["content"] == "Yes."


def test_glm_stream_loses_a_call_closed_with_the_think_block_in_one_chunk_as_vllms():
    """A call inside `<think>` whose `</think>` comes in the same chunk:
    vLLM's stream cuts the content after that `</think>` and so sends the
    call's markup as text, where batch returns the call. GLM's stream is
    vLLM's (checked against live vLLM 0.33.0 at every two-chunk cut)."""
    core = config_core("glm47")
    call = "<tool_call>f<arg_key>a</arg_key><arg_value>x</arg_value></tool_call>"
    ids = [*core.encode(f"<think>\nhmm\n{call}\n</think>\n\nbye"), 151645]
    message = batch(core, ids, REQUEST, prompt_ids=PROMPT)["message"]
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["f"]
    got = assemble(stream(core, CHAT, [(ids, "stop", None)], "chat_request", REQUEST))
    assert (got["reasoning"], got["content"], got["calls"]) == ("\nhmm", f"{call}\n\n\nbye", {})


def test_holo2_stream_keeps_the_think_marker_and_the_blank_line_before_a_call_as_vllms():
    """A first chunk that opens with `<think>` and goes on: vLLM's stream
    keeps the marker in its reasoning (batch drops it), and then sends the
    blank line between `</think>` and the call as content (batch drops that
    too). Holo2's stream is vLLM's throughout; reading the marker as batch
    and the blank line as vLLM left it neither answer. The chunks are the
    golden `0208-think_tool` output cut every 22 tokens, and the expected
    deltas are live vLLM 0.33.0's answers at those cuts."""
    path = Path(__file__).parent / "reference/goldens/holo2.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        case = next(
            c for c in map(json.loads, f) if c["id"].endswith("0208-think_tool-tools_auto-tok1")
        )
    first = case["calls"][0]["request"]
    ids = [
        i for c in case["calls"] for i in c["request"]["generate_chunk"]["choices"][0]["token_ids"]
    ]
    chunks = [(ids[i : i + 22], None, None) for i in range(0, len(ids), 22)]
    chunks[-1] = (chunks[-1][0], "stop", None)
    core = config_core("holo2")
    answers = stream(
        core,
        CHAT,
        chunks,
        "chat_request",
        first["chat_request"],
        prompt_ids=first["prompt_token_ids"],
    )
    deltas = [a["chunk"]["choices"][0]["delta"] for a in answers]
    sent = [(d.get("reasoning"), d.get("content")) for d in deltas]
    assert sent[:2] == [
        (
            "<think>\nOkay, so compound interest works in three steps: setup, iteration,"
            " and cleanup. Let me think",
            None,
        ),
        (" about photosynthesis for a moment.\n", "\n\n"),
    ]
    got = assemble(answers)
    assert [c["name"] for c in got["calls"].values()] == ["send_email"]
    assert json.loads(got["calls"][0]["arguments"])["to"] == ["chen@example.com"]
    message = batch(core, ids, first["chat_request"], prompt_ids=first["prompt_token_ids"])[
        "message"
    ]
    assert not message["reasoning"].startswith("<think>")
    assert message["content"] is None
