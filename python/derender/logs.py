"""Structured logs: one JSON object per line on stderr (uvicorn's own lines included).

`derender.access` writes one line per request at INFO (`--log-level info`): time, method,
route, status, latency, body sizes, the `X-Request-Id` header and, for native calls, what the
core did (kind, output ids, error type). `derender` writes problems at WARNING and above, e.g. a
Rust panic caught at the native boundary. Bodies are never logged.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

ACCESS = logging.getLogger("derender.access")
SERVER = logging.getLogger("derender")

# Header values are the client's text: cap what a line repeats of them.
MAX_FIELD_CHARS = 200


def clip(value: str) -> str:
    return value if len(value) <= MAX_FIELD_CHARS else value[:MAX_FIELD_CHARS] + "..."


class JsonFormatter(logging.Formatter):
    """`{"time", "level", "logger", "event", ...fields}`; `fields` comes from `extra`."""

    def format(self, record: logging.LogRecord) -> str:
        created = time.gmtime(record.created)
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", created) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        line.update(getattr(record, "fields", None) or {})
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure(level: str) -> None:
    """Send the `derender` loggers to stderr as JSON lines at `level` (a --log-level name)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    SERVER.handlers[:] = [handler]
    SERVER.propagate = False
    SERVER.setLevel(_level(level))


def uvicorn_log_config() -> dict[str, Any]:
    """uvicorn's own lines (startup, shutdown, errors) as JSON lines too (`logging.config`)."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "derender.logs.JsonFormatter"}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stderr",
            }
        },
        "loggers": {
            "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
            "uvicorn.access": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        },
    }


def _level(name: str) -> int:
    if name.lower() == "trace":  # uvicorn's extra level
        return logging.DEBUG
    value = logging.getLevelName(name.upper())
    return value if isinstance(value, int) else logging.WARNING


__all__ = ["ACCESS", "SERVER", "JsonFormatter", "clip", "configure", "uvicorn_log_config"]
