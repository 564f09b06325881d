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
    # Llama 3 adds a BOS token: the tokenizer's own truncation (right side,
    # no truncation_side) keeps room for it; an explicit side slices the whole
    # sequence, BOS included. Expected values follow vLLM's TokenizeParams
    # over the `tokenizers` library (checked for 84 combinations by hand).
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
    assert ids(truncate_prompt_tokens=3) == [bos, *words[:2]]
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
