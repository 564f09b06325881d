"""Regenerate strict_tags.jsonl.gz: the `structured_outputs` vLLM 0.33's
`DelegatingParser._apply_structural_tag` leaves on a chat request, for tool
lists x tool_choice x strict x parallel_tool_calls x --tool-strict-level x
structural-tag model x the request's own structured outputs.

Runs vLLM's and xgrammar's real Python code: `_apply_structural_tag`,
`structured_outputs_to_format` and `_xgrammar_supports` are lifted out of
vllm/parser/abstract_parser.py, `validate_xgrammar_grammar` out of
vllm/v1/structured_output/backend_xgrammar.py, `StructuredOutputsParams` out of
vllm/sampling_params.py; vllm/tool_parsers/structural_tag_registry.py and
xgrammar's builtin_structural_tag.py are imported whole. Only the request
models and the package imports that pull in torch are stand-ins (below).
Run by hand with vLLM's source, the unzipped xgrammar 0.2.9 wheel and
apache-tvm-ffi (for xgrammar's grammar checks) on disk:
    VLLM_SRC=<unpacked vllm 0.33.0 source> XGRAMMAR=<unzipped xgrammar 0.2.9 wheel> \
    TVM_FFI=<pip install --target dir of apache-tvm-ffi> python3 gen_strict_tags.py
"""

import __future__

import ast
import copy
import dataclasses
import gzip
import importlib
import importlib.util
import json
import os
import re
import sys
import types
from pathlib import Path
from typing import Any

from pydantic import BaseModel

VLLM = Path(os.environ["VLLM_SRC"]) / "vllm"
XGRAMMAR = Path(os.environ["XGRAMMAR"]) / "xgrammar"
sys.path.insert(0, os.environ["TVM_FFI"])


def module(name: str, **attrs: Any) -> types.ModuleType:
    """A stand-in module (and its parent packages) in sys.modules."""
    parts = name.split(".")
    for i in range(1, len(parts)):
        parent = ".".join(parts[:i])
        if parent not in sys.modules:
            pkg = types.ModuleType(parent)
            pkg.__path__ = []
            sys.modules[parent] = pkg
    mod = sys.modules.get(name) or types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


def load_file(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def lift(
    path: Path, names: list[str], namespace: dict, cls: str | None = None, lazy: bool = True
) -> None:
    """Execute the named top-level definitions of a source file (or the named
    methods of class `cls`) in `namespace`, without importing the file."""
    tree = ast.parse(path.read_text())
    body = tree.body
    if cls is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    picked = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            picked.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in names for t in targets):
                picked.append(node)
    found = {getattr(n, "name", None) for n in picked} | {
        t.id
        for n in picked
        if isinstance(n, (ast.Assign, ast.AnnAssign))
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Name)
    }
    missing = set(names) - found
    assert not missing, f"{path}: {missing}"
    # Lazy annotations: the signatures name types this harness does not load.
    flags = __future__.annotations.compiler_flag if lazy else 0
    exec(
        compile(ast.Module(body=picked, type_ignores=[]), str(path), "exec", flags=flags), namespace
    )


# ---------- xgrammar: the package without its torch-importing __init__ ----------
xgr = module("xgrammar")
xgr.__path__ = [str(XGRAMMAR)]
structural_tag = importlib.import_module("xgrammar.structural_tag")
builtin = importlib.import_module("xgrammar.builtin_structural_tag")
importlib.import_module("xgrammar.exception")
importlib.import_module("xgrammar.load_binding")
grammar = importlib.import_module("xgrammar.grammar")
module(
    "xgrammar",
    StructuralTag=structural_tag.StructuralTag,
    StructuralTagItem=structural_tag.StructuralTagItem,
    Grammar=grammar.Grammar,
    normalize_tool_choice=builtin.normalize_tool_choice,
    get_model_structural_tag=builtin.get_model_structural_tag,
)


# ---------- vLLM stand-ins: request models and light helpers ----------
class VLLMValidationError(ValueError):
    pass


class FunctionDefinition(BaseModel):
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class ChatCompletionToolsParam(BaseModel):
    type: str = "function"
    function: FunctionDefinition


class NamedFunction(BaseModel):
    name: str


class ChatCompletionNamedToolChoiceParam(BaseModel):
    function: NamedFunction
    type: str = "function"


class ResponsesRequest:  # never matches: these are chat requests
    pass


class Logger:
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warning_once(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self.warnings.append(msg % args if args else msg)


LOGGER = Logger()

module("vllm.exceptions", VLLMValidationError=VLLMValidationError)
module(
    "vllm.entrypoints.openai.chat_completion.protocol",
    ChatCompletionNamedToolChoiceParam=ChatCompletionNamedToolChoiceParam,
    ChatCompletionToolsParam=ChatCompletionToolsParam,
)


def get_function_tools(tools):
    return list(tools)


def require_function_tools(tools):
    if not tools:
        raise VLLMValidationError("tool_choice requires a function call")
    return list(tools)


module(
    "vllm.tool_parsers.utils",
    custom_tool_parameters=lambda: {},
    get_function_tools=get_function_tools,
    require_function_tools=require_function_tools,
)
levels = load_file(
    "vllm.tool_parsers.tool_strict_level", VLLM / "tool_parsers/tool_strict_level.py"
)
ToolStrictLevel = levels.ToolStrictLevel
registry = load_file(
    "vllm.tool_parsers.structural_tag_registry", VLLM / "tool_parsers/structural_tag_registry.py"
)
module("vllm.envs", VLLM_ENFORCE_STRICT_TOOL_CALLING=True)

# StructuredOutputsParams and the nesting check, from sampling_params.py.
sp: dict = {"VLLMValidationError": VLLMValidationError, "json_mod": json, "Any": Any}
exec("from pydantic.dataclasses import dataclass\nfrom dataclasses import field", sp)
lift(
    VLLM / "sampling_params.py",
    [
        "MAX_STRUCTURED_OUTPUT_JSON_NESTING",
        "STRUCTURAL_TAG_WRAPPER_NESTING",
        "_exceeds_json_nesting",
        "check_json_nesting",
        "StructuredOutputsParams",
    ],
    sp,
    lazy=False,
)
StructuredOutputsParams = sp["StructuredOutputsParams"]


class SamplingParams:
    def __init__(self, structured_outputs=None) -> None:
        self.structured_outputs = structured_outputs


# The structured-output helpers, from v1/structured_output/{utils,backend_xgrammar}.py.
so_utils: dict = {"re": re}
lift(
    VLLM / "v1/structured_output/utils.py",
    ["grammar_is_likely_lark", "choice_as_grammar"],
    so_utils,
)
module("vllm.v1.structured_output.utils", **so_utils)
backend: dict = {
    "xgr": sys.modules["xgrammar"],
    "json": json,
    "Any": Any,
    "VLLMValidationError": VLLMValidationError,
    "check_json_nesting": sp["check_json_nesting"],
    "compile_regex_with_timeout": lambda fn, pattern: fn(pattern),
    "SamplingParams": SamplingParams,
    **so_utils,
}
lift(
    VLLM / "v1/structured_output/backend_xgrammar.py",
    [
        "STRING_SUPPORTED_FORMATS",
        "_has_pattern_and_length_bounds",
        "_schema_types",
        "has_xgrammar_unsupported_json_features",
        "validate_xgrammar_grammar",
    ],
    backend,
)
module("vllm.v1.structured_output.backend_xgrammar", **backend)


class ResponseFormat(BaseModel):
    type: str
    json_schema: Any = None


class JsonSchemaResponseFormat(BaseModel):
    name: str
    json_schema: dict | None = None

    def __init__(self, **data: Any) -> None:
        if "schema" in data:
            data["json_schema"] = data.pop("schema")
        super().__init__(**data)


class StructuralTagResponseFormat:
    """`model_dump(by_alias=True)` keeps the fields in declaration order."""

    keys = ["type", "format"]
    type = "structural_tag"

    def __init__(self, rf: dict) -> None:
        self.dumped = {k: rf[k] for k in self.keys}

    def model_dump(self, by_alias: bool = False) -> dict:
        return self.dumped


class LegacyStructuralTagResponseFormat(StructuralTagResponseFormat):
    keys = ["type", "structures", "triggers"]


def response_format_model(rf: dict | None):
    """The request's `response_format` as vLLM's models hold it."""
    if rf is None:
        return None
    rf = copy.deepcopy(rf)
    if rf["type"] == "json_schema":
        return ResponseFormat(
            type="json_schema", json_schema=JsonSchemaResponseFormat(**rf["json_schema"])
        )
    if rf["type"] == "structural_tag":
        legacy = "structures" in rf
        return (LegacyStructuralTagResponseFormat if legacy else StructuralTagResponseFormat)(rf)
    return ResponseFormat(type=rf["type"])


# `extract_structured_outputs`: response_format over structured_outputs.
proto: dict = {
    "replace": dataclasses.replace,
    "json": json,
    "StructuredOutputsParams": StructuredOutputsParams,
    "LegacyStructuralTagResponseFormat": LegacyStructuralTagResponseFormat,
    "StructuralTagResponseFormat": StructuralTagResponseFormat,
}
lift(
    VLLM / "entrypoints/generate/base/protocol.py",
    ["structured_outputs_from_response_format"],
    proto,
)


class ChatRequest:
    """The fields of a ChatCompletionRequest `_apply_structural_tag` reads."""

    def __init__(self, case: dict) -> None:
        self.tools = [ChatCompletionToolsParam(**t) for t in case["tools"]]
        choice = case["tool_choice"]
        self.tool_choice = (
            ChatCompletionNamedToolChoiceParam(**choice) if isinstance(choice, dict) else choice
        )
        self.parallel_tool_calls = case.get("parallel_tool_calls", True)
        so = case.get("structured_outputs")
        self.structured_outputs = StructuredOutputsParams(**so) if so is not None else None
        self.response_format = response_format_model(case.get("response_format"))

    def extract_structured_outputs(self):
        return proto["structured_outputs_from_response_format"](
            self.structured_outputs, self.response_format
        )

    def model_copy(self, update: dict):
        other = copy.copy(self)
        other.__dict__.update(update)
        return other


# `_apply_structural_tag`, `structured_outputs_to_format` and `_xgrammar_supports`.
parser_ns: dict = {
    "json": json,
    "replace": dataclasses.replace,
    "logger": LOGGER,
    "VLLMValidationError": VLLMValidationError,
    "SamplingParams": SamplingParams,
    "StructuredOutputsParams": StructuredOutputsParams,
    "check_json_nesting": sp["check_json_nesting"],
    "ChatCompletionNamedToolChoiceParam": ChatCompletionNamedToolChoiceParam,
    "ChatCompletionRequest": ChatRequest,
    "ResponsesRequest": ResponsesRequest,
    "ToolStrictLevel": ToolStrictLevel,
    "resolve_tool_strictness": registry.resolve_tool_strictness,
    "get_structural_tag_tools": registry.get_structural_tag_tools,
    "limit_to_single_tool_call": registry.limit_to_single_tool_call,
    "Grammar": grammar.Grammar,
    "Format": Any,
}
exec("from openai.types.responses import ToolChoiceCustom, ToolChoiceFunction", parser_ns)
parser_ns.update({k: getattr(structural_tag, k) for k in structural_tag.__all__})
parser_ns["GrammarFormat"] = structural_tag.GrammarFormat
lift(
    VLLM / "parser/abstract_parser.py",
    ["structured_outputs_to_format", "_xgrammar_supports"],
    parser_ns,
)
lift(
    VLLM / "parser/abstract_parser.py", ["_apply_structural_tag"], parser_ns, cls="DelegatingParser"
)
tool_parser_ns: dict = {"envs": sys.modules["vllm.envs"], "ToolStrictLevel": ToolStrictLevel}
lift(
    VLLM / "tool_parsers/abstract_tool_parser.py",
    ["get_structural_tag"],
    tool_parser_ns,
    cls="ToolParser",
)


class ToolParser:
    get_structural_tag = tool_parser_ns["get_structural_tag"]

    def __init__(self, model: str | None, default_level) -> None:
        self.structural_tag_model = model
        self.default_tool_strict_level = default_level


class Parser:
    def __init__(self, tool_parser: ToolParser, level) -> None:
        self._tool_parser = tool_parser
        self.tool_strict_level = level


def serialize(so) -> dict | None:
    """StructuredOutputsParams as msgspec writes it into sampling_params."""
    if so is None:
        return None
    return {f.name: getattr(so, f.name) for f in dataclasses.fields(so)}


# ---------- the cases ----------
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["c", "f"]},
            },
            "required": ["city"],
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search_web",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "top_k": {"type": ["integer", "null"]}},
            "required": ["query"],
        },
    },
}
NO_PARAMS = {"type": "function", "function": {"name": "ping"}}
UNICODE = {
    "type": "function",
    "function": {
        "name": "天気",
        "description": "東京 ☀",
        "parameters": {
            "type": "object",
            "properties": {"都市": {"type": "string", "enum": ["東京", 1, True]}},
        },
    },
}
COMBINATOR = {
    "type": "function",
    "function": {
        "name": "mixed",
        "parameters": {"anyOf": [{"type": "object"}], "properties": {"a": {"type": "number"}}},
    },
}


def strict(tool: dict, value: bool = True) -> dict:
    tool = copy.deepcopy(tool)
    tool["function"]["strict"] = value
    return tool


TOOL_SETS = {
    "plain": [WEATHER, SEARCH],
    "one_strict": [WEATHER, strict(SEARCH)],
    "all_strict": [strict(WEATHER), strict(SEARCH)],
    "odd": [NO_PARAMS, UNICODE, strict(COMBINATOR, False)],
    "odd_strict": [strict(NO_PARAMS), strict(UNICODE), strict(COMBINATOR)],
}
CHOICES = {
    "auto": "auto",
    "required": "required",
    "named": None,  # the set's second tool
    "none": "none",
    "null": None,
}
MODELS = {
    # model -> the parser's default_tool_strict_level
    "hermes": ToolStrictLevel.AUTO,
    "qwen_3_coder": ToolStrictLevel.AUTO,
    "glm_4_7": ToolStrictLevel.FUNCTION,
    "minimax": ToolStrictLevel.AUTO,
    "llama": ToolStrictLevel.AUTO,
    "deepseek_r1": ToolStrictLevel.AUTO,
    "deepseek_v3_1": ToolStrictLevel.AUTO,
    "kimi": ToolStrictLevel.AUTO,
    None: ToolStrictLevel.AUTO,
}
LEVELS = [None, "auto", "function", "parameter"]
NESTED: dict = {"type": "object"}
for _ in range(34):  # 69 levels: over the 64 cap, under serde_json's 128
    NESTED = {"type": "object", "properties": {"x": NESTED}}
OUTPUTS = {
    "json_schema": {
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "answer",
                "schema": {"type": "object", "properties": {"answer": {"type": "string"}}},
            },
        }
    },
    "json_object": {"response_format": {"type": "json_object"}},
    "text": {"response_format": {"type": "text"}},
    "so_json_text": {
        "structured_outputs": {"json": '{"type": "array", "items": {"type": "integer"}}'}
    },
    "regex": {"structured_outputs": {"regex": "[a-z]+ é"}},
    "choice": {"structured_outputs": {"choice": ["yes", "no", "ça"]}},
    "ebnf": {"structured_outputs": {"grammar": 'root ::= "a" | "b"'}},
    "structural_tag": {
        "structured_outputs": {
            "structural_tag": json.dumps(
                {
                    "type": "structural_tag",
                    "format": {
                        "type": "triggered_tags",
                        "triggers": ["<a>"],
                        "tags": [
                            {
                                "begin": "<a>",
                                "content": {
                                    "type": "json_schema",
                                    "json_schema": {"type": "object"},
                                },
                                "end": "</a>",
                                "extra": 1,
                            }
                        ],
                    },
                }
            )
        }
    },
    "rf_structural_tag": {
        "response_format": {
            "type": "structural_tag",
            "format": {
                "type": "sequence",
                "elements": [
                    {"type": "const_string", "value": "ok"},
                    {"type": "optional", "content": {"type": "regex", "pattern": "\\d"}},
                ],
            },
        }
    },
    "legacy_structural_tag": {
        "response_format": {
            "type": "structural_tag",
            "triggers": ["<f="],
            "structures": [{"begin": "<f=x>", "schema": {"type": "object"}, "end": "</f>"}],
        }
    },
    "disable_ws": {"structured_outputs": {"json_object": True, "disable_any_whitespace": True}},
    # What xgrammar refuses: the tool stays unconstrained, the format applies.
    "multiple_of": {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "n", "schema": {"type": "number", "multipleOf": 2}},
        }
    },
    "lookbehind": {"structured_outputs": {"regex": "(?<=a)b"}},
    "nested": {"structured_outputs": {"json": NESTED}},
    "empty_choice": {"structured_outputs": {"choice": []}},
    "bad_structural_tag": {
        "structured_outputs": {
            "structural_tag": json.dumps({"type": "structural_tag", "format": {"type": "nope"}})
        }
    },
}


def run(model, level, tools, choice, parallel, output) -> dict:
    case = {"tools": tools, "tool_choice": choice}
    if parallel is not None:
        case["parallel_tool_calls"] = parallel
    case.update(output or {})
    request = ChatRequest(case)
    before = serialize(request.structured_outputs)
    parser = Parser(
        ToolParser(model, MODELS[model]),
        None if level is None else ToolStrictLevel.from_name(level),
    )
    LOGGER.warnings.clear()
    row = {"model": model, "level": level, **case}
    # What `to_sampling_params` writes when the tag leaves the request alone.
    row["request_params"] = serialize(request.extract_structured_outputs())
    try:
        out = parser_ns["_apply_structural_tag"](parser, request)
    except Exception as e:  # noqa: BLE001 - recorded as the expected outcome
        row["error"] = f"{type(e).__name__}: {e}"
        return row
    after = serialize(out.structured_outputs)
    row["changed"] = (
        after != before or out.response_format is None and request.response_format is not None
    )
    row["expected"] = after if row["changed"] else None
    row["warnings"] = list(LOGGER.warnings)
    return row


def main() -> None:
    rows = []
    for model in MODELS:
        for tools in TOOL_SETS.values():
            for choice_name, choice in CHOICES.items():
                if choice_name == "named":
                    choice = {
                        "type": "function",
                        "function": {"name": tools[1]["function"]["name"]},
                    }
                for parallel in (None, False):
                    for level in LEVELS:
                        rows.append(run(model, level, tools, choice, parallel, None))
        # The request's own structured outputs, under auto and a forced choice.
        for output in OUTPUTS.values():
            for set_name in ("plain", "one_strict"):
                for choice in ("auto", "required"):
                    for parallel in (None, False):
                        for level in (None, "function"):
                            rows.append(
                                run(model, level, TOOL_SETS[set_name], choice, parallel, output)
                            )
    path = Path(__file__).with_name("strict_tags.jsonl.gz")
    # mtime 0: the same cases give the same bytes.
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        for row in rows:
            f.write((json.dumps(row, ensure_ascii=False) + "\n").encode())
    print(len(rows), "cases ->", path)


if __name__ == "__main__":
    main()
