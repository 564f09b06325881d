"""The `mistral` tokenizer mode (tekken v13) as `derender serve` picks and
serves it: chosen by vLLM's rules, rendered with mistral_common's layout
whatever else the directory holds, and refused where it is not built."""

from __future__ import annotations

import gzip
import json
import re
import shutil

import httpx
import pytest
from conftest import MODEL_DIRS, REFERENCE, Server

MAGISTRAL = MODEL_DIRS["models/magistral"]
PARSERS = [
    "--reasoning-parser",
    "mistral",
    "--tool-call-parser",
    "mistral",
    "--enable-auto-tool-choice",
]


def golden(name: str) -> dict:
    """The first call of the recorded magistral render case `name` (its id
    past the number)."""
    with gzip.open(REFERENCE / "goldens" / "magistral.jsonl.gz", "rt") as f:
        for line in f:
            case = json.loads(line)
            if case["kind"] == "render" and case["id"].rsplit("/", 1)[-1].split("-", 1)[1] == name:
                return case["calls"][0]
    raise LookupError(name)


def test_a_mistral_directory_with_a_tokenizer_json_renders_with_mistral_common(tmp_path):
    """A current Mistral repository ships `tokenizer.json` beside `tekken.json`
    and `consolidated*.safetensors`: vLLM's `auto` renders it with
    mistral_common, so does derender (the HF tokenizer would give other ids)."""
    model = tmp_path / "magistral"
    shutil.copytree(MAGISTRAL, model)
    with gzip.open(MODEL_DIRS["models/mistral"] / "tokenizer.json.gz", "rb") as src:
        (model / "tokenizer.json").write_bytes(src.read())
    call = golden("multi_turn")
    server = Server([str(model), "--served-model-name", "magistral", *PARSERS])
    try:
        answer = httpx.post(
            server.url + "/v1/chat/completions/render", json=call["request"], timeout=30
        )
    finally:
        server.stop()
    assert answer.status_code == 200
    assert answer.json()["token_ids"] == call["response"]["token_ids"]
    grammar = answer.json()["sampling_params"]["structured_outputs"]["grammar"]
    assert grammar == call["response"]["sampling_params"]["structured_outputs"]["grammar"]


def test_hf_mode_on_the_same_directory_reads_its_tokenizer_json(tmp_path):
    """`--tokenizer-mode hf` is honoured (the HF tokenizer is read, not
    tekken); `auto` picks the mistral mode for the same directory."""
    from derender.cli import _tokenizer_mode, build_parser

    model = tmp_path / "magistral"
    shutil.copytree(MAGISTRAL, model)
    args = build_parser().parse_args(["serve", str(model), "--tokenizer-mode", "hf"])
    assert _tokenizer_mode(args, str(model), str(model), str(model)) == "hf"
    args = build_parser().parse_args(["serve", str(model)])
    assert _tokenizer_mode(args, str(model), str(model), str(model)) == "mistral"


def test_a_tekken_version_not_built_stops_the_server(tmp_path):
    """Other tekken versions build other prompts (v15 writes model settings,
    v3 folds the system prompt into a user turn): refused at startup, naming
    the version."""
    from derender.cli import main

    model = tmp_path / "v15"
    shutil.copytree(MAGISTRAL, model)
    with gzip.open(MAGISTRAL / "tekken.json.gz", "rt", encoding="utf-8") as f:
        data = json.load(f)
    data["config"]["version"] = "v15"
    (model / "tekken.json.gz").unlink()
    (model / "tekken.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        SystemExit, match=re.escape("renders requests for tekken v7, v11 and v13 tokenizers")
    ):
        main(["serve", str(model), "--port", "1"])
