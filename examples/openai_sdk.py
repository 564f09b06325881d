"""derender's answers as the official OpenAI SDK's types.

render -> engine -> derender, with every answer parsed by the SDK's own models
(`ChatCompletion`, `ChatCompletionChunk`, `Completion`), as a client that
already speaks OpenAI would use them. Start the two servers, then run this:

    derender serve --port 8100          # Qwen3 + hermes + auto tool choice
    derender engine --port 8200         # the engine simulator
    python examples/openai_sdk.py [RENDER_URL ENGINE_URL]

`tests/test_sdk.py` runs it against both servers.
"""

from __future__ import annotations

import json
import sys

import httpx
from openai.types import Completion
from openai.types.chat import ChatCompletion, ChatCompletionChunk

MODEL = "Qwen/Qwen3-0.6B"
WEATHER = {
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


def chat(client: httpx.Client, render: str, engine: str) -> ChatCompletion:
    """A batch chat turn with a tool the model may call."""
    request = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [WEATHER],
    }
    generate_request = client.post(f"{render}/v1/chat/completions/render", json=request).json()
    generated = client.post(f"{engine}/inference/v1/generate", json=generate_request).json()
    answer = client.post(
        f"{render}/v1/chat/completions/derender",
        json={
            "generate_response": generated,
            "prompt_tokens": len(generate_request["token_ids"]),
            "chat_request": request,
        },
    ).json()
    return ChatCompletion.model_validate(answer)


def chat_stream(client: httpx.Client, render: str, engine: str) -> list[ChatCompletionChunk]:
    """A streamed chat turn: one SDK chunk per engine chunk."""
    request = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "What is 2+2?"}],
        "max_tokens": 32,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    generate_request = client.post(f"{render}/v1/chat/completions/render", json=request).json()
    prompt_ids = generate_request["token_ids"]
    chunks, state = [], None
    with client.stream("POST", f"{engine}/inference/v1/generate", json=generate_request) as lines:
        for line in lines.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            answer = client.post(
                f"{render}/v1/chat/completions/derender",
                json={
                    "stream": True,
                    "generate_chunk": json.loads(line[len("data: ") :]),
                    "stream_state": state,
                    "prompt_tokens": len(prompt_ids),
                    "prompt_token_ids": prompt_ids,
                    "chat_request": request,
                },
            ).json()
            state = answer["stream_state"]
            chunks.append(ChatCompletionChunk.model_validate(answer["chunk"]))
    return chunks


def completion(client: httpx.Client, render: str, engine: str) -> Completion:
    """A batch text completion (render answers one generate request per prompt)."""
    request = {"model": MODEL, "prompt": "Once upon a time", "max_tokens": 16}
    generate_requests = client.post(f"{render}/v1/completions/render", json=request).json()
    generated = [
        client.post(f"{engine}/inference/v1/generate", json=g).json() for g in generate_requests
    ]
    answer = client.post(
        f"{render}/v1/completions/derender",
        json={
            "generate_responses": generated,
            "prompt_token_ids": [g["token_ids"] for g in generate_requests],
            "completion_request": request,
        },
    ).json()
    return Completion.model_validate(answer)


def main(render: str = "http://localhost:8100", engine: str = "http://localhost:8200") -> None:
    with httpx.Client(timeout=60.0) as client:
        answer = chat(client, render, engine)
        message = answer.choices[0].message
        for call in message.tool_calls or []:
            print(f"tool call: {call.function.name}({call.function.arguments})")
        print(f"finish_reason: {answer.choices[0].finish_reason}")

        chunks = chat_stream(client, render, engine)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        usage = next(c.usage for c in reversed(chunks) if c.usage)
        print(f"streamed: {text.strip()!r} in {len(chunks)} chunks")
        print(f"usage: {usage.completion_tokens} completion tokens")

        text_answer = completion(client, render, engine)
        print(f"completion: {text_answer.choices[0].text!r}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
