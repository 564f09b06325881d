"""vLLM's command line as derender reads it (`derender.vllm_args`): spelling
rules, config files, sizes, and what happens to options derender does not
build."""

from __future__ import annotations

import json

import pytest

from derender import vllm_args
from derender.cli import build_parser


def parse(argv: list[str]):
    return build_parser().parse_args(vllm_args.normalize(argv))


def test_sizes_read_as_vllm_reads_them():
    assert vllm_args.human_readable_int("32k") == 32_000
    assert vllm_args.human_readable_int("25.6k") == 25_600
    assert vllm_args.human_readable_int("2K") == 2048
    assert vllm_args.human_readable_int("1M") == 1 << 20
    assert vllm_args.human_readable_int(" 4096 ") == 4096
    with pytest.raises(Exception, match="Decimals are not allowed"):
        vllm_args.human_readable_int("1.5K")
    assert vllm_args.max_model_len("auto") is None and vllm_args.max_model_len("-1") is None


def test_option_names_take_underscores_and_o_levels():
    argv = ["serve", "--max_model_len=8k", "--kv_transfer_config.kv_role", "x"]
    assert vllm_args.normalize(argv) == [
        "serve",
        "--max-model-len=8k",
        "--kv-transfer-config.kv_role",
        "x",
    ]
    assert vllm_args.normalize(["-O3", "-O", "2"]) == [
        "--optimization-level",
        "3",
        "--optimization-level",
        "2",
    ]
    assert parse(["serve", "m", "--max_model_len", "8k"]).max_model_len == 8000


def test_a_config_file_is_spliced_before_the_command_line(tmp_path):
    config = tmp_path / "render.yaml"
    config.write_text(
        "port: 9001\nenable-auto-tool-choice: true\ntool_call_parser: hermes\n"
        "served-model-name: [a, b]\nkv-transfer-config: {kv_role: kv_both}\n",
        encoding="utf-8",
    )
    args = parse(["serve", "m", "--config", str(config), "--port", "9002"])
    assert args.port == 9002  # the command line wins
    assert args.enable_auto_tool_choice and args.tool_call_parser == "hermes"
    assert args.served_model_name == ["a", "b"]
    assert json.loads(args.vllm_kv_transfer_config) == {"kv_role": "kv_both"}
    with pytest.raises(SystemExit, match="must be a .yaml or .yml file"):
        parse(["serve", "m", "--config", str(tmp_path / "x.json")])


def test_switches_take_vllms_negations():
    on_off = ["serve", "--enable-auto-tool-choice", "--disable-auto-tool-choice"]
    assert not parse(on_off).enable_auto_tool_choice
    on_off = ["serve", "--trust-request-chat-template", "--no-trust-request-chat-template"]
    assert not parse(on_off).trust_request_chat_template
    assert parse(["serve", "--no-enable-prefix-caching"]).vllm_enable_prefix_caching is False
    assert parse(["serve", "--enable-prefix-caching"]).vllm_enable_prefix_caching is True


def test_launch_render_is_serve():
    args = parse(["launch", "render", "--model", "m", "--port", "9"])
    got = (args.command, args.launch_command, args.model_flag, args.port)
    assert got == ("launch", "render", "m", 9)


def test_every_vllm_option_is_accepted():
    """Each of vLLM 0.33.0's `vllm serve` spellings parses (recorded in
    vllm_flags.json)."""
    parser = build_parser()
    serve = parser._subparsers._group_actions[0].choices["serve"]  # type: ignore[union-attr]
    for flag in vllm_args.vllm_flags():
        value = [] if flag["kind"] == "switch" else ["1"]
        for option in flag["options"]:
            action = serve._option_string_actions[option]
            if action.dest.startswith("vllm_") and option != "--config":
                parser.parse_args(vllm_args.normalize(["serve", "m", option, *value]))


def test_a_shared_engine_command_line_starts_listing_what_does_not_apply():
    """The argument list of a GPU engine deployment: engine options are
    listed, none refused; render options derender builds are read."""
    argv = [
        "launch", "render", "--model", "m", "--tensor-parallel-size", "2",
        "--gpu-memory-utilization", "0.9", "--max_model_len", "32k",
        "--no-enable-prefix-caching", "--kv-transfer-config", '{"kv_connector": "x"}',
        "--reasoning-parser", "qwen3", "--tool-call-parser", "hermes",
        "--enable-auto-tool-choice", "--generation-config", "auto", "--dtype", "bfloat16",
    ]  # fmt: skip
    args = parse(argv)
    assert (args.max_model_len, args.reasoning_parser, args.enable_auto_tool_choice) == (
        32000,
        "qwen3",
        True,
    )
    engine, refused = vllm_args.vllm_only(args)
    assert refused == []
    assert set(engine) == {
        "--tensor-parallel-size",
        "--gpu-memory-utilization",
        "--enable-prefix-caching",
        "--kv-transfer-config",
        "--dtype",
    }


@pytest.mark.parametrize(
    ("argv", "refused"),
    [
        (["--tool-server", "demo"], "--tool-server"),
        (["--enable-prompt-embeds"], "--enable-prompt-embeds"),
        (["--skip-tokenizer-init"], "--skip-tokenizer-init"),
        (["--hf-config-path", "elsewhere"], "--hf-config-path"),
    ],
)
def test_render_options_derender_does_not_build_stop_the_server(argv, refused):
    from derender.cli import main

    with pytest.raises(SystemExit, match=f"error: {refused}: read by vLLM's render server"):
        main(["serve", "--port", "1", *argv])
    # Given at vLLM's default, the same option changes nothing: accepted.
    assert vllm_args.vllm_only(parse(["serve", "--sse-keep-alive-interval", "0"])) == ([], [])
