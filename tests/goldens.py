"""vLLM 0.33.0's recorded answers (tests/reference/goldens) and how the
golden tests score a server against them with the reference `replay.py`.
A plain module: tests import these helpers from here, never from another
test module."""

from __future__ import annotations

import gzip
import json
import os
import sys
import zlib

from conftest import MODEL_DIRS, REFERENCE
from families import GOLDEN_CONFIGS, VLLM_OR_BATCH_CONFIGS, excuse

sys.path.insert(0, str(REFERENCE))
import replay  # noqa: E402

CONFIGS = json.loads((REFERENCE / "configs.json").read_text())
# Configs whose goldens and model dirs the repository carries: the plain ones
# and each parser family's (tests/reference/families.json).
CONFIGS_UNDER_TEST = GOLDEN_CONFIGS


# The README's test command replays every batch, error and render golden but
# one stream golden in STREAM_SAMPLE (a fixed choice, by a hash of the case
# id); the slow run (`DERENDER_EXHAUSTIVE=1`, docs/testing.md) replays all.
EXHAUSTIVE = bool(os.environ.get("DERENDER_EXHAUSTIVE"))
STREAM_SAMPLE = 4
# The unseen corpora's streams (each output at four chunkings): one in
# UNSEEN_STREAM_SAMPLE in the normal run, all in the slow run.
UNSEEN_STREAM_SAMPLE = 6


# Streams longer than LONG_STREAM calls are sampled LONG_STREAM_THINNING
# times more sparsely: vLLM-style history replay (the reference server mode)
# re-reads the whole output on every call, so their cost grows as calls².
LONG_STREAM = 300
LONG_STREAM_THINNING = 3


def sampled(case: dict, every: int = STREAM_SAMPLE) -> bool:
    """Is this case in the normal run's sample (streams: one in `every`)?"""
    if EXHAUSTIVE or case["kind"] != "stream":
        return True
    if len(case["calls"]) > LONG_STREAM:
        every *= LONG_STREAM_THINNING
    return zlib.crc32(case["id"].encode()) % every == 0


def load_cases(config: str) -> list[dict]:
    with gzip.open(REFERENCE / "goldens" / f"{config}.jsonl.gz", "rt") as f:
        return [json.loads(line) for line in f]


def is_excused(case: dict) -> bool:
    """In a deliberate, documented divergence class (docs/divergences.md):
    the `goldens` classes of tests/reference/families.json."""
    return excuse("goldens", case) is not None


def server_args(config: str) -> list[str]:
    c = CONFIGS[config]
    return [str(MODEL_DIRS[c["model"]]), "--served-model-name", c["served_model_name"], *c["flags"]]


def score(config: str, url: str, kinds: set[str], level: str) -> tuple[int, list[str]]:
    client = replay.Client(url)
    failures: list[str] = []
    ran = 0
    for case in load_cases(config):
        if case["kind"] not in kinds or is_excused(case) or not sampled(case):
            continue
        ran += 1
        results = execute(client, case)
        diffs = compare(case, results, level)
        if diffs:
            failures.append(f"{case['id']}: {diffs[:3]}")
    return ran, failures


class _Answers:
    """The answers of the latest reference server, by case id: the strict
    and the compact-state tests replay the same streams on it, and a long
    stream costs calls² there (see LONG_STREAM)."""

    server = ""
    by_case: dict[str, list] = {}


def execute(client: replay.Client, case: dict) -> list:
    """`replay.execute_case`, remembered for the latest server."""
    server = f"{client.host}:{client.port}"
    if server != _Answers.server:
        _Answers.server, _Answers.by_case = server, {}
    if case["id"] not in _Answers.by_case:
        _Answers.by_case[case["id"]] = replay.execute_case(client, case)
    return _Answers.by_case[case["id"]]


def compare(case: dict, results: list, level: str) -> list[str]:
    """The parity rule: a stream equals vLLM's chunks, or, where vLLM's
    stream disagrees with its batch answer, assembles to the batch answer
    (`replay.py`'s "auto"). A family that follows vLLM's stream algorithm
    (VLLM_OR_BATCH_CONFIGS) is held to vLLM's chunks or batch's answer on
    every stream."""
    if case["kind"] != "stream":
        return replay.compare_case(case, results, level, "auto")
    as_vllm = replay.compare_case(case, results, level, "vllm")
    if case["config"] not in VLLM_OR_BATCH_CONFIGS:
        return as_vllm and replay.compare_case(case, results, level, "auto")
    if as_vllm and not replay.compare_case(case, results, "semantic", "batch"):
        return []
    return as_vllm


def without_states(results: list) -> list:
    """Answers with their stream states left out (normalised: volatile ids)."""
    out = []
    for status, resp in results:
        if isinstance(resp, dict):
            resp = {k: v for k, v in resp.items() if k != "stream_state"}
        out.append((status, replay.normalize(resp, "stream")))
    return out
