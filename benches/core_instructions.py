"""Instructions per `Derenderer.handle` call, for comparing two builds on a noisy machine.

Runs N calls of one kind against the bundled Qwen3 core (qwen3 reasoning, hermes tools) with
`benches/load.py`'s bodies: `batch` (one ~200-id chat derender), `parser` (one-id chat stream
calls, compact state carried) or `plain` (one-id completion stream calls). Run it under
callgrind at two N and divide the difference by the difference in N, which cancels start-up:

    valgrind --tool=callgrind --callgrind-out-file=cg.out \\
        $(python3 -c 'import sys; print(sys.executable)') benches/core_instructions.py 350 batch
    (the same with 50; per call = (I(350) - I(50)) / 300; parser and plain with 100 and 700)

Use the interpreter's real path (a pyenv shim is a shell script valgrind would trace instead).
Point PYTHONPATH at another build's `python/` directory to measure that build.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # noqa: E402  (the load benchmark's bodies)

from derender import DEFAULT_MODEL_DIR, Derenderer  # noqa: E402


def main() -> None:
    n, kind = int(sys.argv[1]), sys.argv[2]
    core = Derenderer(
        str(DEFAULT_MODEL_DIR),
        served_model_names=["qwen3"],
        reasoning_parser="qwen3",
        tool_call_parser="hermes",
        enable_auto_tool_choice=True,
    )
    work = load.build_workload(core, "qwen3", 200, False)
    if kind == "batch":
        body = load.batch_body(work)
        for _ in range(n):
            status, _ = core.handle("/v1/chat/completions/derender", body)
            assert status == 200
        return
    chat = kind == "parser"
    ids = work.parser_ids if chat else work.plain_ids
    make = load.parser_body if chat else load.plain_body
    route = "/v1/chat/completions/derender" if chat else "/v1/completions/derender"
    state, done = None, 0
    while done < n:
        for i, token in enumerate(ids):
            finish = "stop" if i == len(ids) - 1 else None
            status, out = core.handle(route, make(work, [token], state, finish, i == 0))
            assert status == 200, out[:300]
            state = None if finish else json.loads(out)["stream_state"]
            done += 1
            if done >= n:
                return


if __name__ == "__main__":
    main()
