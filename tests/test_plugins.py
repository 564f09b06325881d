"""Parser plugins (`--tool-parser-plugin`, `--reasoning-parser-plugin`): the sample hermes
plugin against qwen3_hermes's goldens, and plugin failures answered as error envelopes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from calls import STATE_FORMAT
from conftest import Server
from goldens import CONFIGS, load_cases, score, server_args, without_states

from derender import DEFAULT_MODEL_DIR, Derenderer
from derender.plugins import ReasoningParserManager, ToolParserManager, load_plugin

PLUGINS = Path(__file__).parent.parent / "examples" / "plugins"
HERMES = PLUGINS / "hermes_plugin.py"
QWEN3 = PLUGINS / "qwen3_reasoning_plugin.py"
CHAT = "/v1/chat/completions/derender"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def plugin_flags(config: str, name: str) -> list[str]:
    """The config's flags with its tool parser swapped for the plugin `name`."""
    flags = list(CONFIGS[config]["flags"])
    flags[flags.index("--tool-call-parser") + 1] = name
    return flags


def hermes_plugin_args() -> list[str]:
    base = server_args("qwen3_hermes")
    model_and_name = base[: base.index("--served-model-name") + 2]
    args = [*model_and_name, *plugin_flags("qwen3_hermes", "hermes_py")]
    return [*args, "--tool-parser-plugin", str(HERMES)]


@pytest.fixture(scope="module")
def hermes_plugin_server():
    """In vLLM's state format, so answers compare strictly, states included."""
    server = Server([*hermes_plugin_args(), "--stream-state-mode", "replay"])
    yield server
    server.stop()


def test_hermes_plugin_passes_qwen3_hermes_goldens(hermes_plugin_server):
    ran, failures = score("qwen3_hermes", hermes_plugin_server.url, {"batch", "stream"}, "strict")
    assert ran > 100
    assert failures == []


def test_plugin_streams_carry_history_in_compact_mode(hermes_plugin_server):
    """A plugin parser cannot be serialized: in the default mode its streams
    carry their history inside our state and give the same chunks."""
    import replay

    server = Server(hermes_plugin_args())
    try:
        compact, history = replay.Client(server.url), replay.Client(hermes_plugin_server.url)
        cases = [c for c in load_cases("qwen3_hermes") if c["kind"] == "stream"][:25]
        for case in cases:
            got = replay.execute_case(compact, case)
            assert without_states(got) == without_states(replay.execute_case(history, case))
            states = [r["stream_state"] for s, r in got if s == 200 and r.get("stream_state")]
            assert all(s["format"] == STATE_FORMAT for s in states), case["id"]
    finally:
        server.stop()


# --- in process: the plugin path and its failures ----------------------------------------


@pytest.fixture(scope="module")
def tokenizer_core() -> Derenderer:
    return Derenderer(str(DEFAULT_MODEL_DIR), served_model_names=["qwen3"])


def make_core(tool_class: type | None = None, reasoning_class: type | None = None) -> Derenderer:
    kwargs: dict[str, object] = {"served_model_names": ["qwen3"]}
    if tool_class is not None:
        kwargs.update(
            tool_call_parser="p",
            enable_auto_tool_choice=True,
            tool_parser_plugins={"p": tool_class},
        )
    if reasoning_class is not None:
        kwargs.update(reasoning_parser="r", reasoning_parser_plugins={"r": reasoning_class})
    return Derenderer(str(DEFAULT_MODEL_DIR), **kwargs)  # type: ignore[arg-type]


def batch(core: Derenderer, text: str, **chat_request) -> tuple[int, dict]:
    ids = core.encode(text)
    body = {
        "generate_response": {
            "request_id": "r",
            "choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}],
        },
        "chat_request": {"messages": [{"role": "user", "content": "hi"}], **chat_request},
    }
    status, out = core.handle(CHAT, json.dumps(body).encode())
    return status, json.loads(out)


def stream(core: Derenderer, text: str, **chat_request) -> list[tuple[int, dict]]:
    """One token per call with the carried state; stops at the first error."""
    ids, state, answers = core.encode(text), None, []
    for i, tok in enumerate(ids):
        last = i == len(ids) - 1
        choice = {"index": 0, "token_ids": [tok], "finish_reason": "stop" if last else None}
        body = {
            "stream": True,
            "generate_chunk": {"request_id": "s", "choices": [choice]},
            "stream_state": state,
            "prompt_token_ids": [1],
            "chat_request": {"messages": [{"role": "user", "content": "hi"}], **chat_request},
        }
        status, out = core.handle(CHAT, json.dumps(body).encode())
        answer = json.loads(out)
        answers.append((status, answer))
        if status != 200:
            break
        state = answer["stream_state"]
    return answers


CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'


def test_plugin_answers_like_the_builtin_parser():
    load_plugin(str(HERMES))
    plugin = make_core(ToolParserManager.get("hermes_py"))
    builtin = Derenderer(
        str(DEFAULT_MODEL_DIR),
        served_model_names=["qwen3"],
        tool_call_parser="hermes",
        enable_auto_tool_choice=True,
    )
    for text in ("Sure. " + CALL, "no call here", CALL + CALL):
        got, want = batch(plugin, text, tools=TOOLS), batch(builtin, text, tools=TOOLS)
        assert got[0] == want[0] == 200
        for message in (got[1]["choices"][0]["message"], want[1]["choices"][0]["message"]):
            for call in message.get("tool_calls") or []:
                call["id"] = "x"
        assert got[1]["choices"] == want[1]["choices"]


def test_reasoning_plugin_splits_batch_and_stream():
    load_plugin(str(QWEN3))
    core = make_core(reasoning_class=ReasoningParserManager.get("qwen3_py"))
    text = "<think>\nweigh it</think>\n\nThe answer."
    status, answer = batch(core, text)
    assert status == 200
    message = answer["choices"][0]["message"]
    assert (message["reasoning"], message["content"]) == ("\nweigh it", "\n\nThe answer.")
    deltas = [a["chunk"]["choices"][0]["delta"] for s, a in stream(core, text) if s == 200]
    assert "".join(d.get("reasoning") or "" for d in deltas) == "\nweigh it"
    assert "".join(d.get("content") or "" for d in deltas) == "\n\nThe answer."


class Raising:
    """Raises `error` from `method`; otherwise answers plain content."""

    error: Exception = RuntimeError("boom")
    method = "extract_tool_calls"

    def __init__(self, tokenizer) -> None:
        if self.method == "__init__":
            raise self.error

    def _maybe_raise(self, name: str) -> None:
        if name == self.method:
            raise self.error

    def extract_tool_calls(self, model_output, request):
        self._maybe_raise("extract_tool_calls")
        return False, [], model_output

    def extract_tool_calls_streaming(self, *args):
        self._maybe_raise("extract_tool_calls_streaming")
        return {"content": args[2]}


def raising(method: str, error: Exception) -> type:
    return type("R", (Raising,), {"method": method, "error": error})


@pytest.mark.parametrize(
    ("error", "status", "kind"),
    [
        (RuntimeError("boom at /home/x/plugin.py"), 500, "InternalServerError"),
        (ValueError("bad arguments"), 400, "BadRequestError"),
        (NotImplementedError("later"), 501, "NotImplementedError"),
    ],
)
@pytest.mark.parametrize("method", ["__init__", "extract_tool_calls"])
def test_plugin_errors_in_batch_are_envelopes(method, error, status, kind):
    core = make_core(raising(method, error))
    got_status, answer = batch(core, "hello", tools=TOOLS)
    assert got_status == status
    assert answer["error"]["type"] == kind
    assert answer["error"]["code"] == status
    assert "/home" not in answer["error"]["message"]


@pytest.mark.parametrize("method", ["__init__", "extract_tool_calls_streaming"])
def test_plugin_errors_in_streams_are_envelopes(method):
    core = make_core(raising(method, RuntimeError("stream boom")))
    answers = stream(core, "hello there", tools=TOOLS)
    status, answer = answers[-1]
    assert status == 500
    assert answer["error"]["type"] == "InternalServerError"
    assert "stream boom" in answer["error"]["message"]


def test_plugin_with_bad_return_values_is_a_400():
    class BadReturn(Raising):
        method = ""

        def extract_tool_calls(self, model_output, request):
            return "not a tuple"

        def extract_tool_calls_streaming(self, *args):
            return {"tool_calls": [{"function": {"name": "f"}}]}  # no index

    core = make_core(BadReturn)
    assert batch(core, "hello", tools=TOOLS)[0] == 400
    assert stream(core, "hello", tools=TOOLS)[-1][0] == 400


def test_registration_checks_the_interface():
    with pytest.raises(TypeError, match="lacks extract_tool_calls_streaming"):
        ToolParserManager.register_module(
            "half",
            module=type("Half", (), {"extract_tool_calls": lambda self, t, r: (False, [], t)}),
        )
    with pytest.raises(ValueError, match="no such file"):
        load_plugin("/nonexistent/plugin.py")


def test_serve_refuses_a_broken_plugin_file(tmp_path, server_factory):
    broken = tmp_path / "broken_plugin.py"
    broken.write_text("raise RuntimeError('cannot import me')\n")
    args = [str(DEFAULT_MODEL_DIR), "--tool-call-parser", "x", "--enable-auto-tool-choice"]
    with pytest.raises(RuntimeError, match="cannot import me"):
        server_factory([*args, "--tool-parser-plugin", str(broken)])
