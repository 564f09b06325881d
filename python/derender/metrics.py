"""`/metrics`: Prometheus counters and histograms, kept in-process (one set per worker).

What the HTTP layer sees (requests, latency, bytes, errors) is observed once per request by
`derender.app`; what only the core knows (output ids derendered, `stream_state` sizes, time in
the parsers) comes back with each native call as a `CallStats`, so no body is read twice.
"""

from __future__ import annotations

import bisect
import json
import os
import resource
import threading
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Protocol

# A native call takes ~0.1 ms in the core and ~0.5 ms over HTTP: the buckets start well below.
LATENCY_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
# Parsing one stream chunk takes ~10 us; a long batch message, milliseconds.
PARSER_BUCKETS = (
    0.00001,
    0.000025,
    0.00005,
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.1,
    1.0,
)
# A compact state is ~0.6 KB; vLLM's history format grows with the output.
STATE_BYTES_BUCKETS = (256, 512, 1024, 2048, 4096, 8192, 16384, 65536, 262144, 1048576, 4194304)


class CoreStats(Protocol):
    """What `Derenderer.handle_measured` reports (`derender._native.CallStats`)."""

    @property
    def kind(self) -> str | None: ...
    @property
    def tokens(self) -> int: ...
    @property
    def state_bytes_in(self) -> int | None: ...
    @property
    def state_bytes_out(self) -> int | None: ...
    @property
    def parser_seconds(self) -> float | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def panicked(self) -> bool: ...


_INF = 'le="+Inf"'


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(names: tuple[str, ...], values: tuple[object, ...], extra: str = "") -> str:
    parts = [f'{n}="{_escape(str(v))}"' for n, v in zip(names, values, strict=True)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class _Counter:
    def __init__(self, name: str, help_: str, labels: tuple[str, ...]) -> None:
        self.name, self.help, self.labels = name, help_, labels
        self.values: dict[tuple[Any, ...], float] = defaultdict(int)

    def inc(self, key: tuple[Any, ...], amount: float = 1) -> None:
        self.values[key] += amount

    def dump(self) -> list[list[Any]]:
        return [[*key, value] for key, value in self.values.items()]

    def load(self, rows: list[list[Any]]) -> None:
        for *key, value in rows:
            self.values[tuple(key)] += value

    def render(self) -> Iterable[str]:
        yield f"# HELP {self.name} {self.help}"
        yield f"# TYPE {self.name} counter"
        for key, value in sorted(self.values.items()):
            yield f"{self.name}{_labels(self.labels, key)} {_number(value)}"


class _Histogram:
    def __init__(
        self, name: str, help_: str, labels: tuple[str, ...], buckets: tuple[float, ...]
    ) -> None:
        self.name, self.help, self.labels, self.buckets = name, help_, labels, buckets
        # Per label set: the count in each bucket (not cumulative), +Inf last; then the sum.
        self.counts: dict[tuple[Any, ...], list[int]] = {}
        self.sums: dict[tuple[Any, ...], float] = defaultdict(float)

    def observe(self, key: tuple[Any, ...], value: float) -> None:
        counts = self.counts.get(key)
        if counts is None:
            counts = self.counts[key] = [0] * (len(self.buckets) + 1)
        counts[bisect.bisect_left(self.buckets, value)] += 1
        self.sums[key] += value

    def dump(self) -> list[list[Any]]:
        return [[list(key), list(counts), self.sums[key]] for key, counts in self.counts.items()]

    def load(self, rows: list[list[Any]]) -> None:
        for key, counts, total in rows:
            key = tuple(key)
            mine = self.counts.setdefault(key, [0] * (len(self.buckets) + 1))
            if len(counts) == len(mine):
                self.counts[key] = [a + b for a, b in zip(mine, counts, strict=True)]
                self.sums[key] += total

    def render(self) -> Iterable[str]:
        yield f"# HELP {self.name} {self.help}"
        yield f"# TYPE {self.name} histogram"
        for key, counts in sorted(self.counts.items()):
            total = 0
            for bound, n in zip(self.buckets, counts, strict=False):
                total += n
                le = f'le="{_number(bound)}"'
                yield f"{self.name}_bucket{_labels(self.labels, key, le)} {total}"
            total += counts[-1]
            yield f"{self.name}_bucket{_labels(self.labels, key, _INF)} {total}"
            yield f"{self.name}_sum{_labels(self.labels, key)} {_number(self.sums[key])}"
            yield f"{self.name}_count{_labels(self.labels, key)} {total}"


class Metrics:
    """The metrics of one worker process."""

    def __init__(self, version: str = "") -> None:
        self._lock = threading.Lock()
        self.version = version
        self.in_flight = 0
        self.requests = _Counter(
            "derender_requests_total",
            "Requests answered, by route and status.",
            ("route", "status"),
        )
        self.latency = _Histogram(
            "derender_request_seconds",
            "Time from a request's arrival to the end of its answer.",
            ("route",),
            LATENCY_BUCKETS,
        )
        self.bytes_in = _Counter(
            "derender_request_body_bytes_total", "Request body bytes received.", ("route",)
        )
        self.bytes_out = _Counter(
            "derender_response_body_bytes_total", "Response body bytes sent.", ("route",)
        )
        self.errors = _Counter(
            "derender_errors_total",
            "Error answers, by route, status and error type (the envelope's `type`).",
            ("route", "status", "type"),
        )
        self.panics = _Counter(
            "derender_panics_total",
            "Rust panics caught at the native boundary (answered with a 500).",
            ("route",),
        )
        self.tokens = _Counter(
            "derender_tokens_total",
            "Output token ids derendered by successful calls (a stream chunk's are its delta).",
            ("route", "kind"),
        )
        self.parser = _Histogram(
            "derender_parser_seconds",
            "Time per call inside the reasoning / tool parsers (calls that ran one).",
            ("route", "kind"),
            PARSER_BUCKETS,
        )
        self.state_bytes = _Histogram(
            "derender_stream_state_bytes",
            "JSON size of the stream_state a stream call received (in) and answered (out).",
            ("route", "direction"),
            STATE_BYTES_BUCKETS,
        )

    def begin(self) -> None:
        with self._lock:
            self.in_flight += 1

    def observe(
        self,
        route: str,
        status: int,
        seconds: float,
        bytes_in: int,
        bytes_out: int,
        error_type: str | None = None,
        stats: CoreStats | None = None,
    ) -> None:
        """One finished request (`begin` was called for it)."""
        with self._lock:
            self.in_flight -= 1
            self.requests.inc((route, status))
            self.latency.observe((route,), seconds)
            self.bytes_in.inc((route,), bytes_in)
            self.bytes_out.inc((route,), bytes_out)
            if error_type is not None:
                self.errors.inc((route, status, error_type))
            if stats is None:
                return
            if stats.panicked:
                self.panics.inc((route,))
            kind = stats.kind
            if kind is not None and stats.tokens:
                self.tokens.inc((route, kind), stats.tokens)
            if kind is not None and stats.parser_seconds is not None:
                self.parser.observe((route, kind), stats.parser_seconds)
            if stats.state_bytes_in is not None:
                self.state_bytes.observe((route, "in"), stats.state_bytes_in)
            if stats.state_bytes_out is not None:
                self.state_bytes.observe((route, "out"), stats.state_bytes_out)

    def _families(self) -> tuple[list[_Counter], list[_Histogram]]:
        counters = [self.requests, self.bytes_in, self.bytes_out, self.errors, self.panics]
        return [*counters, self.tokens], [self.latency, self.parser, self.state_bytes]

    def snapshot(self) -> dict[str, Any]:
        """Everything as plain JSON data, with this process's resource sample."""
        counters, histograms = self._families()
        with self._lock:
            return {
                "in_flight": self.in_flight,
                "counters": {c.name: c.dump() for c in counters},
                "histograms": {h.name: h.dump() for h in histograms},
                "process": process_sample(),
            }

    def render(self, peers: Iterable[Peer] = (), mine: dict[str, Any] | None = None) -> str:
        """The Prometheus text: this process's metrics (`mine`: a snapshot taken now unless
        given) plus those of `peers` (the other workers of the server): counters and
        histograms of every worker that ever answered, gauges of the live ones."""
        total = Metrics(self.version)
        mine = mine if mine is not None else self.snapshot()
        samples, all_samples = [mine["process"]], [mine["process"]]
        in_flight = mine["in_flight"]
        for snap, alive in [(mine, True), *peers]:
            counters, histograms = total._families()
            for c in counters:
                c.load(snap["counters"].get(c.name, []))
            for h in histograms:
                h.load(snap["histograms"].get(h.name, []))
            if snap is not mine:
                all_samples.append(snap.get("process", {}))
                if alive:
                    samples.append(snap.get("process", {}))
                    in_flight += snap.get("in_flight", 0)
        lines = [
            "# HELP derender_build_info The derender version serving.",
            "# TYPE derender_build_info gauge",
            f'derender_build_info{{version="{_escape(self.version)}"}} 1',
            "# HELP derender_workers Live worker processes these metrics add up.",
            "# TYPE derender_workers gauge",
            f"derender_workers {len(samples)}",
            "# HELP derender_requests_in_flight Requests being answered now.",
            "# TYPE derender_requests_in_flight gauge",
            f"derender_requests_in_flight {in_flight}",
        ]
        counters, histograms = total._families()
        for family in (*counters, *histograms):
            lines += family.render()
        lines += _render_process(samples, all_samples)
        return "\n".join(lines) + "\n"


# A peer's snapshot and whether its process is alive.
Peer = tuple[dict[str, Any], bool]

# name, type, help, and how workers add up: "all" (dead ones too: a counter), "live", "first".
_PROCESS = (
    ("cpu_seconds_total", "counter", "User and system CPU time spent, in seconds.", "all"),
    ("resident_memory_bytes", "gauge", "Resident memory size in bytes.", "live"),
    ("virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", "live"),
    ("threads", "gauge", "OS threads.", "live"),
    ("open_fds", "gauge", "Open file descriptors.", "live"),
    ("start_time_seconds", "gauge", "Start time since the Unix epoch, in seconds.", "first"),
    ("max_fds", "gauge", "The limit on open file descriptors.", "first"),
)


def _render_process(live: list[dict[str, float]], every: list[dict[str, float]]) -> list[str]:
    """The standard `process_*` metrics (Prometheus client conventions); with several
    workers, the server's totals (this worker's start time and fd limit)."""
    out: list[str] = []
    for name, kind, help_, merge in _PROCESS:
        pool = every if merge == "all" else live[:1] if merge == "first" else live
        values = [s[name] for s in pool if name in s]
        if values:
            full = f"process_{name}"
            out += (f"# HELP {full} {help_}", f"# TYPE {full} {kind}")
            out.append(f"{full} {_number(sum(values))}")
    return out


def process_sample() -> dict[str, float]:
    """This process's resources, from getrusage and /proc (Linux)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out = {
        "cpu_seconds_total": usage.ru_utime + usage.ru_stime,
        "max_fds": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
    }
    try:
        with open("/proc/self/stat", "rb") as f:
            # The fields after the command name (which may hold spaces): field 3 on.
            fields = f.read().rsplit(b")", 1)[1].split()
        out["resident_memory_bytes"] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        out["virtual_memory_bytes"] = int(fields[20])
        out["threads"] = int(fields[17])
        ticks = os.sysconf("SC_CLK_TCK")
        out["start_time_seconds"] = _boot_time() + int(fields[19]) / ticks
        out["open_fds"] = len(os.listdir("/proc/self/fd"))
    except (OSError, ValueError, IndexError, StopIteration):
        pass  # Not Linux: CPU time and the fd limit only.
    return out


_BOOT_TIME: float | None = None


def _boot_time() -> float:
    global _BOOT_TIME
    if _BOOT_TIME is None:
        with open("/proc/stat", "rb") as f:
            line = next(line for line in f if line.startswith(b"btime "))
        _BOOT_TIME = float(line.split()[1])
    return _BOOT_TIME


class SharedMetrics:
    """The workers of one `derender serve --workers N` share their metrics through a
    directory: each writes its snapshot there every `interval` seconds (`run`), and `/metrics`
    adds the other workers' last snapshots to its own, so any worker answers for the server
    (the others' counts are at most `interval` old, or as new as their last scrape)."""

    def __init__(self, directory: str, metrics: Metrics, interval: float = 1.0) -> None:
        self.directory = directory
        self.metrics = metrics
        self.interval = interval
        self.pid = os.getpid()

    def dump(self, snapshot: dict[str, Any] | None = None) -> None:
        path = os.path.join(self.directory, f"{self.pid}.json")
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(snapshot if snapshot is not None else self.metrics.snapshot(), f)
        os.replace(tmp, path)

    def render(self) -> str:
        """`/metrics` for the whole server. What this worker reports is written out first,
        so whichever worker answers the next scrape reports at least as much: the counters
        never step back between scrapes (Prometheus would read that as a reset)."""
        mine = self.metrics.snapshot()
        self.dump(mine)
        return self.metrics.render(self.peers(), mine)

    def peers(self) -> list[Peer]:
        out: list[Peer] = []
        try:
            names = os.listdir(self.directory)
        except OSError:
            return out
        for name in names:
            pid_text, _, ext = name.partition(".")
            if ext != "json" or not pid_text.isdigit() or int(pid_text) == self.pid:
                continue
            try:
                with open(os.path.join(self.directory, name), encoding="utf-8") as f:
                    snap = json.load(f)
            except (OSError, ValueError):
                continue  # gone, or being replaced
            out.append((snap, _alive(int(pid_text))))
        return out

    async def run(self) -> None:
        import anyio

        while True:
            self.dump()
            await anyio.sleep(self.interval)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


__all__ = ["CoreStats", "Metrics", "SharedMetrics", "process_sample"]
