"""Server settings: what `derender serve` was started with."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

ENV_VAR = "DERENDER_SERVER_CONFIG"
# `--stream-state-secret` from the environment (keeps it out of `ps`).
SECRET_ENV = "DERENDER_STREAM_STATE_SECRET"
# `--stream-state-accepted-secrets`, comma-separated.
ACCEPTED_SECRETS_ENV = "DERENDER_STREAM_STATE_ACCEPTED_SECRETS"
DEFAULT_MAX_REQUEST_BYTES = 256 * 1024 * 1024


@dataclass
class ServerConfig:
    model: str
    # `--revision`, `--tokenizer`, `--tokenizer-revision`: where the files come from.
    revision: str | None = None
    tokenizer: str | None = None
    tokenizer_revision: str | None = None
    # The tokenizer mode vLLM would pick (`hf`, or `mistral` for tekken).
    tokenizer_mode: str = "hf"
    served_model_names: list[str] = field(default_factory=list)
    max_model_len: int | None = None
    max_logprobs: int = 20
    api_keys: list[str] = field(default_factory=list)
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    reasoning_parser: str | None = None
    tool_call_parser: str | None = None
    enable_auto_tool_choice: bool = False
    tool_strict_level: str | None = None
    default_chat_template_kwargs: str | None = None
    chat_template: str | None = None
    trust_request_chat_template: bool = False
    exclude_tools_when_tool_choice_none: bool = False
    tool_parser_plugin: str | None = None
    reasoning_parser_plugin: str | None = None
    stream_state_mode: str = "compact"
    chat_template_content_format: str = "auto"
    stream_state_secret: str | None = field(default=None, repr=False)
    stream_state_accepted_secrets: list[str] = field(default_factory=list, repr=False)
    # `--request-timeout`: seconds a call may take (body and answer); None: no limit.
    request_timeout: float | None = None
    # `--log-level`: the `derender` JSON logs (access lines at info).
    log_level: str = "warning"
    # vLLM's HTTP options: CORS (vLLM's defaults: no cross-origin access),
    # X-Request-Id on answers, the proxy path prefix.
    allowed_origins: list[str] = field(default_factory=list)
    allowed_methods: list[str] = field(default_factory=lambda: ["*"])
    allowed_headers: list[str] = field(default_factory=lambda: ["*"])
    allow_credentials: bool = False
    enable_request_id_headers: bool = False
    root_path: str | None = None
    # `--disable-fastapi-docs`: no /openapi.json, /docs, /redoc.
    disable_docs: bool = False
    # `--generation-config` (auto, vllm or a directory) and its override (JSON).
    generation_config: str = "auto"
    override_generation_config: str | None = None
    reasoning_effort_map: str | None = None
    enable_tokenizer_info_endpoint: bool = False
    # `--hf-overrides` (a JSON object).
    hf_overrides: str | None = None
    # `--middleware` import paths.
    middleware: list[str] = field(default_factory=list)
    enable_log_requests: bool = False
    max_log_len: int | None = None
    anthropic_disabled_thinking_effort: str = "auto"
    # Set by `derender serve --workers N` (N > 1): where workers share their metrics.
    metrics_dir: str | None = None

    def core_kwargs(self) -> dict[str, object]:
        """Keyword arguments of `derender.Derenderer` for these settings (importing the
        parser plugin files, if any; ValueError when one cannot be imported)."""
        plugins: dict[str, object] = {}
        if self.tool_parser_plugin or self.reasoning_parser_plugin:
            from derender.plugins import core_kwargs as plugin_kwargs

            plugins = plugin_kwargs(self.tool_parser_plugin, self.reasoning_parser_plugin)
        return {
            **plugins,
            "served_model_names": self.served_model_names or None,
            "max_model_len": self.max_model_len,
            "max_logprobs": self.max_logprobs,
            "reasoning_parser": self.reasoning_parser,
            "tool_call_parser": self.tool_call_parser,
            "enable_auto_tool_choice": self.enable_auto_tool_choice,
            "tool_strict_level": self.tool_strict_level,
            "default_chat_template_kwargs": self.default_chat_template_kwargs,
            "chat_template": self.chat_template,
            "trust_request_chat_template": self.trust_request_chat_template,
            "exclude_tools_when_tool_choice_none": self.exclude_tools_when_tool_choice_none,
            "stream_state_mode": self.stream_state_mode,
            "chat_template_content_format": self.chat_template_content_format,
            "generation_config": self.generation_config,
            "override_generation_config": self.override_generation_config,
            "reasoning_effort_map": self.reasoning_effort_map,
            "anthropic_disabled_thinking_effort": self.anthropic_disabled_thinking_effort,
            "hf_overrides": self.hf_overrides,
            "tokenizer": self.tokenizer,
            "revision": self.revision,
            "tokenizer_revision": self.tokenizer_revision,
            "tokenizer_mode": self.tokenizer_mode,
            "stream_state_secret": self.stream_state_secret,
            "stream_state_accepted_secrets": self.stream_state_accepted_secrets,
        }

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServerConfig:
        raw = os.environ.get(ENV_VAR)
        if not raw:
            raise RuntimeError(f"{ENV_VAR} is not set; start the server with `derender serve`")
        return cls(**json.loads(raw))
