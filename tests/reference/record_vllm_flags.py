"""Record `vllm serve`'s command line (the parser `vllm launch render` takes)
into python/derender/vllm_flags.json: per option, its spellings, dest, kind
(switch, value, list) and default. Run with vLLM 0.33.0's own Python:

    VLLM_TARGET_DEVICE=cpu /path/to/vllm-venv/bin/python tests/reference/record_vllm_flags.py
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from vllm.entrypoints.common.cli_args import make_arg_parser
from vllm.utils.argparse_utils import FlexibleArgumentParser

OUT = Path(__file__).resolve().parents[2] / "python" / "derender" / "vllm_flags.json"


def kind(action: argparse.Action) -> str:
    if action.nargs == 0:
        return "switch"
    if action.nargs in ("+", "*") or isinstance(action, argparse._AppendAction):
        return "list"
    return "value"


def default(action: argparse.Action) -> object:
    value = action.default
    if value is argparse.SUPPRESS or callable(value):
        return None
    try:
        json.dumps(value)
    except TypeError:
        return repr(value)
    return value


def main() -> None:
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    parser = FlexibleArgumentParser()
    make_arg_parser(parser)
    # Every registered spelling, the hidden ones too (`--no-enable-x`).
    spellings: dict[int, list[str]] = {}
    for option, action in parser._option_string_actions.items():
        spellings.setdefault(id(action), []).append(option)
    flags = []
    for action in parser._actions:
        if not action.option_strings or action.dest == "help":
            continue
        options = sorted(spellings[id(action)], key=lambda o: (o not in action.option_strings, o))
        negative = getattr(action, "negative_option_strings", None)
        if negative is None and isinstance(action, argparse.BooleanOptionalAction):
            negative = {o for o in options if o.startswith("--no-")}
        flag = {"options": options, "dest": action.dest, "kind": kind(action), "default": default(action)}
        if negative:
            flag["negative"] = sorted(negative)
        flags.append(flag)
    body = {"source": "vLLM 0.33.0, make_arg_parser (vllm serve / vllm launch render)", "flags": flags}
    OUT.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(flags)} options, {sum(len(f['options']) for f in flags)} spellings -> {OUT}")


if __name__ == "__main__":
    main()
