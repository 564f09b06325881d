"""Compact stream states (issue: O(delta) streaming): the same chunks as
vLLM's history replay, the prompt only on the first call, vLLM's states
accepted, signing, versioning, and any replica continuing any stream."""

from __future__ import annotations

import base64
import json
import random
from contextlib import ExitStack

import pytest
from calls import CHAT, PROMPT, STATE_FORMAT, assemble, config_core, post
from workers import Connection, connections_to_two_workers

from derender import DEFAULT_MODEL_DIR, Derenderer

THINK, END_THINK = 151667, 151668
# "<think>…</think>" reasoning, an answer, then a hermes tool call.
WEATHER = {"name": "get_weather", "parameters": {"type": "object"}}
TOOLS = [{"type": "function", "function": WEATHER}]
REQUEST = {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}
SECRET = "s3cret"


def output_ids(core: Derenderer) -> list[int]:
    text = (
        "Let me think about the weather in Paris. 巴黎 🌧 is rainy.</think>\n\n"
        "Checking.<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    )
    status, out = post(core, "/tokenize", {"prompt": text, "add_special_tokens": False})
    assert status == 200, out
    return [THINK, *out["tokens"], 151645]


def make_core(**kwargs) -> Derenderer:
    return Derenderer(
        str(DEFAULT_MODEL_DIR),
        served_model_names=["qwen3"],
        reasoning_parser="qwen3",
        tool_call_parser="hermes",
        enable_auto_tool_choice=True,
        **kwargs,
    )


@pytest.fixture(scope="module")
def compact() -> Derenderer:
    return make_core()


@pytest.fixture(scope="module")
def replay() -> Derenderer:
    return make_core(stream_state_mode="replay")


def body(ids, state, *, finish=None, prompt=True) -> dict:
    out = {
        "stream": True,
        "generate_chunk": {
            "request_id": "s",
            "choices": [{"index": 0, "token_ids": ids, "finish_reason": finish}],
        },
        "stream_state": state,
        "chat_request": REQUEST,
    }
    if prompt:
        out["prompt_token_ids"] = PROMPT
    return out


def run(cores, ids, *, sizes=(1,), prompt_every_call=True, state=None, ends=True) -> tuple:
    """Stream `ids` in chunks of `sizes` (cycled), the calls going to `cores`
    in turn (the last one finishing, if `ends`); returns the chunks (without
    states) and the last state."""
    chunks, start, k = [], 0, 0
    while start < len(ids):
        part = ids[start : start + sizes[k % len(sizes)]]
        start += len(part)
        finish = "stop" if ends and start >= len(ids) else None
        request = body(part, state, finish=finish, prompt=prompt_every_call or state is None)
        status, out = post(cores[k % len(cores)], CHAT, request)
        assert status == 200, out
        state = out["stream_state"]
        chunks.append(normalized(out["chunk"]))
        k += 1
    return chunks, state


def normalized(chunk: dict) -> dict:
    chunk = dict(chunk, created=0)
    for choice in chunk["choices"]:
        for tc in choice["delta"].get("tool_calls") or []:
            if tc.get("id"):
                tc["id"] = "<id>"
    return chunk


def payload(state: dict) -> dict:
    data = state["data"]
    return json.loads(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))


def test_compact_and_replay_give_the_same_chunks(compact, replay):
    ids = output_ids(compact)
    for sizes in [(1,), (2, 3), (5,), (len(ids),)]:
        got, state = run([compact], ids, sizes=sizes)
        want, vllm_state = run([replay], ids, sizes=sizes)
        assert got == want, sizes
        assert state["format"] == STATE_FORMAT and "mac" not in state
        assert vllm_state["output_token_ids"] == ids
    answer = assemble([{"chunk": c} for c in got])
    assert answer["reasoning"].startswith("Let me think")
    assert answer["content"].strip() == "Checking."
    assert answer["calls"][0]["name"] == "get_weather"


def test_the_prompt_is_needed_only_on_the_first_call(compact):
    ids = output_ids(compact)
    with_prompt, _ = run([compact], ids)
    without, _ = run([compact], ids, prompt_every_call=False)
    assert without == with_prompt
    # A first call still needs it (vLLM's 400).
    status, out = post(compact, CHAT, body(ids[:1], None, prompt=False))
    assert status == 400 and "prompt_token_ids is required" in out["error"]["message"]


def test_compact_state_does_not_grow_with_the_output(compact):
    """Neither qwen3's reasoning parser nor hermes carries history: the state
    after 300 reasoning tokens is as small as after 10."""
    status, out = post(compact, "/tokenize", {"prompt": "word " * 300, "add_special_tokens": False})
    ids = [THINK, *out["tokens"]]
    state, sizes = None, []
    for k, tok in enumerate(ids):
        status, out = post(compact, CHAT, body([tok], state, prompt=k == 0))
        assert status == 200, out
        state = out["stream_state"]
        sizes.append(len(json.dumps(state)))
    assert sizes[-1] <= sizes[10] + 16, (sizes[10], sizes[-1])
    assert payload(state)["kind"] == "parser"


def test_a_vllm_history_state_is_replayed_once_then_compact(compact, replay):
    ids = output_ids(compact)
    want, _ = run([replay], ids)
    # vLLM's state after the first half, then our server takes over.
    half = len(ids) // 2
    first, vllm_state = run([replay], ids[:half], ends=False)
    assert "output_token_ids" in vllm_state
    rest, state = run([compact], ids[half:], state=vllm_state)
    assert state["format"] == STATE_FORMAT
    assert first + rest == want


def test_signed_states_continue_on_any_replica_with_the_secret():
    a, b = make_core(stream_state_secret=SECRET), make_core(stream_state_secret=SECRET)
    ids = output_ids(a)
    alone, state = run([a], ids)
    alternating, _ = run([a, b], ids)
    assert alternating == alone
    assert state["mac"]


def signed_state(core: Derenderer, n: int = 3) -> dict:
    ids = output_ids(core)
    state = None
    for tok in ids[:n]:
        status, out = post(core, CHAT, body([tok], state))
        state = out["stream_state"]
    return state


@pytest.mark.parametrize(
    "alter, message",
    [
        (lambda s: dict(s, mac=None), "carries no valid signature"),
        (lambda s: {k: v for k, v in s.items() if k != "mac"}, "carries no valid signature"),
        (lambda s: dict(s, data=s["data"][:-2] + "AA"), "signature does not match"),
        (lambda s: dict(s, mac="A" * 43), "signature does not match"),
        (lambda s: dict(s, format="derender/0"), "another derender version"),
        (lambda s: {"prev_tokens": [], "role_sent": True}, "carries no valid signature"),
    ],
)
def test_signed_servers_refuse_altered_foreign_and_unsigned_states(alter, message):
    core = make_core(stream_state_secret=SECRET)
    state = alter(signed_state(core))
    status, out = post(core, CHAT, body([1], state))
    assert status == 400, out
    assert message in out["error"]["message"]
    assert out["error"]["type"] == "BadRequestError"


def test_another_secret_cannot_continue_a_stream():
    state = signed_state(make_core(stream_state_secret=SECRET))
    status, out = post(make_core(stream_state_secret="other"), CHAT, body([1], state))
    assert status == 400 and "signature does not match" in out["error"]["message"]


def test_rotating_the_secret_keeps_streams_alive():
    """docs/deployment.md's rotation: accept the new secret everywhere, sign
    with it, drop the old one. Each step runs beside the one before it (a
    rolling update), and a stream moves between them at every call."""
    phases = [
        make_core(stream_state_secret="old"),
        make_core(stream_state_secret="old", stream_state_accepted_secrets=["new"]),
        make_core(stream_state_secret="new", stream_state_accepted_secrets=["old"]),
        make_core(stream_state_secret="new"),
    ]
    ids = output_ids(phases[0])
    want, _ = run([phases[0]], ids)
    for before, after in zip(phases, phases[1:], strict=False):
        assert run([before, after], ids)[0] == want
    # Skipping the first step breaks streams that move back to an old replica.
    state = signed_state(phases[2])
    status, out = post(phases[0], CHAT, body([1], state))
    assert status == 400 and "signature does not match" in out["error"]["message"]


def test_a_state_from_another_version_is_refused_clearly(compact):
    state = dict(signed_state(compact), format="derender/9")
    status, out = post(compact, CHAT, body([1], state))
    assert status == 400
    assert 'format "derender/9"' in out["error"]["message"]


def mutations(value, rng: random.Random):
    """`value` with one leaf changed (type-preserving or not)."""
    if isinstance(value, list) and value and rng.random() < 0.8:
        i = rng.randrange(len(value))
        return value[:i] + [mutations(value[i], rng)] + value[i + 1 :]
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        return dict(value, **{key: mutations(value[key], rng)})
    leaves = [None, -1, 0, 1, 2**40, -(2**40), 3.5, "", "xxx", "</tool_call>", [], {}, True]
    return rng.choice(leaves)


def history_payload(core: Derenderer, n: int) -> dict:
    """Our envelope's history form (what plugin streams carry)."""
    ids = output_ids(core)[:n]
    state = {"output_token_ids": ids, "output_chunk_lens": [1] * n, "role_sent": True}
    seed = {"prev_tokens": ["Ċ"], "prefix_offset": 0, "read_offset": 1}
    return {"kind": "history", "state": state, "seed": seed, "prompt_len": 9}


@pytest.mark.parametrize("kind", ["parser", "history"])
def test_hand_crafted_states_get_a_400_or_text_never_a_5xx(compact, kind):
    """Without a secret a client may send anything: a 400 or its own odd
    text, never a crash."""
    rng = random.Random(7)
    if kind == "parser":
        base = payload(signed_state(compact, n=40))
    else:
        base = history_payload(compact, 40)
    statuses = set()
    for _ in range(400):
        data = json.dumps(mutations(base, rng)).encode()
        encoded = base64.urlsafe_b64encode(data).decode().rstrip("=")
        state = {"format": STATE_FORMAT, "data": encoded}
        status, out = post(compact, CHAT, body([1, 2, 3], state))
        statuses.add(status)
        assert status in (200, 400), out
        if status == 400:
            assert out["error"]["type"] == "BadRequestError", out
    assert statuses == {200, 400}


@pytest.mark.parametrize("layout", ["one server", "two servers", "two workers"])
def test_server_processes_continue_each_others_streams(server_factory, layout):
    """One stream, its calls alternating between two `derender serve`
    processes sharing a secret (or two workers of one `--workers 2` server,
    which get it through the config they share), gives the chunks of one
    process."""
    args = [str(DEFAULT_MODEL_DIR), "--served-model-name", "qwen3", "--reasoning-parser", "qwen3"]
    args += ["--tool-call-parser", "hermes", "--enable-auto-tool-choice"]
    env = {"DERENDER_STREAM_STATE_SECRET": SECRET}
    core = make_core(stream_state_secret=SECRET)
    ids = output_ids(core)
    want, _ = run([core], ids)
    with ExitStack() as stack:
        if layout == "two workers":
            server = server_factory([*args, "--workers", "2"], env)
            conns = stack.enter_context(connections_to_two_workers(server))
        else:
            servers = [
                server_factory(args, env) for _ in range(2 if layout == "two servers" else 1)
            ]
            conns = [Connection(s.port) for s in servers]
            for c in conns:
                stack.callback(c.close)
        state, got = None, []
        for k, tok in enumerate(ids):
            finish = "stop" if k == len(ids) - 1 else None
            status, out = conns[k % len(conns)].post(CHAT, body([tok], state, finish=finish))
            assert status == 200, out
            if k == len(ids) - 2:
                # The servers sign with the shared secret: the in-process core continues too.
                assert post(core, CHAT, body(ids[-1:], out["stream_state"]))[0] == 200
            state = out["stream_state"]
            got.append(normalized(out["chunk"]))
    assert [c["choices"] for c in got] == [c["choices"] for c in want]
    assert state["mac"]


def test_replay_mode_with_a_secret_signs_vllms_history(compact):
    """A signed server cannot hand out vLLM's bare format: its history goes
    in our signed envelope, and continues with the same chunks."""
    signed_replay = make_core(stream_state_mode="replay", stream_state_secret=SECRET)
    ids = output_ids(compact)
    want, _ = run([compact], ids)
    got, state = run([signed_replay], ids)
    assert got == want
    assert state["mac"] and payload(state)["kind"] == "history"
    assert payload(state)["state"]["output_token_ids"] == ids


def test_a_stream_that_reads_the_prompt_remembers_it_or_replays_it():
    """poolside_v1's stream reads the prompt as vLLM's does: one that closed
    thinking makes the whole output content, where batch splits reasoning out.
    A compact state remembers the first call's answer; a history replay reads
    the prompt again on every call, so there each call needs it (vLLM's 400)."""
    compact, replay = (
        config_core("poolside_v1"),
        config_core("poolside_v1", "--stream-state-mode", "replay"),
    )
    status, out = post(
        compact, "/tokenize", {"prompt": "Plan.</think>Answer.", "add_special_tokens": False}
    )
    assert status == 200, out
    ids = out["tokens"]
    closed = post(
        compact, "/tokenize", {"prompt": "<assistant></think>", "add_special_tokens": False}
    )[1]["tokens"]
    request = {
        "messages": [{"role": "user", "content": "hi"}],
        "chat_template_kwargs": {"enable_thinking": True},
    }

    def call(core, k, state, prompt):
        finish = "stop" if k == len(ids) - 1 else None
        generate = {
            "request_id": "s",
            "choices": [{"index": 0, "token_ids": [ids[k]], "finish_reason": finish}],
        }
        body = {
            "stream": True,
            "generate_chunk": generate,
            "stream_state": state,
            "chat_request": request,
        }
        if prompt:
            body["prompt_token_ids"] = [*PROMPT, *closed]
        return post(core, CHAT, body)

    for core in (compact, replay):
        state, content, reasoning = None, "", ""
        for k in range(len(ids)):
            status, out = call(core, k, state, prompt=True)
            assert status == 200, out
            state = out["stream_state"]
            delta = out["chunk"]["choices"][0]["delta"]
            content += delta.get("content") or ""
            reasoning += delta.get("reasoning") or ""
        assert (content, reasoning) == ("Plan.</think>Answer.", ""), core
    status, first = call(compact, 0, None, prompt=True)
    status, later = call(compact, 1, first["stream_state"], prompt=False)
    assert status == 200 and later["chunk"]["choices"][0]["delta"]["content"], later
    status, first = call(replay, 0, None, prompt=True)
    status, later = call(replay, 1, first["stream_state"], prompt=False)
    assert status == 400 and "prompt_token_ids is required" in later["error"]["message"], later
    batch = post(
        compact,
        "/v1/chat/completions/derender",
        {
            "generate_response": {
                "request_id": "b",
                "choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop"}],
            },
            "chat_request": request,
            "prompt_token_ids": [*PROMPT, *closed],
        },
    )[1]
    assert batch["choices"][0]["message"]["reasoning"] == "Plan.", batch
