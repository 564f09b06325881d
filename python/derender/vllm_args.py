"""vLLM's command line, read as vLLM reads it.

`vllm launch render` takes `vllm serve`'s whole parser, so one argument list
often serves both the engine and the render tier. This module gives derender's
`serve` every option of that parser (recorded from vLLM 0.33.0 in
`vllm_flags.json`) and vLLM's spelling rules: underscores for dashes, the
negated spelling of each switch, `--config FILE.yaml`, sizes such as `32k`.

An option derender does not define is accepted when vLLM's render server would
not read it (`vllm_flag_uses.json`: engine-only options, listed once at
startup) and stops the server when it would (the render server reads it and
derender does not build it), unless it is given at vLLM's default.
"""

from __future__ import annotations

import argparse
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

_HERE = Path(__file__).parent
# The dest an option vLLM defines and derender does not lands in.
_PREFIX = "vllm_"


@cache
def vllm_flags() -> list[dict[str, Any]]:
    """vLLM 0.33.0's `vllm serve` options (tests/reference/record_vllm_flags.py)."""
    body = json.loads((_HERE / "vllm_flags.json").read_text(encoding="utf-8"))
    return list(body["flags"])


@cache
def flag_uses() -> dict[str, str]:
    """`dest` -> "render" (vLLM's render server reads it) or "engine"."""
    path = _HERE / "vllm_flag_uses.json"
    if not path.exists():
        return {}
    uses = json.loads(path.read_text(encoding="utf-8"))["uses"]
    return {dest: entry["use"] for dest, entry in uses.items()}


def human_readable_int(value: str) -> int:
    """vLLM's sizes: `25.6k` (×1000), `2K` (×1024, whole numbers only), or
    a plain integer."""
    text = value.strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgGtT])", text)
    if not match:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid integer: {value!r}") from None
    number, suffix = match.groups()
    if suffix.islower():
        return int(float(number) * 1000 ** ("kmgt".index(suffix) + 1))
    if "." in number:
        raise argparse.ArgumentTypeError(
            f"Decimals are not allowed with binary suffixes like {suffix}. "
            f"Did you mean to use {number}{suffix.lower()} instead?"
        )
    return int(number) * 1024 ** ("KMGT".index(suffix) + 1)


def max_model_len(value: str) -> int | None:
    """`--max-model-len`: a size, or `auto` / `-1` for the model's own."""
    if value.strip().lower() == "auto":
        return None
    length = human_readable_int(value)
    return None if length == -1 else length


def normalize(argv: list[str]) -> list[str]:
    """`FlexibleArgumentParser.parse_args`' rewriting: a `--config` YAML file's
    options spliced in (after the command and model, before the rest, so the
    command line wins), dashes for underscores in option names (up to the
    first `.`), and `-O3` as `--optimization-level 3`."""
    if "--config" in argv:
        argv = _splice_config(argv)
    out: list[str] = []
    for i, arg in enumerate(argv):
        if arg.startswith("--"):
            key, eq, value = arg.partition("=")
            head, dot, tail = key[2:].partition(".")
            out.append(f"--{head.replace('_', '-')}{dot}{tail}{eq}{value}")
        elif arg.startswith("-O") and arg != "-O":
            out += ["--optimization-level", arg[3:] if arg[2:3] == "=" else arg[2:]]
        elif arg == "-O" and argv[i + 1 : i + 2] in (["0"], ["1"], ["2"], ["3"]):
            out.append("--optimization-level")
        else:
            out.append(arg)
    return out


def _splice_config(argv: list[str]) -> list[str]:
    if argv.count("--config") > 1:
        raise SystemExit("error: --config: more than one config file specified")
    at = argv.index("--config")
    if at == len(argv) - 1:
        raise SystemExit("error: --config: no config file specified")
    options = config_file_args(argv[at + 1])
    rest = argv[:at] + argv[at + 2 :]
    # After the command word(s) and a positional model, as vLLM places them.
    split = 0
    while split < len(rest) and not rest[split].startswith("-"):
        split += 1
    return rest[:split] + options + rest[split:]


def config_file_args(path: str) -> list[str]:
    """`load_config_file`: a YAML mapping as `--key value` pairs; `true`
    switches give the bare option, lists their items, mappings JSON."""
    import yaml

    if path.rsplit(".", 1)[-1] not in ("yaml", "yml"):
        raise SystemExit(f"error: --config {path}: the config file must be a .yaml or .yml file")
    try:
        with open(path, encoding="utf-8") as f:
            body = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"error: --config {path}: {exc}") from None
    if body is None:
        return []
    if not isinstance(body, dict):
        raise SystemExit(f"error: --config {path}: expected a mapping of options")
    args: list[str] = []
    for key, value in body.items():
        option = f"--{key}"
        if value is True:
            args.append(option)
        elif value is False:
            continue
        elif isinstance(value, list):
            args += [option, *(str(v) for v in value)]
        elif isinstance(value, dict):
            args += [option, json.dumps(value)]
        else:
            args += [option, str(value)]
    return args


def add_vllm_options(parser: argparse.ArgumentParser) -> None:
    """Every vLLM option `parser` does not define, as a raw value under
    `vllm_<dest>` (absent unless given); switches derender defines get
    vLLM's negated spellings."""
    taken = parser._option_string_actions  # argparse has no public view of its options
    for flag in vllm_flags():
        hidden = {"default": argparse.SUPPRESS, "help": argparse.SUPPRESS}
        own = [taken[o] for o in flag["options"] if o in taken]
        if own:
            negative = [o for o in flag.get("negative", []) if o not in taken]
            if negative and isinstance(own[0], argparse._StoreTrueAction):
                parser.add_argument(*negative, dest=own[0].dest, action="store_false", **hidden)
            continue
        dest = _PREFIX + flag["dest"]
        if flag["kind"] == "switch":
            action = _switch(set(flag.get("negative", [])))
            parser.add_argument(*flag["options"], dest=dest, action=action, **hidden)
        else:
            nargs = "+" if flag["kind"] == "list" else None
            parser.add_argument(*flag["options"], dest=dest, nargs=nargs, **hidden)


def _switch(negative: set[str]) -> type[argparse.Action]:
    class Switch(argparse.Action):
        """A vLLM switch: its negative spellings clear it, the rest set it."""

        def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
            super().__init__(option_strings, dest, nargs=0, **kwargs)

        def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
            setattr(namespace, self.dest, option_string not in negative)

    return Switch


def _spelling(flag: dict[str, Any]) -> str:
    """The option's own spelling (its dest's), else its first positive one."""
    own = "--" + flag["dest"].replace("_", "-")
    if own in flag["options"]:
        return own
    negative = set(flag.get("negative", []))
    return next((o for o in flag["options"] if o not in negative), flag["options"][0])


# Options vLLM's render server reads that change nothing derender answers:
# the model's dtype and quantization (weights), multimodal processing caches
# and worker pools (derender renders text only and refuses media), remote
# code (derender runs none: it reads tokenizer.json), uvicorn's own logging
# (derender's --log-level sets it), the Hub token (derender reads local files
# only and never calls the Hub).
_NO_EFFECT_HERE = frozenset(
    {
        "dtype",
        "quantization",
        "allow_deprecated_quantization",
        "trust_remote_code",
        "renderer_num_workers",
        "mm_processor_cache_gb",
        "mm_processor_cache_type",
        "mm_shm_cache_max_object_size_mb",
        "uvicorn_log_level",
        "disable_uvicorn_access_log",
        "hf_token",
    }
)


def vllm_only(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The vLLM-only options given: (those that do not apply to derender:
    engine options and `_NO_EFFECT_HERE`; options vLLM's render server reads
    that derender does not build, given at other than vLLM's default)."""
    given = {k[len(_PREFIX) :]: v for k, v in vars(args).items() if k.startswith(_PREFIX)}
    flags = {f["dest"]: f for f in vllm_flags()}
    uses = flag_uses()
    engine, refused = [], []
    for dest, value in given.items():
        flag = flags[dest]
        if uses.get(dest, "render") == "engine" or dest in _NO_EFFECT_HERE:
            engine.append(_spelling(flag))
        elif not _is_default(value, flag["default"]):
            refused.append(_spelling(flag))
    return engine, refused


def _is_default(value: object, default: object) -> bool:
    if isinstance(value, list):
        return isinstance(default, list) and [str(v) for v in default] == value
    if isinstance(value, bool) or value is None:
        return value == default or (value is False and default is None)
    return str(value) == ("" if default is None else str(default)) or (
        isinstance(default, bool) and str(value).lower() == str(default).lower()
    )
