"""`/metrics` and the access log (issue 11, item 5): exact counters after known calls,
well-formed Prometheus text, no body content in logs, caught panics logged with their route."""

from __future__ import annotations

import json
import logging
import re
import time
from collections import defaultdict

import httpx
import pytest
from starlette.testclient import TestClient

from derender import DEFAULT_MODEL_DIR, Derenderer
from derender.app import create_app
from derender.config import ServerConfig
from derender.logs import JsonFormatter

CHAT = "/v1/chat/completions/derender"
COMPLETION = "/v1/completions/derender"
HELLO = [9707, 1052, 0, 220, 108386, 1879, 151645]  # "Hello there! 你好 world" + <|im_end|>
# Text that must never reach a log line: a message in the request, and the decoded output.
MARKER = "zebra-marker-81723"
SECRET_TEXTS = (MARKER, "Hello", "你好")
REQUEST = {"messages": [{"role": "user", "content": MARKER}]}
PROMPT = [151644, 872, 198, 6023, 151645, 198, 151644, 77091, 198]


@pytest.fixture(scope="module")
def parser_core() -> Derenderer:
    return Derenderer(
        str(DEFAULT_MODEL_DIR),
        served_model_names=["qwen3"],
        reasoning_parser="qwen3",
        tool_call_parser="hermes",
        enable_auto_tool_choice=True,
    )


def fresh_client(core) -> TestClient:
    config = ServerConfig(model=str(DEFAULT_MODEL_DIR), served_model_names=["qwen3"])
    return TestClient(create_app(config, core))


# --- a small reader of the Prometheus text format ---------------------------------------

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')


def parse(text: str) -> dict[str, dict[frozenset, float]]:
    """{sample name: {labels: value}}, checking the text's shape on the way: every sample
    belongs to a family declared by HELP and TYPE before it, and none repeats."""
    assert text.endswith("\n")
    samples: dict[str, dict[frozenset, float]] = defaultdict(dict)
    types: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in ("counter", "gauge", "histogram"), line
            assert name not in types, f"family declared twice: {name}"
            types[name] = kind
            continue
        m = _SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        name, raw_labels, value = m.groups()
        labels = []
        rest = raw_labels or ""
        while rest:
            lm = _LABEL.match(rest)
            assert lm, f"bad labels in {line!r}"
            labels.append((lm.group(1), lm.group(2)))
            rest = rest[lm.end() :]
        family = re.sub(r"_(bucket|sum|count)$", "", name)
        family = family if family in types else name
        assert family in types, f"sample before its TYPE: {line!r}"
        if types[family] == "counter":
            assert float(value) >= 0
        key = frozenset(labels)
        assert key not in samples[name], f"duplicate sample: {line!r}"
        samples[name][key] = float(value)
    return samples


def value(samples, name: str, **labels) -> float:
    return samples[name].get(frozenset((k, str(v)) for k, v in labels.items()), 0.0)


def check_histograms(text: str) -> int:
    """Every histogram: increasing bounds, cumulative counts, +Inf = _count. Returns how many
    label sets were checked."""
    samples = parse(text)
    families = {m.group(1) for m in re.finditer(r"^# TYPE (\S+) histogram$", text, re.M)}
    checked = 0
    for family in families:
        series: dict[frozenset, list[tuple[float, float]]] = defaultdict(list)
        for labels, n in samples[family + "_bucket"].items():
            le = dict(labels)["le"]
            rest = frozenset(kv for kv in labels if kv[0] != "le")
            series[rest].append((float(le), n))
        assert set(series) == set(samples[family + "_count"]) == set(samples[family + "_sum"])
        for rest, buckets in series.items():
            lines = [ln for ln in text.splitlines() if ln.startswith(family + "_bucket")]
            assert lines, family
            bounds = [b for b, _ in buckets]
            assert bounds == sorted(bounds) and bounds[-1] == float("inf")
            counts = [n for _, n in sorted(buckets)]
            assert counts == sorted(counts), f"{family} {rest}: not cumulative"
            assert counts[-1] == samples[family + "_count"][rest]
            assert samples[family + "_sum"][rest] >= 0
            checked += 1
    return checked


# --- the calls ----------------------------------------------------------------------------


def stream_body(ids: list[int], state, finish=None) -> dict:
    body = {
        "stream": True,
        "generate_chunk": {
            "request_id": "s",
            "choices": [{"index": 0, "token_ids": ids, "finish_reason": finish}],
        },
        "chat_request": REQUEST,
        "prompt_token_ids": PROMPT,
    }
    if state is not None:
        body["stream_state"] = state
    return body


def compact_len(state) -> int:
    return len(json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode())


def run_calls(c: TestClient) -> dict:
    """A batch call, a 3-call stream with a parser, two errors and a stray path; returns
    what the client saw."""
    seen: dict = {"sent": defaultdict(int), "states": []}

    def post(path: str, body, **kw) -> httpx.Response:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        seen["sent"][path] += len(raw)
        headers = {"content-type": "application/json", **kw.pop("headers", {})}
        return c.post(path, content=raw, headers=headers, **kw)

    batch = {
        "generate_response": {"request_id": "b", "choices": [{"index": 0, "token_ids": HELLO}]}
    }
    r = post(CHAT, {**batch, "chat_request": REQUEST}, headers={"x-request-id": "req-42"})
    assert r.status_code == 200, r.text
    message = r.json()["choices"][0]["message"]
    assert "Hello there! 你好 world" in (message["content"], message["reasoning"])
    state = None
    for part, finish in ((HELLO[:3], None), (HELLO[3:6], None), (HELLO[6:], "stop")):
        r = post(CHAT, stream_body(part, state, finish))
        assert r.status_code == 200, r.text
        state = r.json()["stream_state"]
        seen["states"].append(state)
    r = post(CHAT, {**batch, "chat_request": REQUEST, "model": "nope"})
    assert r.status_code == 404 and r.json()["error"]["type"] == "NotFoundError"
    r = post(COMPLETION, b'{"generate_responses": [')
    assert r.status_code == 400 and r.json()["error"]["type"] == "Bad Request"
    assert c.get("/no/such/path").status_code == 404
    return seen


def test_metrics_count_calls_tokens_states_parser_time_and_errors(parser_core):
    with fresh_client(parser_core) as c:
        seen = run_calls(c)
        text = c.get("/metrics").text
    s = parse(text)
    assert value(s, "derender_requests_total", route=CHAT, status=200) == 4
    assert value(s, "derender_requests_total", route=CHAT, status=404) == 1
    assert value(s, "derender_requests_total", route=COMPLETION, status=400) == 1
    assert value(s, "derender_requests_total", route="other", status=404) == 1
    assert value(s, "derender_request_body_bytes_total", route=CHAT) == seen["sent"][CHAT]
    assert value(s, "derender_request_body_bytes_total", route=COMPLETION) == 24
    # Output ids: the batch's 7 and the stream's 3 + 3 + 1; the failed calls count none.
    assert value(s, "derender_tokens_total", route=CHAT, kind="batch") == 7
    assert value(s, "derender_tokens_total", route=CHAT, kind="stream") == 7
    assert not [k for k in s["derender_tokens_total"] if ("route", COMPLETION) in k]
    errors = {tuple(sorted(k)): v for k, v in s["derender_errors_total"].items()}
    assert errors == {
        (("route", CHAT), ("status", "404"), ("type", "NotFoundError")): 1,
        (("route", COMPLETION), ("status", "400"), ("type", "Bad Request")): 1,
        (("route", "other"), ("status", "404"), ("type", "Not Found")): 1,
    }
    assert value(s, "derender_panics_total", route=CHAT) == 0
    # Parser time: one batch call and three stream calls ran the parsers.
    assert value(s, "derender_parser_seconds_count", route=CHAT, kind="batch") == 1
    assert value(s, "derender_parser_seconds_count", route=CHAT, kind="stream") == 3
    assert value(s, "derender_parser_seconds_sum", route=CHAT, kind="stream") > 0
    # States: three answered, the first two sent back (sized as compact JSON).
    sizes = [compact_len(st) for st in seen["states"]]
    assert value(s, "derender_stream_state_bytes_count", route=CHAT, direction="out") == 3
    assert value(s, "derender_stream_state_bytes_sum", route=CHAT, direction="out") == sum(sizes)
    assert value(s, "derender_stream_state_bytes_count", route=CHAT, direction="in") == 2
    assert value(s, "derender_stream_state_bytes_sum", route=CHAT, direction="in") == sum(sizes[:2])
    assert value(s, "derender_request_seconds_count", route=CHAT) == 5
    assert value(s, "derender_requests_in_flight") == 1  # the /metrics call itself
    assert value(s, "derender_build_info", version=__import__("derender").__version__) == 1
    assert value(s, "process_resident_memory_bytes") > 0
    assert value(s, "process_cpu_seconds_total") > 0


def test_histogram_lines_are_well_formed(parser_core):
    with fresh_client(parser_core) as c:
        run_calls(c)
        text = c.get("/metrics").text
    # request seconds of 3 routes, parser seconds of 2 kinds, state bytes in and out
    assert check_histograms(text) == 3 + 2 + 2
    buckets = [ln for ln in text.splitlines() if ln.startswith("derender_request_seconds_bucket")]
    assert 'le="0.0001"' in buckets[0]  # sub-millisecond calls land in their own buckets


def test_metrics_scrape_is_counted_on_the_next_one(parser_core):
    with fresh_client(parser_core) as c:
        c.get("/metrics")
        s = parse(c.get("/metrics").text)
    assert value(s, "derender_requests_total", route="/metrics", status=200) == 1


def test_access_log_has_one_line_per_request_and_no_body(parser_core, caplog):
    caplog.set_level(logging.INFO, logger="derender")
    with fresh_client(parser_core) as c:
        run_calls(c)
    records = [r for r in caplog.records if r.name == "derender.access"]
    assert len(records) == 7
    formatter = JsonFormatter()
    lines = [json.loads(formatter.format(r)) for r in records]
    first = lines[0]
    assert first["event"] == "request" and first["level"] == "info"
    assert first["method"] == "POST" and first["route"] == CHAT and first["status"] == 200
    assert first["request_id"] == "req-42"
    assert first["kind"] == "batch" and first["tokens"] == 7
    assert first["request_bytes"] > 0 and first["response_bytes"] > 0
    assert isinstance(first["latency_ms"], float)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", first["time"])
    assert [ln["status"] for ln in lines] == [200, 200, 200, 200, 404, 400, 404]
    assert [ln.get("error") for ln in lines[4:]] == ["NotFoundError", "Bad Request", "Not Found"]
    assert [ln.get("tokens") for ln in lines[1:4]] == [3, 3, 1]
    everything = "\n".join(formatter.format(r) for r in caplog.records)
    for text in SECRET_TEXTS:
        assert text not in everything


def test_no_access_lines_below_info(parser_core, caplog):
    caplog.set_level(logging.WARNING, logger="derender")
    with fresh_client(parser_core) as c:
        assert c.get("/health").status_code == 200
    assert not [r for r in caplog.records if r.name.startswith("derender")]


class _PanickedStats:
    kind = "batch"
    tokens = 0
    state_bytes_in = None
    state_bytes_out = None
    parser_seconds = None
    error = "InternalServerError"
    panicked = True


class _PanickingCore:
    """What the app sees when the Rust core caught a panic (a real one is exercised in
    rust/core/tests/stats.rs)."""

    served_model_names = ["qwen3"]
    max_model_len = 4096

    def handle_measured(self, path, body, content_type, request_id):
        envelope = {
            "error": {
                "message": "internal error while derendering (a bug: please report it)",
                "type": "InternalServerError",
                "param": None,
                "code": 500,
            }
        }
        return 500, json.dumps(envelope).encode(), _PanickedStats()


def test_a_caught_panic_is_logged_with_its_route_and_counted(caplog):
    caplog.set_level(logging.WARNING, logger="derender")
    with fresh_client(_PanickingCore()) as c:
        r = c.post(CHAT, json={"x": MARKER}, headers={"x-request-id": "boom-1"})
        assert r.status_code == 500 and r.json()["error"]["type"] == "InternalServerError"
        s = parse(c.get("/metrics").text)
    assert value(s, "derender_panics_total", route=CHAT) == 1
    assert (
        value(s, "derender_errors_total", route=CHAT, status=500, type="InternalServerError") == 1
    )
    [record] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    line = json.loads(JsonFormatter().format(record))
    assert line["level"] == "error" and "panic" in line["event"]
    assert (line["route"], line["status"], line["request_id"]) == (CHAT, 500, "boom-1")
    assert MARKER not in JsonFormatter().format(record)


class _RaisingCore(_PanickingCore):
    def handle_measured(self, path, body, content_type, request_id):
        raise RuntimeError(MARKER)


def test_an_unhandled_exception_is_counted_as_the_envelope_says_and_logged(caplog):
    caplog.set_level(logging.WARNING, logger="derender")
    client = TestClient(
        create_app(ServerConfig(model="m", served_model_names=["qwen3"]), _RaisingCore()),
        raise_server_exceptions=False,
    )
    with client as c:
        r = c.post(CHAT, json={}, headers={"x-request-id": "oops-1"})
        assert r.status_code == 500 and r.json()["error"]["type"] == "InternalServerError"
        s = parse(c.get("/metrics").text)
    assert (
        value(s, "derender_errors_total", route=CHAT, status=500, type="InternalServerError") == 1
    )
    assert value(s, "derender_requests_total", route=CHAT, status=500) == 1
    [record] = [r for r in caplog.records if r.name == "derender"]
    line = json.loads(JsonFormatter().format(record))
    assert (line["route"], line["request_id"], line["exception"]) == (
        CHAT,
        "oops-1",
        "RuntimeError",
    )
    assert MARKER not in JsonFormatter().format(record)  # the traceback is uvicorn's to log


def test_served_access_log_is_json_on_stderr(server_factory):
    s = server_factory(
        [str(DEFAULT_MODEL_DIR), "--served-model-name", "qwen3", "--log-level", "info"]
    )
    body = {"generate_response": {"request_id": "b", "choices": [{"index": 0, "token_ids": HELLO}]}}
    r = httpx.post(s.url + CHAT, json=body, headers={"X-Request-Id": "over-http"})
    assert r.status_code == 200
    text = httpx.get(s.url + "/metrics").text
    assert value(parse(text), "derender_tokens_total", route=CHAT, kind="batch") == 7
    s.stop()
    out = s.proc.stdout.read().decode() if s.proc.stdout else ""
    lines = [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")]
    [line] = [ln for ln in lines if ln.get("request_id") == "over-http"]
    assert line["logger"] == "derender.access" and line["route"] == CHAT
    assert line["status"] == 200 and line["tokens"] == 7
    assert "Hello" not in out


class _Stats(_PanickedStats):
    kind = "stream"
    tokens = 3
    state_bytes_in = 600
    state_bytes_out = 700
    parser_seconds = 0.00002
    error = None
    panicked = False


def test_workers_add_up_counters_of_all_and_gauges_of_the_live(monkeypatch):
    from derender import metrics
    from derender.metrics import Metrics

    mine, live, dead = Metrics("v"), Metrics("v"), Metrics("v")
    for m in (mine, live, live, dead):
        m.begin()
        m.observe(CHAT, 200, 0.0004, 100, 50, None, _Stats())
    live.begin()  # still answering
    peers = [(live.snapshot(), True), (dead.snapshot(), False)]
    peers[0][0]["process"] = {"resident_memory_bytes": 1000, "cpu_seconds_total": 2.0}
    peers[1][0]["process"] = {"resident_memory_bytes": 5000, "cpu_seconds_total": 3.0}
    sample = {"resident_memory_bytes": 100, "cpu_seconds_total": 1.0, "max_fds": 10}
    monkeypatch.setattr(metrics, "process_sample", lambda: dict(sample))
    text = mine.render(peers)
    s = parse(text)
    assert value(s, "derender_requests_total", route=CHAT, status=200) == 4
    assert value(s, "derender_tokens_total", route=CHAT, kind="stream") == 12
    assert value(s, "derender_request_body_bytes_total", route=CHAT) == 400
    assert value(s, "derender_stream_state_bytes_count", route=CHAT, direction="out") == 4
    assert value(s, "derender_stream_state_bytes_sum", route=CHAT, direction="in") == 2400
    assert value(s, "derender_request_seconds_bucket", route=CHAT, le="0.0005") == 4
    assert value(s, "derender_workers") == 2
    assert value(s, "derender_requests_in_flight") == 1
    # Memory of the live workers, CPU time of all, the fd limit of the one answering.
    assert value(s, "process_resident_memory_bytes") == 1100
    assert value(s, "process_cpu_seconds_total") == 6
    assert value(s, "process_max_fds") == 10
    check_histograms(text)


def test_two_workers_answer_metrics_for_the_whole_server(server_factory):
    s = server_factory([str(DEFAULT_MODEL_DIR), "--served-model-name", "qwen3", "--workers", "2"])
    body = {"generate_response": {"request_id": "b", "choices": [{"index": 0, "token_ids": HELLO}]}}
    for _ in range(6):  # a connection each: the kernel spreads them over the workers
        assert httpx.post(s.url + CHAT, json=body).status_code == 200
    # The other worker's counts arrive within its dump interval (1 s): poll, bounded. Whichever
    # worker answers, the totals never step back (a counter that does reads as a reset).
    seen, workers = [], 0.0
    for _ in range(200):
        samples = parse(httpx.get(s.url + "/metrics").text)
        seen.append(value(samples, "derender_tokens_total", route=CHAT, kind="batch"))
        workers = value(samples, "derender_workers")
        if seen[-6:] == [42] * 6 and workers == 2:
            break
        time.sleep(0.05)
    assert seen[-6:] == [42] * 6 and seen == sorted(seen), seen
    assert workers == 2
    assert value(samples, "derender_requests_total", route=CHAT, status=200) == 6
