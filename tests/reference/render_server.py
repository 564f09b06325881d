"""Start and stop a live `vllm launch render` for the record_*.py scripts that drive one themselves
(record_tokenizer_info.py, record_decisions.py, record_reasoning_effort.py, record_request_log.py,
record_tokenizer_source.py, random_cuts.py --launch).

A config's model dir (configs.json `model`) is copied to a temporary dir with its `.gz` files unpacked
(tokenizer.json.gz, and gpt_oss's o200k_base.tiktoken.gz, which TIKTOKEN_ENCODINGS_BASE then points at).
The vLLM executable comes from $VLLM (default `vllm` on PATH). The server binds 127.0.0.1 only.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
CONFIGS: dict[str, dict] = json.loads((HERE / "configs.json").read_text())


def source_dir(model: str) -> Path:
    """The repository dir of a configs.json `model` (as tests/conftest.py resolves it)."""
    name = model.split("/")[-1]
    if name == "qwen3":
        return ROOT / "python" / "derender" / "models" / "qwen3"
    return ROOT / "tests" / "models" / name


def unpack_model(model: str, work: Path) -> Path:
    """A copy of `model`'s dir at `work`/`model` (configs.json spelling, e.g. models/qwen3) with every
    `X.gz` unpacked to `X`. Servers run with cwd `work` and are given `model` as written, so vLLM's
    `name_or_path` (seen in /tokenizer_info) is `models/<name>` as in configs.json."""
    dest = work / model
    if dest.exists():
        return dest
    shutil.copytree(source_dir(model), dest)
    for packed in list(dest.glob("*.gz")):
        with gzip.open(packed, "rb") as src, open(packed.with_suffix(""), "wb") as out:
            shutil.copyfileobj(src, out)
        packed.unlink()
    return dest


def config_env(config: dict, model_path: Path) -> dict[str, str]:
    env = {**os.environ, **config.get("env", {})}
    if (model_path / "o200k_base.tiktoken").exists():
        env["TIKTOKEN_ENCODINGS_BASE"] = str(model_path)
    return env


class Server:
    """In `work`: `vllm launch render MODEL --served-model-name NAME --host 127.0.0.1 --port PORT FLAGS`.

    stdout and stderr go to `log` (a file); `start()` waits for GET /health (or the process to exit:
    then `returncode` is set and `start()` returns False).
    """

    def __init__(self, work: Path, model: str, served: str, flags: list[str], env: dict[str, str],
                 port: int, log: Path) -> None:  # fmt: skip
        self.work = work
        self.cmd = [os.environ.get("VLLM", "vllm"), "launch", "render", model,
                    "--served-model-name", served, "--host", "127.0.0.1", "--port", str(port), *flags]  # fmt: skip
        self.env, self.port, self.log = env, port, log
        self.proc: subprocess.Popen | None = None
        self.returncode: int | None = None

    def start(self, timeout: float = 400) -> bool:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        out = open(self.log, "wb")
        self.proc = subprocess.Popen(self.cmd, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=self.work, start_new_session=True)  # fmt: skip
        out.close()
        end = time.time() + timeout
        while time.time() < end:
            if self.proc.poll() is not None:
                self.returncode = self.proc.returncode
                return False
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2)
                return True
            except OSError:
                time.sleep(1)
        self.stop()
        raise TimeoutError(f"vLLM did not start in {timeout}s: {self.cmd}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.proc is not None:
            self.returncode = self.proc.returncode

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


KEPT_HEADERS = ("content-type", "content-length", "allow", "x-request-id")


def call(port: int, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
         headers: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    """One HTTP call: `body` is sent as JSON (content-type application/json) unless `raw` is given
    (sent as is, with only `headers`). Returns {"status", "headers" (KEPT_HEADERS), "body"} where
    body is the parsed JSON, or {"text": ...} when the answer is not JSON."""
    hdrs = dict(headers or {})
    data = raw
    if raw is None and body is not None:
        data = json.dumps(body).encode()
        hdrs.setdefault("content-type", "application/json")
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers=hdrs, method=method)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            status, got, text = r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        status, got, text = e.code, e.headers, e.read()
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = {"text": text.decode("utf-8", errors="replace")}
    kept = {k: got[k] for k in KEPT_HEADERS if got.get(k) is not None}
    return {"status": status, "headers": kept, "body": parsed}


def scrub(lines: list[str]) -> list[str]:
    """Output lines with the vLLM install's prefix (the dir above $VLLM's bin/) written as <venv>."""
    exe = shutil.which(os.environ.get("VLLM", "vllm"))
    if not exe:
        return lines
    venv = str(Path(exe).parent.parent)
    return [line.replace(venv, "<venv>") for line in lines]


def workdir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))
