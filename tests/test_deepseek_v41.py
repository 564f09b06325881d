"""DeepSeek-V4.1: vLLM's `deepseek_v41` tokenizer mode (DeepSeek's V4.1 encoder
over the request's own messages) and its one-engine `deepseek_v41` reasoning
and tool parser. The recorded corpora run in the shared suites; this file holds
what is particular to the mode: how it is chosen, the effort and system
markers that set it apart from V4, and where derender answers differently
(docs/divergences.md)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from derender import Derenderer
from derender.cli import _tokenizer_mode, build_parser

HERE = Path(__file__).resolve().parent
MODEL = HERE / "models" / "deepseek_v41"
GOLDENS = HERE / "reference" / "goldens" / "deepseek_v41.jsonl.gz"


def golden(suffix: str) -> dict:
    with gzip.open(GOLDENS, "rt", encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    return next(c for c in cases if c["id"].endswith(suffix))


def core(mode: str = "deepseek_v41") -> Derenderer:
    return Derenderer(
        str(MODEL),
        served_model_names=["deepseek_v41"],
        tokenizer_mode=mode,
        tool_call_parser="deepseek_v41",
        reasoning_parser="deepseek_v41",
        enable_auto_tool_choice=True,
    )


def answer(case: dict, served: Derenderer) -> tuple[int, dict]:
    call = case["calls"][0]
    status, out = served.handle(case["endpoint"], json.dumps(call["request"]).encode())
    return status, json.loads(out)


def test_auto_picks_the_mode_by_architecture() -> None:
    model = str(MODEL)
    for flags, mode in (([], "deepseek_v41"), (["--tokenizer-mode", "hf"], "hf")):
        args = build_parser().parse_args(["serve", model, *flags])
        assert _tokenizer_mode(args, model, model, model) == mode


def test_renders_follow_the_v41_encoder_as_vllm_recorded_them() -> None:
    """The numeric effort preamble after `<｜System｜>`, a mid-conversation
    system message with its own marker opening the reply, a turn of tool
    results that opens none, `wo_eos`, and an integer effort from the kwargs."""
    served = core()
    for suffix in (
        "-v41_system_mid_chat",
        "-v41_system_last",
        "-v41_tool_result_last",
        "-v41_assistant_wo_eos",
        "-v41_kw_effort_int_over_request",
        "-v41_tool_call_args_string_nonjson",
    ):
        case = golden(suffix)
        status, out = answer(case, served)
        assert status == 200, (suffix, out)
        assert out["token_ids"] == case["calls"][0]["response"]["token_ids"], suffix


def test_effort_outside_the_v41_set_is_refused_even_without_thinking() -> None:
    served = core()
    for suffix in ("-v41_kw_effort_int_0_chat", "-v41_kw_effort_float_50p0", "-v4_effort_medium"):
        case = golden(suffix)
        status, out = answer(case, served)
        assert (status, out) == (400, case["calls"][0]["response"]), suffix


def test_deepseek_v41_refuses_images_and_answers_asserts_with_400s() -> None:
    """Deliberate: no image processor (vLLM expands each image into tiles);
    the encoder's assertions, which vLLM answers 500, are 400s with its text."""
    served = core()
    status, out = answer(golden("-v41_img_part_then_text"), served)
    assert status == 400
    assert out["error"]["message"].startswith("derender does not render images")
    for suffix in ("-v41_developer_empty_chat", "-v4_task_bogus"):
        case = golden(suffix)
        expected = case["calls"][0]["response"]["error"]["message"]
        status, out = answer(case, served)
        assert status == 400, suffix
        prefix = expected.split("[")[0]
        assert out["error"]["message"].startswith(prefix), (suffix, out)
    # Audio and video keep vLLM's own refusals.
    case = golden("-v41_parts_video_url")
    assert answer(case, served) == (400, case["calls"][0]["response"])


def test_the_spaced_dsml_calls_parse_and_v4_spelling_stays_content() -> None:
    served = core()

    def message(body: dict) -> tuple:
        m = body["choices"][0]["message"]
        calls = [
            (c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls") or ()
        ]
        return m.get("content"), m.get("reasoning"), calls

    for suffix in ("-tool_parallel-tools_auto", "-tool_v4_spelling-tools_auto"):
        case = golden(suffix)
        status, out = answer(case, served)
        assert status == 200, (suffix, out)
        assert message(out) == message(case["calls"][0]["response"]), suffix
    assert message(out)[2] == []
