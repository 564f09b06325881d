"""Record vLLM's answers to `/v1/messages/render` (Anthropic Messages -> GenerateRequest).

Start `vllm launch render` for one config of configs.json (its model, served name and
flags), then run

    python3 record_messages_render.py --url http://127.0.0.1:PORT --config qwen3_hermes

It posts every case below and merges the answers (status + body) into
messages_render.jsonl.gz beside this file, replacing that config's earlier records.
tests/test_messages_render.py replays them against derender.
"""

from __future__ import annotations

import argparse
import gzip
import json
import urllib.error
import urllib.request
from pathlib import Path

CORPUS = Path(__file__).with_name("messages_render.jsonl.gz")
ROUTE = "/v1/messages/render"

BILLING = "x-anthropic-billing-header: cc_version=1.0; cch=abc123"
WEATHER = {
    "name": "get_weather",
    "description": "Get the weather for a city",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
TIME = {"name": "get_time", "input_schema": {"properties": {"tz": {"type": "string"}}}}
HI = [{"role": "user", "content": "Hello there"}]
TOOL_TURN = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me check."},
            {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "Sunny, 22C"}],
    },
]


def base(model: str, **extra) -> dict:
    return {"model": model, "max_tokens": 256, "messages": HI, **extra}


def cases(model: str) -> list[tuple[str, object]]:
    """(id, body) pairs; a str body is sent as is (raw bytes)."""
    c: list[tuple[str, object]] = [
        ("basic", base(model)),
        ("no_model_name_check_empty_messages", {"model": model, "max_tokens": 10, "messages": []}),
        ("system_string", base(model, system="You are terse.")),
        (
            "system_blocks",
            base(
                model,
                system=[
                    {"type": "text", "text": "Be kind. "},
                    {"type": "text", "text": "Be brief."},
                ],
            ),
        ),
        (
            "system_billing_header",
            base(
                model,
                system=[
                    {"type": "text", "text": BILLING},
                    {"type": "text", "text": "You are Claude Code."},
                ],
            ),
        ),
        ("system_only_billing", base(model, system=[{"type": "text", "text": BILLING}])),
        ("system_billing_string", base(model, system=BILLING + " trailing")),
        ("system_empty_string", base(model, system="")),
        (
            "inline_system",
            base(
                model,
                system="Top.",
                messages=[
                    {"role": "user", "content": "one"},
                    {"role": "assistant", "content": "two"},
                    {"role": "system", "content": "Reminder: be brief."},
                    {"role": "user", "content": "three"},
                ],
            ),
        ),
        (
            "inline_system_blocks_billing",
            base(
                model,
                messages=[
                    {"role": "user", "content": "one"},
                    {
                        "role": "system",
                        "content": [
                            {"type": "text", "text": BILLING},
                            {"type": "text", "text": "Inline "},
                            {"type": "text", "text": "rules."},
                        ],
                    },
                    {"role": "user", "content": "two"},
                ],
            ),
        ),
        (
            "inline_system_only_billing",
            base(
                model,
                messages=[
                    {"role": "user", "content": "one"},
                    {"role": "system", "content": BILLING},
                    {"role": "user", "content": "two"},
                ],
            ),
        ),
        (
            "text_blocks",
            base(
                model,
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "Part A"},
                            {"type": "text", "text": "Part B"},
                        ],
                    }
                ],
            ),
        ),
        (
            "single_text_block",
            base(model, messages=[{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]),
        ),
        (
            "empty_text_block_user",
            base(
                model,
                messages=[
                    {"role": "user", "content": "a"},
                    {"role": "assistant", "content": "b"},
                    {"role": "user", "content": [{"type": "text", "text": ""}]},
                ],
            ),
        ),
        (
            "image_base64",
            base(
                model,
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": "iVBORw0KGgo=",
                                },
                            },
                            {"type": "text", "text": "What is this?"},
                        ],
                    }
                ],
            ),
        ),
        (
            "thinking_history",
            base(
                model,
                messages=[
                    {"role": "user", "content": "2+2?"},
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "thinking", "thinking": "Simple sum.", "signature": "sig"},
                            {"type": "text", "text": "4"},
                        ],
                    },
                    {"role": "user", "content": "And 3+3?"},
                ],
            ),
        ),
        (
            "redacted_thinking_history",
            base(
                model,
                messages=[
                    {"role": "user", "content": "q"},
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "redacted_thinking", "data": "b64=="},
                            {"type": "text", "text": "a"},
                        ],
                    },
                    {"role": "user", "content": "q2"},
                ],
            ),
        ),
        (
            "assistant_prefill_empty",
            base(
                model,
                messages=[
                    {"role": "user", "content": "q"},
                    {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "x"}]},
                ],
            ),
        ),
        ("tool_use_and_result", base(model, tools=[WEATHER], messages=TOOL_TURN)),
        ("tool_history_no_tools", base(model, messages=TOOL_TURN)),
        (
            "tool_result_blocks",
            base(
                model,
                tools=[WEATHER, TIME],
                messages=[
                    *TOOL_TURN[:2],
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": "toolu_01",
                                "is_error": True,
                                "content": [
                                    {"type": "text", "text": "line 1"},
                                    {"type": "text", "text": "line 2"},
                                ],
                            },
                            {"type": "text", "text": "Thanks, and now?"},
                        ],
                    },
                ],
            ),
        ),
        (
            "tool_result_tool_reference",
            base(
                model,
                tools=[WEATHER, {**TIME, "defer_loading": True}],
                messages=[
                    *TOOL_TURN[:2],
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": "toolu_01",
                                "content": [
                                    {"type": "text", "text": "found"},
                                    {"type": "tool_reference", "tool_name": "get_time"},
                                ],
                            }
                        ],
                    },
                ],
            ),
        ),
        (
            "tool_result_in_assistant",
            base(
                model,
                messages=[
                    {"role": "user", "content": "q"},
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": "t",
                                "content": [{"type": "text", "text": "r"}],
                            }
                        ],
                    },
                    {"role": "user", "content": "q2"},
                ],
            ),
        ),
        (
            "tool_use_two_calls",
            base(
                model,
                tools=[WEATHER, TIME],
                messages=[
                    {"role": "user", "content": "both"},
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": "a1",
                                "name": "get_weather",
                                "input": {"city": "Oslo"},
                            },
                            {"type": "tool_use", "id": "a2", "name": "get_time", "input": {}},
                        ],
                    },
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": "a1", "content": "cold"},
                            {"type": "tool_result", "tool_use_id": "a2", "content": "noon"},
                        ],
                    },
                ],
            ),
        ),
        ("tools_no_choice", base(model, tools=[WEATHER])),
        ("tool_choice_auto", base(model, tools=[WEATHER], tool_choice={"type": "auto"})),
        ("tool_choice_any", base(model, tools=[WEATHER, TIME], tool_choice={"type": "any"})),
        ("tool_choice_none", base(model, tools=[WEATHER], tool_choice={"type": "none"})),
        (
            "tool_choice_tool",
            base(model, tools=[WEATHER, TIME], tool_choice={"type": "tool", "name": "get_time"}),
        ),
        (
            "tool_choice_auto_no_parallel",
            base(
                model,
                tools=[WEATHER],
                tool_choice={"type": "auto", "disable_parallel_tool_use": True},
            ),
        ),
        (
            "tool_choice_any_parallel_false",
            base(
                model,
                tools=[WEATHER],
                tool_choice={"type": "any", "disable_parallel_tool_use": False},
            ),
        ),
        ("tool_choice_without_tools", base(model, tool_choice={"type": "auto"})),
        ("tool_choice_any_without_tools", base(model, tool_choice={"type": "any"})),
        (
            "tools_strict_defer",
            base(
                model,
                tools=[
                    {**WEATHER, "strict": True},
                    {**TIME, "defer_loading": True, "description": None},
                ],
            ),
        ),
        (
            "tool_addition_reference",
            base(
                model,
                tools=[WEATHER, {**TIME, "defer_loading": True}],
                messages=[
                    {"role": "user", "content": "hi"},
                    {
                        "role": "system",
                        "content": [
                            {
                                "type": "tool_addition",
                                "tool": {"type": "tool_reference", "name": "get_time"},
                            }
                        ],
                    },
                    {"role": "user", "content": "time?"},
                ],
            ),
        ),
        (
            "tool_addition_definition_and_removal",
            base(
                model,
                tools=[WEATHER],
                messages=[
                    {"role": "user", "content": "hi"},
                    {
                        "role": "system",
                        "content": [
                            {
                                "type": "tool_addition",
                                "tool": {"type": "tool_definition", "definition": TIME},
                            },
                            {
                                "type": "tool_removal",
                                "tool": {"type": "tool_reference", "name": "get_weather"},
                            },
                            {"type": "text", "text": "Tools changed."},
                        ],
                    },
                    {"role": "user", "content": "time?"},
                ],
            ),
        ),
        (
            "thinking_enabled",
            base(model, max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 2048}),
        ),
        (
            "thinking_enabled_display",
            base(
                model,
                max_tokens=4096,
                thinking={"type": "enabled", "budget_tokens": 1024, "display": "omitted"},
            ),
        ),
        ("thinking_disabled", base(model, thinking={"type": "disabled"})),
        ("thinking_adaptive", base(model, thinking={"type": "adaptive"})),
        ("effort_high", base(model, output_config={"effort": "high"})),
        (
            "effort_with_disabled",
            base(model, output_config={"effort": "max"}, thinking={"type": "disabled"}),
        ),
        (
            "output_format_json",
            base(
                model,
                output_config={
                    "format": {
                        "type": "json_schema",
                        "schema": {"type": "object", "properties": {"a": {"type": "integer"}}},
                    }
                },
            ),
        ),
        ("output_format_no_schema", base(model, output_config={"format": {"type": "json_schema"}})),
        ("stop_sequences", base(model, stop_sequences=["END", "\n\nHuman:"])),
        ("sampling", base(model, temperature=0.3, top_p=0.9, top_k=40)),
        ("temperature_zero", base(model, temperature=0)),
        ("stream", base(model, stream=True)),
        ("stream_false", base(model, stream=False)),
        ("metadata", base(model, metadata={"user_id": "u-123"})),
        ("template_kwargs", base(model, chat_template_kwargs={"enable_thinking": False})),
        (
            "vllm_extras",
            base(
                model,
                cache_salt="salty",
                vllm_xargs={"k": 1},
                kv_transfer_params={"do_remote_decode": True},
                watermarking=True,
            ),
        ),
        ("max_tokens_large", base(model, max_tokens=100000000)),
        ("unknown_fields_ignored", base(model, request_id="ignored", foo=1, service_tier="auto")),
        ("system_billing_newline", base(model, system=BILLING + "\nReal system prompt.")),
        (
            "system_block_billing_newline",
            base(
                model,
                system=[
                    {"type": "text", "text": BILLING + "\nkept?"},
                    {"type": "text", "text": "Rest."},
                ],
            ),
        ),
        (
            "inline_system_billing_newline",
            base(
                model,
                messages=[
                    {"role": "user", "content": "one"},
                    {"role": "system", "content": BILLING + "\nInline after header."},
                    {"role": "user", "content": "two"},
                ],
            ),
        ),
        (
            "tool_result_empty_and_image",
            base(
                model,
                tools=[WEATHER],
                messages=[
                    *TOOL_TURN[:2],
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": "toolu_01",
                                "content": [
                                    {
                                        "type": "image",
                                        "source": {
                                            "type": "url",
                                            "url": "https://example.com/a.png",
                                        },
                                    }
                                ],
                            }
                        ],
                    },
                ],
            ),
        ),
        (
            "tool_result_no_content",
            base(
                model,
                tools=[WEATHER],
                messages=[
                    *TOOL_TURN[:2],
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x"}]},
                ],
            ),
        ),
        (
            "thinking_empty_and_tool_use_empty_input",
            base(
                model,
                tools=[WEATHER],
                messages=[
                    {"role": "user", "content": "go"},
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "thinking", "thinking": ""},
                            {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {}},
                        ],
                    },
                ],
            ),
        ),
        ("lax_types", base(model, max_tokens=64.0, stream="true", top_p="0.5", temperature=1)),
        ("unicode_text", base(model, messages=[{"role": "user", "content": "Grüße 東京 🚀"}])),
        # Bad inputs.
        ("bad_max_tokens_fraction", base(model, max_tokens=10.5)),
        ("bad_message_string", base(model, messages=["hi"])),
        ("bad_message_no_content", base(model, messages=[{"role": "user"}])),
        ("bad_tools_not_list", base(model, tools={"name": "x"})),
        ("bad_tool_choice_string", base(model, tools=[WEATHER], tool_choice="auto")),
        ("bad_thinking_string", base(model, thinking="on")),
        ("bad_stop_string", base(model, stop_sequences="END")),
        ("bad_metadata_list", base(model, metadata=[1])),
        (
            "bad_tool_use_input_list",
            base(
                model,
                messages=[{"role": "assistant", "content": [{"type": "tool_use", "input": [1]}]}],
            ),
        ),
        (
            "bad_tool_result_content_int",
            base(
                model,
                messages=[{"role": "user", "content": [{"type": "tool_result", "content": 5}]}],
            ),
        ),
        (
            "bad_format_type",
            base(model, output_config={"format": {"type": "json_object", "schema": {}}}),
        ),
        ("bad_output_config_string", base(model, output_config="json")),
        ("bad_mm_payload", base(model, mm_payload="all")),
        (
            "bad_several_errors",
            {
                "model": 5,
                "max_tokens": -1,
                "messages": [{"role": "bot", "content": None}],
                "top_k": "x",
            },
        ),
        ("bad_stream_string", base(model, stream="maybe")),
        ("bad_cache_salt_long", base(model, cache_salt="s" * 200)),
        ("bad_cache_salt_slash", base(model, cache_salt="a/b")),
        ("bad_temperature_negative", base(model, temperature=-1)),
        ("bad_top_p_large", base(model, top_p=2)),
        ("bad_top_k_negative", base(model, top_k=-5)),
        ("bad_chat_template_kwargs_template", base(model, chat_template_kwargs={"chat_template": "{{ 1 }}"})),
        ("bad_vllm_xargs_nested", base(model, vllm_xargs={"k": {"a": 1}})),
        ("bad_missing_model", {"max_tokens": 10, "messages": HI}),
        ("bad_empty_model", base("")),
        ("bad_unknown_model", base("not-served")),
        ("bad_missing_max_tokens", {"model": model, "messages": HI}),
        ("bad_max_tokens_zero", base(model, max_tokens=0)),
        ("bad_max_tokens_string", base(model, max_tokens="lots")),
        ("bad_messages_not_list", base(model, messages="hi")),
        ("bad_missing_messages", {"model": model, "max_tokens": 5}),
        ("bad_role", base(model, messages=[{"role": "tool", "content": "x"}])),
        ("bad_content_int", base(model, messages=[{"role": "user", "content": 5}])),
        (
            "bad_block_type",
            base(model, messages=[{"role": "user", "content": [{"type": "video", "text": "x"}]}]),
        ),
        (
            "bad_block_text_int",
            base(model, messages=[{"role": "user", "content": [{"type": "text", "text": 3}]}]),
        ),
        (
            "bad_tool_choice_tool_no_name",
            base(model, tools=[WEATHER], tool_choice={"type": "tool"}),
        ),
        ("bad_tool_choice_type", base(model, tools=[WEATHER], tool_choice={"type": "sometimes"})),
        (
            "bad_thinking_budget_small",
            base(model, max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 10}),
        ),
        (
            "bad_thinking_budget_ge_max",
            base(model, max_tokens=2000, thinking={"type": "enabled", "budget_tokens": 2000}),
        ),
        ("bad_thinking_type", base(model, thinking={"type": "sometimes"})),
        ("bad_thinking_no_type", base(model, thinking={})),
        ("bad_effort", base(model, output_config={"effort": "extreme"})),
        ("bad_stop_too_many", base(model, stop_sequences=["a", "b", "c", "d", "e"])),
        ("bad_temperature", base(model, temperature="hot")),
        ("bad_tool_no_schema", base(model, tools=[{"name": "x"}])),
        (
            "bad_tool_addition_in_user",
            base(
                model,
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_addition",
                                "tool": {"type": "tool_reference", "name": "get_time"},
                            }
                        ],
                    }
                ],
            ),
        ),
        (
            "bad_tool_addition_undeclared",
            base(
                model,
                messages=[
                    {"role": "user", "content": "hi"},
                    {
                        "role": "system",
                        "content": [
                            {
                                "type": "tool_addition",
                                "tool": {"type": "tool_reference", "name": "nope"},
                            }
                        ],
                    },
                ],
            ),
        ),
        (
            "bad_tool_removal_definition",
            base(
                model,
                messages=[
                    {
                        "role": "system",
                        "content": [
                            {
                                "type": "tool_removal",
                                "tool": {"type": "tool_definition", "definition": TIME},
                            }
                        ],
                    },
                    {"role": "user", "content": "hi"},
                ],
            ),
        ),
        ("bad_tool_addition_no_tool", base(model, system=[{"type": "tool_addition"}])),
        ("bad_system_int", base(model, system=7)),
        ("bad_body_list", "[1, 2]"),
        ("bad_body_json", "{not json"),
        ("bad_cache_salt_empty", base(model, cache_salt="")),
        ("bad_top_k_float", base(model, top_k=1.5)),
    ]
    return c


def post(url: str, body: object, request_id: str | None) -> tuple[int, object]:
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if request_id:
        headers["X-Request-Id"] = request_id
    req = urllib.request.Request(url + ROUTE, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, raw.decode(errors="replace")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--url", required=True, help="vLLM render server, e.g. http://127.0.0.1:8842")
    ap.add_argument("--config", required=True, help="configs.json name the server runs")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write only this config's records here instead of merging into " + CORPUS.name,
    )
    args = ap.parse_args()
    configs = json.loads(Path(__file__).with_name("configs.json").read_text())
    model = configs[args.config]["served_model_name"]
    kept: list[dict] = []
    if args.out is None and CORPUS.exists():
        with gzip.open(CORPUS, "rt") as f:
            kept = [r for r in map(json.loads, f) if r["config"] != args.config]
    records = []
    for i, (case_id, body) in enumerate(cases(model)):
        # Every other case names its request id, so ids compare exactly there.
        request_id = f"msg-{case_id}" if i % 2 == 0 else None
        status, answer = post(args.url, body, request_id)
        records.append(
            {
                "config": args.config,
                "id": case_id,
                "request_id_header": request_id,
                "body": body,
                "status": status,
                "response": answer,
            }
        )
        print(f"{case_id}: {status}")
    with gzip.open(args.out or CORPUS, "wt") as f:
        for r in kept + records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
