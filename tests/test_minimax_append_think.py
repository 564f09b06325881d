"""`minimax_m2_append_think`: batch writes `<think>` before the whole output
and reads the calls from it; streams are vLLM's, which keep tool markup as
text until a `</think>` and decode a stop token that comes before the finish."""

from __future__ import annotations

import json

from calls import CHAT, IM_END, PROMPT, assemble, batch, one_token_chunks, parser_core, stream
from minimax_markup import CALL, END_THINK, REQUEST, THINK


def _core():
    return parser_core(
        "models/qwen3",
        "minimax-m2",
        reasoning_parser="minimax_m2_append_think",
        tool_call_parser="minimax_m2",
    )


def test_batch_reads_the_calls_after_the_written_back_think():
    core = _core()
    message = batch(core, [*core.encode(CALL), IM_END], REQUEST)["message"]
    assert message["content"] == "<think>"
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["get_weather"]
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"city": "Oslo"}


def test_a_stream_keeps_tool_markup_as_text_until_a_closing_think():
    core = _core()
    ids = [*core.encode("Sure. " + CALL), IM_END]
    for chunks in (one_token_chunks(ids), [(ids, "stop", None)]):
        got = assemble(stream(core, CHAT, chunks, "chat_request", REQUEST))
        assert got["content"] == "<think>Sure. " + CALL
        assert got["calls"] == {}


def test_after_a_prompt_that_closed_reasoning_the_tool_parser_reads_the_stream():
    """The prompt's last think marker is `</think>`: vLLM's stream starts
    past reasoning, so no `<think>` is written and the calls are parsed."""
    core = _core()
    prompt = [*PROMPT, THINK, 271, END_THINK, 271]
    ids = [*core.encode(CALL), IM_END]
    got = assemble(
        stream(core, CHAT, one_token_chunks(ids), "chat_request", REQUEST, prompt_ids=prompt)
    )
    assert not got["content"]
    assert [c["name"] for c in got["calls"].values()] == ["get_weather"]
    assert [json.loads(c["arguments"]) for c in got["calls"].values()] == [{"city": "Oslo"}]


def test_text_after_a_call_streams_as_vllms_stream_sends_it():
    """Past a `</think>`, the tool parser runs; vLLM's stream sends the text
    after the call (batch drops it)."""
    core = _core()
    ids = [*core.encode("plan"), END_THINK, *core.encode(CALL + "\nWaiting."), IM_END]
    got = assemble(stream(core, CHAT, one_token_chunks(ids), "chat_request", REQUEST))
    assert got["content"].endswith("Waiting.")
    assert [c["name"] for c in got["calls"].values()] == ["get_weather"]
    message = batch(core, ids, REQUEST)["message"]
    assert "Waiting" not in (message["content"] or "")


def test_a_stop_token_before_the_finish_is_decoded_as_vllms_stream_decodes_it():
    """The tool parser keeps special tokens: vLLM's stream shows an EOS that
    arrives without its finish_reason. This stream follows vLLM's, so it
    does too (other families hold it back, as batch drops it)."""
    core = _core()
    ids = core.encode("Hello")
    answers = stream(
        core,
        CHAT,
        [(ids, None, None), ([IM_END], None, None), ([], "stop", None)],
        "chat_request",
        REQUEST,
    )
    assert assemble(answers)["content"] == "<think>Hello<|im_end|>"
