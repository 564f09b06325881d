"""`GET /tokenizer_info` (`--enable-tokenizer-info-endpoint`) against vLLM 0.33.0's
answers (tests/reference/tokenizer_info, recorded by reference/record_tokenizer_info.py):
every config's model directory, key for key and in vLLM's key order, and the route's
presence, methods and `--chat-template` override on a served app."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import MODEL_DIRS, REFERENCE
from starlette.testclient import TestClient

from derender import DEFAULT_MODEL_DIR
from derender.app import create_app
from derender.cli import _tokenizer_mode, build_parser
from derender.config import ServerConfig
from derender.tokenizer_info import tokenizer_info

RECORDED = REFERENCE / "tokenizer_info"
CONFIGS = json.loads((REFERENCE / "configs.json").read_text())


def recorded(name: str) -> list[dict]:
    with gzip.open(RECORDED / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_every_configs_tokenizer_info_is_vllms_key_for_key() -> None:
    rows = recorded("configs.jsonl.gz")
    failures = []
    for row in rows:
        model_dir = Path(MODEL_DIRS[CONFIGS[row["config"]]["model"]])
        # In the tokenizer mode `serve` picks for the config (mistral, deepseek_v32).
        flags = CONFIGS[row["config"]]["flags"]
        args = build_parser().parse_args(["serve", str(model_dir), *flags])
        mode = _tokenizer_mode(args, str(model_dir), str(model_dir), str(model_dir))
        got = tokenizer_info(model_dir, str(model_dir), None, mode=mode)
        # vLLM was started with the relative `models/<dir>` as its model argument.
        if "name_or_path" in got:
            got["name_or_path"] = row["model"]
        if got != row["body"] or list(got) != list(row["body"]):
            failures.append(row["config"])
    assert len(rows) == len(CONFIGS)
    assert failures == []


def extras() -> dict[str, dict]:
    return {row["case"]: row for row in recorded("extras.jsonl.gz") if "case" in row}


def client(**options: object) -> TestClient:
    config = ServerConfig(model=str(DEFAULT_MODEL_DIR), served_model_names=["qwen3"], **options)  # type: ignore[arg-type]
    return TestClient(create_app(config))


def test_the_route_is_served_only_with_the_flag_and_only_for_get() -> None:
    cases = extras()
    with client() as off:
        (call,) = cases["no_flag"]["calls"]
        answer = off.get(call["path"])
        assert answer.status_code == call["status"]
        # derender's own envelope (docs/divergences.md), with Starlette's words.
        assert answer.json()["error"]["message"] == call["body"]["detail"]
    with client(enable_tokenizer_info_endpoint=True) as on:
        for call in cases["methods"]["calls"]:
            if call["method"] == "HEAD" or call["path"].endswith("/"):
                continue  # Starlette answers HEAD with GET's; the slash redirect is followed
            answer = on.request(call["method"], call["path"])
            assert answer.status_code == call["status"], call
            if call["status"] == 200:
                assert answer.json()["tokenizer_class"] == call["body"]["tokenizer_class"]
            else:
                assert answer.json()["error"]["message"] == call["body"]["detail"]


@pytest.mark.parametrize("case", ["chat_template_file", "chat_template_literal"])
def test_chat_template_flag_replaces_the_models_template(case: str, tmp_path: Path) -> None:
    row = extras()[case]
    flags = row["flags"]
    template = flags[flags.index("--chat-template") + 1]
    if case == "chat_template_file":
        template = recorded("extras.jsonl.gz")[0]["chat_template_file"]
    with client(enable_tokenizer_info_endpoint=True, chat_template=template) as on:
        body = on.get("/tokenizer_info").json()
    (call,) = row["calls"]
    assert body["chat_template"] == call["body"]["chat_template"]
    assert list(body) == list(call["body"])
