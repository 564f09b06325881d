"""Property-based fuzzing of every route the app serves, through the ASGI app.

Bodies are random JSON, random bytes, and mutations of real requests taken from
the goldens (wrong types, huge and negative numbers, NaN/Infinity tokens, deep
nesting, giant lists, invalid UTF-8, truncation, tampered stream states in
vLLM's format and in our envelope). The property: never a 5xx, and every
answer that is not a 200 is the OpenAI error envelope.

CI runs a bounded, derandomized number of examples. For a long run by hand set
DERENDER_FUZZ_EXAMPLES (examples per test, drawn at random each run), e.g.

    DERENDER_FUZZ_EXAMPLES=20000 PYTHONPATH=python python3 -m pytest tests/test_fuzz.py -q

(docs/testing.md records the last long run).
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import resource
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from calls import STATE_FORMAT
from conftest import REFERENCE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from derender import DEFAULT_MODEL_DIR, Derenderer
from derender.app import create_app
from derender.config import ServerConfig

sys.path.insert(0, str(REFERENCE))
import replay  # noqa: E402

LONG_RUN = int(os.environ.get("DERENDER_FUZZ_EXAMPLES", "0"))
# Requests sent by this module (printed at the end of a long run).
SENT = [0]


def fuzz(ci_examples: int) -> Callable:
    """Hypothesis settings: `ci_examples`, derandomized, in CI; the long run's
    count, random, when DERENDER_FUZZ_EXAMPLES is set."""
    return settings(
        max_examples=LONG_RUN or ci_examples,
        derandomize=not LONG_RUN,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )


POST_ROUTES = [
    "/v1/chat/completions/derender",
    "/v1/completions/derender",
    "/v1/chat/completions/render",
    "/v1/completions/render",
    "/tokenize",
    "/detokenize",
]
GET_ROUTES = ["/health", "/ping", "/version", "/v1/models", "/metrics"]
SECRET = "fuzz-secret"
ENVELOPE_FORMAT = STATE_FORMAT


# ---------------------------------------------------------------------------
# Apps and seeds
# ---------------------------------------------------------------------------


def make_core(**kwargs: Any) -> Derenderer:
    return Derenderer(str(DEFAULT_MODEL_DIR), served_model_names=["qwen3"], **kwargs)


PARSERS = {
    "reasoning_parser": "qwen3",
    "tool_call_parser": "hermes",
    "enable_auto_tool_choice": True,
}
CORES = {
    "plain": {},
    "parser": PARSERS,
    "signed": {**PARSERS, "stream_state_secret": SECRET},
}
# The goldens whose requests seed the mutations, by the core that runs them.
# /tokenize and /detokenize have no goldens: hand-made seeds.
TOKENIZER_SEEDS = [
    ("/tokenize", {"model": "qwen3", "prompt": "Hello 世界", "add_special_tokens": True}),
    ("/tokenize", {"prompt": "<think>x</think>", "return_token_strs": True}),
    ("/tokenize", {"model": "qwen3", "messages": [{"role": "user", "content": "hi"}]}),
    (
        "/tokenize",
        {
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
            "add_generation_prompt": True,
        },
    ),
    ("/detokenize", {"model": "qwen3", "tokens": [9707, 151643, 10**9]}),
    ("/detokenize", {"tokens": [151667, 33, 151668]}),
]
SEED_CONFIGS = {"plain": "qwen3_plain", "parser": "qwen3_hermes", "signed": "qwen3_hermes"}


class InProcess:
    """replay.py's client interface over `core.handle`, recording each
    request as sent (stream states filled in)."""

    def __init__(self, core: Derenderer) -> None:
        self.core = core
        self.sent: list[tuple[str, Any, bool]] = []

    def post(self, path: str, body: Any, raw: bool = False, headers: Any = None):
        data = (
            (body.encode() if isinstance(body, str) else body) if raw else json.dumps(body).encode()
        )
        self.sent.append((path, body, raw))
        status, out = self.core.handle(path, data)
        try:
            parsed = json.loads(out)
        except ValueError:
            parsed = {"$text": out.decode("utf-8", "replace")}
        return status, parsed, len(data), len(out)


class Target:
    """One app under test with its seeds: real requests, and real stream
    states in our envelope format and in vLLM's history format."""

    def __init__(self, name: str) -> None:
        self.core = make_core(**CORES[name])
        config = ServerConfig(model=str(DEFAULT_MODEL_DIR), served_model_names=["qwen3"])
        self.client = TestClient(create_app(config, self.core))
        self.client.__enter__()
        runner = InProcess(self.core)
        with gzip.open(REFERENCE / "goldens" / f"{SEED_CONFIGS[name]}.jsonl.gz", "rt") as f:
            cases = [json.loads(line) for line in f]
        self.vllm_states: list[dict] = []
        self.envelopes: list[dict] = []
        for case in cases:
            results = replay.execute_case(runner, case)
            for _, resp in results:
                state = resp.get("stream_state") if isinstance(resp, dict) else None
                if isinstance(state, dict):
                    (self.envelopes if "format" in state else self.vllm_states).append(state)
            for call in case["calls"]:
                recorded = call.get("response")
                if isinstance(recorded, dict) and isinstance(recorded.get("stream_state"), dict):
                    self.vllm_states.append(recorded["stream_state"])
        self.requests = [(p, b) for p, b, raw in runner.sent if not raw and isinstance(b, dict)]
        self.requests += TOKENIZER_SEEDS
        self.raw_requests = [(p, b) for p, b, raw in runner.sent if raw]
        assert len(self.requests) > 200 and self.vllm_states

    def post(self, path: str, data: bytes, headers: dict[str, str] | None = None):
        SENT[0] += 1
        if LONG_RUN:
            return self._post_watched(path, data, headers)
        hdrs = {"content-type": "application/json", **(headers or {})}
        return self.client.post(path, content=data, headers=hdrs)

    def _post_watched(self, path: str, data: bytes, headers: dict[str, str] | None):
        """Long runs: note a request after which this process's peak memory
        jumped by more than 1 GB (a body that makes the core allocate)."""
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        hdrs = {"content-type": "application/json", **(headers or {})}
        resp = self.client.post(path, content=data, headers=hdrs)
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        if grown > 1 << 20:  # KiB
            where = os.path.join(tempfile.gettempdir(), f"derender-fuzz-memory-{SENT[0]}.bin")
            with open(where, "wb") as f:
                f.write(path.encode() + b"\n" + data)
            print(f"\n{path}: peak memory +{grown >> 10} MiB on a {len(data)}-byte body ({where})")
        return resp

    def close(self) -> None:
        self.client.__exit__(None, None, None)


@pytest.fixture(scope="module")
def targets() -> Iterator[dict[str, Target]]:
    made = {name: Target(name) for name in CORES}
    yield made
    for t in made.values():
        t.close()
    if LONG_RUN:
        print(f"\ntest_fuzz: {SENT[0]} requests sent")


def check(resp) -> None:
    """The property: no 5xx, and a non-200 answer is the error envelope."""
    assert resp.status_code < 500, (resp.status_code, resp.text[:2000])
    if resp.status_code == 200:
        return
    body = resp.json()
    assert isinstance(body, dict) and set(body) == {"error"}, body
    err = body["error"]
    assert isinstance(err, dict) and set(err) == {"message", "type", "param", "code"}, err
    assert isinstance(err["message"], str) and isinstance(err["type"], str), err
    assert err["param"] is None or isinstance(err["param"], str), err
    assert err["code"] == resp.status_code, err


# ---------------------------------------------------------------------------
# Values and encodings
# ---------------------------------------------------------------------------


class Raw:
    """JSON text spliced verbatim into an encoded body (NaN, 1e999, deep
    nesting, lone surrogates: what json.dumps will not write)."""

    def __init__(self, text: str) -> None:
        self.text = text


PLACEHOLDER = re.compile(r'"\\u0000RAW(\d+)\\u0000"')


def encode(value: Any) -> bytes:
    raws: list[str] = []

    def hide(v: Any) -> Any:
        if isinstance(v, Raw):
            raws.append(v.text)
            return f"\x00RAW{len(raws) - 1}\x00"
        if isinstance(v, dict):
            return {k: hide(x) for k, x in v.items()}
        if isinstance(v, list):
            return [hide(x) for x in v]
        return v

    text = json.dumps(hide(value), ensure_ascii=False)
    # One pass: a grown list can hold 300,000 of them in a 60 MB text.
    text = PLACEHOLDER.sub(lambda m: raws[int(m.group(1))], text)
    return text.encode("utf-8", "surrogatepass")


def deep(n: int, obj: bool) -> Raw:
    return Raw('{"a":' * n + "1" + "}" * n if obj else "[" * n + "]" * n)


EDGE_INTS = [
    0,
    -1,
    1,
    2**31 - 1,
    2**31,
    2**32,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64,
    2**64 + 1,
    -(2**31),
    -(2**63),
    -(2**63) - 1,
    -(2**64),
    10**30,
    -(10**30),
    151643,
    151669,
    10**9,
]
RAW_TOKENS = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "-1e999",
    "1e-400",
    "-0",
    "0.0",
    "1.5",
    "-1.5",
    "1E2",
    "123456789012345678901234567890123456789",
    '"\\ud800"',
    '"\\udfff\\ud800"',
    '"\\u0000"',
    '"a\\u0000b"',
    '""',
    "[]",
    "{}",
    "null",
]

json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(EDGE_INTS),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
random_json = st.recursive(
    json_leaves,
    lambda kids: st.one_of(
        st.lists(kids, max_size=6), st.dictionaries(st.text(max_size=12), kids, max_size=6)
    ),
    max_leaves=30,
)


@st.composite
def giant_list(draw) -> list:
    item = draw(st.one_of(st.integers(-1, 200000), st.sampled_from(EDGE_INTS), json_leaves))
    return [item] * draw(st.sampled_from([1000, 10000, 100000, 300000]))


nasty = st.one_of(
    json_leaves,
    st.sampled_from(RAW_TOKENS).map(Raw),
    st.builds(deep, st.sampled_from([64, 127, 128, 129, 500, 5000, 100000]), st.booleans()),
    giant_list(),
    st.text(max_size=8).map(lambda s: (s or "x") * 100000),
    random_json,
    st.lists(st.integers(-(2**70), 2**70), max_size=20),
    st.lists(st.sampled_from(EDGE_INTS), max_size=20),
)


def same_type(old: Any) -> st.SearchStrategy:
    """A value of `old`'s JSON type (reaches past type checks into logic)."""
    if isinstance(old, bool):
        return st.booleans()
    if isinstance(old, int):
        near = st.integers(-3, 3).map(lambda d: old + d)
        return st.one_of(near, st.integers(-5, 300), st.sampled_from(EDGE_INTS))
    if isinstance(old, float):
        return st.one_of(st.floats(), st.sampled_from([Raw("NaN"), Raw("-Infinity"), 0.0, -1.0]))
    if isinstance(old, str):
        cut = st.integers(0, len(old)).map(lambda i: old[:i])
        specials = st.sampled_from(
            ["<think>", "</think>", "<tool_call>", "</tool_call>", "{", '"', "\\"]
        )
        return st.one_of(cut, st.text(max_size=20), specials, specials.map(lambda x: old + x))
    if isinstance(old, list):
        shuffled = st.permutations(old) if len(old) < 50 else st.just(old[::-1])
        sliced = st.integers(0, len(old)).map(lambda i: old[:i])
        return st.one_of(shuffled, sliced, st.just(old + old), st.just([]))
    if isinstance(old, dict):
        return st.just({})
    return nasty


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:50]):
            out += paths(v, (*prefix, i))
    return out


def copy_json(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: copy_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [copy_json(x) for x in v]
    return v


@st.composite
def mutated(draw, seed: Any, rounds: int = 3) -> Any:
    """`seed` with 1..`rounds` mutations at random places in its tree."""
    value = copy_json(seed)
    for _ in range(draw(st.integers(1, rounds))):
        where = draw(st.sampled_from(paths(value)))
        op = draw(
            st.sampled_from(
                ["tweak", "tweak", "tweak", "replace", "replace", "delete", "add", "wrap", "grow"]
            )
        )
        if not where:
            if op in ("replace", "tweak", "wrap"):
                value = draw(nasty) if op == "replace" else [value]
            continue
        parent = value
        for k in where[:-1]:
            parent = parent[k]
        key, old = where[-1], parent[where[-1]]
        if op == "delete":
            del parent[key]
        elif op == "add" and isinstance(old, dict):
            old[draw(st.sampled_from(["n", "stream", "index", "x", "logprobs", ""]))] = draw(nasty)
        elif op == "wrap":
            parent[key] = [old]
        elif op == "tweak":
            parent[key] = draw(same_type(old))
        elif op == "grow" and isinstance(old, list) and old:
            # At most ~300,000 items and ~20 MB: the point is size, not this
            # process's memory (an item can itself hold a 20,000-id list).
            times = draw(st.sampled_from([2, 100, 10000]))
            size = len(json.dumps(old, default=lambda _: 0))
            parent[key] = old * max(1, min(times, 300000 // len(old), 20_000_000 // size))
        else:
            parent[key] = draw(nasty)
    return value


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@st.composite
def tampered_state(draw, target: Target) -> Any:
    """A stream state someone made up: a vLLM-format state with wrong
    fields, or our envelope with random or edited data and mac."""
    kind = draw(st.sampled_from(["vllm", "envelope", "payload", "payload", "random"]))
    if kind == "vllm":
        return draw(mutated(pick(draw, target.vllm_states)))
    if kind == "random":
        return draw(random_json)
    if target.envelopes:
        real = pick(draw, target.envelopes)
        payload = json.loads(unb64(real["data"]))
        mac = real.get("mac")
    else:
        payload, mac = draw(random_json), None
    if kind == "payload":
        data = b64(encode(draw(mutated(payload, rounds=4))))
    else:
        data = draw(
            st.one_of(
                st.binary(max_size=200).map(b64),
                st.text(max_size=60),
                random_json.map(lambda v: b64(encode(v))),
                st.just(b64(b"x" * 100000)),
            )
        )
    macs = [None, mac, b64(os.urandom(32)), "", "!!", SECRET]
    envelope: dict[str, Any] = {
        "format": draw(st.sampled_from([ENVELOPE_FORMAT, ENVELOPE_FORMAT, "derender/0", "", "x"])),
        "data": data,
    }
    chosen = draw(st.sampled_from(macs))
    if chosen is not None or draw(st.booleans()):
        envelope["mac"] = chosen
    if draw(st.booleans()):
        envelope = draw(mutated(envelope, rounds=1))
    return envelope


@st.composite
def byte_mutated(draw, data: bytes) -> bytes:
    """Byte-level damage: truncation, invalid UTF-8, flipped or duplicated bytes."""
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(buf)))
        op = draw(st.sampled_from(["truncate", "insert", "flip", "dup", "delete"]))
        if op == "truncate":
            buf = buf[:at]
        elif op == "insert":
            junk = draw(
                st.sampled_from(
                    [
                        b"\xff",
                        b"\xc3",
                        b"\xe2\x82",
                        b"\xed\xa0\x80",
                        b"\x00",
                        b"\xf8\x88\x80\x80\x80",
                    ]
                )
            )
            buf[at:at] = junk
        elif op == "flip" and at < len(buf):
            buf[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "dup":
            buf[at:at] = buf[at : at + draw(st.integers(1, 64))]
        elif at < len(buf):
            del buf[at]
    return bytes(buf)


def pick(draw, items: list) -> Any:
    """One of `items` (drawn by index: seeds are too big to print)."""
    return items[draw(st.integers(0, len(items) - 1))]


def seed_request(draw, target: Target) -> tuple[str, dict]:
    return pick(draw, target.requests)


TARGETS = list(CORES)


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", TARGETS)
@fuzz(60)
@given(data=st.data())
def test_random_json_bodies(targets, name, data):
    target = targets[name]
    path = data.draw(st.sampled_from(POST_ROUTES))
    body = data.draw(st.one_of(random_json, random_json.map(lambda v: {"stream": True, "x": v})))
    check(target.post(path, encode(body)))


@pytest.mark.parametrize("name", TARGETS)
@fuzz(40)
@given(data=st.data())
def test_random_bytes_and_headers(targets, name, data):
    target = targets[name]
    path = data.draw(st.sampled_from(POST_ROUTES))
    body = data.draw(st.binary(max_size=300))
    headers = {
        "content-type": data.draw(
            st.sampled_from(
                [
                    "application/json",
                    "application/JSON; charset=utf-8",
                    "text/plain",
                    "",
                    "application/json;;",
                ]
            )
        )
    }
    if data.draw(st.booleans()):
        rid = data.draw(
            st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=300)
        )
        headers["x-request-id"] = rid.encode("latin-1")  # type: ignore[assignment]
    check(target.post(path, body, headers))


@pytest.mark.parametrize("name", TARGETS)
@fuzz(150)
@given(data=st.data())
def test_mutated_golden_requests(targets, name, data):
    target = targets[name]
    path, seed = seed_request(data.draw, target)
    if data.draw(st.integers(0, 9)) == 0:
        path = data.draw(st.sampled_from(POST_ROUTES))
    check(target.post(path, encode(data.draw(mutated(seed)))))


@pytest.mark.parametrize("name", TARGETS)
@fuzz(60)
@given(data=st.data())
def test_byte_damaged_golden_requests(targets, name, data):
    target = targets[name]
    if data.draw(st.integers(0, 4)) == 0:
        # The goldens' raw (already malformed) bodies.
        path, raw = pick(data.draw, target.raw_requests)
        body = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    else:
        path, seed = seed_request(data.draw, target)
        body = encode(seed)
        if data.draw(st.booleans()):
            body = encode(data.draw(mutated(seed, rounds=1)))
    check(target.post(path, data.draw(byte_mutated(body))))


@pytest.mark.parametrize("name", TARGETS)
@fuzz(150)
@given(data=st.data())
def test_tampered_stream_states(targets, name, data):
    target = targets[name]
    streams = [(p, b) for p, b in target.requests if b.get("stream") is True]
    path, seed = pick(data.draw, streams)
    body = copy_json(seed)
    body["stream_state"] = data.draw(tampered_state(target))
    if data.draw(st.integers(0, 3)) == 0:
        body = data.draw(mutated(body, rounds=2))
    check(target.post(path, encode(body)))


@pytest.mark.parametrize("name", ["plain", "parser"])
@fuzz(40)
@given(data=st.data())
def test_any_method_and_path(targets, name, data):
    target = targets[name]
    path = data.draw(
        st.one_of(
            st.sampled_from(POST_ROUTES + GET_ROUTES),
            st.sampled_from(POST_ROUTES + GET_ROUTES).map(lambda p: p + "/x"),
            st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=30).map(
                lambda p: "/" + p.lstrip("/")
            ),
        )
    )
    method = data.draw(
        st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"])
    )
    SENT[0] += 1
    resp = target.client.request(
        method, path, content=b"{}", headers={"content-type": "application/json"}
    )
    assert resp.status_code < 500, (resp.status_code, resp.text[:2000])
    if resp.status_code != 200 and method != "HEAD":
        check(resp)


def test_seeds_cover_every_post_route(targets):
    for target in targets.values():
        assert {p for p, _ in target.requests} == set(POST_ROUTES)
        assert target.raw_requests


class BrokenCore:
    """A core that answers 500 (a caught panic) or raises."""

    served_model_names = ["qwen3"]
    max_model_len = 512

    def __init__(self, raises: bool) -> None:
        self.raises = raises

    def handle_measured(self, path, body, content_type=None, request_id=None):
        if self.raises:
            raise RuntimeError("boom")
        err = {"message": "boom", "type": "InternalServerError", "param": None, "code": 500}
        return 500, json.dumps({"error": err}).encode(), None


def test_a_caught_panic_is_answered_with_the_envelope():
    """(Its log line is checked in test_metrics.py.)"""
    config = ServerConfig(model=str(DEFAULT_MODEL_DIR))
    with TestClient(create_app(config, BrokenCore(raises=False))) as client:  # type: ignore[arg-type]
        resp = client.post("/tokenize", content=b"{}", headers={"x-request-id": "r-77"})
    assert resp.status_code == 500
    assert resp.json()["error"]["type"] == "InternalServerError"


def test_an_exception_in_the_app_is_answered_with_the_envelope():
    config = ServerConfig(model=str(DEFAULT_MODEL_DIR))
    app = create_app(config, BrokenCore(raises=True))  # type: ignore[arg-type]
    with TestClient(app, raise_server_exceptions=False) as client:
        resp = client.post("/v1/chat/completions/derender", content=b"{}")
    assert resp.status_code == 500
    err = resp.json()["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["code"] == 500
