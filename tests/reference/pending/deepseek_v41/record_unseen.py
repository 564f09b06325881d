"""Record pending/deepseek_v41/unseen.jsonl.gz with tests/reference/unseen/record.py's Recorder from the
families in vllm_parser_outputs.json beside this file (config deepseek_v41, end token 1), as
unseen/record.py's main does for the configs in configs.json:

    python3 tests/reference/pending/deepseek_v41/record_unseen.py --vllm http://127.0.0.1:P \\
        --model-dir <unpacked tests/models/deepseek_v41>
"""

import argparse
import gzip
import json
import sys
from pathlib import Path

from tokenizers import Tokenizer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "unseen"))
import record  # noqa: E402

CONFIG = json.loads((HERE / "config.json").read_text())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vllm", required=True)
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--config", default="deepseek_v41")
    ap.add_argument("--out", default=str(HERE / "unseen.jsonl.gz"))
    args = ap.parse_args()
    record.EOS.setdefault(args.config, 1)
    config = CONFIG[args.config]
    tok = Tokenizer.from_file(str(Path(args.model_dir) / "tokenizer.json"))
    rec = record.Recorder(args.vllm, args.config, config, tok)
    data = json.loads((HERE / "vllm_parser_outputs.json").read_text())
    for fam in data["families"]:
        if args.config not in fam["configs"]:
            continue
        for out in fam["outputs"]:
            tools = data["tools"].get(out.get("tools", fam.get("tools", "")))
            for vname, variant in fam["variants"].items():
                stem = f"{fam['kind']}_{fam['family']}-{out['name']}-{vname}"
                tags = [f"family:{fam['family']}", f"parser:{fam['kind']}", f"variant:{vname}"]
                rec.record(stem, tags, out["text"], tools, variant, out.get("eos", True))
    with gzip.open(args.out, "wt", encoding="utf-8") as f:
        for case in rec.cases:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    kinds: dict = {}
    for c in rec.cases:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    print(f"{args.config}: {len(rec.cases)} unseen cases {kinds} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
