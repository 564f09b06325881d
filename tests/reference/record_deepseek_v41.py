"""Record the deepseek_v41 (DeepSeek-V4.1 tokenizer mode) golden corpus from a live vLLM 0.33.0.

The `deepseek_v41` config serves tests/models/deepseek_v41 (a stand-in: V4's
vocabulary with V4.1's image token, README there) under a config.json with
architecture DeepseekV41ForCausalLM, for which vLLM's `--tokenizer-mode auto`
picks its `deepseek_v41` mode (vllm/config/model.py:763-764): prompts are written
by DeepSeek's V4.1 Python encoder (vllm/tokenizers/deepseek_v41_encoding.py behind
vllm/tokenizers/deepseek_v41.py's normalization), rendered by DeepseekV41Renderer
(vllm/renderers/deepseek_v4.py:101-106, image order), and one ParserEngine
(vllm/parser/deepseek_v41.py, V4's with spaced DSML names) serves both the
`deepseek_v41` tool parser and the `deepseek_v41` reasoning parser. Thinking is
ON unless the request says otherwise; the model writes
(tests/models/deepseek_v41/ENCODER.md):

    reasoning</think>content\\n\\n<｜DSML｜ calls>\\n<｜DSML｜ invoke name="get_weather">\\n
    <｜DSML｜ parameter name="city" string="true">Paris</｜DSML｜ parameter>\\n
    </｜DSML｜ invoke>\\n</｜DSML｜ calls><｜end▁of▁sentence｜>

The scenarios, variants and render cases are record_deepseek_v4.py's respelled
for V4.1 (`<｜DSML｜tool_calls>` -> `<｜DSML｜ calls>`, `invoke` -> ` invoke`,
`parameter` -> ` parameter`, served name deepseek_v41). V4's start variants
(`<｜DSML｜toolcalls>`, `<｜DSML｜tool>`), which V4.1's parser no longer reads, keep
their V4 opener, and V4's own spelling is kept as `tool_v4_spelling`. V4's case
list is not changed: this module only reads it. V4.1's own cases follow
(integer reasoning efforts 1-100, the <｜System｜> lead, image placeholder text
refused, image parts and their order, developer/system/tool-result layouts,
the last-user rule that skips tool-result-only turns, FIM, /tokenize,
/detokenize, Responses and Messages). Error texts are vLLM's answers.

    cd /tmp && VLLM_TARGET_DEVICE=cpu vllm launch render <tests/models/deepseek_v41, unpacked> \\
      --port P --served-model-name deepseek_v41 --tool-call-parser deepseek_v41 \\
      --enable-auto-tool-choice --reasoning-parser deepseek_v41
    <python with tokenizers> tests/reference/record_deepseek_v41.py --vllm http://127.0.0.1:P \\
      --out tests/reference/pending/deepseek_v41

writes <--out>/goldens.jsonl.gz.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import record_deepseek_v4 as v4  # noqa: E402
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

CONFIG = "deepseek_v41"
MODEL = "deepseek_v41"
IMAGE = 129264
DEFAULT_MODEL_DIR = HERE.parent / "models" / "deepseek_v41"
TOK_CHECKS = v4.TOK_CHECKS + [("<｜deepseek_image｜>", IMAGE)]

ET, E = "</think>", "<｜end▁of▁sentence｜>"
D = "｜DSML｜"
TC, TCE = f"<{D} calls>", f"</{D} calls>"
INV, INVE = f'<{D} invoke name="', f"</{D} invoke>"
PS, PE = f'<{D} parameter name="', f"</{D} parameter>"
IMG = "<｜deepseek_image｜>"

# V4 spelling -> V4.1 spelling (fullwidth and the ASCII-bar lookalike of tool_ascii_bars)
_RESPELL = []
for _d in (D, "|DSML|"):
    _RESPELL += [
        (f"<{_d}tool_calls>", f"<{_d} calls>"),
        (f"</{_d}tool_calls>", f"</{_d} calls>"),
        (f"<{_d}invoke", f"<{_d} invoke"),
        (f"</{_d}invoke>", f"</{_d} invoke>"),
        (f"<{_d}parameter", f"<{_d} parameter"),
        (f"</{_d}parameter>", f"</{_d} parameter>"),
    ]


def respell(text: str) -> str:
    for old, new in _RESPELL:
        text = text.replace(old, new)
    return text


def vp(k: str, v: str, st: str = "true") -> str:
    return f'{PS}{k}" string="{st}">{v}{PE}'


def call(name: str, params: str) -> str:
    return f'\n\n{TC}\n{INV}{name}">\n{params}\n{INVE}\n{TCE}'


V4_OPENER_UNREAD = {
    "tool_start_toolcalls",
    "tool_start_tool",
    "tool_start_tool_think",
    "tool_start_variant_in_reasoning",
}
SCENARIOS: dict[str, tuple[str, list[str], bool, str, bool]] = {}
for _name, (_text, _tags, _tools, _fin, _th) in v4.SCENARIOS.items():
    _tags = list(_tags)
    if _name in V4_OPENER_UNREAD:
        _tags.append("v4_opener_unread")
    SCENARIOS[_name] = (respell(_text), _tags, _tools, _fin, _th)
SCENARIOS.update(
    {
        "tool_v4_spelling": (
            v4.call("get_weather", v4.W_PARAMS) + E,
            ["tool_call", "v4_spelling"],
            True,
            "stop",
            False,
        ),
        "tool_think_v4_spelling": (
            "Need weather." + ET + v4.call("get_weather", v4.W_PARAMS) + E,
            ["tool_call", "v4_spelling", "reasoning"],
            True,
            "stop",
            True,
        ),
        "tool_half_spaced": (
            f'\n\n{TC}\n<{D}invoke name="get_weather">\n{vp("city", "Paris")}\n</{D}invoke>\n{TCE}'
            + E,
            ["tool_call", "mixed_spelling"],
            True,
            "stop",
            False,
        ),
        "tool_double_space": (
            f'\n\n<{D}  calls>\n{INV}get_weather">\n{vp("city", "Paris")}\n{INVE}\n</{D}  calls>' + E,
            ["tool_call", "mixed_spelling"],
            True,
            "stop",
            False,
        ),
        "think_image_token": (
            "Look" + IMG + "ed." + ET + "An image token " + IMG + " in the answer." + E,
            ["reasoning", "special_inside", "image_token"],
            False,
            "stop",
            True,
        ),
    }
)

VARIANTS = dict(copy.deepcopy(v4.VARIANTS))
VARIANTS.update(
    {
        "effort_xhigh": {"reasoning_effort": "xhigh"},
        "kw_effort_int_1": {"chat_template_kwargs": {"reasoning_effort": 1}},
        "kw_effort_int_50": {"chat_template_kwargs": {"reasoning_effort": 50}},
        "kw_effort_int_100": {"chat_template_kwargs": {"reasoning_effort": 100}},
    }
)
# V4's "medium" effort does not render under V4.1 (400: reasoning_effort must be low, high, xhigh,
# max or an integer; recorded among the render cases), so its derender variant is left out.
UNRENDERABLE = {"effort_medium"}
EXTRA_BATCH = {
    k: [x for x in v if x not in UNRENDERABLE] for k, v in v4.EXTRA_BATCH.items()
}
for _k, _extra in {
    "think_content": ["effort_xhigh", "kw_effort_int_1", "kw_effort_int_100"],
    "tool_think_call": ["kw_effort_int_50", "effort_xhigh"],
    "content_only": ["kw_effort_int_50"],
    "tool_v4_spelling": ["tools_required", "tools_named"],
}.items():
    EXTRA_BATCH.setdefault(_k, []).extend(_extra)
EXTRA_STREAMS = {
    k: [x for x in v if x[0] not in UNRENDERABLE] for k, v in v4.EXTRA_STREAMS.items()
}
for _k, _extra in {
    "think_content": [("kw_effort_int_50", "tok1")],
    "tool_think_call": [("kw_effort_int_100", "tok3")],
    "tool_think_v4_spelling": [("tools_required", "tok1")],
}.items():
    EXTRA_STREAMS.setdefault(_k, []).extend(_extra)


def _second(tools: bool, thinking: bool) -> str:
    if tools:
        return ("Other." + ET if thinking else "") + f'{TC}\n{INV}get_time">\n\n{INVE}\n{TCE}' + E
    return ("Other." + ET if thinking else "") + "A second, different answer." + E


FAMILY = Family(
    config=CONFIG,
    model=MODEL,
    scenarios=SCENARIOS,
    variants=VARIANTS,
    users=v4.USERS,
    tools=v4.TOOLS,
    thinking_kwargs=v4._thinking_kwargs,
    second=_second,
    stop_tok=v4.END_THINK,
    render_tag="deepseek_v41_encoder",
    all_scenario_batch=v4.FAMILY.all_scenario_batch,
    tool_batch=v4.FAMILY.tool_batch,
    extra_batch=EXTRA_BATCH,
    extra_streams=EXTRA_STREAMS,
)


# ---------------------------------------------------------------------------
# Render cases
# ---------------------------------------------------------------------------


def _port(obj: object, key: str | None = None) -> object:
    """A V4 render body spelled for V4.1: served name, DSML spelling, request ids."""
    if isinstance(obj, str):
        if key == "model" and obj == "deepseek_v4":
            return MODEL
        if key == "request_id":
            return obj.replace("resp_deepseek_v4_", "resp_deepseek_v41_")
        return respell(obj)
    if isinstance(obj, list):
        return [_port(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _port(v, k) for k, v in obj.items()}
    return obj


def ported_render_cases() -> list[tuple[str, str, object, list[str]]]:
    """record_deepseek_v4.py's render cases (its V3.2 ports and its own) for V4.1."""
    return [
        (name, endpoint, _port(copy.deepcopy(body)), tags)
        for name, endpoint, body, tags in v4.ported_render_cases() + v4.v4_render_cases()
    ]


def chat(messages: list, **kw) -> dict:
    return {"model": MODEL, "messages": messages, **kw}


def cmpl(prompt: object, **kw) -> dict:
    return {"model": MODEL, "prompt": prompt, **kw}


Q = "What's the weather like in Paris?"
WEATHER = [v4.TOOLS[1]]
BASIC = v4.TOOLS[:4]
CH = {"thinking": False}
# PNGs made with PIL: red 1x1 and blue 2x1 (different aspect, so a different image span)
PNG_R = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)
PNG_B = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAD0lEQVR4nGNkYPjPwMAAAAQKAQHOAd3hAAAAAElFTkSuQmCC"
)


def img(url: str = PNG_R) -> dict:
    return {"type": "image_url", "image_url": {"url": url}}


def txt(t: str) -> dict:
    return {"type": "text", "text": t}


def v41_render_cases() -> list[tuple[str, str, object, list[str]]]:
    C, P = CHAT_RENDER, CMPL_RENDER
    out: list[tuple[str, str, object, list[str]]] = []

    def add(name: str, endpoint: str, body: object, *tags: str) -> None:
        if endpoint == "/v1/responses/render" and isinstance(body, dict):
            body = {**body, "request_id": f"resp_{CONFIG}_v41_{len(out)}"}
        out.append(("v41_" + name, endpoint, body, list(tags)))

    c1, c2 = "call_0123456789abcdef", "call_fedcba9876543210"

    # --- reasoning effort: V4.1's numeric budget (strings map to 50/75/75/100, ints 1-100)
    for val in [1, 2, 49, 50, 75, 99, 100, 0, 101, -1, 50.0, "50", True, False, None, "none"]:
        add(
            f"kw_effort_{type(val).__name__}_{val}".replace("-", "m").replace(".", "p"),
            C,
            chat([u(Q)], chat_template_kwargs={"reasoning_effort": val}),
            "reasoning_effort",
        )
    for val in [1, 100, 0]:
        add(
            f"kw_effort_int_{val}_chat",
            C,
            chat([u(Q)], chat_template_kwargs={"reasoning_effort": val, "thinking": False}),
            "reasoning_effort",
            "chat_mode",
        )
    for val in [50, 100, "50"]:
        add(
            f"req_effort_{type(val).__name__}_{val}",
            C,
            chat([u(Q)], reasoning_effort=val),
            "reasoning_effort",
            "invalid",
        )
    for eff in ["low", "high", "xhigh", "max"]:
        add(
            f"effort_{eff}_system",
            C,
            chat([s("Be brief."), u(Q)], reasoning_effort=eff),
            "reasoning_effort",
            "system",
        )
    add(
        "kw_effort_int_system_tools",
        C,
        chat([s("Be brief."), u(Q)], tools=WEATHER, chat_template_kwargs={"reasoning_effort": 7}),
        "reasoning_effort",
        "system",
        "tools",
    )
    add(
        "kw_effort_int_enable_false",
        C,
        chat([u(Q)], chat_template_kwargs={"reasoning_effort": 30, "enable_thinking": False}),
        "reasoning_effort",
        "chat_mode",
    )
    add(
        "kw_effort_int_over_request",
        C,
        chat([u(Q)], reasoning_effort="low", chat_template_kwargs={"reasoning_effort": 90}),
        "reasoning_effort",
    )

    # --- the <｜System｜> lead (first system message, or the effort prompt in thinking mode)
    add("system_first_chat", C, chat([s("Sys."), u(Q)], chat_template_kwargs=CH), "system")
    add("no_system_chat", C, chat([u(Q)], chat_template_kwargs=CH), "system", "chat_mode")
    add("system_empty_chat", C, chat([s(""), u(Q)], chat_template_kwargs=CH), "system")
    add("system_mid_chat", C, chat([u("Hi"), a("Hello."), s("Mid."), u(Q)], chat_template_kwargs=CH), "system")
    add("system_last", C, chat([u("Hi"), a("Hello."), s("Now be brief.")]), "system")
    add("system_last_chat", C, chat([u("Hi"), a("Hello."), s("Now be brief.")], chat_template_kwargs=CH), "system")
    add("system_only", C, chat([s("Only.")]), "system", "edge")
    add("system_only_chat", C, chat([s("Only.")], chat_template_kwargs=CH), "system", "edge")
    add("system_two_first", C, chat([s("A."), s("B."), u(Q)]), "system")
    add(
        "system_mid_drop",
        C,
        chat([u("Hi"), a("Hello.", reasoning="greet"), s("Mid."), a("Sure.", reasoning="r2")]),
        "system",
        "drop_thinking",
    )
    add("literal_system_token", C, chat([u("A <｜System｜> marker")]), "literal_markers")

    # --- image placeholder text refused, wherever it is
    add("img_text_user", C, chat([u("see " + IMG)]), "image", "invalid")
    add("img_text_part", C, chat([u([txt("see " + IMG)])]), "image", "invalid")
    add("img_text_system", C, chat([s(IMG), u(Q)]), "image", "invalid")
    add("img_text_developer", C, chat([{"role": "developer", "content": IMG}, u(Q)]), "image", "invalid")
    add("img_text_assistant", C, chat([u("Hi"), a("x" + IMG), u(Q)]), "image", "invalid")
    add("img_text_reasoning", C, chat([u("Hi"), a("x", reasoning=IMG), u(Q)]), "image", "invalid")
    add(
        "img_text_reasoning_content",
        C,
        chat([u("Hi"), a("x", reasoning_content=IMG), u(Q)]),
        "image",
        "invalid",
    )
    add(
        "img_text_tool",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), tr(c1, "r " + IMG)], tools=BASIC),
        "image",
        "invalid",
    )
    add("img_text_partial", C, chat([u("<｜deepseek_image")]), "image", "literal_markers")
    add("img_text_ascii_bars", C, chat([u("<|deepseek_image|>")]), "image", "literal_markers")
    add(
        "img_text_cmpl",
        P,
        cmpl("see " + IMG),
        "image",
        "completion",
    )
    add(
        "img_tokenize",
        "/tokenize",
        {"model": MODEL, "prompt": "a" + IMG + "b<｜System｜>", "add_special_tokens": False,
         "return_token_strs": True},
        "image",
        "tokenize",
    )
    add(
        "img_tokenize_chat",
        "/tokenize",
        {"model": MODEL, "messages": [u("x " + IMG)]},
        "image",
        "tokenize",
        "invalid",
    )
    add(
        "img_detokenize",
        "/detokenize",
        {"model": MODEL, "tokens": [0, IMAGE, 129262, 129263, 128803, 128804, 1]},
        "image",
        "detokenize",
    )

    # --- image parts: placeholders, order, part types
    add("img_part_then_text", C, chat([u([img(), txt("What is this?")])]), "image")
    add("img_part_then_text_chat", C, chat([u([img(), txt("What is this?")])], chat_template_kwargs=CH), "image")
    add("img_text_then_part", C, chat([u([txt("Look:"), img()])]), "image")
    add("img_two_parts", C, chat([u([img(PNG_R), txt("vs"), img(PNG_B)])]), "image")
    add("img_only_part", C, chat([u([img()])]), "image")
    add(
        "img_two_turns",
        C,
        chat([u([img(PNG_R), txt("One.")]), a("Red."), u([img(PNG_B), txt("Two.")])]),
        "image",
        "multi_turn",
    )
    add(
        "img_in_system",
        C,
        chat([s([txt("Sys"), img()]), u(Q)]),
        "image",
        "system",
    )
    add(
        "img_in_tool_result",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), tr(c1, [txt("shot"), img()])], tools=BASIC),
        "image",
        "tool_history",
    )
    add(
        "img_tool_results_sorted",
        C,
        chat(
            [
                u([img(PNG_R), txt(Q)]),
                a(None, tool_calls=[tc(c1), tc(c2, "get_time", "{}")]),
                tr(c2, [img(PNG_B), txt("12:00")]),
                tr(c1, [txt("18C"), img(PNG_R)]),
            ],
            tools=BASIC,
        ),
        "image",
        "tool_history",
        "parallel",
    )
    add(
        "img_dropped_history_developer",
        C,
        chat(
            [
                {"role": "developer", "content": [txt("Dev"), img(PNG_B)]},
                u([img(PNG_R), txt("Hi")]),
                a("Hello."),
                u(Q),
            ]
        ),
        "image",
        "drop_thinking",
    )
    add(
        "img_dropped_history_developer_chat",
        C,
        chat(
            [
                {"role": "developer", "content": [txt("Dev"), img(PNG_B)]},
                u([img(PNG_R), txt("Hi")]),
                a("Hello."),
                u(Q),
            ],
            chat_template_kwargs=CH,
        ),
        "image",
        "drop_thinking",
        "chat_mode",
    )
    add(
        "img_input_image_part",
        C,
        chat([u([{"type": "input_image", "image_url": PNG_R}, txt("?")])]),
        "image",
        "content_parts",
    )
    add(
        "img_bad_url",
        C,
        chat([u([{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}])]),
        "image",
        "invalid",
    )
    add(
        "parts_input_text_type",
        C,
        chat([u([{"type": "input_text", "text": "x"}])]),
        "content_parts",
    )
    add(
        "parts_file",
        C,
        chat([u([{"type": "file", "file": {"file_data": "AAAA", "filename": "a.txt"}}])]),
        "content_parts",
        "invalid",
    )
    add(
        "parts_video_url",
        C,
        chat([u([{"type": "video_url", "video_url": {"url": "https://example.com/v.mp4"}}])]),
        "content_parts",
        "invalid",
    )

    # --- roles and fields the normalization refuses or keeps
    add("role_latest_reminder_v41", C, chat([u(Q), {"role": "latest_reminder", "content": "Mon."}]), "role", "invalid")
    add("role_function", C, chat([u(Q), {"role": "function", "name": "f", "content": "x"}]), "role", "invalid")
    add("developer_first", C, chat([{"role": "developer", "content": "Dev."}, u(Q)]), "role")
    add("developer_first_chat", C, chat([{"role": "developer", "content": "Dev."}, u(Q)], chat_template_kwargs=CH), "role")
    add("developer_empty", C, chat([{"role": "developer", "content": ""}, u(Q)]), "role", "invalid")
    add(
        "developer_empty_chat",
        C,
        chat([{"role": "developer", "content": ""}, u(Q)], chat_template_kwargs=CH),
        "role",
        "invalid",
    )
    add(
        "developer_last_empty",
        C,
        chat([u(Q), a("Sure."), {"role": "developer", "content": ""}]),
        "role",
        "invalid",
    )
    add("developer_parts", C, chat([{"role": "developer", "content": [txt("A"), txt("B")]}, u(Q)]), "role", "content_parts")
    add("developer_tools_request", C, chat([{"role": "developer", "content": "Dev."}, u(Q)], tools=WEATHER), "role", "tools")
    add("user_task_title", C, chat([u(Q, task="title")]), "task")
    add("user_task_action_chat", C, chat([u(Q, task="action")], chat_template_kwargs=CH), "task")
    add("assistant_wo_eos", C, chat([u(Q), a("Partial", wo_eos=True)]), "wo_eos")

    # --- tool results merged into user turns; last-user skips tool-result-only turns
    add(
        "tool_result_last",
        C,
        chat([u("Hi"), a("Hello.", reasoning="greet"), u(Q), a(None, reasoning="Need.", tool_calls=[tc(c1)]), tr(c1)]),
        "tool_history",
        "drop_thinking",
    )
    add(
        "tool_result_last_chat",
        C,
        chat(
            [u("Hi"), a("Hello.", reasoning="greet"), u(Q), a(None, reasoning="Need.", tool_calls=[tc(c1)]), tr(c1)],
            chat_template_kwargs=CH,
        ),
        "tool_history",
        "chat_mode",
    )
    add(
        "tool_result_then_assistant_then_user",
        C,
        chat(
            [
                u(Q),
                a(None, reasoning="Need.", tool_calls=[tc(c1)]),
                tr(c1),
                a("18C.", reasoning="Done."),
                u("Thanks"),
            ]
        ),
        "tool_history",
        "drop_thinking",
    )
    add(
        "tool_result_no_request_tools",
        C,
        chat([u(Q), a(None, reasoning="Need.", tool_calls=[tc(c1)]), tr(c1)]),
        "tool_history",
        "drop_thinking",
    )
    add(
        "tool_result_then_user_merged",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), tr(c1), u("And Tokyo?"), u("And Rome?")], tools=BASIC),
        "tool_history",
    )
    add(
        "tool_call_args_string_nonjson",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1, args="not json")]), tr(c1)], tools=BASIC),
        "tool_history",
        "typed_params",
    )
    add(
        "tool_call_args_double_encoded",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1, args='"{\\"city\\": \\"Paris\\"}"')]), tr(c1)], tools=BASIC),
        "tool_history",
        "typed_params",
    )
    add(
        "tool_call_args_list",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1, args="[1, 2]")]), tr(c1)], tools=BASIC),
        "tool_history",
        "typed_params",
    )
    add(
        "tool_call_content_and_reasoning_kept",
        C,
        chat(
            [u(Q), a("Checking.", reasoning="Need.", tool_calls=[tc(c1), tc(c2, "get_time", "{}")]), tr(c1), tr(c2, "12:00")],
            tools=BASIC,
            chat_template_kwargs={"drop_thinking": True},
        ),
        "tool_history",
        "parallel",
    )
    add(
        "tool_message_no_id",
        C,
        chat([u(Q), a(None, tool_calls=[tc(c1)]), {"role": "tool", "content": "x"}], tools=BASIC),
        "tool_history",
        "invalid",
    )

    # --- response_format on system (V4.1 keeps it)
    add(
        "system_response_format_chat",
        C,
        chat([s("Sys.", response_format={"type": "json_object"}), u(Q)], chat_template_kwargs=CH),
        "system",
        "response_format",
    )

    # --- completions (FIM) and ids
    add("cmpl_suffix_basic", P, cmpl("def f(", suffix="    return 1\n"), "completion", "fim")
    add("cmpl_suffix_image_text", P, cmpl("a " + IMG, suffix="b"), "completion", "fim", "image")
    add("cmpl_image_id", P, cmpl([0, IMAGE, 19923]), "completion", "image")
    add("cmpl_plain", P, cmpl("Hello"), "completion")

    # --- Responses and Messages
    R, M = "/v1/responses/render", "/v1/messages/render"
    for eff in ["low", "max", "minimal"]:
        add(f"resp_effort_{eff}", R, {"model": MODEL, "input": Q, "reasoning": {"effort": eff}}, "responses", "reasoning_effort")
    add(
        "resp_kw_effort_int",
        R,
        {"model": MODEL, "input": Q, "chat_template_kwargs": {"reasoning_effort": 42}},
        "responses",
        "reasoning_effort",
    )
    add(
        "resp_instructions",
        R,
        {"model": MODEL, "input": Q, "instructions": "Be brief."},
        "responses",
        "system",
    )
    add(
        "resp_input_image",
        R,
        {
            "model": MODEL,
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "What?"},
                        {"type": "input_image", "image_url": PNG_R},
                    ],
                }
            ],
        },
        "responses",
        "image",
    )
    add(
        "resp_image_text_refused",
        R,
        {"model": MODEL, "input": "see " + IMG},
        "responses",
        "image",
        "invalid",
    )
    add(
        "resp_tools_function_call_output",
        R,
        {
            "model": MODEL,
            "input": [
                {"role": "user", "content": Q},
                {"type": "function_call", "call_id": c1, "name": "get_weather", "arguments": '{"city": "Paris"}'},
                {"type": "function_call_output", "call_id": c1, "output": "18C"},
            ],
            "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
        },
        "responses",
        "tool_history",
    )
    add(
        "msg_basic",
        M,
        {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": Q}]},
        "messages",
    )
    add(
        "msg_system",
        M,
        {"model": MODEL, "max_tokens": 64, "system": "Be brief.", "messages": [{"role": "user", "content": Q}]},
        "messages",
        "system",
    )
    add(
        "msg_image_block",
        M,
        {
            "model": MODEL,
            "max_tokens": 64,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_R.split(",", 1)[1]}},
                        {"type": "text", "text": "What?"},
                    ],
                }
            ],
        },
        "messages",
        "image",
    )
    add(
        "msg_tool_use_result",
        M,
        {
            "model": MODEL,
            "max_tokens": 64,
            "tools": [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
            "messages": [
                {"role": "user", "content": Q},
                {"role": "assistant", "content": [{"type": "tool_use", "id": c1, "name": "get_weather", "input": {"city": "Paris"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": c1, "content": "18C"}]},
            ],
        },
        "messages",
        "tool_history",
    )
    add(
        "msg_output_config_effort_low",
        M,
        {
            "model": MODEL,
            "max_tokens": 64,
            "output_config": {"effort": "low"},
            "messages": [{"role": "user", "content": Q}],
        },
        "messages",
        "reasoning_effort",
    )
    add(
        "msg_image_text_refused",
        M,
        {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "x " + IMG}]},
        "messages",
        "image",
        "invalid",
    )
    return out


# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--vllm", required=True, help="base URL of the running `vllm launch render`")
    ap.add_argument(
        "--model-dir", help="the deepseek_v41 model dir; default: tests/models/deepseek_v41"
    )
    ap.add_argument("--out", default=str(HERE / "pending" / "deepseek_v41"))
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
        for name, endpoint, body, tags in ported_render_cases() + v41_render_cases():
            rec.render(name, endpoint, body, tags)
    if args.only in ("all", "reask"):
        reask_qwen3_hermes(rec)
    print(f"{CONFIG}: ", end="")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_cases(rec.cases, out / "goldens.jsonl.gz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
