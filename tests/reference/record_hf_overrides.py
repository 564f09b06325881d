"""Record what `--hf-overrides` changes on vLLM 0.33.0's render server: the context length
render and /tokenize report and enforce, and a `text_config` merge.

    VLLM=/path/to/vllm-venv/bin/vllm python3 tests/reference/record_hf_overrides.py

For each SETTING (config qwen3_hermes plus the setting's flags), in a temporary dir holding the
model unpacked at its configs.json path (render_server.py), POSTs REQUESTS and writes
hf_overrides/qwen3_hermes.jsonl.gz: one {"setting", "flags", "name", "path", "request",
"status", "body"} per call.
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import render_server as rs  # noqa: E402

CONFIG = "qwen3_hermes"
OUT = rs.HERE / "hf_overrides" / f"{CONFIG}.jsonl.gz"
PORT = 8475
SETTINGS = [
    ("none", []),
    ("max_position_embeddings", ["--hf-overrides", '{"max_position_embeddings": 4096}']),
    ("text_config", ["--hf-overrides", '{"text_config": {"max_position_embeddings": 2048}}']),
    ("with_max_model_len", ["--hf-overrides", '{"max_position_embeddings": 4096}',
                            "--max-model-len", "1024"]),  # fmt: skip
]
HI = [{"role": "user", "content": "Hi"}]
REQUESTS = [
    ("tokenize", "/tokenize", {"model": "qwen3", "prompt": "hello"}),
    ("chat", "/v1/chat/completions/render", {"model": "qwen3", "messages": HI}),
    ("chat_max_tokens_3000", "/v1/chat/completions/render",
     {"model": "qwen3", "messages": HI, "max_tokens": 3000}),
    ("chat_max_tokens_5000", "/v1/chat/completions/render",
     {"model": "qwen3", "messages": HI, "max_tokens": 5000}),
    ("completion_long_prompt", "/v1/completions/render",
     {"model": "qwen3", "prompt": [1] * 3000}),
    ("derender_over_length", "/v1/completions/derender",
     {"model": "qwen3", "generate_responses": [{"request_id": "r", "choices": [
         {"index": 0, "token_ids": [1] * 4100, "finish_reason": "length"}]}]}),
]  # fmt: skip


def main() -> None:
    config = rs.CONFIGS[CONFIG]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model_path = rs.unpack_model(config["model"], work)
        env = rs.config_env(config, model_path)
        for setting, flags in SETTINGS:
            log = work / f"{setting}.log"
            server = rs.Server(work, config["model"], config["served_model_name"],
                               [*config["flags"], *flags], env, PORT, log)  # fmt: skip
            with server:
                if not server.start():
                    rows.append({"setting": setting, "flags": flags, "started": False,
                                 "output_tail": server.log_text().splitlines()[-5:]})  # fmt: skip
                    continue
                for name, path, request in REQUESTS:
                    answer = rs.call(PORT, "POST", path, request)
                    rows.append({"setting": setting, "flags": flags, "name": name, "path": path,
                                 "request": request, "status": answer["status"],
                                 "body": answer["body"]})  # fmt: skip
            print(setting, "done", flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(OUT, "wt", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} rows -> {OUT}")


if __name__ == "__main__":
    main()
