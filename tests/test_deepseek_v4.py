"""DeepSeek-V4: vLLM's `deepseek_v4` tokenizer mode (DeepSeek's encoder,
fill-in-the-middle completions) and its one-engine `deepseek_v4` reasoning and
tool parser. The recorded corpora run in the shared suites; this file holds
what is particular to the mode: how it is chosen and where its answers differ
from the hf mode on the same directory."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from derender import Derenderer
from derender.cli import _tokenizer_mode, build_parser

HERE = Path(__file__).resolve().parent
MODEL = HERE / "models" / "deepseek_v4"
GOLDENS = HERE / "reference" / "goldens" / "deepseek_v4.jsonl.gz"


def golden(suffix: str) -> dict:
    with gzip.open(GOLDENS, "rt", encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    return next(c for c in cases if c["id"].endswith(suffix))


def core(mode: str) -> Derenderer:
    return Derenderer(
        str(MODEL),
        served_model_names=["deepseek_v4"],
        tokenizer_mode=mode,
        tool_call_parser="deepseek_v4",
        reasoning_parser="deepseek_v4",
        enable_auto_tool_choice=True,
    )


def test_auto_picks_the_mode_by_architecture() -> None:
    model = str(MODEL)
    for flags, mode in (([], "deepseek_v4"), (["--tokenizer-mode", "hf"], "hf")):
        args = build_parser().parse_args(["serve", model, *flags])
        assert _tokenizer_mode(args, model, model, model) == mode


def test_a_suffix_is_a_fill_in_the_middle_prompt_only_in_the_v4_mode() -> None:
    """`render_completion_suffix`: V4's renderer frames each text prompt with
    its FIM markers; the hf renderer has none and refuses the suffix."""
    case = golden("-v4_cmpl_suffix_list")
    call = case["calls"][0]
    body = json.dumps(call["request"]).encode()
    status, out = core("deepseek_v4").handle(case["endpoint"], body)
    assert status == 200
    assert [r["token_ids"] for r in json.loads(out)] == [r["token_ids"] for r in call["response"]]
    status, out = core("hf").handle(case["endpoint"], body)
    assert status == 400
    message = json.loads(out)["error"]["message"]
    assert message.startswith("suffix is only supported for models with FIM")


def test_thinking_defaults_on_and_the_effort_writes_its_preamble() -> None:
    """No thinking keyword: the prompt opens `<think>` after the high-effort
    preamble; `thinking: false` closes it, as vLLM's recorded renders do."""
    for suffix in ("/render/1307-simple", "/render/1308-simple-chat"):
        case = golden(suffix)
        call = case["calls"][0]
        body = json.dumps(call["request"]).encode()
        status, out = core("deepseek_v4").handle(case["endpoint"], body)
        assert status == 200, out
        assert json.loads(out)["token_ids"] == call["response"]["token_ids"]
