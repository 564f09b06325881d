"""Record xgrammar 0.2.8's JSON schema -> EBNF text, and vLLM 0.33.0's Cohere
tool grammar and structural tag built around it, for derender's Rust port
(rust/core/src/structured/xgrammar/ and
rust/core/src/parse/families/cohere/tool_grammar.rs), in-process.

What it records (gzip JSON lines):

- `{"schema": S, "ebnf": T}`: `str(xgr.Grammar.from_json_schema(json.dumps(S)))`
  with every option at its default, as vLLM's `collect_tool_schema` calls it.
- `{"schema": S, "error": E}`: the `RuntimeError` text xgrammar raises instead,
  its `[HH:MM:SS]` clock replaced by `[00:00:00]`.
- `{"tools": [...], "response_schema": S, "architecture": A, "structural_tag": T}`:
  `convert_schema_to_structural_tags(schema=S, tools=[...], model_architecture=A)`
  (`T` is its JSON text, or null), or `"error"` / `"error_type"` when it raises.

Sources: every tool list in the recorded cohere_command3/4 corpora (with the
per-tool schemas vLLM hands xgrammar for them, captured as it calls xgrammar),
the examples of tests/models/cohere_command/XGRAMMAR_EBNF.md, hand-written
realistic schemas, and seeded random schemas and tool lists.

    <venv with vllm==0.33.0>/bin/python tests/reference/record_cohere_xgrammar.py

writes tests/reference/cohere/xgrammar_ebnf.jsonl.gz.
"""

from __future__ import annotations

import ast
import gzip
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import xgrammar as xgr
from vllm.parser.cohere_command import convert_schema_to_structural_tags

HERE = Path(__file__).resolve().parent
OUT = HERE / "cohere" / "xgrammar_ebnf.jsonl.gz"
CORPORA = sorted(HERE.glob("*/cohere_command*.jsonl.gz"))
ARCHITECTURES = [
    "Cohere2ForCausalLM",
    "Cohere2VisionForConditionalGeneration",
    "Cohere2MoeForCausalLM",
]
CLOCK = re.compile(r"^\[\d\d:\d\d:\d\d\] ")

Json = Any


def xgrammar_case(schema: Json) -> dict[str, Json]:
    try:
        return {"schema": schema, "ebnf": str(xgr.Grammar.from_json_schema(json.dumps(schema)))}
    except RuntimeError as error:
        return {"schema": schema, "error": CLOCK.sub("[00:00:00] ", str(error))}


_captured: list[Json] = []
_from_json_schema = xgr.Grammar.from_json_schema


def _capturing_from_json_schema(schema: str, *args: Any, **kwargs: Any) -> xgr.Grammar:
    _captured.append(json.loads(schema))
    return _from_json_schema(schema, *args, **kwargs)


def tag_case(tools: list[Json], response_schema: Json, architecture: str) -> dict[str, Json]:
    """vLLM's structural tag; the tool schemas it converts land in `_captured`."""
    case: dict[str, Json] = {
        "tools": tools,
        "response_schema": response_schema,
        "architecture": architecture,
    }
    xgr.Grammar.from_json_schema = _capturing_from_json_schema  # type: ignore[method-assign]
    try:
        case["structural_tag"] = convert_schema_to_structural_tags(
            schema=response_schema, tools=tools, model_architecture=architecture
        )
    except Exception as error:  # noqa: BLE001 - every refusal is recorded
        case["error"] = CLOCK.sub("[00:00:00] ", str(error))
        case["error_type"] = type(error).__name__
    finally:
        xgr.Grammar.from_json_schema = _from_json_schema  # type: ignore[method-assign]
    return case


# ---- the recorded corpora ------------------------------------------------------------


def _recorded_calls(path: Path) -> Iterator[tuple[Json, Json]]:
    """(request, response) pairs of a corpus file, whatever its layout."""
    with gzip.open(path, "rt") as lines:
        for line in lines:
            record = json.loads(line)
            if "calls" in record:
                calls = [(call.get("request"), call.get("response")) for call in record["calls"]]
            else:
                calls = [(record.get("body", record.get("request")), record.get("response"))]
            for request, response in calls:
                # responses/ holds Python reprs (some cut short: skipped).
                try:
                    if isinstance(request, str):
                        request = ast.literal_eval(request)
                    if isinstance(response, str):
                        response = ast.literal_eval(response)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(request, dict) and isinstance(response, dict):
                    yield request, response


def _openai_tools(tools: list[Json]) -> list[Json]:
    """Anthropic `input_schema` tools as the OpenAI ones vLLM turns them into."""
    converted = []
    for tool in tools:
        if isinstance(tool, dict) and "input_schema" in tool:
            function = {"name": tool.get("name"), "parameters": tool["input_schema"]}
            if "description" in tool:
                function["description"] = tool["description"]
            tool = {"type": "function", "function": function}
        converted.append(tool)
    return converted


def corpus_cases() -> Iterator[tuple[list[Json], Json]]:
    """Distinct (tools, response schema) pairs whose recorded tag vLLM built."""
    seen: set[str] = set()
    for path in CORPORA:
        for request, response in _recorded_calls(path):
            sampling = response.get("sampling_params") or {}
            tag_text = (sampling.get("structured_outputs") or {}).get("structural_tag")
            tools = request.get("tools")
            if not tag_text or not tools:
                continue
            tag = json.loads(tag_text)
            schemas = [
                t["content"]["json_schema"]
                for t in tag["format"]["tags"]
                if t["content"]["type"] == "json_schema"
            ]
            if not any(t["content"]["type"] == "grammar" for t in tag["format"]["tags"]):
                continue  # a request's own structural tag, passed through
            tools = _openai_tools(tools)
            response_schema = schemas[0] if schemas else None
            key = json.dumps([tools, response_schema])
            if key in seen:
                continue
            seen.add(key)
            rebuilt = convert_schema_to_structural_tags(
                schema=response_schema, tools=tools, model_architecture=ARCHITECTURES[0]
            )
            assert rebuilt == tag_text, f"vLLM no longer rebuilds the tag recorded in {path}"
            yield tools, response_schema


# ---- named and realistic schemas -------------------------------------------------------

STRING = {"type": "string"}
INTEGER = {"type": "integer"}

NAMED: list[Json] = [
    {"type": "integer"},
    {"type": "string", "description": "x"},
    {
        "type": "object",
        "properties": {"a": STRING, "b": INTEGER},
        "required": ["a", "b"],
    },
    {"type": "object", "properties": {"a": STRING, "b": INTEGER, "c": {"type": "boolean"}}},
    {
        "type": "object",
        "properties": {"a": STRING, "b": INTEGER, "c": {"type": "boolean"}},
        "required": ["c"],
    },
    {"type": "object", "properties": {}},
    {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "n": {"enum": [1, 2.5, None, True, 'a"b']},
        },
        "required": ["unit", "n"],
    },
    {"const": "a/b\\c\"d\u00e9\u65e5\U0001f600'?\n\u0001"},
    {"type": "array", "items": STRING},
    {
        "type": "array",
        "items": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
        "minItems": 2,
        "maxItems": 4,
    },
    {
        "type": "object",
        "properties": {
            "v": {"anyOf": [STRING, {"type": "null"}]},
            "w": {"type": ["integer", "boolean"]},
        },
        "required": ["v", "w"],
    },
    {
        "type": "object",
        "properties": {"item": {"$ref": "#/$defs/Item"}},
        "$defs": {"Item": {"type": "object", "properties": {"n": INTEGER}}},
    },
    {"type": "string", "pattern": "^[0-9]+$"},
    {
        "type": "object",
        "properties": {"when": {"type": "object", "properties": {"date": STRING, "hour": INTEGER}}},
        "required": ["when"],
    },
    {
        "type": "object",
        "properties": {"a": STRING},
        "required": ["a"],
        "additionalProperties": True,
    },
]

REALISTIC: list[Json] = [
    {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City and country"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
        },
        "required": ["location"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "to": {"type": "array", "items": {"type": "string", "format": "email"}, "minItems": 1},
            "subject": {"type": "string", "maxLength": 120},
            "body": {"type": "string"},
            "send_at": {"type": "string", "format": "date-time"},
        },
        "required": ["to", "subject", "body"],
    },
    {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "exclusiveMinimum": 0, "maximum": 100},
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "filters": {
                "type": "object",
                "properties": {"lang": {"type": "string", "pattern": "^[a-z]{2}$"}},
                "additionalProperties": {"type": "string"},
            },
        },
        "required": ["query"],
    },
    {
        "$defs": {
            "Address": {
                "type": "object",
                "properties": {
                    "street": {"title": "Street", "type": "string"},
                    "zip": {"title": "Zip", "type": "string", "pattern": "^\\d{5}(-\\d{4})?$"},
                },
                "required": ["street", "zip"],
                "title": "Address",
            }
        },
        "properties": {
            "name": {"title": "Name", "type": "string"},
            "age": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "address": {"$ref": "#/$defs/Address"},
            "tags": {"items": {"type": "string"}, "title": "Tags", "type": "array"},
        },
        "required": ["name", "address"],
        "title": "Person",
        "type": "object",
    },
    {
        "type": "object",
        "properties": {
            "node": {"$ref": "#/definitions/Node"},
        },
        "definitions": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "number"},
                    "children": {"type": "array", "items": {"$ref": "#/definitions/Node"}},
                },
            }
        },
    },
    {
        "type": "object",
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "ip": {"type": "string", "format": "ipv4"},
            "site": {"type": "string", "format": "uri"},
            "day": {"type": "string", "format": "date"},
            "color": {"type": "string", "pattern": "^#?([a-f0-9]{6}|[a-f0-9]{3})$"},
            "phone": {"type": "string", "pattern": "^\\+?[1-9]\\d{1,14}$"},
            "rating": {"type": "integer", "multipleOf": 5, "minimum": 0, "maximum": 100},
            "weight": {"type": "number", "exclusiveMinimum": 0.5, "exclusiveMaximum": 250.75},
        },
    },
    {
        "type": "object",
        "properties": {
            "shape": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
                        "required": ["kind", "r"],
                    },
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                        "required": ["kind", "side"],
                    },
                ]
            },
            "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]},
            "meta": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}},
            "labels": {"type": "object", "propertyNames": {"pattern": "^[a-z_]+$"}},
            "range": {
                "type": "object",
                "minProperties": 1,
                "maxProperties": 2,
                "properties": {"lo": INTEGER, "hi": INTEGER, "step": INTEGER},
            },
            "mode": {"allOf": [{"type": "string", "enum": ["fast", "slow"]}]},
        },
        "required": ["shape"],
    },
]

ERRORS: list[Json] = [
    {"type": "foo"},
    {"type": 5},
    {"type": ["string", 5]},
    {"type": "string", "format": 5},
    {"type": "string", "pattern": 5},
    {"type": "object", "required": [1]},
    {"type": "object", "properties": 5},
    {"enum": []},
    {"enum": 5},
    {"$ref": 5},
    {"$ref": "#/$defs/Missing"},
    {"$ref": "#/$defs/A", "$defs": {"A": {"type": "nope"}}},
    False,
    5,
    {"type": "integer", "minimum": 5, "maximum": 1},
    {"type": "integer", "minimum": 1.5},
    {"type": "integer", "minimum": 1e30},
    {"type": "integer", "minimum": -9223372036854775808.0},
    {"type": "integer", "exclusiveMinimum": 9223372036854775807},
    {"type": "integer", "multipleOf": 0},
    {"type": "integer", "multipleOf": 7, "minimum": 1, "maximum": 5},
    {"type": "number", "minimum": 5, "exclusiveMaximum": 5},
    {"type": "number", "multipleOf": "a"},
    {"type": "string", "minLength": 5, "maxLength": 2},
    {"type": "string", "minLength": 1.0},
    {"type": "array", "items": [STRING]},
    {"type": "array", "prefixItems": [5]},
    {"type": "array", "prefixItems": [False]},
    {"type": "array", "minItems": 3, "maxItems": 1, "items": STRING},
    {"type": "array", "maxItems": -1},
    {"type": "array", "prefixItems": [STRING, STRING], "maxItems": 1},
    {"type": "array", "prefixItems": [STRING], "items": False, "minItems": 2},
    {"type": "object", "minProperties": -1},
    {"type": "object", "minProperties": 3, "maxProperties": 1},
    {"type": "object", "properties": {"a": STRING}, "minProperties": 2},
    {"type": "object", "required": ["a", "b"], "maxProperties": 1},
    {"type": "object", "additionalProperties": 5},
    {"type": "object", "propertyNames": {"type": "integer"}},
    {"type": "string", "pattern": "[a-"},
    {"type": "string", "pattern": "\\p{L}+"},
    {"type": "string", "pattern": "\\bword"},
    {"type": "string", "pattern": "(a)\\1"},
    {"type": "string", "pattern": "a{2,1}"},
    {"type": "string", "pattern": "*a"},
    {"type": "string", "pattern": "[z-a]"},
    {"type": "string", "pattern": "caf\u00e9[a-"},
    # C++ int narrowing of counts (0.2.8 refuses some, treats others as unbounded).
    {"type": "string", "minLength": 2147483648},
    {"type": "string", "maxLength": 2147483648},
    {"type": "string", "minLength": -5},
    {"type": "string", "minLength": -2147483649},
    {"type": "array", "minContains": 2147483648, "items": {}},
    {"type": "array", "maxItems": 4294967296, "items": {}},
    {"type": "array", "minItems": 1.0, "items": {}},
    {"type": "object", "minProperties": 2147483648},
    {"type": "object", "maxProperties": 1.0},
]

PATTERNS = [
    "^[0-9]+$",
    "^[a-z]+$",
    "[A-Z][a-z]*",
    "^\\d{3}-\\d{4}$",
    "^(foo|bar)$",
    "a|b",
    ".*",
    "^\\w+@\\w+\\.com$",
    '^[^"]*$',
    "(?:ab)+c?",
    "^[a-zA-Z0-9_-]{1,64}$",
    "\\s+",
    "^\\S+$",
    "x{2,}",
    "^[\\-+]?\\d+(\\.\\d+)?$",
    "[.]",
    "^\\$\\d+$",
    "a{0,3}b",
    "^$",
    "",
    "(a)(b)",
    "^#[0-9A-Fa-f]{6}$",
    "^https?://",
    "(?i)^abc$",
    "a+?b",
    "\\u0041\\x42",
    "[^\\x20-\\uffff]",
    '^"a$',
    "\\\\",
    "[\\b]x",
    "\\n",
    "caf\u00e9",
    "^\u00e9+$",
    "\U0001f600*",
    "[\u00e9-\u00ff]{2}",
    "\\u00e9a[\\u00e9a]",
    "[^a-z\u00e9]",
    ".\u00e9?",
    "(\u00e9|x)+",
    "\u00e9{3}",
    "\u00e9\\d\\w\\s.",
]

NAMES = [
    "a",
    "b",
    "city",
    "unit",
    "query",
    "to",
    "n",
    "x_y",
    "root",
    "basic_string",
    "caf\u00e9",
    "\u65e5\u672c",
    'q"uote',
    "back\\slash",
    "sp ace",
    "tab\tkey",
    "emoji\U0001f600",
    "ab",
    "abc",
    "a-b",
    "A.B",
    "items",
    "properties",
    "type",
]
TEXTS = [
    "x",
    "celsius",
    'a"b',
    "c\\d",
    "new\nline",
    "\u00e9t\u00e9",
    "\u6771\u4eac",
    "\U0001f600",
    "it's",
    "q?",
    "",
    "tab\t",
    "\x01ctl",
    "\x7f",
    "/slash",
    "root",
    "-",
]
NUMBERS = [
    0,
    1,
    -7,
    42,
    2.5,
    -0.0,
    1.0,
    0.1,
    1e20,
    2.5e-7,
    12345678901234567890,
    100.0,
    9007199254740993,
    3.14159,
]
FORMATS = [
    "email",
    "date",
    "time",
    "date-time",
    "duration",
    "ipv4",
    "ipv6",
    "hostname",
    "uuid",
    "uri",
    "uri-reference",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
    "custom",
]


# ---- seeded random schemas -----------------------------------------------------------


class SchemaMaker:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.defs: dict[str, Json] = {}

    def value(self, depth: int = 0) -> Json:
        r = self.rng
        kind = r.randrange(7 if depth < 2 else 4)
        if kind == 0:
            return r.choice(TEXTS)
        if kind == 1:
            return r.choice(NUMBERS)
        if kind == 2:
            return r.choice([True, False, None])
        if kind == 3:
            return r.choice(TEXTS)
        if kind == 4:
            return [self.value(depth + 1) for _ in range(r.randrange(3))]
        return {r.choice(NAMES): self.value(depth + 1) for _ in range(r.randrange(3))}

    def annotate(self, schema: dict[str, Json]) -> dict[str, Json]:
        r = self.rng
        if r.random() < 0.2:
            schema["description"] = r.choice(TEXTS)
        if r.random() < 0.05:
            schema["default"] = self.value()
        return schema

    def bounded_number(self) -> dict[str, Json]:
        r = self.rng
        kind = r.choice(["integer", "number"])
        if kind == "integer":
            values: list[Json] = [0, 1, -1, 5, 10, 99, 100, -50, 7, 1000, 65535, -2147483648]
        else:
            values = [0, 1, -1, 5, 10, 100, -50, 2.5, 0.1, -0.75, 1e3, 12.125, 99.999, 1e-7]
        schema: dict[str, Json] = {"type": kind}
        keys = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
        for key in r.sample(keys, r.randint(1, 2)):
            schema[key] = r.choice(values)
        low = max(schema.get("minimum", -1e9), schema.get("exclusiveMinimum", -1e9))
        high = min(schema.get("maximum", 1e9), schema.get("exclusiveMaximum", 1e9))
        if low >= high:
            schema.pop("maximum", None)
            schema.pop("exclusiveMaximum", None)
        if kind == "integer" and r.random() < 0.2:
            schema["multipleOf"] = r.choice([2, 3, 5])
        return schema

    def scalar(self) -> dict[str, Json]:
        r = self.rng
        kind = r.randrange(15)
        if kind < 5:
            return {"type": ["string", "integer", "number", "boolean", "null"][kind]}
        if kind == 5:
            return {"type": "string", "enum": r.sample(TEXTS, r.randint(1, 4))}
        if kind == 6:
            return {"enum": [self.value() for _ in range(r.randint(1, 4))]}
        if kind == 7:
            return {"const": self.value()}
        if kind == 8:
            return {"type": "string", "pattern": r.choice(PATTERNS)}
        if kind == 9:
            schema: dict[str, Json] = {"type": "string"}
            if r.random() < 0.7:
                schema["minLength"] = r.randint(0, 5)
            if r.random() < 0.7:
                schema["maxLength"] = r.randint(schema.get("minLength", 0), 10)
            return schema
        if kind == 10:
            return self.bounded_number()
        if kind == 11:
            return {"type": "string", "format": r.choice(FORMATS)}
        if kind == 12:
            return {"type": "integer", "multipleOf": r.choice([2, 3, 7])}
        if kind == 13:
            return {}
        return {"type": r.choice(["array", "object"])}

    def schema(self, depth: int) -> Json:
        r = self.rng
        if depth <= 0 or r.random() < 0.35:
            return self.annotate(self.scalar())
        kind = r.randrange(10)
        if kind <= 3:
            return self.object(depth)
        if kind == 4:
            return self.array(depth)
        if kind == 5:
            keyword = r.choice(["anyOf", "oneOf"])
            return {keyword: [self.schema(depth - 1) for _ in range(r.randint(1, 3))]}
        if kind == 6:
            types = ["string", "integer", "number", "boolean", "null", "array", "object"]
            return {"type": r.sample(types, r.randint(1, 3))}
        if kind == 7:
            name = r.choice(["Item", "Node", "my-item", "X1", "Thing.v2"])
            if name not in self.defs:
                self.defs[name] = None
                self.defs[name] = self.schema(depth - 1)
            return {"$ref": "#/$defs/" + name}
        if kind == 8:
            return {"allOf": [self.schema(depth - 1) for _ in range(r.choice([1, 1, 2]))]}
        return self.object(depth)

    def object(self, depth: int) -> dict[str, Json]:
        r = self.rng
        names = r.sample(NAMES, r.randint(0, 5))
        schema: dict[str, Json] = {
            "type": "object",
            "properties": {name: self.schema(depth - 1) for name in names},
        }
        if r.random() < 0.1:
            del schema["type"]
        if names and r.random() < 0.6:
            schema["required"] = r.sample(names, r.randint(0, len(names)))
        if r.random() < 0.1:
            schema.setdefault("required", []).append("zzz_missing")
        if r.random() < 0.15:
            schema["additionalProperties"] = r.choice([True, False, INTEGER, {}])
        if r.random() < 0.1:
            schema["minProperties"] = r.randint(0, 3)
        if r.random() < 0.1:
            least = max(schema.get("minProperties", 0), len(schema.get("required", [])))
            schema["maxProperties"] = r.randint(least, least + 3)
        if r.random() < 0.05:
            schema["patternProperties"] = {r.choice(["^x_", "^[a-z]+$"]): self.schema(depth - 1)}
        if r.random() < 0.05:
            schema["propertyNames"] = r.choice([{"pattern": "^[a-z]+$"}, {"maxLength": 3}])
        if r.random() < 0.04:
            schema["unevaluatedProperties"] = r.choice([True, False, STRING])
        return self.annotate(schema)

    def array(self, depth: int) -> dict[str, Json]:
        r = self.rng
        schema: dict[str, Json] = {"type": "array"}
        if r.random() < 0.85:
            schema["items"] = self.schema(depth - 1)
        if r.random() < 0.15:
            schema["prefixItems"] = [self.schema(depth - 1) for _ in range(r.randint(1, 3))]
        if r.random() < 0.4:
            schema["minItems"] = r.randint(0, 3)
        if r.random() < 0.4:
            least = max(schema.get("minItems", 0), len(schema.get("prefixItems", [])))
            schema["maxItems"] = r.randint(least, 6)
        return self.annotate(schema)


def random_schema(seed: int) -> Json:
    maker = SchemaMaker(seed)
    schema = maker.schema(maker.rng.randint(1, 4))
    if maker.defs and isinstance(schema, dict):
        schema["$defs"] = {k: v for k, v in maker.defs.items() if v is not None}
    return schema


TOOL_NAMES = [
    "get_weather",
    "search",
    "my-root",
    "root",
    "basic_string",
    'a<b>&"c',
    "caf\u00e9",
    "\u5929\u6c17",
    "tool.v2",
    "x root",
    "root-x",
    "t",
    "send_email",
]


def random_tools(seed: int) -> tuple[list[Json], Json, str]:
    rng = random.Random(seed)
    tools: list[Json] = []
    for index in range(rng.randint(1, 3)):
        name = rng.choice(TOOL_NAMES)
        parameters = random_schema(seed * 10 + index)
        if not isinstance(parameters, dict) or rng.random() < 0.1:
            parameters = {}
        function: dict[str, Json] = {"name": name}
        if rng.random() < 0.8:
            function["parameters"] = parameters
        if rng.random() < 0.3:
            function["description"] = rng.choice(TEXTS)
        if rng.random() < 0.2:
            tools.append({"type": "function", **function})  # Responses API shape
        else:
            tools.append({"type": "function", "function": function})
    response_schema = rng.choice([None, None, {"type": "object"}, REALISTIC[0]])
    return tools, response_schema, rng.choice(ARCHITECTURES)


def deep(levels: int) -> Json:
    schema: Json = {"type": "object"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


SPECIAL_TOOLS: list[tuple[list[Json], Json, str]] = [
    ([{"type": "function", "function": {"name": "ping"}}], None, ARCHITECTURES[0]),
    # vLLM's nesting cap: 1 + 2 * levels JSON levels, at most 64 allowed.
    (
        [{"type": "function", "function": {"name": "f", "parameters": deep(31)}}],
        None,
        ARCHITECTURES[0],
    ),
    (
        [{"type": "function", "function": {"name": "f", "parameters": deep(32)}}],
        None,
        ARCHITECTURES[0],
    ),
    (
        [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        {"type": "object"},
        ARCHITECTURES[1],
    ),
    (
        [{"type": "function", "function": {"name": "f", "parameters": {"type": "foo"}}}],
        None,
        ARCHITECTURES[0],
    ),
    ([{"type": "function", "function": {"name": 5}}, {"name": None}], None, ARCHITECTURES[0]),
    ([], {"type": "object"}, ARCHITECTURES[2]),
    ([], None, ARCHITECTURES[0]),
    ([{"type": "function", "function": {"name": "f"}}], None, "LlamaForCausalLM"),
    (
        [
            {"type": "function", "function": {"name": "dup", "parameters": {"type": "object"}}},
            {"type": "function", "function": {"name": "other"}},
            {"type": "function", "function": {"name": "dup", "parameters": deep(2)}},
        ],
        None,
        ARCHITECTURES[0],
    ),
    (
        [
            {"type": "custom", "name": "shell"},
            {"type": "namespace", "name": "ns", "tools": [{"type": "function", "name": "inner"}]},
        ],
        None,
        ARCHITECTURES[0],
    ),
    (
        [{"type": "function", "function": {"name": "f", "parameters": "not a dict"}}],
        None,
        ARCHITECTURES[0],
    ),
]


def main() -> None:
    lines: list[dict[str, Json]] = []
    schemas: list[Json] = []
    for tools, response_schema in corpus_cases():
        _captured.clear()
        lines.append(tag_case(tools, response_schema, ARCHITECTURES[0]))
        schemas.extend(_captured)
    corpus_tools = len(lines)
    corpus_schemas = len({json.dumps(schema) for schema in schemas})
    for tools, response_schema, architecture in SPECIAL_TOOLS:
        lines.append(tag_case(tools, response_schema, architecture))
    for seed in range(60):
        lines.append(tag_case(*random_tools(seed)))
    schemas += NAMED + REALISTIC + ERRORS
    schemas += [{"type": "string", "pattern": pattern} for pattern in PATTERNS]
    schemas += [{"type": "string", "format": name} for name in FORMATS]
    schemas += [random_schema(seed) for seed in range(700)]
    seen: set[str] = set()
    distinct = []
    for schema in schemas:
        key = json.dumps(schema)
        if key not in seen:
            seen.add(key)
            distinct.append(schema)
    lines += [xgrammar_case(schema) for schema in distinct]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    with open(OUT, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
        out.write(text.encode("utf-8"))  # mtime=0: the same input gives the same bytes
    errors = sum("error" in line for line in lines)
    print(
        f"{OUT.relative_to(HERE.parent.parent)}: {len(lines)} lines "
        f"({corpus_tools} corpus tool lists with {corpus_schemas} distinct tool schemas, "
        f"{len(distinct)} schemas in all, {errors} errors), {OUT.stat().st_size} bytes"
    )


if __name__ == "__main__":
    main()
