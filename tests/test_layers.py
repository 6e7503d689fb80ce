"""The layer rule of docs/ARCHITECTURE.md, read from the source (every import, lazy ones included).

    core  →  data, models  →  train  →  safl, split  →  experiments  →  plugins  →  testing  →  claims
          →  reporting  →  studies  →  reproduce, cli

(``fedlib/__init__`` imports only ``core``; the rest may import ``fedlib.__version__``.)

A module may import its own package and the layers below it, never a layer above or a sibling of
its own layer (``safl`` and ``split`` stay independent); no module imports or uses another module's
private (``_name``) names, even in its own package (issue 45); the module import graph has no circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "fedlib"
LAYER = {"core": 0, "fedlib": 0.5, "data": 1, "models": 1, "train": 2, "safl": 3, "split": 3,
         "experiments": 4, "plugins": 4.2, "testing": 4.3, "claims": 4.5, "reporting": 5, "studies": 5.2, "reproduce_summary": 5.5, "reproduce_keys": 5.5, "reproduce_watch": 5.5,
         "reproduce": 6, "cli": 6, "__main__": 7}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "fedlib"


def _imports(path: Path):
    """(imported fedlib module, names imported from it, line) for every import in ``path``."""
    module = _module_name(path)
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "fedlib" or alias.name.startswith("fedlib."):
                    yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_pkg else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "fedlib" or target.startswith("fedlib."):
                yield target, [a.name for a in node.names], node.lineno


def _graph():
    files = sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)
    return {_module_name(p): (p, list(_imports(p))) for p in files}


GRAPH = _graph()


def test_every_package_has_a_layer():
    assert {_package(m) for m in GRAPH} <= set(LAYER), sorted({_package(m) for m in GRAPH} - set(LAYER))


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_go_down_the_layers(module):
    path, imports = GRAPH[module]
    own = _package(module)
    bad = []
    for target, names, line in imports:
        other = _package(target)
        if other == own or (target == "fedlib" and names == ["__version__"]):
            continue
        if LAYER[other] >= LAYER[own]:
            bad.append(f"{path.name}:{line} imports {target} (layer {other} is not below {own})")
        bad += [f"{path.name}:{line} imports the private name {n} of {target}"
                for n in names if n.startswith("_") and n != "__version__"]
    assert not bad, "\n".join(bad)


def test_no_import_circle():
    edges = {m: {t for t, _, _ in imps if t in GRAPH and t != m} for m, (_, imps) in GRAPH.items()}
    # a package's __init__ importing its own submodules is not a circle through the package
    for m in edges:
        edges[m] = {t for t in edges[m] if not (t == m.rsplit(".", 1)[0] and m.startswith(t + "."))}
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in sorted(edges[m]):
            if state.get(t) == "open":
                raise AssertionError("import circle: " + " -> ".join(stack[stack.index(t):] + [t]))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m)


def test_the_rule_catches_an_upward_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from fedlib.experiments.config import RunConfig\nfrom fedlib.core.errors import _x\n")
    found = list(_imports(bad.rename(ROOT / "safl" / "_layer_probe.py")))
    (ROOT / "safl" / "_layer_probe.py").unlink()
    assert [t for t, _, _ in found] == ["fedlib.experiments.config", "fedlib.core.errors"]
    assert LAYER[_package("fedlib.experiments.config")] > LAYER[_package("fedlib.safl._layer_probe")]


def _private_defs(tree) -> set[str]:
    """The private (``_name``, not dunder) names a module defines: top-level and class-body names,
    and attributes it assigns on ``self`` / ``cls``."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for t in ast.walk(target):
                    if isinstance(t, ast.Name):
                        out.add(t.id)
                    elif isinstance(t, ast.Attribute):
                        out.add(t.attr)
    return {n for n in out if n.startswith("_") and not n.startswith("__")}


TREES = {m: ast.parse(p.read_text(), str(p)) for m, (p, _) in GRAPH.items()}
PRIVATE = {m: _private_defs(t) for m, t in TREES.items()}


def test_no_module_imports_another_modules_private_names():
    """Issue 45: not even within a package (the store's admin and the ledger used the store's
    ``_snapshot`` / ``_verify`` and ``store_files``' ``_Damaged``): a module's ``_name`` is its own."""
    bad = [f"{GRAPH[m][0].relative_to(ROOT.parent)}:{line} imports {n} from {target}"
           for m, (_, imports) in GRAPH.items() for target, names, line in imports
           for n in names if n.startswith("_") and not n.startswith("__") and target != m]
    assert not bad, "\n".join(bad)


def test_no_module_uses_another_modules_private_attributes():
    """``obj._name`` / ``module._name`` where ``_name`` is defined by another fedlib module only (not
    by this one): e.g. ``store._snapshot(h)`` from the ledger, ``config._hash_of``."""
    owners: dict[str, set[str]] = {}
    for m, names in PRIVATE.items():
        for n in names:
            owners.setdefault(n, set()).add(m)
    bad = []
    for m, tree in TREES.items():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if node.attr in PRIVATE[m] or node.attr not in owners:
                continue  # its own name, or a library's (torch's ``_modules``, ``os._exit``)
            bad.append(f"{GRAPH[m][0].relative_to(ROOT.parent)}:{node.lineno} uses {ast.unparse(node)} "
                       f"(private to {', '.join(sorted(owners[node.attr]))})")
    assert not bad, "\n".join(bad)


def test_the_private_name_rules_catch_a_use(tmp_path):
    tree = ast.parse("from fedlib.experiments.results.store import _x\nstore._snapshot(h)\n")
    assert [a.name for a in tree.body[0].names] == ["_x"]
    attr = tree.body[1].value.func
    assert attr.attr == "_snapshot" and "_snapshot" not in _private_defs(tree)
    assert _private_defs(ast.parse("class A:\n    def _f(self):\n        self._g = 1\n")) == {"_f", "_g"}
