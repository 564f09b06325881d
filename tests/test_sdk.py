"""Client compatibility: every answer derender gives for the goldens parses
as the official OpenAI SDK's types: chat batch answers as `ChatCompletion`,
chat stream chunks as `ChatCompletionChunk`, completion batch answers and
stream chunks as `Completion` (as the SDK parses a completions stream).

The answers are produced in-process (`Derenderer.handle`) with each config's
server flags, for every config under golden test."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
from pathlib import Path
from typing import Any

import pydantic
import pytest
from conftest import MODEL_DIRS, REFERENCE
from families import GOLDEN_CONFIGS
from goldens import CONFIGS, load_cases

from derender import Derenderer

openai_types = pytest.importorskip("openai.types")
chat_types = pytest.importorskip("openai.types.chat")

sys.path.insert(0, str(REFERENCE))
import replay  # noqa: E402

ChatCompletion = chat_types.ChatCompletion
ChatCompletionChunk = chat_types.ChatCompletionChunk
Completion = openai_types.Completion

EXAMPLE = Path(__file__).parent.parent / "examples" / "openai_sdk.py"
CHAT = "/v1/chat/completions/derender"
CMPL = "/v1/completions/derender"
# Server flags that become Derenderer keyword arguments (--tokenizer-mode
# only picks the tokenizer implementation vLLM loads: nothing to pass).
FLAGS = {
    "--reasoning-parser": ("reasoning_parser", str),
    "--tool-call-parser": ("tool_call_parser", str),
    "--max-model-len": ("max_model_len", int),
    "--max-logprobs": ("max_logprobs", int),
}


def core_for(config: str) -> Derenderer:
    c = CONFIGS[config]
    kwargs: dict[str, Any] = {"served_model_names": [c["served_model_name"]]}
    flags = c["flags"]
    for i, flag in enumerate(flags):
        if flag in FLAGS:
            name, kind = FLAGS[flag]
            kwargs[name] = kind(flags[i + 1])
        elif flag == "--enable-auto-tool-choice":
            kwargs["enable_auto_tool_choice"] = True
    # A tekken fixture is served in the mistral mode (`serve` picks it).
    model = MODEL_DIRS[c["model"]]
    if any((model / name).is_file() for name in ("tekken.json", "tekken.json.gz")):
        kwargs["tokenizer_mode"] = "mistral"
    return Derenderer(str(model), **kwargs)


class InProcess:
    """replay.py's client interface over `core.handle`."""

    def __init__(self, core: Derenderer) -> None:
        self.core = core

    def post(self, path: str, body: Any, raw: bool = False, headers: Any = None):
        if raw:
            data = body.encode() if isinstance(body, str) else body
        else:
            data = json.dumps(body, ensure_ascii=False).encode()
        request_id = (headers or {}).get("X-Request-Id")
        status, out = self.core.handle(path, data, "application/json", request_id)
        return status, json.loads(out), len(data), len(out)


def loc_of(error: dict) -> str:
    return ".".join("N" if isinstance(x, int) else str(x) for x in error["loc"])


# What the SDK's types reject in answers that are right (vLLM's goldens and
# OpenAI's own API send them): (type, field, value). Documented in
# docs/testing.md "Client compatibility".
SDK_REJECTS = {
    # A completions stream chunk before the last has `finish_reason: null`;
    # the SDK reuses the batch `Completion` type for stream chunks, which
    # declares it non-nullable. (The SDK builds stream chunks without
    # validating them, so its clients never see this.)
    ("Completion", "choices.N.finish_reason", None),
}


def validate(model: Any, answer: dict, streamed: bool) -> tuple[list[str], int]:
    """Problems the SDK type finds in `answer` in strict mode, and how many
    documented SDK rejects were skipped."""
    try:
        model.model_validate(answer, strict=True)
        return [], 0
    except pydantic.ValidationError as e:
        errors = e.errors()
    found, known = [], 0
    for err in errors:
        where = loc_of(err)
        if streamed and (model.__name__, where, err.get("input")) in SDK_REJECTS:
            known += 1
        else:
            found.append(f"{model.__name__}.{where}: {err['msg']} ({err.get('input')!r})")
    return found, known


def sdk_problems(config: str) -> tuple[dict[str, int], list[str]]:
    """Validate every 200 answer of the config's batch and stream goldens."""
    client = InProcess(core_for(config))
    counts = {"ChatCompletion": 0, "ChatCompletionChunk": 0, "Completion": 0, "known": 0}
    problems: list[str] = []
    for case in load_cases(config):
        if case["kind"] not in ("batch", "stream"):
            continue
        for call, (status, answer) in zip(
            case["calls"], replay.execute_case(client, case), strict=True
        ):
            if status != 200:
                continue
            path = call.get("endpoint", case["endpoint"])
            streamed = "chunk" in answer
            if path == CHAT:
                model = ChatCompletionChunk if streamed else ChatCompletion
            elif path == CMPL:
                model = Completion
            else:
                continue
            found, known = validate(model, answer["chunk"] if streamed else answer, streamed)
            counts[model.__name__] += 1
            counts["known"] += known
            problems += [f"{case['id']}: {p}" for p in found]
    return counts, problems


@pytest.mark.parametrize("config", GOLDEN_CONFIGS)
def test_answers_validate_as_sdk_types(config):
    counts, problems = sdk_problems(config)
    assert counts["ChatCompletion"] > 50 and counts["ChatCompletionChunk"] > 100, counts
    # cohere_command3's corpus holds chat cases only (its renderer is cohere_command4's).
    if any(case["endpoint"] == CMPL for case in load_cases(config)):
        assert counts["Completion"] > 10, counts
        # The one documented reject is real (mid-stream completion chunks).
        assert counts["known"] > 0, counts
    assert problems == [], "\n".join(problems[:10])


def test_openai_sdk_example_runs(server_factory, engine_url):  #
    """examples/openai_sdk.py against `derender serve` and `derender engine`."""
    spec = importlib.util.spec_from_file_location("openai_sdk_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    render = server_factory([]).url
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        example.main(render, engine_url)
    lines = out.getvalue().splitlines()
    assert lines[0] == 'tool call: get_weather({"city": "Paris"})'
    assert lines[1] == "finish_reason: tool_calls"
    assert lines[2].startswith("streamed: ") and len(lines[2]) > 30
    assert lines[3].startswith("usage: ") and lines[4].startswith("completion: ")
