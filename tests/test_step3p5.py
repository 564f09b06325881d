"""The step3p5 parsers served end to end on the bundled Qwen3 tokenizer, a
stand-in with the same `<think>` / `<tool_call>` / ChatML tokens (no recorded
goldens exist for Step-3.5): a batch answer and the same output streamed one
token at a time agree."""

from __future__ import annotations

import json

import httpx

from derender import DEFAULT_MODEL_DIR, Derenderer

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]
# Thinking is always on: `enable_thinking: false` changes nothing.
REQUEST = {
    "messages": [{"role": "user", "content": "Weather in Tokyo?"}],
    "tools": TOOLS,
    "chat_template_kwargs": {"enable_thinking": False},
}
# The template prefills `<think>\n`; the model closes it with `\n</think>\n`.
OUTPUT = (
    "The user wants Tokyo 🗼 weather.\n</think>\n"
    "<tool_call>\n<function=get_weather>\n<parameter=city>\n東京\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
)


def test_step3p5_batch_and_token_stream_agree(server_factory):
    core = Derenderer(str(DEFAULT_MODEL_DIR), served_model_names=["step"])
    prompt = core.encode(
        "<|im_start|>user\nWeather in Tokyo?<|im_end|>\n<|im_start|>assistant\n<think>\n"
    )
    output = [*core.encode(OUTPUT), 151645]  # <|im_end|>
    flags = ["--reasoning-parser", "step3p5", "--tool-call-parser", "step3p5"]
    s = server_factory(
        [str(DEFAULT_MODEL_DIR), "--served-model-name", "step", *flags, "--enable-auto-tool-choice"]
    )
    url = s.url + "/v1/chat/completions/derender"

    batch_body = {
        "generate_response": {
            "request_id": "b",
            "prompt_token_ids": prompt,
            "choices": [{"index": 0, "token_ids": output, "finish_reason": "stop"}],
        },
        "chat_request": REQUEST,
    }
    r = httpx.post(url, json=batch_body, timeout=30)
    assert r.status_code == 200, r.text
    choice = r.json()["choices"][0]
    message = choice["message"]
    assert choice["finish_reason"] == "tool_calls"
    assert message["reasoning"] == "The user wants Tokyo 🗼 weather."
    assert message["content"] is None
    [call] = message["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "東京", "days": 3}

    state, reasoning, content, calls, finish = None, "", "", {}, None
    for i, tok in enumerate(output):
        last = i == len(output) - 1
        generate = {
            "request_id": "s",
            "choices": [
                {"index": 0, "token_ids": [tok], "finish_reason": "stop" if last else None}
            ],
        }
        if i == 0:
            generate["prompt_token_ids"] = prompt
        body = {
            "stream": True,
            "generate_chunk": generate,
            "stream_state": state,
            "prompt_token_ids": prompt,
            "chat_request": REQUEST,
        }
        r = httpx.post(url, json=body, timeout=30)
        assert r.status_code == 200, r.text
        out = r.json()
        state = out["stream_state"]
        for c in out["chunk"]["choices"]:
            delta = c["delta"]
            reasoning += delta.get("reasoning") or ""
            content += delta.get("content") or ""
            for tc in delta.get("tool_calls") or []:
                entry = calls.setdefault(tc["index"], ["", ""])
                entry[0] += (tc.get("function") or {}).get("name") or ""
                entry[1] += (tc.get("function") or {}).get("arguments") or ""
            finish = c.get("finish_reason") or finish

    assert reasoning == message["reasoning"]
    assert content == ""
    assert finish == "tool_calls"
    assert list(calls.values()) == [[call["function"]["name"], call["function"]["arguments"]]]
