"""`/v1/responses/render` against vLLM 0.33.0's recorded answers.

The corpus (reference/responses/<config>.jsonl.gz) was recorded from real
`vllm launch render` servers by reference/record_responses.py. Every field
must be equal except a generated `request_id`; errors must carry the same
status and envelope.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from calls import config_core
from families import PENDING_CONFIGS

from derender import Derenderer

HERE = Path(__file__).parent
CORPUS = HERE / "reference" / "responses"
CONFIGS = json.loads((HERE / "reference" / "configs.json").read_text())
NAMES = (p.name.removesuffix(".jsonl.gz") for p in CORPUS.glob("*.jsonl.gz"))
RECORDED = sorted(c for c in NAMES if c not in PENDING_CONFIGS)
PATH = "/v1/responses/render"

# Errors of pydantic's big unions (input items, tools, tool_choice,
# text.format): vLLM lists every union member's complaint; derender names
# the same first location but not the whole list (docs/divergences.md).
UNION_ERRORS = {
    "tool_choice_bad",
    "tool_missing_name",
    "tool_bad_type",
    "input_list_of_strings",
    "input_item_bad_role",
    "input_item_no_content",
    "input_item_unknown_type",
    "input_item_function_call_missing_args",
    "input_part_bad_type",
    "text_format_bad",
    "h_builtin_container",
}


def core_for(config: str) -> Derenderer:
    """The core `derender serve` builds for the config (its tokenizer mode too)."""
    return config_core(config)


def load(config: str) -> list[dict]:
    with gzip.open(CORPUS / f"{config}.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def mismatch(case: dict, status: int, out: dict) -> str | None:
    want = case["response"]
    if case["status"] >= 500:
        # vLLM crashed (docs/divergences.md): derender answers, never a 5xx.
        return None if status < 500 else f"status {status}: {json.dumps(out)[:300]}"
    if status != case["status"]:
        return f"status {status} != {case['status']}: {json.dumps(out)[:300]}"
    if status != 200:
        if case["id"] in UNION_ERRORS:
            got = {k: out["error"][k] for k in ("type", "param", "code")}
            exp = {k: want["error"][k] for k in ("type", "param", "code")}
            return None if got == exp else f"{got} != {exp}"
        return None if out == want else f"{out} != {want}"
    request = case["request"]
    if not (isinstance(request, dict) and isinstance(request.get("request_id"), str)):
        assert out["request_id"].startswith("resp_")
        out = {**out, "request_id": want["request_id"]}
    if out == want:
        return None
    diffs = [k for k in want if out.get(k) != want.get(k)]
    detail = {k: (out.get(k), want.get(k)) for k in diffs if k != "token_ids"}
    return f"fields {diffs}: {json.dumps(detail)[:600]}"


@pytest.mark.parametrize("config", RECORDED)
def test_responses_render_matches_vllm(config):
    core = core_for(config)
    cases = load(config)
    failures = []
    for case in cases:
        body = json.dumps(case["request"]).encode()
        status, raw = core.handle(PATH, body, "application/json", None)
        problem = mismatch(case, status, json.loads(raw))
        if problem:
            failures.append(f"{case['id']}: {problem}")
    assert len(cases) >= 100
    assert failures == [], "\n".join(failures)
