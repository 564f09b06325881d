"""Record the inkling (Inkling tokenizer mode) golden corpus from a live vLLM 0.33.0.

The `inkling` config serves tests/models/inkling (Inkling's vocabulary: o200k_base with
TMLv0's 60 special tokens, README there) under a config.json with architecture
InklingForCausalLM, for which vLLM's `--tokenizer-mode auto` picks its `inkling` mode
(vllm/config/model.py:765-766): InklingRenderer (vllm/renderers/inkling.py) renders chats
straight to token ids with vllm/renderers/inkling_encoding.py (no Jinja, no text form), and
one ParserEngine (vllm/parser/inkling.py) serves both the `inkling` tool parser and the
`inkling` reasoning parser. The prompt ends in `<|message_model|>`; the model writes typed
blocks (tests/models/inkling/RENDERER.md):

    <|content_thinking|>REASONING<|end_message|><|message_model|><|content_text|>ANSWER
    <|end_message|><|message_model|>get_weather<|content_invoke_tool_json|>
    {"name":"get_weather","args":{"city":"Paris"}}<|end_message|><|content_model_end_sampling|>

Each scenario (SCENARIOS: output text, tags, tools in the request, finish reason, "thinking":
here only whether the request leaves the default reasoning effort, 0.9, or sends
reasoning_effort "none") is sent as batch derenders under several request variants and as
streams at chunkings tok1, tok2, tok3, tok7, seeded rand 1-7 and one chunk (and usage,
cont_usage, logprobs, return_ids, n2, finish_only for some), with dsml_recording's Recorder
(stream_state carried, replay.PREV_STATE, batch_equivalent). The `prefill_thinking` /
`prefill_text` variants send prompt ids that end in `<|content_thinking|>` /
`<|content_text|>` after vLLM's own render (the parser seeds its state from the prompt tail,
vllm/parser/inkling.py:231-258). Prompt ids are vLLM's /v1/chat/completions/render answer;
output ids are the text encoded by the fixture's tokenizer.json (markers are added tokens).

Then the render cases (render_cases(): every branch of render_inkling_messages, reasoning
effort named / numeric / invalid, tools and developer tools, tool_choice, history, content
parts, errors, completions, /tokenize, /detokenize, Responses, Messages), one call each,
kind `render` when vLLM answers 200 and `error` otherwise; last the qwen3_hermes goldens'
completion, error and render cases re-asked (dsml_recording.reask_qwen3_hermes).

    cd /tmp && VLLM_TARGET_DEVICE=cpu vllm launch render <tests/models/inkling, unpacked> \\
      --port P --served-model-name inkling --tool-call-parser inkling \\
      --enable-auto-tool-choice --reasoning-parser inkling
    <python with tokenizers> tests/reference/record_inkling.py --vllm http://127.0.0.1:P \\
      --model-dir <unpacked> --out tests/reference/pending/inkling

writes <--out>/goldens.jsonl.gz; `--only unseen` writes <--out>/unseen.jsonl.gz from
pending/inkling/vllm_parser_outputs.json (unseen/record.py's Recorder, end token 200006).
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from dsml_recording import (  # noqa: E402
    CHAT_RENDER,
    CMPL_RENDER,
    Family,
    Recorder,
    Tok,
    a,
    fn,
    reask_qwen3_hermes,
    s,
    tc,
    tr,
    u,
    write_cases,
)

CONFIG = "inkling"
MODEL = "inkling"
DEFAULT_MODEL_DIR = HERE.parent / "models" / "inkling"
PENDING = HERE / "pending" / "inkling"

# token ids (real Inkling ids: tml-renderers 0.2.1 O200kBaseChatTokenizer)
ID = {
    "<|endoftext|>": 199999,
    "<|message_user|>": 200000,
    "<|message_model|>": 200001,
    "<|message_system|>": 200002,
    "<|message_tool|>": 200003,
    "<|content_text|>": 200004,
    "<|content_image|>": 200005,
    "<|content_model_end_sampling|>": 200006,
    "<|content_thinking|>": 200008,
    "<|end_message|>": 200010,
    "<|content_audio_input|>": 200020,
    "<|content_tool_error|>": 200022,
    "<|unused_200024|>": 200024,
    "<|begin_of_text|>": 200028,
    "<|audio_end|>": 200043,
    "<|content_invoke_tool_json|>": 200049,
    "<|content_invoke_tool_text|>": 200057,
}
TOK_CHECKS = list(ID.items())

M = "<|message_model|>"
T = "<|content_text|>"
K = "<|content_thinking|>"
J = "<|content_invoke_tool_json|>"
X = "<|content_invoke_tool_text|>"
ERR = "<|content_tool_error|>"
E = "<|end_message|>"
S = "<|content_model_end_sampling|>"
EOT = "<|endoftext|>"


def think(text: str) -> str:
    return f"{K}{text}{E}{M}"


def text(t: str) -> str:
    return f"{T}{t}{E}"


def call(name: str, args: object, header: str | None = None, raw: str | None = None) -> str:
    """A tool block as the model writes it (renderer: inkling_encoding.py:559-561)."""
    h = name if header is None else header
    if raw is None:
        raw = (
            '{"name":' + json.dumps(name, ensure_ascii=False) + ',"args":'
            + (args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, separators=(",", ":")))
            + "}"
        )
    return f"{h}{J}{raw}{E}"


TOOLS = [
    fn(
        "search_web",
        {"query": {"type": "string"}, "top_k": {"type": "integer"}},
        "Search the web",
        ["query"],
    ),
    fn(
        "get_weather",
        {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "Get the current weather for a city",
        ["city"],
    ),
    fn(
        "create_event",
        {
            "title": {"type": "string"},
            "when": {
                "type": "object",
                "properties": {"date": {"type": "string"}, "hour": {"type": "integer"}},
            },
            "attendees": {"type": "array", "items": {"type": "string"}},
            "private": {"type": "boolean"},
        },
        "Create a calendar event",
        ["title"],
    ),
    fn("get_time", {}, "Current time"),
]
NAMED = {"type": "function", "function": {"name": "get_weather"}}
USERS = [
    "What's the weather like in Paris?",
    "Hello!",
    "Plan a meeting with Ana and Bo next Friday at 3pm.",
    "日本の首都はどこですか？",
    "Search the web for the latest Rust release.",
    "Tell me a joke about cats.",
]
W = call("get_weather", {"city": "Paris"})
W2 = call("get_weather", {"city": "Tokyo", "unit": "celsius"})
R = "The user asks about the weather in Paris. I should call get_weather."

# name -> (output text, tags, tools in request, finish_reason, default effort (True) or "none")
SCENARIOS: dict[str, tuple[str, list[str], bool, str, bool]] = {
    "think_content": (
        think("The user greets me. I will greet back.") + text("Hello! How can I help you today?") + S,
        ["reasoning", "content"], False, "stop", True,
    ),
    "content_only": (text("Hello there! Nice to meet you.") + S, ["content"], False, "stop", False),
    "bare_text": ("hello world" + S, ["content", "bare_text"], False, "stop", True),
    "bare_text_end_message": ("hello world" + E + S, ["content", "bare_text"], False, "stop", True),
    "bare_text_truncated": ("Cut off in the middle of", ["content", "bare_text", "truncated"], False, "length", True),
    "think_truncated": (
        K + "I am still thinking about the question and have not", ["reasoning", "truncated"], False, "length", True,
    ),
    "think_content_truncated": (
        think("Quick thought.") + T + "The answer is being written and", ["reasoning", "truncated"], False, "length", True,
    ),
    "think_only": (K + "Only thinking, no answer." + E + S, ["reasoning"], False, "stop", True),
    "think_closed_by_end_sampling": (
        K + "Thinking that ends at the sampling end." + S, ["reasoning", "end_sampling"], False, "stop", True,
    ),
    "think_empty": (think("") + text("No thinking needed.") + S, ["reasoning", "empty_reasoning"], False, "stop", True),
    "think_trailing_whitespace": (
        think("Step 1: read.\nStep 2: answer.\n\n  ") + text("\n  Line one.\nLine two.\n\n- item\n") + S,
        ["reasoning", "content", "whitespace", "newlines"], False, "stop", True,
    ),
    "multi_reasoning_blocks": (
        think("one") + text("mid") + M + K + "two" + E + M + text("end") + S,
        ["reasoning", "content", "multi_block"], False, "stop", True,
    ),
    "content_then_think": (text("Answer first.") + M + K + "then a thought" + E + S, ["reasoning", "content", "order"], False, "stop", True),
    "text_blocks_two": (text("Part one. ") + M + text("Part two.") + S, ["content", "multi_block"], False, "stop", True),
    "text_closed_by_end_sampling": (T + "hi" + S, ["content", "end_sampling"], False, "stop", True),
    "header_name_then_text": (
        "assistant" + T + "Hello from a named header." + E + S, ["content", "header"], False, "stop", True,
    ),
    "header_name_unclosed": ("some_header" + E + S, ["content", "header", "malformed"], False, "stop", True),
    "header_repeated_model": (M + M + text("Double opener.") + S, ["content", "header"], False, "stop", True),
    "end_message_only": (E + S, ["empty"], False, "stop", True),
    "end_sampling_only": (S, ["empty"], False, "stop", True),
    "tool_text_block": (X + "do something" + E + S, ["content", "tool_text"], False, "stop", True),
    "tool_error_block": (ERR + "boom" + E + S, ["content", "tool_error"], False, "stop", True),
    "marker_in_text": (T + "see " + T + " token" + E + S, ["content", "marker_in_text"], False, "stop", True),
    "special_inside": (
        think("Reason <|message_user|> here.") + text("Content with <|begin_of_text|> and <|message_tool|> inside.") + S,
        ["reasoning", "special_tokens"], False, "stop", True,
    ),
    "endoftext_inside": (text("Before" + EOT + "after") + S, ["content", "special_tokens"], False, "stop", True),
    "eos_then_text": (text("Done.") + S + "trailing after eos", ["eos_inside"], False, "stop", True),
    "stop_string": (think("Think ### then stop.") + text("Answer ### more") + S, ["stop"], False, "stop", True),
    "think_long_cjk": (
        think("用户问日本的首都。答案是东京。🤔 我应该简洁地回答。" * 2) + text("日本の首都は東京です。🗼") + S,
        ["reasoning", "unicode"], False, "stop", True,
    ),
    "emoji_split": (think("🙂🙃") + text("🎉🎊🥳 done") + S, ["unicode"], False, "stop", True),
    "json_content": (think("Need JSON.") + text('{"answer": 42}') + S, ["json"], False, "stop", True),
    "content_tool_json_lookalike": (
        text('{"name":"get_weather","args":{"city":"Paris"}}') + S, ["content", "json"], False, "stop", True,
    ),
    # tools
    "tool_think_call": (think(R) + W + S, ["tool_call", "reasoning"], True, "stop", True),
    "tool_call_only": (W + S, ["tool_call"], True, "stop", True),
    "tool_call_no_header": (call("get_weather", {"city": "Paris"}, header="") + S, ["tool_call", "header"], True, "stop", True),
    "tool_header_mismatch": (call("get_weather", {"city": "Paris"}, header="search_web") + S, ["tool_call", "header"], True, "stop", True),
    "tool_content_then_call": (
        think("Check weather.") + text("Let me check that for you.") + M + W + S, ["tool_call", "content"], True, "stop", True,
    ),
    "tool_parallel": (think("Two cities.") + W + M + W2 + S, ["tool_call", "parallel"], True, "stop", True),
    "tool_parallel_three": (
        W + M + call("get_time", {}) + M + call("search_web", {"query": "rust", "top_k": 3}) + S,
        ["tool_call", "parallel"], True, "stop", True,
    ),
    "tool_then_text": (W + M + text("done") + S, ["tool_call", "text_after"], True, "stop", True),
    "tool_two_then_text": (W + M + W2 + M + text("after") + S, ["tool_call", "parallel", "text_after"], True, "stop", True),
    "tool_text_call_text": (
        text("intro") + M + W + M + text("outro") + S, ["tool_call", "content", "text_after"], True, "stop", True,
    ),
    "tool_nested_args": (
        call("create_event", {"title": "Sync", "when": {"date": "2025-01-03", "hour": 15}, "attendees": ["Ana", "Bo"], "private": True})
        + S,
        ["tool_call", "typed"], True, "stop", True,
    ),
    "tool_args_whitespace": (
        call("get_weather", None, raw='{ "name" : "get_weather" , "args" : {"city": "Paris", "unit" : "celsius"} }') + S,
        ["tool_call", "whitespace"], True, "stop", True,
    ),
    "tool_args_tricky_strings": (
        call("search_web", {"query": 'a}b "q" \\ {x} \n args', "top_k": 1}) + S, ["tool_call", "escaping"], True, "stop", True,
    ),
    "tool_args_unicode": (call("get_weather", {"city": "東京 🗼"}) + S, ["tool_call", "unicode"], True, "stop", True),
    "tool_empty_args": (call("get_time", {}) + S, ["tool_call"], True, "stop", True),
    "tool_missing_args": (call("get_time", None, raw='{"name":"get_time"}') + S, ["tool_call", "malformed"], True, "stop", True),
    "tool_args_key_arguments": (
        call("get_weather", None, raw='{"name":"get_weather","arguments":{"city":"Paris"}}') + S,
        ["tool_call", "malformed"], True, "stop", True,
    ),
    "tool_args_string": (
        call("get_weather", None, raw='{"name":"get_weather","args":"{\\"city\\":\\"Paris\\"}"}') + S,
        ["tool_call", "malformed"], True, "stop", True,
    ),
    "tool_args_array": (call("get_weather", None, raw='{"name":"get_weather","args":[1,2]}') + S, ["tool_call", "malformed"], True, "stop", True),
    "tool_name_is_args": (call("args", None, raw='{"name":"args","args":{"k":1}}') + S, ["tool_call", "unknown_tool"], True, "stop", True),
    "tool_no_name": (call("", None, header="", raw='{"args":{"city":"Paris"}}') + S, ["tool_call", "malformed"], True, "stop", True),
    "tool_bad_json": (
        call("get_weather", None, raw='{"name":"get_weather","args":{"city":"Par') + S, ["tool_call", "malformed"], True, "stop", True,
    ),
    "tool_not_json": (call("get_weather", None, raw="get_weather(city=Paris)") + S, ["tool_call", "malformed"], True, "stop", True),
    "tool_unknown_name": (call("launch_rocket", {"target": "moon"}) + S, ["tool_call", "unknown_tool"], True, "stop", True),
    "tool_truncated_args": (
        "get_weather" + J + '{"name":"get_weather","args":{"city":"Pa', ["tool_call", "truncated"], True, "length", True,
    ),
    "tool_truncated_before_args": ("get_weather" + J + '{"name":"get_w', ["tool_call", "truncated"], True, "length", True),
    "tool_second_truncated": (W + M + "get_time" + J + '{"name":"get_ti', ["tool_call", "truncated", "parallel"], True, "length", True),
    "tool_closed_by_end_sampling": (
        "get_weather" + J + '{"name":"get_weather","args":{"city":"Paris"}}' + S, ["tool_call", "end_sampling"], True, "stop", True,
    ),
    "tool_in_reasoning": (
        K + "Maybe " + J + '{"name":"get_weather","args":{"city":"Paris"}}' + E + M + text("Plain answer.") + S,
        ["tool_call", "reasoning", "call_in_reasoning"], True, "stop", True,
    ),
    "tool_whitespace_text_before": (text("  \n") + M + W + S, ["tool_call", "whitespace"], True, "stop", True),
    "tools_plain_answer": (
        think("No tool needed.") + text("It is sunny in Paris, I believe.") + S, ["content", "tools_unused"], True, "stop", True,
    ),
    "tools_bare_text": ("Just text with tools on." + S, ["content", "bare_text", "tools_unused"], True, "stop", True),
    "tool_text_block_with_tools": (X + "get_weather city=Paris" + E + S, ["tool_text"], True, "stop", True),
    "tool_error_with_tools": (ERR + "tool failed" + E + M + W + S, ["tool_error", "tool_call"], True, "stop", True),
    "tool_effort_none": (W + S, ["tool_call", "effort"], True, "stop", False),
}

VARIANTS = {
    "base": {},
    "tools_auto": {"tool_choice": "auto"},
    "tools_default": {},
    "tools_none": {"tool_choice": "none"},
    "tools_required": {"tool_choice": "required"},
    "tools_named": {"tool_choice": NAMED},
    "no_tools": {},
    "no_parallel": {"tool_choice": "auto", "parallel_tool_calls": False},
    "no_reasoning": {"include_reasoning": False},
    "keep_special": {"skip_special_tokens": False},
    "skip_special": {"skip_special_tokens": True},
    "spaces_special": {"skip_special_tokens": False, "spaces_between_special_tokens": False},
    "logprobs": {"logprobs": True, "top_logprobs": 3},
    "logprobs_unrequested": {},
    "return_ids": {"return_token_ids": True},
    "n2": {"n": 2},
    "no_chat_request": {},
    "model_omitted": {},
    "prompt_ids": {},
    "gen_prompt_ids_only": {},
    "no_prompt_tokens": {},
    "stop": {"stop": ["###", "NEVER_MATCHES"]},
    "stop_include": {"stop": ["###"], "include_stop_str_in_output": True},
    "stop_tok": {"stop_token_ids": [ID[E]]},
    "ignore_eos": {"ignore_eos": True},
    "flip": {},
    "effort_low": {"reasoning_effort": "low"},
    "effort_max": {"reasoning_effort": "max"},
    "kw_effort_05": {"chat_template_kwargs": {"reasoning_effort": 0.5}},
    "kw_effort_bogus": {"chat_template_kwargs": {"reasoning_effort": "bogus"}},
    "no_gen_prompt": {"add_generation_prompt": False},
    "json_object": {"response_format": {"type": "json_object"}},
    # prompt ids ending in a content-kind marker (InklingRecorder.prompt)
    "prefill_thinking": {},
    "prefill_text": {},
}
PREFILL = {
    "prefill_thinking": [ID[K]],
    "prefill_text": [ID[T]],
}
ALL_SCENARIO_BATCH = ["base", "no_reasoning", "keep_special"]
TOOL_BATCH = ["tools_auto", "tools_none", "tools_required", "tools_named", "no_tools", "no_reasoning", "keep_special"]
EXTRA_BATCH = {
    "content_only": [
        "logprobs", "logprobs_unrequested", "return_ids", "n2", "no_chat_request", "model_omitted",
        "skip_special", "ignore_eos", "flip", "effort_low", "kw_effort_bogus", "no_gen_prompt",
        "json_object", "spaces_special",
    ],
    "think_content": [
        "logprobs", "n2", "prompt_ids", "gen_prompt_ids_only", "no_prompt_tokens", "skip_special",
        "ignore_eos", "flip", "effort_max", "kw_effort_05", "no_gen_prompt", "stop_tok",
        "prefill_thinking", "prefill_text", "spaces_special",
    ],
    "bare_text": ["prefill_thinking", "prefill_text", "prompt_ids", "no_gen_prompt", "stop_tok"],
    "think_only": ["prefill_thinking", "stop_tok"],
    "think_truncated": ["prefill_thinking", "prompt_ids"],
    "stop_string": ["stop", "stop_include"],
    "multi_reasoning_blocks": ["stop_tok", "prompt_ids"],
    "special_inside": ["skip_special", "spaces_special"],
    "endoftext_inside": ["skip_special"],
    "tool_think_call": ["tools_default", "no_parallel", "logprobs", "n2", "prompt_ids", "stop_tok", "skip_special", "prefill_thinking", "spaces_special"],
    "tool_parallel": ["no_parallel", "tools_default"],
    "tool_call_only": ["prefill_text", "prefill_thinking", "prompt_ids", "no_gen_prompt"],
    "tool_in_reasoning": ["prefill_thinking"],
}
EXTRA_STREAMS = {
    "think_content": [
        ("base", "usage"), ("base", "cont_usage"), ("base", "logprobs"), ("base", "return_ids"),
        ("base", "n2"), ("base", "finish_only"), ("prefill_thinking", "tok1"), ("prefill_text", "tok1"),
        ("no_reasoning", "tok1"), ("keep_special", "tok1"), ("stop_tok", "tok1"),
    ],
    "content_only": [("base", "usage"), ("skip_special", "tok1")],
    "bare_text": [("prefill_thinking", "tok1"), ("prefill_text", "tok1"), ("prefill_text", "all")],
    "think_only": [("prefill_thinking", "tok2")],
    "stop_string": [("stop", "tok1"), ("stop_include", "tok3")],
    "tool_think_call": [
        ("tools_auto", "usage"), ("tools_auto", "n2"), ("tools_auto", "logprobs"), ("tools_auto", "finish_only"),
        ("tools_none", "tok1"), ("tools_required", "tok1"), ("tools_named", "tok3"), ("no_tools", "tok1"),
        ("no_reasoning", "tok1"), ("keep_special", "tok1"), ("prefill_thinking", "tok1"),
    ],
    "tool_parallel": [("no_parallel", "tok1"), ("tools_none", "tok2")],
    "tool_call_only": [("prefill_text", "tok1"), ("prefill_thinking", "tok1"), ("tools_required", "tok2")],
    "tool_in_reasoning": [("prefill_thinking", "tok1"), ("no_tools", "tok1")],
    "tools_plain_answer": [("tools_none", "tok1")],
}
# chunkings beyond tok1/tok3/rand/all, per scenario (every other scenario gets tok2 and tok7)
MORE_CHUNKINGS = ["tok2", "tok7"]


def _thinking_kwargs(thinking: bool) -> dict | None:
    """Inkling has no thinking switch: effort 0.9 by default, "none" (0.0) for the others."""
    return None if thinking else {"chat_template_kwargs": {"reasoning_effort": "none"}}


def _second(tools: bool, thinking: bool) -> str:
    if tools:
        return call("get_time", {}) + S
    return (think("Other.") if thinking else "") + text("A second, different answer.") + S


FAMILY = Family(
    config=CONFIG,
    model=MODEL,
    scenarios=SCENARIOS,
    variants=VARIANTS,
    users=USERS,
    tools=TOOLS,
    thinking_kwargs=lambda th: None,  # applied in InklingRecorder.chat (a variant may add kwargs)
    second=_second,
    stop_tok=ID[E],
    render_tag="inkling_renderer",
    all_scenario_batch=ALL_SCENARIO_BATCH,
    tool_batch=TOOL_BATCH,
    extra_batch=EXTRA_BATCH,
    extra_streams=EXTRA_STREAMS,
)


class InklingRecorder(Recorder):
    """dsml_recording's Recorder with Inkling's effort switch and the prefill variants."""

    def chat(self, name: str, variant: str, stream: bool) -> dict:
        req = super().chat(name, variant, stream)
        thinking = self.f.scenarios[name][4]
        if variant == "flip":
            thinking = not thinking
        kw = _thinking_kwargs(thinking)
        if kw and "reasoning_effort" not in req and "chat_template_kwargs" not in req:
            req.update(copy.deepcopy(kw))
        return req

    def prompt(self, chat: dict) -> list[int]:
        return super().prompt(chat) + PREFILL.get(getattr(self, "_variant", ""), [])

    def batch_body(self, rid: str, name: str, variant: str, chat: dict, prompt: list[int]) -> dict:
        body = super().batch_body(rid, name, variant, chat, prompt)
        if variant in PREFILL:
            body["prompt_token_ids"] = prompt
        return body

    def batch(self, name: str, variant: str) -> None:
        self._variant = variant
        super().batch(name, variant)

    def stream(self, name: str, variant: str, chunking: str) -> None:
        self._variant = variant
        super().stream(name, variant, chunking)


def record_derender(rec: InklingRecorder) -> None:
    f = rec.f
    for name, (_, _, tools, _, _) in f.scenarios.items():
        base = f.tool_batch if tools else f.all_scenario_batch
        for v in base + f.extra_batch.get(name, []):
            rec.batch(name, v)
    for i, (name, (_, _, tools, _, _)) in enumerate(f.scenarios.items()):
        v0 = "tools_auto" if tools else "base"
        chunks = ["tok1", "tok3", "rand", "all"]
        if i % 2 == 0:
            chunks += MORE_CHUNKINGS
        for v, ch in [(v0, c) for c in chunks] + f.extra_streams.get(name, []):
            rec.stream(name, v, ch)


# ---------------------------------------------------------------------------
# Render cases
# ---------------------------------------------------------------------------


def chat(messages: list, **kw) -> dict:
    return {"model": MODEL, "messages": messages, **kw}


def cmpl(prompt: object, **kw) -> dict:
    return {"model": MODEL, "prompt": prompt, **kw}


def dev(content: object, **kw) -> dict:
    return {"role": "developer", "content": content, **kw}


Q = "What's the weather like in Paris?"
WEATHER = [TOOLS[1]]
PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAF"
    "BQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="


def render_cases() -> list[tuple[str, str, object, list[str]]]:
    out: list[tuple[str, str, object, list[str]]] = []
    C, P = CHAT_RENDER, CMPL_RENDER

    def add(name: str, endpoint: str, body: object, *tags: str) -> None:
        if endpoint == "/v1/responses/render":  # vLLM's own id is random
            body = {**body, "request_id": f"resp_inkling_{name}"}
        out.append((name, endpoint, body, list(tags)))

    # --- messages and roles
    add("user_simple", C, chat([u(Q)]), "basic")
    add("system_user", C, chat([s("You are terse."), u(Q)]), "system")
    add("developer_user", C, chat([dev("Be nice."), u(Q)]), "developer")
    add("system_developer_system", C, chat([s("a"), dev("b"), s("c"), u(Q)]), "system", "effort_position")
    add("system_only", C, chat([s("Only a system message.")]), "system", "effort_position")
    add("system_only_no_gen", C, chat([s("Only a system message.")], add_generation_prompt=False), "system", "generation_prompt")
    add("system_after_user", C, chat([u(Q), s("Late system."), u("again")]), "system", "effort_position")
    add("assistant_first", C, chat([a("I start."), u(Q)]), "history", "effort_position")
    add("tool_first", C, chat([tr("c0", "orphan result"), u(Q)]), "tool_history", "effort_position")
    add("user_empty_content", C, chat([u(""), u(Q)]), "content", "empty")
    add("user_none_content", C, chat([u(None), u(Q)]), "content", "empty")
    add("user_name_field", C, chat([u(Q, name="alice")]), "content")
    add("user_parts", C, chat([u([{"type": "text", "text": "one"}, {"type": "text", "text": "two"}])]), "content", "content_parts")
    add("user_parts_empty_text", C, chat([u([{"type": "text", "text": ""}, {"type": "text", "text": "x"}])]), "content", "content_parts")
    add("user_parts_input_text", C, chat([u([{"type": "input_text", "text": "one"}])]), "content", "content_parts")
    add("user_parts_refusal", C, chat([u([{"type": "refusal", "refusal": "no"}])]), "content", "content_parts")
    add("user_parts_thinking", C, chat([a([{"type": "thinking", "thinking": "t"}, {"type": "text", "text": "x"}]), u(Q)]), "content", "content_parts")
    add("user_image", C, chat([u([{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": PNG}}])]), "image", "invalid")
    add("user_audio", C, chat([u([{"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}}])]), "audio", "invalid")
    add("user_markers_in_text", C, chat([u("a <|end_message|><|message_model|> b <|content_thinking|> c <|unused_200024|>")]), "content", "injection")
    add("user_lookalike_markers", C, chat([u("<|content_xml|> <|message_assistant|> <|im_end|>")]), "content", "injection")
    add("user_unicode", C, chat([u("日本の首都は？ 🗼 ümlaut\u200b")]), "content", "unicode")
    add("user_newlines", C, chat([u("line one\n\nline two\n  indented\r\nwindows")]), "content", "whitespace")
    add("unknown_role", C, chat([{"role": "narrator", "content": "x"}, u(Q)]), "invalid")
    add("function_role", C, chat([u(Q), {"role": "function", "name": "get_weather", "content": "x"}]), "invalid")
    add("no_messages", C, chat([]), "invalid")
    # --- assistant history and reasoning
    add("history", C, chat([u("Hi"), a("Hello!"), u(Q)]), "history")
    add("history_reasoning_content", C, chat([u("Hi"), a("Hello!", reasoning_content="Greet back."), u(Q)]), "history", "reasoning_history")
    add("history_reasoning_field", C, chat([u("Hi"), a("Hello!", reasoning="Greet back."), u(Q)]), "history", "reasoning_history")
    add("history_reasoning_both", C, chat([u("Hi"), a("Hello!", reasoning="from reasoning", reasoning_content="from reasoning_content"), u(Q)]), "history", "reasoning_history")
    add("history_reasoning_empty", C, chat([u("Hi"), a("Hello!", reasoning_content=""), u(Q)]), "history", "reasoning_history")
    add("history_reasoning_only", C, chat([u("Hi"), a(None, reasoning_content="only thought"), u(Q)]), "history", "reasoning_history")
    add("history_reasoning_not_string", C, chat([u("Hi"), a("Hello!", reasoning_content=["x"]), u(Q)]), "history", "invalid")
    add("history_assistant_empty", C, chat([u("Hi"), a(""), u(Q)]), "history", "empty")
    add("history_assistant_none", C, chat([u("Hi"), a(None), u(Q)]), "history", "empty")
    add("history_assistant_parts", C, chat([u("Hi"), a([{"type": "text", "text": "p1"}, {"type": "text", "text": "p2"}]), u(Q)]), "history", "content_parts")
    add("history_last_assistant", C, chat([u("Hi"), a("Hello!")]), "history", "generation_prompt")
    add("history_last_assistant_no_gen", C, chat([u("Hi"), a("Hello!")], add_generation_prompt=False), "history", "generation_prompt")
    add("history_multi_turn", C, chat([s("sys"), u("1"), a("one", reasoning_content="r1"), u("2"), a("two", reasoning_content="r2"), u("3")]), "history", "reasoning_history")
    # --- tool history
    add("tool_history", C, chat([u(Q), a(None, tool_calls=[tc("call_1")]), tr("call_1")], tools=WEATHER), "tool_history")
    add("tool_history_content_reasoning", C, chat([u(Q), a("Checking.", reasoning_content="Need weather.", tool_calls=[tc("call_1")]), tr("call_1"), a("It is 18C."), u("Thanks")], tools=WEATHER), "tool_history", "reasoning_history")
    two = [u(Q), a("", tool_calls=[tc("c1"), tc("c2", args='{"city": "Tokyo"}')])]
    add("tool_history_two", C, chat(two + [tr("c1", "A"), tr("c2", "B")], tools=WEATHER), "tool_history", "parallel")
    add("tool_history_two_reordered", C, chat(two + [tr("c2", "B"), tr("c1", "A")], tools=WEATHER), "tool_history", "order")
    add("tool_history_unmatched_id", C, chat(two + [tr("zz", "A")], tools=WEATHER), "tool_history")
    add("tool_history_name_field", C, chat([u(Q), a("", tool_calls=[tc("c1")]), tr("c1", "A", name="other_name")], tools=WEATHER), "tool_history")
    add("tool_without_call", C, chat([u(Q), {"role": "tool", "tool_call_id": "nope", "content": "x"}]), "tool_history")
    add("tool_without_id", C, chat([u(Q), {"role": "tool", "content": "x"}]), "tool_history", "invalid")
    add("tool_result_parts", C, chat([u(Q), a("", tool_calls=[tc("c1")]), tr("c1", [{"type": "text", "text": "18C"}, {"type": "text", "text": " cloudy"}])], tools=WEATHER), "tool_history", "content_parts")
    add("tool_result_image", C, chat([u(Q), a("", tool_calls=[tc("c1")]), tr("c1", [{"type": "image_url", "image_url": {"url": PNG}}])], tools=WEATHER), "tool_history", "invalid")
    add("tool_result_empty", C, chat([u(Q), a("", tool_calls=[tc("c1")]), tr("c1", "")], tools=WEATHER), "tool_history", "empty")
    add("tool_result_json", C, chat([u(Q), a("", tool_calls=[tc("c1")]), tr("c1", '{"b": 1, "a": [2]}')], tools=WEATHER), "tool_history")
    add("tool_args_unsorted_nested", C, chat([u(Q), a("", tool_calls=[tc("c1", "create_event", json.dumps({"title": "T", "when": {"hour": 3, "date": "d"}, "attendees": ["x"], "private": False}))]), tr("c1", "ok")], tools=TOOLS), "tool_history", "canonical_json")
    add("tool_args_unicode", C, chat([u(Q), a("", tool_calls=[tc("c1", args='{"city": "東京", "note": "\\u00e9 \\ud83d\\uddfc"}')]), tr("c1", "x")], tools=WEATHER), "tool_history", "unicode")
    add("tool_args_floats", C, chat([u(Q), a("", tool_calls=[tc("c1", "f", '{"a": 1.0, "b": 1e5, "c": -0.0, "d": 12345678901234567890}')]), tr("c1", "x")]), "tool_history", "canonical_json")
    add("tool_args_dict", C, chat([u(Q), a("", tool_calls=[tc("c1", args={"z": 1, "a": 2})]), tr("c1", "x")], tools=WEATHER), "tool_history", "invalid")
    add("tool_args_empty_string", C, chat([u(Q), a("", tool_calls=[tc("c1", "get_time", "")]), tr("c1", "noon")], tools=TOOLS), "tool_history")
    add("tool_args_whitespace_string", C, chat([u(Q), a("", tool_calls=[tc("c1", "get_time", "  ")]), tr("c1", "noon")], tools=TOOLS), "tool_history")
    add("tool_args_malformed", C, chat([u(Q), a("", tool_calls=[tc("c1", args='{"city": "Par')]), tr("c1", "x")], tools=WEATHER), "tool_history", "invalid")
    add("tool_args_array", C, chat([u(Q), a("", tool_calls=[tc("c1", args="[1, 2]")]), tr("c1", "x")], tools=WEATHER), "tool_history", "invalid")
    add("tool_args_null", C, chat([u(Q), a("", tool_calls=[tc("c1", args="null")]), tr("c1", "x")], tools=WEATHER), "tool_history")
    add("tool_call_no_id", C, chat([u(Q), a("", tool_calls=[{"type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]), tr("x", "r")], tools=WEATHER), "tool_history")
    add("tool_call_name_unicode", C, chat([u(Q), a("", tool_calls=[tc("c1", "天気", "{}")]), tr("c1", "x")]), "tool_history", "unicode")
    add("tool_call_reasoning_then_results_then_answer", C, chat([u(Q), a(None, reasoning_content="plan", tool_calls=[tc("c1"), tc("c2", "get_time", "{}")]), tr("c1", "18C"), tr("c2", "noon"), a("Done.", reasoning_content="wrap")], tools=TOOLS[:2] + [TOOLS[3]]), "tool_history", "generation_prompt")
    # --- tools declaration
    add("tools_one", C, chat([u(Q)], tools=WEATHER), "tools")
    add("tools_all", C, chat([u(Q)], tools=TOOLS), "tools")
    add("tools_no_description", C, chat([u(Q)], tools=[{"type": "function", "function": {"name": "f"}}]), "tools")
    add("tools_empty_description", C, chat([u(Q)], tools=[{"type": "function", "function": {"name": "f", "description": "", "parameters": {}}}]), "tools")
    add("tools_unicode_json", C, chat([u(Q)], tools=[fn("wetter", {"stadt": {"type": "string", "description": "Städte – 東京 \"quoted\" \\ back"}}, "Wetter für eine Stadt")]), "tools", "unicode")
    add("tools_strict_extra", C, chat([u(Q)], tools=[{"type": "function", "function": {"name": "f", "strict": True, "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}}]), "tools")
    add("tools_empty_list", C, chat([u(Q)], tools=[]), "tools")
    add("tools_with_system", C, chat([s("sys"), u(Q)], tools=WEATHER), "tools", "effort_position")
    add("developer_tools", C, chat([dev("rules", tools=[TOOLS[3]]), u(Q)], tools=WEATHER), "tools", "developer")
    add("developer_tools_only", C, chat([dev("rules", tools=[TOOLS[3]]), u(Q)]), "tools", "developer")
    add("developer_tools_two", C, chat([dev("a", tools=[TOOLS[3]]), u(Q), dev("b", tools=[TOOLS[0]]), u("more")]), "tools", "developer")
    add("system_tools_field", C, chat([s("ignored?", tools=[TOOLS[3]]), u(Q)]), "tools")
    add("kw_tools", C, chat([u(Q)], chat_template_kwargs={"tools": [TOOLS[3]]}), "tools", "kwargs")
    add("kw_tools_and_tools", C, chat([u(Q)], tools=WEATHER, chat_template_kwargs={"tools": [TOOLS[3]]}), "tools", "kwargs")
    # --- tool_choice
    add("tool_choice_auto", C, chat([u(Q)], tools=WEATHER, tool_choice="auto"), "tool_choice")
    add("tool_choice_none", C, chat([u(Q)], tools=WEATHER, tool_choice="none"), "tool_choice")
    add("tool_choice_required", C, chat([u(Q)], tools=WEATHER, tool_choice="required"), "tool_choice")
    add("tool_choice_named", C, chat([u(Q)], tools=WEATHER, tool_choice=NAMED), "tool_choice")
    add("tool_choice_named_missing", C, chat([u(Q)], tools=WEATHER, tool_choice={"type": "function", "function": {"name": "nope"}}), "tool_choice", "invalid")
    add("tool_choice_required_no_tools", C, chat([u(Q)], tool_choice="required"), "tool_choice", "invalid")
    add("tool_choice_no_parallel", C, chat([u(Q)], tools=TOOLS, tool_choice="required", parallel_tool_calls=False), "tool_choice")
    # --- reasoning effort
    for name in ["none", "minimal", "low", "medium", "high", "xhigh", "max"]:
        add(f"effort_{name}", C, chat([u(Q)], reasoning_effort=name), "reasoning_effort")
        add(f"kw_effort_{name}", C, chat([u(Q)], chat_template_kwargs={"reasoning_effort": name}), "reasoning_effort", "kwargs")
    add("effort_bogus", C, chat([u(Q)], reasoning_effort="bogus"), "reasoning_effort", "invalid")
    for label, value in [
        ("0", 0), ("0_0", 0.0), ("neg_0", -0.0), ("0_5", 0.5), ("0_05", 0.05), ("0_005", 0.005),
        ("0_004", 0.004), ("0_125", 0.125), ("0_135", 0.135), ("0_1", 0.1), ("0_99", 0.99),
        ("0_994", 0.994), ("0_9900001", 0.9900001), ("1", 1), ("1_0", 1.0), ("neg_0_1", -0.1),
        ("1e_2", 1e-2), ("big", 10**20), ("bool_true", True), ("bool_false", False),
        ("str_0_5", "0.5"), ("str_bogus", "bogus"), ("str_upper", "HIGH"), ("null", None),
        ("list", [0.5]), ("dict", {"v": 1}),
    ]:
        add(f"kw_effort_{label}", C, chat([u(Q)], chat_template_kwargs={"reasoning_effort": value}), "reasoning_effort", "kwargs")
    add("effort_top_and_kw", C, chat([u(Q)], reasoning_effort="high", chat_template_kwargs={"reasoning_effort": 0.5}), "reasoning_effort", "kwargs")
    add("effort_top_low_kw_none", C, chat([u(Q)], reasoning_effort="low", chat_template_kwargs={"reasoning_effort": None}), "reasoning_effort", "kwargs")
    add("effort_with_tools_system", C, chat([s("sys"), dev("dev"), u(Q), a("A"), u("B")], tools=WEATHER, reasoning_effort="medium"), "reasoning_effort", "effort_position")
    add("effort_system_only", C, chat([s("sys")], reasoning_effort="low"), "reasoning_effort", "effort_position")
    add("effort_system_only_no_gen", C, chat([s("sys")], reasoning_effort="low", add_generation_prompt=False), "reasoning_effort", "effort_position")
    add("kw_enable_thinking_false", C, chat([u(Q)], chat_template_kwargs={"enable_thinking": False}), "reasoning_effort", "kwargs")
    add("kw_thinking_false", C, chat([u(Q)], chat_template_kwargs={"thinking": False}), "reasoning_effort", "kwargs")
    # --- generation prompt and other kwargs
    add("add_generation_prompt_false", C, chat([u(Q)], add_generation_prompt=False), "generation_prompt")
    add("kw_add_generation_prompt_false", C, chat([u(Q)], chat_template_kwargs={"add_generation_prompt": False}), "generation_prompt", "kwargs")
    add("kw_add_generation_prompt_true_top_false", C, chat([u(Q)], add_generation_prompt=False, chat_template_kwargs={"add_generation_prompt": True}), "generation_prompt", "kwargs")
    add("continue_final_message", C, chat([u(Q), a("It is")], add_generation_prompt=False, continue_final_message=True), "generation_prompt", "invalid")
    add("kw_continue_final_message", C, chat([u(Q), a("It is")], chat_template_kwargs={"continue_final_message": True}), "generation_prompt", "invalid")
    add("chat_template_refused", C, chat([u(Q)], chat_template="{{ 'x' }}"), "chat_template", "invalid")
    add("kw_unknown_ignored", C, chat([u(Q)], chat_template_kwargs={"foo": 1}), "kwargs")
    add("documents", C, chat([u(Q)], documents=[{"title": "t", "text": "d"}]), "kwargs")
    add("rf_json_object", C, chat([u(Q)], response_format={"type": "json_object"}), "response_format")
    add("rf_json_schema", C, chat([u(Q)], response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object", "properties": {"answer": {"type": "integer"}}}}}), "response_format")
    add("structured_outputs_regex", C, chat([u(Q)], structured_outputs={"regex": "[a-z]+"}), "response_format")
    add("max_tokens_too_big", C, chat([u(Q)], max_tokens=10**9), "invalid")
    add("sampling_fields", C, chat([u(Q)], temperature=0.2, top_p=0.5, stop=["x"], seed=3, n=2), "sampling")
    add("stream_options", C, chat([u(Q)], stream=True, stream_options={"include_usage": True}), "sampling")
    # --- completions, tokenize, detokenize
    add("cmpl_text_markers", P, cmpl("Hi <|message_model|><|content_text|>x<|end_message|>"), "completion")
    add("cmpl_ids", P, cmpl([ID[M], 12194, ID[E]]), "completion")
    add("cmpl_suffix", P, cmpl("def f(", suffix="return 1"), "completion", "invalid")
    add("tokenize_prompt", "/tokenize", {"model": MODEL, "prompt": "a <|message_model|> b <|unused_200024|> <|content_xml|>"}, "tokenize")
    add("tokenize_no_special", "/tokenize", {"model": MODEL, "prompt": "a <|end_message|>", "add_special_tokens": False}, "tokenize")
    add("tokenize_return_tokens", "/tokenize", {"model": MODEL, "prompt": "Hello <|content_text|>world", "return_token_strs": True}, "tokenize")
    add("tokenize_messages", "/tokenize", {"model": MODEL, "messages": [u(Q)]}, "tokenize")
    add("tokenize_messages_tools", "/tokenize", {"model": MODEL, "messages": [u(Q)], "tools": WEATHER}, "tokenize", "tools")
    add("tokenize_messages_effort", "/tokenize", {"model": MODEL, "messages": [u(Q)], "chat_template_kwargs": {"reasoning_effort": 0.3}}, "tokenize", "reasoning_effort")
    add("tokenize_messages_no_gen", "/tokenize", {"model": MODEL, "messages": [u(Q)], "add_generation_prompt": False}, "tokenize")
    add("tokenize_messages_return_tokens", "/tokenize", {"model": MODEL, "messages": [s("sys"), u(Q)], "return_token_strs": True}, "tokenize")
    add("tokenize_messages_history", "/tokenize", {"model": MODEL, "messages": [u(Q), a("ok", reasoning_content="r", tool_calls=[tc("c1")]), tr("c1")], "tools": WEATHER}, "tokenize", "tool_history")
    add("tokenize_messages_bad_effort", "/tokenize", {"model": MODEL, "messages": [u(Q)], "chat_template_kwargs": {"reasoning_effort": 2}}, "tokenize", "invalid")
    add("detokenize_markers", "/detokenize", {"model": MODEL, "tokens": [ID[M], ID[T], 12194, ID[E], ID[S]]}, "detokenize")
    add("detokenize_specials", "/detokenize", {"model": MODEL, "tokens": [199998, 199999, 200007, 200023, 200024, 200028, 200057, 12194]}, "detokenize")
    # --- Responses and Messages
    Rr, Mm = "/v1/responses/render", "/v1/messages/render"
    fparams = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    rtool = [{"type": "function", "name": "get_weather", "parameters": fparams}]
    add("resp_simple", Rr, {"model": MODEL, "input": Q}, "responses")
    add("resp_instructions", Rr, {"model": MODEL, "input": Q, "instructions": "Answer in French."}, "responses", "system")
    add("resp_tools", Rr, {"model": MODEL, "input": Q, "tools": rtool}, "responses", "tools")
    add("resp_tool_choice_required", Rr, {"model": MODEL, "input": Q, "tool_choice": "required", "tools": rtool}, "responses", "tool_choice")
    add("resp_tool_history", Rr, {"model": MODEL, "input": [{"role": "user", "content": Q}, {"type": "function_call", "call_id": "call_abc", "name": "get_weather", "arguments": '{"city": "Paris"}'}, {"type": "function_call_output", "call_id": "call_abc", "output": "18C"}], "tools": rtool}, "responses", "tool_history")
    add("resp_reasoning_item", Rr, {"model": MODEL, "input": [{"role": "user", "content": "Hi"}, {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "greet"}]}, {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": Q}]}, "responses", "reasoning_history")
    add("resp_effort_low", Rr, {"model": MODEL, "input": Q, "reasoning": {"effort": "low"}}, "responses", "reasoning_effort")
    add("resp_effort_minimal", Rr, {"model": MODEL, "input": Q, "reasoning": {"effort": "minimal"}}, "responses", "reasoning_effort")
    add("resp_kw_effort", Rr, {"model": MODEL, "input": Q, "chat_template_kwargs": {"reasoning_effort": 0.25}}, "responses", "reasoning_effort")
    add("resp_image", Rr, {"model": MODEL, "input": [{"role": "user", "content": [{"type": "input_image", "image_url": PNG}]}]}, "responses", "image", "invalid")
    add("msg_simple", Mm, {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": Q}]}, "messages")
    add("msg_system_tools", Mm, {"model": MODEL, "max_tokens": 64, "system": "Answer in French.", "messages": [{"role": "user", "content": Q}], "tools": [{"name": "get_weather", "description": "Get the weather", "input_schema": fparams}]}, "messages", "tools", "system")
    add("msg_tool_use_history", Mm, {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": Q}, {"role": "assistant", "content": [{"type": "thinking", "thinking": "need weather", "signature": "x"}, {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}]}, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "18C"}]}], "tools": [{"name": "get_weather", "input_schema": fparams}]}, "messages", "tool_history")
    add("msg_thinking", Mm, {"model": MODEL, "max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024}, "messages": [{"role": "user", "content": Q}]}, "messages", "reasoning_effort")
    add("msg_tool_choice_any", Mm, {"model": MODEL, "max_tokens": 64, "tool_choice": {"type": "any"}, "messages": [{"role": "user", "content": Q}], "tools": [{"name": "get_weather", "input_schema": fparams}]}, "messages", "tool_choice")
    return out


# ---------------------------------------------------------------------------


def record_unseen(args) -> int:
    """unseen/record.py's Recorder over pending/inkling/vllm_parser_outputs.json (EOS 200006)."""
    from tokenizers import Tokenizer

    sys.path.insert(0, str(HERE / "unseen"))
    import record as unseen  # noqa: E402

    unseen.EOS[CONFIG] = ID[S]
    config = json.loads((PENDING / "config.json").read_text())[CONFIG]
    data = json.loads((PENDING / "vllm_parser_outputs.json").read_text())
    model_dir = Path(args.model_dir) if args.model_dir else DEFAULT_MODEL_DIR
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    rec = unseen.Recorder(args.vllm, CONFIG, config, tok)
    for fam in data["families"]:
        if CONFIG not in fam["configs"]:
            continue
        for o in fam["outputs"]:
            tools = data["tools"].get(o.get("tools", fam.get("tools", "")))
            for vname, variant in fam["variants"].items():
                stem = f"{fam['kind']}_{fam['family']}-{o['name']}-{vname}"
                tags = [f"family:{fam['family']}", f"parser:{fam['kind']}", f"variant:{vname}"]
                rec.record(stem, tags, o["text"], tools, variant, o.get("eos", True))
    path = Path(args.out) / "unseen.jsonl.gz"
    write_cases(rec.cases, path)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vllm", required=True, help="base URL of the running `vllm launch render`")
    ap.add_argument("--model-dir", help="the inkling model dir (tokenizer.json unpacked or .gz)")
    ap.add_argument("--out", default=str(PENDING))
    ap.add_argument("--only", choices=["all", "derender", "render", "reask", "unseen"], default="all")
    args = ap.parse_args(argv)
    if args.only == "unseen":
        return record_unseen(args)
    model_dir = Path(args.model_dir) if args.model_dir else DEFAULT_MODEL_DIR
    rec = InklingRecorder(args.vllm, Tok(model_dir, TOK_CHECKS), FAMILY)
    if args.only in ("all", "derender"):
        record_derender(rec)
    if args.only in ("all", "render"):
        for name, endpoint, body, tags in render_cases():
            rec.render(name, endpoint, body, tags)
    if args.only in ("all", "reask"):
        reask_qwen3_hermes(rec)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"{CONFIG}: ", end="")
    write_cases(rec.cases, out / "goldens.jsonl.gz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
