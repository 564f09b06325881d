"""Capture what vLLM 0.33.0's render server logs with `--enable-log-requests` / `--max-log-len`
(entrypoints/serve/utils/request_logger.py) for a chat render, a completions render, a chat and a
completions derender, a wrong-model render and a validation error.

For each SETTING, in a temporary dir holding models/qwen3:

    cd <tmp> && PYTHONUNBUFFERED=1 VLLM_TARGET_DEVICE=cpu <setting env> vllm launch render models/qwen3 \\
        --served-model-name qwen3 --host 127.0.0.1 --port 8474 --reasoning-parser qwen3 \\
        --tool-call-parser hermes --enable-auto-tool-choice <setting flags>     # qwen3_hermes

then the CALLS one by one, each with header X-Request-Id: log-<n>, keeping the server output lines
that appeared during each call (PYTHONUNBUFFERED only so uvicorn's access lines reach the file in
order). Settings: no flag; --enable-log-requests; + --max-log-len 20; and, beyond the default log
level, + VLLM_REQUEST_BODY_LOG_LEVEL=INFO and + VLLM_LOGGING_LEVEL=DEBUG.

    VLLM=/path/to/vllm-venv/bin/vllm python3 tests/reference/record_request_log.py

writes request_log/qwen3_hermes.jsonl.gz: per setting one {"setting", "flags", "env", "startup":
[startup lines mentioning request logging]} and one {"setting", "name", "path", "request", "status",
"body", "lines": [...]} per call (lines with the timestamp prefix "(MainProcess pid=N) LEVEL MM-DD HH:MM:SS"
kept as printed; compare from the "[file.py:line]" part on).
"""

from __future__ import annotations

import gzip
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import render_server as rs  # noqa: E402

CONFIG = "qwen3_hermes"
OUT = rs.HERE / "request_log" / f"{CONFIG}.jsonl.gz"
PORT = 8474
M = "qwen3"
LONG = "Please explain, in one short paragraph, how TCP handshakes work."
SETTINGS: list[tuple[str, list[str], dict[str, str]]] = [
    ("off", [], {}),
    ("log_requests", ["--enable-log-requests"], {}),
    ("log_requests_max20", ["--enable-log-requests", "--max-log-len", "20"], {}),
    ("log_requests_max20_body_info", ["--enable-log-requests", "--max-log-len", "20"],
     {"VLLM_REQUEST_BODY_LOG_LEVEL": "INFO"}),  # fmt: skip
    ("log_requests_max20_debug", ["--enable-log-requests", "--max-log-len", "20"], {"VLLM_LOGGING_LEVEL": "DEBUG"}),
    ("log_requests_debug", ["--enable-log-requests"], {"VLLM_LOGGING_LEVEL": "DEBUG"}),
]
GEN = {
    "request_id": "gen-1", "model": None, "created": None,
    "usage": {"prompt_tokens": 9, "total_tokens": 14, "completion_tokens": 5},
    "output_mode": "tokens",
    "choices": [{"index": 0, "logprobs": None, "finish_reason": "stop", "stop_reason": None,
                 "token_ids": [9707, 11, 1879, 0, 151645]}],
}  # fmt: skip
CALLS: list[tuple[str, str, Any]] = [
    ("chat_render", "/v1/chat/completions/render", {"model": M, "messages": [{"role": "user", "content": LONG}]}),
    ("completions_render", "/v1/completions/render", {"model": M, "prompt": LONG, "max_tokens": 8}),
    ("chat_derender", "/v1/chat/completions/derender",
     {"model": M, "generate_response": GEN, "chat_request": {"model": M, "messages": [{"role": "user", "content": LONG}]}}),
    ("completions_derender", "/v1/completions/derender", {"model": M, "generate_responses": [GEN]}),
    ("tokenize", "/tokenize", {"model": M, "prompt": LONG}),
    ("chat_render_wrong_model", "/v1/chat/completions/render",
     {"model": "nope", "messages": [{"role": "user", "content": LONG}]}),  # fmt: skip
    ("completions_render_wrong_model", "/v1/completions/render", {"model": "nope", "prompt": LONG}),
    ("chat_render_validation_error", "/v1/chat/completions/render", {"model": M, "messages": "x"}),
    ("chat_render_bad_request", "/v1/chat/completions/render",
     {"model": M, "messages": [{"role": "user", "content": LONG}], "n": 0}),  # fmt: skip
]


def lines_from(path: Path, offset: int) -> tuple[list[str], int]:
    data = path.read_bytes()
    return data[offset:].decode("utf-8", errors="replace").splitlines(), len(data)


def main() -> None:
    work = rs.workdir("reqlog-")
    config = rs.CONFIGS[CONFIG]
    model = rs.unpack_model(config["model"], work)
    rows: list[dict] = []
    for setting, flags, env in SETTINGS:
        log = work / f"{setting}.log"
        server = rs.Server(work, config["model"], config["served_model_name"], [*config["flags"], *flags],
                           {**rs.config_env(config, model), "PYTHONUNBUFFERED": "1", **env}, PORT, log)  # fmt: skip
        with server:
            if not server.start():
                raise SystemExit(server.log_text()[-3000:])
            time.sleep(1)
            startup, offset = lines_from(log, 0)
            keep = [s for s in startup if "log-requests" in s or "request_logger" in s or "log_requests" in s]
            rows.append({"setting": setting, "flags": flags, "env": env, "startup": keep})
            for i, (name, path, body) in enumerate(CALLS):
                got = rs.call(PORT, "POST", path, body, headers={"X-Request-Id": f"log-{i}"})
                time.sleep(0.5)
                lines, offset = lines_from(log, offset)
                rows.append({"setting": setting, "name": name, "path": path, "request": body,
                             "status": got["status"], "body": got["body"], "lines": lines})  # fmt: skip
        print(f"{setting}: {sum(len(r.get('lines', [])) for r in rows if r.get('setting') == setting)} lines",
              flush=True)  # fmt: skip
    OUT.parent.mkdir(exist_ok=True)
    with gzip.open(OUT, "wt", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} rows -> {OUT}")


if __name__ == "__main__":
    main()
