"""`/v1/messages/render` against vLLM's recorded answers.

reference/messages_render.jsonl.gz holds real `vllm launch render` answers (recorded
with reference/record_messages_render.py) for Anthropic Messages requests; each is
replayed in-process and must come back identical: status, token ids, sampling params,
every other field (the request id too when the request named one), error bodies.
"""

from __future__ import annotations

import gzip
import json

import pytest
from calls import config_core
from conftest import REFERENCE

from derender import Derenderer

ROUTE = "/v1/messages/render"
CONFIGS = json.loads((REFERENCE / "configs.json").read_text())


def load() -> dict[str, list[dict]]:
    by_config: dict[str, list[dict]] = {}
    with gzip.open(REFERENCE / "messages_render.jsonl.gz", "rt") as f:
        for record in map(json.loads, f):
            by_config.setdefault(record["config"], []).append(record)
    return by_config


CASES = load()


def core_for(config: str) -> Derenderer:
    """The core `derender serve` builds for the config (its tokenizer mode too)."""
    return config_core(config)


def replay(core: Derenderer, record: dict) -> tuple[int, object]:
    body = record["body"]
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    status, out = core.handle(ROUTE, raw, "application/json", record["request_id_header"])
    answer = json.loads(out)
    expected = record["response"]
    # Without an X-Request-Id the id is random: only its prefix is vLLM's.
    if record["request_id_header"] is None and status == 200 and "request_id" in expected:
        assert answer["request_id"].startswith("chatcmpl-")
        answer["request_id"] = expected["request_id"]
    return status, answer


@pytest.mark.parametrize("config", sorted(CASES))
def test_messages_render_matches_vllm(config):
    core = core_for(config)
    failures = []
    for record in CASES[config]:
        status, answer = replay(core, record)
        if (status, answer) != (record["status"], record["response"]):
            failures.append(f"{record['id']}: got {status} {json.dumps(answer)[:600]}")
    passed = len(CASES[config]) - len(failures)
    print(f"{config}: {passed}/{len(CASES[config])} passed")
    assert failures == []


def test_messages_render_is_served_over_http(client):
    body = {"model": "qwen3", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    r = client.post(ROUTE, json=body, headers={"X-Request-Id": "m1"})
    assert r.status_code == 200, r.text
    assert r.json()["request_id"] == "chatcmpl-m1"
    chat = client.post(
        "/v1/chat/completions/render",
        json={"model": "qwen3", "max_tokens": 8, "messages": body["messages"]},
    )
    assert r.json()["token_ids"] == chat.json()["token_ids"]
    bad = client.post(ROUTE, json={"model": "qwen3", "messages": []})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "body.max_tokens"
