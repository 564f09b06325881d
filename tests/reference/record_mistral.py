"""Record the magistral (Mistral tokenizer mode) golden corpus from a live vLLM 0.33.0.

The `magistral` config serves a tekken v13 vocabulary in vLLM's `mistral`
tokenizer mode: prompts are encoded by mistral_common (not a Jinja template),
the `mistral` reasoning parser reads `[THINK]...[/THINK]` (special tokens 34
and 35) and the `mistral` tool parser reads `[TOOL_CALLS]name[ARGS]{json}`
(`[TOOL_CALLS]` 9, `[ARGS]` 32; `name{json}` without `[ARGS]` is its
fallback). The qwen3_hermes goldens cannot be re-asked with markers mapped
(record_family.py): the chat cases here are written in Magistral's own
output markup. What the model generates after the prompt's `[/INST]`:

    [THINK]reasoning[/THINK]content</s>
    [THINK]reasoning[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>

Each scenario (SCENARIOS below: the output markup, the tags, whether the
request carries tools, the finish reason) is sent as a batch derender under
several request variants (VARIANTS: include_reasoning, skip_special_tokens,
logprobs, n, tool_choice, stop strings and ids, ...) and as streams under
several chunkings (tok1, tok3, seeded rand 1-7, all, finish_only, usage,
cont_usage, logprobs, return_ids, n2), each stream with the stream_state vLLM
returned carried to the next call (replay.PREV_STATE) and with a
`batch_equivalent`, as record_harmony.py does. The prompt ids are vLLM's own
/v1/chat/completions/render answer for the chat request; the output ids are
the markup's text pieces encoded by mistral_common's Tekkenizer
(`encode(text, bos=False, eos=False)`), with each control token (`[THINK]`,
`[/THINK]`, `[TOOL_CALLS]`, `[ARGS]`, `</s>`, ...) as its one special id.

Then the render cases (RENDER_CASES: system prompts, multi-turn, tools,
assistant tool calls with short and long ids, tool results, reasoning in
history, add_generation_prompt / continue_final_message, reasoning_effort,
chat_template(_kwargs), tool_choice grammars, response_format, messages that
mistral_common refuses, completions prompts, /tokenize, /detokenize,
/v1/responses/render, /v1/messages/render): one call each, recorded as kind
`render` when vLLM answers 200 and `error` otherwise. Last, the qwen3_hermes
goldens' completion, error and render cases are re-asked as record_family.py
does (served name swapped).

    cd /tmp && VLLM_TARGET_DEVICE=cpu vllm launch render <the magistral model dir> --port P \\
      --served-model-name magistral --reasoning-parser mistral --tool-call-parser mistral \\
      --enable-auto-tool-choice
    <vLLM venv>/bin/python tests/reference/record_mistral.py --vllm http://127.0.0.1:P \\
      [--model-dir <the magistral model dir>]

writes tests/reference/goldens/magistral.jsonl.gz. Needs mistral_common (the
vLLM venv's python has it; 1.12.0, as vLLM 0.33.0 needs for this config).

`--config mistral_small3` (tekken v7, tests/models/mistral_small3) and `--config
mistral_small32` (tekken v11, tests/models/mistral_small32) record the pending
corpora of the other tekken versions (PROFILES below: each version's own output
markup, special ids, stop_tok id and max_position_embeddings, and six render cases
where the instruct layouts differ from v13); their servers take no
--reasoning-parser (no [THINK] token). Without --config (or with --config
magistral) the script builds exactly the requests and cases it always did.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import random
import re
import sys
import tempfile
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import record_family  # noqa: E402
import replay  # noqa: E402

CONFIG = "magistral"
MODEL = "magistral"
DERENDER = "/v1/chat/completions/derender"
CHAT_RENDER = "/v1/chat/completions/render"
CMPL_RENDER = "/v1/completions/render"
EOS, TOOL_CALLS, ARGS, THINK, END_THINK = 2, 9, 32, 34, 35
DEFAULT_MODEL_DIR = HERE.parent / "models" / "magistral"

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_web",
            "description": "Search the web",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "top_k": {"type": "integer"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "create_event",
            "description": "Create a calendar event",
            "parameters": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "when": {
                        "type": "object",
                        "properties": {"date": {"type": "string"}, "hour": {"type": "integer"}},
                    },
                    "attendees": {"type": "array", "items": {"type": "string"}},
                    "private": {"type": "boolean"},
                },
                "required": ["title"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "Current time",
            "parameters": {"type": "object", "properties": {}},
        },
    },
]

USERS = [
    "Explain TCP handshakes briefly.",
    "What's the weather like in Paris?",
    "用中文解释一下the water cycle。",
    "Can you help me plan a trip to Nairobi? 🙂",
]

T, ET, TC, AR, E = "[THINK]", "[/THINK]", "[TOOL_CALLS]", "[ARGS]", "</s>"
THINKING = "The user asks about the weather in Paris. I should call get_weather with city Paris."
LONG_THINK = (
    "We need to explain the water cycle in Chinese.\n\n"
    "Key steps:\n1. Evaporation\n2. Condensation\n3. Precipitation\n4. Collection\n\n"
    "Let's write a short answer with **bold** headings and an emoji 💧."
)
W = '{"city": "Paris"}'
NESTED = (
    '{"title": "Café ☕ sync 🎉", "when": {"date": "2026-01-16", "hour": 9}, '
    '"attendees": ["Zoë", "李雷", "👩🏽‍💻 dev"], "private": false, "weight": 1.5, "tags": []}'
)
ESCAPED = '{"query": "say \\"hi\\"\\n{not json} \\u00e9 \\\\ end", "top_k": 3}'

# name -> (markup, tags, tools?, finish_reason)
SCENARIOS: dict[str, tuple[str, list[str], bool, str]] = {
    "content_only": ("Paris is the capital of France, known for its museums and cafés." + E, ["content"], False, "stop"),
    "reasoning_content": (T + "User wants a brief explanation. Keep it short." + ET + "A TCP handshake is SYN, SYN-ACK, ACK." + E, ["reasoning", "content"], False, "stop"),
    "reasoning_long_cjk": (T + LONG_THINK + ET + "水循环包括：\n\n- **蒸发**\n- **凝结**\n- **降水** 🌧️\n- **汇集**" + E, ["reasoning", "content", "cjk", "emoji", "markdown"], False, "stop"),
    "reasoning_empty": (T + ET + "Hi there!" + E, ["reasoning", "empty_reasoning"], False, "stop"),
    "content_empty": (T + "Nothing to say." + ET + E, ["reasoning", "empty_content"], False, "stop"),
    "reasoning_newlines": (T + "\n\nThink with blank lines.\n\n" + ET + "\n\nAnswer after newlines.\n" + E, ["reasoning", "whitespace"], False, "stop"),
    "reasoning_truncated": (T + "The user asks about TCP. A handshake has three steps: SYN, then SYN-ACK, then", ["reasoning", "unclosed", "truncated", "finish_length"], False, "length"),
    "reasoning_unclosed_eos": (T + "Thinking that never closes." + E, ["reasoning", "unclosed"], False, "stop"),
    "content_truncated": (T + "Short answer." + ET + "A TCP handshake opens a connection in three steps: the client sends", ["reasoning", "content", "truncated", "finish_length"], False, "length"),
    "no_eos": (T + "Short." + ET + "Done without an end token.", ["reasoning", "content", "no_eos"], False, "stop"),
    "content_no_eos": ("Plain answer, no end token.", ["content", "no_eos"], False, "stop"),
    "stray_end_think": ("Answer first." + ET + " then more text." + E, ["stray_end_think"], False, "stop"),
    "leading_end_think": (ET + "Starts with a closing marker." + E, ["stray_end_think"], False, "stop"),
    "double_think": (T + "first" + T + "second" + ET + "Answer." + E, ["reasoning", "double_think"], False, "stop"),
    "think_after_content": ("Content first " + T + "late thought" + ET + " tail." + E, ["reasoning", "late_think"], False, "stop"),
    "text_think_tags": ("<think>plain text tags</think>Answer." + E, ["text_think_tags"], False, "stop"),
    "special_inside": (T + "Plan [INST] here." + ET + "a[INST]b [/INST] c<unk>d" + E, ["special_tokens"], False, "stop"),
    "literal_markers_text": ("Text that spells [THINK] and [TOOL_CALLS] as plain characters." + E, ["literal_markers"], False, "stop"),
    "emoji_split": (T + "Flags 🇫🇷🇯🇵, family 👨‍👩‍👧‍👦, skin 👍🏽." + ET + "Weather: 🌦️ then ☀️; kiss 💏🏻; 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ok." + E, ["emoji", "incremental_detok"], False, "stop"),
    "cjk_emoji_tail": ("水循环 🌧️" + E, ["content", "cjk", "emoji", "incremental_detok"], False, "stop"),
    "stop_string": (T + "Plan ### inside." + ET + "Here is the answer ### and more." + E, ["reasoning", "content", "stop_string"], False, "stop"),
    "json_content": ('{"answer": 42, "unit": "none"}' + E, ["content", "structured"], False, "stop"),
    "reasoning_then_eos_then_text": (T + "Done." + ET + "Answer." + E + "after eos" + E, ["eos_inside"], False, "stop"),
    # tool calls
    "tool_reasoning_call": (T + THINKING + ET + TC + "get_weather" + AR + W + E, ["tool_call", "reasoning"], True, "stop"),
    "tool_call_only": (TC + "get_weather" + AR + '{"city": "Paris", "unit": "celsius"}' + E, ["tool_call"], True, "stop"),
    "tool_parallel": (T + "Two lookups." + ET + TC + "get_weather" + AR + W + TC + "search_web" + AR + '{"query": "Paris events", "top_k": 2}' + E, ["tool_call", "parallel"], True, "stop"),
    "tool_parallel_three": (TC + "get_weather" + AR + W + TC + "get_weather" + AR + '{"city": "Lyon", "unit": "fahrenheit"}' + TC + "get_time" + AR + "{}" + E, ["tool_call", "parallel"], True, "stop"),
    "tool_content_then_call": ("Let me check the weather for you." + TC + "get_weather" + AR + W + E, ["tool_call", "text_before"], True, "stop"),
    "tool_reasoning_content_call": (T + THINKING + ET + "Sure, checking now." + TC + "get_weather" + AR + W + E, ["tool_call", "reasoning", "text_before"], True, "stop"),
    "tool_nested_unicode": (T + "Create the event." + ET + TC + "create_event" + AR + NESTED + E, ["tool_call", "nested_args", "unicode", "emoji"], True, "stop"),
    "tool_escaped_args": (TC + "search_web" + AR + ESCAPED + E, ["tool_call", "escaped_args"], True, "stop"),
    "tool_fallback_brace": (TC + "get_weather" + W + E, ["tool_call", "no_args_marker"], True, "stop"),
    "tool_fallback_parallel": (TC + "get_weather" + W + TC + "get_time{}" + E, ["tool_call", "no_args_marker", "parallel"], True, "stop"),
    "tool_text_after_args": (TC + "get_weather" + AR + W + " and then some trailing text." + E, ["tool_call", "text_after"], True, "stop"),
    "tool_truncated_args": (T + THINKING + ET + TC + "get_weather" + AR + '{"city": "Pa', ["tool_call", "truncated", "finish_length"], True, "length"),
    "tool_truncated_name": (TC + "get_wea", ["tool_call", "truncated", "finish_length"], True, "length"),
    "tool_name_only": (TC + "get_weather" + E, ["tool_call", "malformed", "no_args"], True, "stop"),
    "tool_args_marker_only": (TC + "get_weather" + AR + E, ["tool_call", "malformed", "no_args"], True, "stop"),
    "tool_from_reasoning": (T + "I will call the tool now" + TC + "get_weather" + AR + W + E, ["tool_call", "reasoning", "unclosed"], True, "stop"),
    "tool_whitespace_before": ("\n\n" + TC + "get_weather" + AR + W + E, ["tool_call", "whitespace_before"], True, "stop"),
    "tool_reasoning_whitespace_before": (T + "Plan." + ET + "\n " + TC + "get_weather" + AR + W + E, ["tool_call", "reasoning", "whitespace_before"], True, "stop"),
    "tool_unknown_name": (TC + "book_flight" + AR + '{"to": "CDG"}' + E, ["tool_call", "unknown_tool"], True, "stop"),
    "tool_empty_args": (TC + "get_time" + AR + "{}" + E, ["tool_call", "empty_args"], True, "stop"),
    "tool_malformed_json": (TC + "get_weather" + AR + "{city: Paris}" + E, ["tool_call", "malformed"], True, "stop"),
    "tool_array_args": (TC + "get_weather" + AR + "[" + W + "]" + E, ["tool_call", "array_args"], True, "stop"),
    "tool_compact_json": (TC + "get_weather" + AR + '{"city":"Paris",   "unit" : "celsius"}' + E, ["tool_call", "json_spacing"], True, "stop"),
    "tool_no_eos": (TC + "get_weather" + AR + W, ["tool_call", "no_eos"], True, "stop"),
    "tool_pre_v11_json": (TC + '[{"name": "get_weather", "arguments": {"city": "Paris"}}]' + E, ["tool_call", "pre_v11_format"], True, "stop"),
    "tool_name_leading_space": (TC + " get_weather" + AR + W + E, ["tool_call", "name_space"], True, "stop"),
    "tool_think_after_call": (TC + "get_weather" + AR + W + T + "after" + ET + "tail" + E, ["tool_call", "late_think"], True, "stop"),
    "tool_empty_name": (TC + AR + W + E, ["tool_call", "empty_name"], True, "stop"),
    "tools_plain_answer": (T + "No tool needed." + ET + "TCP opens with SYN, SYN-ACK, ACK." + E, ["reasoning", "content", "tools_unused"], True, "stop"),
    "tools_content_only": ("I can answer directly: it is sunny." + E, ["content", "tools_unused"], True, "stop"),
}

# Batch variants: chat_request edits.
VARIANTS = {
    "base": {},
    "tools_auto": {"tool_choice": "auto"},
    "tools_default": {},
    "tools_none": {"tool_choice": "none"},
    "tools_required": {"tool_choice": "required"},
    "tools_named": {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
    "no_tools": {},
    "no_parallel": {"tool_choice": "auto", "parallel_tool_calls": False},
    "no_reasoning": {"include_reasoning": False},
    "keep_special": {"skip_special_tokens": False},
    "skip_special": {"skip_special_tokens": True},
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
    "stop_tok": {"stop_token_ids": [END_THINK]},
    "ignore_eos": {"ignore_eos": True},
    "effort_high": {"reasoning_effort": "high"},
    "effort_none": {"reasoning_effort": "none"},
    "effort_low": {"reasoning_effort": "low"},
    "template_kwargs": {"chat_template_kwargs": {"enable_thinking": False}},
    "json_schema": {"response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object", "properties": {"answer": {"type": "integer"}}}}}},
    "json_object": {"response_format": {"type": "json_object"}},
    "spaces_special": {"skip_special_tokens": False, "spaces_between_special_tokens": False},
}

ALL_SCENARIO_BATCH = ["base", "no_reasoning", "keep_special"]
TOOL_BATCH = ["tools_auto", "tools_none", "tools_required", "tools_named", "no_tools", "no_reasoning", "keep_special"]
EXTRA_BATCH = {
    "content_only": ["logprobs", "logprobs_unrequested", "return_ids", "n2", "no_chat_request", "model_omitted", "skip_special", "ignore_eos"],
    "reasoning_content": ["logprobs", "n2", "prompt_ids", "gen_prompt_ids_only", "no_prompt_tokens", "effort_high", "effort_none", "effort_low", "template_kwargs", "skip_special", "ignore_eos", "stop_tok", "spaces_special"],
    "reasoning_long_cjk": ["logprobs", "return_ids", "model_omitted"],
    "reasoning_truncated": ["logprobs", "return_ids", "no_prompt_tokens"],
    "reasoning_unclosed_eos": ["skip_special"],
    "content_truncated": ["logprobs", "n2"],
    "special_inside": ["skip_special", "prompt_ids", "spaces_special"],
    "emoji_split": ["logprobs", "return_ids"],
    "stop_string": ["stop", "stop_include", "logprobs", "stop_tok"],
    "json_content": ["json_schema", "json_object"],
    "reasoning_then_eos_then_text": ["ignore_eos", "skip_special"],
    "stray_end_think": ["skip_special"],
    "tool_reasoning_call": ["tools_default", "no_parallel", "logprobs", "return_ids", "n2", "skip_special", "effort_high", "stop_tok", "spaces_special"],
    "tool_parallel": ["no_parallel", "logprobs", "tools_default", "n2"],
    "tool_parallel_three": ["no_parallel", "skip_special"],
    "tool_nested_unicode": ["tools_default", "return_ids", "logprobs"],
    "tool_truncated_args": ["logprobs", "return_ids"],
    "tool_unknown_name": ["tools_default"],
    "tool_fallback_brace": ["skip_special"],
    "tools_plain_answer": ["tools_default", "json_schema"],
    "tool_call_only": ["tools_default", "skip_special", "ignore_eos"],
    "tool_content_then_call": ["tools_default", "n2"],
}

# Stream runs: (variant, chunking) per scenario; every scenario gets tok1/tok3/rand/all under its base.
EXTRA_STREAMS = {
    "content_only": [("base", "finish_only"), ("base", "usage"), ("base", "logprobs"), ("base", "return_ids"), ("base", "n2"), ("no_reasoning", "tok1")],
    "reasoning_content": [("no_reasoning", "tok1"), ("keep_special", "tok3"), ("base", "cont_usage"), ("base", "logprobs"), ("base", "n2"), ("no_reasoning", "logprobs"), ("skip_special", "tok1")],
    "reasoning_long_cjk": [("base", "usage"), ("no_reasoning", "rand")],
    "reasoning_truncated": [("base", "finish_only"), ("no_reasoning", "tok1")],
    "content_truncated": [("base", "finish_only"), ("base", "n2")],
    "emoji_split": [("keep_special", "tok1"), ("base", "logprobs")],
    "cjk_emoji_tail": [("no_reasoning", "tok1")],
    "stop_string": [("stop_tok", "tok1"), ("stop_include", "rand"), ("stop", "tok1")],
    "reasoning_then_eos_then_text": [("ignore_eos", "tok1")],
    "special_inside": [("keep_special", "tok1"), ("skip_special", "rand")],
    "tool_reasoning_call": [("no_reasoning", "tok1"), ("tools_required", "tok1"), ("tools_named", "rand"), ("tools_none", "tok1"), ("no_tools", "tok1"), ("keep_special", "tok1"), ("tools_auto", "finish_only"), ("tools_auto", "usage"), ("tools_auto", "logprobs"), ("tools_auto", "return_ids")],
    "tool_parallel": [("no_parallel", "tok1"), ("tools_auto", "n2"), ("tools_none", "rand"), ("keep_special", "tok3")],
    "tool_parallel_three": [("tools_auto", "n2")],
    "tool_content_then_call": [("no_reasoning", "tok1"), ("keep_special", "tok1")],
    "tool_truncated_args": [("tools_auto", "finish_only")],
    "tool_nested_unicode": [("tools_required", "rand"), ("keep_special", "rand")],
    "tool_fallback_brace": [("keep_special", "tok1")],
    "tool_from_reasoning": [("no_reasoning", "tok1")],
    "tool_whitespace_before": [("keep_special", "tok1")],
}


# ---------------------------------------------------------------------------
# Profiles: the tekken version each config serves (--config; magistral is the default)
# ---------------------------------------------------------------------------

# What the magistral profile uses; use_profile() rebinds these for the others.
SPECIALS = {"</s>": EOS, "[TOOL_CALLS]": TOOL_CALLS, "[ARGS]": ARGS, "[THINK]": THINK, "[/THINK]": END_THINK}
STOP_TOK = END_THINK  # the id of the stop_tok variant
MAX_LEN = 40960  # max_position_embeddings: the render cases' "too big" max_tokens
SECOND = {True: TC + "get_time" + AR + "{}" + E, False: T + "Other." + ET + "A second, different answer." + E}
PROFILE = "magistral"


def _call(name: str, args: str) -> str:
    return '{"name": "%s", "arguments": %s}' % (name, args)


def _calls(*calls: str) -> str:
    return "[" + ", ".join(calls) + "]"


# Pre-v11 (v7, Mistral Small 3 / 3.1): no [THINK], no [ARGS]; the model writes
# [TOOL_CALLS][{"name": ..., "arguments": {...}}, ...] and vLLM's mistral parser
# reads it with its legacy JSON path (parser/mistral.py _legacy_extract_tool_calls
# and the ijson stream), no grammar.
GW = _call("get_weather", W)
V7_SCENARIOS: dict[str, tuple[str, list[str], bool, str]] = {
    "content_only": SCENARIOS["content_only"],
    "content_no_eos": SCENARIOS["content_no_eos"],
    "content_truncated": ("A TCP handshake opens a connection in three steps: the client sends", ["content", "truncated", "finish_length"], False, "length"),
    "long_cjk_markdown": ("水循环包括：\n\n- **蒸发**\n- **凝结**\n- **降水** 🌧️\n- **汇集**" + E, ["content", "cjk", "emoji", "markdown"], False, "stop"),
    "text_think_tags": SCENARIOS["text_think_tags"],
    "literal_think_markers": ("[THINK]not a token before v13[/THINK]Answer." + E, ["literal_markers", "no_think_tokens"], False, "stop"),
    "special_inside": ("Plan: a[INST]b [/INST] c<unk>d" + E, ["special_tokens"], False, "stop"),
    "literal_markers_text": SCENARIOS["literal_markers_text"],
    "emoji_split": ("Flags 🇫🇷🇯🇵, family 👨‍👩‍👧‍👦, skin 👍🏽. Weather: 🌦️ then ☀️; kiss 💏🏻; 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ok." + E, ["emoji", "incremental_detok"], False, "stop"),
    "cjk_emoji_tail": SCENARIOS["cjk_emoji_tail"],
    "stop_string": ("Plan ### inside. Here is the answer ### and more." + E, ["content", "stop_string"], False, "stop"),
    "json_content": SCENARIOS["json_content"],
    "eos_then_text": ("Answer." + E + "after eos" + E, ["eos_inside"], False, "stop"),
    # tool calls
    "tool_call_only": (TC + _calls(_call("get_weather", '{"city": "Paris", "unit": "celsius"}')) + E, ["tool_call"], True, "stop"),
    "tool_space_after_marker": (TC + " " + _calls(GW) + E, ["tool_call", "space_after_marker"], True, "stop"),
    "tool_parallel": (TC + _calls(GW, _call("search_web", '{"query": "Paris events", "top_k": 2}')) + E, ["tool_call", "parallel"], True, "stop"),
    "tool_parallel_three": (TC + _calls(GW, _call("get_weather", '{"city": "Lyon", "unit": "fahrenheit"}'), _call("get_time", "{}")) + E, ["tool_call", "parallel"], True, "stop"),
    "tool_content_then_call": ("Let me check the weather for you." + TC + _calls(GW) + E, ["tool_call", "text_before"], True, "stop"),
    "tool_nested_unicode": (TC + _calls(_call("create_event", NESTED)) + E, ["tool_call", "nested_args", "unicode", "emoji"], True, "stop"),
    "tool_escaped_args": (TC + _calls(_call("search_web", ESCAPED)) + E, ["tool_call", "escaped_args"], True, "stop"),
    "tool_compact_json": (TC + '[{"name":"get_weather","arguments":{"city":"Paris","unit":"celsius"}}]' + E, ["tool_call", "json_spacing"], True, "stop"),
    "tool_args_before_name": (TC + '[{"arguments": {"city": "Paris"}, "name": "get_weather"}]' + E, ["tool_call", "key_order"], True, "stop"),
    "tool_name_in_args": (TC + _calls(_call("search_web", '{"query": "who", "name": "John Doe"}')) + E, ["tool_call", "name_key_in_args"], True, "stop"),
    "tool_args_string": (TC + '[{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}]' + E, ["tool_call", "string_args"], True, "stop"),
    "tool_args_null": (TC + '[{"name": "get_time", "arguments": null}]' + E, ["tool_call", "null_args"], True, "stop"),
    "tool_no_arguments_key": (TC + '[{"name": "get_time"}]' + E, ["tool_call", "no_args"], True, "stop"),
    "tool_no_name": (TC + '[{"arguments": {"city": "Paris"}}]' + E, ["tool_call", "empty_name"], True, "stop"),
    "tool_bare_object": (TC + GW + E, ["tool_call", "bare_object"], True, "stop"),
    "tool_empty_list": (TC + "[]" + E, ["tool_call", "empty_list"], True, "stop"),
    "tool_list_of_non_calls": (TC + '[1, "x", {"foo": 1}]' + E, ["tool_call", "malformed"], True, "stop"),
    "tool_empty_args": (TC + _calls(_call("get_time", "{}")) + E, ["tool_call", "empty_args"], True, "stop"),
    "tool_array_args": (TC + _calls(_call("get_weather", "[" + W + "]")) + E, ["tool_call", "array_args"], True, "stop"),
    "tool_trailing_text": (TC + _calls(GW) + "\nextra trailing data" + E, ["tool_call", "text_after"], True, "stop"),
    "tool_two_markers": (TC + _calls(GW) + TC + _calls(_call("get_time", "{}")) + E, ["tool_call", "two_markers"], True, "stop"),
    "tool_double_marker": (TC + TC + _calls(GW) + E, ["tool_call", "two_markers"], True, "stop"),
    "tool_leading_junk": (TC + "  junk " + _calls(GW) + " trail" + E, ["tool_call", "malformed", "text_after"], True, "stop"),
    "tool_not_json": (TC + " not json at all" + E, ["tool_call", "malformed"], True, "stop"),
    "tool_malformed_json": (TC + "[{name: get_weather}]" + E, ["tool_call", "malformed"], True, "stop"),
    "tool_v11_style": (TC + "get_weather" + W + E, ["tool_call", "v11_format"], True, "stop"),
    "tool_truncated_args": (TC + '[{"name": "get_weather", "arguments": {"city": "Pa', ["tool_call", "truncated", "finish_length"], True, "length"),
    "tool_truncated_name": (TC + '[{"name": "get_wea', ["tool_call", "truncated", "finish_length"], True, "length"),
    "tool_unclosed_list": (TC + "[" + GW, ["tool_call", "truncated", "finish_length"], True, "length"),
    "tool_no_eos": (TC + _calls(GW), ["tool_call", "no_eos"], True, "stop"),
    "tool_marker_only": (TC + E, ["tool_call", "malformed", "no_args"], True, "stop"),
    "tool_whitespace_before": ("\n\n" + TC + _calls(GW) + E, ["tool_call", "whitespace_before"], True, "stop"),
    "tool_unknown_name": (TC + _calls(_call("book_flight", '{"to": "CDG"}')) + E, ["tool_call", "unknown_tool"], True, "stop"),
    "tool_bare_array": (_calls(GW) + E, ["tool_call", "no_marker", "guided"], True, "stop"),
    "tool_think_text_then_call": ("<think>Plan.</think>" + TC + _calls(GW) + E, ["tool_call", "text_think_tags"], True, "stop"),
    "tools_plain_answer": ("TCP opens with SYN, SYN-ACK, ACK." + E, ["content", "tools_unused"], True, "stop"),
    "tools_content_only": SCENARIOS["tools_content_only"],
}
V7_EXTRA_BATCH = {
    "content_only": ["logprobs", "logprobs_unrequested", "return_ids", "n2", "no_chat_request", "model_omitted", "skip_special", "ignore_eos"],
    "long_cjk_markdown": ["logprobs", "return_ids"],
    "content_truncated": ["logprobs", "n2", "no_prompt_tokens"],
    "special_inside": ["skip_special", "prompt_ids", "spaces_special"],
    "emoji_split": ["logprobs", "return_ids"],
    "stop_string": ["stop", "stop_include", "logprobs", "stop_tok"],
    "json_content": ["json_schema", "json_object"],
    "eos_then_text": ["ignore_eos", "skip_special"],
    "tool_call_only": ["tools_default", "no_parallel", "logprobs", "return_ids", "n2", "skip_special", "effort_high", "stop_tok", "spaces_special", "ignore_eos"],
    "tool_parallel": ["no_parallel", "logprobs", "tools_default", "n2"],
    "tool_parallel_three": ["no_parallel", "skip_special"],
    "tool_nested_unicode": ["tools_default", "return_ids", "logprobs"],
    "tool_truncated_args": ["logprobs", "return_ids"],
    "tool_unknown_name": ["tools_default"],
    "tool_v11_style": ["skip_special"],
    "tool_bare_object": ["skip_special"],
    "tool_bare_array": ["tools_default", "json_schema"],
    "tools_plain_answer": ["tools_default", "json_schema"],
    "tool_content_then_call": ["tools_default", "n2"],
}
V7_EXTRA_STREAMS = {
    "content_only": [("base", "finish_only"), ("base", "usage"), ("base", "cont_usage"), ("base", "logprobs"), ("base", "return_ids"), ("base", "n2"), ("skip_special", "tok1")],
    "long_cjk_markdown": [("base", "usage")],
    "content_truncated": [("base", "finish_only"), ("base", "n2")],
    "emoji_split": [("keep_special", "tok1"), ("base", "logprobs")],
    "cjk_emoji_tail": [("keep_special", "tok1")],
    "stop_string": [("stop_tok", "tok1"), ("stop_include", "rand"), ("stop", "tok1")],
    "eos_then_text": [("ignore_eos", "tok1")],
    "special_inside": [("keep_special", "tok1"), ("skip_special", "rand")],
    "tool_call_only": [("tools_required", "tok1"), ("tools_named", "rand"), ("tools_none", "tok1"), ("no_tools", "tok1"), ("keep_special", "tok1"), ("skip_special", "tok1"), ("tools_auto", "finish_only"), ("tools_auto", "usage"), ("tools_auto", "logprobs"), ("tools_auto", "return_ids")],
    "tool_parallel": [("no_parallel", "tok1"), ("tools_auto", "n2"), ("tools_none", "rand"), ("keep_special", "tok3")],
    "tool_parallel_three": [("tools_auto", "n2")],
    "tool_content_then_call": [("keep_special", "tok1"), ("tools_required", "tok1")],
    "tool_truncated_args": [("tools_auto", "finish_only")],
    "tool_nested_unicode": [("tools_required", "rand"), ("keep_special", "rand")],
    "tool_bare_array": [("tools_required", "tok1"), ("tools_named", "tok3"), ("tools_required", "rand")],
    "tool_bare_object": [("tools_required", "tok1")],
    "tool_two_markers": [("keep_special", "tok1")],
    "tool_v11_style": [("keep_special", "tok1")],
    "tool_whitespace_before": [("keep_special", "tok1")],
    "tool_space_after_marker": [("tools_required", "tok1")],
}

# v11 (Mistral Small 3.2): [TOOL_CALLS]name[ARGS]{json} as v13, call ids written
# with [CALL_ID] in history, no [THINK] tokens: vLLM's mistral parser then reads
# reasoning as the plain text <think>...</think> (parser/mistral.py:183-191).
# magistral's scenarios with [THINK]/[/THINK] spelled <think>/</think>, less eight
# reasoning scenarios and text_think_tags (now a copy of reasoning_content), plus the
# [CALL_ID] outputs: kept no larger than magistral's corpus (in cases and in bytes; the
# text markers are more tokens than [THINK], so every reasoning stream is longer).
V11_DROPPED = (
    "double_think", "leading_end_think", "think_after_content", "reasoning_newlines", "text_think_tags",
    "reasoning_long_cjk", "tool_reasoning_content_call", "reasoning_unclosed_eos", "reasoning_empty",
)
V11_SCENARIOS: dict[str, tuple[str, list[str], bool, str]] = {
    name: ((text if name == "literal_markers_text" else text.replace(T, "<think>").replace(ET, "</think>")), tags, tools, finish)
    for name, (text, tags, tools, finish) in SCENARIOS.items()
    if name not in V11_DROPPED
}
V11_SCENARIOS["tool_call_id"] = (TC + "get_weather[CALL_ID]abc123XYZ" + AR + W + E, ["tool_call", "call_id"], True, "stop")
V11_SCENARIOS["tool_call_id_parallel"] = (TC + "get_weather[CALL_ID]abc123XYZ" + AR + W + TC + "get_time[CALL_ID]Z9y8X7w6V" + AR + "{}" + E, ["tool_call", "call_id", "parallel"], True, "stop")
V11_EXTRA_BATCH = {k: v for k, v in EXTRA_BATCH.items() if k in V11_SCENARIOS}
V11_EXTRA_BATCH["tool_call_id"] = ["tools_default", "skip_special", "spaces_special"]
V11_EXTRA_STREAMS = {k: v for k, v in EXTRA_STREAMS.items() if k in V11_SCENARIOS}
V11_EXTRA_STREAMS["tool_call_id"] = [("keep_special", "tok1"), ("tools_required", "tok1")]

PROFILES: dict[str, dict] = {
    "mistral_small3": {
        "version": "v7",
        "specials": {"</s>": EOS, "[TOOL_CALLS]": TOOL_CALLS},
        "absent": ["[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]"],
        "stop_tok": TOOL_CALLS,
        "max_len": 32768,
        "scenarios": V7_SCENARIOS,
        "extra_batch": V7_EXTRA_BATCH,
        "extra_streams": V7_EXTRA_STREAMS,
        "second": {True: TC + _calls(_call("get_time", "{}")) + E, False: "A second, different answer." + E},
    },
    "mistral_small32": {
        "version": "v11",
        "specials": {"</s>": EOS, "[TOOL_CALLS]": TOOL_CALLS, "[ARGS]": ARGS, "[CALL_ID]": 33},
        "absent": ["[THINK]", "[/THINK]"],
        "stop_tok": ARGS,
        "max_len": 40960,
        "scenarios": V11_SCENARIOS,
        "extra_batch": V11_EXTRA_BATCH,
        "extra_streams": V11_EXTRA_STREAMS,
        "second": {True: TC + "get_time" + AR + "{}" + E, False: "<think>Other.</think>A second, different answer." + E},
    },
}


def use_profile(name: str) -> None:
    """Rebind the module's per-config globals for `name` (magistral: as they are)."""
    global CONFIG, MODEL, DEFAULT_MODEL_DIR, SPECIALS, STOP_TOK, MAX_LEN, SECOND, PROFILE
    global SCENARIOS, EXTRA_BATCH, EXTRA_STREAMS
    if name == "magistral":
        return
    p = PROFILES[name]
    CONFIG = MODEL = PROFILE = name
    DEFAULT_MODEL_DIR = HERE.parent / "models" / name
    SPECIALS, STOP_TOK, MAX_LEN, SECOND = p["specials"], p["stop_tok"], p["max_len"], p["second"]
    SCENARIOS, EXTRA_BATCH, EXTRA_STREAMS = p["scenarios"], p["extra_batch"], p["extra_streams"]
    VARIANTS["stop_tok"] = {"stop_token_ids": [STOP_TOK]}


# ---------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------

MARKER_RE = re.compile(r"(\[/?[A-Z_]+\]|</?s>|<unk>|<pad>|<SPECIAL_\d+>)")


class Tok:
    def __init__(self, model_dir: Path):
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        plain = model_dir / "tekken.json"
        if plain.exists():
            self.tk = Tekkenizer.from_file(str(plain))
        else:  # the fixture ships it gzip'd; mistral_common reads it by name
            with tempfile.TemporaryDirectory() as tmp:
                unpacked = Path(tmp) / "tekken.json"
                with gzip.open(model_dir / "tekken.json.gz", "rb") as src:
                    unpacked.write_bytes(src.read())
                self.tk = Tekkenizer.from_file(str(unpacked))
        self.special: dict[str, int] = {}
        for i in range(self.tk.num_special_tokens):
            self.special[self.tk.id_to_piece(i)] = i
        for name, want in SPECIALS.items():
            got = self.tk.get_special_token(name)
            assert got == want, (name, got, want)
        for name in PROFILES.get(PROFILE, {}).get("absent", []):
            assert name not in self.special, (name, "is a special token here")

    def text(self, s: str) -> list[int]:
        return self.tk.encode(s, bos=False, eos=False) if s else []

    def enc(self, markup: str) -> list[int]:
        """`markup`'s pieces: each control token one special id, text by Tekken."""
        out: list[int] = []
        for piece in MARKER_RE.split(markup):
            if not piece:
                continue
            if piece in self.special:
                out.append(self.special[piece])
            else:
                out += self.text(piece)
        return out


def synth_logprobs(ids: list[int], seed: str) -> dict:
    rng = random.Random(zlib.crc32(seed.encode()))
    content = []
    for t in ids:
        lp = round(-rng.random() * 3, 4)
        rank = rng.randint(1, 3)
        top = [{"token_id": t, "logprob": lp, "rank": rank}]
        for r in range(1, 4):
            top.append({"token_id": rng.randint(1000, 131071), "logprob": round(-rng.random(), 4), "rank": r})
        content.append({"token_id": t, "logprob": lp, "rank": rank, "top_logprobs": top})
    return {"content": content}


# ---------------------------------------------------------------------------
# Batch and stream derender cases
# ---------------------------------------------------------------------------


class Recorder:
    def __init__(self, url: str, tok: Tok):
        self.client = replay.Client(url)
        self.tok = tok
        self.cases: list[dict] = []
        self.renders: dict[str, list[int]] = {}

    def post(self, body: object, path: str = DERENDER) -> tuple[int, object]:
        status, resp, _, _ = self.client.post(path, body)
        return status, resp

    def chat(self, name: str, tools: bool, variant: str, stream: bool) -> dict:
        i = zlib.crc32(name.encode()) % len(USERS)
        req: dict = {"model": MODEL, "messages": [], "max_tokens": 1024}
        if i % 2 == 0:
            req["messages"].append({"role": "system", "content": "You are a helpful assistant."})
        req["messages"].append({"role": "user", "content": USERS[i]})
        if tools and variant != "no_tools":
            req["tools"] = TOOLS
        req.update(copy.deepcopy(VARIANTS[variant]))
        if tools and variant == "base":
            req["tool_choice"] = "auto"
        if stream:
            req["stream"] = True
        return req

    def prompt(self, chat: dict) -> list[int]:
        """vLLM's render of the chat request; a request that vLLM refuses to
        render (reasoning_effort, chat_template_kwargs) takes the ids of the
        same request without the refused fields."""
        body = {k: v for k, v in chat.items() if k not in ("stream", "stream_options")}
        key = json.dumps(body, sort_keys=True)
        if key not in self.renders:
            status, resp = self.post(body, CHAT_RENDER)
            if status != 200:
                stripped = {k: v for k, v in body.items() if k not in ("reasoning_effort", "chat_template_kwargs", "chat_template")}
                if stripped == body:
                    raise RuntimeError(f"render {status}: {resp}")
                self.renders[key] = self.prompt(stripped)
            else:
                self.renders[key] = resp["token_ids"]
        return self.renders[key]

    def output(self, name: str, variant: str) -> tuple[list[int], str, object]:
        text, _, _, finish = SCENARIOS[name]
        ids = self.tok.enc(text)
        stop_reason: object = None
        if variant in ("stop", "stop_include") and "###" in text:
            stop_reason = "###"
            finish = "stop"
            cut = text.find("###")
            ids = self.tok.enc(text[: cut + 3])
        if variant == "stop_tok":
            stop_reason = STOP_TOK
            finish = "stop"
            ids = ids[: ids.index(STOP_TOK) + 1] if STOP_TOK in ids else ids[:-1] + [STOP_TOK]
        return ids, finish, stop_reason

    def second(self, tools: bool) -> list[int]:
        return self.tok.enc(SECOND[tools])

    def choice(self, index: int, ids: list[int], finish: str, stop_reason, logprobs, stream: bool, last: bool = True) -> dict:
        c = {
            "index": index,
            "logprobs": logprobs,
            "finish_reason": finish if last else None,
            "stop_reason": stop_reason if last else None,
            "token_ids": ids,
            "routed_experts": None,
            "sampling_mask": None,
            "weight_versions": None,
        }
        if stream:
            c = {k: c[k] for k in ("index", "finish_reason", "stop_reason", "token_ids", "routed_experts", "sampling_mask", "weight_versions", "logprobs")}
        return c

    def batch_body(self, rid: str, name: str, variant: str, chat: dict, prompt: list[int]) -> dict:
        ids, finish, stop_reason = self.output(name, variant)
        lp = synth_logprobs(ids, rid) if variant in ("logprobs", "logprobs_unrequested") else None
        choices = [self.choice(0, ids, finish, stop_reason, lp, False)]
        total = len(ids)
        if variant == "n2":
            ids2 = self.second(SCENARIOS[name][2])
            choices.append(self.choice(1, ids2, "stop", None, None, False))
            total += len(ids2)
        gen = {
            "request_id": rid,
            "model": None,
            "created": None,
            "usage": {"prompt_tokens": len(prompt), "total_tokens": len(prompt) + total, "completion_tokens": total, "prompt_tokens_details": None},
            "prompt_logprobs": None,
            "prompt_token_id_logprobs": None,
            "prompt_token_ids": prompt if variant == "gen_prompt_ids_only" else None,
            "mm_placeholders": None,
            "metrics": None,
            "kv_transfer_params": None,
            "ec_transfer_params": None,
            "output_mode": "tokens",
            "choices": choices,
        }
        body: dict = {"model": MODEL, "generate_response": gen, "prompt_tokens": len(prompt), "chat_request": chat}
        if variant == "no_chat_request":
            del body["chat_request"]
        if variant == "model_omitted":
            del body["model"]
            body["chat_request"] = {k: v for k, v in chat.items() if k != "model"}
        if variant == "prompt_ids":
            body["prompt_token_ids"] = prompt
        if variant == "no_prompt_tokens":
            del body["prompt_tokens"]
        return body

    def batch(self, name: str, variant: str) -> None:
        tags = SCENARIOS[name][1]
        n = len(self.cases) + 1
        chat = self.chat(name, SCENARIOS[name][2], variant, False)
        prompt = self.prompt(chat)
        body = self.batch_body(f"gen-{CONFIG}-dev-{n}", name, variant, chat, prompt)
        status, resp = self.post(body)
        self.cases.append({
            "id": f"{CONFIG}/dev/batch/{n:04d}-{name}-{variant}",
            "config": CONFIG, "kind": "batch", "endpoint": DERENDER,
            "calls": [{"request": body, "status": status, "response": resp}],
            "tags": ["chat", *tags, f"variant:{variant}"],
        })

    def stream(self, name: str, variant: str, chunking: str) -> None:
        tags = SCENARIOS[name][1]
        tools = SCENARIOS[name][2]
        n = len(self.cases) + 1
        rid = f"gen-{CONFIG}-dev-s{n}"
        chat = self.chat(name, tools, variant, True)
        if chunking in ("usage", "cont_usage"):
            chat["stream_options"] = {"include_usage": True, "continuous_usage_stats": chunking == "cont_usage"}
        if chunking == "logprobs":
            chat.update(logprobs=True, top_logprobs=3)
        if chunking == "return_ids":
            chat["return_token_ids"] = True
        prompt = self.prompt(chat)
        ids, finish, stop_reason = self.output(name, variant)
        lanes = [(0, ids, finish, stop_reason)]
        if chunking == "n2":
            lanes.append((1, self.second(tools), "stop", None))
            chat["n"] = 2
        lp_all = synth_logprobs(ids, rid) if chunking == "logprobs" else None
        rng = random.Random(zlib.crc32((name + variant + chunking).encode()))
        plans = []  # per lane: list of chunk lengths
        for _, lane_ids, _, _ in lanes:
            L = len(lane_ids)
            if chunking in ("tok1", "finish_only", "usage", "cont_usage", "logprobs", "return_ids"):
                lens = [1] * L
            elif chunking == "tok3":
                lens = [min(3, L - i) for i in range(0, L, 3)]
            elif chunking == "all":
                lens = [L]
            else:  # rand, n2
                lens, left = [], L
                while left:
                    k = min(left, rng.randint(1, 7))
                    lens.append(k)
                    left -= k
            plans.append(lens)
        # interleave the lanes' chunks
        order = []
        pos = [0] * len(lanes)
        at = [0] * len(lanes)
        while any(pos[i] < len(plans[i]) for i in range(len(lanes))):
            for li in range(len(lanes)):
                if pos[li] < len(plans[li]):
                    order.append((li, at[li], plans[li][pos[li]], pos[li] == len(plans[li]) - 1))
                    at[li] += plans[li][pos[li]]
                    pos[li] += 1
        calls, states, seen = [], {}, set()
        completion = sum(len(l[1]) for l in lanes)

        def send(gen: dict, lane: int) -> None:
            req = {"stream": True, "model": MODEL, "generate_chunk": gen, "stream_state": states.get(lane), "prompt_tokens": len(prompt), "prompt_token_ids": prompt, "chat_request": chat}
            status, resp = self.post(req)
            calls.append({"request": dict(req, stream_state=replay.PREV_STATE if lane in seen else None), "state_lane": lane, "status": status, "response": resp})
            seen.add(lane)
            if status == 200 and isinstance(resp, dict) and isinstance(resp.get("stream_state"), dict):
                states[lane] = resp["stream_state"]

        done_tokens = 0
        for li, start, k, last in order:
            index, lane_ids, lfin, lstop = lanes[li]
            piece = lane_ids[start : start + k]
            done_tokens += k
            fin_here = last and chunking != "finish_only"
            lp = None
            if lp_all is not None and li == 0:
                lp = {"content": lp_all["content"][start : start + k]}
            ch = self.choice(index, piece, lfin, lstop, lp, True, last=fin_here)
            gen = {"request_id": rid, "usage": None, "output_mode": "tokens", "choices": [ch]}
            if chunking == "cont_usage":
                gen["usage"] = {"prompt_tokens": len(prompt), "total_tokens": len(prompt) + done_tokens, "completion_tokens": done_tokens, "prompt_tokens_details": None}
            if chunking == "return_ids" and start == 0:
                gen["prompt_token_ids"] = prompt
            send(gen, li)
            if last and chunking == "finish_only":
                ch = self.choice(index, [], lfin, lstop, None, True, last=True)
                send({"request_id": rid, "usage": None, "output_mode": "tokens", "choices": [ch]}, li)
        if chunking in ("usage", "cont_usage", "n2"):
            usage = {"prompt_tokens": len(prompt), "total_tokens": len(prompt) + completion, "completion_tokens": completion, "prompt_tokens_details": None}
            send({"request_id": rid, "usage": usage, "output_mode": "tokens", "choices": []}, 0)
        be_chat = {k: v for k, v in chat.items() if k not in ("stream", "stream_options")}
        be = self.batch_body(rid, name, "n2" if chunking == "n2" else variant, be_chat, prompt)
        if chunking == "logprobs":
            be["generate_response"]["choices"][0]["logprobs"] = lp_all
        status, resp = self.post(be)
        self.cases.append({
            "id": f"{CONFIG}/dev/stream/{n:04d}-{name}-{variant}-{chunking}",
            "config": CONFIG, "kind": "stream", "endpoint": DERENDER, "calls": calls,
            "batch_equivalent": {"request": be, "status": status, "response": resp},
            "tags": ["chat", *tags, f"variant:{variant}", f"chunking:{chunking}"],
        })

    def render(self, name: str, endpoint: str, body: object, tags: list[str]) -> None:
        n = len(self.cases) + 1
        status, resp = self.post(body, endpoint)
        kind = "render" if status == 200 else "error"
        self.cases.append({
            "id": f"{CONFIG}/dev/{kind}/{n:04d}-{name}",
            "config": CONFIG, "kind": kind, "endpoint": endpoint,
            "calls": [{"request": body, "status": status, "response": resp}],
            "tags": ["render", "mistral_common", *tags],
        })


# ---------------------------------------------------------------------------
# Render cases
# ---------------------------------------------------------------------------


def u(content: object, **kw) -> dict:
    return {"role": "user", "content": content, **kw}


def s(content: object) -> dict:
    return {"role": "system", "content": content}


def a(content: object = None, **kw) -> dict:
    m: dict = {"role": "assistant"}
    if content is not None or not kw:
        m["content"] = content
    m.update(kw)
    return m


def tc(cid: str, name: str = "get_weather", args: object = W) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def tr(cid: str, content: object = '{"temp_c": 18, "sky": "cloudy"}', **kw) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": content, **kw}


def chat(messages: list, **kw) -> dict:
    return {"model": MODEL, "messages": messages, **kw}


def cmpl(prompt: object, **kw) -> dict:
    return {"model": MODEL, "prompt": prompt, **kw}


Q = "What's the weather like in Paris?"
WEATHER = [TOOLS[1]]
SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}


def render_cases() -> list[tuple[str, str, object, list[str]]]:
    C, P = CHAT_RENDER, CMPL_RENDER
    out: list[tuple[str, str, object, list[str]]] = []

    def add(name: str, endpoint: str, body: object, *tags: str) -> None:
        if endpoint == "/v1/responses/render" and isinstance(body, dict):
            # a fixed id: vLLM's default is a random `resp_<16 hex>`, which replay.py compares literally
            body = {**body, "request_id": f"resp_{CONFIG}_{len(out)}"}
        out.append((name, endpoint, body, list(tags)))

    # --- plain conversations
    add("simple", C, chat([u(Q)]), "basic")
    add("system_user", C, chat([s("Answer in French."), u(Q)]), "system")
    add("two_systems", C, chat([s("Be brief."), s("Answer in French."), u(Q)]), "system")
    add("system_only", C, chat([s("Be brief.")]), "system", "invalid")
    add("system_after_user", C, chat([u("Hi"), s("Now be formal."), u(Q)]), "system")
    add("system_mid_conversation", C, chat([u("Hi"), a("Hello!"), s("Answer in French."), u(Q)]), "system")
    add("system_empty", C, chat([s(""), u(Q)]), "system", "invalid")
    add("system_last", C, chat([u(Q), s("Be brief.")]), "system")
    add("multi_turn", C, chat([u("Hi"), a("Hello! How can I help?"), u(Q)]), "multi_turn")
    add("multi_turn_system", C, chat([s("You are terse."), u("Hi"), a("Hello."), u("Tell me a joke."), a("No."), u(Q)]), "multi_turn", "system")
    add("two_users", C, chat([u("Hi"), u(Q)]), "multi_turn")
    add("two_assistants", C, chat([u("Hi"), a("Hello."), a("Still here."), u(Q)]), "multi_turn")
    add("assistant_first", C, chat([a("Hello."), u(Q)]), "invalid")
    add("assistant_only", C, chat([a("Hello.")]), "invalid")
    add("empty_messages", C, chat([]), "invalid")
    add("role_developer", C, chat([{"role": "developer", "content": "Be brief."}, u(Q)]), "role")
    add("role_unknown", C, chat([{"role": "wizard", "content": "x"}, u(Q)]), "role", "invalid")
    add("role_function", C, chat([u(Q), {"role": "function", "name": "get_weather", "content": "sunny"}]), "role", "invalid")
    add("content_parts", C, chat([u([{"type": "text", "text": "What's the weather"}, {"type": "text", "text": " like in Paris?"}])]), "content_parts")
    add("content_parts_system", C, chat([s([{"type": "text", "text": "Be brief."}]), u(Q)]), "content_parts", "system")
    add("content_image_url", C, chat([u([{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}])]), "content_parts", "invalid")
    add("content_empty", C, chat([u("")]), "edge")
    add("content_null", C, chat([u(None)]), "edge", "invalid")
    add("content_whitespace", C, chat([u("  \n\t  ")]), "edge")
    add("cjk_emoji", C, chat([u("你好，世界！今天天气很好。 東京の天気は晴れです。🌤️ 👨‍👩‍👧")]), "unicode")
    add("control_marker_text", C, chat([u("Ignore this: [INST] fake [/INST] [TOOL_CALLS] [THINK] </s>")]), "literal_markers")
    add("leading_space", C, chat([u(" leading and trailing spaces ")]), "edge")
    add("long_text", C, chat([u("lorem ipsum dolor sit amet " * 60)]), "edge")
    add("user_name", C, chat([u(Q, name="alice")]), "edge")
    add("model_omitted", C, {"messages": [u(Q)]}, "basic")
    add("unknown_model", C, {"model": "nope", "messages": [u(Q)]}, "invalid")

    # --- tools and tool_choice (structured_outputs grammar)
    add("tools_auto", C, chat([u(Q)], tools=TOOLS), "tools")
    add("tools_explicit_auto", C, chat([u(Q)], tools=TOOLS, tool_choice="auto"), "tools")
    add("tools_none", C, chat([u(Q)], tools=TOOLS, tool_choice="none"), "tools")
    add("tools_required", C, chat([u(Q)], tools=TOOLS, tool_choice="required"), "tools")
    add("tools_named", C, chat([u(Q)], tools=TOOLS, tool_choice={"type": "function", "function": {"name": "get_weather"}}), "tools")
    add("tools_named_missing", C, chat([u(Q)], tools=TOOLS, tool_choice={"type": "function", "function": {"name": "nope"}}), "tools", "invalid")
    add("tools_single", C, chat([u(Q)], tools=WEATHER), "tools")
    add("tools_system", C, chat([s("You are a tool-using assistant."), u(Q)], tools=WEATHER), "tools", "system")
    add("tools_no_parallel", C, chat([u(Q)], tools=TOOLS, parallel_tool_calls=False), "tools")
    add("tools_required_no_parallel", C, chat([u(Q)], tools=TOOLS, tool_choice="required", parallel_tool_calls=False), "tools")
    add("tools_empty_list", C, chat([u(Q)], tools=[]), "tools", "edge")
    add("tools_empty_list_required", C, chat([u(Q)], tools=[], tool_choice="required"), "tools", "invalid")
    add("tool_choice_auto_no_tools", C, chat([u(Q)], tool_choice="auto"), "tools", "edge")
    add("tool_choice_none_no_tools", C, chat([u(Q)], tool_choice="none"), "tools", "edge")
    add("tool_choice_required_no_tools", C, chat([u(Q)], tool_choice="required"), "tools", "invalid")
    add("tool_choice_named_no_tools", C, chat([u(Q)], tool_choice={"type": "function", "function": {"name": "get_weather"}}), "tools", "invalid")
    add("tool_no_parameters", C, chat([u(Q)], tools=[{"type": "function", "function": {"name": "get_time", "description": "Current time"}}]), "tools")
    add("tool_no_description", C, chat([u(Q)], tools=[{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}]), "tools")
    add("tool_strict", C, chat([u(Q)], tools=[{"type": "function", "function": dict(TOOLS[1]["function"], strict=True)}]), "tools")
    add("tool_bad_schema", C, chat([u(Q)], tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "nonsense"}}}}}]), "tools", "invalid")
    add("tool_bad_name", C, chat([u(Q)], tools=[{"type": "function", "function": {"name": "get weather!", "parameters": {"type": "object", "properties": {}}}}]), "tools", "invalid")
    add("tool_unicode_description", C, chat([u(Q)], tools=[{"type": "function", "function": {"name": "meteo", "description": "Météo du jour ☀️ 天气", "parameters": {"type": "object", "properties": {"ville": {"type": "string", "description": "La ville 🏙️"}}}}}]), "tools", "unicode")
    add("tool_enum_nested", C, chat([u(Q)], tools=[TOOLS[2]], tool_choice="required"), "tools")
    add("tool_type_not_function", C, chat([u(Q)], tools=[{"type": "code_interpreter"}]), "tools", "invalid")
    add("tools_none_json_schema", C, chat([u(Q)], tools=TOOLS, tool_choice="none", response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}}), "tools", "response_format")
    add("tools_auto_json_schema", C, chat([u(Q)], tools=TOOLS, response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}}), "tools", "response_format")
    add("tools_required_json_object", C, chat([u(Q)], tools=WEATHER, tool_choice="required", response_format={"type": "json_object"}), "tools", "response_format")

    # --- response_format / structured outputs without tools
    add("rf_json_schema", C, chat([u(Q)], response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}}), "response_format")
    add("rf_json_schema_strict", C, chat([u(Q)], response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA, "strict": True}}), "response_format")
    add("rf_json_schema_no_schema", C, chat([u(Q)], response_format={"type": "json_schema", "json_schema": {"name": "a"}}), "response_format")
    add("rf_json_object", C, chat([u(Q)], response_format={"type": "json_object"}), "response_format")
    add("rf_text", C, chat([u(Q)], response_format={"type": "text"}), "response_format")
    add("rf_structural_tag", C, chat([u(Q)], response_format={"type": "structural_tag", "structures": [{"begin": "<a>", "schema": SCHEMA, "end": "</a>"}], "triggers": ["<a>"]}), "response_format")
    add("so_json", C, chat([u(Q)], structured_outputs={"json": SCHEMA}), "structured_outputs")
    add("so_json_string", C, chat([u(Q)], structured_outputs={"json": json.dumps(SCHEMA)}), "structured_outputs")
    add("so_regex", C, chat([u(Q)], structured_outputs={"regex": "[a-z]+"}), "structured_outputs")
    add("so_choice", C, chat([u(Q)], structured_outputs={"choice": ["yes", "no"]}), "structured_outputs")
    add("so_grammar", C, chat([u(Q)], structured_outputs={"grammar": 'start: "yes" | "no"'}), "structured_outputs")
    add("so_regex_with_tools", C, chat([u(Q)], tools=WEATHER, structured_outputs={"regex": "[a-z]+"}), "structured_outputs", "tools")
    add("so_json_with_tools_required", C, chat([u(Q)], tools=WEATHER, tool_choice="required", structured_outputs={"json": SCHEMA}), "structured_outputs", "tools")

    # --- assistant tool calls and tool results
    short, short2 = "abcDEF123", "Z9y8X7w6V"
    long_id, long_id2 = "call_0123456789abcdef", "chatcmpl-tool-9f8e7d6c5b4a3210"
    add("tool_history_short_id", C, chat([u(Q), a(None, tool_calls=[tc(short)]), tr(short)], tools=TOOLS), "tool_history", "tool_id")
    add("tool_history_long_id", C, chat([u(Q), a(None, tool_calls=[tc(long_id)]), tr(long_id)], tools=TOOLS), "tool_history", "tool_id", "truncated_id")
    add("tool_history_long_id_mismatch", C, chat([u(Q), a(None, tool_calls=[tc(long_id)]), tr(long_id[-9:])], tools=TOOLS), "tool_history", "tool_id", "truncated_id")
    add("tool_history_short_8", C, chat([u(Q), a(None, tool_calls=[tc("abcd1234")]), tr("abcd1234")], tools=TOOLS), "tool_history", "tool_id", "invalid")
    add("tool_history_underscore_id", C, chat([u(Q), a(None, tool_calls=[tc("call_1234")]), tr("call_1234")], tools=TOOLS), "tool_history", "tool_id")
    add("tool_history_parallel", C, chat([u(Q), a(None, tool_calls=[tc(short), tc(short2, "get_time", "{}")]), tr(short), tr(short2, "12:00")], tools=TOOLS), "tool_history", "parallel")
    add("tool_history_parallel_long", C, chat([u(Q), a(None, tool_calls=[tc(long_id), tc(long_id2, "get_time", "{}")]), tr(long_id), tr(long_id2, "12:00")], tools=TOOLS), "tool_history", "parallel", "truncated_id")
    add("tool_history_results_swapped", C, chat([u(Q), a(None, tool_calls=[tc(short), tc(short2, "get_time", "{}")]), tr(short2, "12:00"), tr(short)], tools=TOOLS), "tool_history", "parallel")
    add("tool_history_then_answer", C, chat([u(Q), a(None, tool_calls=[tc(short)]), tr(short), a("It is 18°C and cloudy in Paris."), u("And tomorrow?")], tools=TOOLS), "tool_history", "multi_turn")
    add("tool_history_with_content", C, chat([u(Q), a("Let me check.", tool_calls=[tc(short)]), tr(short)], tools=TOOLS), "tool_history")
    add("tool_history_empty_content", C, chat([u(Q), a("", tool_calls=[tc(short)]), tr(short)], tools=TOOLS), "tool_history")
    add("tool_history_no_tools_field", C, chat([u(Q), a(None, tool_calls=[tc(short)]), tr(short)]), "tool_history")
    add("tool_history_unknown_function", C, chat([u(Q), a(None, tool_calls=[tc(short, "book_flight", '{"to": "CDG"}')]), tr(short)], tools=TOOLS), "tool_history")
    add("tool_history_args_unicode", C, chat([u(Q), a(None, tool_calls=[tc(short, "create_event", NESTED)]), tr(short, "créé ✅")], tools=TOOLS), "tool_history", "unicode")
    add("tool_history_args_not_json", C, chat([u(Q), a(None, tool_calls=[tc(short, "get_weather", "not json")]), tr(short)], tools=TOOLS), "tool_history", "invalid")
    add("tool_history_args_empty", C, chat([u(Q), a(None, tool_calls=[tc(short, "get_time", "")]), tr(short)], tools=TOOLS), "tool_history", "edge")
    add("tool_history_args_object", C, chat([u(Q), a(None, tool_calls=[tc(short, "get_weather", {"city": "Paris"})]), tr(short)], tools=TOOLS), "tool_history", "invalid")
    add("tool_result_plain_text", C, chat([u(Q), a(None, tool_calls=[tc(short)]), tr(short, "18 degrees and cloudy")], tools=TOOLS), "tool_history")
    add("tool_result_parts", C, chat([u(Q), a(None, tool_calls=[tc(short)]), tr(short, [{"type": "text", "text": "18 degrees"}])], tools=TOOLS), "tool_history", "content_parts")
    add("tool_result_empty", C, chat([u(Q), a(None, tool_calls=[tc(short)]), tr(short, "")], tools=TOOLS), "tool_history", "edge")
    add("tool_result_with_name", C, chat([u(Q), a(None, tool_calls=[tc(short)]), tr(short, name="get_weather")], tools=TOOLS), "tool_history")
    add("tool_without_call", C, chat([u(Q), tr(short)], tools=TOOLS), "tool_history", "invalid")
    add("tool_unknown_call_id", C, chat([u(Q), a(None, tool_calls=[tc(short)]), tr(short2)], tools=TOOLS), "tool_history", "invalid")
    add("tool_missing_call_id", C, chat([u(Q), a(None, tool_calls=[tc(short)]), {"role": "tool", "content": "18"}], tools=TOOLS), "tool_history", "invalid")
    add("tool_fewer_results", C, chat([u(Q), a(None, tool_calls=[tc(short), tc(short2, "get_time", "{}")]), tr(short)], tools=TOOLS), "tool_history", "invalid")
    add("tool_more_results", C, chat([u(Q), a(None, tool_calls=[tc(short)]), tr(short), tr(short2)], tools=TOOLS), "tool_history", "invalid")
    add("tool_calls_last", C, chat([u(Q), a(None, tool_calls=[tc(short)])], tools=TOOLS), "tool_history", "invalid")
    add("tool_calls_last_no_gen_prompt", C, chat([u(Q), a(None, tool_calls=[tc(short)])], tools=TOOLS, add_generation_prompt=False), "tool_history")
    add("tool_calls_then_user", C, chat([u(Q), a(None, tool_calls=[tc(short)]), u("Never mind.")], tools=TOOLS), "tool_history", "invalid")
    add("tool_duplicate_ids", C, chat([u(Q), a(None, tool_calls=[tc(short), tc(short)]), tr(short), tr(short)], tools=TOOLS), "tool_history", "invalid")
    add("tool_calls_empty_list", C, chat([u(Q), a("Answer.", tool_calls=[]), u("ok")], tools=TOOLS), "tool_history")
    add("assistant_null_content", C, chat([u("Hi"), a(None), u(Q)]), "invalid")
    add("assistant_empty_content", C, chat([u("Hi"), a(""), u(Q)]), "edge")
    add("assistant_missing_content", C, chat([u("Hi"), {"role": "assistant"}, u(Q)]), "invalid")

    # --- reasoning in history
    add("assistant_reasoning", C, chat([u("Hi"), a("Hello!", reasoning="The user greets me."), u(Q)]), "reasoning_history")
    add("assistant_reasoning_content", C, chat([u("Hi"), a("Hello!", reasoning_content="The user greets me."), u(Q)]), "reasoning_history")
    add("assistant_thinking_part", C, chat([u("Hi"), a([{"type": "thinking", "thinking": "The user greets me."}, {"type": "text", "text": "Hello!"}]), u(Q)]), "reasoning_history", "content_parts")
    add("assistant_text_parts", C, chat([u("Hi"), a([{"type": "text", "text": "Hello!"}]), u(Q)]), "content_parts")
    add("assistant_literal_think", C, chat([u("Hi"), a("[THINK]literal[/THINK]Hello!"), u(Q)]), "literal_markers")
    add("assistant_reasoning_tool_calls", C, chat([u(Q), a(None, reasoning="Need the weather.", tool_calls=[tc(short)]), tr(short)], tools=TOOLS), "reasoning_history", "tool_history")
    add("continue_with_reasoning", C, chat([u(Q), a("It is", reasoning="Look it up.")], add_generation_prompt=False, continue_final_message=True), "reasoning_history", "continue")

    # --- add_generation_prompt / continue_final_message
    add("no_gen_prompt", C, chat([u(Q)], add_generation_prompt=False), "gen_prompt")
    add("gen_prompt_true", C, chat([u(Q)], add_generation_prompt=True), "gen_prompt")
    add("gen_prompt_last_assistant", C, chat([u(Q), a("Sure,")]), "gen_prompt", "invalid")
    add("no_gen_prompt_last_assistant", C, chat([u(Q), a("Sure,")], add_generation_prompt=False), "gen_prompt")
    add("continue_final", C, chat([u(Q), a("Sure, the answer is")], add_generation_prompt=False, continue_final_message=True), "continue")
    add("continue_final_empty", C, chat([u(Q), a("")], add_generation_prompt=False, continue_final_message=True), "continue", "edge")
    add("continue_final_multi_turn", C, chat([s("Be brief."), u("Hi"), a("Hello."), u(Q), a("In Paris it")], add_generation_prompt=False, continue_final_message=True), "continue", "system")
    add("continue_and_gen_prompt", C, chat([u(Q), a("Sure")], add_generation_prompt=True, continue_final_message=True), "continue", "invalid")
    add("continue_last_user", C, chat([u(Q)], add_generation_prompt=False, continue_final_message=True), "continue", "invalid")
    add("continue_tool_calls", C, chat([u(Q), a(None, tool_calls=[tc(short)])], tools=TOOLS, add_generation_prompt=False, continue_final_message=True), "continue", "tool_history")
    add("continue_with_tools", C, chat([u(Q), a("Let me")], tools=TOOLS, add_generation_prompt=False, continue_final_message=True), "continue", "tools")
    add("continue_with_tools_required", C, chat([u(Q), a("Let me")], tools=TOOLS, tool_choice="required", add_generation_prompt=False, continue_final_message=True), "continue", "tools")
    add("no_gen_prompt_tool_last", C, chat([u(Q), a(None, tool_calls=[tc(short)]), tr(short)], tools=TOOLS, add_generation_prompt=False), "gen_prompt", "tool_history")

    # --- reasoning_effort
    for effort in ("none", "high", "low", "medium", "minimal", "xhigh", "HIGH"):
        add(f"effort_{effort}", C, chat([u(Q)], reasoning_effort=effort), "reasoning_effort")
    add("effort_high_tools", C, chat([u(Q)], tools=TOOLS, reasoning_effort="high"), "reasoning_effort", "tools")
    add("effort_null", C, chat([u(Q)], reasoning_effort=None), "reasoning_effort")

    # --- chat templates (refused for Mistral tokenizers)
    add("chat_template", C, chat([u(Q)], chat_template="{{ messages[0].content }}"), "chat_template", "invalid")
    add("chat_template_kwargs_empty", C, chat([u(Q)], chat_template_kwargs={}), "chat_template", "invalid")
    add("chat_template_kwargs_thinking", C, chat([u(Q)], chat_template_kwargs={"enable_thinking": False}), "chat_template", "invalid")
    add("chat_template_kwargs_null", C, chat([u(Q)], chat_template_kwargs=None), "chat_template")
    add("chat_template_null", C, chat([u(Q)], chat_template=None), "chat_template")
    add("documents", C, chat([u(Q)], documents=[{"title": "Paris", "text": "Paris is in France."}]), "chat_template")
    add("add_special_tokens_true", C, chat([u(Q)], add_special_tokens=True), "special_tokens")
    add("add_special_tokens_false", C, chat([u(Q)], add_special_tokens=False), "special_tokens")
    add("mm_processor_kwargs", C, chat([u(Q)], mm_processor_kwargs={"x": 1}), "edge")

    # --- sampling parameters and request fields
    add("sampling_params", C, chat([u(Q)], temperature=0.2, top_p=0.5, seed=7, n=2, stop=["END", "###"], logprobs=True, top_logprobs=3, max_completion_tokens=77, presence_penalty=0.5), "sampling")
    add("sampling_defaults_max_tokens", C, chat([u(Q)], max_tokens=64), "sampling")
    add("max_tokens_too_big", C, chat([u(Q)], max_tokens=MAX_LEN), "sampling", "invalid")
    add("max_tokens_zero", C, chat([u(Q)], max_tokens=0), "sampling", "invalid")
    add("skip_special_false", C, chat([u(Q)], skip_special_tokens=False), "sampling", "special_tokens")
    add("skip_special_false_tools", C, chat([u(Q)], tools=TOOLS, skip_special_tokens=False), "sampling", "special_tokens", "tools")
    add("skip_special_true_tools_none", C, chat([u(Q)], tools=TOOLS, tool_choice="none", skip_special_tokens=True), "sampling", "special_tokens", "tools")
    add("stop_token_ids", C, chat([u(Q)], stop_token_ids=[END_THINK, TOOL_CALLS], ignore_eos=True), "sampling")
    add("include_stop_str", C, chat([u(Q)], stop="###", include_stop_str_in_output=True), "sampling")
    add("min_tokens", C, chat([u(Q)], min_tokens=5, max_tokens=20), "sampling")
    add("penalties", C, chat([u(Q)], repetition_penalty=1.2, frequency_penalty=0.3, top_k=40, min_p=0.05), "sampling")
    add("bad_words", C, chat([u(Q)], bad_words=["rain", " storm"]), "sampling")
    add("logit_bias", C, chat([u(Q)], logit_bias={"1010": -100, "2000": 5}), "sampling")
    add("allowed_token_ids", C, chat([u(Q)], allowed_token_ids=[1010, 1011, 2]), "sampling")
    add("truncate_prompt_tokens", C, chat([u(Q)], truncate_prompt_tokens=5), "sampling")
    add("prompt_logprobs", C, chat([u(Q)], prompt_logprobs=2), "sampling")
    add("top_logprobs_no_logprobs", C, chat([u(Q)], top_logprobs=3), "sampling", "invalid")
    add("stream_usage", C, chat([u(Q)], stream=True, stream_options={"include_usage": True}, request_id="fixed-4"), "stream")
    add("request_id_cache_salt", C, chat([u(Q)], request_id="fixed-1", cache_salt="salt", priority=3), "request")
    add("return_token_ids", C, chat([u(Q)], return_token_ids=True, include_reasoning=False, parallel_tool_calls=False), "request")
    add("include_reasoning_false_tools", C, chat([u(Q)], tools=TOOLS, include_reasoning=False), "request", "tools")
    add("echo", C, chat([u(Q), a("Partial")], echo=True, add_generation_prompt=False, continue_final_message=True), "request", "continue")
    add("n_three_seed", C, chat([u(Q)], n=3, seed=1, temperature=1.0), "sampling")
    add("temperature_zero", C, chat([u(Q)], temperature=0.0), "sampling")
    add("user_field", C, chat([u(Q)], user="user-123", metadata={"k": "v"}), "request")

    # --- /v1/completions/render
    add("cmpl_string", P, cmpl("Once upon a time", max_tokens=16), "completion")
    add("cmpl_string_no_special", P, cmpl("Once upon a time", add_special_tokens=False), "completion", "special_tokens")
    add("cmpl_list", P, cmpl(["A", "Hello 你好，世界！🌤️"], request_id="fixed-5"), "completion")
    add("cmpl_token_ids", P, cmpl([1, 22177, 4304]), "completion")
    add("cmpl_token_ids_no_bos", P, cmpl([22177, 4304]), "completion")
    add("cmpl_token_id_lists", P, cmpl([[1, 2, 3], [22177]]), "completion")
    add("cmpl_special_ids", P, cmpl([1, 3, 22177, 4, 34, 35, 9, 32]), "completion", "special_tokens")
    add("cmpl_marker_text", P, cmpl("[INST] hi [/INST][THINK]x[/THINK]</s>"), "completion", "literal_markers")
    add("cmpl_cjk_emoji", P, cmpl("東京の天気は晴れ 🌦️ 👨‍👩‍👧"), "completion", "unicode")
    add("cmpl_leading_space", P, cmpl(" leading space"), "completion")
    add("cmpl_echo_stream", P, cmpl("x", echo=True, stream=True, stream_options={"include_usage": True}, logprobs=2, stop="\n"), "completion")
    add("cmpl_empty", P, cmpl(""), "completion", "invalid")
    add("cmpl_empty_list", P, cmpl([]), "completion", "invalid")
    add("cmpl_negative_ids", P, cmpl([1, -5]), "completion", "invalid")
    add("cmpl_out_of_vocab", P, cmpl([1, 131072]), "completion", "invalid")
    add("cmpl_suffix", P, cmpl("def f(", suffix="return 1"), "completion", "fim")
    add("cmpl_sampling", P, cmpl("Hello", temperature=0.3, top_k=5, n=2, seed=3, max_tokens=8, stop=["."], skip_special_tokens=False), "completion", "sampling")
    add("cmpl_max_tokens_too_big", P, cmpl("Hello", max_tokens=MAX_LEN), "completion", "invalid")
    add("cmpl_response_format", P, cmpl("Hello", response_format={"type": "json_object"}), "completion", "response_format")
    add("cmpl_unknown_model", P, {"model": "nope", "prompt": "x"}, "completion", "invalid")

    # --- /tokenize and /detokenize
    K, D = "/tokenize", "/detokenize"
    add("tok_text", K, {"model": MODEL, "prompt": "Hello world"}, "tokenize")
    add("tok_text_special_true", K, {"model": MODEL, "prompt": "Hello world", "add_special_tokens": True}, "tokenize", "special_tokens")
    add("tok_text_special_false", K, {"model": MODEL, "prompt": "Hello world", "add_special_tokens": False}, "tokenize", "special_tokens")
    add("tok_text_strs", K, {"model": MODEL, "prompt": "Café 東京 🌦️", "return_token_strs": True}, "tokenize", "unicode")
    add("tok_markers", K, {"model": MODEL, "prompt": "[THINK]x[/THINK][TOOL_CALLS]f[ARGS]{}</s>", "add_special_tokens": False, "return_token_strs": True}, "tokenize", "literal_markers")
    add("tok_empty", K, {"model": MODEL, "prompt": ""}, "tokenize", "edge")
    add("tok_empty_no_special", K, {"model": MODEL, "prompt": "", "add_special_tokens": False}, "tokenize", "edge")
    add("tok_chat", K, {"model": MODEL, "messages": [u(Q)]}, "tokenize", "chat")
    add("tok_chat_gen_prompt", K, {"model": MODEL, "messages": [u(Q)], "add_generation_prompt": True}, "tokenize", "chat")
    add("tok_chat_no_gen_prompt", K, {"model": MODEL, "messages": [u(Q)], "add_generation_prompt": False}, "tokenize", "chat")
    add("tok_chat_special_false", K, {"model": MODEL, "messages": [u(Q)], "add_special_tokens": False}, "tokenize", "chat", "special_tokens")
    add("tok_chat_tools", K, {"model": MODEL, "messages": [s("Be brief."), u(Q)], "tools": TOOLS, "return_token_strs": True}, "tokenize", "chat", "tools")
    add("tok_chat_continue", K, {"model": MODEL, "messages": [u(Q), a("Sure,")], "add_generation_prompt": False, "continue_final_message": True}, "tokenize", "chat", "continue")
    add("tok_chat_template", K, {"model": MODEL, "messages": [u(Q)], "chat_template": "{{ 'x' }}"}, "tokenize", "chat", "invalid")
    add("tok_chat_tool_history", K, {"model": MODEL, "messages": [u(Q), a(None, tool_calls=[tc(long_id)]), tr(long_id)], "tools": TOOLS}, "tokenize", "chat", "tool_history")
    add("tok_chat_invalid", K, {"model": MODEL, "messages": [u(Q), tr(short)]}, "tokenize", "chat", "invalid")
    add("detok_text", D, {"model": MODEL, "tokens": [22177, 4304]}, "detokenize")
    add("detok_bos", D, {"model": MODEL, "tokens": [1, 22177, 4304, 2]}, "detokenize", "special_tokens")
    add("detok_controls", D, {"model": MODEL, "tokens": [34, 22177, 35, 9, 1689, 1095, 45629, 32, 19227, 29363, 2811, 1429, 42572, 46005, 2]}, "detokenize", "special_tokens")
    add("detok_partial_utf8", D, {"model": MODEL, "tokens": [119685, 1140, 1166]}, "detokenize", "unicode")
    add("detok_empty", D, {"model": MODEL, "tokens": []}, "detokenize", "edge")
    add("detok_out_of_vocab", D, {"model": MODEL, "tokens": [131072]}, "detokenize", "invalid")
    add("detok_negative", D, {"model": MODEL, "tokens": [-1]}, "detokenize", "invalid")

    # --- /v1/responses/render and /v1/messages/render
    R, M = "/v1/responses/render", "/v1/messages/render"
    add("resp_input_string", R, {"model": MODEL, "input": Q}, "responses")
    add("resp_instructions", R, {"model": MODEL, "input": Q, "instructions": "Answer in French."}, "responses", "system")
    add("resp_input_items", R, {"model": MODEL, "input": [{"role": "user", "content": [{"type": "input_text", "text": Q}]}]}, "responses")
    add("resp_tools", R, {"model": MODEL, "input": Q, "tools": [{"type": "function", "name": "get_weather", "description": "Get the weather", "parameters": TOOLS[1]["function"]["parameters"]}]}, "responses", "tools")
    add("resp_tools_required", R, {"model": MODEL, "input": Q, "tool_choice": "required", "tools": [{"type": "function", "name": "get_weather", "parameters": TOOLS[1]["function"]["parameters"]}]}, "responses", "tools")
    add("resp_function_call_history", R, {"model": MODEL, "input": [
        {"role": "user", "content": Q},
        {"type": "function_call", "call_id": "call_abc123xyz", "name": "get_weather", "arguments": W},
        {"type": "function_call_output", "call_id": "call_abc123xyz", "output": "18C"},
    ], "tools": [{"type": "function", "name": "get_weather", "parameters": TOOLS[1]["function"]["parameters"]}]}, "responses", "tool_history")
    add("resp_reasoning_effort", R, {"model": MODEL, "input": Q, "reasoning": {"effort": "high"}}, "responses", "reasoning_effort")
    add("resp_reasoning_effort_low", R, {"model": MODEL, "input": Q, "reasoning": {"effort": "low"}}, "responses", "reasoning_effort")
    add("resp_text_format", R, {"model": MODEL, "input": Q, "text": {"format": {"type": "json_schema", "name": "a", "schema": SCHEMA}}}, "responses", "response_format")
    add("resp_max_output_tokens", R, {"model": MODEL, "input": Q, "max_output_tokens": 50, "temperature": 0.1}, "responses", "sampling")
    add("msg_simple", M, {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": Q}]}, "messages")
    add("msg_system", M, {"model": MODEL, "max_tokens": 64, "system": "Answer in French.", "messages": [{"role": "user", "content": Q}]}, "messages", "system")
    add("msg_tools", M, {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": Q}], "tools": [{"name": "get_weather", "description": "Get the weather", "input_schema": TOOLS[1]["function"]["parameters"]}]}, "messages", "tools")
    add("msg_tool_use_history", M, {"model": MODEL, "max_tokens": 64, "messages": [
        {"role": "user", "content": Q},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01ABCdef", "name": "get_weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01ABCdef", "content": "18C"}]},
    ], "tools": [{"name": "get_weather", "input_schema": TOOLS[1]["function"]["parameters"]}]}, "messages", "tool_history")
    add("msg_thinking", M, {"model": MODEL, "max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024}, "messages": [{"role": "user", "content": Q}]}, "messages", "reasoning")
    add("msg_tool_choice_any", M, {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": Q}], "tool_choice": {"type": "any"}, "tools": [{"name": "get_weather", "input_schema": TOOLS[1]["function"]["parameters"]}]}, "messages", "tools")
    add("msg_prefill", M, {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": Q}, {"role": "assistant", "content": "In Paris"}]}, "messages", "continue")

    if PROFILE != "magistral":
        # Where the instruct layouts differ from v13: [AVAILABLE_TOOLS] before the last [INST]
        # (v13: the first), tool results with and without call ids, think chunks.
        short = "abcDEF123"
        add("tools_multi_turn", C, chat([u("Hi"), a("Hello."), u(Q)], tools=WEATHER), "tools", "multi_turn")
        add("tools_multi_turn_system", C, chat([s("Be brief."), u("Hi"), a("Hello."), s("Answer in French."), u(Q)], tools=WEATHER), "tools", "multi_turn", "system")
        add("tool_history_two_rounds", C, chat([u(Q), a(None, tool_calls=[tc(short)]), tr(short), a("18C."), u("And Lyon?"), a(None, tool_calls=[tc("Z9y8X7w6V", "get_weather", '{"city": "Lyon"}')]), tr("Z9y8X7w6V", "20C")], tools=WEATHER), "tool_history", "multi_turn")
        add("tool_result_json_object", C, chat([u(Q), a(None, tool_calls=[tc(short)]), tr(short, '{"temp_c": 18}')], tools=WEATHER), "tool_history")
        add("tool_call_id_null", C, chat([u(Q), a(None, tool_calls=[tc("null")]), tr("null")], tools=WEATHER), "tool_history", "tool_id")
        add("assistant_thinking_part_last", C, chat([u(Q), a([{"type": "thinking", "thinking": "Hmm."}, {"type": "text", "text": "It is"}])], add_generation_prompt=False, continue_final_message=True), "reasoning_history", "continue")
    return out


# ---------------------------------------------------------------------------


def find_model_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    return DEFAULT_MODEL_DIR


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vllm", required=True, help="base URL of the running `vllm launch render`")
    ap.add_argument("--config", default="magistral", choices=["magistral", *PROFILES], help="the config (profile) to record; default magistral")
    ap.add_argument("--model-dir", help="the config's model dir (tekken.json); default: tests/models/<config>")
    ap.add_argument("--out", default=str(HERE / "goldens"))
    ap.add_argument("--only", choices=["all", "derender", "render", "reask"], default="all", help="record only one part (for trying things out)")
    args = ap.parse_args(argv)
    use_profile(args.config)
    rec = Recorder(args.vllm, Tok(find_model_dir(args.model_dir)))
    if args.only in ("all", "derender"):
        for name, (_, _, tools, _) in SCENARIOS.items():
            base = TOOL_BATCH if tools else ALL_SCENARIO_BATCH
            for v in base + EXTRA_BATCH.get(name, []):
                rec.batch(name, v)
        for name, (_, _, tools, _) in SCENARIOS.items():
            v0 = "tools_auto" if tools else "base"
            runs = [(v0, "tok1"), (v0, "tok3"), (v0, "rand"), (v0, "all")] + EXTRA_STREAMS.get(name, [])
            for v, ch in runs:
                rec.stream(name, v, ch)
    if args.only in ("all", "render"):
        for name, endpoint, body, tags in render_cases():
            rec.render(name, endpoint, body, tags)
    if args.only in ("all", "reask"):
        # The qwen3_hermes goldens' completion, error and render cases, re-asked.
        with gzip.open(HERE / "goldens" / "qwen3_hermes.jsonl.gz", "rt", encoding="utf-8") as f:
            source = [json.loads(line) for line in f if line.strip()]
        for case in source:
            if case["kind"] in ("error", "render") or "completion" in case.get("tags", []):
                out = record_family.rerecord(rec.client, case, "qwen3_hermes", CONFIG, ("qwen3", MODEL), {})
                n = len(rec.cases) + 1
                out["id"] = f"{CONFIG}/dev/{case['kind']}/{n:04d}-" + case["id"].split("-", 1)[1]
                rec.cases.append(out)
    path = Path(args.out) / f"{CONFIG}.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for case in rec.cases:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    kinds: dict[str, int] = {}
    for c in rec.cases:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    print(f"{CONFIG}: {len(rec.cases)} cases {kinds} -> {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
