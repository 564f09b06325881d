"""Beam's grammar decisions on seeded random tool requests, against a live vLLM 0.33.0's
(reference/record_beam_renders.py): per request, the error or the `structured_outputs` and
`reasoning_ended` render answers, replayed in-process against the `beam` config's core."""

from __future__ import annotations

import gzip
import json

from calls import config_core
from conftest import REFERENCE

CORPUS = REFERENCE / "beam_renders.jsonl.gz"


def test_beam_grammars_match_vllm_on_random_tool_requests() -> None:
    core = config_core("beam")
    cases = [json.loads(line) for line in gzip.open(CORPUS, "rt", encoding="utf-8")]
    failures = []
    for i, case in enumerate(cases):
        status, raw = core.handle(
            case["path"], json.dumps(case["body"]).encode(), "application/json", None
        )
        answer = json.loads(raw)
        if status != case["status"]:
            failures.append(f"#{i}: status {status} != {case['status']}: {raw[:200]!r}")
        elif status != 200:
            if answer["error"]["message"] != case["error"]:
                failures.append(f"#{i}: {answer['error']['message']!r} != {case['error']!r}")
        else:
            got = (
                answer["sampling_params"].get("structured_outputs"),
                answer.get("reasoning_ended"),
            )
            if got != (case["structured_outputs"], case["reasoning_ended"]):
                failures.append(f"#{i}: {json.dumps(case['body'])[:300]}")
    assert len(cases) >= 300
    assert (
        sum(
            1
            for c in cases
            if c["status"] == 200 and (c["structured_outputs"] or {}).get("structural_tag")
        )
        >= 200
    )
    assert not failures, f"{len(failures)} of {len(cases)} differ:\n" + "\n".join(failures[:5])
