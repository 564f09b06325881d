"""Type stubs for the PyO3 module built from rust/python."""

from collections.abc import Mapping
from typing import Any

__version__: str

class Derenderer:
    """One loaded model and its derender settings (the native core)."""

    def __init__(
        self,
        model: str,
        served_model_names: list[str] | None = None,
        max_model_len: int | None = None,
        max_logprobs: int = 20,
        max_n_sequences: int = 16384,
        skip_model_name_validation: bool = False,
        reasoning_parser: str | None = None,
        tool_call_parser: str | None = None,
        enable_auto_tool_choice: bool = False,
        tool_strict_level: str | None = None,
        default_chat_template_kwargs: str | None = None,
        chat_template: str | None = None,
        trust_request_chat_template: bool = False,
        exclude_tools_when_tool_choice_none: bool = False,
        tool_parser_plugins: dict[str, type] | None = None,
        reasoning_parser_plugins: dict[str, type] | None = None,
        stream_state_mode: str = "compact",
        stream_state_secret: str | None = None,
        stream_state_accepted_secrets: list[str] | None = None,
        chat_template_content_format: str = "auto",
        generation_config: str = "auto",
        override_generation_config: str | None = None,
        reasoning_effort_map: str | None = None,
        anthropic_disabled_thinking_effort: str = "auto",
        hf_overrides: str | None = None,
        tokenizer: str | None = None,
        revision: str | None = None,
        tokenizer_revision: str | None = None,
        tokenizer_mode: str | None = None,
    ) -> None: ...
    def handle(
        self,
        path: str,
        body: bytes,
        content_type: str | None = "application/json",
        request_id: str | None = None,
    ) -> tuple[int, bytes]:
        """Answer one request on a native route: (HTTP status, JSON body)."""
    def handle_measured(
        self,
        path: str,
        body: bytes,
        content_type: str | None = "application/json",
        request_id: str | None = None,
    ) -> tuple[int, bytes, CallStats]:
        """`handle`, plus what the call did (for metrics)."""
    def call(
        self, path: str, request: Mapping[str, Any], request_id: str | None = None
    ) -> dict[str, Any]:
        """Answer one request given as a dict: the answer as a dict, or the
        `derender.errors.DerenderError` for the envelope a server would send."""
    def encode(self, text: str) -> list[int]:
        """Token ids of `text`, without special tokens."""
    def decode(self, ids: list[int]) -> str:
        """`tokenizer.decode(ids)`, special tokens kept."""
    @property
    def eos_token_id(self) -> int | None: ...
    @property
    def model_path(self) -> str: ...
    @property
    def tokenizer_path(self) -> str: ...
    @property
    def served_model_names(self) -> list[str]: ...
    @property
    def max_model_len(self) -> int: ...
    @property
    def has_parser(self) -> bool: ...
    @property
    def vocab_size(self) -> int: ...

class CallStats:
    """What one `handle_measured` call did (derender_core::Stats)."""

    @property
    def kind(self) -> str | None:
        """`"batch"` or `"stream"` for a derender call read as one, else None."""
    @property
    def tokens(self) -> int:
        """Output token ids derendered (0 unless the call succeeded)."""
    @property
    def state_bytes_in(self) -> int | None:
        """JSON bytes of the request's `stream_state`."""
    @property
    def state_bytes_out(self) -> int | None:
        """JSON bytes of the answer's `stream_state`."""
    @property
    def parser_seconds(self) -> float | None:
        """Seconds inside the reasoning / tool parsers; None when none ran."""
    @property
    def error(self) -> str | None:
        """The error envelope's `type` when the call failed."""
    @property
    def panicked(self) -> bool:
        """A Rust panic was caught (and answered with a 500)."""

class IncrementalDetokenizer:
    """One output's incremental detokenization: ids in, text out, as vLLM's
    incremental detokenizer emits it (the server's plain stream text; stop
    strings are the server's business). The prompt's tail gives the first
    token its context."""

    def __init__(
        self,
        core: Derenderer,
        prompt_token_ids: list[int] | None = None,
        skip_special_tokens: bool = True,
    ) -> None: ...
    def step(self, token_id: int) -> str:
        """The text one more id completes ("" while a character is partial)."""
    def decode(self, token_ids: list[int]) -> str:
        """The text a chunk of ids completes."""

class StreamParser:
    """A chat stream's reasoning and tool-call deltas, in process: each
    `push` answers what the server's `/v1/chat/completions/derender` stream
    call would (its chunk's choice), with the parsers kept live in memory.
    Needs a core with a reasoning or tool-call parser; `prompt_token_ids`
    as the server needs it; `stream_state` continues a stream a server (or
    `snapshot()`) left. Refusals raise `derender.errors.DerenderError`.
    One stream is one object, used from the thread that made it (a stream
    moves between threads or processes through `snapshot()`)."""

    def __init__(
        self,
        core: Derenderer,
        chat_request: Mapping[str, Any],
        prompt_token_ids: list[int] | None = None,
        stream_state: Mapping[str, Any] | None = None,
    ) -> None: ...
    def push(
        self,
        token_ids: list[int],
        finish_reason: str | None = None,
        stop_reason: int | str | None = None,
    ) -> dict[str, Any] | None:
        """The chunk's choice: `delta` (`role`, `content`, `reasoning`,
        `tool_calls`), `finish_reason`, `stop_reason`."""
    def snapshot(self) -> dict[str, Any]:
        """The `stream_state` the server would have answered after the last push."""

class PluginTokenizer:
    """The tokenizer parser plugins are constructed with (docs/plugins.md)."""

    def encode(self, text: str) -> list[int]: ...
    def decode(self, ids: list[int]) -> str: ...
    def token_to_id(self, token: str) -> int | None: ...
    def get_vocab(self) -> dict[str, int]: ...
    @property
    def vocab(self) -> dict[str, int]: ...

def native_routes() -> list[str]: ...
def parser_families(model: str | None = None) -> str:
    """JSON: {"tool": [...], "reasoning": [...]}, each row {"name", "aliases",
    "needs"} plus "fits" (null, or why the parser cannot serve `model`)."""
    ...

def resolve_dirs(
    model: str,
    revision: str | None = None,
    tokenizer: str | None = None,
    tokenizer_revision: str | None = None,
) -> tuple[str, str]: ...
