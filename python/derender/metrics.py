"""`/metrics`: Prometheus counters and histograms, kept in-process (one set per worker).

What the HTTP layer sees (requests, latency, bytes, errors) is observed once per request by
`derender.app`; what only the core knows (output ids derendered, `stream_state` sizes, time in
the parsers) comes back with each native call as a `CallStats`, so no body is read twice.
"""

from __future__ import annotations

import bisect
import os
import resource
import threading
from collections import defaultdict
from collections.abc import Iterable
from typing import Protocol

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
        self.values: dict[tuple[object, ...], float] = defaultdict(int)

    def inc(self, key: tuple[object, ...], amount: float = 1) -> None:
        self.values[key] += amount

    def render(self, kind: str = "counter") -> Iterable[str]:
        yield f"# HELP {self.name} {self.help}"
        yield f"# TYPE {self.name} {kind}"
        for key, value in sorted(self.values.items()):
            yield f"{self.name}{_labels(self.labels, key)} {_number(value)}"


class _Histogram:
    def __init__(
        self, name: str, help_: str, labels: tuple[str, ...], buckets: tuple[float, ...]
    ) -> None:
        self.name, self.help, self.labels, self.buckets = name, help_, labels, buckets
        # Per label set: the count in each bucket (not cumulative), +Inf last; then the sum.
        self.counts: dict[tuple[object, ...], list[int]] = {}
        self.sums: dict[tuple[object, ...], float] = defaultdict(float)

    def observe(self, key: tuple[object, ...], value: float) -> None:
        counts = self.counts.get(key)
        if counts is None:
            counts = self.counts[key] = [0] * (len(self.buckets) + 1)
        counts[bisect.bisect_left(self.buckets, value)] += 1
        self.sums[key] += value

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

    def render(self) -> str:
        lines = [
            "# HELP derender_build_info The derender version serving.",
            "# TYPE derender_build_info gauge",
            f'derender_build_info{{version="{_escape(self.version)}"}} 1',
            "# HELP derender_requests_in_flight Requests being answered now.",
            "# TYPE derender_requests_in_flight gauge",
        ]
        with self._lock:
            lines.append(f"derender_requests_in_flight {self.in_flight}")
            for family in (self.requests, self.bytes_in, self.bytes_out, self.errors):
                lines += family.render()
            lines += self.panics.render()
            lines += self.tokens.render()
            for hist in (self.latency, self.parser, self.state_bytes):
                lines += hist.render()
        lines += _process_metrics()
        return "\n".join(lines) + "\n"


def _process_metrics() -> list[str]:
    """The standard `process_*` metrics (Prometheus client conventions), from /proc."""
    out: list[str] = []

    def add(name: str, kind: str, help_: str, value: float) -> None:
        out.extend((f"# HELP {name} {help_}", f"# TYPE {name} {kind}", f"{name} {_number(value)}"))

    usage = resource.getrusage(resource.RUSAGE_SELF)
    add(
        "process_cpu_seconds_total",
        "counter",
        "User and system CPU time spent, in seconds.",
        usage.ru_utime + usage.ru_stime,
    )
    try:
        with open("/proc/self/stat", "rb") as f:
            # Fields after the command name (which may hold spaces), from field 3 on.
            fields = f.read().rsplit(b")", 1)[1].split()
        page = os.sysconf("SC_PAGE_SIZE")
        add(
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory size in bytes.",
            int(fields[21]) * page,
        )
        add(
            "process_virtual_memory_bytes",
            "gauge",
            "Virtual memory size in bytes.",
            int(fields[20]),
        )
        add("process_threads", "gauge", "OS threads in the process.", int(fields[17]))
        add(
            "process_start_time_seconds",
            "gauge",
            "Start time of the process since the Unix epoch, in seconds.",
            _boot_time() + int(fields[19]) / os.sysconf("SC_CLK_TCK"),
        )
        add("process_open_fds", "gauge", "Open file descriptors.", len(os.listdir("/proc/self/fd")))
    except (OSError, ValueError, IndexError):
        pass  # Not Linux: the CPU time and the limit below are still known.
    add(
        "process_max_fds",
        "gauge",
        "The limit on open file descriptors.",
        resource.getrlimit(resource.RLIMIT_NOFILE)[0],
    )
    return out


_BOOT_TIME: float | None = None


def _boot_time() -> float:
    global _BOOT_TIME
    if _BOOT_TIME is None:
        with open("/proc/stat", "rb") as f:
            line = next(line for line in f if line.startswith(b"btime "))
        _BOOT_TIME = float(line.split()[1])
    return _BOOT_TIME


__all__ = ["CoreStats", "Metrics"]
