"""A stop token that ends a chunk without a finish, on a parser stream
(docs/divergences.md, "Streams follow the batch answer"): decoded in that
chunk, as vLLM's stream decodes it, unless a finish coming alone next would
leave the stream neither answer; held back there, and dropped if that
finish comes, as batch drops it."""

from __future__ import annotations

from calls import CHAT, IM_END, PROMPT, assemble, batch, config_core, parser_core, stream

SHOWN = {"messages": [{"role": "user", "content": "hi"}], "skip_special_tokens": False}
LLAMA_EOT = 128009


def contents(answers: list[dict]) -> list[str]:
    return [a["chunk"]["choices"][0]["delta"].get("content") or "" for a in answers]


def test_a_stop_token_the_output_goes_on_past_goes_out_in_its_own_chunk():
    """A `generation_config` EOS inside the output: vLLM's stream sends it
    with the chunk it ends, and its stream is batch's answer. Held back, it
    went out a chunk late: neither answer."""
    core = config_core("llama3_json")
    head, tail = core.encode("Hello"), core.encode(" world")
    chunks = [([*head, LLAMA_EOT], None, None), (tail, "length", None)]
    answers = stream(core, CHAT, chunks, "chat_request", SHOWN)
    assert contents(answers) == ["Hello<|eot_id|>", " world"]
    message = batch(core, [*head, LLAMA_EOT, *tail], SHOWN)["message"]
    assert message["content"] == "Hello<|eot_id|> world"


def test_a_stream_that_stays_vllms_shows_the_stop_token_before_a_lone_finish():
    """Where the stream is vLLM's so far and its finish would send nothing,
    the whole stream is vLLM's, the stop token included (vLLM's stream and
    batch disagree there, so either answer is allowed)."""
    core = config_core("llama3_json")
    text = core.encode("Hello")
    chunks = [(text, None, None), ([LLAMA_EOT], None, None), ([], "stop", None)]
    answers = stream(core, CHAT, chunks, "chat_request", SHOWN)
    assert contents(answers) == ["Hello", "<|eot_id|>", ""]
    assert batch(core, [*text, LLAMA_EOT], SHOWN)["message"]["content"] == "Hello"


def test_a_finish_that_completes_a_forced_call_holds_the_stop_token():
    """With a tool forced by name, vLLM's llama3_json stream sends none of
    the arguments, which batch answers as content; this stream sends them at
    the finish, completing batch's answer. The stop token before a lone
    finish is held, or that content would carry it."""
    core = config_core("llama3_json")
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
        },
    }
    request = {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [tool],
        "tool_choice": {"type": "function", "function": {"name": "f"}},
        "skip_special_tokens": False,
    }
    args = core.encode('{"a": 1}')
    chunks = [(args, None, None), ([LLAMA_EOT], None, None), ([], "stop", None)]
    answers = stream(core, CHAT, chunks, "chat_request", request)
    assert contents(answers) == ["", "", '{"a": 1}']
    assert batch(core, [*args, LLAMA_EOT], request)["message"]["content"] == '{"a": 1}'


def test_a_stream_that_read_reasoning_against_the_prompt_holds_the_stop_token():
    """A prompt ending in `<think></think>` makes vLLM's deepseek_r1 stream
    all content, where this stream, as batch, splits reasoning out: it has
    left vLLM's stream, so the stop token before a lone finish is held and
    the stream stays batch's answer."""
    core = parser_core("models/qwen3", "qwen3", reasoning_parser="deepseek_r1")
    think, end = core.encode("<think>"), core.encode("</think>")
    prompt = [*PROMPT, *think, *core.encode("\n\n"), *end, *core.encode("\n\n")]
    output = [*core.encode("weighing it"), *end, *core.encode("Answer.")]
    request = {**SHOWN, "chat_template_kwargs": {"enable_thinking": False}}
    chunks = [(output, None, None), ([IM_END], None, None), ([], "stop", None)]
    got = assemble(stream(core, CHAT, chunks, "chat_request", request, prompt_ids=prompt))
    message = batch(core, [*output, IM_END], request)["message"]
    assert (got["reasoning"], got["content"]) == (message["reasoning"], message["content"])
    assert (got["reasoning"], got["content"]) == ("weighing it", "Answer.")


def test_hunyuan_a13b_holds_the_stop_token_before_a_lone_finish():
    """vLLM's hunyuan_a13b stream fails on a token-less chunk, so a stream
    whose finish comes alone can only be batch's answer."""
    core = parser_core("models/hunyuan_a13b", "hunyuan-a13b", reasoning_parser="hunyuan_a13b")
    eos = core.encode("<|eos|>")
    assert len(eos) == 1
    ids = core.encode("The answer is 42.")
    chunks = [([t], None, None) for t in ids] + [(eos, None, None), ([], "stop", None)]
    got = assemble(stream(core, CHAT, chunks, "chat_request", SHOWN))
    assert got["content"] == batch(core, [*ids, *eos], SHOWN)["message"]["content"]
    assert got["content"] == "The answer is 42."


def test_a_stop_token_that_releases_held_text_goes_out_with_it():
    """PLaMo 3 holds a trailing `<` (it may open a marker); its EOS
    `<|plamo:tag|>` shows nothing but settles the `<` as text. vLLM's stream
    sends the `<` in the chunk the EOS ends, and a lone finish then sends
    nothing: the stream stays vLLM's, so the EOS is decoded there."""
    core = config_core("plamo3")
    head, eot = core.encode("<|plamo:end_think:plamo|>literal <"), core.encode("<|plamo:tag|>")
    chunks = [(head[:1], None, None), (head[1:2], None, None), (head[2:], None, None)]
    chunks += [(eot, None, None), (eot, "stop", None)]
    answers = stream(core, CHAT, chunks, "chat_request", {"messages": SHOWN["messages"]})
    assert contents(answers) == ["", "", "literal ", "<", ""]
    message = batch(core, [*head, *eot, *eot], {"messages": SHOWN["messages"]})["message"]
    assert message["content"] == "literal <"


def test_a_stop_token_that_defers_text_to_the_finish_goes_out_with_it():
    """PLaMo 3's EOS right after text in the chunk that ends reasoning: vLLM's
    tool engine, seeing the EOS id without its text, defers that text to the
    end of the stream. Decoded there, the stream sends in its chunks what the
    held token's stream sends in total (batch's answer), so it is decoded."""
    core = config_core("plamo3")
    request = {"messages": SHOWN["messages"]}
    think = "<|plamo:begin_think:plamo|>reasoning<|plamo:end_think:plamo|>answer<|plamo:tag|>"
    head, tail, eot = core.encode(think), core.encode("ignored"), core.encode("<|plamo:tag|>")
    chunks = [(head[:1], None, None), (head[1:4], None, None), (head[4:], None, None)]
    chunks += [(tail, None, None), (eot, "stop", None)]
    answers = stream(core, CHAT, chunks, "chat_request", request)
    # vLLM 0.33.0's chunks for these cuts.
    assert contents(answers) == ["", "", "", "", "answerignored"]
    assert batch(core, [*head, *tail, *eot], request)["message"]["content"] == "answerignored"
