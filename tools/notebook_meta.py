"""The notebooks' mechanical parts, made uniform and checked (issue 20).

    python tools/notebook_meta.py --check     # list what differs (exit 1 if anything does)
    python tools/notebook_meta.py --fix       # rewrite notebooks/**/*.py, then re-sync their .ipynb

For every paired notebook ``notebooks/<group>/<name>.{py,ipynb}``:

- metadata: no jupytext version in the header (it changes with each release); the kernelspec and ``language_info`` JupyterLab writes for the venv's ``python3`` kernel
  (no "Select Kernel" dialog; opening does not mark the notebook modified, a save is a no-op), no
  ``jupytext.main_language`` (jupytext drops it once a kernelspec is there);
- first (markdown) cell: the spec it cites is linked, relatively, to ``docs/spec/<paper>.md``
  (``spec `smofi.md` §2`` becomes a link; otherwise one "Spec:" line is appended);
- parameters cell: first line says how to change a value in JupyterLab and from a shell.

Idempotent: run it again after editing a notebook's content (the integrator does after a merge).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
# What the kernel reports and JupyterLab writes into the .ipynb when it starts (jupytext keeps it out
# of the .py). [D] The version is the project's Python (the venv the reports are executed with);
# under another Python JupyterLab still marks a notebook modified on opening (this one line).
LANGUAGE_INFO = {"codemirror_mode": {"name": "ipython", "version": 3}, "file_extension": ".py",
                 "mimetype": "text/x-python", "name": "python", "nbconvert_exporter": "python",
                 "pygments_lexer": "ipython3", "version": "3.11.7"}
# [D] The scripts' header leaves out the jupytext version that wrote it: a fresh clone installs
# whatever jupytext is current, and a header naming another version made every save a change (and
# the byte-stable checks below fail) on each jupytext release. In each notebook's own metadata, so the
# CLI, JupyterLab's contents manager and ``jupytext.writes`` all honour it.
METADATA_FILTER = "-jupytext.text_representation.jupytext_version"
SPECS = ("fedqs", "smofi")
PARAMS_HINT = ("# Edit a value here and Run All (JupyterLab), or run: "
               "fedlib reproduce --only {book} -p NAME=VALUE")


def spec_of(script: Path, first_cell: str) -> str:
    """The paper whose spec a notebook cites: its group, else the one its first cell names."""
    if script.parent.name in SPECS:
        return script.parent.name
    return "smofi" if "smofi" in first_cell.lower() else "fedqs"


def link_spec(text: str, spec: str, rel: str) -> str:
    """``spec `x.md``` -> a relative link; else append one ``Spec:`` line (markdown source)."""
    target = f"{rel}/docs/spec/{spec}.md"
    text = re.sub(rf"`{spec}\.md`(?!\]\()", f"[`{spec}.md`]({target})", text)
    if f"]({target})" not in text:
        text = (text.rstrip("\n") + f"\n\nSpec: [`docs/spec/{spec}.md`]({target}) — every "
                "\"spec §\" in this notebook refers to it.")
    return text


def with_hint(source: str, book: str) -> str:
    """The parameters cell with the how-to-change line first (replacing an older one)."""
    lines = [ln for ln in source.splitlines() if not ln.startswith("# Edit a value here and Run All")]
    return "\n".join([PARAMS_HINT.format(book=book)] + lines)


def fixed(nb, script: Path):
    """The notebook (jupytext's in-memory form) with its mechanical parts made uniform."""
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata.setdefault("jupytext", {}).pop("main_language", None)
    nb.metadata["jupytext"]["notebook_metadata_filter"] = METADATA_FILTER
    rel = "/".join([".."] * len(script.parent.relative_to(ROOT).parts))
    first = nb.cells[0]
    first.source = link_spec(first.source, spec_of(script, first.source), rel)
    book = script.relative_to(ROOT / "notebooks").with_suffix("").as_posix()
    for cell in nb.cells:
        if "parameters" in cell.metadata.get("tags", []):
            cell.source = with_hint(cell.source, book)
    return nb


def ipynb_text(text: str) -> str:
    """A .ipynb's text with ``language_info``, byte for byte as JupyterLab saves it."""
    nb = json.loads(text)
    nb["metadata"]["language_info"] = LANGUAGE_INFO
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def scripts(paths: list[str]) -> list[Path]:
    if paths:
        return [Path(p).resolve().with_suffix(".py") for p in paths]
    return sorted(p for p in (ROOT / "notebooks").rglob("*.py") if ".ipynb_checkpoints" not in p.parts)


def main(argv=None) -> int:
    import jupytext
    from jupytext.cli import jupytext as jupytext_cli

    ap = argparse.ArgumentParser(description="uniform notebook metadata, spec links, parameter hints")
    ap.add_argument("--check", action="store_true", help="only list what differs (the default)")
    ap.add_argument("--fix", action="store_true", help="rewrite the scripts and re-sync the notebooks")
    ap.add_argument("paths", nargs="*", help="notebooks or scripts (default: all under notebooks/)")
    args = ap.parse_args(argv)
    stale = []
    for script in scripts(args.paths):
        text = script.read_text()
        new = jupytext.writes(fixed(jupytext.reads(text, fmt="py:percent"), script), fmt="py:percent")
        if new != text:
            stale.append(script.relative_to(ROOT))
            if args.fix:
                script.write_text(new)
        if args.fix:
            jupytext_cli(["--quiet", "--to", "ipynb", "--update", str(script)])
        book = script.with_suffix(".ipynb")
        text = book.read_text() if book.exists() else ""
        new = ipynb_text(text) if text else text
        if new != text:
            stale.append(book.relative_to(ROOT))
            if args.fix:
                book.write_text(new)
    for s in dict.fromkeys(stale):
        print(f"{'fixed' if args.fix else 'differs'}: {s}")
    return 1 if stale and not args.fix else 0


if __name__ == "__main__":
    sys.exit(main())
