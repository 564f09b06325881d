"""Record the gpt_oss (Harmony) golden corpus from a live vLLM 0.33.0.

vLLM derenders gpt-oss output with openai_harmony's StreamableParser over the
output token ids (vllm/parser/harmony.py), so the qwen3_hermes goldens cannot
simply be re-asked with markers mapped (record_family.py): the chat cases here
are written in Harmony's own markup. What the model generates after the
prompt's `<|start|>assistant`:

    <|channel|>analysis<|message|>...<|end|><|start|>assistant<|channel|>final<|message|>...<|return|>
    <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>

Each scenario (SCENARIOS below: Harmony text, the tags, whether the request
carries tools) is sent as a batch derender under several request variants
(VARIANTS: include_reasoning, skip_special_tokens, logprobs, n, tool_choice,
stop strings and ids, ...) and as streams under several chunkings (tok1,
tok3, seeded rand 1-7, all, finish_only, usage, cont_usage, logprobs,
return_ids, n2), each stream with the stream_state vLLM returned carried to
the next call (replay.PREV_STATE) and with a `batch_equivalent`. The prompt
ids are vLLM's own /v1/chat/completions/render answer for the chat request;
the output ids come from the fixture's tokenizer.json.gz (Harmony's special
tokens are added tokens there, one id each; the same ids as openai_harmony's
HARMONY_GPT_OSS encoding). The qwen3_hermes goldens' completion, error and
render cases are re-asked as record_family.py does (served name swapped).

    TIKTOKEN_ENCODINGS_BASE=<dir with o200k_base.tiktoken> VLLM_SYSTEM_START_DATE=2026-01-15 \\
      VLLM_TARGET_DEVICE=cpu vllm launch render <copy of tests/models/gpt_oss> --port P \\
      --served-model-name gpt-oss --reasoning-parser openai_gptoss --tool-call-parser openai \\
      --enable-auto-tool-choice
    python3 tests/reference/record_harmony.py --vllm http://127.0.0.1:P

writes tests/reference/goldens/gpt_oss.jsonl.gz. Needs the `tokenizers` package.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import random
import sys
import zlib
from pathlib import Path

from tokenizers import Tokenizer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import record_family  # noqa: E402
import replay  # noqa: E402

CONFIG = "gpt_oss"
MODEL = "gpt-oss"
DERENDER = "/v1/chat/completions/derender"
RETURN, ENDOFTEXT, CALL = 200002, 199999, 200012

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_web",
            "description": "Search the web",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "top_k": {"type": "integer"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "create_event",
            "description": "Create a calendar event",
            "parameters": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "when": {
                        "type": "object",
                        "properties": {"date": {"type": "string"}, "hour": {"type": "integer"}},
                    },
                    "attendees": {"type": "array", "items": {"type": "string"}},
                    "private": {"type": "boolean"},
                },
                "required": ["title"],
            },
        },
    },
    {"type": "function", "function": {"name": "get_time", "description": "Current time"}},
]

USERS = [
    "Explain TCP handshakes briefly.",
    "What's the weather like in Oslo?",
    "用中文解释一下the water cycle。",
    "Can you help me plan a trip to Nairobi? 🙂",
]

A = "<|channel|>analysis<|message|>"
F = "<|channel|>final<|message|>"
S = "<|start|>assistant"
E = "<|end|>"
R = "<|return|>"
C = "<|call|>"


def call(name: str, args: str, pre: str = "<|channel|>commentary", ctype: str = " <|constrain|>json") -> str:
    return f"{pre} to=functions.{name}{ctype}<|message|>{args}{C}"


THINK = "The user asks about the weather in Oslo. I should call get_weather with city Oslo."
LONG_THINK = (
    "We need to explain the water cycle in Chinese.\n\n"
    "Key steps:\n1. Evaporation\n2. Condensation\n3. Precipitation\n4. Collection\n\n"
    "Let's write a short answer with **bold** headings and an emoji 💧."
)

# name -> (text, tags, tools?, finish_reason, end token (None: none appended))
SCENARIOS: dict[str, tuple[str, list[str], bool, str]] = {
    "final_only": (F + "Here's a short explanation: it is a process with clear inputs and outputs." + R, ["final"], False, "stop"),
    "analysis_final": (A + "User wants a brief explanation. Keep it short." + E + S + F + "A TCP handshake is SYN, SYN-ACK, ACK." + R, ["reasoning", "final"], False, "stop"),
    "analysis_long_cjk": (A + LONG_THINK + E + S + F + "水循环包括：\n\n- **蒸发**\n- **凝结**\n- **降水** 🌧️\n- **汇集**" + R, ["reasoning", "final", "cjk", "emoji", "markdown"], False, "stop"),
    "analysis_empty": (A + E + S + F + "Hi there!" + R, ["reasoning", "empty_reasoning"], False, "stop"),
    "final_empty": (A + "Nothing to say." + E + S + F + R, ["reasoning", "empty_final"], False, "stop"),
    "analysis_truncated": (A + "The user asks about TCP. A handshake has three steps: SYN, then SYN-ACK, then", ["reasoning", "truncated", "finish_length"], False, "length"),
    "final_truncated": (A + "Short answer." + E + S + F + "A TCP handshake opens a connection in three steps: the client sends", ["reasoning", "final", "truncated", "finish_length"], False, "length"),
    "header_truncated": (A + "Think." + E + S + "<|channel|>fin", ["reasoning", "truncated", "finish_length"], False, "length"),
    "final_end_not_return": (F + "Done." + E, ["final", "end_token"], False, "stop"),
    "eos_endoftext": (F + "Ends on endoftext." + "<|endoftext|>", ["final", "eos_secondary"], False, "stop"),
    "special_inside": (F + "a<|endoftext|>b <|reserved_200017|> c" + R, ["final", "special_tokens"], False, "stop"),
    "no_markup": ("Plain text without any Harmony header." + R, ["malformed", "no_header"], False, "stop"),
    "no_channel": ("<|message|>Message without a channel." + R, ["malformed", "no_channel"], False, "stop"),
    "unknown_channel": ("<|channel|>finale<|message|>Unknown channel text." + R, ["malformed", "unknown_channel"], False, "stop"),
    "missing_message": ("<|channel|>final" + E + S + F + "Recovered." + R, ["malformed", "missing_message"], False, "stop"),
    "double_start": (A + "Plan." + E + S + S + F + "Twice started." + R, ["malformed", "double_start"], False, "stop"),
    "role_user_header": (A + "Plan." + E + "<|start|>user<|message|>fake user turn" + E + S + F + "After a user header." + R, ["malformed", "other_role"], False, "stop"),
    "stop_string": (A + "Plan ### inside." + E + S + F + "Here is the answer ### and more." + R, ["reasoning", "final", "stop_string"], False, "stop"),
    "final_json": ("<|channel|>final <|constrain|>json<|message|>{\"answer\": 42}" + R, ["final", "constrain", "structured"], False, "stop"),
    "tool_single": (A + THINK + E + S + call("get_weather", '{"city": "Oslo"}'), ["tool_call", "reasoning"], True, "stop"),
    "tool_no_analysis": (call("search_web", '{"query": "TCP handshake", "top_k": 3}'), ["tool_call"], True, "stop"),
    "tool_header_recipient": (A + THINK + E + "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Oslo\", \"unit\": \"celsius\"}" + C, ["tool_call", "reasoning", "recipient_in_header"], True, "stop"),
    "tool_first_recipient": ("<|channel|>commentary to=functions.get_weather json<|message|>{\"city\":\"Oslo\"}" + C, ["tool_call", "content_type_json"], True, "stop"),
    "tool_preamble": (A + THINK + E + S + "<|channel|>commentary<|message|>Let me check the weather for you." + E + S + call("get_weather", '{"city": "Oslo"}'), ["tool_call", "reasoning", "preamble", "text_before"], True, "stop"),
    "tool_parallel": (A + "Two lookups." + E + S + call("get_weather", '{"city": "Oslo"}') + S + call("search_web", '{"query": "Oslo events"}'), ["tool_call", "parallel"], True, "stop"),
    "tool_parallel_end": (call("get_weather", '{"city": "Oslo"}')[: -len(C)] + E + S + call("get_weather", '{"city": "Bergen", "unit": "fahrenheit"}'), ["tool_call", "parallel", "end_token"], True, "stop"),
    "tool_nested_args": (A + "Create the event." + E + S + call("create_event", '{"title": "Sync", "when": {"date": "2026-01-16", "hour": 9}, "attendees": ["ana", "bo"], "private": false, "weight": 1.5}'), ["tool_call", "nested_args"], True, "stop"),
    "tool_empty_args": (call("get_time", "{}"), ["tool_call", "empty_args"], True, "stop"),
    "tool_no_args": (call("get_time", ""), ["tool_call", "no_args"], True, "stop"),
    "tool_compact_json": (call("get_weather", '{"city":"Oslo",   "unit" : "celsius"}'), ["tool_call", "json_normalized"], True, "stop"),
    "tool_malformed_json": (A + THINK + E + S + call("get_weather", '{city: Oslo'), ["tool_call", "malformed"], True, "stop"),
    "tool_code_ctype": (call("get_weather", 'city="Oslo"', ctype=" <|constrain|>code"), ["tool_call", "content_type_other"], True, "stop"),
    "tool_no_ctype": (call("get_weather", '{"city": "Oslo"}', ctype=""), ["tool_call", "no_content_type"], True, "stop"),
    "tool_truncated": (A + THINK + E + S + "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Os", ["tool_call", "truncated", "finish_length"], True, "length"),
    "tool_header_cut": (A + THINK + E + S + "<|channel|>commentary to=functions.get_wea", ["tool_call", "truncated", "finish_length"], True, "length"),
    "tool_unknown_name": (call("book_flight", '{"to": "OSL"}'), ["tool_call", "unknown_tool"], True, "stop"),
    "tool_bare_recipient": ("<|channel|>commentary to=get_weather <|constrain|>json<|message|>{\"city\": \"Oslo\"}" + C, ["tool_call", "bare_recipient"], True, "stop"),
    "builtin_browser": (A + "Search first." + E + S + "<|channel|>analysis to=browser.search code<|message|>{\"query\": \"Oslo weather\"}" + C, ["builtin_tool", "browser"], True, "stop"),
    "builtin_python": (A + "Compute it." + E + S + "<|channel|>analysis to=python code<|message|>print(2 + 2)" + C, ["builtin_tool", "python"], True, "stop"),
    "call_in_analysis": (A + "Check." + E + S + call("get_weather", '{"city": "Oslo"}', pre="<|channel|>analysis"), ["tool_call", "analysis_channel_call"], True, "stop"),
    "call_then_final": (call("get_weather", '{"city": "Oslo"}') + S + F + "It is sunny." + R, ["tool_call", "text_after"], True, "stop"),
    "tools_final_answer": (A + "No tool needed." + E + S + F + "TCP opens with SYN, SYN-ACK, ACK." + R, ["reasoning", "final", "tools_unused"], True, "stop"),
    "commentary_only": ("<|channel|>commentary<|message|>Just a commentary message." + E, ["commentary"], True, "stop"),
    "to_assistant": ("<|channel|>commentary to=assistant<|message|>to the assistant" + E, ["malformed", "recipient_assistant"], True, "stop"),
}

# Batch variants: chat_request edits, generate_response edits.
VARIANTS = {
    "base": {},
    "tools_auto": {"tool_choice": "auto"},
    "tools_default": {},
    "tools_none": {"tool_choice": "none"},
    "tools_required": {"tool_choice": "required"},
    "tools_named": {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
    "no_parallel": {"tool_choice": "auto", "parallel_tool_calls": False},
    "no_reasoning": {"include_reasoning": False},
    "keep_special": {"skip_special_tokens": False},
    "skip_special": {"skip_special_tokens": True},
    "logprobs": {"logprobs": True, "top_logprobs": 3},
    "logprobs_unrequested": {},
    "return_ids": {"return_token_ids": True},
    "n2": {"n": 2},
    "no_chat_request": {},
    "model_omitted": {},
    "prompt_ids": {},
    "gen_prompt_ids_only": {},
    "no_prompt_tokens": {},
    "stop": {"stop": ["###", "NEVER_MATCHES"]},
    "stop_include": {"stop": ["###"], "include_stop_str_in_output": True},
    "stop_tok": {"stop_token_ids": [200007]},
    "ignore_eos": {"ignore_eos": True},
    "effort_high": {"reasoning_effort": "high"},
    "json_schema": {"response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object", "properties": {"answer": {"type": "integer"}}}}}},
}

ALL_SCENARIO_BATCH = ["base", "no_reasoning", "keep_special"]
TOOL_BATCH = ["tools_auto", "tools_none", "tools_required", "tools_named", "no_reasoning", "keep_special"]
EXTRA_BATCH = {
    "final_only": ["logprobs", "logprobs_unrequested", "return_ids", "n2", "no_chat_request", "model_omitted", "skip_special"],
    "analysis_final": ["logprobs", "n2", "prompt_ids", "gen_prompt_ids_only", "no_prompt_tokens", "effort_high", "skip_special", "ignore_eos"],
    "analysis_long_cjk": ["logprobs", "return_ids", "model_omitted"],
    "analysis_truncated": ["logprobs", "return_ids", "no_prompt_tokens"],
    "final_truncated": ["logprobs", "n2"],
    "special_inside": ["skip_special", "prompt_ids"],
    "eos_endoftext": ["ignore_eos", "stop_tok", "return_ids"],
    "final_end_not_return": ["stop_tok", "ignore_eos"],
    "stop_string": ["stop", "stop_include", "logprobs"],
    "final_json": ["json_schema"],
    "no_markup": ["no_chat_request", "skip_special"],
    "tool_single": ["tools_default", "no_parallel", "logprobs", "return_ids", "n2", "skip_special"],
    "tool_parallel": ["no_parallel", "logprobs", "tools_default"],
    "tool_nested_args": ["tools_default", "return_ids"],
    "tool_truncated": ["logprobs", "return_ids"],
    "tool_unknown_name": ["tools_default"],
    "builtin_browser": ["tools_default"],
    "tools_final_answer": ["tools_default", "json_schema"],
    "call_then_final": ["tools_default"],
}

# Stream runs: (variant, chunking) per scenario; every scenario gets tok1/tok3/rand/all under its base.
EXTRA_STREAMS = {
    "final_only": [("base", "finish_only"), ("base", "usage"), ("base", "logprobs"), ("base", "return_ids"), ("base", "n2"), ("no_reasoning", "tok1")],
    "analysis_final": [("no_reasoning", "tok1"), ("keep_special", "tok3"), ("base", "cont_usage"), ("base", "logprobs"), ("base", "n2"), ("no_reasoning", "logprobs")],
    "analysis_long_cjk": [("base", "usage"), ("no_reasoning", "rand")],
    "analysis_truncated": [("base", "finish_only"), ("no_reasoning", "tok1")],
    "final_truncated": [("base", "finish_only"), ("base", "n2")],
    "stop_string": [("stop_tok", "tok1"), ("stop_include", "rand")],
    "eos_endoftext": [("ignore_eos", "tok1")],
    "special_inside": [("keep_special", "tok1"), ("skip_special", "rand")],
    "tool_single": [("no_reasoning", "tok1"), ("tools_required", "tok1"), ("tools_named", "rand"), ("tools_none", "tok1"), ("tools_auto", "finish_only"), ("tools_auto", "usage"), ("tools_auto", "logprobs"), ("tools_auto", "return_ids")],
    "tool_parallel": [("no_parallel", "tok1"), ("tools_auto", "n2"), ("tools_none", "rand")],
    "tool_preamble": [("no_reasoning", "tok1")],
    "tool_truncated": [("tools_auto", "finish_only")],
    "tool_nested_args": [("tools_required", "rand")],
    "builtin_python": [("tools_none", "tok1")],
}


def enc(tok: Tokenizer, text: str) -> list[int]:
    return tok.encode(text, add_special_tokens=False).ids


def synth_logprobs(ids: list[int], seed: str) -> dict:
    rng = random.Random(zlib.crc32(seed.encode()))
    content = []
    for t in ids:
        lp = round(-rng.random() * 3, 4)
        rank = rng.randint(1, 3)
        top = [{"token_id": t, "logprob": lp, "rank": rank}]
        for r in range(1, 4):
            top.append({"token_id": rng.randint(0, 199997), "logprob": round(-rng.random(), 4), "rank": r})
        content.append({"token_id": t, "logprob": lp, "rank": rank, "top_logprobs": top})
    return {"content": content}


class Recorder:
    def __init__(self, url: str, tok: Tokenizer):
        self.client = replay.Client(url)
        self.tok = tok
        self.cases: list[dict] = []
        self.renders: dict[str, list[int]] = {}

    def post(self, body: dict, path: str = DERENDER) -> tuple[int, object]:
        status, resp, _, _ = self.client.post(path, body)
        return status, resp

    def chat(self, name: str, tools: bool, variant: str, stream: bool) -> dict:
        i = zlib.crc32(name.encode()) % len(USERS)
        req: dict = {"model": MODEL, "messages": [], "max_tokens": 1024}
        if i % 2 == 0:
            req["messages"].append({"role": "system", "content": "You are a helpful assistant."})
        req["messages"].append({"role": "user", "content": USERS[i]})
        if tools:
            req["tools"] = TOOLS
        req.update(copy.deepcopy(VARIANTS[variant]))
        if tools and variant in ("base",):
            req["tool_choice"] = "auto"
        if stream:
            req["stream"] = True
        return req

    def prompt(self, chat: dict) -> list[int]:
        body = {k: v for k, v in chat.items() if k not in ("stream", "stream_options")}
        key = json.dumps(body, sort_keys=True)
        if key not in self.renders:
            status, resp = self.post(body, "/v1/chat/completions/render")
            if status != 200:
                raise RuntimeError(f"render {status}: {resp}")
            self.renders[key] = resp["token_ids"]
        return self.renders[key]

    def output(self, name: str, variant: str) -> tuple[list[int], str, object]:
        text, _, _, finish = SCENARIOS[name]
        ids = enc(self.tok, text)
        stop_reason: object = None
        if variant in ("stop", "stop_include") and finish == "stop":
            stop_reason = "###"
            cut = text.find("###")
            ids = enc(self.tok, text[: cut + 3]) if variant == "stop" else ids
        if variant == "stop_tok":
            stop_reason = 200007
            ids = ids[:-1] + [200007]
        return ids, finish, stop_reason

    def choice(self, index: int, ids: list[int], finish: str, stop_reason, logprobs, stream: bool, last: bool = True) -> dict:
        c = {
            "index": index,
            "logprobs": logprobs,
            "finish_reason": finish if last else None,
            "stop_reason": stop_reason if last else None,
            "token_ids": ids,
            "routed_experts": None,
            "sampling_mask": None,
            "weight_versions": None,
        }
        if stream:
            c = {k: c[k] for k in ("index", "finish_reason", "stop_reason", "token_ids", "routed_experts", "sampling_mask", "weight_versions", "logprobs")}
        return c

    def batch_body(self, rid: str, name: str, variant: str, chat: dict, prompt: list[int]) -> dict:
        ids, finish, stop_reason = self.output(name, variant)
        lp = synth_logprobs(ids, rid) if variant in ("logprobs", "logprobs_unrequested") else None
        choices = [self.choice(0, ids, finish, stop_reason, lp, False)]
        total = len(ids)
        if variant == "n2":
            ids2 = enc(self.tok, F + "A second, different answer." + R)
            choices.append(self.choice(1, ids2, "stop", None, None, False))
            total += len(ids2)
        gen = {
            "request_id": rid,
            "model": None,
            "created": None,
            "usage": {"prompt_tokens": len(prompt), "total_tokens": len(prompt) + total, "completion_tokens": total, "prompt_tokens_details": None},
            "prompt_logprobs": None,
            "prompt_token_id_logprobs": None,
            "prompt_token_ids": prompt if variant == "gen_prompt_ids_only" else None,
            "mm_placeholders": None,
            "metrics": None,
            "kv_transfer_params": None,
            "ec_transfer_params": None,
            "output_mode": "tokens",
            "choices": choices,
        }
        body: dict = {"model": MODEL, "generate_response": gen, "prompt_tokens": len(prompt), "chat_request": chat}
        if variant == "no_chat_request":
            del body["chat_request"]
        if variant == "model_omitted":
            del body["model"]
            body["chat_request"] = {k: v for k, v in chat.items() if k != "model"}
        if variant == "prompt_ids":
            body["prompt_token_ids"] = prompt
        if variant == "no_prompt_tokens":
            del body["prompt_tokens"]
        return body

    def batch(self, name: str, variant: str) -> None:
        tags = SCENARIOS[name][1]
        n = len(self.cases) + 1
        chat = self.chat(name, SCENARIOS[name][2], variant, False)
        prompt = self.prompt(chat)
        body = self.batch_body(f"gen-{CONFIG}-dev-{n}", name, variant, chat, prompt)
        status, resp = self.post(body)
        self.cases.append({
            "id": f"{CONFIG}/dev/batch/{n:04d}-{name}-{variant}",
            "config": CONFIG, "kind": "batch", "endpoint": DERENDER,
            "calls": [{"request": body, "status": status, "response": resp}],
            "tags": ["chat", *tags, f"variant:{variant}"],
        })

    def stream(self, name: str, variant: str, chunking: str) -> None:
        tags = SCENARIOS[name][1]
        n = len(self.cases) + 1
        rid = f"gen-{CONFIG}-dev-s{n}"
        chat = self.chat(name, SCENARIOS[name][2], variant, True)
        if chunking in ("usage", "cont_usage"):
            chat["stream_options"] = {"include_usage": True, "continuous_usage_stats": chunking == "cont_usage"}
        if chunking == "logprobs":
            chat.update(logprobs=True, top_logprobs=3)
        if chunking == "return_ids":
            chat["return_token_ids"] = True
        prompt = self.prompt(chat)
        ids, finish, stop_reason = self.output(name, variant)
        lanes = [(0, ids, finish, stop_reason)]
        if chunking == "n2":
            lanes.append((1, enc(self.tok, A + "Other." + E + S + F + "A second answer." + R), "stop", None))
            chat["n"] = 2
        lp_all = synth_logprobs(ids, rid) if chunking == "logprobs" else None
        rng = random.Random(zlib.crc32((name + variant + chunking).encode()))
        plans = []  # per lane: list of chunk lengths
        for _, lane_ids, _, _ in lanes:
            L = len(lane_ids)
            if chunking in ("tok1", "finish_only", "usage", "cont_usage", "logprobs", "return_ids"):
                lens = [1] * L
            elif chunking == "tok3":
                lens = [min(3, L - i) for i in range(0, L, 3)]
            elif chunking == "all":
                lens = [L]
            else:  # rand, n2
                lens, left = [], L
                while left:
                    k = min(left, rng.randint(1, 7))
                    lens.append(k)
                    left -= k
            plans.append(lens)
        # interleave the lanes' chunks
        order = []
        pos = [0] * len(lanes)
        at = [0] * len(lanes)
        while any(pos[i] < len(plans[i]) for i in range(len(lanes))):
            for li in range(len(lanes)):
                if pos[li] < len(plans[li]):
                    order.append((li, at[li], plans[li][pos[li]], pos[li] == len(plans[li]) - 1))
                    at[li] += plans[li][pos[li]]
                    pos[li] += 1
        calls, states, seen = [], {}, set()
        completion = sum(len(l[1]) for l in lanes)

        def send(gen: dict, lane: int) -> None:
            req = {"stream": True, "model": MODEL, "generate_chunk": gen, "stream_state": states.get(lane), "prompt_tokens": len(prompt), "prompt_token_ids": prompt, "chat_request": chat}
            status, resp = self.post(req)
            calls.append({"request": dict(req, stream_state=replay.PREV_STATE if lane in seen else None), "state_lane": lane, "status": status, "response": resp})
            seen.add(lane)
            if status == 200 and isinstance(resp, dict) and isinstance(resp.get("stream_state"), dict):
                states[lane] = resp["stream_state"]

        done_tokens = 0
        for li, start, k, last in order:
            index, lane_ids, lfin, lstop = lanes[li]
            piece = lane_ids[start : start + k]
            done_tokens += k
            fin_here = last and chunking != "finish_only"
            lp = None
            if lp_all is not None and li == 0:
                lp = {"content": lp_all["content"][start : start + k]}
            ch = self.choice(index, piece, lfin, lstop, lp, True, last=fin_here)
            gen = {"request_id": rid, "usage": None, "output_mode": "tokens", "choices": [ch]}
            if chunking == "cont_usage":
                gen["usage"] = {"prompt_tokens": len(prompt), "total_tokens": len(prompt) + done_tokens, "completion_tokens": done_tokens, "prompt_tokens_details": None}
            if chunking == "return_ids" and start == 0:
                gen["prompt_token_ids"] = prompt
            send(gen, li)
            if last and chunking == "finish_only":
                ch = self.choice(index, [], lfin, lstop, None, True, last=True)
                send({"request_id": rid, "usage": None, "output_mode": "tokens", "choices": [ch]}, li)
        if chunking in ("usage", "cont_usage", "n2"):
            usage = {"prompt_tokens": len(prompt), "total_tokens": len(prompt) + completion, "completion_tokens": completion, "prompt_tokens_details": None}
            send({"request_id": rid, "usage": usage, "output_mode": "tokens", "choices": []}, 0)
        be_chat = {k: v for k, v in chat.items() if k not in ("stream", "stream_options")}
        be = self.batch_body(rid, name, "n2" if chunking == "n2" else variant, be_chat, prompt)
        if chunking == "logprobs":
            be["generate_response"]["choices"][0]["logprobs"] = lp_all
        if chunking == "n2":
            be["generate_response"]["choices"][1]["token_ids"] = lanes[1][1]
        status, resp = self.post(be)
        self.cases.append({
            "id": f"{CONFIG}/dev/stream/{n:04d}-{name}-{variant}-{chunking}",
            "config": CONFIG, "kind": "stream", "endpoint": DERENDER, "calls": calls,
            "batch_equivalent": {"request": be, "status": status, "response": resp},
            "tags": ["chat", *tags, f"variant:{variant}", f"chunking:{chunking}"],
        })


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vllm", required=True)
    ap.add_argument("--out", default=str(HERE / "goldens"))
    args = ap.parse_args(argv)
    with gzip.open(HERE.parent / "models" / "gpt_oss" / "tokenizer.json.gz", "rt", encoding="utf-8") as f:
        tok = Tokenizer.from_str(f.read())
    rec = Recorder(args.vllm, tok)
    for name, (_, _, tools, _) in SCENARIOS.items():
        base = TOOL_BATCH if tools else ALL_SCENARIO_BATCH
        for v in base + EXTRA_BATCH.get(name, []):
            rec.batch(name, v)
    for name, (text, _, tools, _) in SCENARIOS.items():
        v0 = "tools_auto" if tools else "base"
        runs = [(v0, "tok1"), (v0, "tok3"), (v0, "rand"), (v0, "all")] + EXTRA_STREAMS.get(name, [])
        for v, ch in runs:
            rec.stream(name, v, ch)
    # The qwen3_hermes goldens' completion, error and render cases, re-asked.
    with gzip.open(HERE / "goldens" / "qwen3_hermes.jsonl.gz", "rt", encoding="utf-8") as f:
        source = [json.loads(line) for line in f if line.strip()]
    for case in source:
        if case["kind"] in ("error", "render") or "completion" in case.get("tags", []):
            out = record_family.rerecord(rec.client, case, "qwen3_hermes", CONFIG, ("qwen3", MODEL), {})
            n = len(rec.cases) + 1
            out["id"] = f"{CONFIG}/dev/{case['kind']}/{n:04d}-" + case["id"].split("-", 1)[1]
            rec.cases.append(out)
    path = Path(args.out) / f"{CONFIG}.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for case in rec.cases:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    kinds: dict[str, int] = {}
    for c in rec.cases:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    print(f"{CONFIG}: {len(rec.cases)} cases {kinds} -> {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
