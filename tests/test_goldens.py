"""Golden parity: replay vLLM 0.33.0's recorded answers against a real
`derender serve` started with each plain config's flags, scored by the
reference `replay.py` exactly as the acceptance check scores it."""

from __future__ import annotations

import gzip
import json

import pytest
from conftest import REFERENCE
from families import excuse
from goldens import (
    CONFIGS_UNDER_TEST,
    UNSEEN_STREAM_SAMPLE,
    compare,
    execute,
    is_excused,
    load_cases,
    replay,
    sampled,
    score,
    server_args,
    without_states,
)


@pytest.fixture(scope="module", params=CONFIGS_UNDER_TEST)
def config_server(request):
    """The config's server in `--stream-state-mode replay`: vLLM's own state
    format, so whole answers (stream states included) compare strictly."""
    from conftest import Server

    server = Server([*server_args(request.param), "--stream-state-mode", "replay"])
    yield request.param, server
    server.stop()


@pytest.fixture(scope="module")
def compact_server(config_server):
    """The same config in the default mode (compact stream states)."""
    from conftest import Server

    config, _ = config_server
    server = Server(server_args(config))
    yield server
    server.stop()


def test_batch_and_stream_strict(config_server):
    config, server = config_server
    ran, failures = score(config, server.url, {"batch", "stream"}, "strict")
    assert ran > 60
    assert failures == []


def recorded(config: str, kind: str) -> int:
    """How many cases of `kind` the config's corpus holds (cohere_command3's
    shares cohere_command4's renderer and records few render or error cases)."""
    return sum(case["kind"] == kind for case in load_cases(config))


def test_errors_strict(config_server):
    config, server = config_server
    ran, failures = score(config, server.url, {"error"}, "strict")
    assert ran >= min(51, recorded(config, "error")) > 0
    assert failures == []


def test_render_strict(config_server):
    config, server = config_server
    ran, failures = score(config, server.url, {"render"}, "strict")
    assert ran >= min(15, recorded(config, "render")) > 0
    assert failures == []


def test_compact_states_give_replays_chunks(config_server, compact_server):
    """Compact stream states (the default) and vLLM's history replay give
    the same chunks on every stream golden, chunk by chunk."""
    config, replay_server = config_server
    compact, history = replay.Client(compact_server.url), replay.Client(replay_server.url)
    ran, different = 0, []
    for case in load_cases(config):
        if case["kind"] != "stream" or not sampled(case):
            continue
        ran += 1
        got = without_states(replay.execute_case(compact, case))
        want = without_states(execute(history, case))
        if got != want:
            first = next(i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b)
            different.append(f"{case['id']}: call {first}: {got[first]} != {want[first]}")
    assert ran >= 15
    assert different == []


def test_excused_streams_give_vllms_answer_or_batchs(config_server):
    """An excused stream is not free: it must assemble to what vLLM's own
    stream gave or to the batch answer (semantic level), so the excuses
    cannot hide a stream that is simply wrong."""
    config, server = config_server
    client = replay.Client(server.url)
    ran, neither = 0, []
    for case in load_cases(config):
        # `goldens_mixed`: streams that follow batch on one point, vLLM on another.
        if case["kind"] != "stream" or not is_excused(case) or excuse("goldens_mixed", case):
            continue
        ran += 1
        results = execute(client, case)
        as_vllm = replay.compare_case(case, results, "semantic", "vllm")
        if as_vllm and not batch_but_edge_whitespace(case, results):
            neither.append(f"{case['id']}: {as_vllm[:2]}")
    if ran == 0:
        pytest.skip(f"{config}: its corpus has no excused stream")
    assert neither == []


def batch_but_edge_whitespace(case: dict, results: list) -> bool:
    """The stream assembles to the batch answer, except maybe for whitespace
    at the ends of `content`, which batch strips once it returns calls and
    which has streamed before the calls showed (docs/divergences.md)."""
    if not replay.compare_case(case, results, "semantic", "batch"):
        return True
    streamed = replay.assemble_chat_stream(results)
    got = {"choices": streamed["choices"], "usage": streamed["usage"]}
    want = replay.assemble_chat_batch(case["batch_equivalent"]["response"])
    want = replay._batch_tool_args_normalize(want)
    if got["usage"] is None:
        want["usage"] = None
    for choice in (*got["choices"].values(), *want["choices"].values()):
        choice["content"] = choice["content"].strip()
    return replay.normalize(got, "stream") == replay.normalize(want, "stream")


# --- The unseen corpus: model outputs from vLLM's own parser tests ---------
#
# tests/reference/unseen/<config>.jsonl.gz holds vLLM 0.33.0's answers to the
# outputs in vllm_parser_outputs.json (recorded by record.py beside it; see
# docs/testing.md). None of these were looked at while writing the parsers.

UNSEEN = REFERENCE / "unseen"


def load_unseen(config: str) -> list[dict]:
    path = UNSEEN / f"{config}.jsonl.gz"
    if not path.exists():
        return []
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def unseen_excused(case: dict) -> bool:
    """In a documented divergence class (the `unseen` classes of
    tests/reference/families.json). Only streams are excused: every batch
    answer must match."""
    if case["kind"] != "stream":
        return False
    return excuse("unseen", case) is not None


def test_unseen_strict(config_server):
    """Batch strict, streams strict against vLLM's chunks (or its batch
    answer where its own stream disagrees with it), states in vLLM's format."""
    config, server = config_server
    cases = load_unseen(config)
    if not cases:
        pytest.skip(f"no unseen corpus for {config}")
    client = replay.Client(server.url)
    ran, failures = 0, []
    for case in cases:
        if unseen_excused(case) or not sampled(case, UNSEEN_STREAM_SAMPLE):
            continue
        ran += 1
        diffs = compare(case, replay.execute_case(client, case), "strict")
        if diffs:
            failures.append(f"{case['id']}: {diffs[:3]}")
    # Some families' vLLM tests hold only a few outputs.
    assert ran >= min(20, len(cases) // UNSEEN_STREAM_SAMPLE)
    assert failures == []


def test_unseen_compact_states_semantic(config_server, compact_server):
    """The same cases with our compact stream states (the default mode)."""
    config, _ = config_server
    cases = load_unseen(config)
    if not cases:
        pytest.skip(f"no unseen corpus for {config}")
    client = replay.Client(compact_server.url)
    failures = []
    for case in cases:
        if unseen_excused(case) or not sampled(case, UNSEEN_STREAM_SAMPLE):
            continue
        diffs = compare(case, replay.execute_case(client, case), "semantic")
        if diffs:
            failures.append(f"{case['id']}: {diffs[:3]}")
    assert failures == []


def test_unseen_excused_streams(config_server):
    """An excused unseen stream assembles to vLLM's own stream or to its
    batch answer (edge whitespace aside), so the excuses cannot hide a
    stream that is simply wrong."""
    config, server = config_server
    excused = [c for c in load_unseen(config) if unseen_excused(c)]
    if not excused:
        pytest.skip(f"no excused unseen cases for {config}")
    client = replay.Client(server.url)
    neither = []
    for case in excused:
        results = replay.execute_case(client, case)
        as_vllm = replay.compare_case(case, results, "semantic", "vllm")
        if as_vllm and not batch_but_edge_whitespace(case, results):
            neither.append(f"{case['id']}: {as_vllm[:2]}")
    assert neither == []
