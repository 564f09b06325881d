"""The README's render → generate → derender examples, run as written against
`derender serve` and `derender engine` on the bundled model."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import httpx

README = Path(__file__).parent.parent / "README.md"


def readme_round_trips() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    return [b for b in blocks if "/inference/v1/generate" in b]


def run_example(code: str, render: str, engine: str) -> str:
    code = code.replace("http://localhost:8100", render).replace("http://localhost:8200", engine)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - our own README
    return out.getvalue()


def test_readme_has_both_round_trips():
    assert len(readme_round_trips()) == 2


def test_batch_and_streaming_round_trips(server_factory, engine_url):
    render = server_factory([]).url  # bundled default model, as `derender serve`
    batch, streaming = readme_round_trips()
    batch_out = run_example(batch, render, engine_url)
    stream_out = run_example(streaming, render, engine_url)
    # The default serve splits the simulated model's <think> block off into
    # `reasoning`; the content is the answer, the same on both paths.
    assert "<think>" not in batch_out and len(batch_out.strip()) > 20
    text, usage = stream_out.rstrip("\n").rsplit("\n", 1)
    assert text.strip() == batch_out.strip()
    assert "'completion_tokens'" in usage


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def test_default_serve_parses_tool_calls(server_factory, engine_url):
    """`derender serve` with no model: Qwen3 + hermes + auto tool choice."""
    render = server_factory([]).url
    tools = [WEATHER_TOOL]
    chat_request = {
        "model": "Qwen/Qwen3-0.6B",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": tools,
    }
    with httpx.Client(timeout=30) as c:
        gen_req = c.post(f"{render}/v1/chat/completions/render", json=chat_request).json()
        gen = c.post(f"{engine_url}/inference/v1/generate", json=gen_req).json()
        body = {
            "generate_response": gen,
            "chat_request": chat_request,
            "prompt_tokens": len(gen_req["token_ids"]),
        }
        out = c.post(f"{render}/v1/chat/completions/derender", json=body).json()
    choice = out["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]["function"]
    assert call["name"] == "get_weather"
    assert json.loads(call["arguments"]) == {"city": "Paris"}
    assert choice["message"]["reasoning"] == "\nI should call a tool for this.\n"


def test_round_trip_with_tools(server_factory, engine_url):
    render = server_factory([]).url
    tools = [WEATHER_TOOL]
    chat_request = {
        "model": "Qwen/Qwen3-0.6B",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": tools,
        "tool_choice": "none",
    }
    with httpx.Client(timeout=30) as c:
        gen_req = c.post(f"{render}/v1/chat/completions/render", json=chat_request).json()
        assert gen_req["parse_context"]["tools"][0]["function"]["name"] == "get_weather"
        gen = c.post(f"{engine_url}/inference/v1/generate", json=gen_req).json()
        body = {
            "generate_response": gen,
            "chat_request": chat_request,
            "prompt_tokens": len(gen_req["token_ids"]),
        }
        out = c.post(f"{render}/v1/chat/completions/derender", json=body).json()
    assert out["choices"][0]["finish_reason"] == "stop"
    assert out["usage"]["completion_tokens"] == len(gen["choices"][0]["token_ids"])
