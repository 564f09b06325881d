"""Tool strict levels in render answers: `--tool-strict-level`, `strict: true` tools under
`tool_choice: "auto"`, `parallel_tool_calls: false`, and the OR of the tool tag with the
request's own structured outputs (vLLM 0.33's `_apply_structural_tag`; the exact tags are
pinned against vLLM's code in rust/core/tests/strict_tags.rs)."""

from __future__ import annotations

import json

import httpx
import pytest

from derender import DEFAULT_MODEL_DIR, Derenderer
from derender.cli import build_parser, config_from_args

CHAT = "/v1/chat/completions/render"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def hermes(level: str | None = None) -> Derenderer:
    return Derenderer(
        str(DEFAULT_MODEL_DIR),
        served_model_names=["qwen3"],
        reasoning_parser="qwen3",
        tool_call_parser="hermes",
        enable_auto_tool_choice=True,
        tool_strict_level=level,
    )


def structured(core: Derenderer, **fields) -> dict | None:
    body = {"messages": [{"role": "user", "content": "weather?"}], **fields}
    status, out = core.handle(CHAT, json.dumps(body).encode(), "application/json", None)
    assert status == 200, out
    return json.loads(out)["sampling_params"].get("structured_outputs")


def tag(so: dict) -> dict:
    return json.loads(so["structural_tag"])["format"]


@pytest.fixture(scope="module")
def default() -> Derenderer:
    return hermes()


def test_auto_is_free_unless_a_tool_is_strict(default):
    assert structured(default, tools=[WEATHER]) is None
    strict = {**WEATHER, "function": {**WEATHER["function"], "strict": True}}
    fmt = tag(structured(default, tools=[strict]))
    assert fmt["type"] == "triggered_tags" and fmt["triggers"] == ["<tool_call>"]
    # The strict tool pins its arguments.
    assert fmt["tags"][0]["content"]["json_schema"] == WEATHER["function"]["parameters"]


def test_a_single_call_constrains_auto_and_stops_after_one(default):
    fmt = tag(structured(default, tools=[WEATHER], parallel_tool_calls=False))
    assert fmt["stop_after_first"] is True
    # FUNCTION level: the envelope only, the arguments stay free.
    assert fmt["tags"][0]["content"]["json_schema"] is True


def test_auto_with_a_response_format_is_the_or_of_both(default):
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    rf = {"type": "json_schema", "json_schema": {"name": "a", "schema": schema}}
    # Without a tag the request's format goes through, as the full params object.
    so = structured(default, tools=[WEATHER], response_format=rf)
    assert so["json"] == schema and so["structural_tag"] is None and so["_backend"] is None
    strict = {**WEATHER, "function": {**WEATHER["function"], "strict": True}}
    fmt = tag(structured(default, tools=[strict], response_format=rf))
    assert fmt["type"] == "or"
    calls, answer = fmt["elements"]
    # The tools branch must call (`required`); the format branch is the answer.
    assert calls["type"] == "tags_with_separator" and calls["at_least_one"] is True
    assert answer == {
        "type": "json_schema",
        "json_schema": schema,
        "style": "json",
        "any_order": False,
        "max_whitespace_cnt": None,
        "excludes": [],
    }


def test_a_format_xgrammar_refuses_leaves_the_tools_free(default):
    strict = {**WEATHER, "function": {**WEATHER["function"], "strict": True}}
    so = structured(default, tools=[strict], structured_outputs={"regex": "(?<=a)b"})
    assert so["regex"] == "(?<=a)b" and so["structural_tag"] is None


def test_the_server_level_constrains_every_request_with_tools():
    core = hermes("parameter")
    fmt = tag(structured(core, tools=[WEATHER]))
    assert fmt["tags"][0]["content"]["json_schema"] == WEATHER["function"]["parameters"]
    # `none` and no tools stay free.
    assert structured(core, tools=[WEATHER], tool_choice="none") is None
    assert structured(core) is None


def test_unknown_levels_are_refused():
    with pytest.raises(ValueError, match="Unknown tool strict level"):
        hermes("loose")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--tool-strict-level", "loose"])
    args = build_parser().parse_args(["serve", "m", "--tool-strict-level", "function"])
    assert config_from_args(args).tool_strict_level == "function"


def test_derender_serve_takes_the_flag(server_factory):
    server = server_factory(["--tool-strict-level", "function"])
    body = {"messages": [{"role": "user", "content": "weather?"}], "tools": [WEATHER]}
    out = httpx.post(server.url + CHAT, json=body, timeout=30).json()
    fmt = tag(out["sampling_params"]["structured_outputs"])
    assert fmt["type"] == "triggered_tags" and fmt["tags"][0]["content"]["json_schema"] is True
