"""Benchmark plumbing: summaries (medians and ratios within the run) at the end of the run:
per-token detokenization (bench_detok.py) and parser stream replay (bench_parse_replay.py)."""

from __future__ import annotations

import pytest

RESULTS = pytest.StashKey[dict[str, float]]()
BASES = ("hf_decode_stream", "py_vllm")
REPLAY = pytest.StashKey[dict[int, dict[str, float]]]()
REPLAY_METHODS = ("native", "python", "python_parse", "plugin")


@pytest.fixture(scope="session")
def results(request: pytest.FixtureRequest) -> dict[str, float]:
    """name -> median µs per token, filled by the benchmarks."""
    return request.config.stash.setdefault(RESULTS, {})


@pytest.fixture(scope="session")
def replay_results(request: pytest.FixtureRequest) -> dict[int, dict[str, float]]:
    """output position N -> method -> median ms per call, filled by bench_parse_replay.py."""
    return request.config.stash.setdefault(REPLAY, {})


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    detok_summary(terminalreporter, config.stash.get(RESULTS, {}))
    replay_summary(terminalreporter, config.stash.get(REPLAY, {}))


def detok_summary(tr, figures: dict[str, float]) -> None:
    if not figures:
        return
    tr.section("per-token detokenization, median of rounds (ratio = time / base time)")
    tr.write_line(f"{'':40s} {'µs/token':>9s}" + "".join(f" {'/ ' + b:>18s}" for b in BASES))
    for name, us in sorted(figures.items(), key=lambda kv: kv[1]):
        ratios = "".join(f" {us / figures[b]:17.2f}x" if b in figures else " " * 19 for b in BASES)
        tr.write_line(f"{name:40s} {us:9.3f}{ratios}")


def replay_summary(tr, replay: dict[int, dict[str, float]]) -> None:
    if not replay:
        return
    tr.section("parser stream replay, one call at position N: median ms (ratio = time / native)")
    tr.write_line(
        f"{'N':>6s}"
        + "".join(f" {m:>13s}" for m in REPLAY_METHODS)
        + "".join(f" {m + ' / native':>22s}" for m in REPLAY_METHODS[1:])
    )
    for n, row in sorted(replay.items()):
        cells = "".join(f" {row[m]:13.3f}" if m in row else " " * 14 for m in REPLAY_METHODS)
        native = row.get("native")
        ratios = "".join(
            f" {row[m] / native:21.1f}x" if native and m in row else " " * 23
            for m in REPLAY_METHODS[1:]
        )
        tr.write_line(f"{n:>6d}{cells}{ratios}")
