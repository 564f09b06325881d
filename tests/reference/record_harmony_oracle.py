"""Record a seeded random-sequence oracle for gpt-oss (Harmony) output parsing
from vLLM 0.33.0's own HarmonyParser, in-process (no server).

What it records, per generated output id sequence (what the model emits after
the prompt's `<|start|>assistant`):

- `batch`: what batch chat derender answers: `HarmonyParser.parse` over the
  ids, then `assemble_chat_message_fields` and `resolve_finish_reason`, the
  calls `OnlineDerenderer._parse_and_assemble` / `_derender_chat` make.
- `streams`: what streaming chat derender answers per chunk: one
  `ChatStreamProcessor` (as `_derender_chat_stream_parsed` builds) stepped once
  per chunk with that chunk's ids and the finish reason on the last one. vLLM
  rebuilds the processor per call by replaying the earlier chunks with the same
  boundaries (`output_chunk_lens`); the parser is deterministic, so stepping one
  processor gives the same deltas (`--check-replay` verifies that on a sample).
  Chunkings: `tok1` (one id per chunk) and `rand` (seeded sizes 1-5). A delta is
  null where the processor returned None (vLLM then sends an empty delta);
  tool call ids are random in vLLM and left out.

The parser class is composed as `ParserManager._compose_parser` does for the
gpt_oss config (`--reasoning-parser openai_gptoss --tool-call-parser openai
--enable-auto-tool-choice`): HarmonyParser with GptOssReasoningParser and
GptOssToolParser. The tokenizer is vLLM's own (`vllm.tokenizers.get_tokenizer`)
over an unpacked copy of tests/models/gpt_oss; Harmony's encoding is loaded
from o200k_base.tiktoken unpacked from the fixture (TIKTOKEN_ENCODINGS_BASE;
oss-harmony 0.0.11 also loads without it, but an explicit file keeps the run
offline and pinned).

    <venv with vllm==0.33.0>/bin/python tests/reference/record_harmony_oracle.py

writes tests/reference/harmony_oracle.jsonl.gz: a header line (versions,
request, prompt ids) then one line per sequence. Recorded with vLLM 0.33.0,
oss-harmony 0.0.11 (openai_harmony), transformers 5.20.2, tokenizers 0.23.3.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
import io
import json
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "models" / "gpt_oss"
OUT = HERE / "harmony_oracle.jsonl.gz"

ENDOFTEXT, RETURN, CONSTRAIN, CHANNEL = 199999, 200002, 200003, 200005
START, END, MESSAGE, CALL = 200006, 200007, 200008, 200012
STOP_IDS = {RETURN, END, CALL, ENDOFTEXT}
SPECIALS = list(range(199998, 200019))

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "now",
            "description": "The current time",
            "parameters": {"type": "object", "properties": {}},
        },
    },
]


def chat_request(include_reasoning: bool) -> dict:
    return {
        "model": "gpt-oss",
        "messages": [{"role": "user", "content": "What is the weather in Tokyo?"}],
        "tools": TOOLS,
        "tool_choice": "auto",
        "include_reasoning": include_reasoning,
    }


def setup(tmp: Path):
    """Unpack the fixture, point Harmony at the vocabulary, load vLLM."""
    model = tmp / "model"
    shutil.copytree(FIXTURE, model)
    with gzip.open(model / "tokenizer.json.gz", "rb") as src:
        (model / "tokenizer.json").write_bytes(src.read())
    (model / "tokenizer.json.gz").unlink()
    enc = tmp / "enc"
    enc.mkdir()
    with gzip.open(model / "o200k_base.tiktoken.gz", "rb") as src:
        (enc / "o200k_base.tiktoken").write_bytes(src.read())
    (model / "o200k_base.tiktoken.gz").unlink()
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(enc)
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")

    import logging

    from vllm.parser.harmony import HarmonyParser
    from vllm.reasoning.gptoss_reasoning_parser import GptOssReasoningParser
    from vllm.tokenizers import get_tokenizer
    from vllm.tool_parsers.gptoss_tool_parser import GptOssToolParser

    # As ParserManager._compose_parser sets them for is_harmony.
    HarmonyParser.reasoning_parser_cls = GptOssReasoningParser
    HarmonyParser.tool_parser_cls = GptOssToolParser
    HarmonyParser.tool_strict_level = None
    logging.getLogger("vllm").setLevel(logging.ERROR)
    return get_tokenizer(str(model)), HarmonyParser


# ---------------------------------------------------------------- generator


class Gen:
    """Random Harmony-ish output ids, seeded per sequence."""

    WORDS = [
        "The",
        " weather",
        " in",
        " Tokyo",
        " is",
        " sunny",
        ".",
        " Let",
        " me",
        " check",
        "\n",
        "\n\n",
        " 42",
        "!",
        " ok",
        " <|end|>",
        " to=",
        "functions.",
        " json",
        "analysis",
        " final",
    ]
    UNICODE = ["東京", "天気", "晴れ", "🦀", "😀", "👍🏽", "🇯🇵", "é", "Ω", "∑", "中文测试", "🌧️"]
    JSON_ARGS = [
        '{"city": "Tokyo"}',
        '{"city":"東京"}',
        '{ "city" : "Paris" , "x": [1, 2.50, true, null] }',
        "{}",
        '{"city": "Tok',
        "not json",
        '{"a": {"b": "🦀"}}',
        "",
        '["x"]',
        '"str"',
        "1e3",
    ]
    RECIPIENTS = [
        "functions.get_weather",
        "functions.now",
        "functions.unknown_tool",
        "get_weather",
        "now",
        "browser.search",
        "browser.open",
        "python",
        "container.exec",
        "assistant",
        "functions.",
        "functions.get_weather.extra",
        "user",
        # `to=` with nothing after it: Harmony's recipient is "", not None.
        "",
        " ",
        "functions.now json",
    ]
    CHANNELS = ["analysis", "commentary", "final"]
    ODD_CHANNELS = ["", "analysis ", "reasoning", "commentary json", "Final", " final", "final\n"]
    ROLES = ["user", "system", "developer", "tool", "bob", "functions.get_weather"]

    def __init__(self, tok, rng: random.Random):
        self.tok = tok
        self.rng = rng
        self.split_pool = self._split_pieces()

    def _split_pieces(self) -> list[list[int]]:
        """Ids of characters that take several tokens (partial UTF-8 bytes)."""
        pool = []
        for ch in self.UNICODE + ["𝔘", "🧑‍🚀", "ﷺ", "ゐ", "ꙮ", "🫠", "𓀀"]:
            ids = self.text(ch)
            if len(ids) > 1:
                pool.append(ids)
        return pool

    def text(self, s: str) -> list[int]:
        return self.tok.encode(s, add_special_tokens=False)

    def content(self, kind: str) -> list[int]:
        r = self.rng
        if kind == "json":
            return self.text(r.choice(self.JSON_ARGS))
        out: list[int] = []
        for _ in range(r.randint(0, 6)):
            x = r.random()
            if x < 0.55:
                out += self.text(r.choice(self.WORDS))
            elif x < 0.8:
                out += self.text(r.choice(self.UNICODE))
            elif x < 0.95 and self.split_pool:
                # A multi-token character, sometimes cut short (lone bytes).
                piece = r.choice(self.split_pool)
                out += piece if r.random() < 0.8 else piece[: r.randint(1, len(piece) - 1)]
            else:
                out.append(r.randint(0, 199997))
        return out

    def recipient(self) -> str:
        return self.rng.choice(self.RECIPIENTS)

    def constrain(self) -> list[int]:
        x = self.rng.random()
        if x < 0.4:
            return [CONSTRAIN] + self.text("json")
        if x < 0.6:
            return self.text(" json")
        if x < 0.65:
            return [CONSTRAIN] + self.text("text")
        return []

    def header(self, first: bool) -> tuple[list[int], str]:
        """A message header (after `<|start|>` unless first) and its kind."""
        r = self.rng
        ids: list[int] = []
        if not first:
            role = "assistant" if r.random() < 0.9 else r.choice(self.ROLES)
            ids += self.text(role)
        channel = r.choice(self.CHANNELS)
        if r.random() < 0.05:
            channel = r.choice(self.ODD_CHANNELS)
        tool = r.random() < 0.45
        rec = self.recipient() if tool else None
        place = r.random()
        if rec is not None and place < 0.35:
            # Recipient in the role part of the header, before the channel.
            ids += self.text(f" to={rec}")
            ids += [CHANNEL] + self.text(channel)
            ids += self.constrain() if r.random() < 0.7 else []
        elif rec is not None and place < 0.9:
            ids += [CHANNEL] + self.text(f"{channel} to={rec}")
            cons = self.constrain()
            if cons and cons[0] == CONSTRAIN and r.random() < 0.7:
                ids += self.text(" ")
            ids += cons
        elif rec is not None:
            # A bare recipient, no channel.
            ids += self.text(f" to={rec}")
            ids += self.constrain() if r.random() < 0.5 else []
        else:
            ids += [CHANNEL] + self.text(channel)
            if r.random() < 0.1:
                ids += self.constrain()
        ids.append(MESSAGE)
        return ids, ("tool" if rec else channel)

    def message(self, first: bool) -> list[int]:
        r = self.rng
        head, kind = self.header(first)
        ids = ([] if first else [START]) + head
        ids += self.content("json" if kind == "tool" and r.random() < 0.85 else "text")
        return ids

    def terminator(self, last: bool) -> list[int]:
        r = self.rng
        if not last:
            return [END] if r.random() < 0.85 else [r.choice([CALL, RETURN, END])]
        x = r.random()
        if x < 0.35:
            return [RETURN]
        if x < 0.55:
            return [CALL]
        if x < 0.65:
            return [END]
        if x < 0.72:
            return [ENDOFTEXT]
        if x < 0.8:
            return [END, RETURN]
        return []

    def well_formed(self) -> list[int]:
        n = self.rng.choice([1, 1, 2, 2, 3, 4])
        ids: list[int] = []
        for i in range(n):
            ids += self.message(first=i == 0)
            ids += self.terminator(last=i == n - 1)
        return ids

    def mutate(self, ids: list[int]) -> list[int]:
        r = self.rng
        ids = list(ids)
        for _ in range(r.randint(1, 3)):
            op = r.randrange(9)
            pos = r.randint(0, len(ids))
            if op == 0:
                ids.insert(pos, r.choice(SPECIALS))
            elif op == 1 and ids:
                del ids[min(pos, len(ids) - 1)]
            elif op == 2:
                ids[pos:pos] = [START, START] + self.text("assistant")
            elif op == 3:
                # A header for another role.
                head = [START] + self.text(r.choice(self.ROLES)) + [CHANNEL]
                ids[pos:pos] = head + self.text("final") + [MESSAGE] + self.content("text")
            elif op == 4 and MESSAGE in ids:
                # Missing <|message|>.
                where = [i for i, t in enumerate(ids) if t == MESSAGE]
                del ids[r.choice(where)]
            elif op == 5 and CHANNEL in ids:
                # A second <|channel|> in the header.
                where = [i for i, t in enumerate(ids) if t == CHANNEL]
                i = r.choice(where)
                ids[i + 1 : i + 1] = self.text("analysis") + [CHANNEL]
            elif op == 6 and CHANNEL in ids:
                # Empty channel value.
                where = [i for i, t in enumerate(ids) if t == CHANNEL]
                i = r.choice(where)
                j = i + 1
                while j < len(ids) and ids[j] < 199998:
                    j += 1
                del ids[i + 1 : j]
            elif op == 7:
                ids.insert(pos, r.choice([END, RETURN, CALL, CONSTRAIN, MESSAGE, CHANNEL]))
            else:
                ids[pos:pos] = self.content("text")
        return ids

    def sequence(self) -> tuple[str, list[int]]:
        r = self.rng
        x = r.random()
        if x < 0.5:
            kind, ids = "well_formed", self.well_formed()
        elif x < 0.62:
            kind, ids = "truncated", self.well_formed()
            ids = ids[: r.randint(1, max(1, len(ids)))]
        elif x < 0.9:
            kind, ids = "garbage", self.mutate(self.well_formed())
        elif x < 0.95:
            kind, ids = "plain", self.content("text") + self.content("text")
            if r.random() < 0.5:
                ids.append(r.choice([RETURN, END, CALL, ENDOFTEXT]))
        else:
            kind = "random_specials"
            ids = [
                r.choice(SPECIALS) if r.random() < 0.5 else r.choice(self.text(" hi 東京"))
                for _ in range(r.randint(1, 12))
            ]
        if not ids:
            ids = self.text("x")
        return kind, ids[:120]


# ---------------------------------------------------------------- oracle


def chunk_lens(n: int, rng: random.Random) -> list[int]:
    lens = []
    while n > 0:
        k = min(n, rng.randint(1, 5))
        lens.append(k)
        n -= k
    return lens


def tool_calls_out(calls) -> list[list]:
    return [[c.function.name, c.function.arguments] for c in calls]


def delta_out(delta) -> dict | None:
    if delta is None:
        return None
    out: dict = {}
    if delta.content is not None:
        out["content"] = delta.content
    if delta.reasoning is not None:
        out["reasoning"] = delta.reasoning
    if delta.tool_calls:
        out["tool_calls"] = [
            [
                tc.index,
                tc.function.name if tc.function else None,
                tc.function.arguments if tc.function else None,
            ]
            for tc in delta.tool_calls
        ]
    return out


class Oracle:
    def __init__(self, tokenizer, parser_cls):
        from vllm.entrypoints.openai.chat_completion.message_assembly import (
            assemble_chat_message_fields,
        )
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.entrypoints.openai.chat_completion.stream_processor import (
            ChatStreamProcessor,
        )
        from vllm.entrypoints.serve.utils.tool_calls_utils import resolve_finish_reason

        self.tok = tokenizer
        self.cls = parser_cls
        self.assemble = assemble_chat_message_fields
        self.processor_cls = ChatStreamProcessor
        self.resolve = resolve_finish_reason
        self.requests = {
            flag: ChatCompletionRequest.model_validate(chat_request(flag)) for flag in (True, False)
        }

    def parser(self, request):
        # As OnlineDerenderer builds it (chat_template_kwargs are {} for Harmony).
        return self.cls(self.tok, request.tools, chat_template_kwargs={}, model_config=None)

    def batch(self, ids, finish, include_reasoning, prompt_ids) -> dict:
        request = self.requests[include_reasoning].model_copy(deep=True)
        parser = self.parser(request)
        parser.set_prompt_token_ids(prompt_ids)
        # Harmony parses the ids; the text argument is unused.
        reasoning, content, calls = parser.parse(
            "", request, enable_auto_tools=True, model_output_token_ids=ids
        )
        fields = self.assemble(
            request, reasoning, content, calls, enable_auto_tools=True, parser_cls=self.cls
        )
        return {
            "reasoning": fields.reasoning,
            "content": fields.content,
            "tool_calls": tool_calls_out(fields.tool_calls),
            "finish_reason": self.resolve(finish, request, bool(fields.tool_calls)),
        }

    def stream(self, ids, lens, finish, include_reasoning, prompt_ids, replay=False) -> dict:
        request = self.requests[include_reasoning].model_copy(deep=True)

        def processor():
            return self.processor_cls(
                request, self.parser(request), enable_auto_tools=True, parser_cls=self.cls
            )

        proc = processor()
        deltas, finish_reason, start = [], None, 0
        for i, k in enumerate(lens):
            chunk = ids[start : start + k]
            last = i == len(lens) - 1
            if replay:
                # What vLLM's derender does per call: rebuild, replay, step.
                proc = processor()
                s = 0
                for k0 in lens[:i]:
                    proc.step("", ids[s : s + k0], None, prompt_ids)
                    s += k0
            delta, fr = proc.step("", chunk, finish if last else None, prompt_ids)
            deltas.append(delta_out(delta))
            finish_reason = fr if last else finish_reason
            start += k
        return {"lens": lens, "deltas": deltas, "finish_reason": finish_reason}


def prompt_ids(tok) -> list[int]:
    """A Harmony prompt ending in `<|start|>assistant` (the ids only seed the
    detokenizer; the Harmony parser does not read them)."""
    text = (
        "<|start|>system<|message|>You are ChatGPT.\nReasoning: medium<|end|>"
        "<|start|>user<|message|>What is the weather in Tokyo?<|end|><|start|>assistant"
    )
    return tok.encode(text, add_special_tokens=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=20260115)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--check-replay",
        type=int,
        default=60,
        help="sequences whose streams are also rebuilt per chunk (vLLM's replay)",
    )
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="harmony_oracle_"))
    try:
        tok, parser_cls = setup(tmp)
        oracle = Oracle(tok, parser_cls)
        prompt = prompt_ids(tok)
        assert prompt[-2:] == [START, 173781], prompt[-2:]
        versions = {
            p: importlib.metadata.version(p)
            for p in ("vllm", "oss-harmony", "transformers", "tokenizers")
        }
        header = {
            "header": {
                "versions": versions,
                "seed": args.seed,
                "count": args.count,
                "chat_request": chat_request(True),
                "include_reasoning": "per record (about 15% false), overriding chat_request",
                "prompt_token_ids": prompt,
                "served_model_name": "gpt-oss",
                "flags": [
                    "--reasoning-parser",
                    "openai_gptoss",
                    "--tool-call-parser",
                    "openai",
                    "--enable-auto-tool-choice",
                ],
                "recorder": "tests/reference/record_harmony_oracle.py",
            }
        }
        kinds: dict[str, int] = {}
        # mtime=0: the same seed gives the same bytes.
        gz = gzip.GzipFile(args.out, "wb", compresslevel=9, mtime=0)
        with io.TextIOWrapper(gz, encoding="utf-8") as out:
            out.write(json.dumps(header, ensure_ascii=False) + "\n")
            for n in range(args.count):
                rng = random.Random(args.seed * 100_003 + n)
                kind, ids = Gen(tok, rng).sequence()
                include_reasoning = rng.random() >= 0.15
                finish = "stop" if ids[-1] in STOP_IDS else "length"
                record = {
                    "n": n,
                    "kind": kind,
                    "include_reasoning": include_reasoning,
                    "ids": ids,
                    "finish": finish,
                    "batch": oracle.batch(ids, finish, include_reasoning, prompt),
                    "streams": {
                        "tok1": oracle.stream(
                            ids, [1] * len(ids), finish, include_reasoning, prompt
                        ),
                        "rand": oracle.stream(
                            ids, chunk_lens(len(ids), rng), finish, include_reasoning, prompt
                        ),
                    },
                }
                for name in ("tok1", "rand") if n < args.check_replay else ():
                    s = record["streams"][name]
                    again = oracle.stream(
                        ids, s["lens"], finish, include_reasoning, prompt, replay=True
                    )
                    assert again == s, (n, name, again, s)
                # tok1's lens are implied.
                record["streams"]["tok1"]["lens"] = None
                kinds[kind] = kinds.get(kind, 0) + 1
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        print(f"wrote {args.count} sequences to {args.out} ({args.out.stat().st_size} bytes)")
        print("kinds:", kinds, "versions:", versions)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
