"""Properties of the plain path: however ids are split into chunks, the
concatenated stream equals the batch answer, and the carried window stays
small for real text."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from derender import Derenderer

CHAT = "/v1/chat/completions/derender"
CMPL = "/v1/completions/derender"
PROMPT = [151644, 872, 198, 6023, 151645, 198, 151644, 77091, 198]

# Ordinary pieces, single bytes (partial UTF-8), specials, added tokens,
# ids past the vocabulary (decode to "") and far past it.
ids_strategy = st.one_of(
    st.integers(0, 151642),
    st.integers(0, 255),
    st.integers(151643, 151668),
    st.integers(151669, 151935),
    st.integers(10**6, 10**9),
)


def call(core: Derenderer, path: str, body: dict) -> dict:
    status, out = core.handle(path, json.dumps(body).encode())
    assert status == 200, out
    return json.loads(out)


def split(ids: list[int], cuts: list[int]) -> list[list[int]]:
    points = sorted({c % (len(ids) + 1) for c in cuts} | {0, len(ids)})
    return [ids[a:b] for a, b in zip(points, points[1:], strict=False)]


def batch_text(core: Derenderer, ids: list[int], chat: bool, request: dict) -> str:
    gen = {
        "request_id": "b",
        "choices": [{"index": 0, "finish_reason": "length", "token_ids": ids}],
    }
    if chat:
        body = {"generate_response": gen, "prompt_token_ids": PROMPT, "chat_request": request}
        return call(core, CHAT, body)["choices"][0]["message"]["content"]
    body = {
        "generate_responses": [gen],
        "prompt_token_ids": [PROMPT],
        "completion_request": request,
    }
    return call(core, CMPL, body)["choices"][0]["text"]


def stream_text(core: Derenderer, chunks: list[list[int]], chat: bool, request: dict):
    state, parts, windows = None, [], []
    for i, chunk in enumerate(chunks):
        last = i == len(chunks) - 1
        choice = {"index": 0, "token_ids": chunk, "finish_reason": "length" if last else None}
        body = {
            "stream": True,
            "generate_chunk": {"request_id": "s", "choices": [choice]},
            "stream_state": state,
            "prompt_token_ids": PROMPT,
            ("chat_request" if chat else "completion_request"): request,
        }
        out = call(core, CHAT if chat else CMPL, body)
        state = out["stream_state"]
        windows.append(len(state["prev_tokens"]))
        c = out["chunk"]["choices"][0]
        parts.append((c["delta"]["content"] if chat else c["text"]) or "")
    return "".join(parts), windows


def request_for(chat: bool, keep_special: bool) -> dict:
    req: dict = {"skip_special_tokens": not keep_special}
    if chat:
        req["messages"] = [{"role": "user", "content": "hi"}]
    else:
        req["prompt"] = "hi"
    return req


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ids=st.lists(ids_strategy, min_size=1, max_size=40),
    cuts=st.lists(st.integers(0, 1000), max_size=12),
    chat=st.booleans(),
    keep_special=st.booleans(),
)
def test_stream_concatenation_equals_batch(core, ids, cuts, chat, keep_special):
    request = request_for(chat, keep_special)
    expected = batch_text(core, ids, chat, request) or ""
    got, _ = stream_text(core, split(ids, cuts), chat, request)
    assert got == expected


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.lists(
        st.one_of(
            st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1),
            st.sampled_from(["你好", "👨‍👩‍👧", "🇫🇷", "é", " ", "\n", "🚀👍🏽", "東京の天気"]),
        ),
        min_size=1,
        max_size=20,
    ).map("".join),
    cuts=st.lists(st.integers(0, 1000), max_size=12),
)
def test_real_text_round_trips_with_a_small_window(core, text, cuts):
    ids = core.encode(text)
    request = request_for(True, False)
    got, windows = stream_text(core, split(ids, cuts), True, request)
    # The qwen3 normalizer is NFC, so compare against the NFC form.
    import unicodedata

    assert got == unicodedata.normalize("NFC", text)
    # The window holds the pieces of at most one unfinished character plus
    # the last emitted piece: bounded, whatever the length of the stream.
    assert max(windows) <= 8
