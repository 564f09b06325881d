"""`--hf-overrides` against vLLM 0.33.0's render server under the same flags
(tests/reference/hf_overrides, recorded by reference/record_hf_overrides.py): the
context length /tokenize reports and render and derender enforce, with and without
`--max-model-len`, and vLLM's refusal of a `text_config` it cannot use."""

from __future__ import annotations

import gzip
import json

import pytest
from calls import config_core, post
from conftest import REFERENCE

with gzip.open(REFERENCE / "hf_overrides" / "qwen3_hermes.jsonl.gz", "rt") as f:
    ROWS = [json.loads(line) for line in f]


def without_request_ids(body: object) -> object:
    if isinstance(body, list):
        return [without_request_ids(b) for b in body]
    if isinstance(body, dict):
        return {k: v for k, v in body.items() if k not in ("request_id", "created")}
    return body


def test_answers_follow_the_overridden_config_as_vllms() -> None:
    calls = [r for r in ROWS if "path" in r]
    failures = []
    for call in calls:
        core = config_core("qwen3_hermes", *call["flags"])
        status, body = post(core, call["path"], call["request"])
        if (status, without_request_ids(body)) != (
            call["status"],
            without_request_ids(call["body"]),
        ):
            failures.append(f"{call['setting']} {call['name']}: {status} {str(body)[:200]}")
    assert len(calls) == 18
    assert failures == []


def test_a_config_vllm_cannot_start_with_is_refused() -> None:
    refused = [r for r in ROWS if r.get("started") is False]
    assert refused
    for row in refused:
        vllm_says = row["output_tail"][-2] + row["output_tail"][-1]
        with pytest.raises(ValueError) as stopped:
            config_core("qwen3_hermes", *row["flags"])
        message = str(stopped.value).removeprefix("--hf-overrides: ")
        assert message in vllm_says
