"""Cohere Command: vLLM's `cohere` tokenizer mode (cohere-melody's cmd4 / cmd3
templates write the prompt text) and its `cohere_command4` / `cohere_command3`
parsers (melody's output filter). The recorded corpora run in the shared
suites; this file holds what is particular to the mode: how it is chosen,
the template-id alias, and where derender answers differently on purpose
(docs/divergences.md): a 400 where vLLM fails with a 500, and a parser pair
vLLM would run half of."""

from __future__ import annotations

import functools
import gzip
import json
import shutil
from pathlib import Path

import pytest
from calls import config_core, post, rendered
from goldens import load_cases

from derender.cli import _tokenizer_mode, build_parser

HERE = Path(__file__).resolve().parent
MODEL = HERE / "models" / "cohere_command"
RENDER = "/v1/chat/completions/render"
QUESTION = [{"role": "user", "content": "What's the weather like in Paris?"}]


@functools.cache
def cases() -> tuple[dict, ...]:
    return tuple(load_cases("cohere_command4"))


def golden(suffix: str) -> dict:
    return next(c for c in cases() if c["id"].endswith(suffix))


def test_only_the_flag_picks_the_mode() -> None:
    """vLLM never picks `cohere` under auto (no architecture maps to it)."""
    model = str(MODEL)
    for flags, mode in (([], "hf"), (["--tokenizer-mode", "cohere"], "cohere")):
        args = build_parser().parse_args(["serve", model, *flags])
        assert _tokenizer_mode(args, model, model, model) == mode


def test_cmd4_hf_is_an_alias_of_cmd4_hf_template() -> None:
    served = config_core("cohere_command4")
    case = golden("/render/0779-kw_template_id_cmd4-hf")
    request = dict(case["calls"][0]["request"])
    request["chat_template_kwargs"] = {"template_id": "cmd4_hf"}
    status, out = post(served, RENDER, request)
    assert status == 200, out
    assert out["token_ids"] == case["calls"][0]["response"]["token_ids"]


def test_a_schema_xgrammar_refuses_is_a_400() -> None:
    """vLLM's xgrammar raises inside `adjust_request`, which vLLM answers with
    a 500; derender answers 400 with xgrammar's message."""
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "foo"}}}
    status, out = post(
        config_core("cohere_command4"), RENDER, {"messages": QUESTION, "tools": [tool]}
    )
    assert status == 400, out
    assert out["error"]["message"] == 'Unsupported type "foo"'


def test_a_tool_result_repeated_in_a_later_turn_is_a_400() -> None:
    """melody panics on a call id whose results were given in an earlier run of
    tool messages (vLLM: a 500); derender refuses it, naming the message."""
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [
        *QUESTION,
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "a", "content": "r1"},
        {"role": "user", "content": "again"},
        {"role": "tool", "tool_call_id": "a", "content": "r2"},
    ]
    status, out = post(config_core("cohere_command4"), RENDER, {"messages": messages})
    assert status == 400, out
    assert "tool message[4] repeats tool_call_id" in out["error"]["message"]


def test_an_architecture_without_cohere_tags_refuses_tools(tmp_path) -> None:
    """`MODEL_TO_TAG_STYLE` names three architectures; for any other, a request
    with tools (or a JSON schema) is vLLM's 400 and one without renders."""
    model = tmp_path / "model"
    shutil.copytree(MODEL, model)
    config = json.loads((model / "config.json").read_text())
    config["architectures"] = ["CohereForCausalLM"]
    (model / "config.json").write_text(json.dumps(config))
    from derender import Derenderer

    flags = {"tool_call_parser": "cohere_command4", "enable_auto_tool_choice": True}
    served = Derenderer(str(model), served_model_names=["c"], tokenizer_mode="cohere", **flags)
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    status, out = post(served, RENDER, {"messages": QUESTION, "tools": [tool]})
    assert status == 400, out
    assert "architecture ('CohereForCausalLM') does not support Cohere" in out["error"]["message"]
    status, out = post(served, RENDER, {"messages": QUESTION})
    assert status == 200, out


def test_another_familys_parser_beside_cohere_stops_the_server() -> None:
    """vLLM runs melody's filter for a Cohere reasoning parser beside any tool
    parser (only the tool parser's presence is read); derender refuses the
    pair at startup rather than ignore the second parser."""
    with pytest.raises(ValueError, match="cannot be combined"):
        config_core("cohere_command4", "--tool-call-parser", "hermes")


def test_a_grounding_that_is_not_a_string_is_a_400() -> None:
    """vLLM lower-cases `grounding` unchecked (an `AttributeError`, a 500);
    derender answers 400 with Python's message."""
    kwargs = {"grounding": 1}
    status, out = post(
        config_core("cohere_command4"),
        RENDER,
        {"messages": QUESTION, "chat_template_kwargs": kwargs},
    )
    assert status == 400, out
    assert out["error"]["message"] == "'int' object has no attribute 'lower'"


def test_seeded_random_chats_render_as_vllm() -> None:
    """Random conversations (Cohere's markers in caller text, colliding call
    ids, results answering unknown ids, reasoning, tools, tool choices and the
    renderer's keywords: cmd3, documents, grounding, safety, template ids)
    rendered by live vLLM (record_render_fuzz.py --config cohere_command4).
    vLLM's 500s there are all melody's stale-slot panic, a 400 here."""
    path = HERE / "reference" / "render_fuzz" / "cohere_command4.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        recorded = [json.loads(line) for line in f if line.strip()]
    served = config_core("cohere_command4")
    panics = 0
    for case in recorded:
        status, raw = served.handle(case["endpoint"], json.dumps(case["request"]).encode())
        got = (status, rendered(status, json.loads(raw)))
        if case["status"] == 500:
            panics += 1
            assert status == 400 and "from an earlier run of tool messages" in got[1], case["id"]
            continue
        assert got == (case["status"], rendered(case["status"], case["response"])), case["id"]
    assert len(recorded) == 600 and panics > 0
