"""Record a live vLLM 0.33.0's Beam grammars for seeded random tool requests.

    VLLM_TARGET_DEVICE=cpu vllm launch render <copy of tests/models/beam, tokenizer.json
        unpacked> --served-model-name beam --reasoning-parser beam --tool-call-parser beam \\
        --enable-auto-tool-choice --port PORT
    python3 tests/reference/record_beam_renders.py --url http://127.0.0.1:PORT

Beam's `adjust_request` decides per request which constraint the output gets: its template
grammar (tools, forced choices, strict levels, the answer's own format where XGrammar takes it,
thinking on or off, the message start) or the request's own. The render corpora hold the
goldens' few tool schemas; these requests draw tool schemas at random (types, enums, patterns,
formats, bounds XGrammar refuses, nested and referenced schemas, names and keys the template
cannot spell, strict flags) with every tool choice, on chat and Responses, and keep what
decides the grammar: the status and error message, `structured_outputs` and `reasoning_ended`.
`tests/test_beam_renders.py` replays them in-process.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent / "beam_renders.jsonl.gz"
PATTERNS = [
    r"^\d+$",
    "[a-z]+",
    "a.b",
    "[^x]+",
    r"\w{2,5}",
    "(?i)x",
    "[a-z<]",
    "(a|b)+",
    "[",
    r"\bx",
]
FORMATS = ["date", "email", "uuid", "ipv4", "hostname", "uri", "time", "date-time", "color"]
NAMES = ["get_weather", "search", "a-b", "x.y", "天気", "f"]
KEYS = ["city", "b", "a", "z", "k2", "日本", "a b", 'q"', "x>y"]


class Draw:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def schema(self, depth: int = 0) -> Any:
        r = self.rng
        kind = r.choice(
            ["string", "string", "integer", "number", "boolean", "enum", "pattern", "format"]
            + ["object", "array", "null", "anyof", "nullable", "const", "list", "true", "ref"]
        )
        if kind == "integer":
            bounds = [{}, {"minimum": 1}, {"minimum": 5, "maximum": 1}, {"multipleOf": 3}]
            return {"type": "integer", **r.choice(bounds)}
        if kind == "number":
            return {"type": "number", **r.choice([{}, {"minimum": 2, "exclusiveMaximum": 2}])}
        if kind in ("boolean", "null"):
            return {"type": kind}
        if kind == "enum":
            choices = [["a", "b c"], ["x", 1], [" y "], []]
            return {"type": "string", "enum": r.choice(choices)}
        if kind == "pattern":
            return {"type": "string", "pattern": r.choice(PATTERNS)}
        if kind == "format":
            return {"type": "string", "format": r.choice(FORMATS)}
        if kind == "object" and depth < 2:
            body = {"properties": {"k": self.schema(depth + 1)}} if r.random() < 0.7 else {}
            extra = r.choice([{}, {"required": ["k"]}, {"minProperties": 1}])
            return {"type": "object", **body, **extra}
        if kind == "array" and depth < 2:
            items = r.choice([{"items": self.schema(depth + 1)}, {}, {"minItems": 1}])
            return {"type": "array", **items}
        if kind == "anyof":
            return {"anyOf": [self.schema(depth + 1), self.schema(depth + 1)]}
        if kind == "nullable":
            inner = self.schema(depth + 1)
            return {**inner, "nullable": True} if isinstance(inner, dict) else {"nullable": True}
        if kind == "const":
            return {"const": r.choice(["c", 2])}
        if kind == "list":
            return {"type": r.choice([["string", "null"], ["integer", "boolean"], []])}
        if kind == "true":
            return True
        if kind == "ref":
            return {"$ref": r.choice(["#/$defs/p", "#"])}
        return {"type": "string"}

    def parameters(self) -> dict[str, Any]:
        r = self.rng
        props = {key: self.schema() for key in r.sample(KEYS, r.randint(0, 4))}
        params: dict[str, Any] = {"type": "object", "properties": props}
        if props and r.random() < 0.7:
            params["required"] = r.sample(list(props), r.randint(1, len(props)))
        if r.random() < 0.15:
            extras = [{"type": "object"}, {}, {**params, "additionalProperties": True}]
            params = r.choice([*extras, {**params, "$defs": {"p": {"type": "integer"}}}])
        return params

    def options(self, body: dict[str, Any], names: list[str], responses: bool) -> None:
        r = self.rng
        x = r.random()
        if body.get("tools") and x < 0.25:
            body["tool_choice"] = "required"
        elif names and x < 0.4:
            name = names[0]
            named = {"name": name} if responses else {"function": {"name": name}}
            body["tool_choice"] = {"type": "function", **named}
        elif body.get("tools") and x < 0.5:
            body["tool_choice"] = "none"
        if r.random() < 0.2:
            body["parallel_tool_calls"] = False
        if r.random() < 0.2:
            body["chat_template_kwargs"] = {"enable_thinking": False}
        if r.random() < 0.1:
            body["include_reasoning"] = False
        if r.random() < 0.15:
            schema = {"type": "object", "properties": {"r": self.schema()}}
            formats = [
                {"type": "json_object"},
                {"type": "json_schema", "name": "x", "schema": schema},
            ]
            fmt = r.choice(formats)
            if responses:
                body["text"] = {"format": fmt}
            elif fmt["type"] == "json_object":
                body["response_format"] = fmt
            else:
                body["response_format"] = {"type": "json_schema", "json_schema": fmt}

    def chat(self) -> dict[str, Any]:
        r = self.rng
        tools = []
        for i in range(r.randint(0, 3)):
            function: dict[str, Any] = {"name": NAMES[i], "parameters": self.parameters()}
            if r.random() < 0.25:
                function["strict"] = r.choice([True, False])
            tools.append({"type": "function", "function": function})
        body: dict[str, Any] = {"model": "beam", "messages": [{"role": "user", "content": "hi"}]}
        if tools:
            body["tools"] = tools
        if r.random() < 0.1:
            body["add_generation_prompt"] = False
        self.options(body, [t["function"]["name"] for t in tools], responses=False)
        return body

    def responses(self) -> dict[str, Any]:
        r = self.rng
        tools: list[dict[str, Any]] = []
        for i in range(r.randint(0, 3)):
            function = {"type": "function", "name": f"fn{i}", "parameters": self.parameters()}
            if r.random() < 0.25:
                function["strict"] = r.choice([True, False])
            kind = r.choice(["function", "function", "namespace", "custom", "hosted"])
            if kind == "function":
                tools.append(function)
            elif kind == "namespace":
                tools.append(
                    {"type": "namespace", "name": f"ns{i}", "description": "d", "tools": [function]}
                )
            elif kind == "custom":
                tools.append({"type": "custom", "name": f"c{i}"})
            else:
                tools.append({"type": "web_search"})
        body: dict[str, Any] = {"model": "beam", "input": "x"}
        if tools:
            body["tools"] = tools
        names = [t["name"] for t in tools if t["type"] == "function"]
        self.options(body, names, responses=True)
        return body


def kept(status: int, answer: dict[str, Any]) -> dict[str, Any]:
    """What decides the grammar: the error, or the constraint and reasoning_ended."""
    if status != 200:
        return {"error": answer["error"]["message"]}
    return {
        "structured_outputs": answer["sampling_params"].get("structured_outputs"),
        "reasoning_ended": answer.get("reasoning_ended"),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--chat", type=int, default=240)
    ap.add_argument("--responses", type=int, default=80)
    args = ap.parse_args()
    draw = Draw(20261203)
    cases = [("/v1/chat/completions/render", draw.chat()) for _ in range(args.chat)]
    cases += [("/v1/responses/render", draw.responses()) for _ in range(args.responses)]
    lines = []
    for path, body in cases:
        request = urllib.request.Request(
            args.url + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as r:
                status, answer = r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            status, answer = e.code, json.loads(e.read())
        lines.append({"path": path, "body": body, "status": status, **kept(status, answer)})
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(text.encode("utf-8"))
    tagged = sum(
        1 for line in lines if (line.get("structured_outputs") or {}).get("structural_tag")
    )
    print(f"{len(lines)} renders ({tagged} with a structural tag) -> {OUT}")


if __name__ == "__main__":
    main()
