"""`GET /tokenizer_info` (`--enable-tokenizer-info-endpoint`): what vLLM 0.33.0's
`TokenizerInfo` reports, built from the model directory's files the way
transformers 5 fills the tokenizer's `init_kwargs` (tokenization_utils_base
`_from_pretrained`) and vLLM then cleans them (serve/tokenize/serving.py)."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

# transformers' Qwen2Tokenizer passes these up first, defaulted when absent.
_QWEN2_FIRST = {
    "unk_token": "<|endoftext|>",
    "bos_token": None,
    "eos_token": "<|endoftext|>",
    "pad_token": "<|endoftext|>",
    "add_prefix_space": False,
}
# CohereTokenizer's own __init__ arguments, first in its init_kwargs.
_COHERE_FIRST = {
    "errors": "replace",
    "unk_token": "<UNK>",
    "bos_token": "<BOS_TOKEN>",
    "eos_token": "<|END_OF_TURN_TOKEN|>",
    "pad_token": "<PAD>",
    "cls_token": "<CLS>",
    "sep_token": "<SEP>",
    "mask_token": "<MASK_TOKEN>",
    "use_default_system_prompt": False,
    "add_prefix_space": False,
}
# Classes loaded as themselves (not as TokenizersBackend), arguments first.
_SIGNATURE_FIRST = {"Qwen2Tokenizer": _QWEN2_FIRST, "CohereTokenizer": _COHERE_FIRST}


def tokenizer_info(
    model_dir: Path, name_or_path: str, chat_template: str | None, mode: str = "hf"
) -> dict[str, Any]:
    """The answer for the model in `model_dir` (`name_or_path`: the model argument
    as given; `chat_template`: `--chat-template`'s text, which replaces the model's;
    `mode`: the tokenizer mode served: vLLM names the mistral one's tokenizer only,
    and loads the DeepSeek encoder modes' as a plain `TokenizersBackend` wrapped in
    its own class, with `download_dir` among the kwargs it was loaded with)."""
    if mode == "mistral":
        return {"tokenizer_class": "MistralTokenizer"}
    config: dict[str, Any] = _read_json(model_dir / "tokenizer_config.json")
    hub_class = str(config.pop("tokenizer_class", "") or "").removesuffix("Fast")
    config.pop("init_inputs", None)
    # Dropped by transformers when a tokenizer.json decides them.
    config.pop("add_bos_token", None)
    config.pop("add_eos_token", None)
    jinja = model_dir / "chat_template.jinja"
    if "chat_template" not in config and jinja.is_file():
        config["chat_template"] = jinja.read_text(encoding="utf-8")
    # DeepSeek's encoder modes: a plain TokenizersBackend under a wrapper
    # class, loaded with `download_dir` among its kwargs.
    wrapper = {"deepseek_v32": "DSV32", "deepseek_v4": "DSV4", "deepseek_v41": "DSV41"}.get(mode)
    if wrapper:
        config["download_dir"] = None
    config["truncation_side"] = "left"  # vLLM loads generating models' tokenizers so
    if "additional_special_tokens" in config:
        config["extra_special_tokens"] = config.pop("additional_special_tokens")
    config["name_or_path"] = name_or_path
    config["is_local"] = os.path.isdir(name_or_path)
    config["local_files_only"] = False
    if "added_tokens_decoder" not in config:
        config["added_tokens_decoder"] = {
            str(t["id"]): t["content"] for t in _tokenizer_json(model_dir).get("added_tokens", [])
        }
    config.setdefault("backend", "tokenizers")
    if chat_template:
        config["chat_template"] = chat_template
    cls = "TokenizersBackend"
    if wrapper:
        return {"tokenizer_class": f"Cached{wrapper}{cls}", **_contents(config)}
    # The cohere mode loads the tokenizer's own transformers class.
    if hub_class == "Qwen2Tokenizer" or (mode == "cohere" and hub_class == "CohereTokenizer"):
        cls = hub_class
        first = _SIGNATURE_FIRST[hub_class]
        config = {**{k: config.get(k, d) for k, d in first.items()}, **config}
    if mode == "kimi_k3":
        # K3's tokenizer is remote code: the class `auto_map` names, cached.
        auto = config.get("auto_map", {}).get("AutoTokenizer") or [None]
        named = next((c for c in reversed(auto) if c), None) if isinstance(auto, list) else auto
        cls = str(named).rsplit(".", 1)[-1] if named else hub_class or cls
    # These modes' registry entries load a cached tokenizer, no pool.
    pool = "" if mode in ("inkling", "kimi_k3", "cohere") else "TokenizerPool"
    return {"tokenizer_class": f"{pool}Cached{cls}", **_contents(config)}


def _contents(value: Any) -> Any:
    """vLLM's `_make_json_serializable`: an AddedToken becomes its content."""
    if isinstance(value, dict):
        if value.get("__type") == "AddedToken" or (
            "content" in value and {"lstrip", "rstrip"} <= value.keys()
        ):
            return value.get("content")
        return {k: _contents(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_contents(v) for v in value]
    return value


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    loaded = json.loads(path.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else {}


def _tokenizer_json(model_dir: Path) -> dict[str, Any]:
    plain = model_dir / "tokenizer.json"
    if plain.is_file():
        return _read_json(plain)
    packed = model_dir / "tokenizer.json.gz"
    if packed.is_file():
        with gzip.open(packed, "rt", encoding="utf-8") as f:
            loaded = json.load(f)
        return loaded if isinstance(loaded, dict) else {}
    return {}
