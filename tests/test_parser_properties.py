"""Chunk invariance of the parser streams on generated outputs: for each
family, seeded well-formed outputs (reasoning, text, calls with unicode,
escapes, numbers and nested values, text after the calls) under several
request variants, streamed one token per chunk, all at once and at random
cuts, must assemble to the batch answer. The documented divergence classes
(docs/divergences.md: malformed or truncated calls, whitespace next to a
call, llama JSON after prose) are not generated. The families, their parsers,
models and output shapes are in tests/reference/families.json."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from calls import CHAT, PROMPT, assemble, batch, stream
from families import FAMILIES as FACTS
from families import ROOT

from derender import Derenderer

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {
                    "a": {"type": "string"},
                    "n": {"type": "integer"},
                    "o": {"type": "object"},
                },
            },
        },
    }
    for name in ("f", "get_weather")
]
TEXTS = [
    "Sure.",
    "好的，查一下",
    "Let me check 🌤️ now",
    "a < b && c > d",
    "Done: {x}",
    "Résumé — ok",
]
STRINGS = ["x", "Zürich 🏔", 'say "hi"\n', "a\\b", "東京"]


def arguments(rng: random.Random) -> dict:
    if rng.random() < 0.15:
        return {}
    args: dict = {"a": rng.choice(STRINGS)}
    if rng.random() < 0.4:
        args["n"] = rng.randint(-5, 100)
    if rng.random() < 0.3:
        args["o"] = {"k": [1, 2, None], "t": True}
    return args


def xml(args: dict, template: str) -> str:
    """Arguments as XML parameters (non-strings as JSON)."""
    return "".join(
        template.format(k=k, v=v if isinstance(v, str) else json.dumps(v)) for k, v in args.items()
    )


def python_literal(v: object) -> str:
    if isinstance(v, dict):
        return (
            "{" + ", ".join(f"{python_literal(k)}: {python_literal(x)}" for k, x in v.items()) + "}"
        )
    if isinstance(v, list):
        return "[" + ", ".join(python_literal(x) for x in v) + "]"
    return repr(v)


Call = Callable[[dict, str], str]


def hermes(args: dict, name: str) -> str:
    body = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>"


def glm(args: dict, name: str) -> str:
    params = xml(args, "<arg_key>{k}</arg_key><arg_value>{v}</arg_value>")
    return f"<tool_call>{name}{params}</tool_call>"


def hermes_tags(open_tag: str, close_tag: str) -> Call:
    """Hermes JSON calls inside another family's tags (LongCat's)."""

    def call(args: dict, name: str) -> str:
        body = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
        return f"{open_tag}\n{body}\n{close_tag}"

    return call


def qwen3_xml(open_tag: str, close_tag: str) -> Call:
    def call(args: dict, name: str) -> str:
        params = xml(args, "<parameter={k}>\n{v}\n</parameter>\n")
        return f"{open_tag}\n<function={name}>\n{params}</function>\n{close_tag}"

    return call


def minimax(args: dict, name: str) -> str:
    params = xml(args, '<parameter name="{k}">{v}</parameter>\n')
    return f'<minimax:tool_call>\n<invoke name="{name}">\n{params}</invoke>\n</minimax:tool_call>'


def deepseek_v31(args: dict, name: str) -> str:
    body = json.dumps(args, ensure_ascii=False)
    return f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{body}<｜tool▁call▁end｜>"


def deepseek_v3(args: dict, name: str) -> str:
    body = json.dumps(args, ensure_ascii=False)
    header = f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}"
    return f"{header}\n```json\n{body}\n```<｜tool▁call▁end｜>"


def mistral(args: dict, name: str) -> str:
    return json.dumps({"name": name, "arguments": args}, ensure_ascii=False)


def pythonic(args: dict, name: str) -> str:
    return f"{name}({', '.join(f'{k}={python_literal(v)}' for k, v in args.items())})"


def llama3_json(args: dict, name: str) -> str:
    return json.dumps({"name": name, "parameters": args}, ensure_ascii=False)


# The call syntaxes `generated.call` names in tests/reference/families.json;
# `qwen3_xml` and `hermes_tags` take their open and close tags from
# `generated.call_tags`.
CALLS: dict[str, Callable] = {
    "hermes": hermes,
    "hermes_tags": hermes_tags,
    "glm": glm,
    "qwen3_xml": qwen3_xml,
    "minimax": minimax,
    "deepseek_v31": deepseek_v31,
    "deepseek_v3": deepseek_v3,
    "mistral": mistral,
    "pythonic": pythonic,
    "llama3_json": llama3_json,
}

# The families' parser facts as Derenderer keyword arguments.
PARSER_ARGS = {"tool_parser": "tool_call_parser", "reasoning_parser": "reasoning_parser"}


@dataclass
class Family:
    """How a family's outputs look: its model, parsers and call syntax."""

    model_dir: Path
    eos: int
    parsers: dict
    call: Call
    think: tuple[str, str] | None = None
    sep: str = ""
    wrap: tuple[str, str] = ("", "")
    # Text may come before and after the calls (not for formats that must
    # start with the calls).
    text_first: bool = True
    # Text after the calls (not for families whose streams send it as vLLM's
    # stream does, where batch drops it: docs/divergences.md). Such families
    # also generate no separator between calls, which is text after a call.
    text_after: bool = True

    @classmethod
    def from_facts(cls, facts: dict) -> Family:
        """A family's entry of tests/reference/families.json."""
        gen = dict(facts["generated"])
        call = CALLS[gen.pop("call")]
        if "call_tags" in gen:
            call = call(*gen.pop("call_tags"))
        parsers = {arg: facts[fact] for fact, arg in PARSER_ARGS.items() if facts[fact]}
        for pair in ("think", "wrap"):
            if pair in gen:
                gen[pair] = tuple(gen[pair])
        return cls(ROOT / facts["model_dir"], parsers=parsers, call=call, **gen)

    def output(self, rng: random.Random) -> str:
        out = ""
        if self.think and rng.random() < 0.7:
            start, end = self.think
            out += f"{start}{rng.choice(TEXTS)}{rng.choice(['', chr(10)])}{rng.choice(TEXTS)}{end}"
        calls = [
            self.call(arguments(rng), rng.choice(["f", "get_weather"]))
            for _ in range(rng.choice([0, 1, 2, 3]))
        ]
        if not calls or (self.text_first and rng.random() < 0.6):
            out += rng.choice(TEXTS)
        if calls:
            out += self.wrap[0] + self.sep.join(calls) + self.wrap[1]
            if self.text_first and self.text_after and rng.random() < 0.3:
                out += rng.choice(TEXTS)
        return out


# Families without a `generated` entry are left out (tests/reference/
# families.json says which and why); their recorded corpora cover them.
FAMILIES = {name: Family.from_facts(facts) for name, facts in FACTS.items() if "generated" in facts}


def request(rng: random.Random) -> dict:
    req: dict = {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}
    if rng.random() < 0.3:
        req["tool_choice"] = "none"
    if rng.random() < 0.2:
        req["include_reasoning"] = False
    if rng.random() < 0.2:
        req["chat_template_kwargs"] = {"enable_thinking": False}
    return req


def chunkings(ids: list[int], rng: random.Random) -> list[list[tuple]]:
    cuts_list = [list(range(1, len(ids))), []]
    for _ in range(4):
        cuts_list.append(
            sorted(rng.sample(range(1, len(ids)), min(len(ids) - 1, rng.randint(1, 8))))
        )
    out = []
    for cuts in cuts_list:
        parts = [ids[a:b] for a, b in zip([0, *cuts], [*cuts, len(ids)], strict=True)]
        out.append([(p, None, None) for p in parts[:-1]] + [(parts[-1], "stop", None)])
    return out


def batch_shape(choice: dict) -> tuple:
    message = choice["message"]
    calls = message.get("tool_calls") or []
    parsed = [
        (c["function"]["name"], json.loads(c["function"]["arguments"] or "{}")) for c in calls
    ]
    reasoning, content = message.get("reasoning") or "", message.get("content") or ""
    return reasoning, content, parsed, choice["finish_reason"]


def stream_shape(got: dict) -> tuple:
    calls = [got["calls"][i] for i in sorted(got["calls"])]
    parsed = [(c["name"], json.loads(c["arguments"] or "{}")) for c in calls]
    return got["reasoning"], got["content"], parsed, got["finish"]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_generated_outputs_stream_as_batch(family):
    fam = FAMILIES[family]
    core = Derenderer(
        str(fam.model_dir),
        served_model_names=["m"],
        enable_auto_tool_choice="tool_call_parser" in fam.parsers,
        **fam.parsers,
    )
    rng = random.Random(f"parser-properties-{family}")
    for _ in range(40):
        text, req = fam.output(rng), request(rng)
        ids = [*core.encode(text), fam.eos]
        want = batch_shape(batch(core, ids, req, prompt_ids=PROMPT))
        for chunks in chunkings(ids, rng):
            got = stream_shape(assemble(stream(core, CHAT, chunks, "chat_request", req)))
            assert got == want, (text, req, [len(c[0]) for c in chunks])
