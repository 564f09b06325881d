"""Record unseen/<config>.jsonl.gz (config mistral_small3 or mistral_small32) with
tests/reference/unseen/record.py's Recorder from the family in vllm_parser_outputs.json beside
this file. A tekken model has no tokenizer.json: the output ids come from record_mistral.py's
Tok (mistral_common's Tekkenizer; each control token such as [TOOL_CALLS] as its one special id,
text by Tekken), then the end token </s> (2):

    <vLLM venv>/bin/python tests/reference/unseen/tekken/record.py \\
        --vllm http://127.0.0.1:P --model-dir <dir holding tekken.json> [--config mistral_small32]
"""

import argparse
import gzip
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REF = HERE.parents[1]
sys.path.insert(0, str(REF / "unseen"))
sys.path.insert(0, str(REF))
import record  # noqa: E402
import record_mistral  # noqa: E402


class Encoding:
    def __init__(self, ids: list[int]):
        self.ids = ids


class TekkenAsTokenizers:
    """The one method of a `tokenizers.Tokenizer` the Recorder calls."""

    def __init__(self, tok: "record_mistral.Tok"):
        self.tok = tok

    def encode(self, text: str, add_special_tokens: bool = False) -> Encoding:
        return Encoding(self.tok.enc(text))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vllm", required=True)
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--config", default="mistral_small3", choices=["mistral_small3", "mistral_small32"])
    ap.add_argument("--out")
    args = ap.parse_args()
    out_path = Path(args.out) if args.out else REF / "unseen" / f"{args.config}.jsonl.gz"
    record_mistral.use_profile(args.config)
    record.EOS.setdefault(args.config, record_mistral.EOS)  # keyed by the model dir name
    config = json.loads((REF / "configs.json").read_text())[args.config]
    tok = TekkenAsTokenizers(record_mistral.Tok(Path(args.model_dir)))
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
