"""Each deliberate divergence from vLLM 0.33.0 (docs/divergences.md), checked
for the behaviour derender chose instead."""

from __future__ import annotations

import json

import pytest
from calls import (
    CHAT,
    CMPL,
    IM_END,
    PROMPT,
    assemble,
    batch,
    config_core,
    names_args,
    one_token_chunks,
    parser_core,
    post,
    stream,
)


def test_a_plain_stream_decodes_a_stop_token_before_the_finish_as_vllms_does(core):
    """Without a parser a stop token that ends a chunk without a finish is
    decoded at once, as vLLM's stream decodes it (batch drops it when the
    finish follows alone): held back, it went out a chunk late wherever the
    output went on, which is neither answer."""
    ids = core.encode("Hello world")
    request = {"prompt": "hi", "skip_special_tokens": False}
    answers = stream(
        core,
        CMPL,
        [(ids, None, None), ([IM_END], None, None), ([], "stop", None)],
        "completion_request",
        request,
    )
    texts = [a["chunk"]["choices"][0]["text"] for a in answers]
    assert texts == ["Hello world", "<|im_end|>", ""]
    assert all("held_token_ids" not in a["stream_state"] for a in answers)


def test_a_stop_token_the_output_goes_on_past_streams_in_its_own_chunk(core):
    request = {"prompt": "hi", "skip_special_tokens": False}
    chunks = [([IM_END], None, None), (core.encode(" more"), "length", None)]
    answers = stream(core, CMPL, chunks, "completion_request", request)
    assert [a["chunk"]["choices"][0]["text"] for a in answers] == ["<|im_end|>", " more"]


def test_stop_string_is_cut_from_the_final_chunk(core):
    """The engine reports a stop string only on the final chunk; vLLM's stream
    passes it through while batch cuts it. derender cuts it from that chunk."""
    head, tail = core.encode("Done. "), core.encode("###")
    request = {"messages": [{"role": "user", "content": "hi"}]}
    answers = stream(
        core, CHAT, [(head, None, None), (tail, "stop", "###")], "chat_request", request
    )
    content = "".join(a["chunk"]["choices"][0]["delta"]["content"] or "" for a in answers)
    assert content == "Done. "
    assert answers[-1]["chunk"]["choices"][0]["stop_reason"] == "###"


def test_stream_usage_prompt_tokens_follow_batch(core):
    """Without `prompt_tokens`, batch reports 0 prompt tokens; vLLM's stream
    takes the generate chunk's count. derender reports 0 in both."""
    body = {
        "stream": True,
        "generate_chunk": {
            "request_id": "s",
            "usage": {"prompt_tokens": 19, "total_tokens": 40, "completion_tokens": 21},
            "choices": [],
        },
    }
    status, out = post(core, CHAT, body)
    assert status == 200
    assert out["chunk"]["usage"]["prompt_tokens"] == 0
    assert out["chunk"]["usage"]["completion_tokens"] == 21
    body["prompt_tokens"] = 19
    assert post(core, CHAT, body)[1]["chunk"]["usage"]["prompt_tokens"] == 19


def test_inconsistent_window_offsets_are_refused(core):
    """vLLM decodes a hand-edited window with offsets past its end (garbled
    text); derender answers 400 naming the offsets."""
    for path in (CHAT, CMPL):
        body = {
            "stream": True,
            "generate_chunk": {"request_id": "s", "choices": [{"index": 0, "token_ids": [9707]}]},
            "stream_state": {"prev_tokens": ["a"], "prefix_offset": 5, "read_offset": 9},
        }
        status, out = post(core, path, body)
        assert status == 400
        assert "prefix_offset (5)" in out["error"]["message"]
        assert out["error"]["type"] == "BadRequestError"


def test_vllm_state_is_accepted_and_ours_is_vllm_shaped(core):
    """A state in vLLM's format continues the stream; ours has vLLM's keys."""
    body = {
        "stream": True,
        "generate_chunk": {"request_id": "s", "choices": [{"index": 0, "token_ids": [1879]}]},
        "stream_state": {
            "prev_tokens": ["ä½łå¥½"],
            "prefix_offset": 0,
            "read_offset": 1,
            "role_sent": True,
        },
    }
    status, out = post(core, CHAT, body)
    assert status == 200
    assert out["chunk"]["choices"][0]["delta"] == {
        "role": None,
        "content": " world",
        "reasoning": None,
    }
    assert list(out["stream_state"]) == [
        "prev_tokens", "prefix_offset", "read_offset", "role_sent", "logprob_context_token_ids",
        "logprob_text_offset", "output_token_ids", "output_chunk_lens", "tools_streamed",
        "last_tool_call_ids",
    ]  # fmt: skip


def test_parser_stream_answers_as_batch_when_the_prompt_closes_reasoning():
    """vLLM's stream reads reasoning state from the request's prompt: a prompt
    ending in `<think></think>` makes its whole stream content (deepseek_r1
    ignores `enable_thinking`), while its batch splits reasoning out. derender's
    stream gives the batch answer on every call (families whose streams follow
    vLLM's aside: minimax_m2's, tests/test_minimax_m2.py)."""
    core = parser_core("models/qwen3", "qwen3", reasoning_parser="deepseek_r1")
    think, end = core.encode("<think>"), core.encode("</think>")
    output = [*think, *core.encode("\nweighing it"), *end, *core.encode("\n\nAnswer."), IM_END]
    request = {
        "messages": [{"role": "user", "content": "hi"}],
        "chat_template_kwargs": {"enable_thinking": False},
    }
    prompt = [*PROMPT, *think, *core.encode("\n\n"), *end, *core.encode("\n\n")]
    state, reasoning, content = None, "", ""
    for i, tok in enumerate(output):
        generate = {
            "request_id": "s",
            "choices": [{"index": 0, "token_ids": [tok], "finish_reason": None}],
        }
        if i == 0:
            generate["prompt_token_ids"] = prompt
        if i == len(output) - 1:
            generate["choices"][0]["finish_reason"] = "stop"
        body = {
            "stream": True,
            "generate_chunk": generate,
            "stream_state": state,
            "prompt_token_ids": prompt,
            "chat_request": request,
        }
        status, out = post(core, CHAT, body)
        assert status == 200, out
        state = out["stream_state"]
        for choice in out["chunk"]["choices"]:
            reasoning += choice["delta"].get("reasoning") or ""
            content += choice["delta"].get("content") or ""
    message = batch(core, output, request)["message"]
    assert (reasoning, content) == (message["reasoning"], message["content"])
    assert "<think>" not in content
    assert reasoning == "\nweighing it"


def test_minimax_negative_stream_id_is_decoded_not_refused():
    """vLLM's minimax_m2 parser raises on a negative id ("derender failed",
    400); derender decodes the chunk as every other config does (200)."""
    core = parser_core(
        "models/qwen3", "minimax-m2", reasoning_parser="minimax_m2", tool_call_parser="minimax_m2"
    )
    ids = [*core.encode("ok"), -1]
    body = {
        "stream": True,
        "generate_chunk": {
            "request_id": "s",
            "choices": [{"index": 0, "token_ids": ids, "finish_reason": None}],
        },
        "stream_state": None,
        "prompt_token_ids": PROMPT,
        "chat_request": {"messages": [{"role": "user", "content": "hi"}]},
    }
    status, out = post(core, CHAT, body)
    assert status == 200, out
    assert out["chunk"]["choices"][0]["delta"]["reasoning"] == "ok"


def test_llama3_json_stream_completes_what_vllm_chunking_loses():
    """vLLM's llama3_json stream never sends a call that arrives whole in one
    chunk (its first look only opens the call). derender sends vLLM's chunks
    and completes the answer on the final chunk, as batch returns it."""
    core = parser_core("models/llama3", "llama3", tool_call_parser="llama3_json")
    eot = 128009
    text = (
        '{"name": "get_weather", "parameters": {"city": "Oslo"}}; '
        '{"name": "calc", "parameters": {}}'
    )
    tools = [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in ("get_weather", "calc")
    ]
    request = {"messages": [{"role": "user", "content": "hi"}], "tools": tools}
    ids = core.encode(text)
    for chunks in ([(ids, None, None), ([eot], "stop", None)], [([*ids, eot], "stop", None)]):
        got = assemble(stream(core, CHAT, chunks, "chat_request", request))
        assert got["content"] == ""
        expected = {0: ("get_weather", '{"city": "Oslo"}'), 1: ("calc", "{}")}
        assert names_args(got["calls"]) == expected
        assert got["finish"] == "tool_calls"
    # A bare object that never names a call ends as the content batch returns.
    named = {**request, "tool_choice": {"type": "function", "function": {"name": "calc"}}}
    bare = core.encode('{"expression": "1 + 1"}')
    answers = stream(core, CHAT, [(bare, None, None), ([eot], "stop", None)], "chat_request", named)
    got = assemble(answers)
    assert (got["content"], got["calls"], got["finish"]) == ('{"expression": "1 + 1"}', {}, "stop")


def test_llama3_json_call_that_batch_rejects_for_later_text_stays_streamed():
    """vLLM 0.33's batch reads a llama3_json call with a greedy brace match,
    so later text holding a brace makes the whole answer content. The call
    has streamed by then (as in vLLM's stream) and cannot be taken back."""
    core = parser_core("models/llama3", "llama3", tool_call_parser="llama3_json")
    eot = 128009
    text = '{"name": "searchTool", "parameters": {"query": "test"}} I used {searchTool} for this.'
    tool = {"name": "searchTool", "parameters": {"type": "object"}}
    request = {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": tool}],
    }
    ids = [*core.encode(text), eot]
    message = batch(core, ids, request)["message"]
    assert (message["content"], message.get("tool_calls")) == (text, None)
    got = assemble(stream(core, CHAT, one_token_chunks(ids), "chat_request", request))
    assert names_args(got["calls"]) == {0: ("searchTool", '{"query": "test"}')}
    assert got["finish"] == "tool_calls"


def test_deepseek_r1_text_streamed_before_a_late_think_marker_stays():
    """DeepSeek-R1 output opening with a newline and then a literal `<think>`:
    batch drops what precedes the marker. One token per chunk, the newline
    has streamed as reasoning before the marker shows (as in vLLM's stream);
    in one chunk with the marker, it is dropped as batch drops it."""
    core = parser_core("models/deepseek_r1", "deepseek-r1", reasoning_parser="deepseek_r1")
    eos = 1
    ids = [*core.encode("\n<think>Some reasoning</think>\nThe answer"), eos]
    request = {"messages": [{"role": "user", "content": "hi"}]}
    message = batch(core, ids, request)["message"]
    assert (message["reasoning"], message["content"]) == ("Some reasoning", "\nThe answer")
    got = assemble(stream(core, CHAT, one_token_chunks(ids), "chat_request", request))
    assert (got["reasoning"], got["content"]) == ("\nSome reasoning", "\nThe answer")
    whole = assemble(stream(core, CHAT, [(ids, "stop", None)], "chat_request", request))
    assert (whole["reasoning"], whole["content"]) == ("Some reasoning", "\nThe answer")


def test_pythonic_stream_answers_as_batch_when_no_call_can_follow():
    """vLLM's pythonic stream withholds everything after a leading `[`, so text
    that is not a call list (`[1] ...`, a bare-name argument) is lost from its
    stream while batch returns it as content. derender streams it as content:
    once the text can no longer match, or at the end when nothing was streamed."""
    core = parser_core("models/qwen3", "m", tool_call_parser="pythonic")
    tool = {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object"}},
    }
    request = {"messages": [{"role": "user", "content": "hi"}], "tools": [tool]}
    for text in ["[1] See the footnote.", "[get_weather(city=Paris)]"]:
        output = [*core.encode(text), IM_END]
        got = assemble(stream(core, CHAT, one_token_chunks(output), "chat_request", request))
        message = batch(core, output, request)["message"]
        assert (got["content"], got["calls"]) == (message["content"], {}) == (text, {})


TOOL_CALLS = 5
MISTRAL_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {"type": "object", "properties": {"a": {"type": "string"}}},
        },
    }
]


def mistral_batch_and_stream(core, ids, chat_request, split_at):
    """The batch message, and the stream's assembled content / calls when
    `ids` arrive as two chunks split at each index in `split_at`."""
    message = batch(core, ids, chat_request)["message"]
    streams = []
    for i in split_at:
        chunks = [(ids[:i], None, None), (ids[i:], "stop", None)]
        got = assemble(stream(core, CHAT, chunks, "chat_request", chat_request))
        streams.append((got["content"], names_args(got["calls"])))
    return message, streams


def test_mistral_stream_drops_text_after_the_calls_and_splits_cleanly():
    """vLLM's mistral stream sends text after `]` as content; its batch answer
    drops it. derender's stream follows batch at every chunk boundary. (The
    `: {` vLLM streams when a delta ends between `"arguments"` and `:` is
    covered by the Rust unit tests: this tokenizer keeps `":` in one token.)"""
    core = parser_core("models/mistral", "mistral", tool_call_parser="mistral")
    text = ' [{"name": "f", "arguments": {"a": "x"}}] tail'
    ids = [TOOL_CALLS, *core.encode(text)]
    request = {"messages": [{"role": "user", "content": "hi"}], "tools": MISTRAL_TOOLS}
    message, streams = mistral_batch_and_stream(core, ids, request, range(1, len(ids)))
    assert message["content"] is None
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]] == [
        ("f", '{"a": "x"}')
    ]
    for content, calls in streams:
        assert content == ""
        assert calls == {0: ("f", '{"a": "x"}')}


def test_mistral_stream_without_a_call_ends_with_the_batch_content():
    """A guided named choice answers with the bare arguments object, which is
    no call: batch returns it as content, vLLM's stream returns nothing.
    derender's stream sends it as content when the stream ends. With
    `tool_choice: "none"` the whole text streams as content, as in batch."""
    core = parser_core("models/mistral", "mistral", tool_call_parser="mistral")
    text = '{"a": "x"}'
    ids = core.encode(text)
    named = {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": MISTRAL_TOOLS,
        "tool_choice": {"type": "function", "function": {"name": "f"}},
    }
    message, streams = mistral_batch_and_stream(core, ids, named, [1, len(ids)])
    assert message["content"] == text and not message.get("tool_calls")
    assert all(s == (text, {}) for s in streams)
    none = {**named, "tool_choice": "none"}
    ids = [TOOL_CALLS, *core.encode(" [" + text + "]")]
    message, streams = mistral_batch_and_stream(core, ids, none, [1, 3])
    assert all(s == (message["content"], {}) for s in streams)


def test_kimi_k2_stream_agrees_with_batch_on_a_stand_in_tokenizer():
    """No recorded goldens for kimi_k2: its markers are plain text on the
    bundled Qwen3 tokenizer (as minimax_m2 runs there). A token-by-token
    stream gives the batch answer; ids are the calls' own headers."""
    core = parser_core(
        "models/qwen3", "kimi-k2", reasoning_parser="kimi_k2", tool_call_parser="kimi_k2"
    )
    section = (
        "<|tool_calls_section_begin|>"
        "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "北京 🌧"}<|tool_call_end|>'
        "<|tool_call_begin|>functions.get_news:1 <|tool_call_argument_begin|>"
        '{"topic": "tech"}<|tool_call_end|>'
        "<|tool_calls_section_end|>"
    )
    output = [*core.encode("<think>\nweighing it\n</think>I'll check. " + section), IM_END]
    tools = [
        {
            "type": "function",
            "function": {"name": n, "parameters": {"type": "object", "properties": {}}},
        }
        for n in ("get_weather", "get_news")
    ]
    request = {"messages": [{"role": "user", "content": "hi"}], "tools": tools}
    got = assemble(stream(core, CHAT, one_token_chunks(output), "chat_request", request))
    reasoning, content, calls = got["reasoning"], got["content"], got["calls"]
    choice = batch(core, output, request, prompt_ids=PROMPT)
    message = choice["message"]
    assert (reasoning, content) == (message["reasoning"], message["content"])
    assert (reasoning, content) == ("\nweighing it", "I'll check. ")
    streamed = [(c["id"], c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())]
    batched = [
        (t["id"], t["function"]["name"], json.loads(t["function"]["arguments"]))
        for t in message["tool_calls"]
    ]
    assert (
        streamed
        == batched
        == [
            ("functions.get_weather:0", "get_weather", {"city": "北京 🌧"}),
            ("functions.get_news:1", "get_news", {"topic": "tech"}),
        ]
    )
    assert got["finish"] == choice["finish_reason"] == "tool_calls"


def test_glm_stream_sends_text_after_a_streamed_call_as_vllms_does():
    """Batch drops all text after the first call once it returns calls;
    vLLM's stream sends it as content. GLM's streams follow vLLM's (they
    read the prompt as vLLM's do), so they send it too: at one token per
    chunk and all at once, as live vLLM 0.33.0 does. (Families whose
    streams read reasoning as batch does still drop it: step5, kimi_k2.)"""
    core = parser_core("models/qwen3", "glm", tool_call_parser="glm47", reasoning_parser="glm45")
    call = "<tool_call>f<arg_key>a</arg_key><arg_value>{}</arg_value></tool_call>"
    text = f"plan</think>Sure.{call.format('x')}\nDone, thanks.{call.format('y')} bye"
    ids = [*core.encode(text), IM_END]
    request = {"messages": [{"role": "user", "content": "hi"}], "tools": MISTRAL_TOOLS}
    message = batch(core, ids, request, prompt_ids=PROMPT)["message"]
    want_calls = {0: ("f", '{"a": "x"}'), 1: ("f", '{"a": "y"}')}
    assert (message["reasoning"], message["content"]) == ("plan", "Sure.")
    calls = [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]]
    assert dict(enumerate(calls)) == want_calls
    for chunks in (one_token_chunks(ids), [(ids, "stop", None)]):
        got = assemble(stream(core, CHAT, chunks, "chat_request", request))
        assert (got["reasoning"], got["content"]) == ("plan", "Sure.\nDone, thanks. bye"), chunks
        assert names_args(got["calls"]) == want_calls, chunks
        assert got["finish"] == "tool_calls"


def test_call_inside_an_open_think_block_streams_as_batch():
    """A call inside `<think>`, closed after the call: batch ends the
    reasoning at the call marker and drops the later `</think>`. vLLM's
    stream keeps `</think>` in text it hands on raw (qwen3 reasoning, here
    without tools); derender's streams give batch's answer at every
    chunking. (GLM's streams follow vLLM's, which loses the call when one
    chunk carries both markers: tests/test_left_batch.py.)"""
    qwen = parser_core("models/qwen3", "q", tool_call_parser="hermes", reasoning_parser="qwen3")
    hermes_call = '<tool_call>\n{"name": "f", "arguments": {"a": "x"}}\n</tool_call>'
    messages = [{"role": "user", "content": "hi"}]
    cases = [(qwen, f"<think>\nhmm\n{hermes_call}\n</think>\n\nbye", {"messages": messages}, [])]
    for core, text, request, calls in cases:
        ids = [*core.encode(text), IM_END]
        message = batch(core, ids, request, prompt_ids=PROMPT)["message"]
        want = {
            "reasoning": message["reasoning"],
            "content": message["content"] or "",
            "calls": [
                (c["function"]["name"], c["function"]["arguments"])
                for c in message.get("tool_calls") or []
            ],
        }
        assert want["calls"] == calls and "</think>" not in want["content"]
        chunkings = [one_token_chunks(ids), [(ids, "stop", None)]]
        chunkings += [[(ids[:i], None, None), (ids[i:], "stop", None)] for i in range(1, len(ids))]
        for chunks in chunkings:
            got = assemble(stream(core, CHAT, chunks, "chat_request", request))
            got_calls = [got["calls"][i] for i in sorted(got["calls"])]
            assert {
                "reasoning": got["reasoning"],
                "content": got["content"],
                "calls": [(c["name"], c["arguments"]) for c in got_calls],
            } == want, (text, chunks)


def test_internlm_batch_errors_are_400s_where_vllm_answers_500():
    """vLLM's InternLM batch parser raises on a call it cannot read: a JSON
    error (a `ValueError`: vLLM's 400, with Python's message) or a call
    without a name (a `KeyError`: vLLM's 500). derender answers 400 to both."""
    core = parser_core("models/internlm", "internlm", tool_call_parser="internlm")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    request = {"messages": [{"role": "user", "content": "hi"}], "tools": tools}
    for body, message in [
        ("{oops}", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        ('{"parameters": {}}', "KeyError: 'name'"),
    ]:
        ids = core.encode(f"<|action_start|><|plugin|>\n{body}<|action_end|>")
        status, out = post(
            core,
            CHAT,
            {
                "generate_response": {
                    "request_id": "b",
                    "choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}],
                },
                "chat_request": request,
            },
        )
        assert status == 400, out
        assert out["error"]["message"] == message


def test_minicpmv_without_thinking_streams_read_the_text_as_batch_does():
    """minicpmv with `enable_thinking: false`: vLLM's batch reads the answer
    through the MiniCPM-V grammar (a stray think block and reserved markers
    dropped), while its stream, the prompt having closed reasoning, hands the
    raw text to the tool parser and shows them. derender's stream reads a
    delta that completes a marker through the grammar: it assembles to the
    batch answer."""
    core = parser_core(
        "models/minicpmv", "minicpmv", reasoning_parser="minicpmv", tool_call_parser="qwen3_coder"
    )
    request = {
        "messages": [{"role": "user", "content": "hi"}],
        "chat_template_kwargs": {"enable_thinking": False},
    }
    ids = [*core.encode("<think>private</think><|reserved_13|>final\\nanswer"), IM_END]
    got = assemble(stream(core, CHAT, one_token_chunks(ids), "chat_request", request))
    message = batch(core, ids, request)["message"]
    assert got["content"] == message["content"] == "final\nanswer"
    assert got["reasoning"] == "" and message.get("reasoning") is None


def test_minicpmv_without_thinking_streams_text_the_grammar_keeps_as_vllms_do():
    """Text that only looks like the start of a marker (`<reserved_11>`): the
    grammar drops nothing, so the stream sends vLLM's raw text in vLLM's
    chunks instead of holding `<reserved_1` back (batch's answer is the same)."""
    core = parser_core(
        "models/minicpmv", "minicpmv", reasoning_parser="minicpmv", tool_call_parser="qwen3_coder"
    )
    request = {
        "messages": [{"role": "user", "content": "hi"}],
        "chat_template_kwargs": {"enable_thinking": False},
    }
    ids = core.encode("see <reserved_11> here")
    answers = stream(core, CHAT, one_token_chunks([*ids, IM_END]), "chat_request", request)
    shown = [a["chunk"]["choices"][0]["delta"].get("content") or "" for a in answers]
    # vLLM 0.33.0's chunks for these ids (its qwen3_coder parser holds a lone "<").
    assert shown == ["see", " ", "<reserved", "_", "1", "1", ">", " here", ""]
    assert batch(core, [*ids, IM_END], request)["message"]["content"] == "see <reserved_11> here"


def test_minimax_m3_streams_strip_call_names_as_batch_does():
    """minimax_m3: vLLM's batch strips a call's name, its stream sends the
    name as written (` get_weather `). derender's stream strips it too."""
    core = parser_core("models/minimax_m3", "minimax-m3", tool_call_parser="minimax_m3")
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    request = {"messages": [{"role": "user", "content": "hi"}], "tools": tools}
    ns = "]<]minimax[>["
    invoke = f'{ns}<invoke name=" get_weather ">\n{ns}<city>Oslo{ns}</city>\n{ns}</invoke>'
    ids = core.encode(f"{ns}<tool_call>\n{invoke}\n{ns}</tool_call>")
    got = assemble(stream(core, CHAT, one_token_chunks(ids), "chat_request", request))
    message = batch(core, ids, request)["message"]
    assert [c["name"] for c in got["calls"].values()] == ["get_weather"]
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["get_weather"]
    assert [json.loads(c["arguments"]) for c in got["calls"].values()] == [{"city": "Oslo"}]


def test_gemma4_streams_send_call_names_as_written_as_vllms_do():
    """gemma4: vLLM's batch strips a call's name, its stream keeps the
    spaces the model wrote. gemma4's streams follow vLLM's (unlike
    minimax_m3's, above), so the stream keeps them and batch strips them."""
    core = parser_core("models/gemma4", "gemma-4", tool_call_parser="gemma4")
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    request = {"messages": [{"role": "user", "content": "hi"}], "tools": tools}
    ids = core.encode('<|tool_call>call: get_weather {city:<|"|>Oslo<|"|>}<tool_call|>')
    got = assemble(stream(core, CHAT, one_token_chunks(ids), "chat_request", request))
    message = batch(core, ids, request)["message"]
    assert [c["name"] for c in got["calls"].values()] == [" get_weather "]
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["get_weather"]
    assert [json.loads(c["arguments"]) for c in got["calls"].values()] == [{"city": "Oslo"}]


def test_gemma4_streams_read_the_prompt_as_vllms_do():
    """gemma4's streams follow vLLM's, which reads the prompt: with thinking off
    the template ends it in an empty `<|channel>thought\n<channel|>`, so reasoning
    has ended and the tool engine reads the whole output, a thought it opens
    included; content streams as it comes, and the message is batch's. The
    special tokens the engines drop (`<turn|>`, `<eos>`) show nowhere, so a stop
    token among them is decoded at once, not held back to the next call."""
    core = config_core("gemma4")
    request = {"messages": [{"role": "user", "content": "hi"}]}
    prompt = core.encode("<|turn>user\nhi<turn|>\n<|turn>model\n")
    prompt += core.encode("<|channel>thought\n<channel|>")
    texts = [
        "<|channel>thought\n",
        "weighing it \n<channel|>",
        "Answer",
        " here<turn|>",
        "<eos><turn|>",
    ]
    chunks = [core.encode(text) for text in texts]
    finishes = [None] * (len(chunks) - 1) + ["stop"]
    sent = [(ids, finish, None) for ids, finish in zip(chunks, finishes, strict=True)]
    answers = stream(core, CHAT, sent, "chat_request", request, prompt_ids=prompt)
    sent_deltas = [a["chunk"]["choices"][0]["delta"] for a in answers]
    deltas = [(d.get("reasoning"), d.get("content")) for d in sent_deltas]
    reasoning = ("weighing it", None)
    assert deltas == [(None, None), reasoning, (None, "Answer"), (None, " here"), (None, None)]
    output = [tok for ids in chunks for tok in ids]
    message = batch(core, output, request, prompt_ids=prompt)["message"]
    assert (message["reasoning"], message["content"]) == ("weighing it", "Answer here")


def test_hunyuan_a13b_streams_answer_token_less_chunks():
    """hunyuan_a13b: vLLM's reasoning stream asserts one token per delta,
    so a finish-only final chunk (or one whose stop token is held back) is
    a 400 there. derender fails the chunks vLLM fails for their length (two
    or more tokens) but answers token-less ones."""
    core = parser_core("models/hunyuan_a13b", "hunyuan-a13b", reasoning_parser="hunyuan_a13b")
    request = {"messages": [{"role": "user", "content": "hi"}]}
    ids = core.encode("<think>\nhm\n</think>\n<answer>\nok")
    chunks = [([tok], None, None) for tok in ids] + [([], "stop", None)]
    got = assemble(stream(core, CHAT, chunks, "chat_request", request))
    message = batch(core, ids, request)["message"]
    assert (got["reasoning"], got["content"]) == ("hm", "ok")
    assert (message["reasoning"], message["content"]) == ("hm", "ok")
    body = {
        "stream": True,
        "generate_chunk": {"request_id": "s", "choices": [{"index": 0, "token_ids": ids[:2]}]},
        "prompt_token_ids": [1],
        "chat_request": request,
    }
    status, out = post(core, CHAT, body)
    assert (status, out["error"]["message"]) == (400, "invalid stream_state: derender failed")


def test_hy_v4_responses_render_with_tools_is_the_chat_render():
    """vLLM's hy_v4 parser crashes (500) on Responses tools, which have no
    `.function`; derender renders the request as the chat route renders the
    same conversation (the Responses route adds the BOS), with the same
    structural tag for forced calls."""
    core = parser_core("models/hy_v4", "hy4", reasoning_parser="hy_v4", tool_call_parser="hy_v4")
    tool = {
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }
    choices = [
        ("none", "none"),
        ("auto", "auto"),
        ("required", "required"),
        (
            {"type": "function", "name": "get_weather"},
            {"type": "function", "function": {"name": "get_weather"}},
        ),
    ]
    bos = core.encode("<|begin_of_text|>")
    for responses_choice, chat_choice in choices:
        status, responses = post(
            core,
            "/v1/responses/render",
            {
                "input": "Weather?",
                "tools": [{"type": "function", **tool}],
                "tool_choice": responses_choice,
            },
        )
        assert status == 200, responses
        status, chat = post(
            core,
            "/v1/chat/completions/render",
            {
                "messages": [{"role": "user", "content": "Weather?"}],
                "tools": [{"type": "function", "function": tool}],
                "tool_choice": chat_choice,
            },
        )
        assert status == 200, chat
        assert responses["token_ids"] == bos + chat["token_ids"]
        tags = [r["sampling_params"].get("structured_outputs") for r in (responses, chat)]
        assert tags[0] == tags[1]
        forced = chat_choice not in ("none", "auto")
        assert (
            tags[0] is not None and "<tool_calls:opensource>" in tags[0]["structural_tag"]
        ) == forced


def test_harmony_parsers_need_a_gpt_oss_model(monkeypatch):
    """vLLM's `openai` / `openai_gptoss` stubs fail every derender on another
    model: derender refuses them at startup. A gpt-oss model takes no other
    parser (vLLM refuses it too, naming the parser's class). Harmony's
    instructions in the system message are not built: refused when set."""
    with pytest.raises(Exception, match="Harmony parsing needs a gpt_oss model"):
        parser_core("models/qwen3", "qwen3", reasoning_parser="openai_gptoss")
    with pytest.raises(
        Exception, match="Harmony requires GptOssToolParser, got --tool-call-parser hermes"
    ):
        parser_core("models/gpt_oss", "gpt-oss", tool_call_parser="hermes")
    with pytest.raises(Exception, match="Harmony requires GptOssReasoningParser"):
        parser_core(
            "models/gpt_oss", "gpt-oss", reasoning_parser="qwen3", tool_call_parser="openai"
        )
    monkeypatch.setenv("VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS", "1")
    with pytest.raises(Exception, match="VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS"):
        parser_core("models/gpt_oss", "gpt-oss", reasoning_parser="openai_gptoss")
    monkeypatch.setenv("VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS", "0")
    parser_core("models/gpt_oss", "gpt-oss", reasoning_parser="openai_gptoss")


def test_harmony_streams_hold_no_stop_token():
    """A `<|call|>` ending a chunk without a finish reason reaches the
    Harmony parser at once (vLLM's chunks), and a token-less finishing chunk
    keeps the engine's `stop_reason`."""
    core = parser_core(
        "models/gpt_oss", "gpt-oss", reasoning_parser="openai_gptoss", tool_call_parser="openai"
    )
    tools = [{"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}}]
    request = {
        "model": "gpt-oss",
        "messages": [{"role": "user", "content": "time?"}],
        "tools": tools,
    }
    head = core.encode(" to=functions.now<|channel|>commentary json<|message|>{}")
    call = core.encode("<|call|>")
    assert len(call) == 1
    state, chunks = None, []
    for ids, finish in ((head, None), (call, None), ([], "stop")):
        choice = {"index": 0, "token_ids": ids, "finish_reason": finish}
        body = {
            "stream": True,
            "generate_chunk": {"request_id": "s", "choices": [choice]},
            "stream_state": state,
            "prompt_token_ids": [1],
            "chat_request": request,
        }
        status, out = post(core, CHAT, body)
        assert status == 200, out
        state, chunks = out["stream_state"], [*chunks, out["chunk"]["choices"][0]]
    assert chunks[0]["delta"]["tool_calls"][0]["function"] == {"name": "now", "arguments": "{}"}
    assert chunks[2]["finish_reason"] == "tool_calls"
    assert chunks[2]["stop_reason"] is None


def test_harmony_responses_refuse_previous_input_messages():
    """vLLM's Harmony Responses branch puts `previous_input_messages` before
    the input; derender does not build that yet and says so instead of
    rendering without them."""
    core = parser_core("models/gpt_oss", "gpt-oss", reasoning_parser="openai_gptoss")
    body = {
        "model": "gpt-oss",
        "input": "And tomorrow?",
        "previous_input_messages": [{"role": "user", "content": "Weather in Oslo?"}],
    }
    status, out = post(core, "/v1/responses/render", body)
    assert (status, out["error"]["param"]) == (400, "previous_input_messages")
    status, out = post(core, "/v1/responses/render", {**body, "previous_input_messages": []})
    assert status == 200 and out["token_ids"][-2:] == core.encode("<|start|>assistant")


BEAM_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
BEAM_CALL, BEAM_RETURN = 151675, 151674  # <|call|>, <|return|>: generation_config stop tokens


def test_beam_stop_token_closing_a_call_is_not_held():
    """Beam's `<|call|>` closing a parsed call shows no text, so it is decoded
    at once, as vLLM decodes it (the call streams with it). Shown as content
    (tool_choice none), it streams in its own chunk too, as vLLM's does: a
    finish coming alone would send nothing more (tests/test_stop_token_hold.py)."""
    core = config_core("beam")
    head = core.encode(
        "<|channel|>analysis<|message|>r<|end|>to=get_weather<|channel|>analysis"
        ' <|constrain|>xml<|message|><rfl:parameter name="city">Paris</rfl:parameter>'
    )
    request = {"messages": [{"role": "user", "content": "hi"}], "tools": BEAM_TOOLS}
    chunks = [(head, None, None), ([BEAM_CALL], None, None), ([BEAM_RETURN], "stop", None)]
    parsed = stream(core, CHAT, chunks, "chat_request", request)
    call = parsed[1]["chunk"]["choices"][0]["delta"]["tool_calls"][0]["function"]
    assert call == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert "held_token_ids" not in parsed[1]["stream_state"]
    # A token-less finish after it: the same answer as batch's.
    finish_only = [(head, None, None), ([BEAM_CALL], None, None), ([], "stop", None)]
    answers = stream(core, CHAT, finish_only, "chat_request", request)
    assert names_args(assemble(answers)["calls"]) == {0: ("get_weather", '{"city": "Paris"}')}
    shown = stream(core, CHAT, chunks, "chat_request", {**request, "tool_choice": "none"})
    deltas = [a["chunk"]["choices"][0]["delta"]["content"] for a in shown]
    assert deltas[1] == "<|call|>" and deltas[2] is None


def test_beam_named_custom_tool_is_its_shim():
    """vLLM answers a named custom tool choice on Responses with a 500 (its
    `_named_tool` reads `.function` off the choice); derender constrains the call
    to the custom tool's function shim, as for a named function."""
    core = config_core("beam")
    body = {
        "model": "beam",
        "input": "x",
        "tools": [{"type": "custom", "name": "shell"}],
        "tool_choice": {"type": "custom", "name": "shell"},
    }
    status, out = post(core, "/v1/responses/render", body)
    assert status == 200, out
    tag = json.loads(out["sampling_params"]["structured_outputs"]["structural_tag"])
    text = json.dumps(tag)
    assert "to=shell" in text and '<rfl:parameter name=\\"input\\">' in text


def _mistral_core():
    from conftest import MODEL_DIRS

    from derender._native import Derenderer

    return Derenderer(
        str(MODEL_DIRS["models/magistral"]),
        served_model_names=["magistral"],
        tokenizer_mode="mistral",
        reasoning_parser="mistral",
        tool_call_parser="mistral",
        enable_auto_tool_choice=True,
    )


def test_mistral_ids_past_the_vocabulary_are_400s_where_vllm_answers_500():
    """vLLM's Mistral tokenizer raises tiktoken's `KeyError` on an id past the
    tekken vocabulary wherever it decodes one alone (`/detokenize`, logprobs):
    vLLM answers 500, derender 400 with the same message."""
    core = _mistral_core()
    status, out = post(core, "/detokenize", {"tokens": [131072]})
    assert (status, out["error"]["message"]) == (400, "'Invalid token for decoding: 130072'")
    ids = core.encode("Hi")
    logprobs = {"content": [{"token_id": 131072, "logprob": -0.5, "rank": 1, "top_logprobs": []}]}
    choice = {"index": 0, "token_ids": ids, "finish_reason": "stop", "logprobs": logprobs}
    body = {
        "generate_responses": [{"request_id": "b", "choices": [choice]}],
        "completion_request": {"prompt": "x", "logprobs": 1},
    }
    status, out = post(core, CMPL, body)
    assert (status, out["error"]["message"]) == (400, "'Invalid token for decoding: 130072'")


def test_mistral_plain_streams_answer_a_chunk_that_ends_inside_a_character():
    """With special tokens skipped, vLLM's Mistral tokenizer holds a split
    character's pieces as `bytes`, which its stream state cannot serialize:
    vLLM answers such a chunk 400 (`Object of type bytes is not JSON
    serializable`). derender answers it, so the stream assembles to the batch
    text."""
    core = _mistral_core()
    ids = core.encode("Sunny 🌤️ today")
    answers = stream(
        core, CMPL, one_token_chunks(ids), "completion_request", {"prompt": "x"}, prompt_ids=[1]
    )
    text = "".join(a["chunk"]["choices"][0]["text"] for a in answers)
    assert text == "Sunny 🌤️ today"
