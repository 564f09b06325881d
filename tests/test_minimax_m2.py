"""`minimax_m2`: streams follow vLLM's, which read the prompt. A template
that closes the think block in the prompt (thinking off) makes the whole
output content there, where batch still splits the reasoning out."""

from __future__ import annotations

from calls import CHAT, IM_END, PROMPT, assemble, batch, one_token_chunks, parser_core, stream
from minimax_markup import CALL, END_THINK, REQUEST, THINK

OUTPUT = "\nPlan the call.</think>\n\nCalling now. " + CALL


def _core():
    return parser_core(
        "models/qwen3", "minimax-m2", reasoning_parser="minimax_m2", tool_call_parser="minimax_m2"
    )


def test_thinking_off_streams_the_output_as_content_where_batch_splits_reasoning():
    core = _core()
    ids = [*core.encode(OUTPUT), IM_END]
    closed = [*PROMPT, THINK, 271, END_THINK, 271]
    message = batch(core, ids, REQUEST, prompt_ids=closed)["message"]
    assert (message["reasoning"], message["content"]) == ("\nPlan the call.", "Calling now.")
    for chunks in (one_token_chunks(ids), [(ids, "stop", None)]):
        got = assemble(stream(core, CHAT, chunks, "chat_request", REQUEST, prompt_ids=closed))
        assert not got["reasoning"], chunks
        # The engine drops the `</think>` marker, as vLLM's does.
        assert got["content"] == "\nPlan the call.\n\nCalling now. ", chunks
        assert [c["name"] for c in got["calls"].values()] == ["get_weather"], chunks


def test_with_reasoning_open_the_stream_splits_it_as_batch_does():
    core = _core()
    ids = [*core.encode(OUTPUT), IM_END]
    got = assemble(stream(core, CHAT, one_token_chunks(ids), "chat_request", REQUEST))
    assert got["reasoning"] == "\nPlan the call."
    assert got["content"].strip() == "Calling now."
    assert [c["name"] for c in got["calls"].values()] == ["get_weather"]
