"""Print the model outputs of vLLM's own DeepSeek-V4 parser tests in
tests/reference/unseen/vllm_parser_outputs.json's schema (its `deepseek_v4` tools and families, which
were merged from this output; `unseen/record.py` records them). The strings are built
with the tests' own helpers (build_tool_call, _param, _invoke, _tool_calls), transcribed."""

import json
from pathlib import Path

D = "｜DSML｜"
TC, TCE = f"<{D}tool_calls>", f"</{D}tool_calls>"
INV, NAME_END, INVE = f'<{D}invoke name="', '">', f"</{D}invoke>"
PS, PE = f'<{D}parameter name="', f"</{D}parameter>"
TS, TE = "<think>", "</think>"


def build_tool_call(name, params):  # tests/tool_parsers/test_deepseekv4_tool_parser.py
    p = "".join(f'{PS}{k}" string="true">{v}{PE}\n' for k, v in params.items())
    return f'{TC}\n{INV}{name}">\n{p}{INVE}\n{TCE}'


def _param(n, s, v):  # tests/parser/engine/test_deepseek_v4.py
    return f'{PS}{n}" string="{s}">{v}{PE}'


def _invoke(name, *params):
    body = "\n".join(_param(*p) for p in params)
    return f"{INV}{name}{NAME_END}\n{body}\n{INVE}"


def _tool_calls(*invokes):
    return TC + "\n".join(invokes) + TCE


def fn(name, props):
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": props}},
    }


S = {"type": "string"}
TOOLS = [
    fn("get_weather", {"location": S, "unit": S, "units": S}),
    fn("get_time", {"timezone": S}),
    fn("search", {"query": S}),
    fn("func", {}),
    fn("f", {k: {} for k in "city msg count ratio flag items opts data val n".split()}),
]
VARIANTS = {"base": {}, "thinking_off": {"chat_template_kwargs": {"thinking": False}}}
tool_outputs = [
    (
        "extract_tool_calls",
        "Let me check. "
        + build_tool_call("get_weather", {"location": "Beijing", "unit": "celsius"}),
    ),
    (
        "function_calls_block_not_accepted",
        build_tool_call("search", {"query": "vllm"}).replace("tool_calls", "function_calls"),
    ),
    ("streaming_extracts_complete_invokes", build_tool_call("search", {"query": "deepseek v4"})),
]
weather_nyc = _invoke("get_weather", ("location", "true", "NYC"))
engine_outputs = [
    (
        "arg_converter_types",
        _tool_calls(
            _invoke(
                "f",
                ("city", "true", "杭州"),
                ("msg", "true", 'He said "hello world"'),
                ("count", "false", "42"),
                ("ratio", "false", "3.14"),
                ("flag", "false", "true"),
                ("items", "false", '["a", "b", "c"]'),
                ("opts", "false", '{"key": "val"}'),
                ("data", "false", "[broken"),
                ("val", "false", "null"),
                ("n", "true", "42"),
            )
        ),
    ),
    ("bare_think_end_not_leaked", TE + "Here is the direct answer."),
    ("duplicate_think_start_absorbed", TS + "\nSome reasoning.\n" + TE + "\nAnswer."),
    (
        "missing_invoke_end",
        f"{TC}{INV}get_weather{NAME_END}\n{_param('location', 'true', 'NYC')}\n{TCE}",
    ),
    (
        "missing_invoke_end_trailing_content",
        f"{TC}{INV}get_weather{NAME_END}\n{_param('location', 'true', 'NYC')}\n{TCE}Done.",
    ),
    (
        "reasoning_without_tags",
        "\n\nLet me consider this carefully.\n" + TE + "\nHere is the result.",
    ),
    ("all_reasoning_no_end_tag", "I'll review the PR."),
    ("implicit_reasoning_end", "Let me look up the weather.\n\n" + _tool_calls(weather_nyc)),
    (
        "implicit_reasoning_end_stream",
        "Let me check.\n\n"
        + TC
        + INV
        + "get_weather"
        + NAME_END
        + "\n"
        + _param("location", "true", "NYC")
        + "\n"
        + INVE
        + TCE,
    ),
    (
        "explicit_think_then_tool_call",
        TS + "Let me check the weather." + TC + INV + "get_weather" + NAME_END,
    ),
    (
        "parallel_after_implicit_end",
        "I need both.\n\n"
        + _tool_calls(weather_nyc, _invoke("get_time", ("timezone", "true", "EST"))),
    ),
    ("implicit_end_trailing_whitespace", "Reasoning.\n\n\n" + TC + INV + "func" + NAME_END),
    (
        "unwrap_parallel_all_props",
        _tool_calls(
            _invoke(
                "get_weather", ("arguments", "false", '{"location": "NYC", "unit": "celsius"}')
            ),
            _invoke("get_time", ("timezone", "true", "EST")),
        ),
    ),
    (
        "unwrap_parallel_subset_props",
        _tool_calls(
            _invoke("get_weather", ("arguments", "false", '{"location": "NYC"}')),
            _invoke("get_time", ("timezone", "true", "EST")),
        ),
    ),
    (
        "no_unwrap_parallel_no_match",
        _tool_calls(
            _invoke("get_weather", ("arguments", "false", '{"unknown_key": "val"}')),
            _invoke("get_time", ("timezone", "true", "EST")),
        ),
    ),
    (
        "unwrap_single_tool",
        _tool_calls(_invoke("get_weather", ("arguments", "false", '{"location": "Beijing"}'))),
    ),
    (
        "delegating_large_delta",
        "The user wants the current weather in Berlin."
        + TE
        + "\n\n"
        + TC
        + "\n"
        + INV
        + "get_weather"
        + NAME_END
        + "\n"
        + _param("location", "true", "Berlin")
        + "\n"
        + _param("units", "true", "celsius")
        + "\n"
        + INVE
        + "\n"
        + TCE,
    ),
    (
        "eos_drop_token",
        "The user wants weather."
        + TE
        + "\n\n"
        + TC
        + "\n"
        + INV
        + "get_weather"
        + NAME_END
        + "\n"
        + _param("location", "true", "Berlin")
        + "\n"
        + INVE
        + "\n"
        + TCE,
    ),
]
data = {
    "about": "Model outputs of vLLM's own DeepSeek-V4 parser tests (github.com/vllm-project/vllm, paths in 'source'; the stored versions of those files, read through the code index), for config deepseek_v4; tools: string-typed tools named after the functions the outputs call, with the properties the tests' schemas declare (get_weather location/unit as in TestParallelUnwrapping, plus units; get_time timezone), so the arguments/input unwrap is exercised.",
    "tools": {"deepseek_v4": TOOLS},
    "families": [
        {
            "family": "deepseek_v4",
            "kind": "tool",
            "source": "tests/tool_parsers/test_deepseekv4_tool_parser.py",
            "configs": ["deepseek_v4"],
            "tools": "deepseek_v4",
            "variants": {"tools_auto": {}, "tools_auto_thinking_off": VARIANTS["thinking_off"]},
            "outputs": [{"name": n, "text": t} for n, t in tool_outputs],
        },
        {
            "family": "deepseek_v4_engine",
            "kind": "tool",
            "source": "tests/parser/engine/test_deepseek_v4.py",
            "configs": ["deepseek_v4"],
            "tools": "deepseek_v4",
            "variants": {"tools_auto": {}, "tools_auto_thinking_off": VARIANTS["thinking_off"]},
            "outputs": [{"name": n, "text": t} for n, t in engine_outputs],
        },
        {
            "family": "deepseek_v4_engine",
            "kind": "reasoning",
            "source": "tests/parser/engine/test_deepseek_v4.py (no tools)",
            "configs": ["deepseek_v4"],
            "variants": VARIANTS,
            "outputs": [{"name": n, "text": t} for n, t in engine_outputs],
        },
    ],
}
print(json.dumps(data, ensure_ascii=False, indent=1))
