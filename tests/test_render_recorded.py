"""Render parity on unseen cases: seeded random render requests (valid and damaged) whose
answers were recorded from vLLM 0.33's `vllm launch render` (reference/record_render.py),
replayed in-process against each config's derender core."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from calls import config_core
from conftest import REFERENCE
from families import PENDING_CONFIGS

RECORDED = REFERENCE / "render_recorded"
CONFIGS = json.loads((REFERENCE / "configs.json").read_text())
FILES = sorted(
    path
    for path in RECORDED.glob("*.jsonl.gz")
    if path.name.removesuffix(".jsonl.gz") not in PENDING_CONFIGS
)
# vLLM's random request id when the request names none.
RANDOM_ID = re.compile(r"^(chatcmpl|cmpl)-[0-9a-f]{16}(-\d+)?$")


def without_random_ids(answer: Any, body: dict[str, Any]) -> Any:
    """Request ids vLLM drew at random become a marker, checked for shape."""
    if "request_id" in body or not isinstance(answer, (dict, list)):
        return answer
    items = answer if isinstance(answer, list) else [answer]
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("request_id"), str):
            assert RANDOM_ID.match(item["request_id"]), item["request_id"]
            item["request_id"] = "<random>"
    return answer


def error_shape(answer: Any) -> Any:
    """Errors compare by envelope, type and param; texts are compared where they
    do not embed pydantic internals (see docs/divergences.md "Error texts")."""
    err = answer["error"]
    return {"type": err["type"], "param": err["param"], "code": err["code"]}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name.split(".")[0])
def test_render_matches_vllm_on_recorded_random_requests(path: Path) -> None:
    config = path.name.split(".")[0]
    core = config_core(config)
    failures = []
    lines = [json.loads(line) for line in gzip.open(path, "rt")]
    for i, case in enumerate(lines):
        status, raw = core.handle(
            case["path"], json.dumps(case["body"]).encode(), "application/json", None
        )
        got = json.loads(raw)
        want = case["response"]
        if status != case["status"]:
            failures.append(f"#{i}: status {status} != {case['status']}: {str(got)[:300]}")
            continue
        if status == 200:
            got, want = (
                without_random_ids(got, case["body"]),
                without_random_ids(want, case["body"]),
            )
        else:
            got, want = error_shape(got), error_shape(want)
        if got != want:
            body, shown = json.dumps(case["body"])[:200], (json.dumps(x)[:400] for x in (got, want))
            failures.append(f"#{i}: {body}\n  got  {next(shown)}\n  want {next(shown)}")
    assert not failures, f"{len(failures)} of {len(lines)} differ:\n" + "\n".join(failures[:5])
