"""python/acp/_native.pyi describes the native module as built: the same functions, classes,
methods and parameter names."""

import ast
import inspect
from pathlib import Path

from acp import _native

STUB = ast.parse((Path(_native.__file__).parent / "_native.pyi").read_text())


def params(node):
    a = node.args
    return [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg != "self"]


def test_the_stub_has_every_function_and_class_with_their_parameters():
    functions = {n.name: n for n in STUB.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: n for n in STUB.body if isinstance(n, ast.ClassDef)}
    public = {name for name in dir(_native) if not name.startswith("_")}
    assert public == set(functions) | set(classes)
    for name, node in functions.items():
        assert list(inspect.signature(getattr(_native, name)).parameters) == params(node), name
    for name, node in classes.items():
        cls = getattr(_native, name)
        methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
        assert {m for m in methods if not m.startswith("_")} == {
            m for m in dir(cls) if not m.startswith("_")
        }, name
        if "__init__" in methods:
            assert list(inspect.signature(cls).parameters) == params(methods["__init__"]), name
