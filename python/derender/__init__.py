"""derender: vLLM 0.33-compatible render/derender, with a Rust core.

The native core is importable in-process::

    from derender import Derenderer, IncrementalDetokenizer, StreamParser
    core = Derenderer("path/to/model", served_model_names=["my-model"],
                      reasoning_parser="qwen3", tool_call_parser="hermes",
                      enable_auto_tool_choice=True)
    status, body = core.handle("/v1/chat/completions/derender", request_bytes)
    answer = core.call("/v1/chat/completions/render", {"messages": [...]})  # dicts

    text = IncrementalDetokenizer(core, prompt_ids).step(token_id)
    parser = StreamParser(core, chat_request, prompt_ids)
    choice = parser.push(token_ids)          # the server's chunk choice: delta, finish_reason
    state = parser.snapshot()                # the server's stream_state

Errors are `derender.errors.DerenderError` subclasses carrying the envelope.
"""

from derender._native import Derenderer, IncrementalDetokenizer, StreamParser, __version__
from derender.errors import (
    BadRequestError,
    DerenderError,
    InternalServerError,
    NotFoundError,
    UnsupportedMediaTypeError,
)
from derender.models import DEFAULT_MODEL_DIR, DEFAULT_MODEL_NAME

__all__ = [
    "DEFAULT_MODEL_DIR",
    "DEFAULT_MODEL_NAME",
    "BadRequestError",
    "Derenderer",
    "DerenderError",
    "IncrementalDetokenizer",
    "InternalServerError",
    "NotFoundError",
    "StreamParser",
    "UnsupportedMediaTypeError",
    "__version__",
]
