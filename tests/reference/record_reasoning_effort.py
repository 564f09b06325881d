"""Record what `--reasoning-effort-map` and `--anthropic-disabled-thinking-effort` change on vLLM
0.33.0's render server, and the startup errors for bad values.

For each SETTING (config qwen3_hermes or gpt_oss, plus the setting's flags), in a temporary dir
holding the config's model dir unpacked at its configs.json path:

    cd <tmp> && VLLM_TARGET_DEVICE=cpu <config env> vllm launch render models/<dir> \\
        --served-model-name <name> --host 127.0.0.1 --port 8473 <config flags> <setting flags>

(gpt_oss: VLLM_SYSTEM_START_DATE=2026-01-15, TIKTOKEN_ENCODINGS_BASE=<tmp>/models/gpt_oss), then
POSTs the setting's request set (requests() below: /v1/chat/completions/render with every
reasoning_effort, /v1/responses/render with every reasoning.effort, /v1/messages/render with
thinking absent/enabled/disabled/adaptive and output_config.effort, /v1/completions/render and
/tokenize with a stray reasoning_effort). Bad flag values (BAD) are launched too and their exit
status and output tail kept.

    VLLM=/path/to/vllm-venv/bin/vllm python3 tests/reference/record_reasoning_effort.py

writes reasoning_effort/<config>.jsonl.gz: one {"setting", "flags", "path", "request", "status",
"body"} per call, each setting preceded by {"setting", "flags", "log": [server lines about the
disabled-thinking effort]}; and reasoning_effort/startup_errors.jsonl.gz: one {"flags",
"returncode", "output_tail"} per bad value.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import render_server as rs  # noqa: E402

OUT = rs.HERE / "reasoning_effort"
PORT = 8473
EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh", "max"]
ANTHROPIC = ["none", "low", "medium", "high", "xhigh", "max"]
MAP_FLAG = "--reasoning-effort-map"
DTE_FLAG = "--anthropic-disabled-thinking-effort"
# Qwen3's template reads only enable_thinking (set from the effort: != "none"), so the map shows
# through "low" <-> "none"; gpt-oss (Harmony) writes the effort in the system message.
QWEN3_MAP = {"low": "none", "none": "low", "medium": "high", "xhigh": "turbo"}
GPT_OSS_MAP = {"none": "low", "low": "high", "medium": "low", "max": "high", "xhigh": "turbo"}
SETTINGS: dict[str, list[tuple[str, list[str], str]]] = {
    "qwen3_hermes": [
        ("default", [], "full"),
        ("map", [MAP_FLAG, json.dumps(QWEN3_MAP)], "full"),
        *((f"dte_{e}", [DTE_FLAG, e], "anthropic") for e in ANTHROPIC),
        ("map_dte_none", [MAP_FLAG, json.dumps(QWEN3_MAP), DTE_FLAG, "none"], "anthropic"),
    ],
    "gpt_oss": [
        ("default", [], "full"),
        ("map", [MAP_FLAG, json.dumps(GPT_OSS_MAP)], "full"),
        ("dte_none", [DTE_FLAG, "none"], "anthropic"),
        ("dte_high", [DTE_FLAG, "high"], "anthropic"),
    ],
}
BAD = [
    [MAP_FLAG, '{"turbo": "low"}'],
    [MAP_FLAG, '{"low": 1}'],
    [MAP_FLAG, '["low"]'],
    [MAP_FLAG, "notjson"],
    [MAP_FLAG, '"low"'],
    [MAP_FLAG, "{}"],
    [MAP_FLAG, "null"],
    [DTE_FLAG, "minimal"],
    [DTE_FLAG, "AUTO"],
]
HI = [{"role": "user", "content": "Hi"}]


def requests(model: str, kind: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, path, body)"""
    chat = "/v1/chat/completions/render"
    msgs = "/v1/messages/render"
    out: list[tuple[str, str, dict[str, Any]]] = []
    base_m = {"model": model, "max_tokens": 64, "messages": HI}
    anthropic = [
        ("messages_thinking_absent", msgs, base_m),
        ("messages_thinking_disabled", msgs, {**base_m, "thinking": {"type": "disabled"}}),
        ("messages_thinking_disabled_effort_high", msgs,
         {**base_m, "thinking": {"type": "disabled"}, "output_config": {"effort": "high"}}),  # fmt: skip
        ("messages_thinking_enabled", msgs,
         {**base_m, "max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 2048}}),  # fmt: skip
        ("messages_thinking_adaptive", msgs, {**base_m, "thinking": {"type": "adaptive"}}),
        ("chat_effort_none", chat, {"model": model, "messages": HI, "reasoning_effort": "none"}),
    ]
    if kind == "anthropic":
        return anthropic
    out.append(("chat_effort_absent", chat, {"model": model, "messages": HI}))
    out += [(f"chat_effort_{e}", chat, {"model": model, "messages": HI, "reasoning_effort": e})
            for e in EFFORTS]  # fmt: skip
    out += [
        ("chat_effort_null", chat, {"model": model, "messages": HI, "reasoning_effort": None}),
        ("chat_effort_invalid", chat, {"model": model, "messages": HI, "reasoning_effort": "turbo"}),
        ("chat_effort_none_kwargs_thinking_true", chat,
         {"model": model, "messages": HI, "reasoning_effort": "none",
          "chat_template_kwargs": {"enable_thinking": True}}),  # fmt: skip
        ("chat_effort_low_kwargs_effort_high", chat,
         {"model": model, "messages": HI, "reasoning_effort": "low",
          "chat_template_kwargs": {"reasoning_effort": "high"}}),  # fmt: skip
        ("chat_kwargs_effort_low_only", chat,
         {"model": model, "messages": HI, "chat_template_kwargs": {"reasoning_effort": "low"}}),  # fmt: skip
    ]
    out.append(("responses_reasoning_absent", "/v1/responses/render", {"model": model, "input": "Hi"}))
    out += [(f"responses_effort_{e}", "/v1/responses/render",
             {"model": model, "input": "Hi", "reasoning": {"effort": e}}) for e in EFFORTS]  # fmt: skip
    out.append(("responses_reasoning_empty", "/v1/responses/render",
                {"model": model, "input": "Hi", "reasoning": {}}))  # fmt: skip
    out += anthropic[:-1]
    out += [(f"messages_output_effort_{e}", msgs, {**base_m, "output_config": {"effort": e}})
            for e in ["low", "medium", "high", "xhigh", "max"]]  # fmt: skip
    out += [
        ("messages_output_effort_none", msgs, {**base_m, "output_config": {"effort": "none"}}),
        ("messages_enabled_effort_low", msgs,
         {**base_m, "max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 2048},
          "output_config": {"effort": "low"}}),  # fmt: skip
        ("messages_enabled_budget_over_max_tokens", msgs,
         {**base_m, "thinking": {"type": "enabled", "budget_tokens": 2048}}),  # fmt: skip
        ("completions_stray_effort", "/v1/completions/render",
         {"model": model, "prompt": "Hi", "reasoning_effort": "low"}),  # fmt: skip
        ("tokenize_chat", "/tokenize", {"model": model, "messages": HI}),
        ("tokenize_chat_stray_effort", "/tokenize", {"model": model, "messages": HI, "reasoning_effort": "low"}),
        ("tokenize_chat_kwargs_thinking_false", "/tokenize",
         {"model": model, "messages": HI, "chat_template_kwargs": {"enable_thinking": False}}),  # fmt: skip
    ]
    return out


LOG_RE = re.compile(r"reasoning_effort|thinking", re.I)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("configs", nargs="*", default=list(SETTINGS))
    ap.add_argument("--no-bad", action="store_true")
    args = ap.parse_args()
    work = rs.workdir("effort-")
    OUT.mkdir(exist_ok=True)
    for name in args.configs:
        config = rs.CONFIGS[name]
        model = rs.unpack_model(config["model"], work)
        rows: list[dict] = []
        for setting, flags, kind in SETTINGS[name]:
            all_flags = [*config["flags"], *flags]
            server = rs.Server(work, config["model"], config["served_model_name"], all_flags,
                               rs.config_env(config, model), PORT, work / f"{name}-{setting}.log")  # fmt: skip
            calls = []
            with server:
                if not server.start():
                    raise SystemExit(f"{name} {setting}: {server.log_text()[-3000:]}")
                for call, path, body in requests(config["served_model_name"], kind):
                    got = rs.call(PORT, "POST", path, body)
                    calls.append({"setting": setting, "flags": flags, "name": call, "path": path,
                                  "request": body, "status": got["status"], "body": got["body"]})  # fmt: skip
            log = [line.split("] ", 1)[-1] for line in server.log_text().splitlines()
                   if LOG_RE.search(line) and "Route:" not in line and "non-default args" not in line]  # fmt: skip
            rows.append({"setting": setting, "flags": flags, "log": log})
            rows += calls
            print(f"{name} {setting}: {[c['status'] for c in calls]} {log}", flush=True)
        with gzip.open(OUT / f"{name}.jsonl.gz", "wt", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    if not args.no_bad:
        config = rs.CONFIGS["qwen3_hermes"]
        model = rs.unpack_model(config["model"], work)
        rows = []
        for i, flags in enumerate(BAD):
            server = rs.Server(work, config["model"], config["served_model_name"], [*config["flags"], *flags],
                               rs.config_env(config, model), PORT, work / f"bad-{i}.log")  # fmt: skip
            with server:
                started = server.start()
            tail = rs.scrub(server.log_text().rstrip().splitlines()[-12:])
            rows.append({"flags": flags, "started": started, "returncode": server.returncode,
                         "output_tail": tail})  # fmt: skip
            print(f"bad {flags}: started={started} rc={server.returncode} {tail[-1:]}", flush=True)
        with gzip.open(OUT / "startup_errors.jsonl.gz", "wt", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
