"""The package's metadata: environment.yml installs what pyproject.toml declares; the CLI starts."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
# conda names that differ from the PyPI name
CONDA_TO_PYPI = {"pytorch": "torch"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ]", requirement.strip(), maxsplit=1)[0].lower()


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {_name(r): r for r in project["dependencies"] + project["optional-dependencies"]["test"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {}
    for dep in env["dependencies"]:
        if isinstance(dep, str) and _name(dep) not in {"python", "pip"}:
            conda[CONDA_TO_PYPI.get(_name(dep), _name(dep))] = dep
    assert set(conda) == set(declared), (set(conda) ^ set(declared))
    for name, req in declared.items():
        pins = re.sub(r"^[A-Za-z0-9_.\-\[\]]+", "", req).replace(" ", "")
        assert pins in conda[name].replace(" ", ""), (name, req, conda[name])


def test_torch_pin_admits_the_local_wheel():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    torch_req = next(r for r in project["dependencies"] if _name(r) == "torch")
    assert "<=2.14.1" in torch_req


def test_cli_entry_points_start():
    for cmd in ([sys.executable, "-m", "fedlib", "--help"], [sys.executable, "-m", "fedlib", "--version"]):
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert "fedlib" in out.stdout


def test_top_level_layout():
    for name in ("notebooks", "fedlib", "data", "reports", "tests", "environment.yml", "README.md", ".ci/run"):
        assert (ROOT / name).exists(), name
