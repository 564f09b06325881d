"""In-process calls to a core, as the derender routes take them: batch and
stream bodies, a stream put back together, a core with given parsers.
A plain module: tests import these helpers from here, never from another
test module."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from conftest import MODEL_DIRS, REFERENCE

from derender import Derenderer
from derender.cli import build_parser, config_from_args, settle_tokenizer_mode

CHAT = "/v1/chat/completions/derender"
CMPL = "/v1/completions/derender"
PROMPT = [151644, 872, 198, 6023, 151645, 198, 151644, 77091, 198]
IM_END = 151645
# The compact stream state's format: the one the core's recorded layout is for.
_LAYOUT = Path(__file__).resolve().parent.parent / "rust/core/tests/data/state_layout.json"
STATE_FORMAT: str = json.loads(_LAYOUT.read_text(encoding="utf-8"))["format"]


@cache
def config_core(config: str, *extra: str) -> Derenderer:
    """The core `derender serve` builds for a config of tests/reference/configs.json,
    with `extra` flags after the config's."""
    c = json.loads((REFERENCE / "configs.json").read_text())[config]
    model = str(MODEL_DIRS[c["model"]])
    argv = ["serve", model, "--served-model-name", c["served_model_name"], *c["flags"], *extra]
    args = build_parser().parse_args(argv)
    server = config_from_args(args)
    settle_tokenizer_mode(args, server)
    return Derenderer(server.model, **server.core_kwargs())


def post(core: Derenderer, path: str, body: dict) -> tuple[int, dict]:
    status, out = core.handle(path, json.dumps(body).encode())
    return status, json.loads(out)


def stream(core, path, chunks, request_key, request, prompt_tokens=None, prompt_ids=PROMPT):
    """Send `chunks` (token ids, finish_reason, stop_reason) as one stream."""
    state, answers = None, []
    for ids, finish, stop in chunks:
        choice = {"index": 0, "token_ids": ids, "finish_reason": finish, "stop_reason": stop}
        body = {
            "stream": True,
            "generate_chunk": {"request_id": "s", "choices": [choice]},
            "stream_state": state,
            "prompt_token_ids": prompt_ids,
            request_key: request,
        }
        if prompt_tokens is not None:
            body["prompt_tokens"] = prompt_tokens
        status, out = post(core, path, body)
        assert status == 200, out
        state = out["stream_state"]
        answers.append(out)
    return answers


def batch(core: Derenderer, ids: list[int], request: dict, prompt_ids=None) -> dict:
    """The batch answer's choice for `ids` under the chat `request`."""
    body = {
        "generate_response": {
            "request_id": "b",
            "choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}],
        },
        "chat_request": request,
    }
    if prompt_ids is not None:
        body["prompt_token_ids"] = prompt_ids
    status, out = post(core, CHAT, body)
    assert status == 200, out
    return out["choices"][0]


def one_token_chunks(ids: list[int]) -> list[tuple]:
    """`ids` one per call, the last one finishing the stream."""
    return [([tok], None, None) for tok in ids[:-1]] + [([ids[-1]], "stop", None)]


def assemble(answers: list[dict]) -> dict:
    """A chat stream put together: reasoning, content, finish reason, and
    tool calls by index (`id`, `name`, `arguments`)."""
    out: dict = {"reasoning": "", "content": "", "calls": {}, "finish": None}
    for answer in answers:
        for choice in answer["chunk"]["choices"]:
            delta = choice["delta"]
            out["reasoning"] += delta.get("reasoning") or ""
            out["content"] += delta.get("content") or ""
            for tc in delta.get("tool_calls") or []:
                empty = {"id": None, "name": "", "arguments": ""}
                call = out["calls"].setdefault(tc["index"], empty)
                call["id"] = tc.get("id") or call["id"]
                function = tc.get("function") or {}
                call["name"] += function.get("name") or ""
                call["arguments"] += function.get("arguments") or ""
            out["finish"] = choice.get("finish_reason") or out["finish"]
    return out


def names_args(calls: dict) -> dict[int, tuple[str, str]]:
    return {i: (c["name"], c["arguments"]) for i, c in calls.items()}


def parser_core(model: str, name: str, **parsers: str) -> Derenderer:
    """A core for `model` (a conftest MODEL_DIRS key) with the given parsers."""
    from conftest import MODEL_DIRS

    return Derenderer(
        str(MODEL_DIRS[model]),
        served_model_names=[name],
        enable_auto_tool_choice="tool_call_parser" in parsers,
        **parsers,
    )


def rendered(status: int, out: dict) -> object:
    """What a render or /tokenize answer fixes: ids, the parsers' sampling
    adjustments, or the error message."""
    if status != 200:
        return out.get("error", {}).get("message")
    if "tokens" in out:
        return out["tokens"]
    params = out["sampling_params"]
    return out["token_ids"], params.get("structured_outputs"), params.get("skip_special_tokens")


def refusal(core: Derenderer, case: dict) -> tuple[tuple[int, str], tuple[int, str]]:
    """A recorded error case's first call answered by `core`: (what it
    answered, what vLLM answered), each as (status, error message)."""
    call = case["calls"][0]
    status, out = core.handle(case["endpoint"], json.dumps(call["request"]).encode())
    message = json.loads(out).get("error", {}).get("message")
    return (status, message), (call["status"], call["response"]["error"]["message"])
