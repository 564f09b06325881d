"""`derender serve`: a drop-in for `vllm launch render` (same flags)."""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from derender import ssl_refresh, user_middleware, vllm_args
from derender.config import (
    ACCEPTED_SECRETS_ENV,
    DEFAULT_MAX_REQUEST_BYTES,
    ENV_VAR,
    SECRET_ENV,
    ServerConfig,
)
from derender.logs import uvicorn_log_config
from derender.models import DEFAULT_MODEL_DIR, DEFAULT_MODEL_NAME

if TYPE_CHECKING:
    from derender._native import Derenderer

DEFAULT_SHUTDOWN_TIMEOUT = 30.0
# vLLM's keep-alive setting for idle client connections (seconds).
KEEP_ALIVE_ENV = "VLLM_HTTP_TIMEOUT_KEEP_ALIVE"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="derender", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the render/derender API for one model")
    _add_serve_arguments(serve)
    launch = sub.add_parser("launch", help="vLLM's spelling: `derender launch render` is `serve`")
    launch_sub = launch.add_subparsers(dest="launch_command", required=True)
    _add_serve_arguments(launch_sub.add_parser("render", help="the same as `derender serve`"))

    parsers = sub.add_parser(
        "parsers",
        help="list the tool-call and reasoning parsers, and whether they fit a model",
    )
    parsers.add_argument(
        "model", nargs="?", default=None, help="check each parser against this model's vocabulary"
    )
    parsers.add_argument("--json", action="store_true", help="print the listing as JSON")

    engine = sub.add_parser(
        "engine", help="a token-in/token-out engine simulator (/inference/v1/generate)"
    )
    engine.add_argument(
        "model", nargs="?", default=None, help="model directory or id (default: bundled Qwen3)"
    )
    engine.add_argument("--host", default="127.0.0.1")
    engine.add_argument("--port", type=int, default=8200)
    engine.add_argument(
        "--scenarios", default=None, help="JSON Lines of {match, output} (see docs)"
    )
    engine.add_argument(
        "--delay-ms", type=float, default=0.0, help="pause after each streamed event"
    )
    engine.add_argument("--tokens-per-event", type=int, default=1, help="tokens per SSE event")
    engine.add_argument("--log-level", default="warning")
    return parser


def _add_serve_arguments(serve: argparse.ArgumentParser) -> None:
    """`serve`'s options: derender's own, then the rest of vLLM's (`vllm_args`)."""
    serve.add_argument(
        "model",
        nargs="?",
        default=None,
        help="model directory or Hugging Face id in the local cache (default: bundled Qwen3)",
    )
    serve.add_argument("--model", dest="model_flag", default=None, help=argparse.SUPPRESS)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8100)
    serve.add_argument("--served-model-name", nargs="+", default=None)
    serve.add_argument("--max-model-len", type=vllm_args.max_model_len, default=None)
    serve.add_argument("--max-logprobs", type=int, default=20)
    serve.add_argument("--api-key", nargs="+", default=None)
    serve.add_argument(
        "--max-request-bytes",
        type=int,
        default=DEFAULT_MAX_REQUEST_BYTES,
        help="reject request bodies larger than this with a 413 (vLLM has no cap)",
    )
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument(
        "--request-timeout",
        type=_positive_seconds,
        default=None,
        help="answer a call not done in this many seconds with an error: 408 while its body "
        "is still arriving, 503 once it is being derendered (default: no limit)",
    )
    serve.add_argument(
        "--shutdown-timeout",
        type=_seconds,
        default=DEFAULT_SHUTDOWN_TIMEOUT,
        help="on SIGTERM, let calls in flight finish for up to this many seconds "
        f"(default {DEFAULT_SHUTDOWN_TIMEOUT:g})",
    )
    serve.add_argument(
        "--log-level",
        default="warning",
        type=str.lower,
        choices=("critical", "error", "warning", "info", "debug", "trace"),
        help="uvicorn's and derender's log level; info adds a JSON access line per request",
    )
    serve.add_argument("--reasoning-parser", default=None)
    serve.add_argument("--tool-call-parser", default=None)
    serve.add_argument("--enable-auto-tool-choice", action="store_true")
    serve.add_argument("--tool-strict-level", choices=("auto", "function", "parameter"))
    serve.add_argument("--chat-template", default=None)
    serve.add_argument("--default-chat-template-kwargs", default=None)
    serve.add_argument(
        "--reasoning-effort-map",
        type=json.loads,
        default=None,
        help="JSON object rewriting a request's reasoning effort to one the chat template "
        'knows, e.g. \'{"medium": "low"}\' (chat, Responses and Messages)',
    )
    serve.add_argument(
        "--anthropic-disabled-thinking-effort",
        choices=("auto", "high", "low", "max", "medium", "none", "xhigh"),
        default="auto",
        help="reasoning effort for Messages with thinking disabled; auto: none, or low when "
        "the template ignores or refuses none",
    )
    serve.add_argument("--trust-request-chat-template", action="store_true")
    serve.add_argument(
        "--hf-overrides",
        type=_json_object,
        default=None,
        help="JSON object laid over config.json (architecture, model_type, context length)",
    )
    serve.add_argument(
        "--enable-tokenizer-info-endpoint",
        action="store_true",
        help="serve GET /tokenizer_info (the tokenizer's configuration and chat template)",
    )
    serve.add_argument(
        "--enable-log-requests",
        action="store_true",
        help="log /tokenize and /detokenize calls (info) and request bodies (debug)",
    )
    serve.add_argument(
        "--max-log-len", type=int, default=None, help="characters of a body logged at most"
    )
    serve.add_argument(
        "--middleware",
        action="append",
        default=[],
        help="ASGI middleware class or `async def f(request, call_next)` by import path "
        "(repeatable; each wraps the ones before it)",
    )
    serve.add_argument("--exclude-tools-when-tool-choice-none", action="store_true")
    serve.add_argument(
        "--tool-parser-plugin", default=None, help="Python file registering tool parsers"
    )
    serve.add_argument(
        "--reasoning-parser-plugin",
        default=None,
        help="Python file registering reasoning parsers",
    )
    serve.add_argument(
        "--stream-state-mode",
        choices=("compact", "replay"),
        default="compact",
        help="parser-path stream_state: compact (O(chunk) per call) or vLLM's history (replay)",
    )
    serve.add_argument(
        "--stream-state-secret",
        default=None,
        help=f"sign stream states with this secret (HMAC); default: ${SECRET_ENV}",
    )
    serve.add_argument(
        "--stream-state-accepted-secrets",
        nargs="+",
        default=None,
        help="also accept states signed with these (to rotate the secret); "
        f"default: ${ACCEPTED_SECRETS_ENV}, comma-separated",
    )
    serve.add_argument(
        "--chat-template-content-format",
        choices=["auto", "string", "openai"],
        default="auto",
        help="how message content reaches the template: joined text (string) or a list of "
        "parts (openai); auto detects it from the template, as vLLM does",
    )
    # Tokenizer choice: checked at startup (`_tokenizer_mode`), never ignored.
    serve.add_argument(
        "--tokenizer",
        default=None,
        help="the tokenizer's directory or cached model id (default: the model's own); the "
        "model's config.json and generation_config.json still come from MODEL",
    )
    serve.add_argument(
        "--tokenizer-mode", default="auto", help="auto or hf (the modes derender builds)"
    )
    serve.add_argument(
        "--download-dir",
        default=None,
        help="the Hugging Face cache a model id is found in (instead of $HF_HUB_CACHE)",
    )
    serve.add_argument(
        "--revision",
        default=None,
        help="the cached snapshot of a model id to serve: a branch, tag or commit "
        "(default main; ignored for a directory, as in vLLM)",
    )
    serve.add_argument(
        "--tokenizer-revision",
        default=None,
        help="the snapshot of the model id --tokenizer names (default main; the model's own "
        "tokenizer is read at --revision, as vLLM reads it offline)",
    )
    serve.add_argument(
        "--generation-config",
        default="auto",
        help="default sampling values: auto (the model's generation_config.json), vllm (none), "
        "or a directory holding a generation_config.json",
    )
    serve.add_argument(
        "--override-generation-config",
        default=None,
        help="JSON object over the generation config, e.g. '{\"temperature\": 0.5}'",
    )
    _add_http_arguments(serve)
    vllm_args.add_vllm_options(serve)


def _add_http_arguments(serve: argparse.ArgumentParser) -> None:
    """vLLM's HTTP options, with its defaults and value types."""
    json_list = _json_list
    serve.add_argument("--allowed-origins", type=json_list, default=[], help="CORS origins (JSON)")
    serve.add_argument("--allowed-methods", type=json_list, default=["*"], help="CORS methods")
    serve.add_argument("--allowed-headers", type=json_list, default=["*"], help="CORS headers")
    serve.add_argument("--allow-credentials", action="store_true", help="CORS credentials")
    serve.add_argument(
        "--enable-request-id-headers",
        action="store_true",
        help="answer with X-Request-Id (the request's, or a fresh one)",
    )
    serve.add_argument("--root-path", default=None, help="the path prefix of a routing proxy")
    serve.add_argument(
        "--disable-fastapi-docs",
        action="store_true",
        help="serve no /openapi.json, /docs or /redoc",
    )
    serve.add_argument("--uds", default=None, help="listen on this Unix socket, not host:port")
    serve.add_argument("--ssl-keyfile", default=None)
    serve.add_argument("--ssl-certfile", default=None)
    serve.add_argument("--ssl-ca-certs", default=None)
    serve.add_argument(
        "--enable-ssl-refresh",
        action="store_true",
        help="reload the certificate files when they change",
    )
    serve.add_argument("--ssl-cert-reqs", type=int, default=0, help="ssl.CERT_* (0: none)")
    serve.add_argument("--ssl-ciphers", default=None)


def use_download_dir(download_dir: str | None) -> None:
    """`--download-dir`: vLLM loads a model id's tokenizer with `cache_dir` set
    to it, so that cache replaces the default one (for this process and its
    workers, which inherit the environment)."""
    if download_dir:
        os.environ["HF_HUB_CACHE"] = download_dir


def _json_object(value: str) -> dict[str, Any]:
    """A JSON object flag (`--hf-overrides '{"max_position_embeddings": 8192}'`)."""
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return parsed


def _json_list(value: str) -> list[str]:
    """vLLM reads the CORS lists as JSON (`["https://a.example"]`)."""
    import json

    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(parsed, list):
        raise argparse.ArgumentTypeError("expected a JSON list")
    return [str(v) for v in parsed]


def _seconds(value: str) -> float:
    seconds = float(value)
    if not seconds >= 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds")
    return seconds


def _positive_seconds(value: str) -> float:
    seconds = _seconds(value)
    if seconds == 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return seconds


def run_engine(args: argparse.Namespace) -> None:
    import uvicorn

    from derender._native import Derenderer
    from derender.engine import Scenarios, create_engine_app

    model = args.model or str(DEFAULT_MODEL_DIR)
    try:
        core = Derenderer(model)
        scenarios = Scenarios.from_file(args.scenarios) if args.scenarios else Scenarios()
    except (OSError, ValueError) as exc:
        raise SystemExit(f"error: cannot start: {exc}") from None
    app = create_engine_app(core, scenarios, args.delay_ms, args.tokens_per_event)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False)


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    if args.enable_auto_tool_choice and not args.tool_call_parser:
        raise SystemExit("Error: --enable-auto-tool-choice requires --tool-call-parser")
    model = args.model_flag or args.model
    swallowed = [n for n in args.served_model_name or [] if model is None and os.path.isdir(n)]
    if swallowed:
        # `--served-model-name a ./model` reads the model as a second name.
        raise SystemExit(
            f"error: --served-model-name took {swallowed[0]}, a model directory, as a name: "
            "give the model before the flag or with --model"
        )
    if model is None:
        # The bundled Qwen3 model comes with its family's parsers.
        model, default_names = str(DEFAULT_MODEL_DIR), [DEFAULT_MODEL_NAME]
        if not (args.reasoning_parser or args.tool_call_parser):
            args.reasoning_parser, args.tool_call_parser = "qwen3", "hermes"
            args.enable_auto_tool_choice = True
    else:
        default_names = [model]
    api_keys = args.api_key or (
        [os.environ["VLLM_API_KEY"]] if os.environ.get("VLLM_API_KEY") else []
    )
    return ServerConfig(
        model=model,
        revision=args.revision,
        tokenizer=args.tokenizer,
        tokenizer_revision=args.tokenizer_revision,
        served_model_names=args.served_model_name or default_names,
        max_model_len=args.max_model_len,
        max_logprobs=args.max_logprobs,
        api_keys=api_keys,
        max_request_bytes=args.max_request_bytes,
        reasoning_parser=args.reasoning_parser,
        tool_call_parser=args.tool_call_parser,
        enable_auto_tool_choice=args.enable_auto_tool_choice,
        tool_strict_level=args.tool_strict_level,
        default_chat_template_kwargs=args.default_chat_template_kwargs,
        chat_template=_load_chat_template(args.chat_template),
        trust_request_chat_template=args.trust_request_chat_template,
        exclude_tools_when_tool_choice_none=args.exclude_tools_when_tool_choice_none,
        tool_parser_plugin=_plugin_path(args.tool_parser_plugin),
        reasoning_parser_plugin=_plugin_path(args.reasoning_parser_plugin),
        stream_state_mode=args.stream_state_mode,
        chat_template_content_format=args.chat_template_content_format,
        stream_state_secret=args.stream_state_secret or os.environ.get(SECRET_ENV) or None,
        stream_state_accepted_secrets=_accepted_secrets(args.stream_state_accepted_secrets),
        request_timeout=args.request_timeout,
        log_level=args.log_level,
        allowed_origins=args.allowed_origins,
        allowed_methods=args.allowed_methods,
        allowed_headers=args.allowed_headers,
        allow_credentials=args.allow_credentials,
        enable_request_id_headers=args.enable_request_id_headers,
        root_path=args.root_path,
        disable_docs=args.disable_fastapi_docs,
        generation_config=args.generation_config,
        override_generation_config=args.override_generation_config,
        reasoning_effort_map=(
            None if args.reasoning_effort_map is None else json.dumps(args.reasoning_effort_map)
        ),
        anthropic_disabled_thinking_effort=args.anthropic_disabled_thinking_effort,
        enable_tokenizer_info_endpoint=args.enable_tokenizer_info_endpoint,
        enable_log_requests=args.enable_log_requests,
        max_log_len=args.max_log_len,
        middleware=args.middleware,
        hf_overrides=None if args.hf_overrides is None else json.dumps(args.hf_overrides),
    )


def _accepted_secrets(values: list[str] | None) -> list[str]:
    if values is None:
        values = os.environ.get(ACCEPTED_SECRETS_ENV, "").split(",")
    return [v for v in (v.strip() for v in values) if v]


def _plugin_path(value: str | None) -> str | None:
    """An absolute path, so workers started elsewhere import the same file."""
    return os.path.abspath(value) if value and len(value) > 3 else None


def _load_chat_template(value: str | None) -> str | None:
    """`--chat-template`: a file path, or the template text itself (text has
    Jinja's `{`, `}` or a newline; anything else must be a file, as in vLLM,
    whose own bundled templates derender does not ship)."""
    if value is None:
        return None
    try:
        with open(value, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        if any(c in value for c in "{}\n"):
            return value
        raise SystemExit(
            f"error: --chat-template: the supplied chat template ({value}) looks like a file "
            f"path, but it failed to be opened. Reason: {exc}"
        ) from None


def serve(args: argparse.Namespace) -> None:
    import uvicorn

    from derender._native import Derenderer

    engine_only, refused = vllm_args.vllm_only(args)
    if refused:
        raise SystemExit(
            f"error: {', '.join(refused)}: read by vLLM's render server and not built in "
            "derender; remove it or give vLLM's default"
        )
    use_download_dir(args.download_dir)
    config = config_from_args(args)
    started = time.monotonic()
    try:  # Fail fast, with the reason, before uvicorn starts any worker.
        settle_tokenizer_mode(args, config)
        core = Derenderer(config.model, **config.core_kwargs())  # type: ignore[arg-type]
    except ValueError as exc:
        raise SystemExit(f"error: cannot start: {exc}") from None
    try:
        user_middleware.load(config.middleware)
    except ValueError as exc:
        raise SystemExit(f"error: cannot start: {exc}") from None
    loaded = time.monotonic() - started
    print(_startup_line(args, config, core, loaded), file=sys.stderr, flush=True)
    if engine_only:
        print(
            "derender: options that do not apply to a render server: " + " ".join(engine_only),
            file=sys.stderr,
            flush=True,
        )
    if args.workers > 1:  # the workers add up their metrics here
        config.metrics_dir = tempfile.mkdtemp(prefix="derender-metrics-")
        atexit.register(shutil.rmtree, config.metrics_dir, ignore_errors=True)
    os.environ[ENV_VAR] = config.to_env()
    uv_config = uvicorn.Config(
        "derender.app:create_app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        log_config=uvicorn_log_config(),
        access_log=False,
        timeout_graceful_shutdown=args.shutdown_timeout,
        timeout_keep_alive=_keep_alive(),
        uds=args.uds,
        ssl_keyfile=args.ssl_keyfile,
        ssl_certfile=args.ssl_certfile,
        ssl_ca_certs=args.ssl_ca_certs,
        ssl_cert_reqs=args.ssl_cert_reqs,
        **({"ssl_ciphers": args.ssl_ciphers} if args.ssl_ciphers else {}),
    )
    if args.enable_ssl_refresh and args.ssl_keyfile and args.ssl_certfile:
        if args.workers > 1:
            raise SystemExit(
                "error: --enable-ssl-refresh with --workers > 1 is not built: each worker holds "
                "its own TLS context; use one worker per process"
            )
        uv_config.load()  # the SSL context the refresher reloads in place
        ssl_refresh.CertRefresher(
            uv_config.ssl, args.ssl_keyfile, args.ssl_certfile, args.ssl_ca_certs
        ).start()
    if args.workers <= 1:
        uvicorn.Server(uv_config).run()
        return
    from uvicorn.supervisors import Multiprocess

    class Supervisor(Multiprocess):
        def terminate_all(self) -> None:
            # Each worker holds its own copy of the listening socket. Closing the
            # supervisor's as the workers drain means new connections are refused
            # (a load balancer retries them elsewhere), not queued for nobody.
            for sock in self.sockets:
                sock.close()
            super().terminate_all()

    sock = _listen_unix(args.uds) if args.uds else _listen(args.host, args.port)
    Supervisor(uv_config, sockets=[sock]).run()


# Architectures whose tokenizer mode vLLM's `auto` switches away from hf
# (`ModelConfig`), with the mode it picks.
_ARCHITECTURE_MODES = {
    "KimiK3ForConditionalGeneration": "kimi_k3",
    "DeepseekV32ForCausalLM": "deepseek_v32",
    "DeepseekV4ForCausalLM": "deepseek_v4",
    "DeepseekV4ForConditionalGeneration": "deepseek_v4",
    "DeepseekV41ForCausalLM": "deepseek_v41",
    "InklingForCausalLM": "inkling",
    "InklingForConditionalGeneration": "inkling",
    "Alpamayo2Super": "alpamayo2_super",
    "MoonshotKimiaForCausalLM": "kimi_audio",
}


# Modes whose chat prompts DeepSeek's encoders write (tokenizer.json for the rest).
_ENCODER_MODES = ("deepseek_v32", "deepseek_v4", "deepseek_v41")
# The modes derender builds (`--tokenizer-mode` values it accepts besides auto).
_BUILT_MODES = ("hf", "mistral", "inkling", "kimi_k3", "cohere", *_ENCODER_MODES)


def _auto_tokenizer_mode(
    model_dir: str, tokenizer_dir: str, hf_overrides: dict[str, Any]
) -> str | None:
    """The mode vLLM's `--tokenizer-mode auto` picks when it is not hf, and
    why: a mistral_common tokenizer (`consolidated*.safetensors` beside
    `tekken.json` or `tokenizer.model.v*`), or the model's architecture."""
    import glob

    def has(pattern: str) -> bool:
        return bool(glob.glob(os.path.join(glob.escape(tokenizer_dir), pattern)))

    # `tekken.json.gz`: derender reads gzip'd tokenizer files (vLLM does not).
    tekken = has("tekken.json") or has("tekken.json.gz")
    if has("consolidated*.safetensors") and (tekken or has("tokenizer.model.v*")):
        return "mistral (consolidated*.safetensors beside a mistral_common tokenizer)"
    architectures = hf_config(model_dir, hf_overrides).get("architectures") or []
    for arch in architectures if isinstance(architectures, list) else []:
        if arch in _ARCHITECTURE_MODES:
            return f"{_ARCHITECTURE_MODES[arch]} (architecture {arch})"
    return None


def settle_tokenizer_mode(args: argparse.Namespace, config: ServerConfig) -> None:
    """Set `config.tokenizer_mode` as `serve` chooses it, from the resolved model
    and tokenizer directories (`ValueError` when they cannot be found)."""
    from derender._native import resolve_dirs

    model_dir, tokenizer_dir = resolve_dirs(
        config.model, config.revision, config.tokenizer, config.tokenizer_revision
    )
    config.tokenizer_mode = _tokenizer_mode(args, config.model, model_dir, tokenizer_dir)


def _tokenizer_mode(
    args: argparse.Namespace, model: str, model_dir: str, tokenizer_dir: str
) -> str:
    """The tokenizer mode to serve: vLLM chooses it from `--tokenizer-mode` and,
    under `auto`, from the tokenizer's files and the model's architecture;
    derender builds the hf mode, the mistral mode for tekken tokenizers and the
    DeepSeek V3.2, V4 and V4.1 encoder modes, the Inkling, Kimi K3 and Cohere modes.
    Any other choice would change token ids, so it stops the server, naming it."""
    mode = (args.tokenizer_mode or "auto").lower()
    if mode not in ("auto", *_BUILT_MODES):
        raise SystemExit(
            f"error: --tokenizer-mode {args.tokenizer_mode}: derender builds the "
            f"{', '.join(_BUILT_MODES)} tokenizer modes (auto picks them where vLLM does)"
        )
    overrides = args.hf_overrides or {}
    picked = _auto_tokenizer_mode(model_dir, tokenizer_dir, overrides) if mode == "auto" else None
    if mode == "mistral" or (picked or "").startswith("mistral"):
        if not any(
            Path(tokenizer_dir, name).is_file() for name in ("tekken.json", "tekken.json.gz")
        ):
            raise SystemExit(
                f"error: --tokenizer-mode {mode}: vLLM uses its mistral tokenizer mode for "
                f"{model}; derender builds it for tekken tokenizers (tekken.json), and "
                f"{tokenizer_dir} has none (a SentencePiece tokenizer.model.v*?)"
            )
        return "mistral"
    encoder = mode if mode != "auto" else (picked or "").split(" ")[0]
    if encoder in (*_ENCODER_MODES, "inkling", "kimi_k3", "cohere"):
        return encoder
    if picked:
        raise SystemExit(
            f"error: --tokenizer-mode auto: vLLM uses its {picked} tokenizer mode for {model}, "
            "which derender does not build; --tokenizer-mode hf renders with tokenizer.json "
            "and the chat template, as vLLM's hf mode does"
        )
    return "hf"


def hf_config(model_dir: str, hf_overrides: dict[str, Any]) -> dict[str, Any]:
    """`config.json` (empty if unreadable) with `--hf-overrides` laid over it as
    vLLM does: an object updates a nested `..._config` field by field, anything
    else replaces the field (the core applies the same rule)."""
    try:
        config = json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    config = config if isinstance(config, dict) else {}
    for key, value in hf_overrides.items():
        nested = config.get(key)
        if key.endswith("_config") and isinstance(nested, dict) and isinstance(value, dict):
            config[key] = {**nested, **value}
        else:
            config[key] = value
    return config


def _model_type(model_dir: str, hf_overrides: dict[str, Any]) -> str | None:
    """The model's `model_type` (what picks Harmony), if readable."""
    return hf_config(model_dir, hf_overrides).get("model_type")


def _startup_line(
    args: argparse.Namespace, config: ServerConfig, core: Derenderer, secs: float
) -> str:
    """What is served where: printed once, whatever the log level."""
    named = (("reasoning", config.reasoning_parser), ("tools", config.tool_call_parser))
    parsers = ", ".join(f"{kind} {name}" for kind, name in named if name) or "none"
    template = "the model's"
    if args.chat_template:
        template = f"--chat-template {args.chat_template!r:.60}"
    if _model_type(core.model_path, args.hf_overrides or {}) == "gpt_oss":
        template = "Harmony (gpt_oss; no chat template is read)"
    if config.tokenizer_mode == "mistral":
        template = "mistral_common (tekken; no chat template is read)"
    if config.tokenizer_mode in _ENCODER_MODES:
        template = f"DeepSeek's encoder ({config.tokenizer_mode}; no chat template is read)"
    if config.tokenizer_mode == "inkling":
        template = "Inkling's encoding (inkling; ids written directly, no chat template is read)"
    if config.tokenizer_mode == "kimi_k3":
        template = "Kimi K3's encoding (kimi_k3; ids written segment by segment, no chat template)"
    if config.tokenizer_mode == "cohere":
        template = "cohere-melody's cmd4 / cmd3 templates (cohere; the model's own is not read)"
    host = f"[{args.host}]" if ":" in args.host else args.host
    scheme = "https" if args.ssl_certfile else "http"
    where = f"unix:{args.uds}" if args.uds else f"{scheme}://{host}:{args.port}"
    return (
        f"derender: serving {core.model_path} as {', '.join(config.served_model_names)} "
        f"on {where} (vocabulary {core.vocab_size}, "
        f"max_model_len {core.max_model_len}, parsers: {parsers}, chat template: {template}, "
        f"workers {args.workers}; loaded in {secs:.2f} s)"
    )


def _keep_alive() -> int:
    value = os.environ.get(KEEP_ALIVE_ENV, "5")
    try:
        return int(value)
    except ValueError:
        raise SystemExit(f"error: {KEEP_ALIVE_ENV}={value!r} is not a number of seconds") from None


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket shared by the workers. Created with
    IPPROTO_TCP (uvicorn's own uses 0) so asyncio sets TCP_NODELAY on every
    accepted connection; without it Nagle delays each answer by ~40 ms."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise SystemExit(f"error: cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _listen_unix(path: str) -> socket.socket:
    """`--uds` under --workers: the Unix socket the workers share."""
    if os.path.exists(path):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
    except OSError as exc:
        sock.close()
        raise SystemExit(f"error: cannot listen on {path}: {exc.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def list_parsers(args: argparse.Namespace) -> None:
    """`derender parsers [MODEL]`: every registered parser name with its
    aliases and vocabulary needs; with a model, whether each fits it."""
    import json

    from derender import _native

    try:
        families = json.loads(_native.parser_families(args.model))
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    if args.json:
        print(json.dumps(families, indent=2, ensure_ascii=False))
        return
    titles = {
        "tool": "tool-call parsers (--tool-call-parser NAME --enable-auto-tool-choice)",
        "reasoning": "reasoning parsers (--reasoning-parser NAME)",
    }
    for kind, title in titles.items():
        print(title)
        for row in families[kind]:
            names = row["name"] + "".join(f", {alias}" for alias in row["aliases"])
            line = f"  {names:<28}"
            if args.model is not None:
                line += " fits" if row["fits"] is None else f" does not fit: {row['fits']}"
            elif row["needs"]:
                line += f" needs {row['needs']}"
            print(line.rstrip())
        print()


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(vllm_args.normalize(sys.argv[1:] if argv is None else argv))
    if args.command in ("serve", "launch"):
        serve(args)
    elif args.command == "parsers":
        list_parsers(args)
    elif args.command == "engine":
        run_engine(args)


if __name__ == "__main__":
    main(sys.argv[1:])
