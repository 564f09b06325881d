"""Record the unseen-case corpus: model outputs from vLLM's own parser tests
(vllm_parser_outputs.json beside this file), answered by a live vLLM 0.33.0.

For each config, output and chat_request variant this builds the requests
the dev goldens use (see the reference README, "Golden format"): a batch
case, and streams cut one token per chunk (`tok1`, outputs up to 120
tokens), three per chunk (`tok3`), at seeded random 1-7 (`rand`) and all
in one chunk (`all`, corpora recorded since step3's), each with the
stream_state vLLM returned carried to the next call and with a
`batch_equivalent`. The prompt ids come from vLLM's own
/v1/chat/completions/render; the output ids from the model dir's
tokenizer.json (markers that are added tokens there encode as one token),
plus the config's end-of-turn token (not for an output with `"eos": false`,
one that already ends as the model stops, e.g. Harmony's `<|call|>`).

    VLLM_TARGET_DEVICE=cpu vllm launch render <models>/<dir> --port P \\
        --served-model-name <name> <flags from configs.json>
    python3 tests/reference/unseen/record.py --vllm http://127.0.0.1:P \\
        --config qwen3_hermes --models <reference>/models

writes tests/reference/unseen/<config>.jsonl.gz (replay.py --goldens
tests/reference/unseen scores it). Needs the `tokenizers` package.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import random
import sys
import zlib
from pathlib import Path

from tokenizers import Tokenizer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import replay  # noqa: E402

# The token a config's engine stops on (the dev goldens' most common last
# token of a finished output).
EOS = {
    "qwen3": 151645,
    "deepseek_r1": 1,
    "deepseek_v3": 1,
    "deepseek_v31": 1,
    "deepseek_v32": 1,
    "deepseek_v4": 1,
    "deepseek_v41": 1,
    "inkling": 200006,
    "kimi_k3": 151671,
    "cohere_command": 255001,
    "qwen3_coder": 151645,
    "llama3": 128009,
    "mistral": 2,
    "mistral_small3": 2,
    "mistral_small32": 2,
    "ling3": 151671,
    "holo2": 151645,
    "nemotron_v3": 151645,
    "poolside_v1": 151675,
    "longcat": 151645,
    "hy_v3": 151670,
    "phi4_mini": 151671,
    "granite4": 151669,
    "granite": 151669,
    "olmo3": 151645,
    "internlm": 151645,
    "jamba": 151671,
    "granite_20b_fc": 151643,
    "mimo": 151645,
    "ernie45": 2,
    "gigachat3": 151670,
    "functiongemma": 151672,
    "step3": 151645,
    "apertus": 151676,
    "xlam": 128009,
    "lfm2": 151645,
    "minicpmv": 151645,
    "minimax_m3": 151671,
    "muse": 128257,
    "hunyuan_a13b": 128259,
    "k2_horizon": 151672,
    "gemma4": 151672,
    "plamo3": 151673,
    "dots": 151674,
    "minicpm5": 151645,
    "hy_v4": 128257,
    "kimi_k2": 151645,
    "step3p5": 151645,
    "hf_response_template": 151645,
    "beam": 151674,
    "gpt_oss": 200002,
    "llama4": 128262,
    "granite_thinking": 151669,
}
TOK1_MAX = 120
USER_PROMPT = "Please help me with this, using a tool if one fits."
DERENDER = "/v1/chat/completions/derender"


def batch_request(rid: str, ids: list[int], prompt: list[int], chat: dict) -> dict:
    """The batch derender request for `ids` answering `chat`."""
    return {
        "model": chat["model"],
        "generate_response": generate_response(rid, ids, len(prompt)),
        "prompt_tokens": len(prompt),
        "chat_request": chat,
        "prompt_token_ids": prompt,
    }


def eos_for(config: dict) -> int:
    return EOS[config["model"].split("/")[-1]]


def generate_response(rid: str, ids: list[int], prompt_len: int) -> dict:
    return {
        "request_id": rid,
        "model": None,
        "created": None,
        "usage": {
            "prompt_tokens": prompt_len,
            "total_tokens": prompt_len + len(ids),
            "completion_tokens": len(ids),
            "prompt_tokens_details": None,
        },
        "prompt_logprobs": None,
        "prompt_token_id_logprobs": None,
        "prompt_token_ids": None,
        "mm_placeholders": None,
        "metrics": None,
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "output_mode": "tokens",
        "choices": [
            {
                "index": 0,
                "logprobs": None,
                "finish_reason": "stop",
                "stop_reason": None,
                "token_ids": ids,
                "routed_experts": None,
                "sampling_mask": None,
                "weight_versions": None,
            }
        ],
    }


def generate_chunk(rid: str, ids: list[int], last: bool) -> dict:
    return {
        "request_id": rid,
        "usage": None,
        "output_mode": "tokens",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop" if last else None,
                "stop_reason": None,
                "token_ids": ids,
                "routed_experts": None,
                "sampling_mask": None,
                "weight_versions": None,
                "logprobs": None,
            }
        ],
    }


def chunkings(case_id: str, ids: list[int]) -> dict[str, list[int]]:
    """Chunk lengths per chunking mode."""
    out = {}
    if len(ids) <= TOK1_MAX:
        out["tok1"] = [1] * len(ids)
    out["tok3"] = [min(3, len(ids) - i) for i in range(0, len(ids), 3)]
    rng = random.Random(zlib.crc32(case_id.encode()))
    lens, left = [], len(ids)
    while left:
        n = min(left, rng.randint(1, 7))
        lens.append(n)
        left -= n
    out["rand"] = lens
    out["all"] = [len(ids)]
    return out


class Recorder:
    def __init__(self, url: str, config_name: str, config: dict, tokenizer: Tokenizer):
        self.client = replay.Client(url)
        self.name = config_name
        self.config = config
        self.tok = tokenizer
        self.eos = eos_for(config)
        self.cases: list[dict] = []

    def post(self, path: str, body: dict) -> tuple[int, object]:
        status, resp, _, _ = self.client.post(path, body)
        return status, resp

    def chat_request(self, tools: list | None, variant: dict) -> dict:
        req = {
            "model": self.config["served_model_name"],
            "messages": [{"role": "user", "content": USER_PROMPT}],
            "max_tokens": 1024,
        }
        if tools:
            req["tools"] = tools
            req["tool_choice"] = "auto"
        req.update(copy.deepcopy(variant))
        return req

    def render(self, chat_request: dict) -> list[int]:
        status, resp = self.post("/v1/chat/completions/render", chat_request)
        if status != 200:
            raise RuntimeError(f"render failed ({status}): {resp}")
        return resp["token_ids"]

    def record(
        self, stem: str, tags: list[str], text: str, tools, variant: dict, eos: bool = True
    ) -> None:
        chat = self.chat_request(tools, variant)
        prompt = self.render(chat)
        ids = self.tok.encode(text, add_special_tokens=False).ids + ([self.eos] if eos else [])
        n = len(self.cases)
        batch_req = batch_request(f"gen-{self.name}-unseen-{n}", ids, prompt, chat)
        status, resp = self.post(DERENDER, batch_req)
        self.cases.append(
            {
                "id": f"{self.name}/unseen/batch/{n:04d}-{stem}",
                "config": self.name,
                "kind": "batch",
                "endpoint": DERENDER,
                "calls": [{"request": batch_req, "status": status, "response": resp}],
                "tags": ["chat", *tags],
            }
        )
        stream_chat = dict(chat, stream=True)
        for mode, lens in chunkings(stem, ids).items():
            self.record_stream(stem, tags, mode, lens, ids, prompt, stream_chat)

    def record_stream(self, stem, tags, mode, lens, ids, prompt, chat) -> None:
        n = len(self.cases)
        rid = f"gen-{self.name}-unseen-s{n}"
        calls, state, at = [], None, 0
        for i, k in enumerate(lens):
            req = {
                "stream": True,
                "model": chat["model"],
                "generate_chunk": generate_chunk(rid, ids[at : at + k], i == len(lens) - 1),
                "stream_state": state,
                "prompt_tokens": len(prompt),
                "prompt_token_ids": prompt,
                "chat_request": chat,
            }
            at += k
            status, resp = self.post(DERENDER, req)
            calls.append(
                {
                    "request": dict(req, stream_state=None if i == 0 else replay.PREV_STATE),
                    "state_lane": 0,
                    "status": status,
                    "response": resp,
                }
            )
            if (
                status == 200
                and isinstance(resp, dict)
                and isinstance(resp.get("stream_state"), dict)
            ):
                state = resp["stream_state"]
        be_req = batch_request(rid, ids, prompt, chat)
        status, resp = self.post(DERENDER, be_req)
        self.cases.append(
            {
                "id": f"{self.name}/unseen/stream/{n:04d}-{stem}-{mode}",
                "config": self.name,
                "kind": "stream",
                "endpoint": DERENDER,
                "calls": calls,
                "batch_equivalent": {"request": be_req, "status": status, "response": resp},
                "tags": ["chat", *tags, f"chunking:{mode}"],
            }
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--vllm", required=True, help="base URL of a running `vllm launch render`")
    ap.add_argument("--config", required=True)
    ap.add_argument("--models", required=True, help="directory holding the configs' model dirs")
    ap.add_argument("--out", default=str(HERE), help="directory for <config>.jsonl.gz")
    args = ap.parse_args(argv)

    configs = json.loads((HERE.parent / "configs.json").read_text())
    config = configs[args.config]
    data = json.loads((HERE / "vllm_parser_outputs.json").read_text())
    model_dir = Path(args.models) / config["model"].split("/")[-1]
    rec = Recorder(
        args.vllm, args.config, config, Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    )
    for fam in data["families"]:
        if args.config not in fam["configs"]:
            continue
        for out in fam["outputs"]:
            tools = data["tools"].get(out.get("tools", fam.get("tools", "")))
            for vname, variant in fam["variants"].items():
                stem = f"{fam['kind']}_{fam['family']}-{out['name']}-{vname}"
                tags = [f"family:{fam['family']}", f"parser:{fam['kind']}", f"variant:{vname}"]
                rec.record(stem, tags, out["text"], tools, variant, out.get("eos", True))
    path = Path(args.out) / f"{args.config}.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for case in rec.cases:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    kinds = {}
    for c in rec.cases:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    print(f"{args.config}: {len(rec.cases)} cases {kinds} -> {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
