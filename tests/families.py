"""The parser families' test facts, read from `tests/reference/families.json`
(also read by `rust/core/tests/support`): which families and configs the
golden and property tests run, and which cases they excuse, and why.

A plain module (no derender import): tests import their facts from here,
never from another test module."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FACTS_PATH = ROOT / "tests" / "reference" / "families.json"
FACTS: dict = json.loads(FACTS_PATH.read_text(encoding="utf-8"))

# Family name -> its entry (config, tool_parser, reasoning_parser, model_dir, generated).
FAMILIES: dict[str, dict] = FACTS["families"]
PLAIN_CONFIGS: list[str] = FACTS["plain_configs"]["configs"]
# Configs recorded but not yet run by the suites (`pending` in families.json).
PENDING_CONFIGS: set[str] = {f["config"] for f in FACTS["pending"]["families"].values()}
# Every config the golden tests run: the plain ones, then each family's.
GOLDEN_CONFIGS: list[str] = [*PLAIN_CONFIGS, *(f["config"] for f in FAMILIES.values())]
# Configs whose family follows vLLM's stream algorithm where it disagrees
# with vLLM's batch answer (`"streams": "vllm_or_batch"`): each of their
# streams must equal vLLM's chunks or assemble to the batch answer.
VLLM_OR_BATCH_CONFIGS: set[str] = {
    f["config"] for f in FAMILIES.values() if f.get("streams") == "vllm_or_batch"
}


@dataclass(frozen=True)
class Excuse:
    """One class of excused cases: ids containing one of `id_contains` or
    equal to one of `ids`, on `configs` (None: every config)."""

    section: str
    why: str
    configs: tuple[str, ...] | None
    id_contains: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()

    def covers(self, case: dict) -> bool:
        if self.configs is not None and case["config"] not in self.configs:
            return False
        return case["id"] in self.ids or any(s in case["id"] for s in self.id_contains)


def _excuse(section: str, entry: dict) -> Excuse:
    unknown = set(entry) - {"why", "configs", "id_contains", "ids"}
    assert not unknown, f"families.json {section}: unknown keys {unknown}"
    configs = entry["configs"]
    assert configs == "all" or isinstance(configs, list), f"{section}: configs {configs!r}"
    return Excuse(
        section,
        entry["why"],
        None if configs == "all" else tuple(configs),
        tuple(entry.get("id_contains", ())),
        tuple(entry.get("ids", ())),
    )


EXCUSES: dict[str, list[Excuse]] = {
    section: [_excuse(section, e) for e in body["classes"]]
    for section, body in FACTS["excused"].items()
}


def excuse(section: str, case: dict) -> Excuse | None:
    """The class of `section` (`goldens`, `goldens_mixed`, `unseen`,
    `chunk_invariance`) that excuses `case` (a dict with `id` and `config`)."""
    return next((e for e in EXCUSES[section] if e.covers(case)), None)
