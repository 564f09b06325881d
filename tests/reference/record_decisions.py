"""Record vLLM 0.33.0's answers on the render server to `POST /v1/decisions` (OpenAI Decisions API,
entrypoints/openai/decisions/) and `POST /v1/systemone` (structured decisions,
entrypoints/generate/structured_decisions/). `vllm launch render` registers both routers
(entrypoints/launchers/api_server/routers.py) but sets no handler state for them, so a body that
passes FastAPI's validation gets the "not supported" answer; everything before that (content type,
JSON parsing, pydantic validation of DecisionRequest / StructuredDecisionRequest) is vLLM's own.

    cd <tmp> && VLLM_TARGET_DEVICE=cpu vllm launch render models/qwen3 --served-model-name qwen3 \\
        --host 127.0.0.1 --port 8472 --reasoning-parser qwen3 --tool-call-parser hermes \\
        --enable-auto-tool-choice          # configs.json qwen3_hermes

    VLLM=/path/to/vllm-venv/bin/vllm python3 tests/reference/record_decisions.py

writes decisions/qwen3_hermes.jsonl.gz: one {"route", "name", "method", "request" (the JSON body,
or null), "raw" (the bytes sent when not JSON, else absent), "headers_sent", "status", "headers",
"body"} per call.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import render_server as rs  # noqa: E402

CONFIG = "qwen3_hermes"
OUT = rs.HERE / "decisions" / f"{CONFIG}.jsonl.gz"
PORT = 8472
M = "qwen3"
PRED = {"type": "predicate", "instructions": "Is the statement true?"}
DEC_MIN = {"model": M, "input": "The sky is blue.", "questions": [PRED]}
ONE_MIN = {"model": M, "state": "The sky is blue.", "questions": {"q1": {"type": "predicate"}}}


def with_(base: dict, **changes: Any) -> dict:
    out = {**base, **changes}
    return {k: v for k, v in out.items() if v is not DROP}


DROP = object()

# (name, body) for POST with content-type application/json
DECISIONS: list[tuple[str, Any]] = [
    ("minimal", DEC_MIN),
    ("full_valid", {
        "model": M,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Paris is in France."}]},
                  {"role": "user", "content": "And Berlin?", "type": "message"}],
        "questions": [
            {"type": "predicate", "instructions": "True?", "name": "truth"},
            {"type": "choice", "instructions": "Which?", "choices": [{"value": "a", "description": "A"},
                                                                     {"value": True}]},
            {"type": "score", "instructions": "Rate", "levels": [{"label": "low"}, {"label": "high"}]},
        ],
        "safety_identifier": "user-1", "joint": False, "cache_salt": "salt",
    }),  # fmt: skip
    ("missing_model", with_(DEC_MIN, model=DROP)),
    ("missing_input", with_(DEC_MIN, input=DROP)),
    ("missing_questions", with_(DEC_MIN, questions=DROP)),
    ("empty_questions", with_(DEC_MIN, questions=[])),
    ("model_int", with_(DEC_MIN, model=123)),
    ("input_int", with_(DEC_MIN, input=5)),
    ("input_null", with_(DEC_MIN, input=None)),
    ("joint_string", with_(DEC_MIN, joint="true")),
    ("extra_top_level", with_(DEC_MIN, temperature=0.5)),
    ("extra_in_question", with_(DEC_MIN, questions=[{**PRED, "weight": 2}])),
    ("question_unknown_type", with_(DEC_MIN, questions=[{"type": "essay", "instructions": "x"}])),
    ("question_missing_type", with_(DEC_MIN, questions=[{"instructions": "x"}])),
    ("question_missing_instructions", with_(DEC_MIN, questions=[{"type": "predicate"}])),
    ("question_name_null", with_(DEC_MIN, questions=[{**PRED, "name": None}])),
    ("choice_one_option", with_(DEC_MIN, questions=[{"type": "choice", "instructions": "x",
                                                     "choices": [{"value": "a"}]}])),  # fmt: skip
    ("choice_duplicate_values", with_(DEC_MIN, questions=[{"type": "choice", "instructions": "x",
                                                           "choices": [{"value": "a"}, {"value": "a"}]}])),  # fmt: skip
    ("score_eleven_levels", with_(DEC_MIN, questions=[{"type": "score", "instructions": "x",
                                                       "levels": [{"label": str(i)} for i in range(11)]}])),  # fmt: skip
    ("input_image", with_(DEC_MIN, input=[{"role": "user", "content": [
        {"type": "input_image", "image_url": "http://x/y.png"}]}])),  # fmt: skip
    ("input_role_assistant", with_(DEC_MIN, input=[{"role": "assistant", "content": "hi"}])),
    ("cache_salt_empty", with_(DEC_MIN, cache_salt="")),
    ("cache_salt_slash", with_(DEC_MIN, cache_salt="a/b")),
    ("safety_identifier_long", with_(DEC_MIN, safety_identifier="x" * 129)),
    ("wrong_model", with_(DEC_MIN, model="nope")),
    ("body_array", [DEC_MIN]),
    ("body_null", None),
    ("body_empty_object", {}),
]

SYSTEMONE: list[tuple[str, Any]] = [
    ("minimal", ONE_MIN),
    ("no_model", with_(ONE_MIN, model=DROP)),
    ("full_valid", {
        "model": M, "state": {"sky": "blue", "n": 3},
        "questions": {"q1": {"type": "predicate", "instructions": "Blue?"},
                      "q2": {"type": "choice", "instructions": "Which?", "criteria": ["a", "b"]}},
        "instructions": "Answer carefully.", "images": [], "audio": [], "videos": [],
        "chat_template_kwargs": {"enable_thinking": False}, "joint": False, "cache_salt": "salt",
        "priority": 1, "request_id": "req-1",
    }),  # fmt: skip
    ("missing_state", with_(ONE_MIN, state=DROP)),
    ("state_null", with_(ONE_MIN, state=None)),
    ("missing_questions", with_(ONE_MIN, questions=DROP)),
    ("questions_list", with_(ONE_MIN, questions=[{"type": "predicate"}])),
    ("questions_empty", with_(ONE_MIN, questions={})),
    ("question_missing_type", with_(ONE_MIN, questions={"q1": {"instructions": "x"}})),
    ("question_type_int", with_(ONE_MIN, questions={"q1": {"type": 1}})),
    ("question_extra_field", with_(ONE_MIN, questions={"q1": {"type": "predicate", "weight": 2}})),
    ("extra_top_level", with_(ONE_MIN, temperature=0.5)),
    ("model_int", with_(ONE_MIN, model=5)),
    ("joint_string", with_(ONE_MIN, joint="yes")),
    ("priority_string", with_(ONE_MIN, priority="high")),
    ("priority_too_big", with_(ONE_MIN, priority=2**63)),
    ("images_string", with_(ONE_MIN, images="http://x/y.png")),
    ("chat_template_kwargs_list", with_(ONE_MIN, chat_template_kwargs=[1])),
    ("instructions_int", with_(ONE_MIN, instructions=7)),
    ("request_id_int", with_(ONE_MIN, request_id=7)),
    ("cache_salt_empty", with_(ONE_MIN, cache_salt="")),
    ("cache_salt_long", with_(ONE_MIN, cache_salt="x" * 129)),
    ("wrong_model", with_(ONE_MIN, model="nope")),
    ("body_array", [ONE_MIN]),
    ("body_null", None),
    ("body_empty_object", {}),
]

# (name, method, raw bytes or None, headers)
RAW: list[tuple[str, str, bytes | None, dict[str, str]]] = [
    ("malformed_json", "POST", b'{"model": "qwen3", "input": ', {"content-type": "application/json"}),
    ("empty_body", "POST", b"", {"content-type": "application/json"}),
    ("text_plain", "POST", None, {"content-type": "text/plain"}),
    ("no_content_type", "POST", None, {}),
    ("json_charset", "POST", None, {"content-type": "application/json; charset=utf-8"}),
    ("form_urlencoded", "POST", b"model=qwen3", {"content-type": "application/x-www-form-urlencoded"}),
    ("get", "GET", None, {}),
    ("put", "PUT", None, {"content-type": "application/json"}),
    ("x_request_id", "POST", None, {"content-type": "application/json", "X-Request-Id": "rid-7"}),
]


def main() -> None:
    work = rs.workdir("decisions-")
    config = rs.CONFIGS[CONFIG]
    model = rs.unpack_model(config["model"], work)
    rows: list[dict] = []
    server = rs.Server(work, config["model"], config["served_model_name"], config["flags"],
                       rs.config_env(config, model), PORT, work / "server.log")  # fmt: skip
    with server:
        if not server.start():
            raise SystemExit(server.log_text()[-3000:])
        for route, cases, minimal in (("/v1/decisions", DECISIONS, DEC_MIN),
                                      ("/v1/systemone", SYSTEMONE, ONE_MIN)):  # fmt: skip
            for name, body in cases:
                got = rs.call(PORT, "POST", route, raw=json.dumps(body).encode(),
                              headers={"content-type": "application/json"})  # fmt: skip
                rows.append({"route": route, "name": name, "method": "POST", "request": body,
                             "headers_sent": {"content-type": "application/json"}, **got})  # fmt: skip
            for name, method, raw, headers in RAW:
                data = raw if raw is not None else (None if method == "GET" else json.dumps(minimal).encode())
                got = rs.call(PORT, method, route, raw=data, headers=headers)
                row = {"route": route, "name": name, "method": method,
                       "request": minimal if raw is None and method != "GET" else None,
                       "headers_sent": headers, **got}  # fmt: skip
                if raw is not None:
                    row["raw"] = raw.decode()
                rows.append(row)
    OUT.parent.mkdir(exist_ok=True)
    with gzip.open(OUT, "wt", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} calls -> {OUT}")


if __name__ == "__main__":
    main()
