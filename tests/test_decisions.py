"""`POST /v1/decisions` and `POST /v1/systemone` against vLLM 0.33.0's render server
(tests/reference/decisions, recorded by reference/record_decisions.py): both routes are
mounted without a handler, so a valid body gets vLLM's 501 and an invalid one the 400
pydantic gives for its request model, message for message."""

from __future__ import annotations

import gzip
import json

import pytest
from calls import config_core
from conftest import REFERENCE
from starlette.testclient import TestClient

from derender import DEFAULT_MODEL_DIR
from derender.app import create_app
from derender.config import ServerConfig

with gzip.open(REFERENCE / "decisions" / "qwen3_hermes.jsonl.gz", "rt", encoding="utf-8") as f:
    CALLS = [json.loads(line) for line in f]


def body_bytes(call: dict) -> bytes:
    if "raw" in call:  # the bytes sent, when not a JSON document
        return call["raw"].encode()
    return json.dumps(call["request"]).encode()


POSTS = [c for c in CALLS if c["method"] == "POST"]


@pytest.mark.parametrize("call", POSTS, ids=lambda c: f"{c['route']}-{c['name']}")
def test_answers_match_vllms(call: dict) -> None:
    core = config_core("qwen3_hermes")
    content_type = (call.get("headers_sent") or {}).get("content-type")
    status, raw = core.handle(call["route"], body_bytes(call), content_type)
    assert (status, json.loads(raw)) == (call["status"], call["body"])


def test_other_methods_are_refused_as_vllm_refuses_them() -> None:
    config = ServerConfig(model=str(DEFAULT_MODEL_DIR), served_model_names=["qwen3"])
    with TestClient(create_app(config, config_core("qwen3_hermes"))) as client:
        others = [c for c in CALLS if c["method"] != "POST"]
        assert others
        for call in others:
            answer = client.request(call["method"], call["route"])
            assert answer.status_code == call["status"] == 405
            assert answer.headers["allow"] == call["headers"]["allow"]
