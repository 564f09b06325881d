"""`--generation-config` and `--override-generation-config`: render's default
sampling values against vLLM 0.33.0's answers (recorded by
reference/record_generation_config.py on the bundled Qwen3 model)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from derender import DEFAULT_MODEL_DIR, Derenderer

CORPUS = Path(__file__).parent / "reference" / "generation_config" / "qwen3.jsonl.gz"


def load() -> tuple[dict, list[dict]]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as f:
        head, *cases = (json.loads(line) for line in f)
    return head, cases


def without_ids(answer: object) -> object:
    """Render answers minus their generated request ids."""
    if isinstance(answer, list):
        return [without_ids(a) for a in answer]
    if isinstance(answer, dict):
        return {k: v for k, v in answer.items() if k != "request_id"}
    return answer


def core_for(flags: list[str], gen_dir: Path) -> Derenderer:
    kwargs: dict[str, str] = {}
    for flag, value in zip(flags[::2], flags[1::2], strict=True):
        kwargs[flag[2:].replace("-", "_")] = value.replace("{dir}", str(gen_dir))
    return Derenderer(str(DEFAULT_MODEL_DIR), served_model_names=["qwen3"], **kwargs)


def test_default_sampling_values_follow_the_generation_config_flags(tmp_path):
    head, cases = load()
    (tmp_path / "generation_config.json").write_text(json.dumps(head["dir_config"]))
    cores: dict[str, Derenderer] = {}
    failures = []
    for case in cases:
        key = json.dumps(case["flags"])
        core = cores.setdefault(key, core_for(case["flags"], tmp_path))
        body = json.dumps({"model": "qwen3", **case["request"]}).encode()
        status, raw = core.handle(case["endpoint"], body)
        got = without_ids(json.loads(raw))
        if status != case["status"] or got != without_ids(case["response"]):
            failures.append(f"{key} {case['endpoint']} {case['request']}: {str(got)[:300]}")
    assert len(cases) == 25
    assert failures == []


def test_a_generation_config_directory_without_the_file_stops_the_server(tmp_path):
    with pytest.raises(ValueError, match=r"--generation-config .*generation_config\.json"):
        Derenderer(str(DEFAULT_MODEL_DIR), generation_config=str(tmp_path))
    with pytest.raises(ValueError, match="--override-generation-config must be a JSON object"):
        Derenderer(str(DEFAULT_MODEL_DIR), override_generation_config="[1]")
