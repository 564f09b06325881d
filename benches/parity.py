"""Parity with vLLM 0.33.0 on the recorded goldens, one table for every config.

    python3 benches/parity.py                    # all configs of tests/reference/configs.json
    python3 benches/parity.py --config qwen3_hermes --json parity.json

For each config, a `derender serve` is started on a free loopback port with the config's model
and flags (as tests/conftest.py maps them), and `replay.py` scores it: batch, error and render
strictly; streams strictly with `--stream-target auto --opaque-state` (each stream must equal
vLLM's chunks or, where vLLM's stream disagrees with its own batch answer, assemble to the batch
answer; `stream_state` is ours, so it is compared as present or null). The replay script comes
from `../shared/reference` when that exists (the referee's copy), else `tests/reference`.
Only 127.0.0.1 is contacted; each server is stopped when its config is done.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "tests" / "reference"
SHARED = ROOT.parent / "shared" / "reference"
KINDS = {
    "batch": [],
    "stream": ["--stream-target", "auto", "--opaque-state"],
    "error": [],
    "render": [],
}


def model_dir(config_model: str) -> Path:
    if config_model == "models/qwen3":
        return ROOT / "python" / "derender" / "models" / "qwen3"
    return ROOT / "tests" / config_model


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(port: int, proc: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not become healthy")


def score(config: str, spec: dict, replay: Path) -> dict[str, tuple[int, int]]:
    port = free_port()
    served = ["--served-model-name", spec["served_model_name"]]
    cmd = [sys.executable, "-m", "derender.cli", "serve", str(model_dir(spec["model"]))]
    cmd += [*spec["flags"], *served, "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(port, proc)
        out: dict[str, tuple[int, int]] = {}
        for kind, extra in KINDS.items():
            run = subprocess.run(
                [sys.executable, str(replay), "--url", f"http://127.0.0.1:{port}"]
                + ["--config", config, "--goldens", str(REFERENCE / "goldens")]
                + ["--kind", kind, "--show-diff", "0", *extra],
                capture_output=True,
                text=True,
                timeout=1800,
            )
            last = (run.stdout.strip().splitlines() or [""])[-1]
            m = re.search(r"(\d+) passed, (\d+) failed", last)
            out[kind] = (int(m.group(1)), int(m.group(2))) if m else (0, -1)
        return out
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", action="append", help="only these configs")
    ap.add_argument("--json", dest="json_out", help="write the figures as JSON")
    args = ap.parse_args()
    configs = json.loads((REFERENCE / "configs.json").read_text())
    replay = SHARED / "replay.py" if (SHARED / "replay.py").exists() else REFERENCE / "replay.py"
    names = [c for c in configs if (REFERENCE / "goldens" / f"{c}.jsonl.gz").exists()]
    if args.config:
        names = [c for c in names if c in args.config]
    table: dict[str, dict[str, tuple[int, int]]] = {}
    print("| config | " + " | ".join(KINDS) + " |")
    print("|---" * (len(KINDS) + 1) + "|")
    for name in names:
        table[name] = score(name, configs[name], replay)
        cells = [f"{p}/{p + f}" if f >= 0 else "no result" for p, f in table[name].values()]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    totals = {k: sum(t[k][0] for t in table.values()) for k in KINDS}
    counts = {k: sum(t[k][0] + max(t[k][1], 0) for t in table.values()) for k in KINDS}
    print("| all | " + " | ".join(f"{totals[k]}/{counts[k]}" for k in KINDS) + " |")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()
