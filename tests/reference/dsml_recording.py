"""What the DeepSeek DSML-family recorders share (record_deepseek_v32.py, record_deepseek_v4.py).

A recorder describes its family with a `Family` (config and served name, the
scenarios, the batch variants, the users, the tools, how a scenario's thinking
switch is spelled in chat_template_kwargs, the n=2 second answer, the stop
token of the `stop_tok` variant, the render tag) and hands it to `Recorder`,
which builds the chat request of each scenario and variant, asks the live vLLM
for the prompt (/v1/chat/completions/render), and records batch derenders,
streams at several chunkings (each with the stream_state vLLM returned carried
to the next call, replay.PREV_STATE, and a batch_equivalent) and render calls.
`record_derender` runs every scenario's batch variants and streams,
`reask_qwen3_hermes` re-asks the qwen3_hermes goldens' completion, error and
render cases as record_family.py does, and `write_cases` writes the corpus.
"""

from __future__ import annotations

import copy
import gzip
import json
import random
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import record_family  # noqa: E402
import replay  # noqa: E402

DERENDER = "/v1/chat/completions/derender"
CHAT_RENDER = "/v1/chat/completions/render"
CMPL_RENDER = "/v1/completions/render"


def fn(
    name: str, props: dict, description: str | None = None, required: list[str] | None = None
) -> dict:
    f: dict = {"name": name}
    if description is not None:
        f["description"] = description
    f["parameters"] = {"type": "object", "properties": props}
    if required:
        f["parameters"]["required"] = required
    return {"type": "function", "function": f}


@dataclass
class Family:
    """One DSML family's recording inputs (see the module docstring)."""

    config: str
    model: str
    # name -> (text, tags, tools?, finish_reason, thinking?)
    scenarios: dict[str, tuple[str, list[str], bool, str, bool]]
    variants: dict[str, dict]
    users: list[str]
    tools: list[dict]
    # a scenario's thinking flag -> the chat_template_kwargs it sends (None: none)
    thinking_kwargs: Callable[[bool], dict | None]
    # (tools?, thinking?) -> the text of the n=2 second answer
    second: Callable[[bool, bool], str]
    stop_tok: int
    render_tag: str
    all_scenario_batch: list[str] = field(default_factory=list)
    tool_batch: list[str] = field(default_factory=list)
    extra_batch: dict[str, list[str]] = field(default_factory=dict)
    extra_streams: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


class Tok:
    """The fixture's tokenizer.json (or .gz); `checks` are (token, id) pairs asserted on load."""

    def __init__(self, model_dir: Path, checks: list[tuple[str, int]]):
        from tokenizers import Tokenizer

        plain = model_dir / "tokenizer.json"
        if plain.exists():
            self.tk = Tokenizer.from_file(str(plain))
        else:
            with gzip.open(model_dir / "tokenizer.json.gz", "rt", encoding="utf-8") as f:
                self.tk = Tokenizer.from_str(f.read())
        for name, want in checks:
            got = self.tk.token_to_id(name)
            assert got == want, (name, got, want)

    def enc(self, text: str) -> list[int]:
        return self.tk.encode(text, add_special_tokens=False).ids if text else []


def synth_logprobs(ids: list[int], seed: str) -> dict:
    rng = random.Random(zlib.crc32(seed.encode()))
    content = []
    for t in ids:
        lp = round(-rng.random() * 3, 4)
        rank = rng.randint(1, 3)
        top = [{"token_id": t, "logprob": lp, "rank": rank}]
        for r in range(1, 4):
            top.append(
                {
                    "token_id": rng.randint(1000, 127999),
                    "logprob": round(-rng.random(), 4),
                    "rank": r,
                }
            )
        content.append({"token_id": t, "logprob": lp, "rank": rank, "top_logprobs": top})
    return {"content": content}


# ---------------------------------------------------------------------------
# Batch and stream derender cases
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Batch and stream derender cases
# ---------------------------------------------------------------------------


class Recorder:
    def __init__(self, url: str, tok: Tok, family: Family):
        self.client = replay.Client(url)
        self.tok = tok
        self.f = family
        self.cases: list[dict] = []
        self.renders: dict[str, list[int]] = {}

    def post(self, body: object, path: str = DERENDER) -> tuple[int, object]:
        status, resp, _, _ = self.client.post(path, body)
        return status, resp

    def chat(self, name: str, variant: str, stream: bool) -> dict:
        _, _, tools, _, thinking = self.f.scenarios[name]
        if variant == "flip":
            thinking = not thinking
        i = zlib.crc32(name.encode()) % len(self.f.users)
        req: dict = {"model": self.f.model, "messages": [], "max_tokens": 1024}
        if i % 2 == 0:
            req["messages"].append({"role": "system", "content": "You are a helpful assistant."})
        req["messages"].append({"role": "user", "content": self.f.users[i]})
        if tools and variant != "no_tools":
            req["tools"] = self.f.tools
        kw = self.f.thinking_kwargs(thinking)
        if kw is not None:
            req["chat_template_kwargs"] = kw
        req.update(copy.deepcopy(self.f.variants[variant]))
        if tools and variant == "base":
            req["tool_choice"] = "auto"
        if stream:
            req["stream"] = True
        return req

    def prompt(self, chat: dict) -> list[int]:
        """vLLM's render of the chat request (every chat request here renders)."""
        body = {k: v for k, v in chat.items() if k not in ("stream", "stream_options")}
        key = json.dumps(body, sort_keys=True)
        if key not in self.renders:
            status, resp = self.post(body, CHAT_RENDER)
            if status != 200:
                raise RuntimeError(f"render {status}: {resp}")
            self.renders[key] = resp["token_ids"]
        return self.renders[key]

    def output(self, name: str, variant: str) -> tuple[list[int], str, object]:
        text, _, _, finish, _ = self.f.scenarios[name]
        ids = self.tok.enc(text)
        stop_reason: object = None
        if variant in ("stop", "stop_include") and "###" in text:
            stop_reason = "###"
            finish = "stop"
            cut = text.find("###")
            ids = self.tok.enc(text[: cut + 3])
        if variant == "stop_tok":
            stop_reason = self.f.stop_tok
            finish = "stop"
            ids = (
                ids[: ids.index(self.f.stop_tok) + 1]
                if self.f.stop_tok in ids
                else ids[:-1] + [self.f.stop_tok]
            )
        return ids, finish, stop_reason

    def second(self, name: str) -> list[int]:
        _, _, tools, _, thinking = self.f.scenarios[name]
        return self.tok.enc(self.f.second(tools, thinking))

    def choice(
        self,
        index: int,
        ids: list[int],
        finish: str,
        stop_reason,
        logprobs,
        stream: bool,
        last: bool = True,
    ) -> dict:
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
            c = {
                k: c[k]
                for k in (
                    "index",
                    "finish_reason",
                    "stop_reason",
                    "token_ids",
                    "routed_experts",
                    "sampling_mask",
                    "weight_versions",
                    "logprobs",
                )
            }
        return c

    def batch_body(self, rid: str, name: str, variant: str, chat: dict, prompt: list[int]) -> dict:
        ids, finish, stop_reason = self.output(name, variant)
        lp = synth_logprobs(ids, rid) if variant in ("logprobs", "logprobs_unrequested") else None
        choices = [self.choice(0, ids, finish, stop_reason, lp, False)]
        total = len(ids)
        if variant == "n2":
            ids2 = self.second(name)
            choices.append(self.choice(1, ids2, "stop", None, None, False))
            total += len(ids2)
        gen = {
            "request_id": rid,
            "model": None,
            "created": None,
            "usage": {
                "prompt_tokens": len(prompt),
                "total_tokens": len(prompt) + total,
                "completion_tokens": total,
                "prompt_tokens_details": None,
            },
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
        body: dict = {
            "model": self.f.model,
            "generate_response": gen,
            "prompt_tokens": len(prompt),
            "chat_request": chat,
        }
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
        tags = self.f.scenarios[name][1]
        n = len(self.cases) + 1
        chat = self.chat(name, variant, False)
        prompt = self.prompt(chat)
        body = self.batch_body(f"gen-{self.f.config}-dev-{n}", name, variant, chat, prompt)
        status, resp = self.post(body)
        self.cases.append(
            {
                "id": f"{self.f.config}/dev/batch/{n:04d}-{name}-{variant}",
                "config": self.f.config,
                "kind": "batch",
                "endpoint": DERENDER,
                "calls": [{"request": body, "status": status, "response": resp}],
                "tags": ["chat", *tags, f"variant:{variant}"],
            }
        )

    def stream(self, name: str, variant: str, chunking: str) -> None:
        tags = self.f.scenarios[name][1]
        n = len(self.cases) + 1
        rid = f"gen-{self.f.config}-dev-s{n}"
        chat = self.chat(name, variant, True)
        if chunking in ("usage", "cont_usage"):
            chat["stream_options"] = {
                "include_usage": True,
                "continuous_usage_stats": chunking == "cont_usage",
            }
        if chunking == "logprobs":
            chat.update(logprobs=True, top_logprobs=3)
        if chunking == "return_ids":
            chat["return_token_ids"] = True
        prompt = self.prompt(chat)
        ids, finish, stop_reason = self.output(name, variant)
        lanes = [(0, ids, finish, stop_reason)]
        if chunking == "n2":
            lanes.append((1, self.second(name), "stop", None))
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
            elif chunking in ("tok2", "tok7"):
                k = int(chunking[3:])
                lens = [min(k, L - i) for i in range(0, L, k)]
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
        completion = sum(len(lane[1]) for lane in lanes)

        def send(gen: dict, lane: int) -> None:
            req = {
                "stream": True,
                "model": self.f.model,
                "generate_chunk": gen,
                "stream_state": states.get(lane),
                "prompt_tokens": len(prompt),
                "prompt_token_ids": prompt,
                "chat_request": chat,
            }
            status, resp = self.post(req)
            calls.append(
                {
                    "request": dict(req, stream_state=replay.PREV_STATE if lane in seen else None),
                    "state_lane": lane,
                    "status": status,
                    "response": resp,
                }
            )
            seen.add(lane)
            if (
                status == 200
                and isinstance(resp, dict)
                and isinstance(resp.get("stream_state"), dict)
            ):
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
                gen["usage"] = {
                    "prompt_tokens": len(prompt),
                    "total_tokens": len(prompt) + done_tokens,
                    "completion_tokens": done_tokens,
                    "prompt_tokens_details": None,
                }
            if chunking == "return_ids" and start == 0:
                gen["prompt_token_ids"] = prompt
            send(gen, li)
            if last and chunking == "finish_only":
                ch = self.choice(index, [], lfin, lstop, None, True, last=True)
                send(
                    {"request_id": rid, "usage": None, "output_mode": "tokens", "choices": [ch]}, li
                )
        if chunking in ("usage", "cont_usage", "n2"):
            usage = {
                "prompt_tokens": len(prompt),
                "total_tokens": len(prompt) + completion,
                "completion_tokens": completion,
                "prompt_tokens_details": None,
            }
            send({"request_id": rid, "usage": usage, "output_mode": "tokens", "choices": []}, 0)
        be_chat = {k: v for k, v in chat.items() if k not in ("stream", "stream_options")}
        be = self.batch_body(rid, name, "n2" if chunking == "n2" else variant, be_chat, prompt)
        if chunking == "logprobs":
            be["generate_response"]["choices"][0]["logprobs"] = lp_all
        status, resp = self.post(be)
        self.cases.append(
            {
                "id": f"{self.f.config}/dev/stream/{n:04d}-{name}-{variant}-{chunking}",
                "config": self.f.config,
                "kind": "stream",
                "endpoint": DERENDER,
                "calls": calls,
                "batch_equivalent": {"request": be, "status": status, "response": resp},
                "tags": ["chat", *tags, f"variant:{variant}", f"chunking:{chunking}"],
            }
        )

    def render(self, name: str, endpoint: str, body: object, tags: list[str]) -> None:
        n = len(self.cases) + 1
        status, resp = self.post(body, endpoint)
        kind = "render" if status == 200 else "error"
        self.cases.append(
            {
                "id": f"{self.f.config}/dev/{kind}/{n:04d}-{name}",
                "config": self.f.config,
                "kind": kind,
                "endpoint": endpoint,
                "calls": [{"request": body, "status": status, "response": resp}],
                "tags": ["render", self.f.render_tag, *tags],
            }
        )


def record_derender(rec: Recorder) -> None:
    """Every scenario's batch variants, then its streams (tok1/tok3/rand/all under its base + extras)."""
    f = rec.f
    for name, (_, _, tools, _, _) in f.scenarios.items():
        base = f.tool_batch if tools else f.all_scenario_batch
        for v in base + f.extra_batch.get(name, []):
            rec.batch(name, v)
    for name, (_, _, tools, _, _) in f.scenarios.items():
        v0 = "tools_auto" if tools else "base"
        runs = [(v0, "tok1"), (v0, "tok3"), (v0, "rand"), (v0, "all")] + f.extra_streams.get(
            name, []
        )
        for v, ch in runs:
            rec.stream(name, v, ch)


def reask_qwen3_hermes(rec: Recorder) -> None:
    """The qwen3_hermes goldens' completion, error and render cases, re-asked (served name swapped)."""
    with gzip.open(HERE / "goldens" / "qwen3_hermes.jsonl.gz", "rt", encoding="utf-8") as f:
        source = [json.loads(line) for line in f if line.strip()]
    for case in source:
        if case["kind"] in ("error", "render") or "completion" in case.get("tags", []):
            out = record_family.rerecord(
                rec.client, case, "qwen3_hermes", rec.f.config, ("qwen3", rec.f.model), {}
            )
            n = len(rec.cases) + 1
            out["id"] = f"{rec.f.config}/dev/{case['kind']}/{n:04d}-" + case["id"].split("-", 1)[1]
            rec.cases.append(out)


def write_cases(cases: list[dict], path: Path) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for case in cases:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    kinds: dict[str, int] = {}
    for c in cases:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    print(f"{len(cases)} cases {kinds} -> {path} ({path.stat().st_size} bytes)")


# ---------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------


def u(content: object, **kw) -> dict:
    return {"role": "user", "content": content, **kw}


def s(content: object, **kw) -> dict:
    return {"role": "system", "content": content, **kw}


def a(content: object = None, **kw) -> dict:
    m: dict = {"role": "assistant"}
    if content is not None or not kw:
        m["content"] = content
    m.update(kw)
    return m


def tc(cid: str, name: str = "get_weather", args: object = '{"city": "Paris"}') -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def tr(cid: str, content: object = '{"temp_c": 18, "sky": "cloudy"}', **kw) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": content, **kw}
