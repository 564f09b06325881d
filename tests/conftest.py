"""Shared fixtures: the bundled model, the ASGI app and real loopback servers."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from derender import DEFAULT_MODEL_DIR, Derenderer
from derender.app import create_app
from derender.config import ServerConfig

HERE = Path(__file__).parent
REFERENCE = HERE / "reference"
# Harmony's system message carries the date: the recordings pin it
# (configs.json's env), and so do the tests.
for _config in json.loads((REFERENCE / "configs.json").read_text()).values():
    if "VLLM_SYSTEM_START_DATE" in _config.get("env", {}):
        os.environ["VLLM_SYSTEM_START_DATE"] = _config["env"]["VLLM_SYSTEM_START_DATE"]
# Model dirs of reference/configs.json that the repository carries: the
# bundled Qwen3 and each fixture under tests/models.
MODEL_DIRS = {
    "models/qwen3": DEFAULT_MODEL_DIR,
    **{f"models/{d.name}": d for d in sorted((HERE / "models").iterdir()) if d.is_dir()},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`derender serve` in a subprocess on a free loopback port."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "derender.cli", "serve", *args]
        cmd += ["--host", "127.0.0.1", "--port", str(self.port)]
        self.proc = subprocess.Popen(
            cmd,
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                out = self.proc.stdout.read().decode() if self.proc.stdout else ""
                raise RuntimeError(f"server exited early ({self.proc.returncode}): {out}")
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("server did not become healthy in 30 s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def core() -> Derenderer:
    return Derenderer(str(DEFAULT_MODEL_DIR), served_model_names=["qwen3"])


@pytest.fixture(scope="session")
def app(core: Derenderer):
    return create_app(
        ServerConfig(model=str(DEFAULT_MODEL_DIR), served_model_names=["qwen3"]), core
    )


@pytest.fixture
def client(app) -> Iterator[httpx.Client]:
    from starlette.testclient import TestClient

    with TestClient(app) as c:
        yield c


@pytest.fixture
def server_factory() -> Iterator:
    servers: list[Server] = []

    def start(args: list[str], env: dict[str, str] | None = None) -> Server:
        s = Server(args, env)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()


@pytest.fixture(scope="module")
def engine_url() -> Iterator[str]:
    """`derender engine`, the engine simulator, on a free loopback port."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "derender.cli", "engine", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=15)
