"""Print the model outputs of vLLM's own DeepSeek-V4.1 parser test
(tests/parser/engine/test_deepseek_v41.py; vLLM has no separate V4.1 tool-parser test) in
tests/reference/unseen/vllm_parser_outputs.json's schema, plus V4's parser-test outputs
(tests/reference/unseen/deepseek_v4_outputs.py) respelled the V4.1 way, which the V4.1
parser (V4's engine with spaced names, vllm/parser/deepseek_v41.py) must read as V4's read
them. The strings are built with the test's own CALLS constant and raw parameter text,
transcribed. Written to vllm_parser_outputs.json beside this file:

    python3 deepseek_v41_outputs.py > vllm_parser_outputs.json
"""

import importlib.util
import io
import json
from contextlib import redirect_stdout
from pathlib import Path

D = "｜DSML｜"
TC, TCE = f"<{D} calls>", f"</{D} calls>"
INV, INVE = f'<{D} invoke name="', f"</{D} invoke>"
PS, PE = f"<{D} parameter", f"</{D} parameter>"
TE = "</think>"

# test_deepseek_v41.py CALLS
CALLS = (
    f'\n\n{TC}\n{INV}get_weather">\n'
    f'{PS} name="city" string="true">杭州{PE}\n'
    f'{PS} name="count" string="false">42{PE}\n'
    f'{INVE}\n{INV}add">\n'
    f'{PS} name="x" string="false">1.5{PE}\n'
    f'{PS} name="y" string="false">2.25{PE}\n'
    f"{INVE}\n{TCE}"
)
# test_python_argument_conversion_and_partial_values raw parameters
RAW = (
    f'{PS} name="object" string="false">{{"a": [true, null]}}{PE}'
    f'{PS} name="bad" string="false">[broken{PE}'
    f'{PS} name="bare">7{PE}'
    f'{PS} name="text" string="true">  a<b'
)


def fn(name, props):
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": props}},
    }


S, N = {"type": "string"}, {"type": "number"}
TOOLS = [
    fn("get_weather", {"city": S, "count": {"type": "integer"}}),
    fn("add", {"x": N, "y": N}),
    fn("f", {"object": {"type": "object"}, "bad": {}, "bare": {}, "text": S}),
]
v41_tool_outputs = [
    ("parallel_calls_thinking", "Plan." + TE + "Checking." + CALLS),
    ("parallel_calls_chat", "Checking." + CALLS),
    ("complete_output_thinking", "Plan." + TE + CALLS),
    ("complete_output_chat", CALLS),
]
v41_arg_outputs = [
    ("arg_conversion_partial", f'\n\n{TC}\n{INV}f">\n' + RAW, False),
    ("arg_conversion_complete", f'\n\n{TC}\n{INV}f">\n' + RAW + f"{PE}\n{INVE}\n{TCE}", True),
]
reasoning_outputs = [
    ("controls_plain", "12"),
    ("controls_bare_end", TE + "12"),
    ("controls_reasoning", "Plan." + TE + "12"),
]
CONTROLS = {
    "base": {},
    "thinking_off": {"chat_template_kwargs": {"thinking": False}},
    "enable_thinking_off": {"chat_template_kwargs": {"enable_thinking": False}},
    "thinking_on_effort_none": {
        "chat_template_kwargs": {"thinking": True, "reasoning_effort": "none"}
    },
    "effort_int_50": {"chat_template_kwargs": {"reasoning_effort": 50}},
}


def _v4_data() -> dict:
    path = Path(__file__).resolve().parents[2] / "unseen" / "deepseek_v4_outputs.py"
    if not path.exists():  # after activation this file sits beside deepseek_v4_outputs.py
        path = Path(__file__).resolve().parent / "deepseek_v4_outputs.py"
    spec = importlib.util.spec_from_file_location("dsv4_outputs", path)
    buf = io.StringIO()
    with redirect_stdout(buf):
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    return json.loads(buf.getvalue())


def respell(text: str) -> str:
    for name, new in (("tool_calls", " calls"), ("invoke", " invoke"), ("parameter", " parameter")):
        text = text.replace(f"<{D}{name}", f"<{D}{new}").replace(f"</{D}{name}>", f"</{D}{new}>")
    return text


v4 = _v4_data()
V4_TOOLS = "deepseek_v41_v4_tests"
families = [
    {
        "family": "deepseek_v41_engine",
        "kind": "tool",
        "source": "tests/parser/engine/test_deepseek_v41.py",
        "configs": ["deepseek_v41"],
        "tools": "deepseek_v41",
        "variants": {"tools_auto": {}, "tools_auto_thinking_off": CONTROLS["thinking_off"]},
        "outputs": [{"name": n, "text": t} for n, t in v41_tool_outputs]
        + [{"name": n, "text": t, "eos": e} for n, t, e in v41_arg_outputs],
    },
    {
        "family": "deepseek_v41_engine",
        "kind": "reasoning",
        "source": "tests/parser/engine/test_deepseek_v41.py (no tools)",
        "configs": ["deepseek_v41"],
        "variants": CONTROLS,
        "outputs": [{"name": n, "text": t} for n, t in reasoning_outputs + v41_tool_outputs[:2]],
    },
]
for fam in v4["families"]:
    fam = json.loads(json.dumps(fam))
    fam["family"] = fam["family"].replace("deepseek_v4", "deepseek_v41_from_v4")
    fam["source"] += " (respelled for V4.1)"
    fam["configs"] = ["deepseek_v41"]
    if "tools" in fam:
        fam["tools"] = V4_TOOLS
    for out in fam["outputs"]:
        out["text"] = respell(out["text"])
    families.append(fam)
data = {
    "about": "Model outputs of vLLM's own DeepSeek-V4.1 parser test (github.com/vllm-project/vllm "
    "tests/parser/engine/test_deepseek_v41.py, the stored version read through the code index), "
    "and V4's parser-test outputs (deepseek_v4_outputs.py) respelled with V4.1's spaced DSML names, "
    "for config deepseek_v41; tools: the properties the outputs use.",
    "tools": {"deepseek_v41": TOOLS, V4_TOOLS: v4["tools"]["deepseek_v4"]},
    "families": families,
}
print(json.dumps(data, ensure_ascii=False, indent=1))
