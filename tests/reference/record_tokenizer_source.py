"""Record vLLM 0.33.0's answers when the tokenizer or the snapshot is chosen by flag:
`--tokenizer` (a directory or a cached model id), `--revision` and `--tokenizer-revision`
(a branch or a commit of the local Hugging Face cache, offline).

The layout is built from fixtures in a temporary directory: a model directory (Qwen3: its
config.json and generation_config.json) and a tokenizer directory with the same vocabulary and
another chat template and generation config (Qwen3-Coder), and a cache holding one model id with
one snapshot of each, `main` pointing at the first and the branch `v2` at the second. The answers
show which files each setup read: the chat template (the rendered ids), the generation config
(the sampling defaults of a render) and config.json (max_model_len). Setups vLLM refuses at
startup are recorded as such.

    VLLM=/path/to/vllm-venv/bin/vllm python3 tests/reference/record_tokenizer_source.py

(render_server.py starts each server, 127.0.0.1 only.)
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path
from typing import Any

from render_server import Server, call, workdir

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OUT = HERE / "tokenizer_source.jsonl.gz"
PORT = 8397
MODEL_ID = "org/tiny"
COMMITS = {"main": "a" * 40, "v2": "b" * 40}
# Fixture directories (from the repository root) and where each is laid out.
LAYOUT = {
    "model": "python/derender/models/qwen3",
    "tokenizer": "tests/models/qwen3_coder",
    "snapshots": {
        COMMITS["main"]: "python/derender/models/qwen3",
        COMMITS["v2"]: "tests/models/qwen3_coder",
    },
    "refs": {"main": COMMITS["main"], "v2": COMMITS["v2"]},
}
# `{model}` / `{tokenizer}`: the two directories; anything else is a cached model id.
SETUPS: list[tuple[str, list[str]]] = [
    ("{model}", []),
    ("{model}", ["--tokenizer", "{tokenizer}"]),
    ("{model}", ["--tokenizer", MODEL_ID]),
    ("{model}", ["--tokenizer", MODEL_ID, "--tokenizer-revision", "v2"]),
    ("{model}", ["--revision", "v2"]),
    ("{model}", ["--tokenizer", MODEL_ID, "--revision", "v2"]),
    ("{model}", ["--tokenizer", MODEL_ID, "--tokenizer-revision", "v3"]),
    (MODEL_ID, []),
    (MODEL_ID, ["--revision", "v2"]),
    (MODEL_ID, ["--revision", COMMITS["v2"]]),
    (MODEL_ID, ["--tokenizer-revision", "v2"]),
    (MODEL_ID, ["--revision", "v2", "--tokenizer-revision", "main"]),
    (MODEL_ID, ["--revision", "v3"]),
    (MODEL_ID, ["--tokenizer-revision", "v3"]),
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    (
        "/v1/chat/completions/render",
        {"model": "m", "request_id": "r1", "tools": TOOLS, "tool_choice": "none",
         "messages": [{"role": "user", "content": "Weather in Oslo?"}]},
    ),
    (
        "/v1/chat/completions/render",
        {"model": "m", "request_id": "r2",
         "messages": [{"role": "system", "content": "Be brief."},
                      {"role": "user", "content": "hi"}]},
    ),
    ("/v1/completions/render", {"model": "m", "request_id": "r3", "prompt": "Hello"}),
    ("/tokenize", {"model": "m", "prompt": "<tool_call> and <think>"}),
]  # fmt: skip


def build_layout(root: Path) -> dict[str, str]:
    """LAYOUT under `root` (tokenizers unzipped, as a real cache holds them): the values
    `{model}` and `{tokenizer}` stand for, and the cache directory (for HF_HUB_CACHE)."""

    def copy(src: str, dst: Path) -> None:
        shutil.copytree(ROOT / src, dst, symlinks=False)
        for packed in dst.glob("*.gz"):
            with gzip.open(packed, "rb") as f:
                (dst / packed.name.removesuffix(".gz")).write_bytes(f.read())
            packed.unlink()

    copy(LAYOUT["model"], root / "model")
    copy(LAYOUT["tokenizer"], root / "tokenizer")
    repo = root / "hub" / f"models--{MODEL_ID.replace('/', '--')}"
    for commit, src in LAYOUT["snapshots"].items():
        copy(src, repo / "snapshots" / commit)
    (repo / "refs").mkdir(parents=True)
    for ref, commit in LAYOUT["refs"].items():
        (repo / "refs" / ref).write_text(commit)
    return {"model": str(root / "model"), "tokenizer": str(root / "tokenizer"),
            "hub": str(root / "hub")}  # fmt: skip


def main() -> None:
    root = workdir("toksrc-")
    where = build_layout(root)
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1",
           "HF_HUB_CACHE": where["hub"]}  # fmt: skip
    cases = []
    for i, (model, flags) in enumerate(SETUPS):
        fill = lambda s: s.format(**where)  # noqa: E731
        server = Server(root, fill(model), "m", [*map(fill, flags)], env, PORT, root / f"{i}.log")
        with server:
            up = server.start()
            answers = []
            if up:
                models = call(PORT, "GET", "/v1/models")["body"]
                answers.append({"path": "/v1/models", "max_model_len":
                                models["data"][0]["max_model_len"]})  # fmt: skip
                for path, body in REQUESTS:
                    got = call(PORT, "POST", path, body)
                    answers.append({"path": path, "body": body, "status": got["status"],
                                    "response": got["body"]})  # fmt: skip
            cases.append({"model": model, "flags": flags, "starts": up, "answers": answers})
            print(model, flags, "up" if up else "refused", flush=True)
    with gzip.open(OUT, "wt", encoding="utf-8") as f:
        f.write(json.dumps({"layout": LAYOUT, "model_id": MODEL_ID}) + "\n")
        for case in cases:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(cases)} setups -> {OUT}")


if __name__ == "__main__":
    main()
