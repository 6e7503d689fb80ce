"""What a pull changed in a ledger, from git (``fedlib verify --changed-since REV``, issues 44 and 59).

Every entry whose files were added, modified, renamed or deleted since git revision ``REV`` (committed,
staged, changed in the work tree, or untracked) is listed, from ``git diff --name-status -z``: git is
run without a shell, with the revision checked to name a commit first and never read as an option.

* ``added``: entries that did not exist at ``REV``;
* ``rewritten``: entries that existed at ``REV`` and whose files changed (entries only ever get added:
  a hash names one config, so a rewrite is either damage or a forgery) — recomputed like added ones;
* ``deleted``: entries that existed at ``REV`` and are gone;
* ``strays``: changed paths that are no entry (a non-hex folder, a link, a file, a wrong two-letter
  folder), one line each.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field

from fedlib.core.errors import FedlibError, check

__all__ = ["Changes", "changed_since", "git_show"]

_ENTRY_PATH = re.compile(r"^([0-9a-f]{2})/([0-9a-f]{64})(?:/(.*))?$")


@dataclass
class Changes:
    added: list = field(default_factory=list)      # hashes present now, absent at REV
    rewritten: list = field(default_factory=list)  # hashes present at REV and now, files changed
    deleted: list = field(default_factory=list)    # hashes present at REV, gone now
    strays: list = field(default_factory=list)     # (path, why)

    @property
    def recompute(self) -> list[str]:
        return sorted(set(self.added) | set(self.rewritten))


def _git(root, rev: str, *argv, ok_codes=(0,)) -> str:
    try:
        out = subprocess.run(["git", "-C", str(root), *argv], capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise FedlibError("--changed-since needs git, which is not installed",
                          "install git, or verify with --sample N / --only NOTEBOOK") from None
    except subprocess.TimeoutExpired:
        raise FedlibError(f"git did not answer within 120 s in {str(root)!r}", "try again") from None
    if out.returncode not in ok_codes:
        why = (out.stderr.strip().splitlines() or ["git failed"])[-1][:200]
        raise FedlibError(f"git cannot list what changed in {str(root)!r} since {rev!r}: {why}",
                          "give a revision of this repository (e.g. origin/main, HEAD~3, a commit)")
    return out.stdout


def check_revision(root, rev) -> None:
    """FedlibError unless ``rev`` is a plain revision naming a commit of the repository at ``root``."""
    check(isinstance(rev, str) and rev.strip() != "" and not rev.startswith("-") and "\0" not in rev,
          f"--changed-since needs a git revision, got {rev!r}", "e.g. --changed-since origin/main or HEAD~3")
    _git(root, rev, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")  # rev: never "-..."


def git_show(root, rev: str, path: str) -> bytes | None:
    """The bytes of ``path`` (relative to ``root``, ``../`` allowed) at commit ``rev``; None when the
    revision has no such file."""
    try:
        out = subprocess.run(["git", "-C", str(root), "show", f"{rev}:./{path}"], capture_output=True,
                             timeout=120)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 else None


def _name_status(text: str) -> list[tuple[str, str]]:
    """(status letter, path) pairs of ``git diff --name-status -z``: a rename or copy gives its
    old path as "D" and its new one as "A"."""
    parts, out, i = text.split("\0"), [], 0
    while i < len(parts) and parts[i]:
        status = parts[i][:1]
        if status in ("R", "C") and i + 2 < len(parts):
            if status == "R":
                out.append(("D", parts[i + 1]))
            out.append(("A", parts[i + 2]))
            i += 3
        else:
            out.append((status, parts[i + 1] if i + 1 < len(parts) else ""))
            i += 2
    return out


def changed_since(ledger, rev: str) -> Changes:
    """The ledger entries a pull added, rewrote or deleted since ``rev`` (see the module docstring)."""
    root = ledger.root
    check(root.is_dir(), f"no ledger folder at {str(root)!r}", "pass --ledger DIR")
    check_revision(root, rev)
    pairs = _name_status(_git(root, rev, "diff", "--name-status", "-z", "--relative", "--find-renames",
                              "--end-of-options", rev, "--", "."))
    pairs += [("A", p) for p in _git(root, rev, "ls-files", "-z", "--others", "--exclude-standard", "--",
                                     ".").split("\0") if p]
    have, scan_strays = ledger.scan()
    have = set(have)
    seen: dict[str, set[str]] = {}
    out = Changes()
    odd = set()
    for status, path in pairs:
        m = _ENTRY_PATH.match(path)
        if m:
            seen.setdefault(m.group(2), set()).add(status)
            continue
        top = path.split("/", 1)[0]
        if "/" in path and not top.startswith(".") and top not in odd:
            odd.add(top)
            out.strays.append((top + "/", f"{top}/ was changed but is not a ledger folder (two hex "
                                          "characters holding entries named by their 64-character hash)"))
        elif "/" in path and re.fullmatch(r"[0-9a-f]{2}", top) and path not in odd:
            odd.add(path)
            out.strays.append((path, f"{path} was changed but is not an entry's file"))
    for h, statuses in sorted(seen.items()):
        existed = bool(statuses & {"M", "D", "T"})
        if h in have:
            (out.rewritten if existed else out.added).append(h)
        elif existed:
            out.deleted.append(h)
    changed = set(seen)
    for rel, why in scan_strays:
        if any(h.startswith(rel.split("/")[-1]) for h in changed) or any(rel.split("/")[0] == s[0].rstrip("/")
                                                                       for s in out.strays):
            out.strays.append((rel, why))
    named = {rel for rel, _ in out.strays}
    for h in sorted(changed - have):
        if h not in out.deleted and not any(h[:12] in rel for rel in named):
            out.strays.append((f"{h[:2]}/{h[:12]}", "added, but not an entry folder"))
    return out
