"""What the simulated model says.

Rule, in order:
1. A scenario file (JSON Lines, `derender engine --scenarios FILE`): each line is
   `{"match": "<regex>", "output": "<assistant text>"}`; the first line whose
   `match` is found in the decoded prompt wins (`match` may be omitted: matches all).
2. Built-in outputs by request shape:
   - tools offered and `tool_choice` not "none" → a tool call of the first tool,
     with arguments built from its JSON schema, in the Hermes `<tool_call>` format;
   - a chat prompt (a `parse_context`) whose thinking is on → a short `<think>` block
     and an answer;
   - otherwise a plain answer.
The text depends only on the prompt and the choice index, so runs are reproducible.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_ANSWERS = [
    "Sure! Here is a short answer: it depends on the details, but the key idea is simple.",
    "The answer is 42. Let me know if you would like more detail.",
    "Here's a brief explanation: the process has clear inputs and outputs.",
]
_THOUGHTS = [
    "The user wants a concise answer. I should keep it short.",
    "Let me think about the key facts first, then answer clearly.",
]


@dataclass
class Scenario:
    pattern: re.Pattern[str] | None
    output: str


class Scenarios:
    """Picks the assistant text for a request."""

    def __init__(self, scenarios: list[Scenario] | None = None) -> None:
        self.scenarios = scenarios or []

    @classmethod
    def from_file(cls, path: str | Path) -> Scenarios:
        items: list[Scenario] = []
        for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                pattern = re.compile(entry["match"]) if entry.get("match") else None
                items.append(Scenario(pattern, str(entry["output"])))
            except (ValueError, KeyError, re.error) as exc:
                raise ValueError(f"{path}:{n}: bad scenario line: {exc}") from None
        return cls(items)

    def output(self, prompt_text: str, request: dict[str, Any], index: int) -> str:
        for s in self.scenarios:
            if s.pattern is None or s.pattern.search(prompt_text):
                return s.output
        seed = int(hashlib.sha256(f"{prompt_text}|{index}".encode()).hexdigest(), 16)
        context = request.get("parse_context") or {}
        tools = context.get("tools") or []
        if tools and context.get("tool_choice", "auto") != "none":
            return _tool_call(tools[0], seed)
        answer = _ANSWERS[seed % len(_ANSWERS)]
        kwargs = context.get("chat_template_kwargs") or {}
        if request.get("parse_context") is not None and kwargs.get("enable_thinking", True):
            thought = _THOUGHTS[seed % len(_THOUGHTS)]
            return f"<think>\n{thought}\n</think>\n\n{answer}"
        return answer


def _tool_call(tool: dict[str, Any], seed: int) -> str:
    function = tool.get("function") or {}
    schema = function.get("parameters") or {}
    args = {
        name: _example(prop, name, seed)
        for name, prop in (schema.get("properties") or {}).items()
        if name in (schema.get("required") or schema.get("properties") or {})
    }
    call = {"name": function.get("name", "tool"), "arguments": args}
    return (
        "<think>\nI should call a tool for this.\n</think>\n\n"
        f"<tool_call>\n{json.dumps(call, ensure_ascii=False)}\n</tool_call>"
    )


def _example(prop: dict[str, Any], name: str, seed: int) -> Any:
    if "enum" in prop and prop["enum"]:
        return prop["enum"][seed % len(prop["enum"])]
    kind = prop.get("type")
    if kind == "integer":
        return seed % 10 + 1
    if kind == "number":
        return (seed % 100) / 10
    if kind == "boolean":
        return bool(seed % 2)
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return {"city": "Paris", "query": "weather tomorrow"}.get(name, f"example {name}")
