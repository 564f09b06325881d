"""Benchmark plumbing: a per-token summary (µs/token and ratios) at the end of the run."""

from __future__ import annotations

import pytest

RESULTS = pytest.StashKey[dict[str, float]]()
BASES = ("hf_decode_stream", "py_vllm")


@pytest.fixture(scope="session")
def results(request: pytest.FixtureRequest) -> dict[str, float]:
    """name -> median µs per token, filled by the benchmarks."""
    return request.config.stash.setdefault(RESULTS, {})


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    figures = config.stash.get(RESULTS, {})
    if not figures:
        return
    tr = terminalreporter
    tr.section("per-token detokenization, median of rounds (ratio = time / base time)")
    tr.write_line(f"{'':40s} {'µs/token':>9s}" + "".join(f" {'/ ' + b:>18s}" for b in BASES))
    for name, us in sorted(figures.items(), key=lambda kv: kv[1]):
        ratios = "".join(f" {us / figures[b]:17.2f}x" if b in figures else " " * 19 for b in BASES)
        tr.write_line(f"{name:40s} {us:9.3f}{ratios}")
