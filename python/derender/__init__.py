"""derender: vLLM 0.33-compatible render/derender, with a Rust core.

The native core is importable in-process::

    from derender import Derenderer
    core = Derenderer("path/to/model", served_model_names=["my-model"])
    status, body = core.handle("/v1/chat/completions/derender", request_bytes)
"""

from derender._native import Derenderer, __version__
from derender.models import DEFAULT_MODEL_DIR, DEFAULT_MODEL_NAME

__all__ = ["DEFAULT_MODEL_DIR", "DEFAULT_MODEL_NAME", "Derenderer", "__version__"]
