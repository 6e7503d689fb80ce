"""Shape rules of the package (issue 21): no function in ``fedlib/`` longer than 80 lines."""

import ast
from pathlib import Path

MAX_LINES = 80
ROOT = Path(__file__).resolve().parents[1] / "fedlib"


def test_no_function_longer_than_80_lines():
    long = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    long.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, "split these into named steps:\n" + "\n".join(long)


def test_no_module_is_over_600_lines():
    """Issue 32: small modules with one job (the FedQS package, the store split in three)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "fedlib"
    long = {str(p.relative_to(root)): n for p in root.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 600}
    assert not long, long
