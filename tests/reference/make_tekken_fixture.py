"""Build a tekken fixture (vLLM's `mistral` tokenizer mode) from the real
tekken_240911 vocabulary that PyPI's mistral_common ships, under a
version's special-token table, as tests/models/magistral was built:

    <vLLM venv>/bin/python tests/reference/make_tekken_fixture.py v7 tests/models/mistral_small3
    <vLLM venv>/bin/python tests/reference/make_tekken_fixture.py v11 tests/models/mistral_small32

writes DIR/tekken.json.gz: mistral_common/data/tekken_240911.json's `vocab`
and `config.pattern` (150,000 ranks; config num_vocab_tokens 150000,
default_vocab_size 131072, default_num_special_tokens 1000), the version
given, and an explicit table of 1,000 special ranks: the named tokens of
the layout Mistral's tekken models use (ranks 0-19, then [ARGS] 32 and
[CALL_ID] 33 from v11, [THINK] 34 / [/THINK] 35 from v13), `<SPECIAL_N>`
for every other rank. The file's `image` section is dropped (text-only
fixture). config.json, generation_config.json and the empty
consolidated.safetensors are written by hand (README in DIR).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import mistral_common

BASE = [
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
]
BY_VERSION = {
    "v7": {},
    "v11": {32: "[ARGS]", 33: "[CALL_ID]"},
    "v13": {32: "[ARGS]", 33: "[CALL_ID]", 34: "[THINK]", 35: "[/THINK]"},
}


def main() -> int:
    version, out = sys.argv[1], Path(sys.argv[2])
    src = Path(mistral_common.__file__).parent / "data" / "tekken_240911.json"
    data = json.loads(src.read_text())
    named = {i: t for i, t in enumerate(BASE)} | BY_VERSION[version]
    specials = [{"rank": i, "token_str": named.get(i, f"<SPECIAL_{i}>"), "is_control": True} for i in range(1000)]
    config = dict(data["config"], version=version)
    fixture = {"config": config, "vocab": data["vocab"], "special_tokens": specials}
    out.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(fixture, ensure_ascii=False).encode("utf-8")
    with gzip.GzipFile(out / "tekken.json.gz", "wb", mtime=0) as f:
        f.write(raw)
    print(out / "tekken.json.gz", len(raw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
