"""Record vLLM 0.33.0's render answers under `--generation-config` and
`--override-generation-config` (default sampling values) into
tests/reference/generation_config/qwen3.jsonl.gz, on the bundled Qwen3 model.

    VLLM=/path/to/vllm-venv/bin/vllm python3 tests/reference/record_generation_config.py
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
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "python" / "derender" / "models" / "qwen3"
OUT = Path(__file__).parent / "generation_config" / "qwen3.jsonl.gz"
PORT = 8460
# A generation_config.json for `--generation-config DIR` (no eos ids: stop
# tokens stay the model's).
DIR_CONFIG = {
    "temperature": 0.2,
    "top_p": 0.5,
    "top_k": 7,
    "min_p": 0.05,
    "repetition_penalty": 1.1,
    "max_new_tokens": 99,
}
SETUPS = [
    [],
    ["--generation-config", "vllm"],
    ["--generation-config", "{dir}"],
    ["--override-generation-config", '{"temperature": 0.3, "max_new_tokens": 64, "top_k": 5}'],
    ["--generation-config", "vllm", "--override-generation-config", '{"presence_penalty": 0.5}'],
]
REQUESTS = [
    ("/v1/chat/completions/render", {"messages": [{"role": "user", "content": "hi"}]}),
    (
        "/v1/chat/completions/render",
        {"messages": [{"role": "user", "content": "hi"}], "temperature": 0.9, "max_tokens": 10},
    ),
    ("/v1/completions/render", {"prompt": "Hello"}),
    ("/v1/completions/render", {"prompt": "Hello", "top_k": 3, "max_tokens": 500}),
    ("/v1/responses/render", {"input": "hi"}),
]


def post(path: str, body: dict) -> tuple[int, object]:
    data = json.dumps({"model": "qwen3", **body}).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{PORT}{path}", data, {"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def main() -> None:
    vllm = os.environ.get("VLLM", "vllm")
    work = Path(tempfile.mkdtemp(prefix="gencfg-"))
    model = work / "model"
    shutil.copytree(MODEL, model)
    subprocess.run(["gunzip", "-f", str(model / "tokenizer.json.gz")], check=True)
    gen_dir = work / "gen"
    gen_dir.mkdir()
    (gen_dir / "generation_config.json").write_text(json.dumps(DIR_CONFIG))
    cases = []
    for setup in SETUPS:
        flags = [f.replace("{dir}", str(gen_dir)) for f in setup]
        cmd = [vllm, "launch", "render", str(model), "--served-model-name", "qwen3",
               "--host", "127.0.0.1", "--port", str(PORT), *flags]  # fmt: skip
        env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu"}
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)  # fmt: skip
        try:
            for _ in range(300):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{PORT}/health", timeout=2)
                    break
                except OSError:
                    time.sleep(1)
            for path, body in REQUESTS:
                status, answer = post(path, body)
                cases.append({"flags": setup, "endpoint": path, "request": body,
                              "status": status, "response": answer})  # fmt: skip
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
    body = {"dir_config": DIR_CONFIG}
    with gzip.open(OUT, "wt", encoding="utf-8") as f:
        f.write(json.dumps(body) + "\n")
        for case in cases:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases -> {OUT}")


if __name__ == "__main__":
    main()
