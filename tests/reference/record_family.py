"""Record a new parser family's golden corpus by re-asking a recorded one:
every case of `--from`'s goldens (batch, streams at their chunkings, bad
inputs, render), sent to a live vLLM 0.33.0 serving `--config` (its model
dir and flags from configs.json), with the served model name swapped. What
vLLM answers, call by call, is the new config's golden; stream states are
carried from vLLM's own answers, as replay.py carries them.

Use it for a family that reads the same markup as `--from` (Ling 3 reads
GLM-4.7's): the cases exercise the markup, the new config's template,
vocabulary and parser answer them.

    VLLM_TARGET_DEVICE=cpu vllm launch render <model dir> --port P \\
        --served-model-name <name> <flags from configs.json>
    python3 tests/reference/record_family.py --vllm http://127.0.0.1:P \\
        --config ling3 --from glm47

writes tests/reference/goldens/<config>.jsonl.gz (replay.py scores it).

When the new fixture gives a marker another id (or another spelling), pass
`--map OLD=NEW` (repeatable): OLD must be one token of `--from`'s
tokenizer.json, NEW one token of `--config`'s, and every token-id array of
the re-asked requests (output ids, prompt ids, stop ids, hand-written
stream states) has OLD's id replaced by NEW's. Chunk boundaries stay as
they were. Standard library only, plus the `tokenizers` package for --map."""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import replay  # noqa: E402


def swap_name(value: object, old: str, new: str) -> object:
    """`value` with every string equal to `old` replaced by `new`."""
    if isinstance(value, dict):
        return {k: swap_name(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [swap_name(v, old, new) for v in value]
    return new if value == old else value


# Request fields that hold token ids (a list of ints, or a list of such lists).
TOKEN_ID_KEYS = frozenset(
    {
        "token_ids",
        "prompt_token_ids",
        "prompt_tokens",
        "prompt",
        "stop_token_ids",
        "output_token_ids",
        "logprob_context_token_ids",
    }
)


def model_dir(config: dict) -> Path:
    """The repository dir of a configs.json `model` (as tests/conftest.py resolves it)."""
    name = config["model"].split("/")[-1]
    if name == "qwen3":
        return HERE.parent.parent / "python" / "derender" / "models" / "qwen3"
    return HERE.parent / "models" / name


def single_token(directory: Path, marker: str) -> int:
    """The id of `marker` in `directory`'s tokenizer; exits unless it is exactly one token."""
    from tokenizers import Tokenizer

    path = directory / "tokenizer.json"
    if path.exists():
        text = path.read_text(encoding="utf-8")
    else:
        with gzip.open(directory / "tokenizer.json.gz", "rt", encoding="utf-8") as f:
            text = f.read()
    ids = Tokenizer.from_str(text).encode(marker, add_special_tokens=False).ids
    if len(ids) != 1:
        raise SystemExit(f"--map: {marker!r} is {len(ids)} tokens {ids} in {directory}, not one")
    return ids[0]


def id_map(pairs: list[str], source: dict, target: dict) -> dict[int, int]:
    """`OLD=NEW` marker pairs as {OLD's id in `source`: NEW's id in `target`}."""
    out: dict[int, int] = {}
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep or not old or not new:
            raise SystemExit(f"--map: {pair!r} is not OLD=NEW")
        out[single_token(model_dir(source), old)] = single_token(model_dir(target), new)
    return out


def map_ids(value: Any, ids: dict[int, int], key: str = "") -> Any:
    """`value` with every id in a token-id field (TOKEN_ID_KEYS) replaced through `ids`."""
    if isinstance(value, dict):
        return {k: map_ids(v, ids, k) for k, v in value.items()}
    if isinstance(value, list):
        if key in TOKEN_ID_KEYS:
            return [ids.get(v, v) if type(v) is int else map_ids(v, ids, key) for v in value]
        return [map_ids(v, ids) for v in value]
    return value


def rerecord(
    client: replay.Client,
    case: dict,
    source: str,
    config: str,
    names: tuple[str, str],
    ids: dict[int, int],
) -> dict:
    out = copy.deepcopy(case)
    out["id"] = config + case["id"][len(source) :]
    out["config"] = config
    for call in out["calls"]:
        if not call.get("raw"):
            call["request"] = map_ids(swap_name(call["request"], *names), ids)
    results = replay.execute_case(client, out)
    for call, (status, response) in zip(out["calls"], results, strict=True):
        call["status"], call["response"] = status, response
    equivalent = out.get("batch_equivalent")
    if equivalent:
        equivalent["request"] = map_ids(swap_name(equivalent["request"], *names), ids)
        status, response, _, _ = client.post(out["endpoint"], equivalent["request"])
        equivalent["status"], equivalent["response"] = status, response
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--vllm", required=True, help="base URL of a running `vllm launch render`")
    ap.add_argument("--config", required=True, help="the new config (configs.json)")
    ap.add_argument(
        "--from", dest="source", required=True, help="the config whose goldens are re-asked"
    )
    ap.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="replace marker OLD's id (--from's vocabulary) by NEW's (--config's); repeatable",
    )
    ap.add_argument("--out", default=str(HERE / "goldens"))
    args = ap.parse_args(argv)

    configs = json.loads((HERE / "configs.json").read_text())
    names = (configs[args.source]["served_model_name"], configs[args.config]["served_model_name"])
    ids = id_map(args.map, configs[args.source], configs[args.config])
    if ids:
        print(f"{args.config}: mapping token ids {ids}")
    with gzip.open(HERE / "goldens" / f"{args.source}.jsonl.gz", "rt", encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    client = replay.Client(args.vllm)
    recorded = [rerecord(client, case, args.source, args.config, names, ids) for case in cases]
    path = Path(args.out) / f"{args.config}.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for case in recorded:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    kinds: dict[str, int] = {}
    for case in recorded:
        kinds[case["kind"]] = kinds.get(case["kind"], 0) + 1
    print(f"{args.config}: {len(recorded)} cases {kinds} -> {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
