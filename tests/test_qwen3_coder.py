"""qwen3_coder's grammar (also seed_oss, mimo, nemotron_v3 tools) streams
text after a call as vLLM's stream does, where batch drops it: its streams
already send the whitespace before a call as vLLM's do, so they stay vLLM's
stream rather than becoming neither answer."""

from __future__ import annotations

from calls import CHAT, IM_END, assemble, batch, names_args, one_token_chunks, parser_core, stream

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {"type": "object", "properties": {"a": {"type": "string"}}},
        },
    }
]
REQUEST = {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}
CALL = "<tool_call>\n<function=f>\n<parameter=a>\n{}\n</parameter>\n</function>\n</tool_call>"


def test_text_after_a_call_streams_where_batch_drops_it():
    core = parser_core("models/qwen3_coder", "coder", tool_call_parser="qwen3_coder")
    text = f"Sure.\n{CALL.format('x')}\nDone, thanks."
    ids = [*core.encode(text), IM_END]
    message = batch(core, ids, REQUEST)["message"]
    assert message["content"] == "Sure."
    calls = [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]]
    assert calls == [("f", '{"a": "x"}')]
    for chunks in (one_token_chunks(ids), [(ids, "stop", None)]):
        got = assemble(stream(core, CHAT, chunks, "chat_request", REQUEST))
        assert got["content"].startswith("Sure.") and got["content"].endswith("Done, thanks."), (
            chunks
        )
        assert names_args(got["calls"]) == {0: ("f", '{"a": "x"}')}, chunks


def test_minicpmv_reasoning_keeps_text_after_calls_out_as_batch_does():
    """MiniCPM-V's stream reads reasoning as batch does where vLLM's reads the
    prompt, so with it the same tool parser drops text after calls."""
    core = parser_core(
        "models/qwen3_coder", "cpm", tool_call_parser="qwen3_coder", reasoning_parser="minicpmv"
    )
    ids = [*core.encode(f"</think>Sure.\n{CALL.format('x')}\nDone, thanks."), IM_END]
    for chunks in (one_token_chunks(ids), [(ids, "stop", None)]):
        got = assemble(stream(core, CHAT, chunks, "chat_request", REQUEST))
        assert "Done" not in (got["content"] or ""), chunks
        assert names_args(got["calls"]) == {0: ("f", '{"a": "x"}')}, chunks
