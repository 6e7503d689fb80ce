"""The layer rule of docs/ARCHITECTURE.md, read from the source (every import, lazy ones included).

    core  →  data, models  →  train  →  safl, split  →  experiments  →  claims  →  reporting  →  reproduce, cli

(``fedlib/__init__`` imports only ``core``; the rest may import ``fedlib.__version__``.)

A module may import its own package and the layers below it, never a layer above or a sibling of
its own layer (``safl`` and ``split`` stay independent); no module imports another package's
private (``_name``) names; the module import graph has no circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "fedlib"
LAYER = {"core": 0, "fedlib": 0.5, "data": 1, "models": 1, "train": 2, "safl": 3, "split": 3,
         "experiments": 4, "claims": 4.5, "reporting": 5, "reproduce": 6, "cli": 6, "__main__": 7}


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
