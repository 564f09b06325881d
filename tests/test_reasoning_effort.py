"""`--reasoning-effort-map` and `--anthropic-disabled-thinking-effort` against
vLLM 0.33.0's answers under the same flags (tests/reference/reasoning_effort,
recorded by reference/record_reasoning_effort.py): chat, Responses, Messages,
completions and /tokenize renders on a template that reads the effort (Qwen3's
enable_thinking) and on Harmony (gpt-oss's system message), and the startup
errors for bad values."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from calls import config_core, post
from conftest import REFERENCE

from derender.cli import build_parser

RECORDED = REFERENCE / "reasoning_effort"
CORPORA = sorted(p for p in RECORDED.glob("*.jsonl.gz") if p.name != "startup_errors.jsonl.gz")


def rows(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def without_request_id(body: object) -> object:
    """vLLM draws a random request id when the request names none."""
    if isinstance(body, list):
        return [without_request_id(b) for b in body]
    if isinstance(body, dict):
        return {k: v for k, v in body.items() if k != "request_id"}
    return body


@pytest.mark.parametrize("path", CORPORA, ids=lambda p: p.name.removesuffix(".jsonl.gz"))
def test_renders_follow_the_effort_flags_as_vllm_does(path: Path) -> None:
    config = path.name.removesuffix(".jsonl.gz")
    calls = [r for r in rows(path) if "path" in r]
    failures = []
    for call in calls:
        core = config_core(config, *call["flags"])
        status, body = post(core, call["path"], call["request"])
        if status != call["status"] or without_request_id(body) != without_request_id(call["body"]):
            failures.append(f"{call['setting']} {call['name']}: {status} {str(body)[:300]}")
    assert len(calls) > 80
    assert failures == []


def test_bad_effort_flags_stop_the_server_as_vllm_does(capsys: pytest.CaptureFixture) -> None:
    for case in rows(RECORDED / "startup_errors.jsonl.gz"):
        flags = case["flags"]
        vllm_says = [line for line in case["output_tail"] if "rror" in line][-1:]
        vllm_says = vllm_says[0] if vllm_says else ""
        if case["returncode"] == 2:
            # argparse refuses the value itself, with vLLM's message.
            with pytest.raises(SystemExit) as stopped:
                build_parser().parse_args(["serve", *flags])
            assert stopped.value.code == 2
            argparse_line = capsys.readouterr().err.strip().splitlines()[-1]
            assert argparse_line.split("error: ", 1)[1] == vllm_says.split("error: ", 1)[1]
        elif case["returncode"] == 1:
            with pytest.raises(ValueError) as refused:
                config_core("qwen3_hermes", *flags)
            assert str(refused.value) in vllm_says
        else:
            config_core("qwen3_hermes", *flags)
