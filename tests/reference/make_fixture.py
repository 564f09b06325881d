"""Build a stand-in model fixture: a base model dir's vocabulary with a
family's special tokens added (as its real tokenizer declares them) and the
family's own chat template, from the family's `fixture.json`:

    {"base": "python/derender/models/qwen3",        # repo-relative
     "template": "chat_template.jinja",             # beside fixture.json
     "added_tokens": [{"content": "<role>", "special": true}, ...],
     "eos_token": "<|role_end|>",
     "generation_eos": ["<|role_end|>", "<|endoftext|>"],
     "tokenizer_config": {"token_suffix": ":opensource"},   # optional
     "config": {...}}                               # optional: config.json whole
"template" may be left out (the family writes prompts in code); then the
tokenizer_config.json has no chat_template.

    python3 tests/reference/make_fixture.py tests/models/ling3

writes tokenizer.json.gz, tokenizer_config.json, config.json,
generation_config.json and special_tokens_map.json into that directory.
Added tokens take the ids after the base vocabulary's last id (added or not);
`tokenizer_config` entries (fields a parser reads from the tokenizer's
init kwargs, as Hy3's `token_suffix`) are set in tokenizer_config.json."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def read_json(path: Path) -> dict:
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    with gzip.open(path.with_suffix(path.suffix + ".gz"), "rt", encoding="utf-8") as f:
        return json.load(f)


def build(out: Path) -> None:
    spec = json.loads((out / "fixture.json").read_text(encoding="utf-8"))
    base = ROOT / spec["base"]
    tokenizer = read_json(base / "tokenizer.json")
    tok_config = read_json(base / "tokenizer_config.json")
    # After the base's last id, added or in the model vocabulary (Mistral's control
    # tokens are both, and its byte tokens follow them).
    next_id = max(
        max(t["id"] for t in tokenizer["added_tokens"]),
        max(tokenizer["model"]["vocab"].values()),
    ) + 1
    ids: dict[str, int] = {t["content"]: t["id"] for t in tokenizer["added_tokens"]}
    for token in spec["added_tokens"]:
        if token["content"] in ids:
            raise SystemExit(f"{token['content']} is already in the base vocabulary")
        entry = {
            "id": next_id,
            "content": token["content"],
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": token["special"],
        }
        tokenizer["added_tokens"].append(entry)
        decoder_entry = {k: v for k, v in entry.items() if k != "id"}
        tok_config["added_tokens_decoder"][str(next_id)] = decoder_entry
        ids[token["content"]] = next_id
        next_id += 1
    if "template" in spec:
        tok_config["chat_template"] = (out / spec["template"]).read_text(encoding="utf-8")
    else:
        # A family whose prompts are written by code, not a template (Kimi K3).
        tok_config.pop("chat_template", None)
    tok_config["eos_token"] = spec["eos_token"]
    tok_config.update(spec.get("tokenizer_config", {}))
    special = [t["content"] for t in spec["added_tokens"] if t["special"]]
    tok_config["additional_special_tokens"] = [
        *tok_config.get("additional_special_tokens", []),
        *special,
    ]
    with gzip.open(out / "tokenizer.json.gz", "wt", encoding="utf-8", compresslevel=9) as f:
        json.dump(tokenizer, f, ensure_ascii=False)
    (out / "tokenizer_config.json").write_text(
        json.dumps(tok_config, indent=2, ensure_ascii=False) + "\n"
    )
    # A family whose config vLLM reads for its own model class (Kimi K3's
    # KimiK3ForConditionalGeneration) gives it whole in `config`.
    config = spec.get("config") or read_json(base / "config.json")
    config["eos_token_id"] = ids[spec["eos_token"]]
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    generation = read_json(base / "generation_config.json")
    generation["eos_token_id"] = [ids[t] for t in spec["generation_eos"]]
    (out / "generation_config.json").write_text(json.dumps(generation, indent=2) + "\n")
    special_map = read_json(base / "special_tokens_map.json")
    special_map["eos_token"] = spec["eos_token"]
    special_map["additional_special_tokens"] = tok_config["additional_special_tokens"]
    special_map.update(spec.get("special_tokens_map", {}))
    (out / "special_tokens_map.json").write_text(
        json.dumps(special_map, indent=2, ensure_ascii=False) + "\n"
    )
    added = {t["content"]: ids[t["content"]] for t in spec["added_tokens"]}
    print(f"{out}: added {added}")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        build(Path(arg).resolve())
