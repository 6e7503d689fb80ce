"""``fedlib scoreboard``: write (or ``--check``) ``reports/SCOREBOARD.md`` / ``.csv`` and the README section."""

from __future__ import annotations

import sys
from pathlib import Path


def build(root: Path | None = None) -> dict[Path, str]:
    """{path: the text it should hold} for the scoreboard files and the README."""
    from fedlib.claims import drift, evidence, readme, scoreboard
    from fedlib.core.errors import FedlibError
    from fedlib.claims.evaluate import evaluate
    from fedlib.core.paths import checkout

    root = Path(root or checkout())
    missing = evidence.unmatched(root)
    if missing:
        raise FedlibError(f"{len(missing)} claim cell(s) read no report row, e.g. {missing[0]}",
                          "execute the report (fedlib reproduce --only NAME --force) or fix the cell in fedlib/claims/")
    rows = evaluate(root)
    records = scoreboard.table(rows)
    drift_rows = drift.table(drift.load(root))
    out = {root / "reports" / "SCOREBOARD.md": scoreboard.markdown(records, drift_rows, rows),
           root / "reports" / "SCOREBOARD.csv": scoreboard.to_csv(records)}
    readme_path = root / "README.md"
    if readme_path.is_file():
        text = readme_path.read_text()
        try:
            out[readme_path] = readme.replace(text, readme.section(rows))
        except ValueError:
            pass  # a README without the markers is left alone
    return out


def write(root: Path | None = None) -> list[Path]:
    """Write what :func:`build` gives; returns the files that changed."""
    changed = []
    for path, text in build(root).items():
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            changed.append(path)
    return changed


def stale(root: Path | None = None) -> list[Path]:
    """The files whose content differs from what :func:`build` gives."""
    return [p for p, text in build(root).items() if not p.is_file() or p.read_text() != text]


def register(subparsers) -> None:
    p = subparsers.add_parser("scoreboard", help="every claim of both papers judged from the executed reports: "
                                                 "reports/SCOREBOARD.md/.csv and the README's results section",
                              description="Judge every claim of both papers from the executed reports' evidence "
                                          "(reports/<profile>/**/*.evidence.json); write reports/SCOREBOARD.md and "
                                          ".csv and the README's results section, and print how many claims hold per "
                                          "paper and where the page is. --check writes nothing and exits 1 when a "
                                          "file is out of date.")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is out of date")
    p.set_defaults(func=_cli)


def _cli(args) -> int:
    if args.check:
        out = stale()
        for path in out:
            print(f"fedlib scoreboard: {path} is out of date (run `fedlib scoreboard`)", file=sys.stderr)
        return 1 if out else 0
    changed = write()
    print(f"fedlib scoreboard: {len(changed)} file(s) updated" + (": " + ", ".join(p.name for p in changed)
                                                                   if changed else ""))
    for line in headline_counts():
        print(line)
    print("the page: reports/SCOREBOARD.md (a one-screen summary per paper first, then every row)")
    return 0


def headline_counts(root: Path | None = None) -> list[str]:
    """One line per paper: its claims counted by verdict (each claim once, by its headline row)."""
    from fedlib.claims.evaluate import evaluate
    from fedlib.claims.summary import paper_summary

    rows = evaluate(root)
    return [paper_summary(p, rows)[0].removeprefix("### ") for p in ("FedQS", "SMoFi")]
