"""vLLM's HTTP options on the ASGI app: CORS, X-Request-Id, root path; and
TLS and Unix sockets on a real server."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from derender import DEFAULT_MODEL_DIR
from derender.app import create_app
from derender.config import ServerConfig


@contextmanager
def client_with(core, **options) -> Iterator[TestClient]:
    config = ServerConfig(model=str(DEFAULT_MODEL_DIR), served_model_names=["qwen3"], **options)
    with TestClient(create_app(config, core)) as c:
        yield c


PREFLIGHT = {"Origin": "https://ui.example", "Access-Control-Request-Method": "POST"}


def test_cors_is_off_by_default_as_in_vllm(core):
    with client_with(core) as c:
        assert c.options("/v1/models", headers=PREFLIGHT).status_code == 400
        answer = c.get("/v1/models", headers={"Origin": "https://ui.example"})
        assert answer.status_code == 200
        assert "access-control-allow-origin" not in answer.headers


def test_allowed_origins_answer_preflights_and_requests(core):
    with client_with(core, allowed_origins=["https://ui.example"], allow_credentials=True) as c:
        preflight = c.options("/v1/chat/completions/render", headers=PREFLIGHT)
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://ui.example"
        assert preflight.headers["access-control-allow-credentials"] == "true"
        answer = c.get("/v1/models", headers={"Origin": "https://ui.example"})
        assert answer.headers["access-control-allow-origin"] == "https://ui.example"


def test_request_id_headers_echo_or_mint(core):
    with client_with(core, enable_request_id_headers=True) as c:
        assert c.get("/health", headers={"X-Request-Id": "abc"}).headers["x-request-id"] == "abc"
        minted = c.get("/health").headers["x-request-id"]
        assert len(minted) == 32 and int(minted, 16) >= 0
    with client_with(core) as c:
        assert "x-request-id" not in c.get("/health").headers


def test_root_path_serves_under_the_prefix_and_without_it(core):
    with client_with(core, root_path="/api", api_keys=["k"]) as c:
        assert c.get("/api/v1/models").status_code == 401  # still a /v1 path
        auth = {"Authorization": "Bearer k"}
        assert c.get("/api/v1/models", headers=auth).json()["data"][0]["id"] == "qwen3"
        assert c.get("/v1/models", headers=auth).status_code == 200
        assert c.get("/api/health").status_code == 200


def _serve(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "derender.cli", "serve", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _wait_for(check, proc: subprocess.Popen) -> None:
    for _ in range(240):
        if proc.poll() is not None:
            raise AssertionError(proc.stderr.read().decode() if proc.stderr else "exited")
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.25)
    raise AssertionError("the server did not come up")


def test_a_unix_socket_serves_instead_of_host_and_port(tmp_path):
    path = str(tmp_path / "derender.sock")
    proc = _serve(["--uds", path])
    try:

        def health() -> bool:
            conn = http.client.HTTPConnection("localhost", timeout=5)
            conn.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.sock.connect(path)
            conn.request("GET", "/health")
            return conn.getresponse().status == 200

        _wait_for(health, proc)
    finally:
        _stop(proc)


def test_tls_serves_https(tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        capture_output=True,
    )  # fmt: skip
    if made.returncode != 0:
        pytest.skip("no openssl to make a test certificate")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = _serve(["--port", str(port), "--ssl-keyfile", str(key), "--ssl-certfile", str(cert)])
    try:
        context = ssl.create_default_context(cafile=str(cert))
        context.check_hostname = False

        def health() -> bool:
            conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=context)
            conn.request("GET", "/health")
            return conn.getresponse().status == 200

        _wait_for(health, proc)
    finally:
        _stop(proc)


def test_the_render_servers_small_routes_answer_as_vllms(client):
    """Answers of vLLM 0.33.0's render server (`vllm launch render`), seen
    live: no load tracked, no KV event sources, no generate handler behind
    SageMaker's /invocations."""
    assert client.get("/load").content == b'{"server_load":0}'
    assert client.get("/kv_event_sources").json() == {}
    answer = client.post("/invocations", json={"messages": [{"role": "user", "content": "hi"}]})
    assert answer.status_code == 400
    assert answer.json() == {
        "error": {
            "message": "Cannot find suitable handler for request. Expected one of: []",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    }


def test_openapi_lists_the_routes_served_with_vllms_operation_ids(client, core):
    spec = client.get("/openapi.json").json()
    assert spec["openapi"] == "3.1.0"
    paths = spec["paths"]
    render = paths["/v1/chat/completions/render"]["post"]
    assert render["summary"] == "Render Chat Completion"
    assert render["operationId"] == "render_chat_completion_v1_chat_completions_render_post"
    assert render["requestBody"]["required"] is True
    assert set(paths["/ping"]) == {"get", "post"}
    assert {"/load", "/invocations", "/tokenize", "/v1/models"} <= set(paths)
    assert "/openapi.json" not in paths  # as FastAPI, the docs routes are not listed
    for page in ("/docs", "/redoc"):
        html = client.get(page)
        assert html.status_code == 200 and "/openapi.json" in html.text
    with client_with(core, disable_docs=True) as c:
        assert [c.get(p).status_code for p in ("/openapi.json", "/docs", "/redoc")] == [404] * 3


def test_enable_log_requests_logs_tokenize_calls_and_bodies_cut_to_max_log_len(core):
    """vLLM's render server logs `Received request tokenize-<id>` at INFO for
    /tokenize (tests/reference/request_log) and bodies at DEBUG, cut to --max-log-len."""
    import logging

    from derender import logs

    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.name == logs.SERVER.name:  # not the access lines
                lines.append(record.getMessage())

    keep = Keep(level=logging.DEBUG)
    logs.SERVER.addHandler(keep)
    level = logs.SERVER.level
    logs.SERVER.setLevel(logging.DEBUG)
    try:
        body = {"model": "qwen3", "prompt": "hello there"}
        with client_with(core, enable_log_requests=True, max_log_len=20) as c:
            c.post("/tokenize", json=body, headers={"X-Request-Id": "log-4"})
            c.post("/v1/completions/render", json=body)
        with client_with(core) as c:
            c.post("/tokenize", json=body)
    finally:
        logs.SERVER.removeHandler(keep)
        logs.SERVER.setLevel(level)
    assert lines[0] == "Received request tokenize-log-4: params: None, lora_request: None."
    cut = json.dumps(body, separators=(",", ":"))[:20]
    assert lines[1] == "Request /tokenize JSON body: " + cut
    assert lines[2] == "Request /v1/completions/render JSON body: " + cut
    assert len(lines) == 3


MIDDLEWARE = """
from starlette.middleware.base import BaseHTTPMiddleware


class Tag(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        response = await call_next(request)
        response.headers["x-order"] = response.headers.get("x-order", "") + "class;"
        return response


async def stamp(request, call_next):
    response = await call_next(request)
    response.headers["x-order"] = response.headers.get("x-order", "") + "function;"
    return response


NOT_MIDDLEWARE = 3
"""


def test_middleware_classes_and_functions_wrap_in_order(core, tmp_path, monkeypatch):
    from derender import user_middleware

    (tmp_path / "site_mw.py").write_text(MIDDLEWARE)
    monkeypatch.syspath_prepend(str(tmp_path))
    with client_with(core, middleware=["site_mw.Tag", "site_mw.stamp"]) as c:
        answer = c.get("/health")
    # vLLM adds them in order, so the later one wraps (and stamps after) the earlier.
    assert answer.headers["x-order"] == "class;function;"
    with pytest.raises(ValueError, match="Invalid middleware site_mw.NOT_MIDDLEWARE"):
        user_middleware.load(["site_mw.NOT_MIDDLEWARE"])
    with pytest.raises(ValueError, match="--middleware nope.Thing: ModuleNotFoundError"):
        user_middleware.load(["nope.Thing"])
    with pytest.raises(ValueError, match="not a module.attribute import path"):
        user_middleware.load(["Thing"])


def _certificate(key: Path, cert: Path, name: str) -> None:
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", f"/CN={name}", "-keyout", str(key), "-out", str(cert)],
        capture_output=True,
    )  # fmt: skip
    if made.returncode != 0:
        pytest.skip("no openssl to make a test certificate")


def test_ssl_refresh_serves_a_replaced_certificate(tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    _certificate(key, cert, "first")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ["--port", str(port), "--ssl-keyfile", str(key), "--ssl-certfile", str(cert)]
    proc = _serve([*args, "--enable-ssl-refresh"])
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE

    def served_name() -> str:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            with context.wrap_socket(raw) as tls:
                der = tls.getpeercert(binary_form=True)
        pem = ssl.DER_cert_to_PEM_cert(der)
        out = subprocess.run(
            ["openssl", "x509", "-noout", "-subject"], input=pem.encode(), capture_output=True
        )
        return out.stdout.decode().strip().rsplit("=", 1)[-1].strip()

    try:
        _wait_for(lambda: served_name() == "first", proc)
        fresh_key, fresh_cert = tmp_path / "key2.pem", tmp_path / "cert2.pem"
        _certificate(fresh_key, fresh_cert, "second")
        fresh_key.replace(key)
        fresh_cert.replace(cert)
        _wait_for(lambda: served_name() == "second", proc)
    finally:
        _stop(proc)
