"""Write the `handle` target's seed corpus: every request the qwen3 goldens
send, stream states filled in by the matching core (so parser streams carry
our compact envelopes), one file each, prefixed with the target's head byte
(route in bits 0-2, core in bit 3, content type in bits 4-5).

    PYTHONPATH=python python3 fuzz/seed_corpus.py   # from the repository root
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "reference"))
import replay  # noqa: E402

from derender import DEFAULT_MODEL_DIR, Derenderer  # noqa: E402

ROUTES = [
    "/v1/chat/completions/derender",
    "/v1/completions/derender",
    "/v1/chat/completions/render",
    "/v1/completions/render",
    "/tokenize",
    "/detokenize",
]
PARSERS = {"reasoning_parser": "qwen3", "tool_call_parser": "hermes", "enable_auto_tool_choice": True}
EXTRA = [
    ("/tokenize", {"prompt": "Hello 世界", "add_special_tokens": True}),
    ("/tokenize", {"messages": [{"role": "user", "content": "hi"}], "add_generation_prompt": True}),
    ("/detokenize", {"tokens": [9707, 151643, 151667, 33, 151668]}),
]


class Recorder:
    def __init__(self, core: Derenderer) -> None:
        self.core = core
        self.sent: list[tuple[str, bytes]] = []

    def post(self, path, body, raw=False, headers=None):
        data = (body.encode() if isinstance(body, str) else body) if raw else json.dumps(body).encode()
        self.sent.append((path, data))
        status, out = self.core.handle(path, data)
        try:
            parsed = json.loads(out)
        except ValueError:
            parsed = {}
        return status, parsed, len(data), len(out)


def main() -> None:
    out = ROOT / "fuzz" / "corpus" / "handle"
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    for bit, (config, kwargs) in enumerate([("qwen3_plain", {}), ("qwen3_hermes", PARSERS)]):
        core = Derenderer(str(DEFAULT_MODEL_DIR), served_model_names=["qwen3"], **kwargs)
        recorder = Recorder(core)
        with gzip.open(ROOT / "tests/reference/goldens" / f"{config}.jsonl.gz", "rt") as f:
            for line in f:
                replay.execute_case(recorder, json.loads(line))
        sent = recorder.sent + [(p, json.dumps(b).encode()) for p, b in EXTRA]
        for path, data in sent:
            blob = bytes([ROUTES.index(path) | bit << 3]) + data
            (out / hashlib.sha1(blob).hexdigest()).write_bytes(blob)
            written += 1
    print(f"{written} seeds in {out}")


if __name__ == "__main__":
    main()
