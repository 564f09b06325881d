"""Render: requests in, vLLM's GenerateRequest out."""

from __future__ import annotations

import json

from derender import DEFAULT_MODEL_DIR, Derenderer

CHAT = "/v1/chat/completions/render"
CMPL = "/v1/completions/render"


def post(core: Derenderer, path: str, body: dict, request_id: str | None = None):
    status, out = core.handle(path, json.dumps(body).encode(), "application/json", request_id)
    return status, json.loads(out)


def test_chat_render_applies_the_qwen3_template(core):
    status, out = post(core, CHAT, {"messages": [{"role": "user", "content": "hi"}]})
    assert status == 200
    assert out["token_ids"] == core.encode(
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    )
    assert out["request_id"].startswith("chatcmpl-")
    sp = out["sampling_params"]
    assert sp["temperature"] == 0.6 and sp["top_k"] == 20  # from generation_config.json
    assert sp["max_tokens"] == 40960 - len(out["token_ids"])
    assert out["parse_context"]["chat_template_kwargs"] == {
        "cohere_format": "cmd4",
        "add_generation_prompt": True,
        "continue_final_message": False,
    }


def test_request_id_header_wins(core):
    body = {"messages": [{"role": "user", "content": "hi"}], "request_id": "mine"}
    assert post(core, CHAT, body)[1]["request_id"] == "chatcmpl-mine"
    assert post(core, CHAT, body, request_id="hdr")[1]["request_id"] == "chatcmpl-hdr"


def test_thinking_off_prefills_an_empty_think_block(core):
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "chat_template_kwargs": {"enable_thinking": False},
    }
    ids = post(core, CHAT, body)[1]["token_ids"]
    assert ids[-4:] == core.encode("<think>\n\n</think>\n\n")[-4:]


def test_completion_render_splits_prompts(core):
    status, out = post(core, CMPL, {"prompt": ["A", "B"], "request_id": "r"})
    assert status == 200
    assert [g["request_id"] for g in out] == ["cmpl-r-0", "cmpl-r-1"]
    assert "max_tokens" not in out[0]["sampling_params"]  # 16, the default object
    assert out[0]["parse_context"] is None


def test_token_offsets_are_char_spans_as_a_fast_tokenizer_gives_them(core):
    # Expected: the `tokenizers` library's own `Encoding.offsets` for this text
    # (what transformers returns as `offset_mapping`): char-level, so the CJK
    # and emoji bytes share their character's span.
    text = "Hi there, 東京 🚀 naïve<|im_end|>x"
    status, out = post(core, CMPL, {"prompt": text, "return_token_offsets": True})
    assert status == 200, out
    spans = [[0, 2], [2, 8], [8, 9], [9, 11], [10, 11], [11, 12], [12, 14], [13, 14], [13, 14]]
    spans += [[14, 18], [18, 20], [20, 30], [30, 31]]
    assert out[0]["token_offsets"] == spans
    assert len(out[0]["token_ids"]) == len(spans)
    status, out = post(core, CMPL, {"prompt": [1, 2], "return_token_offsets": True})
    assert out[0]["token_offsets"] is None  # token ids have no text
    status, out = post(core, CMPL, {"prompt": text})
    assert out[0]["token_offsets"] is None  # only when asked
    chat = {"messages": [{"role": "user", "content": "hi"}], "return_token_offsets": True}
    status, out = post(core, CHAT, chat)
    assert status == 200, out
    offsets = out["token_offsets"]
    assert len(offsets) == len(out["token_ids"])
    assert all(a <= b for a, b in offsets) and offsets[0] == [0, 12]  # "<|im_start|>"


def test_truncate_prompt_tokens_keeps_a_side_as_vllm_does():
    # Llama 3 adds a BOS token: the tokenizer's own truncation (no
    # truncation_side; vLLM loads generating models' tokenizers with
    # truncation_side="left") keeps room for it; an explicit side slices the
    # whole sequence, BOS included. Checked against vLLM 0.33's transformers
    # tokenizer.
    from conftest import MODEL_DIRS

    core = Derenderer(str(MODEL_DIRS["models/llama3"]), max_model_len=32)
    text = "one two three four five"
    words = core.encode(text)
    bos = 128000

    def ids(**extra):
        status, out = post(core, CMPL, {"prompt": text, **extra})
        assert status == 200, out
        return out[0]["token_ids"]

    assert ids() == [bos, *words]
    assert ids(truncate_prompt_tokens=3) == [bos, *words[-2:]]
    assert ids(truncate_prompt_tokens=3, truncation_side="right") == [bos, *words[:2]]
    assert ids(truncate_prompt_tokens=3, truncation_side="left") == words[-3:]
    assert ids(truncate_prompt_tokens=-1) == [bos, *words]  # up to max_model_len - 1
    status, out = post(core, CMPL, {"prompt": text, "truncate_prompt_tokens": 33})
    assert status == 400 and out["error"]["param"] == "truncate_prompt_tokens", out
    for bad in ({"truncate_prompt_tokens": -2}, {"truncation_side": "middle"}):
        status, out = post(core, CMPL, {"prompt": text, **bad})
        assert status == 400 and next(iter(bad)) in out["error"]["message"], out


def test_prompt_too_long_names_input_tokens(core):
    status, out = post(core, CMPL, {"prompt": [1] * 40961})
    assert status == 400
    assert out["error"]["param"] == "input_tokens"


def test_text_longer_than_the_context_can_hold_is_refused_or_cut_by_chars():
    # vLLM's `_text_len_check`: at most max_model_len x the longest vocabulary
    # piece (128 chars for Qwen3) is tokenized. Answers checked against vLLM 0.33.
    core = Derenderer(str(DEFAULT_MODEL_DIR), max_model_len=512)
    text = "ab " * 30000  # 90,000 chars > 512 * 128
    status, out = post(core, CMPL, {"prompt": text})
    assert status == 400 and out["error"]["param"] == "input_text", out
    assert (
        "your prompt contains 90000 characters (more than 65536 characters"
        in out["error"]["message"]
    )
    status, out = post(core, CHAT, {"messages": [{"role": "user", "content": text}]})
    assert status == 400 and out["error"]["param"] == "input_text", out
    # With truncation from a requested side the text is cut to 65,536 chars
    # first; offsets still count from the start of the whole prompt.
    body = {"prompt": text, "truncate_prompt_tokens": 3, "return_token_offsets": True}
    status, out = post(core, CMPL, {**body, "truncation_side": "left"})
    assert status == 200, out
    assert out[0]["token_offsets"] == [[89993, 89996], [89996, 89999], [89999, 90000]]
    status, out = post(core, CMPL, {**body, "truncation_side": "right"})
    assert out[0]["token_offsets"] == [[0, 2], [2, 5], [5, 8]]
    # Without a side the tokenizer truncates, from the left as vLLM loads it.
    status, out = post(core, CMPL, {"prompt": text, "truncate_prompt_tokens": 3})
    assert out[0]["token_ids"] == core.encode("ab ab ab ")[-3:]


def test_structured_outputs_need_exactly_one_constraint(core):
    # vLLM's `check_structured_outputs_count` and `__post_init__` (answers
    # checked against vLLM 0.33); the same checks guard a derender chat_request.
    def error(path: str, so: object, **extra: object) -> dict:
        body = (
            {"prompt": "hi"} if path == CMPL else {"messages": [{"role": "user", "content": "hi"}]}
        )
        status, out = post(core, path, {**body, "structured_outputs": so, **extra})
        assert status == 400, out
        return out["error"]

    err = error(CHAT, {"json": {}, "regex": "a"})
    assert (
        err["message"].startswith("You can only use one kind of constraints")
        and err["param"] is None
    )
    assert error(CMPL, {"json": {}, "regex": "a"})["param"] == "structured_outputs"
    assert (
        "multiple are specified: {'json': {}, 'regex': None"
        in error(CHAT, {"json": {}, "grammar": "x"})["message"]
    )
    assert "none are specified" in error(CMPL, {"disable_any_whitespace": True})["message"]
    named = {"type": "function", "function": {"name": "f"}}
    tools = [{"type": "function", "function": {"name": "f"}}]
    assert "not both" in error(CHAT, {"regex": "a"}, tool_choice=named, tools=tools)["message"]
    assert error(CHAT, {"structural_tag": ""})["param"] == "structured_outputs"
    assert error(CHAT, {"choice": [1]})["param"] == "body.structured_outputs.choice.0"
    # vLLM answers a non-object with a 500 (its validator calls `.get` on it).
    assert error(CHAT, "x")["param"] == "body.structured_outputs"
    status, out = post(
        core,
        CHAT,
        {
            "messages": [{"role": "user", "content": "hi"}],
            "response_format": {"type": "json_schema"},
        },
    )
    assert status == 400 and out["error"]["param"] == "response_format", out
    # Lax bools are stored as pydantic coerced them.
    status, out = post(core, CMPL, {"prompt": "hi", "structured_outputs": {"json_object": "yes"}})
    assert status == 200 and out[0]["sampling_params"]["structured_outputs"]["json_object"] is True


def test_untrusted_request_template_is_refused(core):
    body = {"messages": [{"role": "user", "content": "hi"}], "chat_template": "{{ 1 }}"}
    status, out = post(core, CHAT, body)
    assert status == 400
    assert "--trust-request-chat-template" in out["error"]["message"]


def test_template_errors_are_400_with_the_template_message():
    core = Derenderer(
        str(DEFAULT_MODEL_DIR),
        served_model_names=["qwen3"],
        trust_request_chat_template=True,
    )
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "chat_template": "{{ raise_exception('only system and user roles') }}",
    }
    status, out = post(core, CHAT, body)
    assert status == 400
    assert out["error"]["message"] == "only system and user roles"
    body["chat_template"] = "{% for %}"
    status, out = post(core, CHAT, body)
    assert status == 400
    assert "invalid chat template" in out["error"]["message"]


def test_runaway_templates_are_stopped(core):
    trusted = Derenderer(
        str(DEFAULT_MODEL_DIR), served_model_names=["q"], trust_request_chat_template=True
    )
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "chat_template": (
            "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}"
        ),
    }
    status, out = post(trusted, CHAT, body)
    assert status == 400


def test_tokenize_and_detokenize_round_trip(core):
    status, out = post(core, "/tokenize", {"prompt": "Hello world", "return_token_strs": True})
    assert status == 200
    assert out["tokens"] == core.encode("Hello world")
    assert out["count"] == len(out["tokens"]) and out["max_model_len"] == 40960
    assert out["token_strs"] == ["Hello", "Ġworld"]
    status, back = post(core, "/detokenize", {"tokens": out["tokens"]})
    assert status == 200 and back == {"prompt": "Hello world"}


def test_tokenize_chat_applies_the_template(core):
    chat = post(core, "/tokenize", {"messages": [{"role": "user", "content": "hi"}]})[1]
    rendered = post(core, CHAT, {"messages": [{"role": "user", "content": "hi"}]})[1]
    assert chat["tokens"] == rendered["token_ids"]
    assert chat["token_strs"] is None


def test_detokenize_rejects_negative_ids(core):
    status, out = post(core, "/detokenize", {"tokens": [1, -2]})
    assert status == 400
    assert out["error"]["param"] == "body.tokens.1"


def test_bad_render_input_gets_vllms_400(core):
    # Each checked against vLLM 0.33's `vllm launch render` (status and param).
    hi = [{"role": "user", "content": "hi"}]
    cases = [
        # A bad message fails every member of vLLM's message union; the first is the developer's.
        (
            CHAT,
            {"messages": [{"content": "hi"}]},
            "body.messages.0.ChatCompletionDeveloperMessageParam.role",
        ),
        (
            CHAT,
            {"messages": [{"role": "user", "content": 5}]},
            "body.messages.0.ChatCompletionDeveloperMessageParam.content",
        ),
        (CHAT, {"messages": []}, None),
        (CHAT, {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, None),
        (CHAT, {"messages": hi, "tools": [{"type": "function"}]}, "body.tools.0.function"),
        (CHAT, {"messages": hi, "documents": "x"}, "body.documents"),
        (CHAT, {"messages": hi, "reasoning_effort": "extreme"}, "body.reasoning_effort"),
        (CHAT, {"messages": hi, "mm_processor_kwargs": {"a": 1}}, "mm_processor_kwargs"),
        (CHAT, {"messages": hi, "thinking_token_budget": -5}, "thinking_token_budget"),
        (CHAT, {"messages": hi, "repetition_detection": {"max_pattern_size": 2}}, None),
        (CHAT, {"messages": hi, "n": 2, "temperature": 0}, None),
        (CHAT, {"messages": hi, "stop": ["a", ""]}, None),
        (CMPL, {"prompt": []}, "prompt"),
        (CMPL, {"prompt": "hi", "prompt_embeds": "abc"}, "prompt_embeds"),
        (CMPL, {"prompt": "hi", "stream_options": {"include_usage": True}}, "stream_options"),
    ]
    for path, body, param in cases:
        status, out = post(core, path, body)
        assert status == 400 and out["error"]["param"] == param, (body, out)
    # Accepted as vLLM accepts them: any role name, `tokenize` among the kwargs,
    # and the sampling fields it carries on.
    extra = {
        "thinking_token_budget": 10,
        "repetition_detection": {"max_pattern_size": 2, "min_count": 3},
    }
    status, out = post(core, CHAT, {"messages": [{"role": "robot", "content": "x"}], **extra})
    assert status == 200, out
    assert out["sampling_params"]["thinking_token_budget"] == 10
    assert out["sampling_params"]["repetition_detection"] == {
        "max_pattern_size": 2,
        "min_pattern_size": 0,
        "min_count": 3,
    }
    status, out = post(core, CHAT, {"messages": hi, "chat_template_kwargs": {"tokenize": True}})
    assert status == 200, out


# Renders each part of a list content as `[type:text]`; a string content as itself.
PARTS_TEMPLATE = (
    "{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}"
    "{% for p in m.content %}[{{ p.type }}:{{ p.text }}]{% endfor %}{% endif %}|{% endfor %}"
)


def rendered_text(core: Derenderer, messages: list[dict]) -> str:
    status, out = post(core, CHAT, {"messages": messages, "chat_template": PARTS_TEMPLATE})
    assert status == 200, out
    status, text = post(core, "/detokenize", {"tokens": out["token_ids"]})
    return text["prompt"]


def test_content_reaches_a_template_in_the_format_it_loops_over():
    messages = [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "a"}, {"type": "input_text", "text": "b"}],
        },
        {"role": "tool", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]},
    ]
    auto = Derenderer(str(DEFAULT_MODEL_DIR), trust_request_chat_template=True)
    # The template loops over `m.content`: vLLM's "openai" format, strings
    # wrapped as a text part, tool results joined back into one string.
    assert rendered_text(auto, messages) == "[text:be brief]|[text:a][text:b]|x\ny|"
    forced = Derenderer(
        str(DEFAULT_MODEL_DIR),
        trust_request_chat_template=True,
        chat_template_content_format="string",
    )
    assert rendered_text(forced, messages) == "be brief|a\nb|x\ny|"


def test_two_constraints_are_refused_before_a_tool_choice_replaces_them():
    # vLLM's `_apply_structural_tag` reads `response_format` over
    # `structured_outputs` first: two constraints are a 400 even where a
    # forced tool choice would replace both.
    core = Derenderer(
        str(DEFAULT_MODEL_DIR), tool_call_parser="hermes", enable_auto_tool_choice=True
    )
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [tool],
        "tool_choice": "required",
        "response_format": {"type": "json_object"},
        "structured_outputs": {"regex": "[a-z]+"},
    }
    status, out = post(core, CHAT, body)
    assert status == 400
    assert "multiple are specified" in out["error"]["message"]
    del body["response_format"]
    assert post(core, CHAT, body)[0] == 200
