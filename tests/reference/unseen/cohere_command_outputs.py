"""Print the model outputs of vLLM's own Cohere Command parser tests in
tests/reference/unseen/vllm_parser_outputs.json's schema, for the cohere_command4 and
cohere_command3 configs (both parsers read every output: the two melody presets differ on
<|START_TEXT|> and on an output with no markers). Transcribed from (github.com/vllm-project/vllm,
the stored versions read through the code index):

- tests/parser/cohere/test_tool_calls.py: SINGLE_TOOL_CALL, MULTI_TOOL_CALL,
  CITATIONS_NO_TOOL_CALL (with <|START_TEXT|> for cmd4, <|START_RESPONSE|> for cmd3), reasoning_only;
  DUMMY_TOOLS foo / bar with parameters {"type": "object"};
- tests/parser/cohere/test_reasoning.py: the same tool-call and citation outputs (no tools), and
  TestFramingTokensStripped's generation in both spellings;
- tests/parser/cohere/test_citations.py: TestParserStreamingEndToEnd._MODEL_OUTPUT;
- tests/reasoning/test_cohere_command_reasoning_parser.py (the file before the parser moved to
  vllm/parser/cohere_command.py): the same REASONING_CASES outputs.

    python3 cohere_command_outputs.py > vllm_parser_outputs.json
"""

import json

SINGLE_TOOL_CALL = """\
<|START_THINKING|> i will call foo with query1<|END_THINKING|><|START_ACTION|>
[
    {"tool_call_id": "0", "tool_name": "foo", "parameters": {"query": "query1"}}
]
<|END_ACTION|>"""
MULTI_TOOL_CALL = """\
<|START_THINKING|>first I think about foo<|END_THINKING|><|START_ACTION|>
[
    {"tool_call_id": "0", "tool_name": "foo", "parameters": {"query": "query1"}},
    {"tool_call_id": "1", "tool_name": "bar", "parameters": {"x": 42}}
]
<|END_ACTION|>"""
CITATIONS = (
    "<|START_THINKING|>This is a rainbow <co>emoji: 🌈</co: 0:[1]><|END_THINKING|>\n"
    "<|START_{tag}|>foo <co>bar</co: 0:[1,2],1:[3,4]><|END_{tag}|>"
)
FRAMING = (
    "<|START_THINKING|>Think deeply. The user greets us.<|END_THINKING|>"
    "<|START_{tag}|>I'm doing well, thank you<|END_{tag}|>"
)
E2E = (
    "<|START_THINKING|>Let me check.<|END_THINKING|>"
    "<|START_RESPONSE|>The capital is <co>Paris</co: 0:[1]>.<|END_RESPONSE|>"
)
OUTPUTS = [
    {"name": "single_tool_call", "text": SINGLE_TOOL_CALL},
    {"name": "multiple_tool_calls", "text": MULTI_TOOL_CALL},
    {"name": "citations_text", "text": CITATIONS.format(tag="TEXT")},
    {"name": "citations_response", "text": CITATIONS.format(tag="RESPONSE")},
    {"name": "reasoning_only", "text": "<|START_THINKING|>just think, no response<|END_THINKING|>"},
    {"name": "framing_text", "text": FRAMING.format(tag="TEXT")},
    {"name": "framing_response", "text": FRAMING.format(tag="RESPONSE")},
    {"name": "citations_e2e", "text": E2E},
    {"name": "single_tool_call_no_eos", "text": SINGLE_TOOL_CALL, "eos": False},
]
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in ("foo", "bar")
]


def families() -> list[dict]:
    out = []
    for config, kw in (("cohere_command4", None), ("cohere_command3", {"cohere_format": "cmd3"})):
        def v(extra: dict | None = None) -> dict:
            d: dict = {}
            if kw or extra:
                d["chat_template_kwargs"] = {**(kw or {}), **(extra or {})}
            return d

        base = {"tools_auto": v()}
        out.append(
            {
                "family": config,
                "kind": "tool",
                "source": "tests/parser/cohere/test_tool_calls.py, test_reasoning.py, test_citations.py",
                "configs": [config],
                "tools": "cohere_command",
                "variants": {**base, "tools_auto_reasoning_disabled": v({"reasoning_type": "disabled"})},
                "outputs": OUTPUTS,
            }
        )
        out.append(
            {
                "family": config,
                "kind": "reasoning",
                "source": "tests/parser/cohere/test_reasoning.py, test_citations.py (no tools)",
                "configs": [config],
                "tools": "",
                "variants": {"base": v()},
                "outputs": OUTPUTS,
            }
        )
    return out


if __name__ == "__main__":
    print(
        json.dumps(
            {
                "about": "Model outputs of vLLM's own Cohere Command parser tests (tests/parser/cohere/*.py and "
                "the older tests/reasoning/test_cohere_command_reasoning_parser.py, github.com/vllm-project/vllm, "
                "read through the code index), for configs cohere_command4 and cohere_command3; tools: the tests' "
                "DUMMY_TOOLS.",
                "tools": {"cohere_command": TOOLS},
                "families": families(),
            },
            ensure_ascii=False,
            indent=1,
        )
    )
