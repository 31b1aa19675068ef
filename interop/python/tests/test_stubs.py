"""The type stubs (`trackgen/__init__.pyi`) say what the module has: every class, function,
method and property in them exists, and every signature the module reports (parameter names,
kinds, defaults) is the stub's."""

import ast
import inspect
import pathlib

import trackgen

STUB = pathlib.Path(trackgen.__file__).with_name("__init__.pyi")


def stub_params(fn):
    """(name, kind, default) of a stub function's parameters, `self` dropped."""
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for arg, default in zip(positional, defaults):
        if arg.arg != "self":
            out.append((arg.arg, "positional", None if default is None else ast.literal_eval(default)))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, "keyword", None if default is None else ast.literal_eval(default)))
    return out


def runtime_params(obj):
    out = []
    for p in inspect.signature(obj).parameters.values():
        if p.name == "self":
            continue
        kind = "keyword" if p.kind == p.KEYWORD_ONLY else "positional"
        out.append((p.name, kind, None if p.default is p.empty else p.default))
    return out


def same(runtime, stub):
    """The runtime parameters are the stub's (a default the module reports as `...`, one its
    signature text cannot spell, such as a tuple, matches any)."""
    if len(runtime) != len(stub):
        return False
    return all(r[:2] == s[:2] and (r[2] is Ellipsis or r[2] == s[2]) for r, s in zip(runtime, stub))


def has_signature(obj):
    try:
        inspect.signature(obj)
        return True
    except (TypeError, ValueError):
        return False


def test_stubs_match_the_module():
    tree = ast.parse(STUB.read_text())
    checked = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            fn = getattr(trackgen, node.name)
            assert same(runtime_params(fn), stub_params(node)), node.name
            checked += 1
        elif isinstance(node, ast.ClassDef):
            cls = getattr(trackgen, node.name)
            for base in node.bases:
                if isinstance(base, ast.Name):
                    assert issubclass(cls, getattr(trackgen, base.id)), node.name
            for item in node.body:
                if not isinstance(item, ast.FunctionDef):
                    continue
                if item.name == "__init__":
                    target, where = cls, node.name
                else:
                    target, where = getattr(cls, item.name), f"{node.name}.{item.name}"
                if isinstance(target, property) or not has_signature(target):
                    continue  # properties, and slots without a reported signature
                assert same(runtime_params(target), stub_params(item)), (where, runtime_params(target))
                checked += 1
    assert checked >= 25  # the whole API was compared, not a parse that found nothing
