"""Prometheus counters for `/metrics`, kept in-process (one set per worker)."""

from __future__ import annotations

import threading
from collections import defaultdict

_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[tuple[str, int], int] = defaultdict(int)
        self._latency: dict[str, list[int]] = defaultdict(lambda: [0] * (len(_BUCKETS) + 1))
        self._latency_sum: dict[str, float] = defaultdict(float)
        self._bytes_in: dict[str, int] = defaultdict(int)

    def observe(self, route: str, status: int, seconds: float, body_bytes: int) -> None:
        with self._lock:
            self._requests[(route, status)] += 1
            buckets = self._latency[route]
            for i, bound in enumerate(_BUCKETS):
                if seconds <= bound:
                    buckets[i] += 1
            buckets[-1] += 1
            self._latency_sum[route] += seconds
            self._bytes_in[route] += body_bytes

    def render(self) -> str:
        lines = [
            "# HELP derender_requests_total Requests answered, by route and status.",
            "# TYPE derender_requests_total counter",
        ]
        with self._lock:
            for (route, status), n in sorted(self._requests.items()):
                lines.append(f'derender_requests_total{{route="{route}",status="{status}"}} {n}')
            lines += [
                "# HELP derender_request_seconds Time to answer a request.",
                "# TYPE derender_request_seconds histogram",
            ]
            for route, buckets in sorted(self._latency.items()):
                for bound, n in zip(_BUCKETS, buckets, strict=False):
                    lines.append(
                        f'derender_request_seconds_bucket{{route="{route}",le="{bound}"}} {n}'
                    )
                lines.append(
                    f'derender_request_seconds_bucket{{route="{route}",le="+Inf"}} {buckets[-1]}'
                )
                lines.append(
                    f'derender_request_seconds_sum{{route="{route}"}} {self._latency_sum[route]}'
                )
                lines.append(f'derender_request_seconds_count{{route="{route}"}} {buckets[-1]}')
            lines += [
                "# HELP derender_request_body_bytes_total Request body bytes received.",
                "# TYPE derender_request_body_bytes_total counter",
            ]
            for route, n in sorted(self._bytes_in.items()):
                lines.append(f'derender_request_body_bytes_total{{route="{route}"}} {n}')
        return "\n".join(lines) + "\n"
