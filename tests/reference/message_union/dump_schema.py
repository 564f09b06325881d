"""Print the pydantic-core schema of one `messages[i]` of vLLM 0.33.0's ChatCompletionRequest as an
indented tree (the order pydantic checks members and fields in), to schema.txt beside this file.

    $VLLM_VENV/bin/python tests/reference/message_union/dump_schema.py

Notation: `union[smart]` members are listed in order (each member's name is the loc segment pydantic
puts in its errors); a TypedDict prints `TypedDict Name (extra=allow)` then its fields in check order,
`?` marking a not-required field; `generator[...]` is an `Iterable[...]` (validated lazily, a
ValidatorIterator), `list[...]` is validated eagerly; `nullable[...]` accepts None; a definition seen
before prints as `-> Name (above)`. The union's loc tag for a generator/list/str member is dropped by
vLLM's error formatter (see SPEC.md).
"""

from pathlib import Path

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

schema = ChatCompletionRequest.__pydantic_core_schema__
defs: dict = {}


def collect(x):
    if isinstance(x, dict):
        if x.get("type") == "definitions":
            for d in x["definitions"]:
                defs[d["ref"]] = d
        for v in x.values():
            collect(v)
    elif isinstance(x, list):
        for v in x:
            collect(v)


def find_field(x, name):
    if isinstance(x, dict):
        if x.get("type") == "model-fields" and name in x.get("fields", {}):
            return x["fields"][name]
        for v in x.values():
            r = find_field(v, name)
            if r:
                return r
    elif isinstance(x, list):
        for v in x:
            r = find_field(v, name)
            if r:
                return r
    return None


seen: set = set()
lines: list[str] = []


def name_of(x):
    cls = x.get("cls")
    return getattr(cls, "__name__", str(cls))


def show(x, ind):
    p = "  " * ind
    t = x.get("type")
    if t == "definition-ref":
        x = defs[x["schema_ref"]]
        t = x.get("type")
    ref = x.get("ref")
    if ref and ref in seen and t in ("typed-dict", "model"):
        lines.append(f"{p}-> {name_of(x)} (above)")
        return
    if ref:
        seen.add(ref)
    if t == "typed-dict":
        extra = x.get("extra_behavior") or x.get("config", {}).get("extra_fields_behavior")
        lines.append(f"{p}TypedDict {name_of(x)} (extra={extra})")
        for k, f in x["fields"].items():
            lines.append(f"{p}  .{k}{'' if f.get('required') else '?'}")
            show(f["schema"], ind + 2)
    elif t == "model":
        lines.append(f"{p}Model {name_of(x)}")
        show(x["schema"], ind + 1)
    elif t == "model-fields":
        for k, f in x["fields"].items():
            lines.append(f"{p}.{k}")
            show(f["schema"], ind + 1)
    elif t == "union":
        lines.append(f"{p}union[{x.get('mode', 'smart')}]")
        for c in x["choices"]:
            show(c[0] if isinstance(c, tuple) else c, ind + 1)
    elif t == "literal":
        lines.append(f"{p}literal{x['expected']!r}")
    elif t in ("nullable", "default"):
        lines.append(f"{p}{t}" + (f" (default={x['default']!r})" if "default" in x else ""))
        show(x["schema"], ind + 1)
    elif t in ("generator", "list", "dict"):
        lines.append(f"{p}{t}")
        for k in ("keys_schema", "values_schema", "items_schema"):
            if k in x:
                show(x[k], ind + 1)
    elif t == "enum":
        lines.append(f"{p}enum {name_of(x)} {[m.value for m in x['members']]}")
    elif t == "is-instance":
        lines.append(f"{p}is-instance {name_of(x)}")
    elif t in ("function-before", "function-after", "function-wrap", "function-plain"):
        lines.append(f"{p}{t} {x['function'].get('function')}")
        if "schema" in x:
            show(x["schema"], ind + 1)
    else:
        lines.append(f"{p}{t}")


collect(schema)
lines.append("ChatCompletionRequest.messages:")
show(find_field(schema, "messages")["schema"], 1)
out = Path(__file__).with_name("schema.txt")
out.write_text("\n".join(lines) + "\n")
print(f"wrote {out} ({len(lines)} lines)")
