"""Shakespeare next-character prediction, LEAF style (spec §7 NLP task).

Clients are speaking roles: one role per (play, speaker). A role's text is all its speeches in
order, joined by single spaces (newlines and runs of whitespace collapse to one space, as LEAF
does). Each sample is an 80-symbol window of that text; the label is the next symbol.

Sources (looked for in ``<root>/shakespeare``):

* Project Gutenberg play files ``*_gut.txt`` (one per work). A speech is a block (lines between
  blank lines) whose first line is the speaker's name — ``Ham.``/``First Lord.``/``KING HENRY.``,
  or an all-capitals name without the dot (``THESEUS``, used by some files) — and whose other
  lines are the speech. ``[bracketed]`` stage directions are removed; a block right after a
  stage direction continues the previous speaker (``[Exit X.]`` inside a speech), unless the
  direction is ``[Exeunt...]`` or a bare ``[Exit.]``. Headings
  (``ACT``, ``SCENE``, ...), the cast list, unbracketed directions and any other text not
  under a speaker are skipped; works without an ``ACT`` heading (sonnets, poems) have no roles.
* LEAF's ``all_data.json`` (``{"users", "user_data": {u: {"x": [80 chars], "y": [char]}}}``),
  also under ``data/all_data/``; each user is a role, its samples kept in file order.

Alphabet: LEAF's 80 symbols :data:`ALPHABET`. A character outside it maps to ``"}"`` (index 79):
LEAF's own lookup returns -1 for such characters, which Python indexing resolves to that symbol.

Per-role train/test split by time (no leak): of a role's ``n`` windows in text order, the first
``int(0.8 n)`` are train and the rest test, as in the FedQS code — so every test target comes
after every train target and no test target is ever a train target or inside a train window.
The FedQS code instead pools two roles per client and evaluates on windows of training roles
(spec §7 notes the overlap); fedlib's split never shares a target position between splits.

Size control (load-time options, the cache keeps the full text):

* ``min_samples_per_role`` (default 100): roles with fewer windows (under 180 characters of
  speech) are dropped, so each kept role has >= 80 train and >= 20 test samples.
* ``max_samples_per_role`` (default 1000; ``None`` keeps all): a longer role keeps that many
  windows, evenly spaced in time within each split (80 % train / 20 % test). All windows would be
  ~3.9 M samples (2.5 GB as int64); the default gives ~0.76 M.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import torch

from fedlib.core.errors import FedlibError
from fedlib.data.paths import corrupt_file, missing_dataset

ALPHABET = "\n !\"&'(),-.0123456789:;>?ABCDEFGHIJKLMNOPQRSTUVWXYZ[]abcdefghijklmnopqrstuvwxyz}"
UNKNOWN = "}"
SEQ_LEN = 80
TRAIN_FRAC = 0.8
assert len(ALPHABET) == 80

_LUT = np.full(256, ALPHABET.index(UNKNOWN), dtype=np.uint8)
for _i, _c in enumerate(ALPHABET):
    _LUT[ord(_c)] = _i

_SPEAKER_DOT = re.compile(r"^((?:\d+\.? )?[A-Z][A-Za-z'&\-]*(?: [A-Za-z'&\-]+){0,3})\.$")
_SPEAKER_CAPS = re.compile(r"^([A-Z][A-Z'&\-]*(?: [A-Z'&\-]+){0,3})$")
_ROMAN = re.compile(r"^[IVXLC]+$")
_HEADING = re.compile(r"^(ACT|ACTUS|SCENE|SCENA|SCAENA|PERSONS|DRAMATIS|THE END|FINIS)\b", re.I)
_IS_PLAY = re.compile(r"^\s*ACT\b", re.I | re.M)
_BRACKETS = re.compile(r"\[[^\]]*\]|\[[^\]]*$", re.S)
_SPACES = re.compile(r"\s+")
_ALL_LEAVE = re.compile(r"^\[\s*(Exeunt\b|Exit\.?\s*\]|Exit\s*$)", re.I)


def encode(text: str) -> np.ndarray:
    """Symbol ids (uint8) of ``text`` in :data:`ALPHABET`; other characters -> ``"}"``."""
    code = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    return _LUT[np.minimum(code, 255)]  # 255 (ÿ) is outside the alphabet too


def decode(ids) -> str:
    """Inverse of :func:`encode` (for inspecting samples)."""
    return "".join(ALPHABET[int(i)] for i in ids)


def _speaker(line: str) -> str | None:
    line = line.strip()
    if not line or _HEADING.match(line) or _ROMAN.match(line.rstrip(".")):
        return None
    m = _SPEAKER_DOT.match(line) or _SPEAKER_CAPS.match(line)
    return m.group(1) if m else None


def parse_play(text: str) -> dict[str, list[str]]:
    """Speaker -> speeches (in order) of one Gutenberg play; ``{}`` for a work without acts."""
    if not _IS_PLAY.search(text):
        return {}
    blocks, cur = [], []
    for line in text.splitlines():
        if line.strip():
            cur.append(line.rstrip())
        elif cur:
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    roles: dict[str, list[str]] = {}
    speaker, after_direction = None, False
    for block in blocks:
        first = block[0].strip()
        if _HEADING.match(first):
            speaker, after_direction = None, False
            continue
        body = _BRACKETS.sub(" ", "\n".join(block))
        if not body.strip():  # a stage direction: the speech may go on after it ...
            after_direction = speaker is not None and not _ALL_LEAVE.match(first)
            continue  # ... unless everyone (or the speaker: a bare "[Exit.]") has left
        name = _speaker(first) if len(block) >= 2 else None
        if name is not None:
            speech = _BRACKETS.sub(" ", "\n".join(block[1:]))
            speaker, after_direction = name, False
        elif speaker is not None and after_direction:
            speech, after_direction = body, False
        else:  # text under no speaker: cast list, unbracketed direction, title, ...
            speaker, after_direction = None, False
            continue
        speech = _SPACES.sub(" ", speech).strip()
        if speech:
            roles.setdefault(speaker, []).append(speech)
    return roles


def locate(root: Path):
    sub = root / "shakespeare"
    looked = [sub / "*_gut.txt", sub / "all_data.json", sub / "data/all_data/all_data.json"]
    for base in (sub, root):
        if base.is_dir() and any(base.glob("*_gut.txt")):
            return base, "gutenberg"
    for cand in (sub / "all_data.json", sub / "data" / "all_data" / "all_data.json",
                 root / "all_data.json"):
        if cand.is_file():
            return cand, "leaf"
    raise missing_dataset("shakespeare", looked, root)


def sources(source: Path, layout: str) -> list[Path]:
    return sorted(source.glob("*_gut.txt")) if layout == "gutenberg" else [source]


def build(source: Path, layout: str) -> dict:
    """Compact payload: one symbol stream plus runs of consecutive windows per role."""
    return _build_gutenberg(source) if layout == "gutenberg" else _build_leaf(source)


def _payload(chunks, runs, roles, plays, layout) -> dict:
    stream = np.concatenate(chunks) if chunks else np.zeros(0, np.uint8)
    runs = np.asarray(runs, dtype=np.int64).reshape(-1, 3)
    return {"stream": torch.from_numpy(stream), "runs": torch.from_numpy(runs),
            "roles": roles, "plays": plays, "layout": layout, "alphabet": ALPHABET}


# bytes of each Project Gutenberg file (the 1998 edition `fedlib data fetch shakespeare` downloads;
# the copy on the build machines) [issue 33]: a file of a known name that is shorter is a truncated
# copy and is refused; a longer one (an edited copy) is read, and its fingerprint keys its runs
KNOWN_BYTES = {
    "alls_well_that_ends_well": 133682, "antony_and_cleopatra": 151470, "as_you_like_it": 125228,
    "comedy_of_errors": 88209, "coriolanus": 164969, "cymbeline": 98303, "hamlet": 173942,
    "henry_iv_part_1": 138391, "henry_iv_part_2": 153117, "henry_v": 152768,
    "henry_vi_part_1": 129800, "henry_vi_part_2": 148292, "henry_vi_part_3": 144686,
    "henry_viii": 143482, "john": 121087, "julius_caesar": 116216, "lear": 151922,
    "lovers_complaint": 14388, "loves_labours_lost": 128644, "macbeth": 103427,
    "measure_for_measure": 126095, "merchant_of_venice": 120445, "merry_wives_of_windsor": 128164,
    "midsummer_nights_dream": 96249, "much_ado_about_nothing": 122354, "othello": 154519,
    "passionate_pilgrim": 8505, "pericles": 108950, "phoenix_and_the_turtle": 2096,
    "rape_of_lucrece": 86173, "richard_ii": 130293, "richard_iii": 175659,
    "romeo_and_juliet": 141753, "sonnets": 95728, "taming_of_the_shrew": 123283, "tempest": 98439,
    "timon_of_athens": 111091, "tragedy_of_titus_andronicus": 120441,
    "troilus_and_cressida": 156291, "twelfth_night": 114876, "two_gentlemen_of_verona": 100983,
    "winters_tale": 152788,
}


def check_sizes(paths) -> None:
    """FedlibError for a ``<play>_gut.txt`` of a known name shorter than the Gutenberg file."""
    for path in paths:
        play = Path(path).name[: -len("_gut.txt")]
        known = KNOWN_BYTES.get(play)
        if known is None:
            continue
        size = Path(path).stat().st_size
        if size < known:
            raise FedlibError(f"Shakespeare text {path} holds {size:,} bytes, the Gutenberg file "
                              f"{known:,}: the copy is truncated (its roles would be cut short)",
                              "download it again with `fedlib data fetch shakespeare --force`, or copy "
                              "the whole file")


def _build_gutenberg(folder: Path) -> dict:
    chunks, runs, roles, plays, pos = [], [], [], [], 0
    check_sizes(sources(folder, "gutenberg"))
    for path in sources(folder, "gutenberg"):
        play = path.name[: -len("_gut.txt")]
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            raise corrupt_file(path, "Shakespeare text", err) from None
        for speaker, speeches in parse_play(text).items():
            ids = encode(" ".join(speeches))
            if len(ids) <= SEQ_LEN:
                continue
            runs.append((len(roles), pos, len(ids) - SEQ_LEN))
            roles.append(f"{play}/{speaker}")
            plays.append(play)
            chunks.append(ids)
            pos += len(ids)
    if not roles:
        raise corrupt_file(folder, "Shakespeare folder", "no speeches found in the *_gut.txt files")
    return _payload(chunks, runs, roles, plays, "gutenberg")


def _build_leaf(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        users = data["users"]
        user_data = data["user_data"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise corrupt_file(path, "LEAF all_data.json", err) from None
    hier = data.get("hierarchies") or [""] * len(users)
    chunks, runs, roles, plays, pos = [], [], [], [], 0
    for u, play in zip(users, hier):
        try:
            xs, ys = user_data[u]["x"], user_data[u]["y"]
        except (KeyError, TypeError) as err:
            raise corrupt_file(path, "LEAF all_data.json", f"user {u!r}: {err}") from None
        if len(xs) != len(ys) or not xs:
            continue
        rid = len(roles)
        roles.append(str(u))
        plays.append(str(play))
        prev, pieces = None, []
        for x, y in zip(xs, ys):
            if len(x) != SEQ_LEN or len(y) != 1:
                raise corrupt_file(path, "LEAF all_data.json",
                                   f"user {u!r} has a sample that is not 80 chars + 1 label")
            if prev is not None and x[:-1] == prev[0][1:] and x[-1] == prev[1]:
                pieces.append(y)  # continues the previous window: one more symbol
                runs[-1][2] += 1
                pos += 1
            else:
                pieces.append(x + y)
                runs.append([rid, pos, 1])
                pos += SEQ_LEN + 1
            prev = (x, y)
        chunks.append(encode("".join(pieces)))
    if not roles:
        raise corrupt_file(path, "LEAF all_data.json", "no users with samples")
    return _payload(chunks, runs, roles, plays, "leaf")


def select_windows(n: int, max_samples: int | None, train_frac: float = TRAIN_FRAC):
    """Indices (in time order) of the train and test windows kept out of a role's ``n``."""
    n_tr = int(n * train_frac)
    tr, te = np.arange(n_tr), np.arange(n_tr, n)
    if max_samples is not None and n > max_samples:
        k_tr = int(round(max_samples * train_frac))
        k_te = max_samples - k_tr
        tr = tr[np.unique(np.linspace(0, len(tr) - 1, k_tr).round().astype(np.int64))]
        te = te[np.unique(np.linspace(0, len(te) - 1, k_te).round().astype(np.int64))]
    return tr, te


def materialise(payload: dict, min_samples_per_role: int = 100,
                max_samples_per_role: int | None = 1000, train_frac: float = TRAIN_FRAC) -> dict:
    """Windows (int64 (n, 80)), labels and role ids of the kept roles, from the compact payload."""
    stream = payload["stream"]
    runs = payload["runs"].numpy()
    n_roles = len(payload["roles"])
    starts_by_role: list[list[np.ndarray]] = [[] for _ in range(n_roles)]
    for rid, start, count in runs:
        starts_by_role[int(rid)].append(np.arange(start, start + count, dtype=np.int64))
    tr_s, te_s, tr_r, te_r, kept = [], [], [], [], []
    for rid, parts in enumerate(starts_by_role):
        starts = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        if len(starts) < max(2, min_samples_per_role):
            continue
        tr, te = select_windows(len(starts), max_samples_per_role, train_frac)
        if len(tr) == 0 or len(te) == 0:
            continue
        new = len(kept)
        kept.append(rid)
        tr_s.append(starts[tr])
        te_s.append(starts[te])
        tr_r.append(np.full(len(tr), new, np.int64))
        te_r.append(np.full(len(te), new, np.int64))
    if not kept:
        raise corrupt_file("shakespeare", "dataset",
                           f"no role has at least {min_samples_per_role} samples")
    windows = stream.to(torch.long).unfold(0, SEQ_LEN + 1, 1)  # a view, no copy

    def gather(starts):
        w = windows[torch.from_numpy(np.concatenate(starts))]
        return w[:, :SEQ_LEN].contiguous(), w[:, SEQ_LEN].contiguous()

    train_x, train_y = gather(tr_s)
    test_x, test_y = gather(te_s)
    roles = [payload["roles"][r] for r in kept]
    plays = [payload["plays"][r] for r in kept]
    meta = {"roles": roles, "role_play": plays,
            "train_role": torch.from_numpy(np.concatenate(tr_r)),
            "test_role": torch.from_numpy(np.concatenate(te_r)),
            "alphabet": ALPHABET, "classes": list(ALPHABET), "layout": payload["layout"],
            "min_samples_per_role": min_samples_per_role,
            "max_samples_per_role": max_samples_per_role}
    return {"train_x": train_x, "train_y": train_y, "test_x": test_x, "test_y": test_y,
            "num_classes": len(ALPHABET), "meta": meta, "mean": (), "std": ()}
