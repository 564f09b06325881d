"""Record vLLM 0.33.0's Beam structural tags for varied tool schemas.

Run with the Python of a vLLM 0.33.0 install (it imports vllm and xgrammar):

    /path/to/vllm-venv/bin/python tests/reference/record_beam_tags.py

For each case below it calls vLLM's own `tool_call_structural_tag` (or
`answer_rest_structural_tag`) on the `response_template` of tests/models/beam,
with the options `BeamParser._template_tag` passes (sorted and strict
arguments; a named choice is one function, no parallel calls and no answer),
and writes `beam_tags.jsonl.gz` next to this file: the case, then either the
tag as `json.dumps` writes it (`None` when vLLM derives none) or the
`ValueError` text. The corpora recorded from live vLLM cover the schemas the
goldens ask for; these cover what they do not (enums, patterns, formats,
nested and referenced schemas, extra properties, strict functions, names the
template cannot spell, answer formats, thinking off, no message start).
`beam_tags` in rust/core (grammar tests) compares derender's tag to each.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
MODEL = HERE.parent / "models" / "beam" / "tokenizer_config.json"
OUT = HERE / "beam_tags.jsonl.gz"


def fn(name: str, parameters: Any = None, strict: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if parameters is not None:
        out["parameters"] = parameters
    if strict is not None:
        out["strict"] = strict
    return out


def obj(properties: dict[str, Any] | None = None, required: Any = None, **extra: Any) -> dict:
    out: dict[str, Any] = {"type": "object"}
    if properties is not None:
        out["properties"] = properties
    if required is not None:
        out["required"] = required
    out.update(extra)
    return out


def one(schema: Any, required: bool = True) -> dict:
    """A function `f` whose one parameter `x` has `schema`."""
    return obj({"x": schema}, ["x"] if required else None)


S = {"type": "string"}
SCHEMAS: dict[str, Any] = {
    "string": one(S),
    "string_optional": one(S, required=False),
    "enum": one({"type": "string", "enum": ["celsius", "fahrenheit"]}),
    "enum_untyped": one({"enum": ["a", "b"]}),
    "enum_mixed": one({"enum": ["a", 1]}),
    "enum_spaces": one({"type": "string", "enum": [" padded ", "plain"]}),
    "enum_closer": one({"type": "string", "enum": ["a<|call|>", "b"]}),
    "enum_end_tag": one({"type": "string", "enum": ["a</rfl:parameter>", "b"]}),
    "const": one({"const": "only"}),
    "const_int": one({"const": 3}),
    "integer_bounds": one({"type": "integer", "minimum": 1, "maximum": 10}),
    "integer_empty_range": one({"type": "integer", "minimum": 5, "maximum": 1}),
    "number": one({"type": "number", "description": "a value"}),
    "boolean": one({"type": "boolean"}),
    "null": one({"type": "null"}),
    "nullable_string": one({"type": "string", "nullable": True}),
    "nullable_integer": one({"type": "integer", "nullable": True}),
    "any_of_string_null": one({"anyOf": [S, {"type": "null"}]}),
    "any_of_string_int": one({"anyOf": [S, {"type": "integer"}]}),
    "one_of_strings": one({"oneOf": [S, {"type": "string", "enum": ["x"]}]}),
    "type_list": one({"type": ["string", "integer"]}),
    "type_list_no_string": one({"type": ["integer", "null"]}),
    "nested_object": one(obj({"a": {"type": "integer"}, "b": S}, ["a"])),
    "object_no_properties": one({"type": "object"}),
    "object_min_properties": one({"type": "object", "minProperties": 1}),
    "array_of_strings": one({"type": "array", "items": S}),
    "array_min_items": one({"type": "array", "minItems": 1}),
    "array_bad_bounds": one({"type": "array", "items": S, "minItems": 3, "maxItems": 1}),
    "array_of_objects": one({"type": "array", "items": obj({"k": S}, ["k"])}),
    "pattern_digits": one({"type": "string", "pattern": r"^\d{3}-\d{4}$"}),
    "pattern_lt": one({"type": "string", "pattern": "[a-z<]+"}),
    "pattern_dot": one({"type": "string", "pattern": "a.b"}),
    "pattern_negated": one({"type": "string", "pattern": '[^"]+'}),
    "pattern_word": one({"type": "string", "pattern": r"\w+"}),
    "pattern_lookahead": one({"type": "string", "pattern": "(?=a)a"}),
    "pattern_ignorecase": one({"type": "string", "pattern": "(?i)abc"}),
    "pattern_unparsable": one({"type": "string", "pattern": "[a-"}),
    "pattern_xgrammar_refuses": one({"type": "string", "pattern": r"a{2,1}"}),
    "pattern_branch": one({"type": "string", "pattern": "(?:yes|no|maybe)"}),
    "pattern_with_length": one({"type": "string", "pattern": "[a-z]+", "minLength": 2}),
    "pattern_not_string": one({"type": "integer", "pattern": "[0-9]+"}),
    "format_date": one({"type": "string", "format": "date"}),
    "format_time": one({"type": "string", "format": "time"}),
    "format_date_time": one({"type": "string", "format": "date-time"}),
    "format_email": one({"type": "string", "format": "email"}),
    "format_hostname": one({"type": "string", "format": "hostname"}),
    "format_ipv4": one({"type": "string", "format": "ipv4"}),
    "format_uuid": one({"type": "string", "format": "uuid"}),
    "format_uri": one({"type": "string", "format": "uri"}),
    "format_unknown": one({"type": "string", "format": "color"}),
    "format_and_pattern": one({"type": "string", "format": "uuid", "pattern": "x"}),
    "schema_true": one(True),
    "schema_false": one(False),
    "schema_empty": one({}),
    "annotations_only": one({"description": "anything", "title": "X"}),
    "ref_defs": {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/point"}},
        "required": ["x"],
        "$defs": {"point": obj({"lat": {"type": "number"}}, ["lat"])},
    },
    "ref_missing": one({"$ref": "#/$defs/nowhere"}),
    "no_properties": {"type": "object"},
    "empty_properties": obj({}),
    "additional_false": obj(additionalProperties=False),
    "additional_true": obj(additionalProperties=True),
    "additional_empty": obj(additionalProperties={}),
    "additional_schema": obj(additionalProperties=S),
    "properties_additional_false": obj({"a": S}, ["a"], additionalProperties=False),
    "properties_additional_true": obj({"a": S}, ["a"], additionalProperties=True),
    "required_undeclared": obj({"a": S}, ["a", "b"]),
    "required_not_list": obj({"a": S}, "a"),
    "required_not_strings": obj({"a": S}, [1]),
    "all_required_unsorted": obj(
        {"zeta": S, "alpha": {"type": "integer"}, "mid": S}, ["zeta", "alpha", "mid"]
    ),
    "some_required_unsorted": obj({"c": S, "a": S, "b": {"type": "integer"}}, ["c"]),
    "none_required": obj({"b": S, "a": S}),
    "other_keyword": obj({"a": S}, ["a"], minProperties=1),
    "unicode_key": obj({"天気": S}, ["天気"]),
    "key_with_space": obj({"a b": S}, ["a b"]),
    "key_with_gt": obj({"a>b": S}, ["a>b"]),
    "key_with_quote": obj({'a"b': S}, ['a"b']),
    "key_with_closer": obj({"a<|call|>": S}, ["a<|call|>"]),
    "many_keys": obj({k: S for k in "hgfedcba"}, list("hgfedcba")),
}

OPTIONS = {
    "default": {},
    "parallel_off": {"parallel_tool_calls": False},
    "named": {"parallel_tool_calls": False, "answer": False},
    "thinking_off": {"requires_reasoning": False},
    "not_at_start": {"message_start": False},
    "not_at_start_thinking_off": {"message_start": False, "requires_reasoning": False},
    "no_reasoning_field": {"thinking": False},
}


def cases() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name, schema in SCHEMAS.items():
        out.append({"name": f"schema/{name}", "functions": [fn("f", schema)], "options": {}})
        out.append({"name": f"strict/{name}", "functions": [fn("f", schema, True)], "options": {}})
    base = [
        fn(
            "get_weather",
            obj({"city": S, "unit": {"type": "string", "enum": ["c", "f"]}}, ["city"]),
        )
    ]
    for name, options in OPTIONS.items():
        out.append({"name": f"options/{name}", "functions": base, "options": options})
    two = [*base, fn("search", obj({"query": S, "top_k": {"type": "integer"}}, ["query"]))]
    loose = fn("loose", obj({"p": {"type": "string", "pattern": "a.b"}}, ["p"]))
    more = [
        ("two_functions", two, {}),
        ("two_functions_thinking_off", two, {"requires_reasoning": False}),
        ("enforced_and_loose", [*base, loose], {}),
        ("only_loose", [loose], {}),
        ("only_loose_no_answer", [loose], {"answer": False}),
        ("no_parameters", [fn("ping")], {}),
        ("empty_parameters", [fn("ping", {})], {}),
        ("strict_false_string", [fn("f", one(S), "yes")], {}),
        ("dotted_name", [fn("get.weather", one(S))], {}),
        ("unicode_name", [fn("天気", one(S))], {}),
        ("hyphen_name", [fn("get-weather", one(S))], {}),
        ("newline_name", [fn("a\nb", one(S))], {}),
        ("newline_name_strict", [fn("a\nb", one(S), True)], {}),
        ("no_functions", [], {}),
        ("no_functions_thinking_off", [], {"requires_reasoning": False}),
        ("no_functions_not_at_start", [], {"message_start": False}),
        ("no_functions_no_answer", [], {"answer": False}),
        (
            "answer_json",
            base,
            {"answer_format": {"json": {"type": "object", "properties": {"a": S}}}},
        ),
        ("answer_json_object", base, {"answer_format": {"json_object": True}}),
        ("answer_choice", base, {"answer_format": {"choice": ["yes", "no"]}}),
        ("answer_regex", base, {"answer_format": {"regex": "[a-z]+"}}),
        ("answer_only_json", [], {"answer_format": {"json": {"type": "integer"}}}),
        ("named_strict", [fn("f", one(S), True)], OPTIONS["named"]),
        ("named_thinking_off", base, {**OPTIONS["named"], "requires_reasoning": False}),
    ]
    out.extend({"name": f"more/{n}", "functions": f, "options": o} for n, f, o in more)
    out.append({"name": "answer_rest", "answer_rest": True})
    return out


def main() -> None:
    from vllm.parser.abstract_parser import structured_outputs_to_format
    from vllm.parser.response_template import (
        CONTENT_FIELD,
        THINKING_FIELD,
        TOOL_FIELD,
        _serving_template,
    )
    from vllm.parser.response_template_grammar import (
        answer_rest_structural_tag,
        message_start_anchors,
        tool_call_structural_tag,
    )
    from vllm.sampling_params import StructuredOutputsParams

    raw = json.loads(MODEL.read_text())["response_template"]
    template = _serving_template(None, raw)
    fields = template.fields
    lines = []
    for case in cases():
        if case.get("answer_rest"):
            tag = answer_rest_structural_tag(fields[CONTENT_FIELD])
            lines.append({**case, "tag": json.dumps(tag), "error": None})
            continue
        o = case["options"]
        answer_format = None
        if "answer_format" in o:
            params = StructuredOutputsParams(**o["answer_format"])
            answer_format = structured_outputs_to_format(params).model_dump()
        try:
            tag = tool_call_structural_tag(
                fields.get(TOOL_FIELD),
                case["functions"],
                parallel_tool_calls=o.get("parallel_tool_calls", True),
                thinking=fields.get(THINKING_FIELD) if o.get("thinking", True) else None,
                answer=fields.get(CONTENT_FIELD) if o.get("answer", True) else None,
                answer_format=answer_format,
                message_start=(
                    message_start_anchors(template) if o.get("message_start", True) else None
                ),
                requires_reasoning=o.get("requires_reasoning", True),
                sorted_arguments=True,
                strict_arguments=True,
            )
            result = {"tag": None if tag is None else json.dumps(tag), "error": None}
        except ValueError as exc:
            result = {"tag": None, "error": str(exc)}
        lines.append({**case, "answer_format_dump": answer_format, **result})
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    # mtime 0: the same cases give the same bytes.
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(text.encode("utf-8"))
    derived = sum(1 for line in lines if line["tag"] is not None)
    errors = sum(1 for line in lines if line["error"] is not None)
    print(f"{len(lines)} cases ({derived} tags, {errors} errors) -> {OUT}")


if __name__ == "__main__":
    main()
