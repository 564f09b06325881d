"""Record a seeded oracle for Mistral's tekken tokenizer from vLLM 0.33.0's
own `MistralTokenizer` (mistral_common's Tekkenizer under transformers'
MistralCommonBackend), in-process (no server), over tests/models/magistral.

What it records (one JSON object per line, `kind` first):

- `encode`: `tokenizer.encode(text, add_special_tokens=False)` for texts of
  many scripts, emoji, whitespace runs, code, numbers, special-token text
  and seeded random mixes: what a completions prompt renders to (before
  `<s>`).
- `decode`: `tokenizer.decode(ids, skip_special_tokens)` both ways, and
  `convert_ids_to_tokens(ids)`, for seeded random id sequences mixing
  special ids, whole characters and characters split across byte tokens.
- `stream`: what derender's incremental detokenization answers per chunk:
  `_seed_stream_state` from a prompt tail, then `_detokenize_delta` per
  chunk (the functions `OnlineDerenderer` runs), with the chunk texts, both
  `skip_special_tokens` settings, at one id per chunk and seeded sizes 1-5.
  The state is stepped in process: vLLM's server cannot serialize a state
  whose window holds a split character's `bytes` pieces (see `stream`).

    <venv with vllm==0.33.0, mistral_common==1.12.0>/bin/python \\
        tests/reference/record_tekken_oracle.py

writes tests/reference/tekken_oracle.jsonl.gz. tekken.json is unpacked from
the fixture into a temporary copy (mistral_common reads it by name).
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import tempfile
from pathlib import Path

from vllm.entrypoints.scale_out.token_in_token_out.protocol import DerenderStreamState
from vllm.renderers.online_derenderer import OnlineDerenderer, _seed_stream_state
from vllm.tokenizers.detokenizer_utils import convert_prompt_ids_to_tokens
from vllm.tokenizers.mistral import MistralTokenizer

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "models" / "magistral"
OUT = HERE / "tekken_oracle.jsonl.gz"

TEXTS = [
    "",
    "Hello, world!",
    " leading space",
    "trailing space ",
    "  two  spaces\tand\ttabs\n\nnewlines\r\n",
    "[INST] not a control token [/INST] <s></s> [TOOL_CALLS] [THINK]",
    "The weather in Paris is 21°C — sunny ☀️.",
    "🚀🚀 rocket, 👩‍👩‍👧 family, 🇫🇷 flag",
    "日本語のテキストと漢字、かな。",
    "中文文本，标点符号。",
    "한국어 텍스트",
    "العربية نص",
    "עברית",
    "Ελληνικά κείμενο",
    "Русский текст с ёжиками",
    "e\u0301 combining accent, n\u0303",
    "def f(x):\n    return x ** 2  # square\n",
    '{"city": "Paris", "days": [1, 2, 3], "ok": true, "none": null}',
    "1234567890 3.14159 -42 1e10 0x1F",
    "URL https://example.com/a/b?c=d&e=f#g",
    "CamelCaseWord snake_case_word kebab-case-word UPPER lower",
    "\u00a0non-breaking\u2003em space\u200bzero width",
    "\x00\x01 control chars \x7f",
    "a" * 300,
    " " * 50 + "x",
    "\n" * 7,
    "I'm you're we'll they'd it's",
    "mixed 中文 and English and 😀 emoji",
]

ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    " \t\n.,;:!?'\"()[]{}<>/\\|_-+=*&^%$#@~`"
    "éèàçñüößøåæœ€£¥°±×÷"
    "日本語中文字한국어العربيةעבריתΕλληνικάРусский"
    "😀🚀👍🔥🇫🇷☀️\u200d\u0301"
)


def random_texts(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40))) for _ in range(n)]


def random_ids(rng: random.Random, tok: MistralTokenizer, texts: list[str]) -> list[int]:
    """Ids a model could emit: text tokens (emoji and accents split across
    byte tokens), with special ids (the four parsers read, `</s>`, others)
    mixed in, and now and then an id outside the vocabulary."""
    ids: list[int] = []
    for _ in range(rng.randint(1, 6)):
        roll = rng.random()
        if roll < 0.55:
            ids.extend(tok.encode(rng.choice(texts), add_special_tokens=False))
        elif roll < 0.85:
            ids.append(rng.choice([9, 32, 34, 35, 2, 1, 3, 4, 17, 33, 11, 500]))
        elif roll < 0.95:
            ids.append(rng.randint(1000, len(tok) - 1))
        else:
            ids.append(len(tok) + rng.randint(0, 5))
    return ids


def chunked(ids: list[int], sizes: list[int]) -> list[list[int]]:
    chunks, i = [], 0
    for size in sizes:
        if i >= len(ids):
            break
        chunks.append(ids[i : i + size])
        i += size
    if i < len(ids):
        chunks.append(ids[i:])
    return chunks


def stream(tok: MistralTokenizer, prompt: list[int], chunks: list[list[int]], skip: bool) -> list[str]:
    # `_seed_stream_state`, built without validation: with special tokens
    # skipped, vLLM's Mistral pieces of a split character are `bytes`, which
    # the state model refuses (vLLM's server fails there; derender answers).
    if prompt:
        pieces, prefix, read = convert_prompt_ids_to_tokens(tok, prompt, skip_special_tokens=skip)
        state = DerenderStreamState.model_construct(prev_tokens=pieces, prefix_offset=prefix, read_offset=read)
    else:
        state = _seed_stream_state(tok, prompt, skip)
    texts = []
    for chunk in chunks:
        # `_detokenize_delta` reads nothing from `self`.
        text, state = OnlineDerenderer._detokenize_delta(None, tok, chunk, state, skip)  # type: ignore[arg-type]
        texts.append(text)
    return texts


def main() -> None:
    rng = random.Random(20261204)
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "magistral"
        shutil.copytree(FIXTURE, model)
        with gzip.open(model / "tekken.json.gz", "rb") as src, open(model / "tekken.json", "wb") as dst:
            shutil.copyfileobj(src, dst)
        (model / "tekken.json.gz").unlink()
        tok = MistralTokenizer.from_pretrained(str(model))
        texts = TEXTS + random_texts(rng, 400)
        records: list[dict] = []
        for text in texts:
            records.append({"kind": "encode", "text": text, "ids": tok.encode(text, add_special_tokens=False)})
        for _ in range(400):
            ids = random_ids(rng, tok, texts)
            known = [i for i in ids if 0 <= i < len(tok)]
            records.append(
                {
                    "kind": "decode",
                    "ids": known,
                    "keep": tok.decode(known, skip_special_tokens=False),
                    "skip": tok.decode(known, skip_special_tokens=True),
                    "pieces": tok.convert_ids_to_tokens(known),
                }
            )
        for _ in range(300):
            prompt = random_ids(rng, tok, texts) if rng.random() < 0.7 else []
            prompt = [i for i in prompt if 0 <= i < len(tok)]
            ids = random_ids(rng, tok, texts)
            for name, sizes in [("tok1", [1] * len(ids)), ("rand", [rng.randint(1, 5) for _ in ids])]:
                chunks = chunked(ids, sizes)
                for skip in (True, False):
                    records.append(
                        {
                            "kind": "stream",
                            "chunking": name,
                            "prompt": prompt,
                            "chunks": chunks,
                            "skip_special_tokens": skip,
                            "texts": stream(tok, prompt, chunks, skip),
                        }
                    )
    with gzip.open(OUT, "wt", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    kinds = {k: sum(r["kind"] == k for r in records) for k in ("encode", "decode", "stream")}
    print(f"wrote {OUT}: {kinds}")


if __name__ == "__main__":
    main()
