"""DeepSeek-V3.2's DSML tool parser (`--tool-call-parser deepseek_v32`) on the
corpus recorded from live vLLM 0.33.0 (tests/reference/pending/deepseek_v32).

vLLM serves V3.2 in its `deepseek_v32` tokenizer mode, whose prompt encoder
derender does not build yet (the mode stops the server at startup), so only
the derender cases run here: that mode changes how prompts are built, while
outputs detokenize with the directory's fast tokenizer, which the `hf` mode
reads the same way. Batch answers must equal vLLM's; streams vLLM's chunks or
its batch answer (the family follows vLLM's stream algorithm)."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

from derender import Derenderer

HERE = Path(__file__).resolve().parent
PENDING = HERE / "reference" / "pending" / "deepseek_v32"
sys.path.insert(0, str(HERE / "reference"))
import replay  # noqa: E402
from goldens import is_excused, sampled  # noqa: E402
from random_cuts import InProcess  # noqa: E402

CONFIG = json.loads((PENDING / "config.json").read_text())["deepseek_v32"]


def derender_cases(corpus: str) -> list[dict]:
    with gzip.open(PENDING / f"{corpus}.jsonl.gz", "rt", encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    # Not in-process: what the HTTP layer checks (request headers), and the
    # documented divergence classes.
    return [
        c
        for c in cases
        if c["endpoint"].endswith("/derender")
        and sampled(c)
        and not is_excused(c)
        and not any("headers" in call for call in c["calls"])
    ]


def v32_core(**extra: object) -> Derenderer:
    """The fixture read in the hf mode, with the config's parsers."""
    return Derenderer(
        str(HERE / "models" / "deepseek_v32"),
        served_model_names=[CONFIG["served_model_name"]],
        tokenizer_mode="hf",
        tool_call_parser="deepseek_v32",
        reasoning_parser="deepseek_v3",
        enable_auto_tool_choice=True,
        **extra,
    )


@pytest.fixture(scope="module")
def client() -> InProcess:
    return InProcess(v32_core(stream_state_mode="replay"))


@pytest.mark.parametrize("corpus", ["goldens", "unseen"])
def test_derender_cases_answer_as_vllm(client: InProcess, corpus: str) -> None:
    cases = derender_cases(corpus)
    failures = []
    for case in cases:
        results = replay.execute_case(client, case)
        if case["kind"] == "stream":
            ok = replay.compare_case(case, results, "strict", "vllm") == [] or (
                replay.compare_case(case, results, "semantic", "batch") == []
            )
        else:
            ok = replay.compare_case(case, results, "strict", "auto") == []
        if not ok:
            failures.append(case["id"])
    assert len(cases) > 100
    assert failures == []


def test_forced_and_strict_tool_choices_carry_xgrammars_deepseek_v3_2_tag() -> None:
    """The parser's `adjust_request` puts xgrammar's `deepseek_v3_2`
    structural tag into the render's sampling params (tool_choice required
    or named, strict tools under auto), whatever builds the prompt: vLLM's
    recorded renders are compared on that field alone, the prompt here coming
    from a stand-in template."""
    core = v32_core(chat_template="{% for m in messages %}{{ m['content'] }}{% endfor %}")
    with gzip.open(PENDING / "goldens.jsonl.gz", "rt", encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    compared = 0
    for case in cases:
        call = case["calls"][0]
        if case["endpoint"] != "/v1/chat/completions/render" or call["status"] != 200:
            continue
        want = call["response"]["sampling_params"].get("structured_outputs")
        if not want or not want.get("structural_tag"):
            continue
        status, out = core.handle(case["endpoint"], json.dumps(call["request"]).encode())
        assert status == 200, (case["id"], out)
        got = json.loads(out)["sampling_params"]["structured_outputs"]
        assert json.loads(got["structural_tag"]) == json.loads(want["structural_tag"]), case["id"]
        compared += 1
    assert compared >= 6
