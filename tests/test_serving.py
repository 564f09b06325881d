"""Serving in production: graceful shutdown, the per-request time limit, the
settings every worker shares, and which worker answers a connection."""

from __future__ import annotations

import http.client
import json
import re
import signal
import socket
import threading

import pytest
from workers import HOST, Connection, connections_to_two_workers, worker_of

from derender import DEFAULT_MODEL_DIR
from derender.app import create_app
from derender.cli import build_parser, config_from_args
from derender.config import ServerConfig

CHAT = "/v1/chat/completions/derender"
HELLO = [9707, 1052, 0, 220, 108386, 1879, 151645]  # "Hello there! 你好 world" + <|im_end|>


def chat_body() -> dict:
    choice = {"index": 0, "token_ids": HELLO, "finish_reason": "stop"}
    return {
        "model": "qwen3",
        "generate_response": {"request_id": "r", "choices": [choice]},
        "prompt_tokens": 9,
    }


def content(answer: bytes) -> str:
    return json.loads(answer)["choices"][0]["message"]["content"]


def test_connections_reach_two_different_workers(server_factory):
    server = server_factory(
        [str(DEFAULT_MODEL_DIR), "--served-model-name", "qwen3"] + ["--workers", "2"]
    )
    with connections_to_two_workers(server) as conns:
        pids = {worker_of(server.proc.pid, server.port, c.conn) for c in conns}
        assert len(pids) == 2
        for c in conns:
            status, out = c.post(CHAT, chat_body())
            assert (
                status == 200
                and out["choices"][0]["message"]["content"] == "Hello there! 你好 world"
            )


# --- graceful shutdown ------------------------------------------------------


def _read_head(sock: socket.socket) -> bytes:
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        byte = sock.recv(1)
        assert byte, f"connection closed after {head!r}"
        head += byte
    return head


def _wait_until_refused(port: int) -> None:
    """Poll (bounded) until the port refuses connections: the server stopped accepting."""
    for _ in range(600):
        try:
            socket.create_connection((HOST, port), timeout=1).close()
        except ConnectionRefusedError:
            return
        threading.Event().wait(0.05)
    pytest.fail("the server kept accepting connections after SIGTERM")


@pytest.mark.parametrize(
    "workers, shutdown_timeout, answered", [(1, "30", True), (2, "30", True), (1, "0", False)]
)
def test_sigterm_finishes_the_call_in_flight(server_factory, workers, shutdown_timeout, answered):
    """SIGTERM while a call is in flight (its handler waits for the body, held
    back by the client): the server stops accepting, answers the call in full,
    then exits by itself. With `--shutdown-timeout 0` it exits at once, and
    uvicorn fails the call with a plain 500."""
    args = [str(DEFAULT_MODEL_DIR), "--served-model-name", "qwen3", "--workers", str(workers)]
    server = server_factory([*args, "--shutdown-timeout", shutdown_timeout])
    body = json.dumps(chat_body()).encode()
    head = (
        f"POST {CHAT} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n"
    )
    with socket.create_connection((HOST, server.port), timeout=30) as sock:
        sock.sendall(head.encode())
        # uvicorn sends "100 Continue" when the app first asks for the body.
        assert _read_head(sock).startswith(b"HTTP/1.1 100")
        server.proc.send_signal(signal.SIGTERM)
        _wait_until_refused(server.port)
        if answered:
            assert server.proc.poll() is None  # draining
            sock.sendall(body)
        else:
            server.proc.wait(timeout=30)  # it did not wait for the call
        response = http.client.HTTPResponse(sock)
        response.begin()
        answer = response.read()
        closed = sock.recv(1) == b""  # no keep-alive past shutdown
    if answered:
        assert response.status == 200, answer
        assert content(answer) == "Hello there! 你好 world"
    else:  # uvicorn's own answer to a call it cancelled
        assert response.status == 500 and answer == b"Internal Server Error"
    assert closed
    # uvicorn re-raises the SIGTERM it handled once it is done (one worker).
    assert server.proc.wait(timeout=30) in (0, -signal.SIGTERM)


# --- the per-request time limit ----------------------------------------------


def test_request_timeout_408_for_a_body_that_never_arrives_and_200_otherwise(server_factory):
    server = server_factory(
        [str(DEFAULT_MODEL_DIR), "--served-model-name", "qwen3", "--request-timeout", "0.5"]
    )
    conn = Connection(server.port)
    try:
        status, out = conn.post(CHAT, chat_body())
        assert (
            status == 200 and out["choices"][0]["message"]["content"] == "Hello there! 你好 world"
        )
    finally:
        conn.close()
    head = (
        f"POST {CHAT} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
        'Content-Length: 1000\r\n\r\n{"model": '
    )
    with socket.create_connection((HOST, server.port), timeout=30) as sock:
        sock.sendall(head.encode())
        response = http.client.HTTPResponse(sock)
        response.begin()
        error = json.loads(response.read())["error"]
        closed = sock.recv(1) == b""  # the unread body leaves the connection unusable
    assert closed
    assert response.status == 408
    assert error["code"] == 408 and error["type"] == "Request Timeout"
    assert "did not arrive within the server's 0.5 s limit (--request-timeout)" in error["message"]


class StuckCore:
    """A core whose calls last until the test lets them go."""

    served_model_names = ["qwen3"]
    max_model_len = 40960

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()

    def handle_measured(self, path, body, content_type=None, request_id=None):
        self.entered.set()
        self.release.wait(timeout=60)
        return 200, b"{}", None


def test_request_timeout_503_for_a_call_still_being_derendered():
    from starlette.testclient import TestClient

    core = StuckCore()
    config = ServerConfig(model=str(DEFAULT_MODEL_DIR), request_timeout=0.2)
    try:
        with TestClient(create_app(config, core)) as client:  # type: ignore[arg-type]
            answer = client.post(CHAT, json=chat_body())
            assert core.entered.is_set()
            assert answer.status_code == 503
            error = answer.json()["error"]
            assert error["type"] == "Service Unavailable" and error["code"] == 503
            assert "did not finish this request within its 0.2 s limit" in error["message"]
            metrics = client.get("/metrics").text
            assert f'derender_requests_total{{route="{CHAT}",status="503"}} 1' in metrics
    finally:
        core.release.set()


def test_request_timeout_must_be_positive():
    parser = build_parser()
    for bad in ["0", "-1", "nan", "soon"]:
        with pytest.raises(SystemExit):
            parser.parse_args(["serve", "--request-timeout", bad])
    args = parser.parse_args(["serve", "--request-timeout", "2.5"])
    assert config_from_args(args).request_timeout == 2.5
    assert config_from_args(parser.parse_args(["serve"])).request_timeout is None


# --- settings every worker shares ----------------------------------------------


def test_workers_share_the_secrets_through_the_config_env(monkeypatch):
    """Workers build their app from DERENDER_SERVER_CONFIG: the signing and the
    accepted secrets travel in it (the env vars are read once, by the CLI)."""
    # Secrets no path or repr could contain by chance.
    secret, accepted = "s3cr3t-9f1c2e", ["acc3pt-7d4b0a", "acc3pt-c85e13"]
    monkeypatch.setenv("DERENDER_STREAM_STATE_SECRET", secret)
    monkeypatch.setenv("DERENDER_STREAM_STATE_ACCEPTED_SECRETS", f"{accepted[0]}, {accepted[1]},")
    config = config_from_args(build_parser().parse_args(["serve"]))
    assert config.stream_state_secret == secret
    assert config.stream_state_accepted_secrets == accepted
    monkeypatch.setenv("DERENDER_SERVER_CONFIG", config.to_env())
    worker = ServerConfig.from_env()
    assert worker.stream_state_secret == secret
    assert worker.stream_state_accepted_secrets == accepted
    assert all(s not in repr(worker) for s in (secret, *accepted))
    # The flag wins over the environment.
    args = build_parser().parse_args(["serve", "--stream-state-accepted-secrets", "a", "b"])
    assert config_from_args(args).stream_state_accepted_secrets == ["a", "b"]


def test_accepted_secrets_without_a_secret_stop_the_server(monkeypatch):
    from derender.cli import main

    monkeypatch.delenv("DERENDER_STREAM_STATE_SECRET", raising=False)
    with pytest.raises(SystemExit, match="needs --stream-state-secret"):
        main(["serve", "--stream-state-accepted-secrets", "old", "--port", "1"])


def test_a_chat_template_path_that_does_not_open_stops_the_server(tmp_path):
    """vLLM reads `--chat-template` as a file, or as the template's text when
    it has `{`, `}` or a newline; a missing path is refused, never used as
    the template."""
    from derender.cli import _load_chat_template

    template = tmp_path / "t.jinja"
    template.write_text("{{ messages[0].content }}", encoding="utf-8")
    assert _load_chat_template(str(template)) == "{{ messages[0].content }}"
    assert _load_chat_template("{{ 'inline' }}") == "{{ 'inline' }}"
    for missing in (str(tmp_path / "nope.jinja"), "chatml"):
        with pytest.raises(SystemExit, match=r"looks like a file path, but it failed to be opened"):
            _load_chat_template(missing)


UNBINDABLE = ["--host", "256.0.0.1", "--port", "1"]


def _model_copy(tmp_path, extra: dict[str, str | bytes]) -> str:
    """The bundled model's files in a directory of its own, plus `extra`."""
    import shutil

    target = tmp_path / "model"
    shutil.copytree(DEFAULT_MODEL_DIR, target)
    for name, body in extra.items():
        (target / name).write_bytes(body if isinstance(body, bytes) else body.encode())
    return str(target)


@pytest.mark.parametrize(
    ("flags", "extra", "message"),
    [
        (
            ["--tokenizer-mode", "alpamayo2_super"],
            {},
            "--tokenizer-mode alpamayo2_super: derender builds",
        ),
        (["--tokenizer-mode", "mistral"], {}, "derender builds it for tekken tokenizers"),
        (
            [],
            {"tokenizer.model.v3": b"", "consolidated.safetensors": b""},
            "derender builds it for tekken tokenizers",
        ),
        (
            [],
            {"tekken.json": "{}", "consolidated.safetensors": b""},
            "tekken.json: no `config`",
        ),
        (
            ["--max-model-len", "4096"],
            {"config.json": '{"architectures": ["MoonshotKimiaForCausalLM"]}'},
            "kimi_audio (architecture MoonshotKimiaForCausalLM)",
        ),
        (["--tokenizer", "/elsewhere"], {}, "cannot start: model `/elsewhere` is not a directory"),
        (["--revision", "v3"], {}, None),
    ],
)
def test_a_tokenizer_choice_derender_cannot_honour_stops_the_server(
    tmp_path, flags, extra, message
):
    """vLLM picks its tokenizer from --tokenizer-mode, --tokenizer and, under
    auto, the model's files; a choice that would change token ids and is not
    built stops the server with a message naming it."""
    from derender.cli import main

    model = _model_copy(tmp_path, extra)
    if message is None:  # a model id: the revision is looked up in the cache
        model, message = "org/absent", "in the local Hugging Face cache at revision `v3`"
    # An address no socket can take: a server that wrongly starts fails
    # here instead of serving forever.
    with pytest.raises(SystemExit, match=re.escape(message)):
        main(["serve", model, *flags, *UNBINDABLE])


def test_the_tokenizers_own_files_pick_the_mistral_mode(tmp_path):
    """vLLM's `auto` looks for mistral_common files where the tokenizer is: a
    plain model with `--tokenizer` naming a mistral_common directory loads
    that directory's tekken file (here a broken one, named at startup)."""
    from derender.cli import main

    tokenizer = _model_copy(tmp_path / "t", {"tekken.json": "{}", "consolidated.safetensors": b""})
    model = _model_copy(tmp_path / "m", {})
    with pytest.raises(SystemExit, match=re.escape("tekken.json: no `config`")):
        main(["serve", model, "--tokenizer", tokenizer, *UNBINDABLE])


def test_hf_mode_on_a_mistral_common_directory_is_accepted(tmp_path):
    from derender.cli import _tokenizer_mode

    model = _model_copy(tmp_path, {"tekken.json": "{}", "consolidated.safetensors": b""})
    args = build_parser().parse_args(
        ["serve", model, "--tokenizer", model, "--tokenizer-mode", "HF", "--revision", "v1"]
    )
    # hf mode on a local directory: nothing to refuse
    assert _tokenizer_mode(args, model, model, model) == "hf"


def test_malformed_model_json_stops_the_server(tmp_path):
    """A model file that is not JSON is an error, not silently skipped."""
    from derender.cli import main

    model = _model_copy(tmp_path, {"tokenizer_config.json": "{oops"})
    with pytest.raises(SystemExit, match=r"tokenizer_config\.json: invalid JSON"):
        main(["serve", model, "--port", "1"])


def test_a_model_directory_read_as_a_served_name_stops_the_server(tmp_path):
    from derender.cli import main

    model = _model_copy(tmp_path, {})
    with pytest.raises(SystemExit, match="took .*model, a model directory, as a name"):
        main(["serve", "--served-model-name", "a", model, "--port", "1"])


def test_a_bad_log_level_is_refused_by_the_command_line(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--log-level", "verbose"])
    assert "invalid choice: 'verbose'" in capsys.readouterr().err
    assert build_parser().parse_args(["serve", "--log-level", "INFO"]).log_level == "info"


def test_a_busy_port_stops_the_workers_supervisor_with_one_line():
    from derender.cli import _listen

    with socket.socket() as busy:
        busy.bind((HOST, 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(SystemExit, match=f"cannot listen on {HOST}:{port}"):
            _listen(HOST, port)


def test_startup_says_what_is_served_where():
    """One line at the default log level: address, model, vocabulary, context,
    parsers, template and load time (here the port is busy, so the server
    then stops)."""
    import subprocess
    import sys

    with socket.socket() as busy:
        busy.bind((HOST, 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "derender.cli", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    line = next(x for x in done.stderr.splitlines() if x.startswith("derender: serving"))
    assert f"on http://{HOST}:{port} (vocabulary 151669, max_model_len 40960" in line
    assert "parsers: reasoning qwen3, tools hermes, chat template: the model's" in line
    assert str(DEFAULT_MODEL_DIR) in line and "loaded in" in line
    assert done.returncode != 0


def test_startup_names_harmony_for_a_gpt_oss_model():
    """A gpt_oss model is rendered through Harmony: the startup line says so
    rather than naming a chat template it never reads."""
    from conftest import MODEL_DIRS

    from derender import Derenderer
    from derender.cli import _startup_line

    model = str(MODEL_DIRS["models/gpt_oss"])
    args = build_parser().parse_args(["serve", model, "--reasoning-parser", "openai_gptoss"])
    config = config_from_args(args)
    core = Derenderer(config.model, **config.core_kwargs())
    line = _startup_line(args, config, core, 1.0)
    assert "parsers: reasoning openai_gptoss, chat template: Harmony (gpt_oss" in line
