"""The type stub `python/derender/_native.pyi` against the built module: each
class, method, property, function and module attribute the stub declares
exists at runtime, each callable with the same parameters (names, order,
kinds, defaults) as the `__text_signature__` PyO3 gives it (a class's is its
`#[new]`'s, the stub's `__init__`), and nothing public at runtime is missing
from the stub. Types are not checked: the module does not expose them."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import derender
from derender import _native

STUB = Path(derender.__file__).with_name("_native.pyi")
EMPTY = inspect.Parameter.empty
KINDS = {
    "posonlyargs": inspect.Parameter.POSITIONAL_ONLY,
    "args": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "kwonlyargs": inspect.Parameter.KEYWORD_ONLY,
}


def stub_params(fn: ast.FunctionDef, method: bool) -> list[tuple[str, Any, Any]]:
    """`(name, kind, default)` of a stub def's parameters (without `self`)."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults = [EMPTY] * (len(positional) - len(a.defaults)) + list(a.defaults)
    default_of = dict(zip((p.arg for p in positional), defaults, strict=True))
    default_of |= {p.arg: d or EMPTY for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)}
    out = []
    for field, kind in KINDS.items():
        for p in getattr(a, field):
            d = default_of[p.arg]
            out.append((p.arg, kind, d if d is EMPTY else ast.literal_eval(d)))
        if field == "args" and a.vararg:
            out.append((a.vararg.arg, inspect.Parameter.VAR_POSITIONAL, EMPTY))
    if a.kwarg:
        out.append((a.kwarg.arg, inspect.Parameter.VAR_KEYWORD, EMPTY))
    return out[1:] if method else out


def runtime_params(obj: object, method: bool) -> list[tuple[str, Any, Any]] | str:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError) as e:
        return f"no signature at runtime ({e})"
    params = list(sig.parameters.values())
    if method and params and params[0].name == "self":
        params = params[1:]
    return [(p.name, p.kind, p.default) for p in params]


def text(params: list[tuple[str, Any, Any]]) -> str:
    """Parameters as a signature reads: `(path, body, content_type='...')`."""
    return str(inspect.Signature([inspect.Parameter(n, k, default=d) for n, k, d in params]))


def mismatch(where: str, stub: list, runtime: list | str) -> list[str]:
    if isinstance(runtime, str):
        return [f"{where}: {runtime}"]
    if same_params(stub, runtime):
        return []
    return [f"{where}: stub {text(stub)} != runtime {text(runtime)}"]


def same_params(stub: list, runtime: list) -> bool:
    """Equal, a default PyO3 renders as `...` matching any stub default."""
    return len(stub) == len(runtime) and all(
        s[:2] == r[:2] and (s[2] == r[2] or (r[2] is Ellipsis and s[2] is not EMPTY))
        for s, r in zip(stub, runtime, strict=True)
    )


def is_property(fn: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list)


def public(names: object) -> set[str]:
    return {n for n in names if not n.startswith("_")}


def check_class(node: ast.ClassDef, cls: type) -> list[str]:
    problems = []
    declared = set()
    for item in node.body:
        if not isinstance(item, ast.FunctionDef):
            continue
        name, where = item.name, f"{node.name}.{item.name}"
        declared.add(name)
        if name == "__init__":
            # The constructor: the class's signature is its `#[new]`'s.
            if cls.__text_signature__ is None:
                problems.append(f"{where}: in the stub, no constructor at runtime")
                continue
            runtime = runtime_params(cls, method=False)
        elif name not in cls.__dict__:
            problems.append(f"{where}: in the stub, not at runtime")
            continue
        elif is_property(item):
            if not inspect.isgetsetdescriptor(cls.__dict__[name]):
                problems.append(f"{where}: a property in the stub, not at runtime")
            continue
        elif inspect.isgetsetdescriptor(cls.__dict__[name]):
            problems.append(f"{where}: a property at runtime, a method in the stub")
            continue
        else:
            runtime = runtime_params(getattr(cls, name), method=True)
        problems += mismatch(where, stub_params(item, method=True), runtime)
    if "__init__" not in declared and cls.__text_signature__ is not None:
        problems.append(f"{node.name}.__init__: a constructor at runtime, not in the stub")
    for name in sorted(public(cls.__dict__) - declared):
        problems.append(f"{node.name}.{name}: at runtime, not in the stub")
    return problems


def stub_problems() -> list[str]:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    problems, declared = [], set()
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            name = node.name
        else:
            continue
        declared.add(name)
        if not hasattr(_native, name):
            problems.append(f"{name}: in the stub, not at runtime")
        elif isinstance(node, ast.ClassDef):
            problems += check_class(node, getattr(_native, name))
        elif isinstance(node, ast.FunctionDef):
            runtime = runtime_params(getattr(_native, name), method=False)
            problems += mismatch(name, stub_params(node, method=False), runtime)
    for name in sorted(public(vars(_native)) - declared):
        problems.append(f"{name}: at runtime, not in the stub")
    return problems


def test_the_stub_declares_the_native_module():
    problems = stub_problems()
    assert not problems, f"{STUB} differs from derender._native:\n" + "\n".join(problems)
