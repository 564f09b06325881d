"""Record cohere-melody 0.15.3's output filter (``PyFilter`` with the
``PyFilterOptions().cmd3()`` / ``.cmd4()`` options vLLM 0.33.0's
``CohereCommandParser`` uses) as an oracle for derender's Rust filter
(rust/core/src/parse/families/cohere/filter, whose tests replay it).

Each line of the output is one case:
``{"preset": "cmd3"|"cmd4", "mode": "stream"|"batch", "chunks": [...], "outputs": [...]}``.
A stream case calls ``write_decoded`` per chunk then ``flush_partials``; a
batch case calls ``process_full_text`` on the chunks joined (its ``chunks``
holds the one text). ``outputs`` has one result per call in FILTER.md's
notation: ``c`` content, ``r`` reasoning, ``tc`` ``[index, id, name,
arguments]`` per tool call, ``cit`` ``[start, end, text, [[tool_call_index,
[result indices]], ...], is_thinking]`` per citation; absent parts left out.

Texts come from:

- the recorded corpora: the output token ids of the cohere_command3 /
  cohere_command4 chat derender goldens and unseen cases, decoded with
  tests/models/cohere_command/tokenizer.json.gz keeping special tokens and
  leaving out the final end-of-turn id, as vLLM does (``skip_special_tokens``
  is forced off by the parser; the EOS stop token's text is not output);
  streams are cut per token (incremental decoding, an incomplete UTF-8 char
  held back) and as the recorded stream chunked them;
- the model outputs of vLLM's own parser tests (unseen/cohere_command_outputs.py);
- the examples of tests/models/cohere_command/FILTER.md section 10, with
  their chunkings (a mismatch with the recorded answer is reported);
- hand-written edge cases and seeded random texts built from the special
  tokens, citation and tool-call JSON fragments, whitespace and non-ASCII
  text, each cut several ways (whole, per char, random, inside markers).

Run with the Python that has cohere-melody 0.15.3 (vLLM's venv):

    <venv with cohere-melody==0.15.3>/bin/python tests/reference/record_cohere_filter.py

Recorded with cohere-melody 0.15.3, tokenizers 0.23.3.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
import importlib.util
import json
import random
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import cohere_melody
from tokenizers import Tokenizer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MODEL = ROOT / "tests" / "models" / "cohere_command"
OUT = HERE / "cohere" / "filter_oracle.jsonl.gz"
EOS = 255001
PRESETS = ("cmd3", "cmd4")
CONFIG_PRESET = {"cohere_command3": "cmd3", "cohere_command4": "cmd4"}

MODE_TOKENS = [
    "<|START_THINKING|>",
    "<|END_THINKING|>",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<|START_TEXT|>",
    "<|END_TEXT|>",
]
OTHER_SPECIALS = [
    "<|END_OF_TURN_TOKEN|>",
    "<|USER_TOKEN|>",
    "<|CHATBOT_TOKEN|>",
    "<|SYSTEM_TOKEN|>",
]
BROKEN_SPECIALS = ["<|", "|>", "<|START_", "<|END_TEX", "<|START_THINKING", "<START_TEXT|>", "<||>"]
MARKERS = MODE_TOKENS + OTHER_SPECIALS + ["<co>", "</co: "]
CITATION_FRAGMENTS = [
    "<co>",
    "</co: 0:[1,2]>",
    "</co: 1:[0]>",
    "</co: 0:[1],1:[x,2]>",
    "</co: z>",
    "</co: >",
    "</co 0:[1]>",
    "</co:",
    "</co: ",
    "</co",
    "</",
    "<co",
    "<c",
    "<",
    ">",
    "</co: 0:[1",
    "</co: +1:[ 2 , 3]>",
    "</co: ,0:[1]]>",
    "</co: 0:[1]]]>",
    "<co: 1>",
    "</co: 99999999999999999999:[1]>",
    "</co: 0:[1,,2]>",
]
JSON_FRAGMENTS = [
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    '"',
    "\\",
    '\\"',
    '"tool_call_id": "0"',
    '"tool_call_id": ',
    '"tool_call_id":',
    '"tool_call": "7"',
    '"tool_call_id": 3',
    '"tool_name": "get_weather"',
    '"tool_name": ',
    '"tool_name":"f"',
    '"parameters": {',
    '"parameters": {}',
    '"parameters": ',
    '"parameters": {"city": "Paris"}',
    '"parameters":{ "q" : 1 }',
    '"a": 1',
    '"b": [1, 2.5e3, -0, true, null]',
    '"s": "x\\"y\\\\"',
    '"u": "\\ud83c\\udf08"',
    '"bad": "\\ud800"',
    '"n": 1e400',
    '"t": tru',
    '{"x": {"y": [',
    "]}}",
    "\n    ",
    "\n        ",
    "null",
    "false",
    '"\\u00e9"',
    "1.5e-3",
    "-",
    "01",
]
SPACES = [" ", "  ", "\n", "\n\n", "\t", "\u00a0", "\u3000", "\r\n", "        ", " \n "]
WORDS = [
    "hello",
    "Paris",
    "x",
    "Let me think.",
    "The answer is",
    "é",
    "🌈",
    "日本語",
    "ß",
    "a",
    "1 < 2",
    "->",
    "'",
    "ok",
]

# Hand-written texts for paths the random ones seldom reach.
EDGE_TEXTS = [
    "",
    " ",
    "<",
    "<|",
    "<|START_TEXT|>",
    "<|START_TEXT|>   ",
    "<|START_THINKING|>   <|END_THINKING|>",
    "<|START_THINKING|>\u00a0\u3000x\u2003<|END_THINKING|><|START_RESPONSE|>\u2003 y\u00a0",
    "<|START_TEXT|>a <co>b</co: 0:[1]><co>c</co: 1:[2]> d <co>e</co: 2:[3]>",
    "<|START_TEXT|><co></co: 0:[0]>x",
    "<|START_TEXT|>x</co: 0 <co>y</co: 1:[1]> z",
    "<|START_TEXT|></co: 0 <co>y",
    "<|START_TEXT|>a <co>b<co>c</co: 0:[1]> d",
    "<|START_TEXT|>a <co>b</co: 0:[1]> <c",
    "<|START_TEXT|>é <co>日本</co: 0:[1]> 🌈 <co>ß</co: 1:[2]>",
    "<|START_THINKING|>think <co>cited</co: 0:[1]> more<|END_THINKING|>"
    "<|START_TEXT|>ans <co>wer</co: 1:[0]><|END_TEXT|>",
    "<|START_ACTION|>" + "[" * 3 + "]" * 3,
    '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": {"a": '
    + "[" * 126
    + "]" * 126
    + '}}, {"tool_call_id": "1", "tool_name": "g", "parameters": {"b": 2}}]<|END_ACTION|>',
    '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": {"a": '
    + "[" * 127
    + "]" * 127
    + '}}, {"tool_call_id": "1", "tool_name": "g", "parameters": {"b": 2}}]<|END_ACTION|>',
]
NUMBER_EDGES = [
    "1e308",
    "2e308",
    "1e400",
    "-1e400",
    "0e999999",
    "1.7976931348623157e308",
    "1.7976931348623158e308",
    "1.7976931348623159e308",
    "17976931348623157e292",
    "1" + "0" * 308,
    "1" + "0" * 309,
    "18446744073709551615",
    "18446744073709551616",
    "18446744073709551616.5e290",
    "1844674407370955161.5e290",
    "1844674407370955161.9e290",
    "0.0000000000000000000000001e330",
    "1e2147483647",
    "1e2147483648",
    "0e2147483648",
    "1e-2147483648",
    "1.5",
    "-0.0e-0",
    "1.",
    "1e",
    "1e+",
    "-",
    "01",
    "1.e5",
]
STRING_EDGES = [
    '"\\ud800"',
    '"\\udc00"',
    '"\\ud83c\\udf08"',
    '"\\ud800\\u0041"',
    '"\\ud800\\n"',
    '"\\ud800x"',
    '"\\uD83D\\uDE00"',
    '"\\u00zz"',
    '"\\q"',
    '"tab\there"',
    '"\x7f"',
    '"\\/\\b\\f\\n\\r\\t\\\\"',
]
for value in (
    NUMBER_EDGES
    + STRING_EDGES
    + ["true", "nul", "[1,]", '{"k" 1}', "[1 2]", '{"k":1,}', "{}", "[]"]
):
    EDGE_TEXTS.append(
        '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": {"a": '
        + value
        + '}}, {"tool_call_id": "1", "tool_name": "g", "parameters": {"b": 2}}]<|END_ACTION|>'
    )
for value in ["12", '"s"', "[1]", "null", "{ }", '{"a"', "-5", "tru"]:
    EDGE_TEXTS.append(
        '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": '
        + value
        + '}, {"tool_call_id": "1", "tool_name": "g", "parameters": {"b": 2}}]<|END_ACTION|>'
    )


def notation(result: Any) -> dict[str, Any]:
    """One PyFilter result in FILTER.md's notation."""
    out: dict[str, Any] = {}
    if result.content is not None:
        out["c"] = result.content
    if result.reasoning is not None:
        out["r"] = result.reasoning
    if result.tool_calls:
        out["tc"] = [[t.index, t.id, t.name, t.arguments] for t in result.tool_calls]
    if result.citations:
        out["cit"] = [
            [
                c.start_index,
                c.end_index,
                c.text,
                [[s.tool_call_index, list(s.tool_result_indices)] for s in c.sources],
                c.is_thinking,
            ]
            for c in result.citations
        ]
    return out


def new_filter(preset: str) -> Any:
    return cohere_melody.PyFilter(getattr(cohere_melody.PyFilterOptions(), preset)())


def record(preset: str, mode: str, chunks: Sequence[str]) -> dict[str, Any]:
    melody = new_filter(preset)
    if mode == "batch":
        outputs = [notation(melody.process_full_text("".join(chunks)))]
        chunks = ["".join(chunks)]
    else:
        outputs = [notation(melody.write_decoded(chunk)) for chunk in chunks]
        outputs.append(notation(melody.flush_partials()))
    return {"preset": preset, "mode": mode, "chunks": list(chunks), "outputs": outputs}


# ---- chunkings ----


def random_cuts(text: str, rng: random.Random, largest: int) -> list[str]:
    chunks: list[str] = []
    at = 0
    while at < len(text):
        size = rng.randint(1, largest)
        chunks.append(text[at : at + size])
        at += size
    return chunks


def marker_cuts(text: str, rng: random.Random) -> list[str]:
    """Cuts inside every marker occurrence, plus a few random ones."""
    cuts = {rng.randrange(1, len(text)) for _ in range(len(text) // 12)} if len(text) > 1 else set()
    for marker in MARKERS:
        for found in re.finditer(re.escape(marker), text):
            cuts.add(found.start() + rng.randrange(1, len(marker)))
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def chunkings(text: str, rng: random.Random, count: int) -> list[list[str]]:
    makers: list[Callable[[], list[str]]] = [
        lambda: list(text) if len(text) <= 300 else random_cuts(text, rng, 3),
        lambda: random_cuts(text, rng, 4),
        lambda: random_cuts(text, rng, 12),
        lambda: marker_cuts(text, rng),
        lambda: [text],
    ]
    picked = rng.sample(makers, k=min(count, len(makers)))
    return [maker() for maker in picked]


# ---- sources ----


def corpus_files() -> Iterator[tuple[str, Path]]:
    for config in CONFIG_PRESET:
        for kind in ("goldens", "unseen"):
            path = HERE / kind / f"{config}.jsonl.gz"
            if path.exists():
                yield config, path


def corpus_outputs() -> Iterator[tuple[str, list[int], list[int]]]:
    """(config, output ids without the final EOS, stream chunk sizes) per chat derender choice."""
    for config, path in corpus_files():
        with gzip.open(path, "rt") as lines:
            for line in lines:
                case = json.loads(line)
                if case["endpoint"] != "/v1/chat/completions/derender" or case["kind"] not in (
                    "batch",
                    "stream",
                ):
                    continue
                by_choice: dict[int, list[list[int]]] = {}
                for call in case["calls"]:
                    request = call["request"]
                    body = request.get("generate_response") or request.get("generate_chunk") or {}
                    for choice in body.get("choices") or []:
                        by_choice.setdefault(choice["index"], []).append(
                            list(choice.get("token_ids") or [])
                        )
                for pieces in by_choice.values():
                    ids = [token for piece in pieces for token in piece]
                    sizes = [len(piece) for piece in pieces]
                    if ids and ids[-1] == EOS:
                        ids.pop()
                        sizes[-1] -= 1
                    yield config, ids, [size for size in sizes if size > 0]


def token_deltas(tokenizer: Tokenizer, ids: Sequence[int]) -> list[str]:
    """Per-token text the way vLLM's incremental detokenizer cuts it: the
    text of the tokens since a prefix offset, minus that of the prefix; an
    unfinished UTF-8 char waits for the next token."""
    deltas: list[str] = []
    prefix_offset = read_offset = 0
    for end in range(1, len(ids) + 1):
        prefix_text = tokenizer.decode(
            list(ids[prefix_offset:read_offset]), skip_special_tokens=False
        )
        new_text = tokenizer.decode(list(ids[prefix_offset:end]), skip_special_tokens=False)
        last = end == len(ids)
        if len(new_text) > len(prefix_text) and (last or not new_text.endswith("\ufffd")):
            deltas.append(new_text[len(prefix_text) :])
            prefix_offset, read_offset = read_offset, end
        else:
            deltas.append("")
    return deltas


def group(deltas: Sequence[str], sizes: Sequence[int]) -> list[str]:
    chunks: list[str] = []
    at = 0
    for size in sizes:
        chunks.append("".join(deltas[at : at + size]))
        at += size
    if at < len(deltas):
        chunks.append("".join(deltas[at:]))
    return chunks


def vllm_test_outputs() -> list[str]:
    path = HERE / "unseen" / "cohere_command_outputs.py"
    if not path.exists():
        return []
    spec = importlib.util.spec_from_file_location("cohere_command_outputs", path)
    if spec is None or spec.loader is None:
        return []
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [output["text"] for output in module.OUTPUTS]


def filter_md_examples() -> list[tuple[str, str, list[list[str]], str, list[dict[str, Any]]]]:
    """Per example: title, preset, stream chunkings, batch text, and the
    outputs FILTER.md gives (batch first, then the stream's)."""
    text = (MODEL / "FILTER.md").read_text()
    section = text.split("## 10.", 1)[-1]
    examples = []
    for block in section.split("\n#### ")[1:]:
        title = block.splitlines()[0]
        preset_match = re.search(r"\((cmd[34])\)\s*$", title)
        input_match = re.search(r'^input: `(".*")`$', block, re.M)
        batch_match = re.search(r"^- batch `process_full_text`: `(\{.*\})`$", block, re.M)
        if not (preset_match and input_match and batch_match):
            continue
        writes = re.findall(r'^  - write `(".*")` → `(\{.*\})`$', block, re.M)
        flush = re.search(r"^  - flush_partials\(\) → `(\{.*\})`$", block, re.M)
        chunks = [json.loads(chunk) for chunk, _ in writes]
        expected = [json.loads(batch_match.group(1))] + [json.loads(out) for _, out in writes]
        if flush:
            expected.append(json.loads(flush.group(1)))
        examples.append(
            (title, preset_match.group(1), [chunks], json.loads(input_match.group(1)), expected)
        )
    return examples


# ---- random texts ----


def random_call(rng: random.Random, index: int, pretty: bool) -> str:
    params: dict[str, Any] = rng.choice(
        [
            {},
            {"city": rng.choice(["Paris", "Lima", "Zürich", "東京"])},
            {"query": "weather", "n": rng.randint(0, 99), "flags": [True, None, 1.5]},
            {"nested": {"deep": [1, {"x": 'y\n"z"'}]}},
        ]
    )
    keys = ["tool_call_id", "tool_name", "parameters"]
    if rng.random() < 0.1:
        rng.shuffle(keys)
    values = {
        "tool_call_id": str(index) if rng.random() < 0.92 else index,
        "tool_name": rng.choice(["get_weather", "f", "search_web", "naïve"]),
        "parameters": params,
    }
    call = {key: values[key] for key in keys}
    ascii_only = rng.random() < 0.5
    if pretty:
        return json.dumps(call, indent=4, ensure_ascii=ascii_only)
    # \s in melody's key patterns is Unicode whitespace, JSON's is not.
    separators = rng.choice(
        [(", ", ": "), (",", ":"), (", ", ":\n\n   "), (", ", ":\u00a0"), (",\t", ": \u3000 ")]
    )
    return json.dumps(call, ensure_ascii=ascii_only, separators=separators)


def random_prose(rng: random.Random, citations: bool) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(1, 8)):
        if citations and rng.random() < 0.3:
            sources = ",".join(
                f"{rng.randint(0, 3)}:[{rng.randint(0, 5)}]" for _ in range(rng.randint(1, 2))
            )
            closer = rng.choice(
                [f"</co: {sources}>", f"</co: {sources}>", "</co 0:[1]>", "</co: z>", ""]
            )
            parts.append(f"<co>{rng.choice(WORDS)} {rng.choice(WORDS)}{closer}")
        else:
            parts.append(rng.choice(WORDS))
        parts.append(rng.choice(SPACES[:4]) if rng.random() < 0.8 else rng.choice(SPACES))
    return "".join(parts)


def structured_text(rng: random.Random) -> str:
    """A plausible output: thinking, actions, answer, with random slips."""
    out: list[str] = []
    answer_open, answer_close = rng.choice(
        [("<|START_TEXT|>", "<|END_TEXT|>"), ("<|START_RESPONSE|>", "<|END_RESPONSE|>"), ("", "")]
    )
    if rng.random() < 0.7:
        out.append(rng.choice(["<|START_THINKING|>", "<|START_THINKING|>", ""]))
        out.append(random_prose(rng, rng.random() < 0.3))
        out.append(rng.choice(["<|END_THINKING|>", "<|END_THINKING|>", ""]))
    if rng.random() < 0.5:
        pretty = rng.random() < 0.5
        calls = [random_call(rng, index, pretty) for index in range(rng.randint(0, 3))]
        body = (",\n" if pretty else ", ").join(calls)
        if rng.random() < 0.85:
            body = f"[\n{body}\n]" if pretty else f"[{body}]"
        if rng.random() < 0.15:
            body = body[: rng.randint(0, len(body))]
        out.append(
            "<|START_ACTION|>"
            + body
            + rng.choice(["<|END_ACTION|>", "<|END_ACTION|>", "\n<|END_ACTION|>", ""])
        )
    if rng.random() < 0.7:
        out.append(answer_open + random_prose(rng, rng.random() < 0.6) + answer_close)
    if rng.random() < 0.15:
        out.append(rng.choice(OTHER_SPECIALS) + random_prose(rng, False))
    return "".join(out)


def soup_text(rng: random.Random) -> str:
    """Fragments in random order, weighted towards one flavour."""
    pools = [
        MODE_TOKENS,
        OTHER_SPECIALS + BROKEN_SPECIALS,
        CITATION_FRAGMENTS,
        JSON_FRAGMENTS,
        SPACES,
        WORDS,
    ]
    weights = [rng.random() + 0.2 for _ in pools]
    return "".join(rng.choice(rng.choices(pools, weights)[0]) for _ in range(rng.randint(1, 30)))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--random", type=int, default=1500, help="number of seeded random texts")
    parser.add_argument("--seed", type=int, default=20260605)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    version = importlib.metadata.version("cohere-melody")
    if version != "0.15.3":
        sys.exit(f"cohere-melody {version} is installed, the oracle is for 0.15.3")

    cases: list[dict[str, Any]] = []
    seen: set[str] = set()

    def add(preset: str, mode: str, chunks: Sequence[str]) -> None:
        key = json.dumps([preset, mode, list(chunks)])
        if key not in seen:
            seen.add(key)
            cases.append(record(preset, mode, chunks))

    # FILTER.md's examples, exactly as written there.
    differing = 0
    for title, preset, streams, text, expected in filter_md_examples():
        add(preset, "batch", [text])
        got = [notation(new_filter(preset).process_full_text(text))]
        for chunks in streams:
            add(preset, "stream", chunks)
            got.extend(record(preset, "stream", chunks)["outputs"])
        if got != expected:
            differing += 1
            print(f"FILTER.md example differs from PyFilter: {title}", file=sys.stderr)
    print(f"FILTER.md examples: {differing} differ", file=sys.stderr)

    tokenizer = Tokenizer.from_str(gzip.open(MODEL / "tokenizer.json.gz", "rt").read())
    outputs_seen: set[tuple[int, ...]] = set()
    corpus = 0
    for config, ids, sizes in corpus_outputs():
        deltas = token_deltas(tokenizer, ids)
        text = "".join(deltas)
        preset = CONFIG_PRESET[config]
        if tuple(ids) not in outputs_seen:
            outputs_seen.add(tuple(ids))
            corpus += 1
            for each in PRESETS:
                add(each, "batch", [text])
            add(preset, "stream", deltas)
        if len(sizes) > 1:
            add(preset, "stream", group(deltas, sizes))
    print(f"corpus outputs: {corpus}", file=sys.stderr)

    for text in vllm_test_outputs() + EDGE_TEXTS:
        for preset in PRESETS:
            add(preset, "batch", [text])
            for chunks in chunkings(text, rng, 3):
                add(preset, "stream", chunks)

    for _ in range(args.random):
        text = structured_text(rng) if rng.random() < 0.5 else soup_text(rng)
        preset = rng.choice(PRESETS)
        add(preset, "batch", [text])
        for chunks in chunkings(text, rng, 2):
            add(preset, "stream", chunks)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(args.out, "wb", mtime=0) as raw:
        for case in cases:
            raw.write((json.dumps(case, ensure_ascii=False, separators=(",", ":")) + "\n").encode())
    modes = [case["mode"] for case in cases]
    print(
        f"wrote {args.out}: {len(cases)} cases ({modes.count('batch')} batch, "
        f"{modes.count('stream')} stream), {args.out.stat().st_size} bytes",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
