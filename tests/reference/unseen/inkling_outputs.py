"""Print the model outputs of vLLM's own Inkling parser test
(github.com/vllm-project/vllm tests/parser/engine/test_inkling.py, the stored version read
through the code index; vLLM has no separate Inkling tool- or reasoning-parser test) in
tests/reference/unseen/vllm_parser_outputs.json's schema, for config inkling. The strings are
the test's own, transcribed (its `_tool_block(name, args)` helper is `tool_block` here; the
test feeds the parser the generated text with the `<|message_model|>` generation prompt, as
vLLM's own render ends, so each output is recorded under a chat request with and without
tools). The unseen Recorder appends the end token (<|content_model_end_sampling|>, 200006)
unless an output says "eos": false (the test's truncated calls). Written beside this file:

    python3 inkling_outputs.py > vllm_parser_outputs.json
"""

import json

MSG_MODEL = "<|message_model|>"
TEXT_START = "<|content_text|>"
THINK_START = "<|content_thinking|>"
TOOL_JSON = "<|content_invoke_tool_json|>"
TOOL_TEXT = "<|content_invoke_tool_text|>"
TOOL_ERROR = "<|content_tool_error|>"
END_MESSAGE = "<|end_message|>"
END_SAMPLING = "<|content_model_end_sampling|>"


def tool_block(name: str, args: str) -> str:
    return f'{TOOL_JSON}{{"name":"{name}","args":{args}}}{END_MESSAGE}'


def fn(name, props):
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": props}},
    }


S = {"type": "string"}
TOOLS = [
    fn("get_weather", {"city": S, "x": {"type": "integer"}}),
    fn("f", {"a": {"type": "integer"}, "x": {"type": "array"}}),
    fn("g", {"b": {}}),
    fn("a", {"i": {"type": "integer"}}),
    fn("b", {"i": {"type": "integer"}, "x": {"type": "array"}}),
    fn("d", {"k": S}),
    fn("search_documents_by_keyword", {}),
]

# (name, text, eos?) per test, in the test file's order
OUTPUTS = [
    # TestNonStreaming
    ("bare_text", "hello world", True),
    ("bare_text_end_message", f"hello world{END_MESSAGE}", True),
    ("bare_text_end_sampling", f"hello world{END_SAMPLING}", False),
    ("plain_text", f"{TEXT_START}hello world{END_MESSAGE}", True),
    (
        "reasoning_text_tool",
        f"{THINK_START}I should check the weather.{END_MESSAGE}"
        f"{MSG_MODEL}{TEXT_START}Let me check.{END_MESSAGE}"
        f"{MSG_MODEL}" + tool_block("get_weather", '{"city":"SF"}'),
        True,
    ),
    ("tool_header_name", "get_weather" + tool_block("get_weather", '{"city":"SF"}'), True),
    ("parallel_tool_calls", tool_block("a", "{}") + MSG_MODEL + tool_block("b", '{"x":[1,2]}'), True),
    ("nested_args", tool_block("f", '{"q":{"deep":{"list":[{"k":"v"}]}},"s":"a}b"}'), True),
    ("invoke_tool_text", f"{TOOL_TEXT}do something{END_MESSAGE}", True),
    ("tool_error", f"{TOOL_ERROR}boom{END_MESSAGE}", True),
    ("end_sampling_closes_blocks", f"{THINK_START}hm{END_MESSAGE}{MSG_MODEL}{TEXT_START}hi{END_SAMPLING}", False),
    (
        "multiple_reasoning_blocks",
        f"{THINK_START}one{END_MESSAGE}{MSG_MODEL}{TEXT_START}mid{END_MESSAGE}"
        f"{MSG_MODEL}{THINK_START}two{END_MESSAGE}",
        True,
    ),
    ("text_after_tool_call", tool_block("f", "{}") + f"{MSG_MODEL}{TEXT_START}done{END_MESSAGE}", True),
    ("incomplete_tool_call", f'{TOOL_JSON}{{"name":"d","args":{{"k":"v"', False),
    ("prose_marker", f"{TEXT_START}see {TEXT_START} token{END_MESSAGE}", True),
    # TestStreaming
    (
        "chunk_invariance_tool_call",
        f"{TEXT_START}Check this.{END_MESSAGE}{MSG_MODEL}" + tool_block("get_weather", '{"city":"San Francisco"}'),
        True,
    ),
    ("chunk_invariance_reasoning", f"{THINK_START}thinking...{END_MESSAGE}{MSG_MODEL}{TEXT_START}answer{END_MESSAGE}", True),
    ("split_marker", f"{TEXT_START}hello{END_MESSAGE}", True),
    ("name_before_args", f'{TOOL_JSON}{{"name":"get_weather",', False),
    (
        "reasoning_to_tool_handoff",
        f"{THINK_START}thinking{END_MESSAGE}get_weather"
        f'{TOOL_JSON}{{"name":"get_weather","args":{{"city":"Seattle"}}}}{END_MESSAGE}',
        True,
    ),
    ("streamed_args_object_only", tool_block("f", '{"a":1}'), True),
    ("parallel_calls_streaming", tool_block("a", '{"i":1}') + MSG_MODEL + tool_block("b", '{"i":2}'), True),
    # TestToolCallFiltering (also recorded with tool_choice none)
    (
        "skip_tool_parsing_round_trip",
        f"{THINK_START}plan{END_MESSAGE}{MSG_MODEL}" + tool_block("f", '{"a":1}') + MSG_MODEL + tool_block("g", '{"b":[2]}'),
        True,
    ),
    (
        "tool_choice_none",
        f"{THINK_START}plan{END_MESSAGE}{MSG_MODEL}{TEXT_START}visible{END_MESSAGE}{MSG_MODEL}" + tool_block("f", '{"a":1}'),
        True,
    ),
    # TestDelegatingTwoPass
    ("delegating_plain_text", f"{TEXT_START}The answer is 42.{END_MESSAGE}", True),
    ("delegating_reasoning_then_text", f"{THINK_START}plan{END_MESSAGE}{MSG_MODEL}{TEXT_START}Let me look.{END_MESSAGE}", True),
    ("delegating_multi_tool", tool_block("f", '{"a":1}') + MSG_MODEL + tool_block("g", '{"b":2}'), True),
    ("delegating_text_then_tool", f"{TEXT_START}intro{END_MESSAGE}{MSG_MODEL}" + tool_block("f", "{}"), True),
    ("delegating_tool_then_text", tool_block("f", "{}") + MSG_MODEL + f"{TEXT_START}done{END_MESSAGE}", True),
    (
        "delegating_two_tools_then_text",
        tool_block("f", "{}") + MSG_MODEL + tool_block("g", "{}") + MSG_MODEL + f"{TEXT_START}after{END_MESSAGE}",
        True,
    ),
    ("delegating_reasoning_then_tool", f"{THINK_START}think{END_MESSAGE}{MSG_MODEL}" + tool_block("f", '{"x":1}'), True),
    ("delegating_end_sampling_text", f"{TEXT_START}hi{END_SAMPLING}", False),
    ("delegating_end_sampling_tool", f'{TOOL_JSON}{{"name":"f","args":{{}}}}{END_SAMPLING}', False),
    (
        "delegating_function_name_after_reasoning",
        f"{THINK_START} context.{END_MESSAGE}{MSG_MODEL}search_documents_by_keyword"
        + tool_block("search_documents_by_keyword", "{}"),
        True,
    ),
    *[
        (f"delegating_visible_then_tool_{label}", f"{opener}let me check{END_MESSAGE}{MSG_MODEL}" + tool_block("get_weather", '{"city":"SF"}'), True)
        for label, opener in (("text", TEXT_START), ("tool_text", TOOL_TEXT), ("tool_error", TOOL_ERROR))
    ],
    ("delegating_tool_from_header", tool_block("get_weather", '{"city":"Seattle"}'), True),
    ("delegating_header_before_tool", "someFn" + tool_block("get_weather", '{"city":"Seattle"}'), True),
    ("delegating_content_state_tool", f"{TEXT_START}intro{END_MESSAGE}" + tool_block("get_weather", '{"city":"Seattle"}'), True),
    # module-level engine tests
    ("tool_then_after", f'{TOOL_JSON}{{"name":"f","args":{{}}}}{END_MESSAGE}after', True),
    # TestCountReasoningTokens
    ("count_reasoning", f"{THINK_START}abc{END_MESSAGE}", True),
    ("count_reasoning_then_text", f"{THINK_START}abc{END_MESSAGE}{MSG_MODEL}{TEXT_START}hello{END_MESSAGE}", True),
    ("count_reasoning_then_hi", f"{THINK_START}abc{END_MESSAGE}{MSG_MODEL}{TEXT_START}hi{END_MESSAGE}", True),
    # TestPromptSeededState
    ("header_flush_bare_text", "plain answer", True),
]


def main() -> None:
    outs = [{"name": n, "text": t, **({} if eos else {"eos": False})} for n, t, eos in OUTPUTS]
    data = {
        "about": "Model outputs of vLLM's own Inkling parser test (github.com/vllm-project/vllm "
        "tests/parser/engine/test_inkling.py, the stored version read through the code index), for "
        "config inkling; tools: the names and properties the outputs use.",
        "tools": {"inkling": TOOLS},
        "families": [
            {
                "family": "inkling_engine",
                "kind": "tool",
                "source": "tests/parser/engine/test_inkling.py",
                "configs": ["inkling"],
                "tools": "inkling",
                "variants": {"tools_auto": {}},
                "outputs": outs,
            },
            {
                "family": "inkling_engine_tool_choice_none",
                "kind": "tool",
                "source": "tests/parser/engine/test_inkling.py",
                "configs": ["inkling"],
                "tools": "inkling",
                "variants": {"tools_none": {"tool_choice": "none"}},
                "outputs": [o for o in outs if o["name"] in ("tool_choice_none", "skip_tool_parsing_round_trip")],
            },
            {
                "family": "inkling_engine",
                "kind": "reasoning",
                "source": "tests/parser/engine/test_inkling.py",
                "configs": ["inkling"],
                "variants": {"no_tools": {}},
                "outputs": outs,
            },
        ],
    }
    print(json.dumps(data, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
