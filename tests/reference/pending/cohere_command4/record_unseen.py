"""Record pending/<config>/unseen.jsonl.gz (config cohere_command4 or cohere_command3) with
tests/reference/unseen/record.py's Recorder from the families in vllm_parser_outputs.json beside
this file (end token <|END_OF_TURN_TOKEN|> 255001), as unseen/record.py's main does for the
configs in configs.json:

    python3 tests/reference/pending/cohere_command4/record_unseen.py --vllm http://127.0.0.1:P \\
        --model-dir <unpacked tests/models/cohere_command> [--config cohere_command3]
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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vllm", required=True)
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--config", default="cohere_command4", choices=["cohere_command4", "cohere_command3"])
    ap.add_argument("--out")
    args = ap.parse_args()
    pending = HERE.parent / args.config
    out_path = Path(args.out) if args.out else pending / "unseen.jsonl.gz"
    record.EOS.setdefault("cohere_command", 255001)  # keyed by the model dir name
    config = json.loads((pending / "config.json").read_text())[args.config]
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
    with gzip.open(out_path, "wt", encoding="utf-8") as f:
        for case in rec.cases:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    kinds: dict = {}
    for c in rec.cases:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    print(f"{args.config}: {len(rec.cases)} unseen cases {kinds} -> {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
