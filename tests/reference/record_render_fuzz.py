"""Seeded random chats rendered by a live vLLM 0.33.0, for the encoder modes.

Conversations drawn from small vocabularies of awkward pieces (marker spellings in caller text,
empty and whitespace-only parts, unicode, quotes and ampersands), assistant turns with reasoning
(`reasoning` or the deprecated `reasoning_content`) and tool calls (ids that collide, arguments
that are not JSON objects), tool results answering by id, by a `NAME:POSITION` alias or by
nothing, tools (one strict), tool choices, reasoning efforts, template kwargs and response
formats; each asked of `/v1/chat/completions/render` and (messages, tools and kwargs only)
`/tokenize`. Kept: request, status and answer.

    VLLM_TARGET_DEVICE=cpu vllm launch render <tests/models/kimi_k3, unpacked> --port P \\
      --served-model-name kimi_k3 --trust-remote-code \\
      --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
    python3 tests/reference/record_render_fuzz.py --vllm http://127.0.0.1:P --config kimi_k3 \\
      --cases 300 --seed 1

writes tests/reference/render_fuzz/<config>.jsonl.gz (run by tests/test_kimi_k3.py and, for
`--config cohere_command4` (Cohere's markers and keywords drawn instead of K3's; vLLM on
tests/models/cohere_command with `--tokenizer-mode cohere` and the config's parsers), by
tests/test_cohere.py).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import replay  # noqa: E402

PIECES = ["hi", " ", "\n", "<|open|>", "<|sep|>", "<|end_of_msg|>", "[BOS]", "<think>", "é"]
PIECES += ['"q"', "&", "  \t ", "aaa", "\u3000", ""]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "description": "d",
            "parameters": {"type": "object", "properties": {"a": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": 'g&"h"',
            "parameters": {
                "type": "object",
                "properties": {"n": {"type": "integer", "maximum": 3}},
                "required": ["n"],
            },
            "strict": True,
        },
    },
]
ARGUMENTS = ['{"a": "x"}', '{"n": 1, "b": [1, {"c": null}]}', "{}", "not json", "[1]"]
ARGUMENTS += ['{"u": "\\u00e9", "f": 1.5, "t": true}']
CALL_IDS = ["c1", "c2", "call_0", "9"]
RESULT_IDS = [*CALL_IDS, "f:0", "zz:1", 'g&"h":1', "nope"]
# Per family: markers its caller text may spell, and its keywords.
COHERE_PIECES = ["<|START_THINKING|>", "<|END_OF_TURN_TOKEN|>", "<co>", "</co: 0:[1]>", "{}"]
COHERE_KWARGS = [
    {"cohere_format": "cmd3"},
    {"cohere_format": "cmd3", "safety_mode": "STRICT", "citation_quality": "off"},
    {"cohere_format": "cmd3", "skip_preamble": True, "dev_instruction": "be brief"},
    {"cohere_format": "cmd3", "reasoning_type": "enabled", "documents": ["a doc"]},
    {"documents": [{"id": "d1", "data": {"title": "T", "text": "x"}}, "plain"]},
    {"grounding": "disabled", "platform_instruction": "P"},
    {"dev_instruction": "", "json_mode": True},
    {"json_schema": {"type": "object"}, "thinking": {"type": "disabled"}},
    {"template_id": "cmd4-v2"},
    {"template_id": "cmd4-hf", "skip_thinking": True},
    {"citation_options": {"mode": "FAST"}, "extra_var": 1},
]
KWARGS = [
    {"thinking": False},
    {"enable_thinking": 0},
    {"thinking_effort": "low"},
    {"thinking": "no"},
    {"response_schema": {"b": 1, "a": [2]}},
]
FORMATS = [
    {"type": "json_object"},
    {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "z": 1}}},
    {"type": "text"},
]


class Draw:
    def __init__(self, seed: int, cohere: bool = False) -> None:
        self.rng = random.Random(seed)
        self.pieces = PIECES + COHERE_PIECES if cohere else PIECES
        self.kwargs = COHERE_KWARGS if cohere else KWARGS

    def text(self) -> str:
        return "".join(self.rng.choice(self.pieces) for _ in range(self.rng.randint(0, 6)))

    def content(self) -> object:
        if self.rng.random() < 0.7:
            return self.text()
        return [{"type": "text", "text": self.text()} for _ in range(self.rng.randint(1, 3))]

    def messages(self) -> list[dict]:
        r = self.rng
        out: list[dict] = []
        if r.random() < 0.4:
            out.append({"role": r.choice(["system", "developer"]), "content": self.text()})
        for _ in range(r.randint(0, 3)):
            user: dict = {"role": "user", "content": self.content()}
            if r.random() < 0.2:
                user["name"] = self.text()
            out.append(user)
            if r.random() >= 0.6:
                continue
            calls = [
                {
                    "id": r.choice(CALL_IDS),
                    "type": "function",
                    "function": {
                        "name": r.choice(["f", 'g&"h"', "zz"]),
                        "arguments": r.choice(ARGUMENTS),
                    },
                }
                for _ in range(r.randint(0, 3))
            ]
            reply: dict = {
                "role": "assistant",
                "content": self.text() if r.random() < 0.8 else None,
            }
            if calls:
                reply["tool_calls"] = calls
            if r.random() < 0.4:
                reply[r.choice(["reasoning", "reasoning_content"])] = self.text()
            out.append(reply)
            for _ in range(r.randint(0, len(calls) + 1)):
                result = {
                    "role": "tool",
                    "tool_call_id": r.choice(RESULT_IDS),
                    "content": self.text(),
                }
                out.append(result)
        return out

    def chat(self, model: str) -> dict:
        r = self.rng
        body: dict = {"model": model, "messages": self.messages()}
        if r.random() < 0.5:
            body["tools"] = r.sample(TOOLS, r.randint(1, 2))
        if r.random() < 0.3:
            body["tool_choice"] = r.choice(["none", "required", "auto"])
        if r.random() < 0.3:
            body["reasoning_effort"] = r.choice(["none", "low", "high", "max", "medium"])
        if r.random() < 0.3:
            body["chat_template_kwargs"] = r.choice(self.kwargs)
        if r.random() < 0.2:
            body["response_format"] = r.choice(FORMATS)
        if r.random() < 0.15:
            body["add_generation_prompt"] = False
        return body


TOKENIZE_KEYS = ("model", "messages", "tools", "chat_template_kwargs", "add_generation_prompt")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vllm", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    model = json.loads((HERE / "configs.json").read_text())[args.config]["served_model_name"]
    client = replay.Client(args.vllm)
    draw = Draw(args.seed, cohere=args.config.startswith("cohere"))
    cases = []
    for n in range(args.cases):
        chat = draw.chat(model)
        for endpoint in ("/v1/chat/completions/render", "/tokenize"):
            body = (
                chat
                if endpoint != "/tokenize"
                else {k: v for k, v in chat.items() if k in TOKENIZE_KEYS}
            )
            status, resp, _, _ = client.post(endpoint, body)
            kind = endpoint.strip("/").replace("/", "_")
            case_id = f"{args.config}/fuzz/{n:04d}-{kind}"
            cases.append(
                {
                    "id": case_id,
                    "endpoint": endpoint,
                    "request": body,
                    "status": status,
                    "response": resp,
                }
            )
    path = HERE / "render_fuzz" / f"{args.config}.jsonl.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for case in cases:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{args.config}: {len(cases)} render cases -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
