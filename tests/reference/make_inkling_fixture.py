"""Build tests/models/inkling: Inkling's vocabulary (o200k_base plus TMLv0's 60 special tokens)
under a text-only `InklingForCausalLM` config.json.

The BPE is tests/models/gpt_oss's tokenizer.json (o200k_base.tiktoken, sha256 446a9538...,
converted with transformers' TikTokenConverter; 199,998 ranks), whose added tokens are
replaced by Inkling's special-token table: ids 199998-200057 as the `tml-renderers` 0.2.1
wheel on PyPI (Thinking Machines Lab's own renderer package; its `data/o200k_base.tiktoken` is
the same file, sha256 446a9538...) declares them in `O200kBaseChatTokenizer().special_tokens()` /
`encode_special(name)`, the tokenizer its TMLv0 (Inkling) renderer uses. Each name NAME is
spelled `<|NAME|>` (vLLM's spellings: vllm/renderers/inkling_encoding.py:208-223,
vllm/parser/inkling.py:46-53), except `content_xml` (200024), spelled `<|unused_200024|>` as
vLLM says the Inkling HF vocabulary spells it (inkling_encoding.py:234-237, 248). All are
special. Model vocab_size 201024 / unpadded 200058 and eos 200006 are the public Inkling
checkpoints' values.

    python3 tests/reference/make_inkling_fixture.py [--check-tml DIR_WITH_tml_renderers]

writes tokenizer.json.gz, tokenizer_config.json, config.json and generation_config.json into
tests/models/inkling. --check-tml compares the result with tml_renderers' own tokenizer
(encode_ordinary on sample strings, every special id) when that package can be imported.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
BASE = ROOT / "tests" / "models" / "gpt_oss" / "tokenizer.json.gz"
OUT = ROOT / "tests" / "models" / "inkling"

# tml-renderers 0.2.1, O200kBaseChatTokenizer: id -> name, 199998..200057 (60 tokens)
_NAMED = {
    199998: "unused",
    199999: "endoftext",
    200000: "message_user",
    200001: "message_model",
    200002: "message_system",
    200003: "message_tool",
    200004: "content_text",
    200005: "content_image",
    200006: "content_model_end_sampling",
    200008: "content_thinking",
    200010: "end_message",
    200020: "content_audio_input",
    200022: "content_tool_error",
    200023: "audio",
    200024: "content_xml",
    200028: "begin_of_text",
    200043: "audio_end",
    200049: "content_invoke_tool_json",
    200057: "content_invoke_tool_text",
}
SPECIALS = {i: _NAMED.get(i, f"unused_{i}") for i in range(199998, 200058)}
# vLLM: "The Inkling HF tokenizer exposes some semantic slots as <|unused_NNNNNN|> tokens
# (notably CONTENT_XML = <|unused_200024|>)"
HF_SPELLING = {"content_xml": "<|unused_200024|>"}


def spelled(name: str) -> str:
    return HF_SPELLING.get(name, f"<|{name}|>")


CONFIG = {
    "architectures": ["InklingForCausalLM"],
    "model_type": "inkling_model",
    "eos_token_id": 200006,
    "vocab_size": 201024,
    "unpadded_vocab_size": 200058,
    "model_max_length": 1048576,
    "max_position_embeddings": 1048576,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "torch_dtype": "bfloat16",
}


def build() -> None:
    with gzip.open(BASE, "rt", encoding="utf-8") as f:
        tok = json.load(f)
    assert len(tok["model"]["vocab"]) == 199998
    tok["added_tokens"] = [
        {
            "id": i,
            "content": spelled(name),
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for i, name in sorted(SPECIALS.items())
    ]
    OUT.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(OUT / "tokenizer.json.gz", "wb", mtime=0) as g:
        g.write(json.dumps(tok, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    tok_config = {
        "bos_token": "<|begin_of_text|>",
        "eos_token": "<|content_model_end_sampling|>",
        "pad_token": "<|endoftext|>",
        "model_max_length": 1048576,
        "tokenizer_class": "PreTrainedTokenizerFast",
        "clean_up_tokenization_spaces": False,
    }
    (OUT / "tokenizer_config.json").write_text(json.dumps(tok_config, indent=2) + "\n")
    (OUT / "config.json").write_text(json.dumps(CONFIG, indent=2) + "\n")
    gen = {"eos_token_id": 200006, "transformers_version": "4.57.0"}
    (OUT / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")
    print(f"wrote {OUT}")


def check_tml(path: str) -> None:
    sys.path.insert(0, path)
    from tml_renderers._tml_renderers import O200kBaseChatTokenizer  # type: ignore
    from tokenizers import Tokenizer

    tml = O200kBaseChatTokenizer()
    with gzip.open(OUT / "tokenizer.json.gz", "rt", encoding="utf-8") as f:
        hf = Tokenizer.from_str(f.read())
    for name in tml.special_tokens():
        i = tml.encode_special(name)
        assert SPECIALS[i] == name, (i, name)
    samples = [
        "Hello, world!", "What's the weather like in Paris?", "日本の首都は東京です。🗼",
        '{"name":"get_weather","args":{"city":"SF"}}', "  leading\n\n\ttabs  and   spaces ",
        "I'm 12345 years' old; 3.14159", "Thinking effort level: 0.99", "émoji 🙂🙃 done",
        "tool_declare", "get_weather", "<|message_model|> typed by a user",
    ]
    for s in samples:
        a = tml.encode_ordinary(s)
        b = hf.encode(s, add_special_tokens=False).ids
        if "<|" in s:
            continue  # tml's encode_ordinary never reads specials; the HF one does
        assert a == b, (s, a, b)
    print(f"tml_renderers agrees: {len(tml.special_tokens())} specials, {len(samples)} strings")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check-tml", help="a directory holding the tml_renderers package")
    args = ap.parse_args()
    build()
    if args.check_tml:
        check_tml(args.check_tml)
