"""The HTTP surface: server routes, auth, envelopes, size caps."""

from __future__ import annotations

import json

from derender import DEFAULT_MODEL_DIR
from derender.app import create_app
from derender.config import ServerConfig

CHAT = "/v1/chat/completions/derender"
HELLO = [9707, 1052, 0, 220, 108386, 1879, 151645]  # "Hello there! 你好 world" + <|im_end|>


def chat_body(**extra) -> dict:
    body = {
        "model": "qwen3",
        "generate_response": {"request_id": "r1", "choices": [{"index": 0, "token_ids": HELLO}]},
        "prompt_tokens": 9,
    }
    body.update(extra)
    return body


def test_health_is_empty_200(client):
    r = client.get("/health")
    assert r.status_code == 200 and r.content == b""


def test_models_lists_served_names(client):
    data = client.get("/v1/models").json()
    assert [m["id"] for m in data["data"]] == ["qwen3"]
    assert data["data"][0]["max_model_len"] == 40960


def test_chat_batch_decodes_and_counts_stop_token(client):
    r = client.post(CHAT, json=chat_body())
    assert r.status_code == 200
    data = r.json()
    assert data["choices"][0]["message"]["content"] == "Hello there! 你好 world"
    assert data["usage"] == {
        "prompt_tokens": 9,
        "total_tokens": 16,
        "completion_tokens": 7,
        "prompt_tokens_details": None,
        "completion_tokens_details": None,
    }
    assert list(data) == [
        "id", "object", "created", "model", "choices", "service_tier", "system_fingerprint",
        "usage", "prompt_logprobs", "prompt_token_ids", "prompt_text", "kv_transfer_params",
        "ec_transfer_params", "metrics",
    ]  # fmt: skip


def test_unknown_model_is_404_envelope(client):
    r = client.post(CHAT, json=chat_body(model="nope"))
    assert r.status_code == 404
    assert r.json() == {
        "error": {
            "message": "The model `nope` does not exist. Valid aliases: qwen3.",
            "type": "NotFoundError",
            "param": "model",
            "code": 404,
        }
    }


def test_wrong_content_type_is_400(client):
    r = client.post(CHAT, content=json.dumps(chat_body()), headers={"content-type": "text/plain"})
    assert r.status_code == 400
    assert "Unsupported Media Type" in r.json()["error"]["message"]


def test_validation_error_names_the_field(client):
    body = chat_body()
    body["generate_response"]["choices"][0]["token_ids"] = "1,2,3"
    r = client.post(CHAT, json=body)
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["param"] == "body.DerenderChatRequest.generate_response.choices.0.token_ids"
    assert "'type': 'list_type'" in err["message"]


def test_unknown_route_and_method_use_the_envelope(client):
    r = client.get("/nope")
    assert r.status_code == 404 and r.json()["error"]["type"] == "Not Found"
    r = client.get(CHAT)
    assert r.status_code == 405 and r.json()["error"]["code"] == 405


def test_body_cap_answers_413(core):
    from starlette.testclient import TestClient

    app = create_app(
        ServerConfig(model="m", served_model_names=["qwen3"], max_request_bytes=100), core
    )
    with TestClient(app) as c:
        r = c.post(CHAT, json=chat_body())
    assert r.status_code == 413
    assert r.json()["error"]["param"] == "body"


def test_api_key_guards_v1_only(core):
    from starlette.testclient import TestClient

    app = create_app(ServerConfig(model="m", served_model_names=["qwen3"], api_keys=["k1"]), core)
    with TestClient(app) as c:
        assert c.post(CHAT, json=chat_body()).json() == {"error": "Unauthorized"}
        assert (
            c.post(CHAT, json=chat_body(), headers={"Authorization": "Bearer k2"}).status_code
            == 401
        )
        ok = c.post(CHAT, json=chat_body(), headers={"Authorization": "bearer k1"})
        assert ok.status_code == 200
        assert c.get("/health").status_code == 200


def test_metrics_count_requests(client):
    client.post(CHAT, json=chat_body())
    text = client.get("/metrics").text
    assert 'derender_requests_total{route="/v1/chat/completions/derender",status="200"}' in text


def test_serve_answers_health_and_derender_over_loopback(server_factory):
    import httpx

    s = server_factory([str(DEFAULT_MODEL_DIR), "--served-model-name", "qwen3"])
    assert httpx.get(s.url + "/health").status_code == 200
    r = httpx.post(s.url + CHAT, json=chat_body())
    assert r.status_code == 200
    assert r.json()["choices"][0]["message"]["content"] == "Hello there! 你好 world"


def test_two_workers_serve_keep_alive_calls(server_factory):
    import httpx

    s = server_factory([str(DEFAULT_MODEL_DIR), "--served-model-name", "qwen3", "--workers", "2"])
    with httpx.Client(base_url=s.url) as c:
        for _ in range(5):
            r = c.post(CHAT, json=chat_body())
            assert r.status_code == 200
            assert r.json()["choices"][0]["message"]["content"] == "Hello there! 你好 world"
