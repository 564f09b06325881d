"""A token-in/token-out engine simulator: `/inference/v1/generate` with vLLM's
shapes, answering deterministic, model-like outputs (no GPU, no weights)."""

from derender.engine.app import create_engine_app
from derender.engine.scenarios import Scenarios

__all__ = ["Scenarios", "create_engine_app"]
