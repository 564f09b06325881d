"""A sample tool parser plugin: the hermes format in plain Python.

    derender serve MODEL --enable-auto-tool-choice \
        --tool-parser-plugin examples/plugins/hermes_plugin.py --tool-call-parser hermes_py

Calls look like `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`. The behaviour
follows vLLM's `Hermes2ProToolParser` as derender's built-in `hermes` parser does (the
tests check both answer alike), so this file doubles as a reference for writing plugins.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from derender.plugins import ToolParser, ToolParserManager

START = "<tool_call>"
END = "</tool_call>"
_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')
_ARGS = re.compile(r'"arguments"\s*:\s*')


def partial_tag_overlap(text: str, tag: str) -> int:
    """How many trailing characters of `text` could still begin `tag` (not the whole tag)."""
    for k in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:k]):
            return k
    return 0


def blocks(text: str) -> list[str]:
    """The bodies of `<tool_call>` blocks: closed ones, then an unclosed last one."""
    out, rest = [], text
    while (i := rest.find(START)) >= 0:
        body = rest[i + len(START) :]
        j = body.find(END)
        if j < 0:
            out.append(body)
            break
        out.append(body[:j])
        rest = body[j + len(END) :]
    return out


def parse_call(body: str) -> dict[str, str] | None:
    try:
        obj = json.loads(body)
    except ValueError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or "arguments" not in obj:
        return None
    return {"name": obj["name"], "arguments": json.dumps(obj["arguments"], ensure_ascii=False)}


def tool_args(text: str, complete: bool) -> str | None:
    """The raw text after `"arguments":`; without the outer `}` once the JSON is complete."""
    m = _ARGS.search(text)
    if m is None:
        return None
    raw = text[m.end() :]
    if complete:
        raw = raw.rstrip()
        if raw.endswith("}"):
            raw = raw[:-1].rstrip()
    return raw


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def call_jsons(text: str) -> list[tuple[str, bool]]:
    """Each call region's JSON text and whether it is complete."""
    out, pos = [], 0
    while (s := text.find(START, pos)) >= 0:
        start = s + len(START)
        e = text.find(END, start)
        if e >= 0:
            out.append((text[start:e].strip(), True))
            pos = e + len(END)
            continue
        raw = text[start:]
        overlap = partial_tag_overlap(raw, END)
        if overlap:
            raw = raw[:-overlap]
        body = raw.strip()
        out.append((body, bool(body) and _is_json(body)))
        break
    return out


@ToolParserManager.register_module(["hermes_py"])
class HermesPlugin(ToolParser):
    # Hermes has a structural-tag model in vLLM: forced choices are parsed like "auto"
    # and render does not add a JSON schema; its markers are special tokens.
    supports_required_and_named = False
    keep_special_tokens = True

    def __init__(self, tokenizer: Any) -> None:
        super().__init__(tokenizer)
        self.sent_content = 0
        self.names: list[str | None] = []
        self.streamed_args: list[str] = []

    def extract_tool_calls(
        self, model_output: str, request: dict[str, Any]
    ) -> tuple[bool, list[dict[str, str]], str | None]:
        first = model_output.find(START)
        if first < 0:
            return False, [], model_output
        calls = []
        for body in blocks(model_output):
            call = parse_call(body)
            if call is None:
                return False, [], model_output
            calls.append(call)
        return True, calls, model_output[:first] or None

    def _content(self, current: str) -> str | None:
        """Unsent text before the first `<tool_call>`, holding back a possible tag prefix."""
        i = current.find(START)
        sendable = i if i >= 0 else len(current) - partial_tag_overlap(current, START)
        if sendable > self.sent_content:
            text = current[self.sent_content : sendable]
            self.sent_content = sendable
            return text
        return None

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: list[int],
        current_token_ids: list[int],
        delta_token_ids: list[int],
        request: dict[str, Any],
    ) -> dict[str, Any] | None:
        content = self._content(current_text)
        deltas: list[dict[str, Any]] = []
        for i, (body, complete) in enumerate(call_jsons(current_text)):
            if i >= len(self.names):
                self.names.append(None)
                self.streamed_args.append("")
            if self.names[i] is None:
                m = _NAME.search(body)
                if m is None:
                    break
                self.names[i] = m.group(1)
                deltas.append(
                    {
                        "index": i,
                        "id": f"chatcmpl-tool-{uuid.uuid4().hex[:16]}",
                        "type": "function",
                        "function": {"name": m.group(1)},
                    }
                )
            args = tool_args(body, complete)
            if args is not None and len(args) > len(self.streamed_args[i]):
                diff = args[len(self.streamed_args[i]) :]
                self.streamed_args[i] = args
                if diff:
                    deltas.append({"index": i, "function": {"arguments": diff}})
        if content or deltas:
            return {"content": content, "tool_calls": deltas}
        return None
