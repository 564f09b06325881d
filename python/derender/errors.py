"""Typed errors of the in-process API (`Derenderer.call`, `StreamParser`).

Each carries the error envelope a server would have answered: ``status``
(the HTTP status), ``type``, ``message`` and ``param`` (the field at fault).
"""

from __future__ import annotations

import json


class DerenderError(Exception):
    """A request derender refuses (a server would answer the same envelope)."""

    status: int = 500

    def __init__(self, message: str, *, status: int, type: str, param: str | None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = type
        self.param = param

    def envelope(self) -> dict[str, object]:
        """The error as a server sends it: ``{"error": {...}}``."""
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.status,
            }
        }


class BadRequestError(DerenderError):
    """400: the request is malformed or names something invalid."""


class NotFoundError(DerenderError):
    """404: the request names a model that is not served."""


class UnsupportedMediaTypeError(DerenderError):
    """415: the body is not JSON."""


class InternalServerError(DerenderError):
    """500: a bug in derender; please report it."""


_BY_STATUS: dict[int, type[DerenderError]] = {
    400: BadRequestError,
    404: NotFoundError,
    415: UnsupportedMediaTypeError,
    500: InternalServerError,
}


def from_envelope(status: int, body: bytes) -> DerenderError:
    """The exception for an error answer (used by the native module)."""
    try:
        error = json.loads(body)["error"]
        message, kind, param = str(error["message"]), str(error["type"]), error.get("param")
    except (ValueError, KeyError, TypeError):
        message, kind, param = body.decode("utf-8", "replace"), "InternalServerError", None
    cls = _BY_STATUS.get(status, DerenderError)
    return cls(message, status=status, type=kind, param=param)
