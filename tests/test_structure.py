"""The test suite's own layout: tests share helpers through plain modules
(`calls`, `goldens`, `workers`, `families`, `conftest`), never by importing
another test module, so each test file can be read and changed alone."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_test_module_imports_another():
    offenders = {
        path.name: sorted(m for m in imported_modules(path) if m.startswith("test_"))
        for path in sorted(TESTS.glob("*.py"))
    }
    assert {name: mods for name, mods in offenders.items() if mods} == {}


def test_the_check_sees_a_test_import(tmp_path):
    sample = tmp_path / "test_sample.py"
    sample.write_text("from test_goldens import score\nimport test_serving as s\n")
    assert imported_modules(sample) == {"test_goldens", "test_serving"}
