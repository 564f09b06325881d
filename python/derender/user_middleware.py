"""`--middleware`: ASGI middleware named by import path, added as vLLM's
`init_entrypoints_middleware` adds it: a class with `app.add_middleware(cls)`,
a coroutine function as an `http` middleware (`async def f(request, call_next)`)."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from starlette.applications import Starlette
from starlette.middleware.base import BaseHTTPMiddleware


def load(paths: list[str]) -> list[Any]:
    """The objects the paths name; ValueError naming the path that fails."""
    loaded = []
    for path in paths:
        module_path, _, name = path.rpartition(".")
        if not module_path:
            raise ValueError(f"--middleware {path}: not a module.attribute import path")
        try:
            obj = getattr(importlib.import_module(module_path), name)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"--middleware {path}: {type(exc).__name__}: {exc}") from None
        if not (inspect.isclass(obj) or inspect.iscoroutinefunction(obj)):
            raise ValueError(f"Invalid middleware {path}. Must be a function or a class.")
        loaded.append(obj)
    return loaded


def add(app: Starlette, paths: list[str]) -> None:
    """Add each in order: a later one wraps the ones before it."""
    for obj in load(paths):
        if inspect.isclass(obj):
            app.add_middleware(obj)
        else:
            app.add_middleware(BaseHTTPMiddleware, dispatch=obj)
