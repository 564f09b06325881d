"""`derender parsers`: what an operator checks before serving a model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from derender import DEFAULT_MODEL_DIR
from derender.cli import main

DEEPSEEK_V3 = Path(__file__).parent / "models" / "deepseek_v3"
VLLM_PARSERS = Path(__file__).parent.parent.parent / "shared" / "reference" / "vllm-parsers.json"


def listing(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    main(["parsers", "--json", *args])
    return json.loads(capsys.readouterr().out)


def names(rows: list[dict]) -> set[str]:
    return {n for row in rows for n in [row["name"], *row["aliases"]]}


def test_every_family_is_listed_with_its_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    got = listing(capsys)
    hermes = next(row for row in got["tool"] if row["name"] == "hermes")
    assert hermes["aliases"] == ["qwen3_json"]
    assert {"glm45", "glm47"} <= names(got["reasoning"])
    assert {"deepseek_r1", "step5"} <= names(got["reasoning"])
    # A name is listed once, under its family.
    rows = [n for row in got["tool"] for n in [row["name"], *row["aliases"]]]
    assert len(rows) == len(set(rows))
    assert "fits" not in hermes


@pytest.mark.skipif(not VLLM_PARSERS.exists(), reason="no shared/reference/vllm-parsers.json")
def test_every_listed_name_is_one_vllm_registers(capsys: pytest.CaptureFixture[str]) -> None:
    vllm = json.loads(VLLM_PARSERS.read_text())
    got = listing(capsys)
    assert names(got["tool"]) <= set(vllm["tool_parsers"])
    assert names(got["reasoning"]) <= set(vllm["reasoning_parsers"])


def test_a_model_is_checked_against_each_parsers_vocabulary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    qwen = {row["name"]: row["fits"] for row in listing(capsys, str(DEFAULT_MODEL_DIR))["tool"]}
    assert qwen["hermes"] is None
    assert qwen["deepseek_v3"] == "could not locate tool call start/end tokens in the tokenizer"
    deepseek = listing(capsys, str(DEEPSEEK_V3))
    assert {row["name"]: row["fits"] for row in deepseek["tool"]}["deepseek_v3"] is None


def test_the_table_names_each_parser_and_what_it_needs(capsys: pytest.CaptureFixture[str]) -> None:
    main(["parsers"])
    out = capsys.readouterr().out
    assert "hermes, qwen3_json" in out
    assert "deepseek_v3" in out and "as single tokens" in out


def test_an_unreadable_model_is_one_error_line(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as e:
        main(["parsers", str(tmp_path / "absent")])
    assert str(e.value).startswith("error: ")


README = Path(__file__).parent.parent / "README.md"


def readme_names(flag: str) -> set[str]:
    """The parser names (backticked, aliases included) in the README's row for `flag`."""
    row = next(
        line for line in README.read_text().splitlines() if line.startswith(f"| `{flag} NAME`")
    )
    described = row.split("|")[2]
    return {n for n in re.findall(r"`([^`]+)`", described) if re.fullmatch(r"[a-z0-9_\-]+", n)}


def test_the_readme_lists_exactly_the_registered_names(capsys: pytest.CaptureFixture[str]) -> None:
    got = listing(capsys)
    assert readme_names("--reasoning-parser") == names(got["reasoning"])
    assert readme_names("--tool-call-parser") == names(got["tool"])
