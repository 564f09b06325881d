"""Streams at seeded random cuts, answered by a live vLLM 0.33.0 and by derender in-process,
scored as the held-out check scores them (replay.py --stream-target auto --opaque-state).

For each distinct chat stream of a config's corpus (`unseen` or `goldens`: its ids, chat request
and finish), TRIALS seeded partitions of its ids into 1 to 9 chunks are sent to vLLM (the config's
model dir and flags, see configs.json) and to a derender core built with the same flags. A
derender stream passes when it equals vLLM's stream chunk for chunk where vLLM's stream
assembles to vLLM's batch answer, else when it assembles to that batch answer; a stream equal to
vLLM's chunk for chunk where vLLM disagrees with its batch answer is counted apart (the
documented classes of docs/divergences.md). Every other stream is printed: it matches neither.

    VLLM_TARGET_DEVICE=cpu vllm launch render <model dir> --port P \\
        --served-model-name <name> <flags from configs.json>
    python3 tests/reference/random_cuts.py --vllm http://127.0.0.1:P --config mistral \\
        --corpus unseen --trials 10 [--finish-alone]

or, letting the script start (and stop) vLLM on a copy of the config's model dir:

    VLLM=/path/to/vllm-venv/bin/vllm python3 tests/reference/random_cuts.py --launch \\
        --config xlam --corpus unseen goldens --trials 2 --finish-alone

--finish-alone sends every third stream's finish in a token-less chunk of its own. Needs the
derender package (the repository's build) and this directory's replay.py (its tool-call id rules
cover the families added after the shared copy was written).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gzip
import json
import random
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import replay  # noqa: E402
from render_server import Server, config_env, source_dir, unpack_model, workdir  # noqa: E402

from derender import Derenderer  # noqa: E402
from derender.cli import build_parser, config_from_args, settle_tokenizer_mode  # noqa: E402


class InProcess:
    """replay.Client's `post`, answered by a core."""

    def __init__(self, core: Derenderer) -> None:
        self.core = core

    def post(self, path: str, body: object, raw: bool = False, headers: object = None):
        data = body.encode() if raw and isinstance(body, str) else json.dumps(body).encode()
        status, out = self.core.handle(path, data)
        return status, json.loads(out), len(data), len(out)


def core_for(config: dict) -> Derenderer:
    """The core `derender serve` builds for the config (its tokenizer mode included)."""
    argv = ["serve", str(source_dir(config["model"])), "--served-model-name"]
    argv += [config["served_model_name"], *config["flags"]]
    args = build_parser().parse_args(argv)
    server = config_from_args(args)
    settle_tokenizer_mode(args, server)
    return Derenderer(server.model, **server.core_kwargs())


def chunk(call: dict) -> dict:
    return call["request"]["generate_chunk"]["choices"][0]


def distinct_streams(cases: list[dict]) -> list[dict]:
    """One case per (ids, chat request, finish): single-choice chat streams with a batch answer."""
    seen, out = set(), []
    for case in cases:
        calls = case["calls"]
        if (
            case["kind"] != "stream"
            or "chat" not in case["endpoint"]
            or not case.get("batch_equivalent")
        ):
            continue
        bodies = [c["request"] for c in calls]
        if any(
            not isinstance(b, dict) or len(b.get("generate_chunk", {}).get("choices", [])) != 1
            for b in bodies
        ):
            continue
        ids = [t for c in calls for t in chunk(c)["token_ids"]]
        last = chunk(calls[-1])
        key = json.dumps(
            [ids, bodies[0].get("chat_request"), last.get("finish_reason")], sort_keys=True
        )
        if key not in seen:
            seen.add(key)
            out.append(case)
    return out


def cut(base: dict, rng: random.Random, finish_alone: bool) -> tuple[dict, list[int]]:
    """`base`'s ids under a seeded partition, as a case without answers."""
    ids = [t for c in base["calls"] for t in chunk(c)["token_ids"]]
    n = len(ids)
    cuts = sorted({rng.randrange(1, n) for _ in range(rng.randint(1, 8))}) if n > 1 else []
    bounds = [0, *cuts, n] + ([n] if finish_alone else [])
    last = chunk(base["calls"][-1])
    case = copy.deepcopy(base)
    case["calls"] = []
    for i in range(len(bounds) - 1):
        request = copy.deepcopy(base["calls"][0]["request"])
        choice = request["generate_chunk"]["choices"][0]
        final = i == len(bounds) - 2
        choice.pop("logprobs", None)
        choice["token_ids"] = ids[bounds[i] : bounds[i + 1]]
        choice["finish_reason"] = last.get("finish_reason") if final else None
        choice["stop_reason"] = last.get("stop_reason") if final else None
        request["stream_state"] = None if i == 0 else replay.PREV_STATE
        case["calls"].append({"request": request, "state_lane": 0})
    return case, [bounds[i + 1] - bounds[i] for i in range(len(bounds) - 1)]


@contextlib.contextmanager
def launched(config: dict, port: int) -> Iterator[str]:
    """`vllm launch render` ($VLLM) on an unpacked copy of the config's model dir, stopped on exit."""
    work = workdir("rc-")
    try:
        model = unpack_model(config["model"], work)
        env = {**config_env(config, model), "VLLM_TARGET_DEVICE": "cpu"}
        flags = config["flags"]
        with Server(work, config["model"], config["served_model_name"], flags, env, port,
                    work / "vllm.log") as server:  # fmt: skip
            if not server.start():
                raise RuntimeError(
                    f"vLLM exited with {server.returncode}: {server.log_text()[-300:]}"
                )
            yield f"http://127.0.0.1:{port}"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(vllm: replay.Client, config_name: str, config: dict, corpus: str, args) -> int:
    """Streams matching neither, printed as they are found, with a summary line."""
    path = HERE / corpus / f"{config_name}.jsonl.gz"
    if not path.exists():
        return 0
    with gzip.open(path, "rt", encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    mine = InProcess(core_for(config))
    total = as_vllm = neither = 0
    for base in distinct_streams(cases):
        rng = random.Random(base["id"])
        for trial in range(args.trials):
            case, lens = cut(base, rng, args.finish_alone and trial % 3 == 2)
            for call, (status, response) in zip(
                case["calls"], replay.execute_case(vllm, case), strict=True
            ):
                call["status"], call["response"] = status, response
            got = replay.execute_case(mine, case)
            total += 1
            if not replay.compare_case(case, got, "strict", "auto"):
                continue
            if not replay.compare_case(case, got, "strict", "vllm"):
                as_vllm += 1
                continue
            neither += 1
            print("NEITHER", base["id"], lens, replay.compare_case(case, got, "strict", "auto")[:2])
    print(
        f"{config_name} ({corpus}): {total} streams; {as_vllm} equal vLLM's stream where it is "
        f"not batch's answer; {neither} match neither",
        flush=True,
    )
    return neither


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--vllm", help="base URL of a running `vllm launch render`")
    where.add_argument(
        "--launch", action="store_true", help="start vLLM ($VLLM, else `vllm`) per config"
    )
    ap.add_argument("--port", type=int, default=8391, help="the port --launch uses")
    ap.add_argument("--config", required=True, nargs="+")
    ap.add_argument("--corpus", default=["unseen"], nargs="+", choices=["unseen", "goldens"])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--finish-alone", action="store_true")
    args = ap.parse_args(argv)

    replay.OPAQUE_STATE = True
    configs = json.loads((HERE / "configs.json").read_text())
    neither, failed = 0, False
    for name in args.config:
        config = configs[name]
        try:
            with (
                launched(config, args.port) if args.launch else contextlib.nullcontext(args.vllm)
            ) as url:
                for corpus in args.corpus:
                    neither += run(replay.Client(url), name, config, corpus, args)
        except RuntimeError as e:
            print(f"{name}: not run ({e})", flush=True)
            failed = True
    return 1 if neither or failed else 0


if __name__ == "__main__":
    sys.exit(main())
