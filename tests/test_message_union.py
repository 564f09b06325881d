"""vLLM 0.33.0's checks of each chat message (its `ChatCompletionMessageParam` union), from
the live-recorded corpus in reference/message_union (spec: SPEC.md there): every case is
answered as vLLM answered it, byte for byte, errors included."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from calls import config_core
from conftest import REFERENCE

HERE = REFERENCE / "message_union"
CASES = [json.loads(line) for line in gzip.open(HERE / "corpus.jsonl.gz", "rt")]
OPEN = json.loads((HERE / "open.json").read_text())["cases"]


def suffix(case: dict[str, Any]) -> str:
    return case["id"].rsplit("/", 1)[-1]


def comparable(answer: Any) -> Any:
    """A render answer without vLLM's random request id."""
    if isinstance(answer, dict) and "request_id" in answer:
        return {k: v for k, v in answer.items() if k != "request_id"}
    return answer


@pytest.fixture(scope="module")
def core():
    return config_core("qwen3_plain")


def differences(core, case: dict[str, Any]) -> str | None:
    call = case["calls"][0]
    status, raw = core.handle(
        case["endpoint"], json.dumps(call["request"]).encode(), "application/json", None
    )
    got = comparable(json.loads(raw))
    want = comparable(call["response"])
    if status == call["status"] and got == want:
        return None
    shown = (json.dumps(x)[:300] for x in (got, want))
    return f"{suffix(case)}: {status} {next(shown)}\n  want {call['status']} {next(shown)}"


def test_every_message_is_accepted_or_refused_as_vllm_does(core) -> None:
    failures = [d for case in CASES if suffix(case) not in OPEN and (d := differences(core, case))]
    assert not failures, f"{len(failures)} of {len(CASES)} differ:\n" + "\n".join(failures[:5])


def test_the_open_cases_still_differ(core) -> None:
    """The open list only shrinks: a case that now passes must leave it."""
    by_suffix = {suffix(case): case for case in CASES}
    assert set(OPEN) <= set(by_suffix)
    fixed = [name for name in OPEN if differences(core, by_suffix[name]) is None]
    assert not fixed, f"now answered as vLLM does, drop from open.json: {fixed}"


def test_the_corpus_covers_each_answer_shape() -> None:
    shapes = {tag for case in CASES for tag in case["tags"] if tag.startswith("shape:")}
    assert {
        "shape:valid",
        "shape:request_time",
        "shape:tool_calls_after_validator",
        "shape:lazy_iterator",
    } <= shapes
