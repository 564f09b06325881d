"""DeepSeek-V3.2: vLLM's `deepseek_v32` tokenizer mode (prompts written by
DeepSeek's encoder, not a template) and its DSML tool parser. The recorded
corpora (goldens, unseen, render_recorded, responses) run in the shared
suites; this file holds what is particular to the mode: how it is chosen,
and its one deliberate difference (docs/divergences.md)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from derender import Derenderer
from derender.cli import _tokenizer_mode, build_parser

HERE = Path(__file__).resolve().parent
MODEL = HERE / "models" / "deepseek_v32"
GOLDENS = HERE / "reference" / "goldens" / "deepseek_v32.jsonl.gz"
CONFIG = json.loads((HERE / "reference" / "configs.json").read_text())["deepseek_v32"]


def golden(suffix: str) -> dict:
    with gzip.open(GOLDENS, "rt", encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    return next(c for c in cases if c["id"].endswith(suffix))


def core(mode: str) -> Derenderer:
    return Derenderer(
        str(MODEL),
        served_model_names=[CONFIG["served_model_name"]],
        tokenizer_mode=mode,
        tool_call_parser="deepseek_v32",
        reasoning_parser="deepseek_v3",
        enable_auto_tool_choice=True,
    )


def test_auto_picks_the_mode_by_architecture_and_an_explicit_mode_is_kept() -> None:
    """vLLM's `auto` switches to `deepseek_v32` for DeepseekV32ForCausalLM
    (`config/model.py`); `--tokenizer-mode hf` keeps the template path."""
    model = str(MODEL)
    for flags, mode in (([], "deepseek_v32"), (["--tokenizer-mode", "hf"], "hf")):
        args = build_parser().parse_args(["serve", model, *flags])
        assert _tokenizer_mode(args, model, model, model) == mode
    args = build_parser().parse_args(["serve", model, "--tokenizer-mode", "deepseek_v32"])
    assert _tokenizer_mode(args, model, model, model) == "deepseek_v32"


def test_the_encoder_writes_the_prompt_where_the_hf_mode_has_no_template() -> None:
    """The fixture ships no chat template: the hf mode refuses a chat render
    that the deepseek_v32 mode answers with vLLM's recorded ids."""
    case = golden("/render/1110-simple")
    call = case["calls"][0]
    body = json.dumps(call["request"]).encode()
    status, out = core("deepseek_v32").handle(case["endpoint"], body)
    assert status == 200
    assert json.loads(out)["token_ids"] == call["response"]["token_ids"]
    status, out = core("hf").handle(case["endpoint"], body)
    assert status == 400
    assert "chat template" in json.loads(out)["error"]["message"]


def test_an_empty_conversation_is_a_400_where_vllm_answers_500() -> None:
    """The encoder's IndexError on `[]` reaches vLLM's client as a 500;
    derender answers 400 with its message (docs/divergences.md)."""
    case = golden("/error/1128-empty_messages")
    call = case["calls"][0]
    assert call["status"] == 500
    status, out = core("deepseek_v32").handle(
        case["endpoint"], json.dumps(call["request"]).encode()
    )
    assert status == 400
    error = json.loads(out)["error"]
    assert error["message"] == call["response"]["error"]["message"] == "list index out of range"
    assert error["type"] == "BadRequestError"
