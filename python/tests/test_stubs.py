"""The type stubs (bloomery/__init__.pyi) declare exactly the public names the module has, and
every class exactly its public methods, so the stubs cannot drift from the extension."""

import ast
import pathlib

import bloomery

STUB = pathlib.Path(bloomery.__file__).with_name("__init__.pyi")
# Dunders whose presence is part of the API (the others come from object or pybind11).
API_DUNDERS = {"__contains__", "__or__", "__ior__", "__and__", "__iand__", "__bytes__", "__eq__",
               "__enter__", "__exit__", "__copy__", "__deepcopy__", "__reduce__", "__sizeof__"}


def stub_classes():
    tree = ast.parse(STUB.read_text())
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names = {n.name for n in node.body if isinstance(n, (ast.FunctionDef,))}
            for base in node.bases:
                if isinstance(base, ast.Name) and base.id in classes:
                    names |= classes[base.id]
            classes[node.name] = names
    return classes, tree


def public(names):
    return {n for n in names if not n.startswith("_") or n in API_DUNDERS}


def test_stub_classes_match_the_runtime_classes():
    classes, _ = stub_classes()
    for name in bloomery.__all__:
        obj = getattr(bloomery, name)
        if not isinstance(obj, type) or issubclass(obj, BaseException):
            continue
        assert name in classes, f"{name} is missing from the stubs"
        own = set().union(*(vars(c) for c in obj.__mro__ if c.__module__ == "bloomery"))
        runtime = public(own)
        # A set operator the kind lacks exists at runtime only to say why (TypeError); the stubs
        # leave it out, so a type checker flags its use.
        runtime = {n for n in runtime if "have no" not in (getattr(obj, n).__doc__ or "")}
        if name == "Filter":
            continue  # the stub's Filter lists the common methods; the runtime base has none
        declared = public(classes[name]) - {"__init__"}
        runtime -= {"__init__"}
        assert declared == runtime, f"{name}: stub-only {declared - runtime}, " \
                                    f"runtime-only {runtime - declared}"


def test_stub_module_names_match():
    _, tree = stub_classes()
    declared = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared.add(node.target.id)
        elif isinstance(node, ast.Assign):
            declared |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    missing = set(bloomery.__all__) - declared
    assert not missing, f"not in the stubs: {missing}"
