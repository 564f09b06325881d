"""Stand-in for Kimi K3's tokenizer code, for recording vLLM against this fixture.

The real Kimi K3 tokenizer is remote code (`tokenization_kimi.py`, class
`TikTokenTokenizer`, a tiktoken vocabulary) whose `apply_chat_template` does not
use a Jinja template: it builds the prompt as a list of segments with the
checkpoint's `encoding_k3.build_chat_segments` (K3's "XTML") and encodes each
segment on its own, the structural markers with special tokens recognised and
every piece of caller text as ordinary text (a `<|open|>` typed by a user stays
BPE text). vLLM 0.33.0's `kimi_k3` renderer (`vllm/renderers/kimi_k3.py`) calls
that method with `tokenize=True`.

This module re-implements that behaviour (written for this fixture from the
description in tests/models/kimi_k3/RENDERER.md, not copied) over this fixture's
stand-in vocabulary (`tokenizer.json`: Qwen3's BPE with K3's named control
tokens added), so that a vLLM started on the fixture with `--trust-remote-code`
renders as it would render the real model, ids aside:

- a control segment is encoded with every added token recognised;
- a text segment is encoded by the bare BPE model, no added token recognised
  (tiktoken's `disallowed_special=()`), in slices as the real tokenizer cuts
  them (400,000 characters, runs of at most 25,000 whitespace or
  non-whitespace characters).

Everything else (plain `encode`/`decode`, special-token handling) is
`PreTrainedTokenizerFast`'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tokenizers import Tokenizer
from transformers import PreTrainedTokenizerFast

OPEN_TOKEN = "<|open|>"
CLOSE_TOKEN = "<|close|>"
SEP_TOKEN = "<|sep|>"
END_OF_MSG_TOKEN = "<|end_of_msg|>"
IMAGE_PLACEHOLDER = "<|kimi_image_placeholder|>"
VALID_THINKING_EFFORTS = {"low", "high", "max"}


class Segment:
    __slots__ = ("text", "allow_special")

    def __init__(self, text: str, allow_special: bool) -> None:
        self.text = text
        self.allow_special = allow_special


# ---------------------------------------------------------------- segments


class _Images:
    def __init__(self, prompts: list[str] | None) -> None:
        self.prompts = prompts
        self.used = 0

    def next(self) -> str:
        if self.prompts is None:
            return IMAGE_PLACEHOLDER
        if self.used >= len(self.prompts):
            raise ValueError("More image placeholders than image prompts.")
        self.used += 1
        return self.prompts[self.used - 1]

    def check_all_used(self) -> None:
        if self.prompts is not None and self.used != len(self.prompts):
            raise ValueError(
                f"image prompt count {len(self.prompts)} != consumed placeholder count {self.used}"
            )


def _seg(out: list[Segment], value: Any, special: bool) -> None:
    text = str(value)
    if text:
        out.append(Segment(text, special))


def _caller_text(out: list[Segment], value: Any, images: _Images) -> None:
    text = str(value)
    if not text:
        return
    if images.prompts is None or IMAGE_PLACEHOLDER not in text:
        _seg(out, text, False)
        return
    pieces = text.split(IMAGE_PLACEHOLDER)
    for n, piece in enumerate(pieces):
        _seg(out, piece, False)
        if n < len(pieces) - 1:
            _seg(out, images.next(), True)


def _escape(value: Any) -> str:
    return str(value).replace("&", "&amp;").replace('"', "&quot;")


def _open(out: list[Segment], tag: str, attrs: list[tuple[str, Any]] = ()) -> None:
    _seg(out, OPEN_TOKEN, True)
    _seg(out, tag, False)
    for key, value in attrs:
        # four text segments per attribute: ` key`, `="`, value, `"`
        _seg(out, f" {key}", False)
        _seg(out, '="', False)
        _seg(out, _escape(value), False)
        _seg(out, '"', False)
    _seg(out, SEP_TOKEN, True)


def _close(out: list[Segment], tag: str) -> None:
    _seg(out, CLOSE_TOKEN, True)
    _seg(out, tag, False)
    _seg(out, SEP_TOKEN, True)


def _end(out: list[Segment]) -> None:
    _seg(out, END_OF_MSG_TOKEN, True)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _field(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _schema_of(response_format: Any) -> Any:
    if response_format is None:
        return None
    holder = _field(response_format, "json_schema")
    if holder is None:
        return None
    if isinstance(holder, dict):
        return holder.get("schema", holder.get("json_schema", holder))
    for key in ("schema", "json_schema"):
        found = _field(holder, key)
        if found is not None:
            return found
    return holder


def _arguments(arguments: Any) -> tuple[dict, str | None]:
    """(mapping, raw text kept as a json block) for one call's arguments."""
    if arguments is None:
        return {}, None
    if isinstance(arguments, dict):
        return arguments, None
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}, None
        try:
            parsed = json.loads(arguments)
        except json.JSONDecodeError:
            return {}, arguments
        if not isinstance(parsed, dict):
            raise ValueError("Kimi K3 tool call arguments must be a JSON object.")
        return parsed, None
    raise TypeError("Kimi K3 tool call arguments must be a dict or a JSON object string.")


def _with_arguments(holder: dict) -> dict:
    holder = dict(holder)
    mapping, raw = _arguments(holder.get("arguments"))
    holder["arguments"] = mapping
    if raw is None:
        holder.pop("_xtml_json_block", None)
    else:
        holder["_xtml_json_block"] = raw
    return holder


def _normalized(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    message = dict(message)
    if message.get("tools") is not None:
        message["tools"] = _sorted(message["tools"])
    calls = message.get("tool_calls")
    if not calls:
        return message
    out = []
    for call in calls:
        if not isinstance(call, dict):
            out.append(call)
        elif isinstance(call.get("function"), dict):
            call = dict(call)
            call["function"] = _with_arguments(call["function"])
            out.append(call)
        else:
            out.append(_with_arguments(call))
    message["tool_calls"] = out
    return message


def _call_positions(calls: Any) -> dict:
    """call id (as str) -> (1-based position, function name); first id wins."""
    found: dict = {}
    if not isinstance(calls, list):
        return found
    for position, call in enumerate(calls, start=1):
        if not isinstance(call, dict) or call.get("id") is None:
            continue
        key = str(call["id"])
        if key in found:
            continue
        fn = call.get("function")
        name = fn.get("name") if isinstance(fn, dict) else call.get("name")
        found[key] = (position, name)
    return found


def _reorder_tool_results(messages: Any) -> Any:
    """Each run of tool messages, sorted into the preceding assistant's call
    order by tool_call_id (or id) when every one of them matches a call; a
    matched message takes the call's name as `tool` (and as `name` if it has
    one). A run with any unmatched message is kept as it is."""
    if not isinstance(messages, list):
        return messages
    out: list = []
    positions: dict = {}
    i = 0
    while i < len(messages):
        message = messages[i]
        if isinstance(message, dict) and message.get("role") == "assistant":
            calls = message.get("tool_calls")
            positions = _call_positions(calls) if calls else {}
            out.append(message)
            i += 1
            continue
        if not isinstance(message, dict) or message.get("role") != "tool":
            out.append(message)
            i += 1
            continue
        run = []
        unmatched = False
        while (
            i < len(messages)
            and isinstance(messages[i], dict)
            and messages[i].get("role") == "tool"
        ):
            tool = messages[i]
            ref = tool.get("tool_call_id", tool.get("id"))
            hit = positions.get(str(ref)) if ref is not None else None
            if hit is None:
                unmatched = True
                run.append((None, len(run), tool, None))
            else:
                run.append((hit[0], len(run), tool, hit[1]))
            i += 1
        if unmatched:
            out.extend(item[2] for item in run)
            continue
        run.sort(key=lambda item: (item[0], item[1]))
        for _, _, tool, name in run:
            if name is None:
                out.append(tool)
                continue
            tool = dict(tool)
            tool["tool"] = name
            if "name" in tool:
                tool["name"] = name
            out.append(tool)
    return out


def _content(out: list[Segment], content: Any, images: _Images) -> None:
    if isinstance(content, str):
        _caller_text(out, content, images)
    elif content is not None:
        for part in content:
            if part["type"] in ["image", "image_url"]:
                _seg(out, images.next(), True)
            else:
                _caller_text(out, part["text"], images)


def _system_note(out: list[Segment], kind: str, body: str) -> None:
    _open(out, "message", [("role", "system"), ("type", kind)])
    _seg(out, body.strip(), False)
    _close(out, "message")
    _end(out)


def _value_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    return "array"


def _assistant(out: list[Segment], message: dict, images: _Images, thinking: bool) -> None:
    if thinking:
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        _open(out, "think")
        if reasoning is not None and str(reasoning).strip():
            _caller_text(out, reasoning, images)
        _close(out, "think")
    _open(out, "response")
    _content(out, message.get("content"), images)
    _close(out, "response")
    calls = message.get("tool_calls")
    if not calls:
        return
    _open(out, "tools")
    for index, call in enumerate(calls, start=1):
        fn = call.get("function", call)
        _open(out, "call", [("tool", fn["name"]), ("index", index)])
        args = fn.get("arguments", {})
        raw = fn.get("_xtml_json_block")
        if raw is not None:
            _open(out, "json", [("type", "object")])
            _caller_text(out, raw, images)
            _close(out, "json")
        elif isinstance(args, dict):
            for key, value in args.items():
                _open(out, "argument", [("key", key), ("type", _value_type(value))])
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                _caller_text(out, text, images)
                _close(out, "argument")
        _close(out, "call")
    _close(out, "tools")


def _tool_declare(out: list[Segment], tools: Any, dynamic: bool = False) -> None:
    if dynamic:
        body = (
            "## New Tools Available\n"
            "The system dynamically extends the toolset via lazy-loading.\n"
            "You have access to all existing and extended tools.\n"
            "Here are the specs for the extended tools.\n\n"
            f"```json\n{_compact(tools)}\n```"
        )
    else:
        body = (
            "# Tools\n"
            "Here are the available tools, described in JSONSchema.\n\n"
            f"```json\n{_compact(tools)}\n```"
        )
    _open(out, "message", [("role", "system"), ("type", "tool-declare")])
    _seg(out, body, False)
    _close(out, "message")
    _end(out)


def chat_segments(
    messages: list,
    tools: list | None = None,
    *,
    add_generation_prompt: bool = True,
    thinking: bool = True,
    image_prompts: list[str] | None = None,
    **kwargs: Any,
) -> list[Segment]:
    messages = _reorder_tool_results(messages)
    if isinstance(messages, list):
        messages = [_normalized(m) for m in messages]
    tools = _sorted(tools)
    kwargs = dict(kwargs)
    if "response_schema" not in kwargs:
        schema = _schema_of(kwargs.get("response_format"))
        if schema is not None:
            kwargs["response_schema"] = schema
    if kwargs.get("response_schema") is not None:
        kwargs["response_schema"] = _sorted(kwargs["response_schema"])

    images = _Images(image_prompts)
    out: list[Segment] = []
    if tools:
        _tool_declare(out, tools)

    effort = kwargs.get("thinking_effort")
    if thinking and effort is not None:
        assert effort in VALID_THINKING_EFFORTS, (
            f"Unsupported thinking_effort={effort!r}; "
            f"supported values are {sorted(VALID_THINKING_EFFORTS)}."
        )
    if thinking and effort in VALID_THINKING_EFFORTS:
        _system_note(
            out,
            "thinking-effort",
            "`thinking_effort` guides on how much to think in your "
            "thinking channel (not including the response channel), "
            "supported values include `low`, `medium`, `high`, and `max`.\n"
            f"Now the system is invoked with `thinking_effort={effort}`.",
        )

    last_calls = None
    tool_index = 0
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message["role"]
        if role == "user" or (role == "system" and not message.get("tools")):
            attrs = [("role", role)]
            if message.get("name"):
                attrs.append(("name", message["name"]))
            _open(out, "message", attrs)
            _content(out, message.get("content"), images)
            _close(out, "message")
            _end(out)
        elif role == "system":
            _tool_declare(out, message["tools"], dynamic=True)
        elif role == "tool":
            tool_index += 1
            name = message.get("tool", message.get("name"))
            if name is None and last_calls is not None and tool_index <= len(last_calls):
                call = last_calls[tool_index - 1]
                name = call.get("function", call)["name"]
            if name is None:
                raise ValueError(
                    "Kimi K3 tool messages need a resolvable tool name: "
                    "carry `tool`/`name`, or match a preceding assistant "
                    "tool_call by order."
                )
            _open(out, "message", [("role", "tool"), ("tool", name), ("index", tool_index)])
            _content(out, message.get("content"), images)
            _close(out, "message")
            _end(out)
        elif role == "assistant":
            last_calls = message.get("tool_calls")
            tool_index = 0
            attrs = [("role", "assistant")]
            if message.get("name"):
                attrs.append(("name", message["name"]))
            _open(out, "message", attrs)
            _assistant(out, message, images, thinking)
            _close(out, "message")
            _end(out)

    choice = kwargs.get("tool_choice")
    if choice == "required":
        _system_note(
            out,
            "tool-choice",
            "The system is invoked with `tool_choice=required`.\n"
            "You MUST call tools in the next message.",
        )
    elif choice == "none":
        _system_note(
            out,
            "tool-choice",
            "The system is invoked with `tool_choice=none`.\n"
            "You MUST NOT call any tools in the next message.",
        )

    fmt = kwargs.get("response_format")
    fmt_type = _field(fmt, "type", fmt) if isinstance(fmt, dict) else fmt
    if fmt_type == "json_object":
        _system_note(
            out,
            "response-format",
            "The system is invoked with `response_format=json_object`.\n"
            "Your response must be raw JSON data without markdown code "
            "blocks (```json) or any additional formatting.",
        )
    elif fmt_type == "json_schema":
        _system_note(
            out,
            "response-format",
            "The system is invoked with `response_format=json_schema`.\n"
            "Your response must be raw JSON data without markdown code "
            "blocks (```json) or any additional formatting.\n"
            "The JSON data must match the following schema:\n"
            f"```json\n{_compact(kwargs.get('response_schema'))}\n```",
        )

    if add_generation_prompt:
        _open(out, "message", [("role", "assistant")])
        _open(out, "think" if thinking else "response")
    images.check_all_used()
    return out


# ---------------------------------------------------------------- tokenizer


def _slices(text: str, limit: int) -> Iterator[str]:
    """`text` cut so that no piece holds more than `limit` consecutive
    whitespace or non-whitespace characters (str.isspace)."""
    run = 0
    in_space = text[0].isspace() if text else False
    start = 0
    for i, ch in enumerate(text):
        space = ch.isspace()
        if in_space != space:
            run = 1
            in_space = space
        else:
            run += 1
            if run > limit:
                yield text[start:i]
                start = i
                run = 1
    yield text[start:]


class KimiK3StandInTokenizer(PreTrainedTokenizerFast):
    # No __init__ of its own: transformers 5 then loads tokenizer.json as it is.
    slow_tokenizer_class = None
    _ordinary_tokenizer = None

    @property
    def _ordinary(self) -> Tokenizer:
        """The same tokenizer without any added token (tiktoken's ordinary
        encoding: `<|open|>` in caller text is BPE text)."""
        if self._ordinary_tokenizer is None:
            bare = json.loads(self._tokenizer.to_str())
            bare["added_tokens"] = []
            self._ordinary_tokenizer = Tokenizer.from_str(json.dumps(bare))
        return self._ordinary_tokenizer

    def _encode_piece(self, text: str, allow_special: bool) -> list[int]:
        ids: list[int] = []
        for i in range(0, len(text), 400_000):
            for piece in _slices(text[i : i + 400_000], 25_000):
                if allow_special:
                    ids.extend(self._tokenizer.encode(piece, add_special_tokens=False).ids)
                else:
                    ids.extend(self._ordinary.encode(piece, add_special_tokens=False).ids)
        return ids

    def apply_chat_template(
        self,
        conversation,
        tools=None,
        tokenize: bool = False,
        add_generation_prompt: bool = True,
        thinking: bool = True,
        padding=False,
        truncation: bool = False,
        max_length=None,
        return_tensors=None,
        return_dict: bool = False,
        **kwargs,
    ):
        batched = (
            isinstance(conversation, list)
            and bool(conversation)
            and isinstance(conversation[0], list)
        )
        chats = conversation if batched else [conversation]
        image_prompts = kwargs.pop("image_prompts", None)
        if batched and image_prompts is not None:
            raise ValueError("image_prompts is only supported for one chat.")
        kwargs.setdefault("thinking_effort", "max")
        rendered = [
            chat_segments(
                messages,
                tools=tools,
                add_generation_prompt=add_generation_prompt,
                thinking=thinking,
                image_prompts=image_prompts,
                **kwargs,
            )
            for messages in chats
        ]
        if not tokenize:
            texts = ["".join(s.text for s in segs) for segs in rendered]
            return texts if batched else texts[0]
        encoded = [
            [i for s in segs for i in self._encode_piece(s.text, s.allow_special)]
            for segs in rendered
        ]
        if truncation and max_length is not None:
            encoded = [ids[:max_length] for ids in encoded]
        if not (batched or padding or return_tensors is not None or return_dict):
            return encoded[0]
        batch = self.pad(
            [{"input_ids": ids, "attention_mask": [1] * len(ids)} for ids in encoded],
            padding=padding,
            max_length=max_length if padding else None,
            return_attention_mask=True,
            return_tensors=return_tensors,
        )
        if return_dict:
            return batch
        if batched:
            return batch["input_ids"]
        return batch["input_ids"][0] if return_tensors is None else batch["input_ids"]
