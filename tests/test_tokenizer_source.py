"""`--tokenizer`, `--revision` and `--tokenizer-revision` read the files vLLM reads: the
setups recorded from vLLM 0.33.0 by reference/record_tokenizer_source.py, replayed in-process
on the same layout (a model directory, a tokenizer directory, a cache with two snapshots)."""

from __future__ import annotations

import gzip
import json
import sys
from typing import Any

import pytest
from conftest import REFERENCE

from derender import Derenderer

sys.path.insert(0, str(REFERENCE))
from record_tokenizer_source import build_layout  # noqa: E402

RECORDED = REFERENCE / "tokenizer_source.jsonl.gz"
LINES = [json.loads(line) for line in gzip.open(RECORDED, "rt", encoding="utf-8")]
HEADER, CASES = LINES[0], LINES[1:]
KWARGS = {"--tokenizer": "tokenizer", "--revision": "revision",
          "--tokenizer-revision": "tokenizer_revision"}  # fmt: skip


def core_for(case: dict[str, Any], where: dict[str, str]) -> Derenderer:
    flags = [f.format(**where) for f in case["flags"]]
    kwargs = {KWARGS[flags[i]]: flags[i + 1] for i in range(0, len(flags), 2)}
    return Derenderer(case["model"].format(**where), served_model_names=["m"], **kwargs)


def test_the_recorded_setups_show_each_file_read_from_where_vllm_reads_it():
    """The corpus tells the sources apart: the two templates render differently, and
    the two generation configs give different defaults (else a setup proves nothing)."""
    renders = {str(case["answers"][1]["response"]["token_ids"]) for case in CASES if case["starts"]}
    defaults = {
        json.dumps(case["answers"][3]["response"][0]["sampling_params"])
        for case in CASES
        if case["starts"]
    }
    assert len(renders) == 2 and len(defaults) == 2


def setup_id(case: dict[str, Any]) -> str:
    return " ".join([case["model"], *case["flags"]]).replace("{", "").replace("}", "")


@pytest.mark.parametrize("case", CASES, ids=setup_id)
def test_a_setup_answers_as_vllm_did(case, tmp_path, monkeypatch):
    where = build_layout(tmp_path)
    monkeypatch.setenv("HF_HUB_CACHE", where["hub"])
    if not case["starts"]:
        revision = case["flags"][-1]
        with pytest.raises(ValueError, match=f"at revision `{revision}`"):
            core_for(case, where)
        return
    core = core_for(case, where)
    models, *answers = case["answers"]
    assert core.max_model_len == models["max_model_len"]
    for answer in answers:
        status, raw = core.handle(
            answer["path"], json.dumps(answer["body"]).encode(), "application/json", None
        )
        assert (status, json.loads(raw)) == (answer["status"], answer["response"]), answer["path"]
