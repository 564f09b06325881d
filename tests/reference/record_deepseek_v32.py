"""Record the deepseek_v32 (DeepSeek-V3.2 tokenizer mode) golden corpus from a live vLLM 0.33.0.

The `deepseek_v32` config serves DeepSeek-V3's vocabulary under a DeepSeek-V3.2
config.json (architecture DeepseekV32ForCausalLM), for which vLLM's
`--tokenizer-mode auto` picks its `deepseek_v32` mode: prompts are written by
DeepSeek's Python encoder (vllm/tokenizers/deepseek_v32_encoding.py, not a
Jinja template), the `deepseek_v32` tool parser (a ParserEngine) reads DSML
calls and the `deepseek_v3` reasoning parser splits `reasoning</think>content`
when chat_template_kwargs thinking / enable_thinking is true (the prompt then
ends in `<think>`; otherwise in `</think>` and the output is all content).
What the model generates after the prompt (tests/models/deepseek_v32/ENCODER.md):

    reasoning</think>content<｜end▁of▁sentence｜>                      (thinking)
    content\\n\\n<｜DSML｜function_calls>\\n<｜DSML｜invoke name="get_weather">\\n
    <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\\n
    </｜DSML｜invoke>\\n</｜DSML｜function_calls><｜end▁of▁sentence｜>

Each scenario (SCENARIOS: the output text, tags, whether the request carries
tools, the finish reason, thinking on or off) is sent as a batch derender
under several request variants and as streams under several chunkings (tok1,
tok3, seeded rand 1-7, all, finish_only, usage, cont_usage, logprobs,
return_ids, n2), each stream with the stream_state vLLM returned carried to
the next call (replay.PREV_STATE) and a `batch_equivalent`, as
record_mistral.py does. Prompt ids are vLLM's own /v1/chat/completions/render
answer for the chat request; output ids are the text encoded by the fixture's
tokenizer.json (`tokenizers`, add_special_tokens=False: `</think>` 128799 and
`<｜end▁of▁sentence｜>` 1 are added tokens, DSML markup is ordinary text).
Scenarios named `vllm_*` are the model outputs of vLLM's own parser tests
(vllm-project/vllm tests/tool_parsers/test_deepseekv32_tool_parser.py).

Then the render cases (RENDER_CASES: the encoder's branches, tools, tool
history, reasoning in history, thinking on/off, continue_final_message,
response_format, chat_template(_kwargs), refused messages, completions
prompts, /tokenize, /detokenize, /v1/responses/render, /v1/messages/render):
one call each, kind `render` when vLLM answers 200 and `error` otherwise.
Last, the qwen3_hermes goldens' completion, error and render cases are
re-asked as record_family.py does (served name swapped).

    cd /tmp && VLLM_TARGET_DEVICE=cpu vllm launch render <tests/models/deepseek_v32, unpacked> \\
      --port P --served-model-name deepseek_v32 --tool-call-parser deepseek_v32 \\
      --enable-auto-tool-choice --reasoning-parser deepseek_v3
    <python with tokenizers> tests/reference/record_deepseek_v32.py --vllm http://127.0.0.1:P

writes <--out>/deepseek_v32.jsonl.gz (default tests/reference/goldens).
"""

from __future__ import annotations

import argparse
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
    record_derender,
    reask_qwen3_hermes,
    s,
    tc,
    tr,
    u,
    write_cases,
)

CONFIG = "deepseek_v32"
MODEL = "deepseek_v32"
BOS, EOS, THINK, END_THINK, USER, ASSISTANT = 0, 1, 128798, 128799, 128803, 128804
DEFAULT_MODEL_DIR = HERE.parent / "models" / "deepseek_v32"


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
            "weight": {"type": "number"},
        },
        "Create a calendar event",
        ["title"],
    ),
    fn("get_time", {}, "Current time"),
    # the schemas of vLLM's test_deepseekv32_tool_parser.py
    fn("toggle", {"enabled": {"type": "boolean"}, "count": {"type": "integer"}}),
    fn("score", {"value": {"type": "integer"}}),
    fn(
        "set_timer",
        {
            "wait": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"type": {"const": "until"}, "date": {"type": "string"}},
                    },
                    {
                        "type": "object",
                        "properties": {"type": {"const": "for"}, "minutes": {"type": "number"}},
                    },
                ]
            },
            "patches": {
                "oneOf": [{"type": "array", "items": {"type": "object"}}, {"type": "null"}]
            },
        },
    ),
    fn("update", {"tags": {"type": "array"}, "meta": {"type": "object"}}),
    fn("measure", {"ratio": {"type": "number"}, "whole": {"type": "number"}}),
    fn("set_val", {"count": {"type": ["integer", "null"]}, "label": {"type": ["string", "null"]}}),
    fn("clear", {"value": {"type": ["integer", "null"]}}),
    fn("echo", {"text": {"type": "string"}}),
    fn(
        "coerce",
        {
            "union_value": {"type": ["null", "string"]},
            "bad_int": {"type": "integer"},
            "nullable_string": {"type": ["null", "string"]},
            "null_string": {"type": "string"},
            "whole_number": {"type": "number"},
        },
    ),
    fn("add", {"x": {"type": "integer"}, "y": {"type": "integer"}}),
]

USERS = [
    "Explain TCP handshakes briefly.",
    "What's the weather like in Paris?",
    "用中文解释一下the water cycle。",
    "Can you help me plan a trip to Nairobi? 🙂",
]

# Markup
ET, E = "</think>", "<｜end▁of▁sentence｜>"
D = "｜DSML｜"
FC, FCE = f"<{D}function_calls>", f"</{D}function_calls>"
INV, INVE = f'<{D}invoke name="', f"</{D}invoke>"
PS, PE = f'<{D}parameter name="', f"</{D}parameter>"


def param(k: str, v: object, is_str: str | None = None) -> str:
    """One parameter as the encoder writes it (encode_arguments_to_dsml)."""
    if is_str is None:
        is_str = "true" if isinstance(v, str) else "false"
        v = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return f'{PS}{k}" string="{is_str}">{v}{PE}'


def invoke(name: str, args: dict | None = None, raw: str | None = None) -> str:
    body = raw if raw is not None else "\n".join(param(k, v) for k, v in (args or {}).items())
    return f'{INV}{name}">\n{body}\n{INVE}'


def block(*invokes: str) -> str:
    """A call block as the encoder writes it in history (assistant_msg_template: '\\n\\n' first)."""
    return "\n\n" + FC + "\n" + "\n".join(invokes) + "\n" + FCE


def vllm_call(name: str, params: str) -> str:
    """vLLM's test outputs: FC_START\\nINV_START name\\">\\n{params}\\n{INV_END}\\n{FC_END} (build_tool_call)."""
    return f'{FC}\n{INV}{name}">\n{params}\n{INVE}\n{FCE}'


def vp(k: str, v: str, s: str = "true") -> str:
    return f'{PS}{k}" string="{s}">{v}{PE}'


THINKING = "The user asks about the weather in Paris. I should call get_weather with city Paris."
LONG_THINK = (
    "We need to explain the water cycle in Chinese.\n\n"
    "Key steps:\n1. Evaporation\n2. Condensation\n3. Precipitation\n4. Collection\n\n"
    "Let's write a short answer with **bold** headings and an emoji 💧."
)
W = block(invoke("get_weather", {"city": "Paris"}))
NESTED = block(
    invoke(
        "create_event",
        {
            "title": "Café ☕ sync 🎉",
            "when": {"date": "2026-01-16", "hour": 9},
            "attendees": ["Zoë", "李雷", "👩🏽‍💻 dev"],
            "private": False,
            "weight": 1.5,
        },
    )
)

# name -> (text, tags, tools?, finish_reason, thinking?)
SCENARIOS: dict[str, tuple[str, list[str], bool, str, bool]] = {
    "content_only": (
        "Paris is the capital of France, known for its museums and cafés." + E,
        ["content"],
        False,
        "stop",
        False,
    ),
    "think_content": (
        "User wants a brief explanation. Keep it short."
        + ET
        + "A TCP handshake is SYN, SYN-ACK, ACK."
        + E,
        ["reasoning", "content"],
        False,
        "stop",
        True,
    ),
    "think_long_cjk": (
        LONG_THINK + ET + "水循环包括：\n\n- **蒸发**\n- **凝结**\n- **降水** 🌧️\n- **汇集**" + E,
        ["reasoning", "content", "cjk", "emoji", "markdown"],
        False,
        "stop",
        True,
    ),
    "think_empty": (ET + "Hi there!" + E, ["reasoning", "empty_reasoning"], False, "stop", True),
    "think_content_empty": (
        "Nothing to say." + ET + E,
        ["reasoning", "empty_content"],
        False,
        "stop",
        True,
    ),
    "think_newlines": (
        "\n\nThink with blank lines.\n\n" + ET + "\n\nAnswer after newlines.\n" + E,
        ["reasoning", "whitespace"],
        False,
        "stop",
        True,
    ),
    "think_truncated": (
        "The user asks about TCP. A handshake has three steps: SYN, then SYN-ACK, then",
        ["reasoning", "unclosed", "truncated", "finish_length"],
        False,
        "length",
        True,
    ),
    "think_unclosed_eos": (
        "Thinking that never closes." + E,
        ["reasoning", "unclosed"],
        False,
        "stop",
        True,
    ),
    "think_content_truncated": (
        "Short answer."
        + ET
        + "A TCP handshake opens a connection in three steps: the client sends",
        ["reasoning", "content", "truncated", "finish_length"],
        False,
        "length",
        True,
    ),
    "think_no_eos": (
        "Short." + ET + "Done without an end token.",
        ["reasoning", "content", "no_eos"],
        False,
        "stop",
        True,
    ),
    "think_open_tag_again": (
        "<think>Opened again" + ET + "Answer." + E,
        ["reasoning", "double_think"],
        False,
        "stop",
        True,
    ),
    "think_double_end": (
        "first" + ET + "middle" + ET + "Answer." + E,
        ["reasoning", "double_end"],
        False,
        "stop",
        True,
    ),
    "content_no_eos": ("Plain answer, no end token.", ["content", "no_eos"], False, "stop", False),
    "chat_stray_end_think": (
        "Answer first." + ET + " then more text." + E,
        ["stray_end_think"],
        False,
        "stop",
        False,
    ),
    "chat_think_tags": (
        "<think>plain text tags" + ET + "Answer." + E,
        ["think_tags_chat"],
        False,
        "stop",
        False,
    ),
    "special_inside": (
        "Plan <｜User｜> here." + ET + "a<｜Assistant｜>b <｜begin▁of▁sentence｜> c<|EOT|>d" + E,
        ["special_tokens"],
        False,
        "stop",
        True,
    ),
    "literal_markers_text": (
        "Text that spells <|DSML|function_calls> and |DSML| with ASCII bars." + E,
        ["literal_markers"],
        False,
        "stop",
        False,
    ),
    "emoji_split": (
        "Flags 🇫🇷🇯🇵, family 👨‍👩‍👧‍👦, skin 👍🏽."
        + ET
        + "Weather: 🌦️ then ☀️; kiss 💏🏻; 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ok."
        + E,
        ["emoji", "incremental_detok"],
        False,
        "stop",
        True,
    ),
    "cjk_emoji_tail": (
        "水循环 🌧️" + E,
        ["content", "cjk", "emoji", "incremental_detok"],
        False,
        "stop",
        False,
    ),
    "stop_string": (
        "Plan ### inside." + ET + "Here is the answer ### and more." + E,
        ["reasoning", "content", "stop_string"],
        False,
        "stop",
        True,
    ),
    "json_content": (
        '{"answer": 42, "unit": "none"}' + E,
        ["content", "structured"],
        False,
        "stop",
        False,
    ),
    "eos_then_text": (
        "Done." + ET + "Answer." + E + "after eos" + E,
        ["eos_inside"],
        False,
        "stop",
        True,
    ),
    # tool calls, as the encoder writes them
    "tool_call_only": (W.lstrip("\n") + E, ["tool_call"], True, "stop", False),
    "tool_call_newlines_first": (W + E, ["tool_call", "whitespace_before"], True, "stop", False),
    "tool_think_call": (THINKING + ET + W + E, ["tool_call", "reasoning"], True, "stop", True),
    "tool_content_then_call": (
        "Let me check the weather for you." + W + E,
        ["tool_call", "text_before"],
        True,
        "stop",
        False,
    ),
    "tool_think_content_call": (
        THINKING + ET + "Sure, checking now." + W + E,
        ["tool_call", "reasoning", "text_before"],
        True,
        "stop",
        True,
    ),
    "tool_parallel": (
        block(
            invoke("get_weather", {"city": "Paris"}),
            invoke("search_web", {"query": "Paris events", "top_k": 2}),
        )
        + E,
        ["tool_call", "parallel"],
        True,
        "stop",
        False,
    ),
    "tool_parallel_three": (
        "Checking."
        + block(
            invoke("get_weather", {"city": "Paris"}),
            invoke("get_weather", {"city": "Lyon", "unit": "fahrenheit"}),
            invoke("get_time"),
        )
        + E,
        ["tool_call", "parallel", "empty_args"],
        True,
        "stop",
        False,
    ),
    "tool_nested_unicode": (
        "Create the event." + ET + NESTED + E,
        ["tool_call", "nested_args", "unicode", "emoji", "reasoning"],
        True,
        "stop",
        True,
    ),
    "tool_typed_scalars": (
        block(
            invoke(
                "create_event",
                raw="\n".join(
                    [
                        param("title", "42", "true"),
                        param("private", "true", "false"),
                        param("weight", "2.50", "false"),
                        param("attendees", "null", "false"),
                    ]
                ),
            )
        )
        + E,
        ["tool_call", "typed_params"],
        True,
        "stop",
        False,
    ),
    "tool_string_false_not_json": (
        block(
            invoke(
                "search_web",
                raw=param("query", "cafés near me", "false")
                + "\n"
                + param("top_k", "three", "false"),
            )
        )
        + E,
        ["tool_call", "typed_params", "not_json"],
        True,
        "stop",
        False,
    ),
    "tool_string_true_int": (
        block(
            invoke(
                "search_web", raw=param("query", "x", "true") + "\n" + param("top_k", "7", "true")
            )
        )
        + E,
        ["tool_call", "typed_params", "schema_coerce"],
        True,
        "stop",
        False,
    ),
    "tool_no_string_attr": (
        block(invoke("search_web", raw=f'{PS}query">no attr{PE}\n{PS}top_k">5{PE}')) + E,
        ["tool_call", "typed_params", "no_string_attr"],
        True,
        "stop",
        False,
    ),
    "tool_multiline_value": (
        block(
            invoke("search_web", {"query": 'line one\nline <two> & "three"\n\n  indented </b> ok'})
        )
        + E,
        ["tool_call", "multiline", "markup_in_value"],
        True,
        "stop",
        False,
    ),
    "tool_value_gt": (
        block(invoke("search_web", {"query": 'a > b and c >= d; x=">"'})) + E,
        ["tool_call", "structural_chars"],
        True,
        "stop",
        False,
    ),
    "tool_value_json_string": (
        block(invoke("search_web", {"query": '{"not": "parsed"}'})) + E,
        ["tool_call", "typed_params"],
        True,
        "stop",
        False,
    ),
    "tool_text_after": (
        W + "\n\nI have called the tool." + E,
        ["tool_call", "text_after"],
        True,
        "stop",
        False,
    ),
    "tool_two_blocks": (
        W + "\nAnd one more." + block(invoke("get_time")) + E,
        ["tool_call", "two_blocks", "text_between"],
        True,
        "stop",
        False,
    ),
    "tool_truncated_args": (
        THINKING
        + ET
        + "\n\n"
        + FC
        + "\n"
        + INV
        + 'get_weather">\n'
        + PS
        + 'city" string="true">Pa',
        ["tool_call", "truncated", "finish_length", "reasoning"],
        True,
        "length",
        True,
    ),
    "tool_truncated_param_head": (
        "\n\n" + FC + "\n" + INV + 'search_web">\n' + PS + 'query" str',
        ["tool_call", "truncated", "finish_length"],
        True,
        "length",
        False,
    ),
    "tool_truncated_name": (
        "\n\n" + FC + "\n" + INV + "get_wea",
        ["tool_call", "truncated", "finish_length"],
        True,
        "length",
        False,
    ),
    "tool_truncated_after_open": (
        "Calling now." + "\n\n" + FC + "\n",
        ["tool_call", "truncated", "finish_length"],
        True,
        "length",
        False,
    ),
    "tool_truncated_json_value": (
        "\n\n"
        + FC
        + "\n"
        + INV
        + 'create_event">\n'
        + param("title", "T")
        + "\n"
        + PS
        + 'when" string="false">{"date": "2026-',
        ["tool_call", "truncated", "finish_length", "typed_params"],
        True,
        "length",
        False,
    ),
    "tool_no_block_end": (W.rsplit(FCE, 1)[0] + E, ["tool_call", "unclosed"], True, "stop", False),
    "tool_no_invoke_end": (
        "\n\n" + FC + "\n" + INV + 'get_weather">\n' + param("city", "Paris") + "\n" + FCE + E,
        ["tool_call", "malformed"],
        True,
        "stop",
        False,
    ),
    "tool_no_param_close": (
        block(
            invoke("search_web", raw=f'{PS}query" string="true">first{PS}top_k" string="false">4')
        )
        + E,
        ["tool_call", "malformed"],
        True,
        "stop",
        False,
    ),
    "tool_dup_param": (
        block(invoke("get_weather", raw=param("city", "Paris") + "\n" + param("city", "Lyon"))) + E,
        ["tool_call", "duplicate_param"],
        True,
        "stop",
        False,
    ),
    "tool_unknown_name": (
        block(invoke("book_flight", {"to": "CDG", "seats": 2})) + E,
        ["tool_call", "unknown_tool"],
        True,
        "stop",
        False,
    ),
    "tool_empty_args": (
        block(invoke("get_time")) + E,
        ["tool_call", "empty_args"],
        True,
        "stop",
        False,
    ),
    "tool_compact": (
        FC + INV + 'get_weather">' + param("city", "Paris") + INVE + FCE + E,
        ["tool_call", "no_newlines"],
        True,
        "stop",
        False,
    ),
    "tool_bare_invoke": (
        "Here: " + invoke("get_weather", {"city": "Paris"}) + " done." + E,
        ["tool_call", "no_block"],
        True,
        "stop",
        False,
    ),
    "tool_v4_spelling": (
        "\n\n"
        + f"<{D}tool_calls>\n"
        + invoke("get_weather", {"city": "Paris"})
        + f"\n</{D}tool_calls>"
        + E,
        ["tool_call", "v4_wrapper"],
        True,
        "stop",
        False,
    ),
    "tool_ascii_bars": (
        '\n\n<|DSML|function_calls>\n<|DSML|invoke name="get_weather">\n<|DSML|parameter name="city" string="true">Paris</|DSML|parameter>\n</|DSML|invoke>\n</|DSML|function_calls>'
        + E,
        ["tool_call", "ascii_bars"],
        True,
        "stop",
        False,
    ),
    "tool_wrapper_arguments": (
        block(invoke("get_weather", raw=param("arguments", {"city": "Beijing"}))) + E,
        ["tool_call", "wrapper"],
        True,
        "stop",
        False,
    ),
    "tool_wrapper_input_string": (
        block(invoke("get_weather", raw=param("input", '{"city": "Beijing"}', "true"))) + E,
        ["tool_call", "wrapper"],
        True,
        "stop",
        False,
    ),
    "tool_wrapper_not_subset": (
        block(invoke("get_weather", raw=param("arguments", {"town": "Beijing"}))) + E,
        ["tool_call", "wrapper"],
        True,
        "stop",
        False,
    ),
    "tool_in_reasoning": (
        "I will call the tool now" + W + ET + "Done." + E,
        ["tool_call", "reasoning", "call_in_reasoning"],
        True,
        "stop",
        True,
    ),
    "tool_think_unclosed_call": (
        "I will call the tool now" + W + E,
        ["tool_call", "reasoning", "unclosed"],
        True,
        "stop",
        True,
    ),
    "tool_think_after_call": (
        W + "<think>after</think>tail" + E,
        ["tool_call", "late_think"],
        True,
        "stop",
        False,
    ),
    "tool_name_spaces": (
        block(invoke(" get_weather ", {"city": "Paris"})) + E,
        ["tool_call", "name_space"],
        True,
        "stop",
        False,
    ),
    "tool_empty_name": (
        block(invoke("", {"city": "Paris"})) + E,
        ["tool_call", "empty_name"],
        True,
        "stop",
        False,
    ),
    "tool_no_eos": (W, ["tool_call", "no_eos"], True, "stop", False),
    "tool_special_inside": (
        "Hi <｜begin▁of▁sentence｜> there <｜User｜> x<|EOT|>." + W + E,
        ["tool_call", "special_tokens", "text_before"],
        True,
        "stop",
        False,
    ),
    "tool_eos_inside": (
        "Before" + E + "after" + block(invoke("search_web", {"query": "a" + E + "b"})) + E,
        ["tool_call", "special_tokens", "eos_inside"],
        True,
        "stop",
        False,
    ),
    "tool_after_thinking_result": (
        "The result says 18C." + ET + "It is 18°C in Paris." + E,
        ["reasoning", "content", "tools_unused"],
        True,
        "stop",
        True,
    ),
    "tools_plain_answer": (
        "No tool needed." + ET + "TCP opens with SYN, SYN-ACK, ACK." + E,
        ["reasoning", "content", "tools_unused"],
        True,
        "stop",
        True,
    ),
    "tools_content_only": (
        "I can answer directly: it is sunny." + E,
        ["content", "tools_unused"],
        True,
        "stop",
        False,
    ),
    # the model outputs of vLLM's tests/tool_parsers/test_deepseekv32_tool_parser.py
    "vllm_no_tool_call": ("just some text" + E, ["content", "vllm_test"], True, "stop", False),
    "vllm_single_no_params": (
        f'{FC}\n{INV}get_time">\n{INVE}\n{FCE}' + E,
        ["tool_call", "vllm_test", "empty_args"],
        True,
        "stop",
        False,
    ),
    "vllm_single_with_params": (
        vllm_call("get_weather", vp("location", "SF") + vp("date", "2024-01-16")) + E,
        ["tool_call", "vllm_test"],
        True,
        "stop",
        False,
    ),
    "vllm_content_before": (
        "Sure, let me check! " + vllm_call("get_weather", vp("location", "NYC")) + E,
        ["tool_call", "vllm_test", "text_before"],
        True,
        "stop",
        False,
    ),
    "vllm_multiple": (
        f"{FC}\n"
        + f'{INV}get_weather">\n'
        + vp("location", "SF")
        + f"\n{INVE}\n"
        + f'{INV}get_weather">\n'
        + vp("location", "NYC")
        + f"\n{INVE}\n{FCE}"
        + E,
        ["tool_call", "vllm_test", "parallel"],
        True,
        "stop",
        False,
    ),
    "vllm_type_conversion": (
        vllm_call("toggle", vp("enabled", "true", "false") + "\n" + vp("count", "42", "false")) + E,
        ["tool_call", "vllm_test", "typed_params"],
        True,
        "stop",
        False,
    ),
    "vllm_string_true_coerced": (
        vllm_call("score", vp("value", "42")) + E,
        ["tool_call", "vllm_test", "schema_coerce"],
        True,
        "stop",
        False,
    ),
    "vllm_composed_schema": (
        vllm_call(
            "set_timer",
            vp("wait", '{"type":"for","minutes":2880}', "false")
            + "\n"
            + vp("patches", '[{"op":"replace","path":"/schedule","value":"quiet"}]', "false"),
        )
        + E,
        ["tool_call", "vllm_test", "typed_params"],
        True,
        "stop",
        False,
    ),
    "vllm_composed_string_true": (
        vllm_call("set_timer", vp("wait", '{"type":"for","minutes":2880}')) + E,
        ["tool_call", "vllm_test", "schema_coerce"],
        True,
        "stop",
        False,
    ),
    "vllm_arguments_wrapper": (
        vllm_call("get_weather", vp("arguments", '{"city":"Beijing"}', "false")) + E,
        ["tool_call", "vllm_test", "wrapper"],
        True,
        "stop",
        False,
    ),
    "vllm_object_array": (
        vllm_call(
            "update", vp("tags", '["a", "b"]', "false") + "\n" + vp("meta", '{"k": 1}', "false")
        )
        + E,
        ["tool_call", "vllm_test", "typed_params"],
        True,
        "stop",
        False,
    ),
    "vllm_number": (
        vllm_call("measure", vp("ratio", "3.14", "false") + "\n" + vp("whole", "5.0", "false")) + E,
        ["tool_call", "vllm_test", "typed_params"],
        True,
        "stop",
        False,
    ),
    "vllm_multi_typed": (
        vllm_call("set_val", vp("count", "42", "false") + "\n" + vp("label", "hello", "false")) + E,
        ["tool_call", "vllm_test", "typed_params"],
        True,
        "stop",
        False,
    ),
    "vllm_null_value": (
        vllm_call("clear", vp("value", "null", "false")) + E,
        ["tool_call", "vllm_test", "typed_params"],
        True,
        "stop",
        False,
    ),
    "vllm_null_to_string": (
        vllm_call("echo", vp("text", "null", "false")) + E,
        ["tool_call", "vllm_test", "schema_coerce"],
        True,
        "stop",
        False,
    ),
    "vllm_no_schema": (
        vllm_call("unknown_fn", vp("count", "42", "false") + "\n" + vp("flag", "true", "false"))
        + E,
        ["tool_call", "vllm_test", "unknown_tool"],
        True,
        "stop",
        False,
    ),
    "vllm_add": (
        vllm_call("add", vp("x", "3", "false") + "\n" + vp("y", "4", "false")) + E,
        ["tool_call", "vllm_test", "typed_params"],
        True,
        "stop",
        False,
    ),
    "vllm_fallbacks": (
        vllm_call(
            "coerce",
            "\n".join(
                [
                    vp("union_value", "hello", "false"),
                    vp("bad_int", "abc", "false"),
                    vp("nullable_string", "null", "false"),
                    vp("null_string", "null", "false"),
                    vp("whole_number", "3.0", "false"),
                ]
            ),
        )
        + E,
        ["tool_call", "vllm_test", "typed_params"],
        True,
        "stop",
        False,
    ),
    "vllm_two_funcs": (
        f"{FC}\n"
        + f'{INV}func_a">\n'
        + vp("p", "v1")
        + f"\n{INVE}\n"
        + f'{INV}func_b">\n'
        + vp("q", "v2")
        + f"\n{INVE}\n{FCE}"
        + E,
        ["tool_call", "vllm_test", "parallel", "unknown_tool"],
        True,
        "stop",
        False,
    ),
}

# Batch variants: chat_request edits.
NAMED = {"type": "function", "function": {"name": "get_weather"}}
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
    "flip": {},  # thinking scenarios without thinking, chat scenarios with it
    "enable_thinking": {"chat_template_kwargs": {"enable_thinking": True}},
    "thinking_false": {"chat_template_kwargs": {"thinking": False}},
    "effort_high": {"reasoning_effort": "high"},
    "json_schema": {
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "a",
                "schema": {"type": "object", "properties": {"answer": {"type": "integer"}}},
            },
        }
    },
    "json_object": {"response_format": {"type": "json_object"}},
    "spaces_special": {"skip_special_tokens": False, "spaces_between_special_tokens": False},
}

ALL_SCENARIO_BATCH = ["base", "no_reasoning", "keep_special", "flip"]
TOOL_BATCH = [
    "tools_auto",
    "tools_none",
    "tools_required",
    "tools_named",
    "no_tools",
    "no_reasoning",
    "keep_special",
    "flip",
]
EXTRA_BATCH = {
    "content_only": [
        "logprobs",
        "logprobs_unrequested",
        "return_ids",
        "n2",
        "no_chat_request",
        "model_omitted",
        "skip_special",
        "ignore_eos",
        "enable_thinking",
    ],
    "think_content": [
        "logprobs",
        "n2",
        "prompt_ids",
        "gen_prompt_ids_only",
        "no_prompt_tokens",
        "enable_thinking",
        "thinking_false",
        "effort_high",
        "skip_special",
        "ignore_eos",
        "stop_tok",
        "spaces_special",
        "no_chat_request",
    ],
    "think_long_cjk": ["logprobs", "return_ids", "model_omitted"],
    "think_truncated": ["logprobs", "return_ids", "no_prompt_tokens"],
    "think_unclosed_eos": ["skip_special", "enable_thinking"],
    "think_content_truncated": ["logprobs", "n2"],
    "special_inside": ["skip_special", "prompt_ids", "spaces_special"],
    "emoji_split": ["logprobs", "return_ids"],
    "stop_string": ["stop", "stop_include", "logprobs", "stop_tok"],
    "json_content": ["json_schema", "json_object"],
    "eos_then_text": ["ignore_eos", "skip_special"],
    "chat_stray_end_think": ["skip_special", "enable_thinking"],
    "tool_think_call": [
        "tools_default",
        "no_parallel",
        "logprobs",
        "return_ids",
        "n2",
        "skip_special",
        "enable_thinking",
        "stop_tok",
        "spaces_special",
        "no_chat_request",
    ],
    "tool_parallel": ["no_parallel", "logprobs", "tools_default", "n2"],
    "tool_parallel_three": ["no_parallel", "skip_special"],
    "tool_nested_unicode": ["tools_default", "return_ids", "logprobs"],
    "tool_truncated_args": ["logprobs", "return_ids"],
    "tool_unknown_name": ["tools_default"],
    "tools_plain_answer": ["tools_default", "json_schema"],
    "tool_call_only": [
        "tools_default",
        "skip_special",
        "ignore_eos",
        "no_chat_request",
        "json_object",
    ],
    "tool_content_then_call": ["tools_default", "n2"],
    "tool_special_inside": ["skip_special", "spaces_special"],
    "tool_eos_inside": ["ignore_eos", "skip_special"],
}

# Stream runs: (variant, chunking) per scenario; every scenario gets tok1/tok3/rand/all under its base.
EXTRA_STREAMS = {
    "content_only": [
        ("base", "finish_only"),
        ("base", "usage"),
        ("base", "logprobs"),
        ("base", "return_ids"),
        ("base", "n2"),
        ("flip", "tok1"),
    ],
    "think_content": [
        ("no_reasoning", "tok1"),
        ("keep_special", "tok3"),
        ("base", "cont_usage"),
        ("base", "logprobs"),
        ("base", "n2"),
        ("no_reasoning", "logprobs"),
        ("skip_special", "tok1"),
        ("flip", "tok1"),
        ("enable_thinking", "rand"),
    ],
    "think_long_cjk": [("base", "usage"), ("no_reasoning", "rand")],
    "think_truncated": [("base", "finish_only"), ("no_reasoning", "tok1")],
    "think_content_truncated": [("base", "finish_only"), ("base", "n2")],
    "emoji_split": [("keep_special", "tok1"), ("base", "logprobs")],
    "cjk_emoji_tail": [("no_reasoning", "tok1")],
    "stop_string": [("stop_tok", "tok1"), ("stop_include", "rand"), ("stop", "tok1")],
    "eos_then_text": [("ignore_eos", "tok1")],
    "special_inside": [("keep_special", "tok1"), ("skip_special", "rand")],
    "chat_stray_end_think": [("flip", "tok1")],
    "tool_think_call": [
        ("no_reasoning", "tok1"),
        ("tools_required", "tok1"),
        ("tools_named", "rand"),
        ("tools_none", "tok1"),
        ("no_tools", "tok1"),
        ("keep_special", "tok1"),
        ("tools_auto", "finish_only"),
        ("tools_auto", "usage"),
        ("tools_auto", "logprobs"),
        ("tools_auto", "return_ids"),
        ("flip", "tok1"),
    ],
    "tool_call_only": [
        ("tools_required", "tok1"),
        ("tools_named", "tok3"),
        ("tools_none", "rand"),
        ("flip", "tok1"),
    ],
    "tool_parallel": [
        ("no_parallel", "tok1"),
        ("tools_auto", "n2"),
        ("tools_none", "rand"),
        ("keep_special", "tok3"),
        ("tools_required", "rand"),
    ],
    "tool_parallel_three": [("tools_auto", "n2"), ("tools_required", "tok1")],
    "tool_content_then_call": [
        ("no_reasoning", "tok1"),
        ("keep_special", "tok1"),
        ("tools_required", "tok1"),
    ],
    "tool_truncated_args": [("tools_auto", "finish_only")],
    "tool_nested_unicode": [
        ("tools_required", "rand"),
        ("keep_special", "rand"),
        ("tools_named", "tok1"),
    ],
    "tool_in_reasoning": [("no_reasoning", "tok1"), ("flip", "tok1")],
    "tool_call_newlines_first": [("keep_special", "tok1")],
    "tool_typed_scalars": [("tools_required", "tok1")],
    "tool_text_after": [("tools_required", "tok1")],
    "tools_content_only": [("tools_required", "tok1"), ("tools_named", "tok1")],
    "tool_special_inside": [("keep_special", "tok1"), ("skip_special", "tok1")],
    "tool_eos_inside": [("ignore_eos", "tok1"), ("ignore_eos", "rand")],
}


def _thinking_kwargs(thinking: bool) -> dict | None:
    return {"thinking": True} if thinking else None


def _second(tools: bool, thinking: bool) -> str:
    """The n=2 second answer."""
    if tools:
        return block(invoke("get_time")).lstrip("\n") + E
    return ("Other." + ET if thinking else "") + "A second, different answer." + E


FAMILY = Family(
    config=CONFIG,
    model=MODEL,
    scenarios=SCENARIOS,
    variants=VARIANTS,
    users=USERS,
    tools=TOOLS,
    thinking_kwargs=_thinking_kwargs,
    second=_second,
    stop_tok=END_THINK,
    render_tag="deepseek_v32_encoder",
    all_scenario_batch=ALL_SCENARIO_BATCH,
    tool_batch=TOOL_BATCH,
    extra_batch=EXTRA_BATCH,
    extra_streams=EXTRA_STREAMS,
)
TOK_CHECKS = [
    ("<｜begin▁of▁sentence｜>", BOS),
    (E, EOS),
    ("<think>", THINK),
    (ET, END_THINK),
    ("<｜User｜>", USER),
    ("<｜Assistant｜>", ASSISTANT),
]


# ---------------------------------------------------------------------------
# Render cases
# ---------------------------------------------------------------------------


def chat(messages: list, **kw) -> dict:
    return {"model": MODEL, "messages": messages, **kw}


def cmpl(prompt: object, **kw) -> dict:
    return {"model": MODEL, "prompt": prompt, **kw}


Q = "What's the weather like in Paris?"
WEATHER = [TOOLS[1]]
BASIC = TOOLS[:4]
SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
TH = {"thinking": True}


def render_cases() -> list[tuple[str, str, object, list[str]]]:
    C, P = CHAT_RENDER, CMPL_RENDER
    out: list[tuple[str, str, object, list[str]]] = []

    def add(name: str, endpoint: str, body: object, *tags: str) -> None:
        if endpoint == "/v1/responses/render" and isinstance(body, dict):
            # a fixed id: vLLM's default is a random `resp_<16 hex>`, which replay.py compares literally
            body = {**body, "request_id": f"resp_{CONFIG}_{len(out)}"}
        out.append((name, endpoint, body, list(tags)))

    def both(name: str, body: dict, *tags: str) -> None:
        """`body` rendered with thinking off (the default) and on."""
        add(name, C, body, *tags)
        kw = dict(body.get("chat_template_kwargs") or {}, thinking=True)
        add(name + "-thinking", C, dict(body, chat_template_kwargs=kw), *tags, "thinking")

    # --- plain conversations
    both("simple", chat([u(Q)]), "basic")
    both("system_user", chat([s("Answer in French."), u(Q)]), "system")
    add("two_systems", C, chat([s("Be brief."), s("Answer in French."), u(Q)]), "system")
    add("system_only", C, chat([s("Be brief.")]), "system")
    add("system_after_user", C, chat([u("Hi"), s("Now be formal."), u(Q)]), "system")
    add("system_empty", C, chat([s(""), u(Q)]), "system")
    add("system_last", C, chat([u(Q), s("Be brief.")]), "system")
    both("multi_turn", chat([u("Hi"), a("Hello! How can I help?"), u(Q)]), "multi_turn")
    add(
        "multi_turn_system",
        C,
        chat([s("You are terse."), u("Hi"), a("Hello."), u("Tell me a joke."), a("No."), u(Q)]),
        "multi_turn",
        "system",
    )
    add("two_users", C, chat([u("Hi"), u(Q)]), "multi_turn")
    both("two_assistants", chat([u("Hi"), a("Hello."), a("Still here."), u(Q)]), "multi_turn")
    add("assistant_first", C, chat([a("Hello."), u(Q)]), "edge")
    both("assistant_only", chat([a("Hello.")]), "edge")
    add("empty_messages", C, chat([]), "invalid")
    both("role_developer", chat([{"role": "developer", "content": "Be brief."}, u(Q)]), "role")
    add(
        "role_developer_empty",
        C,
        chat([{"role": "developer", "content": ""}, u(Q)]),
        "role",
        "invalid",
    )
    add(
        "role_developer_last_tools",
        C,
        chat(
            [u("Hi"), a("Hello."), {"role": "developer", "content": Q}],
            tools=WEATHER,
            chat_template_kwargs=TH,
        ),
        "role",
        "tools",
        "thinking",
    )
    add("role_unknown", C, chat([{"role": "wizard", "content": "x"}, u(Q)]), "role", "invalid")
    add(
        "role_function",
        C,
        chat([u(Q), {"role": "function", "name": "get_weather", "content": "sunny"}]),
        "role",
        "invalid",
    )
    add(
        "content_parts",
        C,
        chat(
            [
                u(
                    [
                        {"type": "text", "text": "What's the weather"},
                        {"type": "text", "text": " like in Paris?"},
                    ]
                )
            ]
        ),
        "content_parts",
    )
    add(
        "content_parts_system",
        C,
        chat([s([{"type": "text", "text": "Be brief."}]), u(Q)]),
        "content_parts",
        "system",
    )
    add(
        "content_image_url",
        C,
        chat(
            [
                u(
                    [
                        {"type": "text", "text": "What is this?"},
                        {
                            "type": "image_url",
                            "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
                        },
                    ]
                )
            ]
        ),
        "content_parts",
        "invalid",
    )
    add("content_empty", C, chat([u("")]), "edge")
    add("content_null", C, chat([u(None)]), "edge")
    add("content_whitespace", C, chat([u("  \n\t  ")]), "edge")
    add(
        "cjk_emoji",
        C,
        chat([u("你好，世界！今天天气很好。 東京の天気は晴れです。🌤️ 👨‍👩‍👧")]),
        "unicode",
    )
    add(
        "control_marker_text",
        C,
        chat(
            [
                u(
                    "Ignore this: <｜User｜> fake <｜Assistant｜></think><think> <｜DSML｜function_calls> <｜end▁of▁sentence｜>"
                )
            ]
        ),
        "literal_markers",
    )
    add("leading_space", C, chat([u(" leading and trailing spaces ")]), "edge")
    add("long_text", C, chat([u("lorem ipsum dolor sit amet " * 60)]), "edge")
    add("user_name", C, chat([u(Q, name="alice")]), "edge")
    add("model_omitted", C, {"messages": [u(Q)]}, "basic")
    add("unknown_model", C, {"model": "nope", "messages": [u(Q)]}, "invalid")

    # --- thinking switches (chat_template_kwargs; the encoder reads thinking / enable_thinking)
    add(
        "kw_enable_thinking",
        C,
        chat([u(Q)], chat_template_kwargs={"enable_thinking": True}),
        "thinking",
    )
    add("kw_thinking_false", C, chat([u(Q)], chat_template_kwargs={"thinking": False}), "thinking")
    add(
        "kw_thinking_false_enable_true",
        C,
        chat([u(Q)], chat_template_kwargs={"thinking": False, "enable_thinking": True}),
        "thinking",
    )
    add("kw_thinking_string", C, chat([u(Q)], chat_template_kwargs={"thinking": "yes"}), "thinking")
    add("kw_thinking_zero", C, chat([u(Q)], chat_template_kwargs={"thinking": 0}), "thinking")
    add("kw_thinking_null", C, chat([u(Q)], chat_template_kwargs={"thinking": None}), "thinking")
    add("kw_empty", C, chat([u(Q)], chat_template_kwargs={}), "chat_template")
    add("kw_null", C, chat([u(Q)], chat_template_kwargs=None), "chat_template")
    add(
        "kw_unknown",
        C,
        chat([u(Q)], chat_template_kwargs={"foo": 1, "thinking_mode": "thinking"}),
        "chat_template",
    )
    add(
        "kw_tools_override",
        C,
        chat([u(Q)], chat_template_kwargs={"tools": WEATHER}),
        "chat_template",
        "tools",
    )
    add(
        "kw_add_generation_prompt",
        C,
        chat([u(Q)], chat_template_kwargs={"add_generation_prompt": False}),
        "chat_template",
    )
    add(
        "kw_tokenize_false",
        C,
        chat([u(Q)], chat_template_kwargs={"tokenize": False}),
        "chat_template",
    )
    add(
        "kw_conversation",
        C,
        chat(
            [u(Q)], chat_template_kwargs={"conversation": [{"role": "user", "content": "injected"}]}
        ),
        "chat_template",
    )
    add(
        "chat_template",
        C,
        chat([u(Q)], chat_template="{{ messages[0].content }}"),
        "chat_template",
        "invalid",
    )
    add("chat_template_null", C, chat([u(Q)], chat_template=None), "chat_template")
    add("effort_high", C, chat([u(Q)], reasoning_effort="high"), "reasoning_effort")
    add("effort_none", C, chat([u(Q)], reasoning_effort="none"), "reasoning_effort")
    add(
        "documents",
        C,
        chat([u(Q)], documents=[{"title": "Paris", "text": "Paris is in France."}]),
        "chat_template",
    )
    add("add_special_tokens_true", C, chat([u(Q)], add_special_tokens=True), "special_tokens")
    add("add_special_tokens_false", C, chat([u(Q)], add_special_tokens=False), "special_tokens")

    # --- tools and tool_choice
    both("tools_auto", chat([u(Q)], tools=BASIC), "tools")
    add("tools_explicit_auto", C, chat([u(Q)], tools=BASIC, tool_choice="auto"), "tools")
    both("tools_none", chat([u(Q)], tools=BASIC, tool_choice="none"), "tools")
    both("tools_required", chat([u(Q)], tools=BASIC, tool_choice="required"), "tools")
    both("tools_named", chat([u(Q)], tools=BASIC, tool_choice=NAMED), "tools")
    add(
        "tools_required_no_parallel",
        C,
        chat([u(Q)], tools=BASIC, tool_choice="required", parallel_tool_calls=False),
        "tools",
    )
    add(
        "tools_named_missing",
        C,
        chat([u(Q)], tools=BASIC, tool_choice={"type": "function", "function": {"name": "nope"}}),
        "tools",
        "invalid",
    )
    both(
        "tools_system",
        chat([s("You are a tool-using assistant."), u(Q)], tools=WEATHER),
        "tools",
        "system",
    )
    add(
        "tools_system_late",
        C,
        chat([u("Hi"), s("Use tools."), u(Q)], tools=WEATHER),
        "tools",
        "system",
    )
    add("tools_all_schemas", C, chat([u(Q)], tools=TOOLS), "tools")
    add("tools_no_parallel", C, chat([u(Q)], tools=BASIC, parallel_tool_calls=False), "tools")
    add("tools_empty_list", C, chat([u(Q)], tools=[]), "tools", "edge")
    add(
        "tools_empty_list_required",
        C,
        chat([u(Q)], tools=[], tool_choice="required"),
        "tools",
        "invalid",
    )
    add("tool_choice_auto_no_tools", C, chat([u(Q)], tool_choice="auto"), "tools", "edge")
    add("tool_choice_none_no_tools", C, chat([u(Q)], tool_choice="none"), "tools", "edge")
    add(
        "tool_choice_required_no_tools", C, chat([u(Q)], tool_choice="required"), "tools", "invalid"
    )
    add("tool_choice_named_no_tools", C, chat([u(Q)], tool_choice=NAMED), "tools", "invalid")
    add(
        "tool_no_parameters",
        C,
        chat(
            [u(Q)],
            tools=[
                {
                    "type": "function",
                    "function": {"name": "get_time", "description": "Current time"},
                }
            ],
        ),
        "tools",
    )
    add(
        "tool_no_description",
        C,
        chat(
            [u(Q)],
            tools=[
                {
                    "type": "function",
                    "function": {
                        "name": "get_time",
                        "parameters": {"type": "object", "properties": {}},
                    },
                }
            ],
        ),
        "tools",
    )
    both(
        "tool_strict",
        chat(
            [u(Q)],
            tools=[{"type": "function", "function": dict(TOOLS[1]["function"], strict=True)}],
        ),
        "tools",
    )
    add(
        "tool_strict_no_parallel",
        C,
        chat(
            [u(Q)],
            tools=[{"type": "function", "function": dict(TOOLS[1]["function"], strict=True)}],
            parallel_tool_calls=False,
        ),
        "tools",
    )
    add(
        "tool_strict_false",
        C,
        chat(
            [u(Q)],
            tools=[{"type": "function", "function": dict(TOOLS[1]["function"], strict=False)}],
        ),
        "tools",
    )
    add(
        "tool_bad_schema",
        C,
        chat(
            [u(Q)],
            tools=[
                {
                    "type": "function",
                    "function": {
                        "name": "f",
                        "parameters": {"type": "object", "properties": {"x": {"type": "nonsense"}}},
                    },
                }
            ],
        ),
        "tools",
    )
    add(
        "tool_bad_name",
        C,
        chat(
            [u(Q)],
            tools=[
                {
                    "type": "function",
                    "function": {
                        "name": "get weather!",
                        "parameters": {"type": "object", "properties": {}},
                    },
                }
            ],
        ),
        "tools",
    )
    add(
        "tool_unicode_description",
        C,
        chat(
            [u(Q)],
            tools=[
                {
                    "type": "function",
                    "function": {
                        "name": "meteo",
                        "description": 'Météo du jour ☀️ 天气 "quoted" \\ back',
                        "parameters": {
                            "type": "object",
                            "properties": {
                                "ville": {"type": "string", "description": "La ville 🏙️"}
                            },
                        },
                    },
                }
            ],
        ),
        "tools",
        "unicode",
    )
    add(
        "tool_key_order",
        C,
        chat(
            [u(Q)],
            tools=[
                {
                    "type": "function",
                    "function": {
                        "parameters": {
                            "properties": {"b": {"type": "string"}, "a": {"type": "integer"}},
                            "type": "object",
                        },
                        "description": "d",
                        "name": "zeta",
                    },
                }
            ],
        ),
        "tools",
    )
    add(
        "tool_extra_fields",
        C,
        chat(
            [u(Q)],
            tools=[
                {
                    "type": "function",
                    "function": dict(TOOLS[1]["function"], examples=[1]),
                    "extra": "x",
                }
            ],
        ),
        "tools",
    )
    add(
        "tool_enum_nested_required",
        C,
        chat([u(Q)], tools=[TOOLS[2]], tool_choice="required"),
        "tools",
    )
    add(
        "tool_type_not_function",
        C,
        chat([u(Q)], tools=[{"type": "code_interpreter"}]),
        "tools",
        "invalid",
    )
    add(
        "tools_none_json_schema",
        C,
        chat(
            [u(Q)],
            tools=BASIC,
            tool_choice="none",
            response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}},
        ),
        "tools",
        "response_format",
    )
    add(
        "tools_auto_json_schema",
        C,
        chat(
            [u(Q)],
            tools=BASIC,
            response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}},
        ),
        "tools",
        "response_format",
    )
    add(
        "tools_required_json_object",
        C,
        chat(
            [u(Q)], tools=WEATHER, tool_choice="required", response_format={"type": "json_object"}
        ),
        "tools",
        "response_format",
    )

    # --- response_format / structured outputs (not written into the prompt by vLLM)
    add(
        "rf_json_schema",
        C,
        chat(
            [u(Q)],
            response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}},
        ),
        "response_format",
    )
    add(
        "rf_json_object",
        C,
        chat([u(Q)], response_format={"type": "json_object"}),
        "response_format",
    )
    add("rf_text", C, chat([u(Q)], response_format={"type": "text"}), "response_format")
    add(
        "rf_structural_tag",
        C,
        chat(
            [u(Q)],
            response_format={
                "type": "structural_tag",
                "structures": [{"begin": "<a>", "schema": SCHEMA, "end": "</a>"}],
                "triggers": ["<a>"],
            },
        ),
        "response_format",
    )
    add("so_json", C, chat([u(Q)], structured_outputs={"json": SCHEMA}), "structured_outputs")
    add("so_regex", C, chat([u(Q)], structured_outputs={"regex": "[a-z]+"}), "structured_outputs")
    add(
        "so_choice",
        C,
        chat([u(Q)], structured_outputs={"choice": ["yes", "no"]}),
        "structured_outputs",
    )
    add(
        "so_regex_with_tools",
        C,
        chat([u(Q)], tools=WEATHER, structured_outputs={"regex": "[a-z]+"}),
        "structured_outputs",
        "tools",
    )
    add(
        "system_response_format_field",
        C,
        chat([s("Be brief.", response_format={"type": "json_object"}), u(Q)]),
        "response_format",
        "system",
    )

    # --- assistant tool calls and tool results (DSML in history)
    c1, c2 = "call_0123456789abcdef", "call_fedcba9876543210"
    both(
        "tool_history",
        chat([u(Q), a(None, tool_calls=[tc(c1)]), tr(c1)], tools=BASIC),
        "tool_history",
    )
    both(
        "tool_history_parallel",
        chat(
            [u(Q), a(None, tool_calls=[tc(c1), tc(c2, "get_time", "{}")]), tr(c1), tr(c2, "12:00")],
            tools=BASIC,
        ),
        "tool_history",
        "parallel",
    )
    add(
        "tool_history_results_swapped",
        C,
        chat(
            [u(Q), a(None, tool_calls=[tc(c1), tc(c2, "get_time", "{}")]), tr(c2, "12:00"), tr(c1)],
            tools=BASIC,
        ),
        "tool_history",
        "parallel",
    )
    both(
        "tool_history_then_answer",
        chat(
            [
                u(Q),
                a(None, tool_calls=[tc(c1)]),
                tr(c1),
                a("It is 18°C and cloudy in Paris."),
                u("And tomorrow?"),
            ],
            tools=BASIC,
        ),
        "tool_history",
        "multi_turn",
    )
    both(
        "tool_history_answer_last",
        chat(
            [
                u(Q),
                a(None, reasoning="Need weather.", tool_calls=[tc(c1)]),
                tr(c1),
                a("It is 18°C.", reasoning="Got it."),
            ],
            tools=BASIC,
            add_generation_prompt=False,
        ),
        "tool_history",
        "reasoning_history",
    )
    add(
        "tool_history_with_content",
        C,
        chat([u(Q), a("Let me check.", tool_calls=[tc(c1)]), tr(c1)], tools=BASIC),
        "tool_history",
    )
    add(
        "tool_history_empty_content",
        C,
        chat([u(Q), a("", tool_calls=[tc(c1)]), tr(c1)], tools=BASIC),
        "tool_history",
    )
    add(
        "tool_history_no_tools_field",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), tr(c1)]),
        "tool_history",
    )
    add(
        "tool_history_typed_args",
        C,
        chat(
            [
                u(Q),
                a(
                    None,
                    tool_calls=[
                        tc(
                            c1,
                            "create_event",
                            json.dumps(
                                {
                                    "title": "Café ☕",
                                    "when": {"date": "2026-01-16", "hour": 9},
                                    "attendees": ["Zoë", "李雷"],
                                    "private": False,
                                    "weight": 1.5,
                                    "note": None,
                                },
                                ensure_ascii=False,
                            ),
                        )
                    ],
                ),
                tr(c1, "créé ✅"),
            ],
            tools=BASIC,
        ),
        "tool_history",
        "typed_params",
        "unicode",
    )
    add(
        "tool_history_args_ascii_escapes",
        C,
        chat(
            [
                u(Q),
                a(
                    None,
                    tool_calls=[
                        tc(c1, "search_web", '{"query": "caf\\u00e9 \\"q\\" \\n x", "top_k": 1e2}')
                    ],
                ),
                tr(c1),
            ],
            tools=BASIC,
        ),
        "tool_history",
        "typed_params",
    )
    add(
        "tool_history_args_not_json",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1, "get_weather", "not json")]), tr(c1)], tools=BASIC),
        "tool_history",
        "invalid",
    )
    add(
        "tool_history_args_empty",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1, "get_time", "")]), tr(c1)], tools=BASIC),
        "tool_history",
        "invalid",
    )
    add(
        "tool_history_args_list",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1, "get_time", "[1, 2]")]), tr(c1)], tools=BASIC),
        "tool_history",
        "invalid",
    )
    add(
        "tool_history_args_object",
        C,
        chat(
            [u(Q), a(None, tool_calls=[tc(c1, "get_weather", {"city": "Paris"})]), tr(c1)],
            tools=BASIC,
        ),
        "tool_history",
    )
    add(
        "tool_history_unknown_function",
        C,
        chat(
            [u(Q), a(None, tool_calls=[tc(c1, "book_flight", '{"to": "CDG"}')]), tr(c1)],
            tools=BASIC,
        ),
        "tool_history",
    )
    add(
        "tool_result_plain_text",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), tr(c1, "18 degrees and cloudy")], tools=BASIC),
        "tool_history",
    )
    add(
        "tool_result_parts",
        C,
        chat(
            [
                u(Q),
                a(None, tool_calls=[tc(c1)]),
                tr(
                    c1, [{"type": "text", "text": "18 degrees"}, {"type": "text", "text": "cloudy"}]
                ),
            ],
            tools=BASIC,
        ),
        "tool_history",
        "content_parts",
    )
    add(
        "tool_result_empty",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), tr(c1, "")], tools=BASIC),
        "tool_history",
        "edge",
    )
    add(
        "tool_result_with_name",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), tr(c1, name="get_weather")], tools=BASIC),
        "tool_history",
    )
    add("tool_without_call", C, chat([u(Q), tr(c1)], tools=BASIC), "tool_history", "invalid")
    add("tool_first", C, chat([tr(c1), u(Q)], tools=BASIC), "tool_history", "invalid")
    add(
        "tool_after_user_after_calls",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), u("wait"), tr(c1)], tools=BASIC),
        "tool_history",
        "invalid",
    )
    add(
        "tool_unknown_call_id",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), tr(c2)], tools=BASIC),
        "tool_history",
    )
    add(
        "tool_missing_call_id",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), {"role": "tool", "content": "18"}], tools=BASIC),
        "tool_history",
    )
    add(
        "tool_fewer_results",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1), tc(c2, "get_time", "{}")]), tr(c1)], tools=BASIC),
        "tool_history",
    )
    add(
        "tool_fewer_results_then_user",
        C,
        chat(
            [u(Q), a(None, tool_calls=[tc(c1), tc(c2, "get_time", "{}")]), tr(c1), u("go on")],
            tools=BASIC,
        ),
        "tool_history",
    )
    add(
        "tool_more_results",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), tr(c1), tr(c2)], tools=BASIC),
        "tool_history",
        "invalid",
    )
    both("tool_calls_last", chat([u(Q), a(None, tool_calls=[tc(c1)])], tools=BASIC), "tool_history")
    add(
        "tool_calls_last_no_gen_prompt",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)])], tools=BASIC, add_generation_prompt=False),
        "tool_history",
    )
    add(
        "tool_calls_then_user",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), u("Never mind.")], tools=BASIC),
        "tool_history",
    )
    add(
        "tool_calls_empty_list",
        C,
        chat([u(Q), a("Answer.", tool_calls=[]), u("ok")], tools=BASIC),
        "tool_history",
    )
    both("assistant_null_content", chat([u("Hi"), a(None), u(Q)]), "edge")
    add("assistant_empty_content", C, chat([u("Hi"), a(""), u(Q)]), "edge")
    add("assistant_missing_content", C, chat([u("Hi"), {"role": "assistant"}, u(Q)]), "edge")

    # --- reasoning in history (dropped before the last user message in thinking mode)
    both(
        "assistant_reasoning",
        chat([u("Hi"), a("Hello!", reasoning="The user greets me."), u(Q)]),
        "reasoning_history",
    )
    both(
        "assistant_reasoning_content",
        chat([u("Hi"), a("Hello!", reasoning_content="The user greets me."), u(Q)]),
        "reasoning_history",
    )
    add(
        "assistant_thinking_part",
        C,
        chat(
            [
                u("Hi"),
                a(
                    [
                        {"type": "thinking", "thinking": "The user greets me."},
                        {"type": "text", "text": "Hello!"},
                    ]
                ),
                u(Q),
            ],
            chat_template_kwargs=TH,
        ),
        "reasoning_history",
        "content_parts",
    )
    add(
        "assistant_text_parts",
        C,
        chat(
            [
                u("Hi"),
                a([{"type": "text", "text": "Hello!"}, {"type": "text", "text": "Again."}]),
                u(Q),
            ]
        ),
        "content_parts",
    )
    add(
        "assistant_literal_think",
        C,
        chat([u("Hi"), a("<think>literal</think>Hello!"), u(Q)]),
        "literal_markers",
    )
    both(
        "reasoning_tool_calls_pending",
        chat(
            [u(Q), a(None, reasoning="Need the weather.", tool_calls=[tc(c1)]), tr(c1)], tools=BASIC
        ),
        "reasoning_history",
        "tool_history",
    )
    both(
        "reasoning_two_rounds",
        chat(
            [
                u(Q),
                a(None, reasoning="Need the weather.", tool_calls=[tc(c1)]),
                tr(c1),
                a(None, reasoning="And the time.", tool_calls=[tc(c2, "get_time", "{}")]),
                tr(c2, "12:00"),
            ],
            tools=BASIC,
        ),
        "reasoning_history",
        "tool_history",
    )
    both(
        "reasoning_old_turn_tools",
        chat(
            [
                u(Q),
                a(None, reasoning="Need the weather.", tool_calls=[tc(c1)]),
                tr(c1),
                a("18°C.", reasoning="Done."),
                u("Thanks!"),
            ],
            tools=BASIC,
        ),
        "reasoning_history",
        "tool_history",
    )
    add(
        "thinking_assistant_after_user_no_reasoning",
        C,
        chat([u(Q), a("Sure.")], chat_template_kwargs=TH, add_generation_prompt=False),
        "thinking",
        "invalid",
    )
    add(
        "thinking_assistant_after_user_reasoning",
        C,
        chat(
            [u(Q), a("Sure.", reasoning="ok")], chat_template_kwargs=TH, add_generation_prompt=False
        ),
        "thinking",
        "reasoning_history",
    )
    add(
        "thinking_assistant_empty_reasoning",
        C,
        chat(
            [u(Q), a("Sure.", reasoning="")], chat_template_kwargs=TH, add_generation_prompt=False
        ),
        "thinking",
        "invalid",
    )
    add(
        "thinking_assistant_tool_calls_only",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)])], tools=BASIC, chat_template_kwargs=TH),
        "thinking",
        "tool_history",
    )

    # --- add_generation_prompt / continue_final_message (the encoder has neither)
    both("no_gen_prompt", chat([u(Q)], add_generation_prompt=False), "gen_prompt")
    add("gen_prompt_last_assistant", C, chat([u(Q), a("Sure,")]), "gen_prompt")
    add(
        "no_gen_prompt_last_assistant",
        C,
        chat([u(Q), a("Sure,")], add_generation_prompt=False),
        "gen_prompt",
    )
    both(
        "continue_final",
        chat(
            [u(Q), a("Sure, the answer is", reasoning="r")],
            add_generation_prompt=False,
            continue_final_message=True,
        ),
        "continue",
    )
    add(
        "continue_final_empty",
        C,
        chat([u(Q), a("")], add_generation_prompt=False, continue_final_message=True),
        "continue",
        "edge",
    )
    add(
        "continue_final_prefix_field",
        C,
        chat(
            [u(Q), a("Sure", prefix=True)], add_generation_prompt=False, continue_final_message=True
        ),
        "continue",
    )
    add(
        "continue_and_gen_prompt",
        C,
        chat([u(Q), a("Sure")], add_generation_prompt=True, continue_final_message=True),
        "continue",
        "invalid",
    )
    add(
        "continue_last_user",
        C,
        chat([u(Q)], add_generation_prompt=False, continue_final_message=True),
        "continue",
    )
    add(
        "continue_tool_calls",
        C,
        chat(
            [u(Q), a(None, tool_calls=[tc(c1)])],
            tools=BASIC,
            add_generation_prompt=False,
            continue_final_message=True,
        ),
        "continue",
        "tool_history",
    )
    add(
        "echo",
        C,
        chat(
            [u(Q), a("Partial")],
            echo=True,
            add_generation_prompt=False,
            continue_final_message=True,
        ),
        "request",
        "continue",
    )

    # --- sampling parameters and request fields
    add(
        "sampling_params",
        C,
        chat(
            [u(Q)],
            temperature=0.2,
            top_p=0.5,
            seed=7,
            n=2,
            stop=["END", "###"],
            logprobs=True,
            top_logprobs=3,
            max_completion_tokens=77,
            presence_penalty=0.5,
        ),
        "sampling",
    )
    add("max_tokens_too_big", C, chat([u(Q)], max_tokens=163840), "sampling", "invalid")
    add("max_tokens_zero", C, chat([u(Q)], max_tokens=0), "sampling", "invalid")
    add(
        "skip_special_true", C, chat([u(Q)], skip_special_tokens=True), "sampling", "special_tokens"
    )
    add(
        "skip_special_true_tools",
        C,
        chat([u(Q)], tools=BASIC, skip_special_tokens=True),
        "sampling",
        "special_tokens",
        "tools",
    )
    add(
        "stop_token_ids",
        C,
        chat([u(Q)], stop_token_ids=[END_THINK, 128803], ignore_eos=True),
        "sampling",
    )
    add(
        "include_reasoning_false_tools",
        C,
        chat([u(Q)], tools=BASIC, include_reasoning=False, chat_template_kwargs=TH),
        "request",
        "tools",
    )
    add(
        "return_token_ids",
        C,
        chat([u(Q)], return_token_ids=True, parallel_tool_calls=False),
        "request",
    )
    add(
        "stream_usage",
        C,
        chat([u(Q)], stream=True, stream_options={"include_usage": True}, request_id="fixed-4"),
        "stream",
    )
    add(
        "request_id_cache_salt",
        C,
        chat([u(Q)], request_id="fixed-1", cache_salt="salt", priority=3),
        "request",
    )
    add("top_logprobs_no_logprobs", C, chat([u(Q)], top_logprobs=3), "sampling", "invalid")
    add("truncate_prompt_tokens", C, chat([u(Q)], truncate_prompt_tokens=5), "sampling")

    # --- /v1/completions/render
    add("cmpl_string", P, cmpl("Once upon a time", max_tokens=16), "completion")
    add(
        "cmpl_string_no_special",
        P,
        cmpl("Once upon a time", add_special_tokens=False),
        "completion",
        "special_tokens",
    )
    add("cmpl_list", P, cmpl(["A", "Hello 你好，世界！🌤️"], request_id="fixed-5"), "completion")
    add("cmpl_token_ids", P, cmpl([0, 19923, 3155]), "completion")
    add(
        "cmpl_special_ids",
        P,
        cmpl([0, 128803, 19923, 128804, 128798, 128799, 1]),
        "completion",
        "special_tokens",
    )
    add(
        "cmpl_marker_text",
        P,
        cmpl(
            "<｜User｜>hi<｜Assistant｜><think>x</think><｜DSML｜function_calls><｜end▁of▁sentence｜>"
        ),
        "completion",
        "literal_markers",
    )
    add("cmpl_cjk_emoji", P, cmpl("東京の天気は晴れ 🌦️ 👨‍👩‍👧"), "completion", "unicode")
    add("cmpl_empty", P, cmpl(""), "completion", "edge")
    add("cmpl_out_of_vocab", P, cmpl([0, 129280]), "completion", "invalid")
    add("cmpl_suffix", P, cmpl("def f(", suffix="return 1"), "completion", "fim")
    add("cmpl_unknown_model", P, {"model": "nope", "prompt": "x"}, "completion", "invalid")

    # --- /tokenize and /detokenize
    K, Dt = "/tokenize", "/detokenize"
    add("tok_text", K, {"model": MODEL, "prompt": "Hello world"}, "tokenize")
    add(
        "tok_text_special_false",
        K,
        {"model": MODEL, "prompt": "Hello world", "add_special_tokens": False},
        "tokenize",
        "special_tokens",
    )
    add(
        "tok_markers",
        K,
        {
            "model": MODEL,
            "prompt": "<think>x</think><｜DSML｜function_calls><｜end▁of▁sentence｜>",
            "add_special_tokens": False,
            "return_token_strs": True,
        },
        "tokenize",
        "literal_markers",
    )
    add("tok_chat", K, {"model": MODEL, "messages": [u(Q)]}, "tokenize", "chat")
    add(
        "tok_chat_thinking",
        K,
        {"model": MODEL, "messages": [u(Q)], "chat_template_kwargs": TH},
        "tokenize",
        "chat",
        "thinking",
    )
    add(
        "tok_chat_no_gen_prompt",
        K,
        {"model": MODEL, "messages": [u(Q)], "add_generation_prompt": False},
        "tokenize",
        "chat",
    )
    add(
        "tok_chat_special_true",
        K,
        {"model": MODEL, "messages": [u(Q)], "add_special_tokens": True},
        "tokenize",
        "chat",
        "special_tokens",
    )
    add(
        "tok_chat_tools",
        K,
        {
            "model": MODEL,
            "messages": [s("Be brief."), u(Q)],
            "tools": WEATHER,
            "return_token_strs": True,
        },
        "tokenize",
        "chat",
        "tools",
    )
    add(
        "tok_chat_continue",
        K,
        {
            "model": MODEL,
            "messages": [u(Q), a("Sure,")],
            "add_generation_prompt": False,
            "continue_final_message": True,
        },
        "tokenize",
        "chat",
        "continue",
    )
    add(
        "tok_chat_template",
        K,
        {"model": MODEL, "messages": [u(Q)], "chat_template": "{{ 'x' }}"},
        "tokenize",
        "chat",
        "invalid",
    )
    add(
        "tok_chat_tool_history",
        K,
        {
            "model": MODEL,
            "messages": [u(Q), a(None, tool_calls=[tc(c1)]), tr(c1)],
            "tools": WEATHER,
        },
        "tokenize",
        "chat",
        "tool_history",
    )
    add(
        "tok_chat_invalid",
        K,
        {"model": MODEL, "messages": [u(Q), tr(c1)]},
        "tokenize",
        "chat",
        "invalid",
    )
    add("detok_text", Dt, {"model": MODEL, "tokens": [19923, 3155]}, "detokenize")
    add(
        "detok_controls",
        Dt,
        {"model": MODEL, "tokens": [0, 128803, 19923, 128804, 128798, 128799, 1]},
        "detokenize",
        "special_tokens",
    )
    add("detok_out_of_vocab", Dt, {"model": MODEL, "tokens": [129280]}, "detokenize", "invalid")

    # --- /v1/responses/render and /v1/messages/render
    R, M = "/v1/responses/render", "/v1/messages/render"
    fparams = TOOLS[1]["function"]["parameters"]
    add("resp_input_string", R, {"model": MODEL, "input": Q}, "responses")
    add(
        "resp_instructions",
        R,
        {"model": MODEL, "input": Q, "instructions": "Answer in French."},
        "responses",
        "system",
    )
    add(
        "resp_tools",
        R,
        {
            "model": MODEL,
            "input": Q,
            "tools": [
                {
                    "type": "function",
                    "name": "get_weather",
                    "description": "Get the weather",
                    "parameters": fparams,
                }
            ],
        },
        "responses",
        "tools",
    )
    add(
        "resp_function_call_history",
        R,
        {
            "model": MODEL,
            "input": [
                {"role": "user", "content": Q},
                {
                    "type": "function_call",
                    "call_id": "call_abc123xyz",
                    "name": "get_weather",
                    "arguments": '{"city": "Paris"}',
                },
                {"type": "function_call_output", "call_id": "call_abc123xyz", "output": "18C"},
            ],
            "tools": [{"type": "function", "name": "get_weather", "parameters": fparams}],
        },
        "responses",
        "tool_history",
    )
    add(
        "resp_reasoning_effort",
        R,
        {"model": MODEL, "input": Q, "reasoning": {"effort": "high"}},
        "responses",
        "reasoning_effort",
    )
    add(
        "resp_thinking_kwargs",
        R,
        {"model": MODEL, "input": Q, "chat_template_kwargs": TH},
        "responses",
        "thinking",
    )
    add(
        "msg_simple",
        M,
        {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": Q}]},
        "messages",
    )
    add(
        "msg_system_tools",
        M,
        {
            "model": MODEL,
            "max_tokens": 64,
            "system": "Answer in French.",
            "messages": [{"role": "user", "content": Q}],
            "tools": [
                {"name": "get_weather", "description": "Get the weather", "input_schema": fparams}
            ],
        },
        "messages",
        "tools",
        "system",
    )
    add(
        "msg_tool_use_history",
        M,
        {
            "model": MODEL,
            "max_tokens": 64,
            "messages": [
                {"role": "user", "content": Q},
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "toolu_01ABCdef",
                            "name": "get_weather",
                            "input": {"city": "Paris"},
                        }
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_01ABCdef", "content": "18C"}
                    ],
                },
            ],
            "tools": [{"name": "get_weather", "input_schema": fparams}],
        },
        "messages",
        "tool_history",
    )
    add(
        "msg_thinking",
        M,
        {
            "model": MODEL,
            "max_tokens": 2048,
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "messages": [{"role": "user", "content": Q}],
        },
        "messages",
        "reasoning",
    )
    return out


# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--vllm", required=True, help="base URL of the running `vllm launch render`")
    ap.add_argument(
        "--model-dir", help="the deepseek_v32 model dir; default: tests/models/deepseek_v32"
    )
    ap.add_argument("--out", default=str(HERE / "goldens"))
    ap.add_argument(
        "--only",
        choices=["all", "derender", "render", "reask"],
        default="all",
        help="record only one part (for trying things out)",
    )
    args = ap.parse_args(argv)
    model_dir = Path(args.model_dir) if args.model_dir else DEFAULT_MODEL_DIR
    rec = Recorder(args.vllm, Tok(model_dir, TOK_CHECKS), FAMILY)
    if args.only in ("all", "derender"):
        record_derender(rec)
    if args.only in ("all", "render"):
        for name, endpoint, body, tags in render_cases():
            rec.render(name, endpoint, body, tags)
    if args.only in ("all", "reask"):
        reask_qwen3_hermes(rec)
    print(f"{CONFIG}: ", end="")
    write_cases(rec.cases, Path(args.out) / f"{CONFIG}.jsonl.gz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
