#!/usr/bin/env python3
"""Record vLLM's `/v1/responses/render` answers for a fixed set of requests.

Standard library only. Start `vllm launch render` for one config of
configs.json (its model dir, served name and flags), then:

  python3 record_responses.py --url http://127.0.0.1:PORT --config qwen3_hermes

appends nothing and overwrites `responses/<config>.jsonl.gz` beside this file:
one JSON line per case, `{"id", "config", "request", "status", "response"}`.
tests/test_responses_render.py replays them against derender.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import urllib.parse
from pathlib import Path

HERE = Path(__file__).parent

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"],
    },
}
TIME = {
    "type": "function",
    "name": "get_time",
    "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
    "strict": True,
}
NO_PARAMS = {"type": "function", "name": "ping", "description": "Ping the server"}

USER = {"role": "user", "content": "What is the weather in Tokyo?"}
CALL = {
    "type": "function_call",
    "call_id": "call_1",
    "name": "get_weather",
    "arguments": '{"city": "Tokyo"}',
}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": '{"temp": 21}'}
REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [],
    "content": [{"type": "reasoning_text", "text": "The user wants the weather."}],
}
ANSWER = {
    "type": "message",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "It is 21 degrees in Tokyo."}],
}


def cases(model: str) -> list[tuple[str, dict]]:
    """(id, body) pairs; `model` is the config's served name."""
    m = {"model": model}
    out: list[tuple[str, dict]] = [
        # Inputs.
        ("string_input", {**m, "input": "Hello there"}),
        ("no_model", {"input": "Hi"}),
        ("empty_string_input", {**m, "input": ""}),
        ("request_id", {**m, "input": "Hi", "request_id": "resp_fixed_1"}),
        ("instructions", {**m, "instructions": "Answer in French.", "input": "Hello"}),
        ("empty_instructions", {**m, "instructions": "", "input": "Hello"}),
        (
            "message_list",
            {
                **m,
                "input": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": "Hello!"},
                    {"role": "user", "content": "Tell me a joke."},
                ],
            },
        ),
        (
            "content_parts",
            {
                **m,
                "input": [
                    {
                        "type": "message",
                        "role": "user",
                        "content": [
                            {"type": "input_text", "text": "First part."},
                            {"type": "input_text", "text": "Second part."},
                        ],
                    }
                ],
            },
        ),
        (
            "developer_role",
            {
                **m,
                "input": [
                    {"role": "developer", "content": "You are terse."},
                    {"role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
                ],
            },
        ),
        (
            "instructions_and_system",
            {
                **m,
                "instructions": "Rule A.",
                "input": [{"role": "system", "content": "Rule B."}, USER],
            },
        ),
        (
            "assistant_output_message",
            {**m, "input": [USER, ANSWER, {"role": "user", "content": "Thanks!"}]},
        ),
        (
            "assistant_output_message_with_id",
            {
                **m,
                "input": [
                    USER,
                    {**ANSWER, "id": "msg_1", "status": "completed"},
                    {"role": "user", "content": "And?"},
                ],
            },
        ),
        (
            "continue_final_message",
            {**m, "input": [USER, {**ANSWER, "status": "in_progress"}]},
        ),
        (
            "continue_incomplete_string",
            {
                **m,
                "input": [
                    USER,
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": "It is",
                        "status": "incomplete",
                    },
                ],
            },
        ),
        # Tool history.
        ("function_call_history", {**m, "input": [USER, CALL, OUTPUT], "tools": [WEATHER]}),
        ("function_call_history_no_tools", {**m, "input": [USER, CALL, OUTPUT]}),
        (
            "parallel_call_history",
            {
                **m,
                "input": [
                    USER,
                    CALL,
                    {**CALL, "call_id": "call_2", "arguments": '{"city": "Paris"}'},
                    OUTPUT,
                    {**OUTPUT, "call_id": "call_2", "output": "18"},
                ],
                "tools": [WEATHER],
            },
        ),
        (
            "reasoning_then_call",
            {
                **m,
                "input": [USER, REASONING, CALL, OUTPUT, ANSWER, {"role": "user", "content": "Ok"}],
                "tools": [WEATHER],
            },
        ),
        (
            "reasoning_then_message",
            {**m, "input": [USER, REASONING, ANSWER, {"role": "user", "content": "Ok"}]},
        ),
        (
            "reasoning_no_id",
            {**m, "input": [USER, {k: v for k, v in REASONING.items() if k != "id"}, ANSWER]},
        ),
        (
            "reasoning_summary_only",
            {
                **m,
                "input": [
                    USER,
                    {
                        "type": "reasoning",
                        "id": "rs_2",
                        "summary": [{"type": "summary_text", "text": "Summarised."}],
                    },
                    ANSWER,
                    {"role": "user", "content": "Ok"},
                ],
            },
        ),
        (
            "reasoning_encrypted",
            {**m, "input": [USER, {**REASONING, "encrypted_content": "abc"}, ANSWER]},
        ),
        (
            "function_call_with_status",
            {
                **m,
                "input": [USER, {**CALL, "id": "fc_1", "status": "completed"}, OUTPUT],
                "tools": [WEATHER],
            },
        ),
        (
            "function_call_output_object_id",
            {**m, "input": [USER, CALL, {**OUTPUT, "id": "fco_1", "status": "completed"}]},
        ),
        # Tools and tool_choice.
        ("tools_auto", {**m, "input": "Weather in Paris?", "tools": [WEATHER, TIME]}),
        (
            "tools_auto_explicit",
            {**m, "input": "Weather?", "tools": [WEATHER], "tool_choice": "auto"},
        ),
        ("tools_none", {**m, "input": "Weather?", "tools": [WEATHER], "tool_choice": "none"}),
        (
            "tools_required",
            {**m, "input": "Weather?", "tools": [WEATHER, TIME], "tool_choice": "required"},
        ),
        (
            "tools_required_single",
            {
                **m,
                "input": "Weather?",
                "tools": [WEATHER, TIME],
                "tool_choice": "required",
                "parallel_tool_calls": False,
            },
        ),
        (
            "tools_named",
            {
                **m,
                "input": "Weather?",
                "tools": [WEATHER, TIME],
                "tool_choice": {"type": "function", "name": "get_time"},
            },
        ),
        (
            "tools_named_no_params",
            {
                **m,
                "input": "Ping",
                "tools": [NO_PARAMS],
                "tool_choice": {"type": "function", "name": "ping"},
            },
        ),
        ("tools_no_params_auto", {**m, "input": "Ping", "tools": [NO_PARAMS]}),
        (
            "tools_named_missing",
            {
                **m,
                "input": "x",
                "tools": [WEATHER],
                "tool_choice": {"type": "function", "name": "nope"},
            },
        ),
        (
            "tools_named_without_tools",
            {**m, "input": "x", "tool_choice": {"type": "function", "name": "nope"}},
        ),
        ("tools_required_without_tools", {**m, "input": "x", "tool_choice": "required"}),
        ("tool_choice_none_no_tools", {**m, "input": "x", "tool_choice": "none"}),
        ("tool_choice_bad", {**m, "input": "x", "tools": [WEATHER], "tool_choice": "sometimes"}),
        ("tools_empty_list", {**m, "input": "x", "tools": []}),
        (
            "tool_missing_name",
            {**m, "input": "x", "tools": [{"type": "function", "parameters": {}}]},
        ),
        ("tool_bad_type", {**m, "input": "x", "tools": [{"type": "spaceship", "name": "a"}]}),
        (
            "tool_namespace",
            {
                **m,
                "input": "x",
                "tools": [
                    {"type": "namespace", "name": "ns", "description": "d", "tools": [{**WEATHER}]}
                ],
            },
        ),
        (
            "tool_custom",
            {
                **m,
                "input": "x",
                "tools": [{"type": "custom", "name": "shell", "description": "run"}],
            },
        ),
        (
            "tool_custom_grammar",
            {
                **m,
                "input": "x",
                "tools": [
                    {
                        "type": "custom",
                        "name": "g",
                        "format": {"type": "grammar", "syntax": "lark", "definition": "start: x"},
                    }
                ],
            },
        ),
        ("tool_web_search", {**m, "input": "x", "tools": [{"type": "web_search"}]}),
        (
            "tools_required_hosted_only",
            {**m, "input": "x", "tools": [{"type": "web_search"}], "tool_choice": "required"},
        ),
        (
            "tool_choice_allowed_tools",
            {
                **m,
                "input": "x",
                "tools": [WEATHER, TIME],
                "tool_choice": {
                    "type": "allowed_tools",
                    "mode": "auto",
                    "tools": [{"type": "function", "name": "get_time"}],
                },
            },
        ),
        (
            "tool_choice_hosted",
            {**m, "input": "x", "tools": [WEATHER], "tool_choice": {"type": "web_search_preview"}},
        ),
        (
            "tool_choice_namespace_local_name",
            {
                **m,
                "input": "x",
                "tools": [
                    {"type": "namespace", "name": "ns", "description": "d", "tools": [WEATHER]}
                ],
                "tool_choice": {"type": "function", "name": "get_weather"},
            },
        ),
        (
            "tool_choice_namespace_ambiguous",
            {
                **m,
                "input": "x",
                "tools": [
                    {"type": "namespace", "name": "a", "description": "d", "tools": [WEATHER]},
                    {"type": "namespace", "name": "b", "description": "d", "tools": [WEATHER]},
                ],
                "tool_choice": {"type": "function", "name": "get_weather"},
            },
        ),
        (
            "tool_choice_custom",
            {
                **m,
                "input": "x",
                "tools": [{"type": "custom", "name": "shell"}],
                "tool_choice": {"type": "custom", "name": "shell"},
            },
        ),
        (
            "namespaced_call_history",
            {
                **m,
                "input": [USER, {**CALL, "namespace": "ns"}, OUTPUT],
                "tools": [
                    {"type": "namespace", "name": "ns", "description": "d", "tools": [WEATHER]}
                ],
            },
        ),
        (
            "custom_call_history",
            {
                **m,
                "input": [
                    USER,
                    {
                        "type": "custom_tool_call",
                        "call_id": "c9",
                        "name": "shell",
                        "input": "ls -la",
                    },
                    {"type": "custom_tool_call_output", "call_id": "c9", "output": "file.txt"},
                ],
                "tools": [{"type": "custom", "name": "shell"}],
            },
        ),
        (
            "developer_mid_conversation",
            {
                **m,
                "instructions": "Rule A.",
                "input": [
                    USER,
                    {"role": "developer", "content": "Rule C."},
                    {"role": "user", "content": "Go"},
                ],
            },
        ),
        (
            "function_output_list",
            {
                **m,
                "input": [
                    USER,
                    CALL,
                    {
                        **OUTPUT,
                        "output": [
                            {"type": "input_text", "text": "21"},
                            {"type": "input_text", "text": "C"},
                        ],
                    },
                ],
            },
        ),
        (
            "input_image_part",
            {
                **m,
                "input": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_image", "image_url": "http://127.0.0.1:9/x.png"}
                        ],
                    }
                ],
            },
        ),
        ("input_item_reference", {**m, "input": [USER, {"type": "item_reference", "id": "msg_1"}]}),
        # Structured outputs.
        (
            "text_json_schema",
            {
                **m,
                "input": "Give me a city.",
                "text": {
                    "format": {
                        "type": "json_schema",
                        "name": "city",
                        "schema": {"type": "object", "properties": {"name": {"type": "string"}}},
                        "strict": True,
                    }
                },
            },
        ),
        (
            "text_json_object",
            {**m, "input": "JSON please", "text": {"format": {"type": "json_object"}}},
        ),
        ("text_plain", {**m, "input": "Hi", "text": {"format": {"type": "text"}}}),
        ("text_verbosity", {**m, "input": "Hi", "text": {"verbosity": "low"}}),
        (
            "text_json_schema_with_tools_auto",
            {
                **m,
                "input": "x",
                "tools": [WEATHER],
                "text": {
                    "format": {"type": "json_schema", "name": "o", "schema": {"type": "object"}}
                },
            },
        ),
        (
            "text_json_schema_with_tools_required",
            {
                **m,
                "input": "x",
                "tools": [WEATHER],
                "tool_choice": "required",
                "text": {
                    "format": {"type": "json_schema", "name": "o", "schema": {"type": "object"}}
                },
            },
        ),
        (
            "structured_outputs_regex",
            {**m, "input": "x", "structured_outputs": {"regex": "[a-z]+"}},
        ),
        (
            "structured_outputs_and_text_format",
            {
                **m,
                "input": "x",
                "structured_outputs": {"regex": "a"},
                "text": {"format": {"type": "json_object"}},
            },
        ),
        # Sampling.
        ("max_output_tokens", {**m, "input": "Hi", "max_output_tokens": 100}),
        ("max_output_tokens_too_big", {**m, "input": "Hi", "max_output_tokens": 10_000_000}),
        ("max_output_tokens_zero", {**m, "input": "Hi", "max_output_tokens": 0}),
        ("max_output_tokens_negative", {**m, "input": "Hi", "max_output_tokens": -5}),
        ("temperature_top_p", {**m, "input": "Hi", "temperature": 0.3, "top_p": 0.9}),
        ("temperature_zero", {**m, "input": "Hi", "temperature": 0}),
        ("temperature_int", {**m, "input": "Hi", "temperature": 1}),
        (
            "sampling_extras",
            {
                **m,
                "input": "Hi",
                "top_k": 5,
                "min_p": 0.1,
                "seed": 42,
                "repetition_penalty": 1.1,
                "presence_penalty": 0.5,
                "frequency_penalty": -0.5,
                "stop": ["END", "STOP"],
                "stop_token_ids": [7, 8],
                "ignore_eos": True,
                "logit_bias": {"5": 10, "9": -200},
                "include_stop_str_in_output": True,
                "spaces_between_special_tokens": False,
            },
        ),
        ("stop_string", {**m, "input": "Hi", "stop": "###"}),
        ("skip_special_tokens_false", {**m, "input": "Hi", "skip_special_tokens": False}),
        (
            "skip_special_tokens_true_with_tools",
            {**m, "input": "Hi", "skip_special_tokens": True, "tools": [WEATHER]},
        ),
        (
            "logprobs_include",
            {**m, "input": "Hi", "include": ["message.output_text.logprobs"], "top_logprobs": 3},
        ),
        ("top_logprobs_without_include", {**m, "input": "Hi", "top_logprobs": 3}),
        ("truncation_auto", {**m, "input": "Hi", "truncation": "auto"}),
        (
            "truncation_auto_max_output",
            {**m, "input": "Hi", "truncation": "auto", "max_output_tokens": 64},
        ),
        ("vllm_xargs", {**m, "input": "Hi", "vllm_xargs": {"a": 1, "b": "x"}}),
        (
            "transfer_params",
            {**m, "input": "Hi", "kv_transfer_params": {"k": 1}, "ec_transfer_params": {"e": 2}},
        ),
        ("empty_transfer_params", {**m, "input": "Hi", "kv_transfer_params": {}}),
        ("priority_cache_salt", {**m, "input": "Hi", "priority": 3, "cache_salt": "salt"}),
        ("stream", {**m, "input": "Hi", "stream": True}),
        (
            "stream_with_options",
            {**m, "input": "Hi", "stream": True, "stream_options": {"include_usage": True}},
        ),
        ("stream_false", {**m, "input": "Hi", "stream": False}),
        ("watermarking", {**m, "input": "Hi", "watermarking": False}),
        # Reasoning and template kwargs.
        ("reasoning_effort_low", {**m, "input": "Hi", "reasoning": {"effort": "low"}}),
        ("reasoning_effort_none", {**m, "input": "Hi", "reasoning": {"effort": "none"}}),
        ("reasoning_summary", {**m, "input": "Hi", "reasoning": {"summary": "auto"}}),
        (
            "enable_thinking_false",
            {**m, "input": "Hi", "chat_template_kwargs": {"enable_thinking": False}},
        ),
        (
            "effort_and_enable_thinking",
            {
                **m,
                "input": "Hi",
                "reasoning": {"effort": "high"},
                "chat_template_kwargs": {"enable_thinking": False},
            },
        ),
        ("include_reasoning_false", {**m, "input": "Hi", "include_reasoning": False}),
        (
            "template_kwargs_chat_template",
            {**m, "input": "Hi", "chat_template_kwargs": {"chat_template": "{{ 1 }}"}},
        ),
        ("template_kwargs_other", {**m, "input": "Hi", "chat_template_kwargs": {"custom_flag": 1}}),
        # Fields accepted and ignored.
        (
            "ignored_fields",
            {
                **m,
                "input": "Hi",
                "metadata": {"k": "v"},
                "user": "u1",
                "store": False,
                "service_tier": "auto",
                "max_tool_calls": 2,
                "prompt_cache_key": "k",
                "safety_identifier": "s",
                "session_id": "sess",
                "enable_response_messages": True,
                "background": False,
            },
        ),
        ("unknown_field", {**m, "input": "Hi", "frobnicate": 1}),
        # Errors.
        ("previous_response_id", {**m, "input": "Hi", "previous_response_id": "resp_123"}),
        ("previous_response_id_null", {**m, "input": "Hi", "previous_response_id": None}),
        ("wrong_model", {"model": "not-a-model", "input": "Hi"}),
        ("missing_input", {**m}),
        ("input_null", {**m, "input": None}),
        ("input_int", {**m, "input": 5}),
        ("input_empty_list", {**m, "input": []}),
        ("input_list_of_strings", {**m, "input": ["a", "b"]}),
        ("input_item_bad_role", {**m, "input": [{"role": "wizard", "content": "x"}]}),
        ("input_item_no_content", {**m, "input": [{"role": "user"}]}),
        ("input_item_unknown_type", {**m, "input": [{"type": "mystery", "x": 1}]}),
        (
            "input_item_function_call_missing_args",
            {**m, "input": [{"type": "function_call", "call_id": "c", "name": "f"}]},
        ),
        (
            "input_item_output_missing_call_id",
            {**m, "input": [{"type": "function_call_output", "output": "x"}]},
        ),
        (
            "input_part_bad_type",
            {**m, "input": [{"role": "user", "content": [{"type": "nope", "text": "x"}]}]},
        ),
        ("temperature_string", {**m, "input": "Hi", "temperature": "hot"}),
        ("presence_penalty_range", {**m, "input": "Hi", "presence_penalty": 3}),
        ("top_logprobs_range", {**m, "input": "Hi", "top_logprobs": -1}),
        ("truncation_bad", {**m, "input": "Hi", "truncation": "sometimes"}),
        ("include_bad", {**m, "input": "Hi", "include": ["nothing"]}),
        ("prompt_template", {**m, "input": "Hi", "prompt": {"id": "pmpt_1"}}),
        ("background_without_store", {**m, "input": "Hi", "background": True, "store": False}),
        ("cache_salt_empty", {**m, "input": "Hi", "cache_salt": ""}),
        ("priority_string", {**m, "input": "Hi", "priority": "high"}),
        ("stream_string", {**m, "input": "Hi", "stream": "yes"}),
        ("body_list", []),
        ("service_tier_bad", {**m, "input": "Hi", "service_tier": "gold"}),
        ("reasoning_effort_bad", {**m, "input": "Hi", "reasoning": {"effort": "extreme"}}),
        ("text_format_bad", {**m, "input": "Hi", "text": {"format": {"type": "yaml"}}}),
        ("seed_too_big", {**m, "input": "Hi", "seed": 2**64}),
    ]
    return out


def harmony_cases(model: str) -> list[tuple[str, dict]]:
    """Harmony (gpt-oss) cases: instructions, reasoning items, function_call /
    function_call_output items, builtin tools, reasoning.effort."""
    m = {"model": model}
    user = {"role": "user", "content": "What's the weather in Oslo?"}
    fc = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}
    fco = {"type": "function_call_output", "call_id": "call_1", "output": "{\"temp\": 3}"}
    rs = {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "Need the weather tool."}]}
    asst = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed", "content": [{"type": "output_text", "text": "It is 3C.", "annotations": []}]}
    return [
        ("h_instructions_effort_high", {**m, "instructions": "Be brief.", "input": "Hi", "reasoning": {"effort": "high"}}),
        ("h_effort_low", {**m, "input": "Hi", "reasoning": {"effort": "low"}}),
        ("h_effort_medium", {**m, "input": "Hi", "reasoning": {"effort": "medium"}}),
        ("h_effort_minimal", {**m, "input": "Hi", "reasoning": {"effort": "minimal"}}),
        ("h_system_item", {**m, "input": [{"role": "system", "content": "Sys text"}, user]}),
        ("h_developer_item", {**m, "input": [{"role": "developer", "content": "Dev text"}, user]}),
        ("h_instructions_and_developer", {**m, "instructions": "Inst", "input": [{"role": "developer", "content": "Dev"}, user]}),
        ("h_tools_function", {**m, "input": [user], "tools": [WEATHER, TIME]}),
        ("h_tools_required", {**m, "input": [user], "tools": [WEATHER], "tool_choice": "required"}),
        ("h_tools_named", {**m, "input": [user], "tools": [WEATHER], "tool_choice": {"type": "function", "name": "get_weather"}}),
        ("h_tools_none", {**m, "input": [user], "tools": [WEATHER], "tool_choice": "none"}),
        ("h_reasoning_then_call", {**m, "input": [user, rs, fc, fco], "tools": [WEATHER]}),
        ("h_reasoning_call_answer_next_turn", {**m, "input": [user, rs, fc, fco, asst, {"role": "user", "content": "Thanks"}], "tools": [WEATHER]}),
        ("h_call_without_reasoning", {**m, "input": [user, fc, fco], "tools": [WEATHER]}),
        ("h_two_calls", {**m, "input": [user, fc, {**fc, "call_id": "call_2", "name": "get_time", "arguments": "{}"}, fco, {**fco, "call_id": "call_2", "output": "noon"}], "tools": [WEATHER, TIME]}),
        ("h_output_unknown_call", {**m, "input": [user, {**fco, "call_id": "nope"}], "tools": [WEATHER]}),
        ("h_reasoning_item_summary_only", {**m, "input": [user, {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "Summary."}]}, asst]}),
        ("h_assistant_history", {**m, "input": [user, asst, {"role": "user", "content": "And tomorrow?"}]}),
        ("h_input_text_parts", {**m, "input": [{"role": "user", "content": [{"type": "input_text", "text": "part a "}, {"type": "input_text", "text": "part b"}]}]}),
        ("h_builtin_web_search", {**m, "input": "Hi", "tools": [{"type": "web_search_preview"}]}),
        ("h_builtin_code_interpreter", {**m, "input": "Hi", "tools": [{"type": "code_interpreter", "container": {"type": "auto"}}]}),
        ("h_builtin_container", {**m, "input": "Hi", "tools": [{"type": "container"}]}),
        ("h_builtin_mcp", {**m, "input": "Hi", "tools": [{"type": "mcp", "server_label": "x", "server_url": "http://127.0.0.1:1"}]}),
        ("h_builtin_and_function", {**m, "input": "Hi", "tools": [{"type": "web_search_preview"}, WEATHER]}),
        ("h_text_json_schema", {**m, "input": "Hi", "text": {"format": {"type": "json_schema", "name": "a", "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}}}),
        ("h_text_json_object", {**m, "input": "Hi", "text": {"format": {"type": "json_object"}}}),
        ("h_include_reasoning_content", {**m, "input": "Hi", "include": ["reasoning.encrypted_content"]}),
    ]


def post(url: str, body: object) -> tuple[int, object]:
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port or 80, timeout=120)
    try:
        data = json.dumps(body, ensure_ascii=False).encode()
        conn.request("POST", "/v1/responses/render", data, {"Content-Type": "application/json"})
        resp = conn.getresponse()
        raw = resp.read()
        return resp.status, json.loads(raw)
    finally:
        conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--url", required=True, help="the running `vllm launch render` server")
    ap.add_argument("--config", required=True, help="a name from configs.json")
    ap.add_argument("--out", type=Path, default=None, help="default: responses/<config>.jsonl.gz")
    args = ap.parse_args()
    configs = json.loads((HERE / "configs.json").read_text())
    model = configs[args.config]["served_model_name"]
    out = args.out or HERE / "responses" / f"{args.config}.jsonl.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    todo = cases(model)
    if configs[args.config].get("family") == "harmony":
        todo += harmony_cases(model)
    for case_id, body in todo:
        status, response = post(args.url, body)
        record = {
            "id": case_id,
            "config": args.config,
            "request": body,
            "status": status,
            "response": response,
        }
        lines.append(json.dumps(record, ensure_ascii=False))
        print(f"{status} {case_id}")
    # mtime=0: the same answers give the same bytes.
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(("\n".join(lines) + "\n").encode())
    print(f"{len(lines)} cases -> {out}")


if __name__ == "__main__":
    main()
