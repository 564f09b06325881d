"""Benchmark plumbing: a per-token summary (µs/token and ratios) at the end of the run."""

from __future__ import annotations

import pytest

RESULTS = pytest.StashKey[dict[str, float]]()


@pytest.fixture(scope="session")
def results(request: pytest.FixtureRequest) -> dict[str, float]:
    """name -> median µs per token, filled by the benchmarks."""
    return request.config.stash.setdefault(RESULTS, {})


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    figures = config.stash.get(RESULTS, {})
    if not figures:
        return
    base = figures.get("native_stream")
    terminalreporter.section("per-token detokenization (median of rounds)")
    for name, us in figures.items():
        ratio = f"  {us / base:6.2f}x native_stream" if base else ""
        terminalreporter.write_line(f"{name:40s} {us:9.3f} µs/token{ratio}")
