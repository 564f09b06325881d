"""Record vLLM 0.33.0's `GET /tokenizer_info` (--enable-tokenizer-info-endpoint) on the render server.

For every config in configs.json (or those named on the command line), in a temporary dir holding
the config's model dir unpacked at its configs.json path:

    cd <tmp> && VLLM_TARGET_DEVICE=cpu <config env> vllm launch render models/<dir> \\
        --served-model-name <name> --host 127.0.0.1 --port 8471 <config flags> \\
        --enable-tokenizer-info-endpoint
    curl http://127.0.0.1:8471/tokenizer_info

(gpt_oss also gets TIKTOKEN_ENCODINGS_BASE=<tmp>/models/gpt_oss, where its o200k_base.tiktoken is
unpacked). Then a few variants on qwen3_hermes's flags (EXTRAS): the route without the flag, other
methods, --chat-template FILE / literal / built-in name, --trust-request-chat-template,
--default-chat-template-kwargs, --tokenizer-mode slow (vLLM 0.33.0 refuses it at startup: kept as
skipped), and gpt_oss with --chat-template FILE. Calls follow redirects (urllib): GET /tokenizer_info/
is Starlette's 307 to /tokenizer_info, recorded as the final 200.

    VLLM=/path/to/vllm-venv/bin/vllm python3 tests/reference/record_tokenizer_info.py [CONFIG ...]

writes tokenizer_info/configs.jsonl.gz (one {"config", "model", "flags", "status", "headers",
"body"} per config, or {"config", "skipped": reason, "log_tail"} when vLLM does not start) and
tokenizer_info/extras.jsonl.gz (one {"case", "flags", "calls": [{"method", "path", "status",
"headers", "body"}]} per variant; the first line of extras is {"chat_template_file": text}).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import render_server as rs  # noqa: E402

OUT = rs.HERE / "tokenizer_info"
PORT = 8471
INFO = "--enable-tokenizer-info-endpoint"
CHAT_TEMPLATE_FILE = (
    "{%- for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n"
    "{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}\n"
)
LITERAL_TEMPLATE = "{% for m in messages %}{{ m.content }}{% endfor %}"
# (case, config whose model/flags to start from, extra flags, calls)
GET = [("GET", "/tokenizer_info")]
EXTRAS = [
    ("no_flag", "qwen3_plain", [], GET),
    ("methods", "qwen3_plain", [INFO], [("POST", "/tokenizer_info"), ("HEAD", "/tokenizer_info"),
                                         ("GET", "/tokenizer_info/"), ("GET", "/v1/tokenizer_info")]),  # fmt: skip
    ("chat_template_file", "qwen3_hermes", [INFO, "--chat-template", "{file}"], GET),
    ("chat_template_literal", "qwen3_hermes", [INFO, "--chat-template", LITERAL_TEMPLATE], GET),
    ("chat_template_builtin_name", "qwen3_hermes", [INFO, "--chat-template", "template_chatml.jinja"], GET),
    ("trust_request_chat_template", "qwen3_hermes", [INFO, "--trust-request-chat-template"], GET),
    ("default_chat_template_kwargs", "qwen3_hermes",
     [INFO, "--default-chat-template-kwargs", '{"enable_thinking": false}'], GET),  # fmt: skip
    ("tokenizer_mode_slow", "qwen3_plain", [INFO, "--tokenizer-mode", "slow"], GET),
    ("gpt_oss_chat_template_file", "gpt_oss", [INFO, "--chat-template", "{file}"], GET),
]


def start(work: Path, config: dict, flags: list[str], log: Path) -> rs.Server:
    model = rs.unpack_model(config["model"], work)
    return rs.Server(work, config["model"], config["served_model_name"], flags,
                     rs.config_env(config, model), PORT, log)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("configs", nargs="*", help="configs.json keys (default: all)")
    ap.add_argument("--no-extras", action="store_true")
    ap.add_argument("--no-configs", action="store_true")
    args = ap.parse_args()
    work = rs.workdir("tokinfo-")
    template_file = work / "custom_template.jinja"
    template_file.write_text(CHAT_TEMPLATE_FILE)
    OUT.mkdir(exist_ok=True)
    if not args.no_configs:
        rows = []
        for name in args.configs or list(rs.CONFIGS):
            config = rs.CONFIGS[name]
            flags = [*config["flags"], INFO]
            server = start(work, config, flags, work / f"{name}.log")
            with server:
                if not server.start():
                    tail = rs.scrub(server.log_text().strip().splitlines()[-15:])
                    rows.append({"config": name, "model": config["model"], "flags": flags,
                                 "skipped": f"vLLM exited with status {server.returncode}",
                                 "log_tail": tail})  # fmt: skip
                    print(f"{name}: skipped ({server.returncode})", flush=True)
                    continue
                got = rs.call(PORT, "GET", "/tokenizer_info")
            rows.append({"config": name, "model": config["model"], "flags": flags, **got})
            print(f"{name}: {got['status']} {got['body'].get('tokenizer_class')}", flush=True)
        path = OUT / ("configs.jsonl.gz" if not args.configs else "configs.partial.jsonl.gz")
        with gzip.open(path, "wt", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{len(rows)} configs -> {path}")
    if not args.no_extras:
        cases = []
        for case, base, extra, calls in EXTRAS:
            config = rs.CONFIGS[base]
            flags = [*config["flags"], *(f.replace("{file}", str(template_file)) for f in extra)]
            server = start(work, config, flags, work / f"extra-{case}.log")
            with server:
                if not server.start():
                    tail = rs.scrub(server.log_text().strip().splitlines()[-15:])
                    cases.append({"case": case, "config": base, "flags": flags,
                                  "skipped": f"vLLM exited with status {server.returncode}",
                                  "log_tail": tail})  # fmt: skip
                    continue
                answers = [{"method": m, "path": p, **rs.call(PORT, m, p)} for m, p in calls]
            # the temp path of the template file is not stable; record it by name
            shown = [f.replace(str(template_file), "custom_template.jinja") for f in flags]
            cases.append({"case": case, "config": base, "flags": shown, "calls": answers})
            print(f"{case}: {[a['status'] for a in answers]}", flush=True)
        with gzip.open(OUT / "extras.jsonl.gz", "wt", encoding="utf-8") as f:
            f.write(json.dumps({"chat_template_file": CHAT_TEMPLATE_FILE}) + "\n")
            for case in cases:
                f.write(json.dumps(case, ensure_ascii=False) + "\n")
        print(f"{len(cases)} extras -> {OUT / 'extras.jsonl.gz'}")


if __name__ == "__main__":
    main()
