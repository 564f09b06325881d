"""The bundled default model: the Qwen3 tokenizer (no weights), gzip'd."""

from pathlib import Path

DEFAULT_MODEL_DIR = Path(__file__).parent / "qwen3"
DEFAULT_MODEL_NAME = "Qwen/Qwen3-0.6B"
