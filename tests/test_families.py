"""The families' test facts (tests/reference/families.json) against what they
describe: each family's config in configs.json (its family name, parser flags
and model fixture), and the cases each excuse class names (none stale)."""

from __future__ import annotations

import functools
import gzip
import json

import pytest
from conftest import MODEL_DIRS, REFERENCE
from families import EXCUSES, FAMILIES, GOLDEN_CONFIGS, PLAIN_CONFIGS, ROOT, Excuse

CONFIGS = json.loads((REFERENCE / "configs.json").read_text())
PARSER_FLAGS = {"tool_parser": "--tool-call-parser", "reasoning_parser": "--reasoning-parser"}


def flag(config: str, name: str) -> str | None:
    flags = CONFIGS[config]["flags"]
    return flags[flags.index(name) + 1] if name in flags else None


def corpus(section: str, config: str) -> list[dict]:
    """The cases a section's classes excuse (the goldens, or the unseen
    corpus): `id`, `config` and `kind` of each."""
    return _cases("unseen" if section == "unseen" else "goldens", config)


@functools.cache
def _cases(corpus: str, config: str) -> list[dict]:
    path = REFERENCE / corpus / f"{config}.jsonl.gz"
    if not path.exists():
        return []
    with gzip.open(path, "rt") as f:
        return [{k: c[k] for k in ("id", "config", "kind")} for c in map(json.loads, f)]


@pytest.mark.parametrize("name", FAMILIES)
def test_a_family_is_its_configs(name):
    family = FAMILIES[name]
    config = CONFIGS[family["config"]]
    assert config["family"] == name
    for fact, flag_name in PARSER_FLAGS.items():
        assert flag(family["config"], flag_name) == family[fact], fact
    model_dir = ROOT / family["model_dir"]
    assert model_dir.is_dir()
    assert MODEL_DIRS[config["model"]].resolve() == model_dir.resolve()


def test_the_golden_configs_are_each_listed_once_and_recorded():
    assert len(set(GOLDEN_CONFIGS)) == len(GOLDEN_CONFIGS)
    for config in GOLDEN_CONFIGS:
        assert (REFERENCE / "goldens" / f"{config}.jsonl.gz").exists(), config
    for config in PLAIN_CONFIGS:
        assert all(flag(config, f) is None for f in PARSER_FLAGS.values()), config


def excused_by(excuse: Excuse, config: str, cases: list[dict]) -> dict[str, list[str]]:
    """Per pattern of `excuse`, the ids of `cases` it names on `config`."""
    ids = [c["id"] for c in cases if c["config"] == config]
    found = {s: [i for i in ids if s in i] for s in excuse.id_contains}
    found |= {i: [x for x in ids if x == i] for i in excuse.ids}
    return found


@pytest.mark.parametrize("section", EXCUSES)
def test_every_excuse_names_cases(section):
    """Each class names known configs, and each of its patterns matches a
    case (on each config it lists; on some config for "all"): no stale
    excuse. An exact id matches exactly one case."""
    stale = []
    for excuse in EXCUSES[section]:
        configs = excuse.configs or tuple(GOLDEN_CONFIGS)
        assert set(configs) <= set(GOLDEN_CONFIGS), excuse
        assert excuse.why.strip() and (excuse.id_contains or excuse.ids), excuse
        per_config = {c: excused_by(excuse, c, corpus(section, c)) for c in configs}
        for pattern in (*excuse.id_contains, *excuse.ids):
            counts = {c: len(found[pattern]) for c, found in per_config.items()}
            if excuse.configs is None:
                counts = {"all": sum(counts.values())}
            for config, n in counts.items():
                if n == 0 or (pattern in excuse.ids and n != 1):
                    stale.append(f"{pattern} on {config}: {n} cases")
    assert stale == []


def test_mixed_and_chunk_invariance_classes_fit_the_golden_ones():
    """`goldens_mixed` streams are excused goldens; `chunk_invariance` batch
    goldens are ones the golden classes miss."""
    goldens = EXCUSES["goldens"]
    for section, kind, excused in (
        ("goldens_mixed", "stream", True),
        ("chunk_invariance", "batch", False),
    ):
        for excuse in EXCUSES[section]:
            for config in excuse.configs or GOLDEN_CONFIGS:
                for case in corpus(section, config):
                    if excuse.covers(case):
                        assert case["kind"] == kind, case["id"]
                        assert any(g.covers(case) for g in goldens) == excused, case["id"]
