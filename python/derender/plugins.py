"""Parser plugins: `--tool-parser-plugin FILE` and `--reasoning-parser-plugin FILE`.

A plugin file is imported at startup and registers a parser class under a name, which
`--tool-call-parser NAME` / `--reasoning-parser NAME` then select (a plugin name shadows a
built-in one, as in vLLM)::

    from derender.plugins import ToolParser, ToolParserManager

    @ToolParserManager.register_module("my_parser")
    class MyParser(ToolParser):
        def extract_tool_calls(self, model_output, request):
            return False, [], model_output

        def extract_tool_calls_streaming(self, previous_text, current_text, delta_text,
                                         previous_token_ids, current_token_ids,
                                         delta_token_ids, request):
            return {"content": delta_text}

The interface is documented in docs/plugins.md; examples/plugins/ has working plugins.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T", bound=type)

#: A streamed delta: `{"content", "reasoning", "tool_calls": [{"index", "id", "type",
#: "function": {"name", "arguments"}}]}`, any key optional; `None` = nothing to send.
Delta = dict[str, Any]


class ToolParser:
    """Base class of tool-call parser plugins (subclassing it is optional).

    One instance is made per request and per streamed call (streams are replayed from the
    start on every call), with the model's tokenizer (`derender._native.PluginTokenizer`).
    """

    #: Forced tool choices (`required` / named) are answered as a JSON array of
    #: `{"name", "parameters"}`; render then sets a JSON schema (vLLM's default).
    supports_required_and_named: bool = True
    #: Render keeps special tokens when tools may be called (vLLM parsers that set
    #: `skip_special_tokens = False` in `adjust_request`).
    keep_special_tokens: bool = False

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def extract_tool_calls(
        self, model_output: str, request: dict[str, Any]
    ) -> tuple[bool, list[dict[str, str]], str | None]:
        """Batch: `(tools_called, [{"name", "arguments"(JSON text)[, "id"]}], content)`."""
        raise NotImplementedError

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: list[int],
        current_token_ids: list[int],
        delta_token_ids: list[int],
        request: dict[str, Any],
    ) -> Delta | None:
        raise NotImplementedError


class ReasoningParser:
    """Base class of reasoning parser plugins (subclassing it is optional)."""

    #: Render keeps special tokens (the markers are special tokens).
    keep_special_tokens: bool = False

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def is_reasoning_end(self, input_ids: list[int]) -> bool:
        raise NotImplementedError

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        raise NotImplementedError

    def extract_reasoning(
        self, model_output: str, request: dict[str, Any]
    ) -> tuple[str | None, str | None]:
        """Batch: `(reasoning, content)`."""
        raise NotImplementedError

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: list[int],
        current_token_ids: list[int],
        delta_token_ids: list[int],
    ) -> Delta | None:
        raise NotImplementedError


_TOOL_METHODS = ("extract_tool_calls", "extract_tool_calls_streaming")
_REASONING_METHODS = (
    "is_reasoning_end",
    "extract_content_ids",
    "extract_reasoning",
    "extract_reasoning_streaming",
)


class _Manager:
    kind = ""
    methods: tuple[str, ...] = ()
    parsers: dict[str, type]

    @classmethod
    def register_module(
        cls, name: str | list[str] | None = None, force: bool = True, module: type | None = None
    ) -> Callable[[T], T] | type:
        """Register a class under `name` (default: the class name); usable as a decorator
        (`@register_module("x")`) or directly (`register_module("x", module=C)`)."""

        def register(module: T) -> T:
            if not isinstance(module, type):
                raise TypeError(f"{cls.kind} parser plugin must be a class, got {module!r}")
            missing = [m for m in cls.methods if not callable(getattr(module, m, None))]
            if missing:
                raise TypeError(f"{cls.kind} parser {module.__name__} lacks {', '.join(missing)}")
            names = [module.__name__] if name is None else [name] if isinstance(name, str) else name
            for n in names:
                if not force and n in cls.parsers:
                    raise KeyError(f"{n} is already registered as a {cls.kind} parser")
                cls.parsers[n] = module
            return module

        return register(module) if module is not None else register

    @classmethod
    def get(cls, name: str) -> type:
        if name not in cls.parsers:
            raise KeyError(f"{cls.kind} parser '{name}' not found")
        return cls.parsers[name]


class ToolParserManager(_Manager):
    """Registry of tool parser plugins (vLLM's `ToolParserManager` in miniature)."""

    kind = "tool"
    methods = _TOOL_METHODS
    parsers: dict[str, type] = {}


class ReasoningParserManager(_Manager):
    """Registry of reasoning parser plugins."""

    kind = "reasoning"
    methods = _REASONING_METHODS
    parsers: dict[str, type] = {}


def load_plugin(path: str) -> None:
    """Import a plugin file (vLLM skips paths of 3 characters or fewer).

    Raises ValueError with the reason when the file cannot be imported.
    """
    if len(path) <= 3:
        return
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"parser plugin {path}: no such file")
    module_name = f"derender_plugin_{file.stem}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise ValueError(f"parser plugin {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # any import-time failure stops the server, with its reason
        sys.modules.pop(module_name, None)
        raise ValueError(f"parser plugin {path}: {type(exc).__name__}: {exc}") from exc


def core_kwargs(tool_plugin: str | None, reasoning_plugin: str | None) -> dict[str, object]:
    """Load the given plugin files; the registered classes as `Derenderer` arguments."""
    for path in (tool_plugin, reasoning_plugin):
        if path:
            load_plugin(path)
    return {
        "tool_parser_plugins": dict(ToolParserManager.parsers) or None,
        "reasoning_parser_plugins": dict(ReasoningParserManager.parsers) or None,
    }


__all__ = [
    "ReasoningParser",
    "ReasoningParserManager",
    "ToolParser",
    "ToolParserManager",
    "core_kwargs",
    "load_plugin",
]
