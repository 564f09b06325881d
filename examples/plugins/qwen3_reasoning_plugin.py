"""A sample reasoning parser plugin: Qwen3's `<think>…</think>` split in plain Python.

    derender serve MODEL --reasoning-parser-plugin examples/plugins/qwen3_reasoning_plugin.py \
        --reasoning-parser qwen3_py

The markers are matched by token id in streams (as vLLM's legacy think parsers do) and by
text in batch. A reply without `</think>` is all reasoning while thinking is on
(`chat_template_kwargs.enable_thinking`, default on), all content when it is off.
"""

from __future__ import annotations

from typing import Any

from derender.plugins import ReasoningParser, ReasoningParserManager

START, END = "<think>", "</think>"


@ReasoningParserManager.register_module("qwen3_py")
class Qwen3ReasoningPlugin(ReasoningParser):
    keep_special_tokens = True

    def __init__(self, tokenizer: Any) -> None:
        super().__init__(tokenizer)
        self.start_id = tokenizer.token_to_id(START)
        self.end_id = tokenizer.token_to_id(END)
        if self.start_id is None or self.end_id is None:
            raise RuntimeError("qwen3_py needs <think> and </think> as single tokens")

    def is_reasoning_end(self, input_ids: list[int]) -> bool:
        return self.end_id in input_ids

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        if self.end_id not in input_ids:
            return []
        return input_ids[input_ids.index(self.end_id) + 1 :]

    def extract_reasoning(
        self, model_output: str, request: dict[str, Any]
    ) -> tuple[str | None, str | None]:
        kwargs = request.get("chat_template_kwargs") or {}
        text = model_output.removeprefix(START)
        if END not in text:
            if kwargs.get("enable_thinking", True):
                return text or None, None
            return None, model_output
        reasoning, _, content = text.partition(END)
        return reasoning or None, content or None

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: list[int],
        current_token_ids: list[int],
        delta_token_ids: list[int],
    ) -> dict[str, Any] | None:
        if len(delta_token_ids) == 1 and delta_token_ids[0] in (self.start_id, self.end_id):
            return None
        if self.end_id in previous_token_ids:
            return {"content": delta_text} if delta_text else None
        delta = delta_text.replace(START, "") if self.start_id in delta_token_ids else delta_text
        if self.end_id in delta_token_ids:
            reasoning, _, content = delta.partition(END)
            return {"reasoning": reasoning or None, "content": content or None}
        return {"reasoning": delta} if delta else None
