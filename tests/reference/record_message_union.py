"""Record vLLM 0.33.0's answers to chat messages checked against its message-parameter union.

vLLM validates every `messages[i]` of a chat request against
`ChatCompletionMessageParam` (OpenAI's seven message TypedDicts | vLLM's
CustomChatCompletionMessageParam | openai_harmony's Message) in pydantic's smart
union mode, and some members declare `Iterable[...]` fields that pydantic
validates lazily.  This script sends a systematic set of messages (every role,
every content shape, name / tool_call_id / tool_calls / reasoning variants,
extra keys, several messages where only one is bad, interplay with other
request checks) and keeps vLLM's answers as golden rows in replay.py's format.

Either drive a running server:

    cd <tmp with models/qwen3 unpacked> && VLLM_TARGET_DEVICE=cpu vllm launch render models/qwen3 \\
        --served-model-name qwen3 --host 127.0.0.1 --port 8771
    python3 tests/reference/record_message_union.py --url http://127.0.0.1:8771

or let the script start one itself (render_server.py; $VLLM names the vllm executable):

    VLLM=$VLLM_VENV/bin/vllm python3 tests/reference/record_message_union.py --launch

It writes message_union/corpus.jsonl.gz (one golden row per case, config qwen3_plain), then asks
the server every case again and fails if any answer differs (random request ids masked).
`--check` only does that second pass against the existing corpus.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import replay  # noqa: E402

OUT = HERE / "message_union" / "corpus.jsonl.gz"
CONFIG = "qwen3_plain"
MODEL = "qwen3"
PORT = 8771
CHAT = "/v1/chat/completions/render"
TOKENIZE = "/tokenize"
RESPONSES = "/v1/responses/render"

HI = {"role": "user", "content": "Hi"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]

ROLES: list[tuple[str, Any]] = [
    ("system", "system"),
    ("developer", "developer"),
    ("user", "user"),
    ("assistant", "assistant"),
    ("tool", "tool"),
    ("function", "function"),
    ("robot", "robot"),
    ("empty", ""),
    ("upper_user", "User"),
    ("int", 5),
    ("null", None),
]
MISSING = object()
TEXT = {"type": "text", "text": "one"}
CONTENTS: list[tuple[str, Any]] = [
    ("absent", MISSING),
    ("null", None),
    ("str", "hello"),
    ("str_empty", ""),
    ("int", 5),
    ("float", 1.5),
    ("bool", True),
    ("dict", {"a": 1}),
    ("dict_text_part", TEXT),
    ("list_empty", []),
    ("list_text", [TEXT]),
    ("list_text_two", [TEXT, {"type": "text", "text": "two"}]),
    ("list_str", ["one"]),
    ("list_str_and_text", ["one", TEXT]),
    ("list_text_extra_key", [{"type": "text", "text": "one", "cache_control": {"type": "ephemeral"}}]),
    ("list_text_missing_text", [{"type": "text"}]),
    ("list_text_int_text", [{"type": "text", "text": 5}]),
    ("list_text_null_text", [{"type": "text", "text": None}]),
    ("list_no_type", [{"text": "one"}]),
    ("list_input_text", [{"type": "input_text", "text": "one"}]),
    ("list_refusal", [{"type": "refusal", "refusal": "no"}]),
    ("list_thinking", [{"type": "thinking", "thinking": "hmm"}]),
    ("list_tool_reference", [{"type": "tool_reference", "name": "get_weather"}]),
    ("list_unknown_type", [{"type": "bogus", "x": 1}]),
    ("list_empty_dict", [{}]),
    ("list_int", [5]),
    ("list_null", [None]),
    ("list_nested_list", [["one"]]),
    ("list_image_url", [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]),
    ("list_image_url_str", [{"type": "image_url", "image_url": "https://example.com/a.png"}]),
    ("list_text_then_bad", [TEXT, {"type": "text", "text": 7}]),
    ("list_bad_then_text", [{"type": "input_text", "text": "x"}, TEXT]),
    ("list_eleven_bad", [{"type": "input_text", "text": str(i)} for i in range(11)]),
]


def msg(role: Any, content: Any, **extra: Any) -> dict:
    m: dict[str, Any] = {}
    if role is not MISSING:
        m["role"] = role
    if content is not MISSING:
        m["content"] = content
    m.update(extra)
    return m


def fn_call(id_: Any = "call_1", name: Any = "get_weather", args: Any = '{"city": "Paris"}', **kw: Any) -> dict:
    f: dict[str, Any] = {}
    if name is not MISSING:
        f["name"] = name
    if args is not MISSING:
        f["arguments"] = args
    tc: dict[str, Any] = {"type": "function", "function": f}
    if id_ is not MISSING:
        tc = {"id": id_, **tc}
    tc.update(kw)
    return tc


def tool_reply(call_id: str = "call_1") -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": "sunny"}


def cases() -> list[tuple[str, str, Any, list[str]]]:
    """(name, endpoint, body, tags)"""
    out: list[tuple[str, str, Any, list[str]]] = []

    def chat(name: str, messages: list, tags: list[str], **extra: Any) -> None:
        out.append((name, CHAT, {"model": MODEL, "messages": messages, **extra}, tags))

    # 1. role x content matrix (one message each; a user turn after non-user ones so templates have one).
    for rname, role in ROLES:
        for cname, content in CONTENTS:
            m = msg(role, content)
            msgs = [m] if role == "user" else [m, HI]
            chat(f"matrix-{rname}-{cname}", msgs, ["matrix", f"role:{rname}", f"content:{cname}"])
    chat("matrix-missing_role-str", [msg(MISSING, "hello")], ["matrix", "role:missing"])
    chat("matrix-missing_role-absent", [{}], ["matrix", "role:missing"])
    chat("matrix-missing_role-list_text", [msg(MISSING, [TEXT])], ["matrix", "role:missing"])

    # 2. message itself not an object; messages not a list.
    for name, m in [("str", "hello"), ("int", 5), ("null", None), ("list", [HI]), ("bool", False)]:
        chat(f"message_not_dict-{name}", [m], ["message_type"])
        chat(f"message_not_dict_second-{name}", [HI, m], ["message_type"])
    for name, ms in [("str", "hello"), ("dict", HI), ("null", None), ("empty", [])]:
        out.append((f"messages_field-{name}", CHAT, {"model": MODEL, "messages": ms}, ["messages_field"]))
    out.append(("messages_field-absent", CHAT, {"model": MODEL}, ["messages_field"]))

    # 3. name / tool_call_id variants per role.
    for rname, role in [("system", "system"), ("user", "user"), ("assistant", "assistant"),
                        ("developer", "developer"), ("robot", "robot")]:  # fmt: skip
        for vname, value in [("str", "bob"), ("int", 5), ("null", None), ("empty", ""), ("dict", {"a": 1})]:
            m = msg(role, "hello", name=value)
            chat(f"name-{rname}-{vname}", [m] if role == "user" else [m, HI], ["name", f"role:{rname}"])
    asst = {"role": "assistant", "tool_calls": [fn_call()]}
    for vname, value in [("str", "call_1"), ("int", 5), ("null", None), ("absent", MISSING), ("empty", ""),
                         ("dict", {"a": 1})]:  # fmt: skip
        t = {"role": "tool", "content": "sunny"}
        if value is not MISSING:
            t["tool_call_id"] = value
        chat(f"tool_call_id-{vname}", [HI, asst, t], ["tool_call_id"])
        chat(f"tool_call_id_list_content-{vname}", [HI, asst, {**t, "content": [TEXT]}], ["tool_call_id"])
    chat("tool_call_id-on_user", [msg("user", "hi", tool_call_id="x")], ["tool_call_id"])
    chat("tool_call_id-on_user_int", [msg("user", "hi", tool_call_id=5)], ["tool_call_id"])
    for vname, value in [("str", "get_weather"), ("int", 5), ("absent", MISSING)]:
        f = {"role": "function", "content": "sunny"}
        if value is not MISSING:
            f["name"] = value
        chat(f"function_name-{vname}", [HI, f], ["function_role"])
    chat("function-content_null", [HI, {"role": "function", "name": "f", "content": None}], ["function_role"])

    # 4. assistant tool_calls.
    tc_variants: list[tuple[str, Any]] = [
        ("valid", [fn_call()]),
        ("two_valid", [fn_call(), fn_call("call_2", args="{}")]),
        ("empty_list", []),
        ("null", None),
        ("no_id", [fn_call(MISSING)]),
        ("id_int", [fn_call(5)]),
        ("id_null", [fn_call(None)]),
        ("args_object", [fn_call(args={"city": "Paris"})]),
        ("args_object_empty", [fn_call(args={})]),
        ("args_null", [fn_call(args=None)]),
        ("args_missing", [fn_call(args=MISSING)]),
        ("args_int", [fn_call(args=5)]),
        ("args_list", [fn_call(args=["a"])]),
        ("args_bad_json", [fn_call(args="{not json")]),
        ("args_json_list", [fn_call(args="[1, 2]")]),
        ("args_empty_str", [fn_call(args="")]),
        ("name_missing", [fn_call(name=MISSING)]),
        ("name_int", [fn_call(name=5)]),
        ("function_str", [{"id": "call_1", "type": "function", "function": "get_weather"}]),
        ("function_missing", [{"id": "call_1", "type": "function"}]),
        ("type_missing", [{"id": "call_1", "function": {"name": "get_weather", "arguments": "{}"}}]),
        ("type_other", [fn_call(type="tool")]),
        ("type_custom_with_function", [fn_call(type="custom")]),
        ("custom_valid", [{"id": "call_1", "type": "custom", "custom": {"name": "get_weather", "input": "Paris"}}]),
        ("custom_no_input", [{"id": "call_1", "type": "custom", "custom": {"name": "get_weather"}}]),
        ("extra_key", [fn_call(index=0)]),
        ("item_str", ["call"]),
        ("item_int", [5]),
        ("item_null", [None]),
        ("item_list", [[fn_call()]]),
        ("valid_then_args_object", [fn_call(), fn_call("call_2", args={"a": 1})]),
        ("args_object_then_no_id", [fn_call(args={"a": 1}), fn_call(MISSING)]),
        ("not_list_str", "call"),
        ("not_list_dict", fn_call()),
        ("not_list_int", 5),
    ]
    for vname, tcs in tc_variants:
        a = {"role": "assistant", "tool_calls": tcs}
        chat(f"tool_calls-{vname}", [HI, a, tool_reply()], ["tool_calls"], tools=TOOLS, tool_choice="none")
        chat(f"tool_calls_content-{vname}", [HI, {**a, "content": "Let me check."}, tool_reply()], ["tool_calls"])
    for vname in ["valid", "args_object", "no_id", "item_str"]:
        tcs = dict(tc_variants)[vname]
        for rname in ["user", "robot", "tool"]:
            m = {"role": rname, "content": "x", "tool_calls": tcs}
            if rname == "tool":
                m["tool_call_id"] = "call_1"
            chat(f"tool_calls_on_{rname}-{vname}", [HI, m] if rname != "user" else [m], ["tool_calls"])
    # bad tool_calls in two different messages: only the first bad message is reported
    chat("tool_calls-two_bad_messages",
         [HI, {"role": "assistant", "tool_calls": [fn_call(args={"a": 1})]}, tool_reply(),
          {"role": "assistant", "tool_calls": [fn_call(MISSING)]}, tool_reply()], ["tool_calls", "multi"])  # fmt: skip
    chat("tool_calls-and_bad_content_elsewhere",
         [HI, {"role": "assistant", "tool_calls": [fn_call(args={"a": 1})]}, tool_reply(), msg("user", None)],
         ["tool_calls", "multi"])  # fmt: skip
    chat("tool_calls-and_lazy_part_elsewhere",
         [msg("user", [{"type": "input_text", "text": "x"}]),
          {"role": "assistant", "tool_calls": [fn_call(args={"a": 1})]}, tool_reply()],
         ["tool_calls", "multi"])  # fmt: skip

    # 5. assistant other fields.
    for vname, extra in [
        ("reasoning_str", {"reasoning": "thought"}),
        ("reasoning_null", {"reasoning": None}),
        ("reasoning_int", {"reasoning": 5}),
        ("reasoning_dict", {"reasoning": {"a": 1}}),
        ("reasoning_list", {"reasoning": ["a"]}),
        ("reasoning_content_str", {"reasoning_content": "thought"}),
        ("reasoning_content_int", {"reasoning_content": 5}),
        ("reasoning_and_reasoning_content", {"reasoning": "a", "reasoning_content": "b"}),
        ("refusal_str", {"refusal": "no"}),
        ("refusal_int", {"refusal": 5}),
        ("audio_ok", {"audio": {"id": "a1"}}),
        ("audio_bad", {"audio": {"x": 1}}),
        ("function_call_ok", {"function_call": {"name": "f", "arguments": "{}"}}),
        ("function_call_bad", {"function_call": {"name": "f"}}),
        ("task_str", {"task": "t"}),
        ("task_int", {"task": 5}),
        ("tools_ok", {"tools": TOOLS}),
        ("tools_bad", {"tools": [{"type": "function"}]}),
        ("extra_key", {"foo": "bar"}),
        ("extra_keys_many", {"foo": 1, "bar": [1], "baz": None}),
    ]:
        for rname, content in [("assistant", "done"), ("assistant_nocontent", MISSING), ("user", "hi"),
                               ("robot", "hi")]:  # fmt: skip
            role = "assistant" if rname.startswith("assistant") else rname
            m = msg(role, content, **extra)
            chat(f"fields-{rname}-{vname}", [HI, m] if role != "user" else [m], ["fields", f"role:{rname}"])

    # 6. harmony-shaped messages (openai_harmony.Message is the union's last member).
    for vname, m in [
        ("author_only", {"author": {"role": "user"}, "content": [{"type": "text", "text": "hi"}]}),
        ("author_and_role", {"role": "user", "author": {"role": "user"}, "content": "hi"}),
        ("author_bad", {"author": {"role": "robot"}, "content": []}),
        ("harmony_full", {"role": "assistant", "author": {"role": "assistant"}, "channel": "final",
                          "content": [{"type": "text", "text": "x"}]}),  # fmt: skip
    ]:
        chat(f"harmony-{vname}", [HI, m], ["harmony"])

    # 7. several messages, only one bad; errors from several bad messages.
    bad_request_time = msg("user", None)
    bad_lazy = msg("user", [{"type": "input_text", "text": "x"}])
    for pos in range(3):
        for bname, bad in [("null_content", bad_request_time), ("lazy_part", bad_lazy), ("int_role", msg(5, "x")),
                           ("system_dict", msg("system", {"a": 1}))]:  # fmt: skip
            msgs = [msg("system", "sys"), HI, {"role": "assistant", "content": "ok"}]
            msgs[pos] = bad
            chat(f"multi-bad_at_{pos}-{bname}", msgs, ["multi"])
    chat("multi-two_request_time", [msg("user", None), HI, msg("system", 5)], ["multi"])
    chat("multi-two_lazy", [bad_lazy, {"role": "assistant", "content": "ok"},
                            msg("user", [{"type": "text", "text": 5}])], ["multi"])  # fmt: skip
    chat("multi-lazy_then_request_time", [bad_lazy, msg("user", None)], ["multi"])
    chat("multi-request_time_then_lazy", [msg("user", None), bad_lazy], ["multi"])
    chat("multi-all_valid_roles", [msg("system", "s"), msg("developer", "d"), HI,
                                   {"role": "assistant", "content": "a"}, msg("user", [TEXT])], ["multi", "valid"])  # fmt: skip

    # 8. interplay with other request checks (which error wins).
    chat("order-bad_message_and_bad_temperature", [msg("user", None)], ["order"], temperature="hot")
    chat("order-bad_message_and_bad_max_tokens", [msg("user", None)], ["order"], max_tokens="x")
    chat("order-lazy_and_bad_temperature", [bad_lazy], ["order"], temperature="hot")
    chat("order-bad_message_and_unknown_model", [msg("user", None)], ["order"], model="nope")
    chat("order-lazy_and_unknown_model", [bad_lazy], ["order"], model="nope")
    chat("order-tool_calls_args_object_and_unknown_model",
         [HI, {"role": "assistant", "tool_calls": [fn_call(args={"a": 1})]}, tool_reply()], ["order"], model="nope")
    chat("order-bad_message_and_tool_choice_without_tools", [msg("user", None)], ["order"], tool_choice="auto")
    chat("order-lazy_and_tool_choice_without_tools", [bad_lazy], ["order"], tool_choice="auto")
    chat("order-tool_calls_args_object_and_tool_choice_without_tools",
         [HI, {"role": "assistant", "tool_calls": [fn_call(args={"a": 1})]}, tool_reply()], ["order"],
         tool_choice="auto")  # fmt: skip
    chat("order-bad_message_and_stream_options", [msg("user", None)], ["order"], stream_options={"include_usage": True})
    chat("order-bad_message_and_empty_tools", [msg("user", None)], ["order"], tools=[])
    chat("order-tool_calls_args_object_and_bad_temperature",
         [HI, {"role": "assistant", "tool_calls": [fn_call(args={"a": 1})]}, tool_reply()], ["order"],
         temperature="hot")  # fmt: skip
    chat("order-lazy_and_bad_chat_template", [bad_lazy], ["order"], chat_template="{{ raise_exception('no') }}")
    chat("order-lazy_and_continue_final_message", [bad_lazy], ["order"],
         continue_final_message=True, add_generation_prompt=False)  # fmt: skip
    chat("order-media_part_and_lazy", [msg("user", [{"type": "image_url", "image_url": {"url": "https://e/a.png"}},
                                                   {"type": "input_text", "text": "x"}])], ["order"])  # fmt: skip
    chat("order-lazy_and_media_part", [msg("user", [{"type": "input_text", "text": "x"},
                                                   {"type": "image_url", "image_url": {"url": "https://e/a.png"}}])],
         ["order"])  # fmt: skip

    # 9. input repr rules: long strings, unicode, quotes, big numbers, floats in the error's input.
    for vname, value in [
        ("long_str", "x" * 250),
        ("quote_str", "it's"),
        ("dquote_str", 'say "hi"'),
        ("both_quotes", "it's \"x\""),
        ("unicode", "héllo ☃"),
        ("newline", "a\nb"),
        ("big_int", 10**30),
        ("neg_int", -3),
        ("float_exp", 1e20),
        ("float_small", 1e-7),
        ("float_int", 2.0),
        ("false", False),
        ("list3", [1, 2, 3]),
        ("dict0", {}),
    ]:
        chat(f"repr-role-{vname}", [msg(value, "x"), HI], ["repr"])
        chat(f"repr-name-{vname}", [msg("user", "x", name=value)], ["repr"])
    chat("repr-long_role_in_literal", [msg("r" * 250, None)], ["repr"])

    # 10. the same messages through /tokenize and /v1/responses/render.
    for name, m in [
        ("valid_str", [HI]),
        ("valid_parts", [msg("user", [TEXT])]),
        ("null_content", [msg("user", None)]),
        ("int_role", [msg(5, "x")]),
        ("lazy_part", [bad_lazy]),
        ("tool_calls_args_object", [HI, {"role": "assistant", "tool_calls": [fn_call(args={"a": 1})]}, tool_reply()]),
        ("tool_calls_no_id", [HI, {"role": "assistant", "tool_calls": [fn_call(MISSING)]}, tool_reply()]),
        ("tool_calls_valid", [HI, {"role": "assistant", "tool_calls": [fn_call()]}, tool_reply()]),
        ("custom_tool_call", [HI, {"role": "assistant", "tool_calls": [
            {"id": "call_1", "type": "custom", "custom": {"name": "f", "input": "x"}}]}, tool_reply()]),
        ("robot_role", [msg("robot", "x"), HI]),
        ("message_str", ["hello"]),
    ]:
        out.append((f"tokenize-{name}", TOKENIZE, {"model": MODEL, "messages": m}, ["tokenize"]))
    for name, inp in [
        ("message_null_content", [{"role": "user", "content": None}]),
        ("message_int_role", [{"role": 5, "content": "x"}]),
        ("message_input_text", [{"role": "user", "content": [{"type": "input_text", "text": "x"}]}]),
        ("message_text_part", [{"role": "user", "content": [{"type": "text", "text": "x"}]}]),
        ("message_robot", [{"role": "robot", "content": "x"}]),
    ]:
        out.append((f"responses-{name}", RESPONSES, {"model": MODEL, "input": inp}, ["responses"]))
    return out


def shape(endpoint: str, status: int, body: Any) -> str:
    """Which error path answered (see SPEC.md)."""
    if status == 200:
        return "valid"
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        return "other"
    m, t, p = err.get("message", ""), err.get("type"), err.get("param")
    if t == "Bad Request":
        if isinstance(p, str) and p.startswith("body.messages"):
            return "request_time"
        if isinstance(p, str) and p.split(".")[1:2] and p.split(".")[1].isdigit():
            return "tool_calls_after_validator"
        return "request_time_other"
    if "for ValidatorIterator" in m:
        return "lazy_iterator"
    return "vllm_error"


def record(client: replay.Client) -> list[dict]:
    rows = []
    for i, (name, endpoint, body, tags) in enumerate(cases()):
        status, resp, _, _ = client.post(endpoint, body)
        if endpoint == RESPONSES and status == 200:
            continue  # its random "resp_..." request_id is not one replay.py masks
        kind = "render" if status == 200 else "error"
        rows.append({
            "id": f"{CONFIG}/message_union/{i:04d}-{name}",
            "config": CONFIG,
            "kind": kind,
            "endpoint": endpoint,
            "calls": [{"request": copy.deepcopy(body), "status": status, "response": resp}],
            "tags": ["message_union", f"shape:{shape(endpoint, status, resp)}", *tags],
        })
    return rows


def check(client: replay.Client, rows: list[dict]) -> int:
    bad = 0
    for row in rows:
        results = replay.execute_case(client, row)
        diffs = replay.compare_case(row, results, "strict", "vllm")
        if diffs:
            bad += 1
            print(f"DIFF {row['id']}: {diffs[:3]}")
    print(f"self-check: {len(rows) - bad}/{len(rows)} identical")
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default=f"http://127.0.0.1:{PORT}")
    ap.add_argument("--launch", action="store_true", help="start vllm launch render for qwen3_plain here")
    ap.add_argument("--check", action="store_true", help="only re-ask the server for the existing corpus")
    args = ap.parse_args()
    server = None
    if args.launch:
        import render_server as rs

        config = rs.CONFIGS[CONFIG]
        work = rs.workdir("message-union-")
        model = rs.unpack_model(config["model"], work)
        server = rs.Server(work, config["model"], config["served_model_name"], config["flags"],
                           rs.config_env(config, model), PORT, work / "server.log")  # fmt: skip
        if not server.start():
            raise SystemExit(server.log_text()[-3000:])
        args.url = f"http://127.0.0.1:{PORT}"
    try:
        client = replay.Client(args.url)
        if args.check:
            rows = replay.load_cases(str(OUT))
        else:
            rows = record(client)
            OUT.parent.mkdir(exist_ok=True)
            with gzip.open(OUT, "wt", encoding="utf-8") as f:
                for row in rows:
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
            counts: dict[str, int] = {}
            for row in rows:
                s = next(t for t in row["tags"] if t.startswith("shape:"))
                counts[s] = counts.get(s, 0) + 1
            print(f"wrote {len(rows)} cases to {OUT}: {counts}")
        if check(client, rows):
            raise SystemExit(1)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
