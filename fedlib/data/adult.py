"""UCI Adult (Census Income), the FedQS real-world-data (RWD) task (spec §7).

Reads the original ``adult.data`` (32,561 rows) and ``adult.test`` (16,281 rows; its first line
``|1x3 Cross validator`` is skipped and its labels' trailing ``.`` removed). Fields are stripped
of spaces; ``?`` (missing) is kept as a category of its own. Label: ``>50K`` -> 1, ``<=50K`` -> 0.

``adult`` — the FedQS features: the 14 attributes minus ``fnlwgt``, ``education-num`` and
``native-country`` = 11 columns, in file order::

    age, workclass, education, marital-status, occupation, relationship, race, sex,
    capital-gain, capital-loss, hours-per-week

Categoricals are integer codes of the sorted category names fitted on the train file (a test
category never seen in training gets code ``len(categories)``); numerics are the raw values; all
as float32. Race is column 6 and sex column 7, as in the FedQS code. This is not standardised by
default (FedQS feeds the integer encoding as is); the per-column train mean/std are stored, so
``ds.normalize = "dataset"`` gives z-scored inputs. Note: the FedQS pre-processed tensors seem to
number categories in order of first appearance (race 0 = White, sex 0 = Male); fedlib uses sorted
order (race ``White`` = 4, sex ``Male`` = 1); partitions use the names, not the codes.

``adult_onehot`` — the same 11 attributes with the 7 categoricals one-hot encoded (train
categories; an unseen test category is all zeros) and the 4 numerics standardised with train
mean/std: 4 + 60 = 64 float32 columns (with the categories of the original train file).

Both carry ``meta["sex"]``/``meta["race"]`` (train codes), ``meta["test_sex"]``/``meta["test_race"]``
and ``meta["attributes"] = {"sex": [names], "race": [names]}`` for the by-sex / by-race partitions.
"""

from __future__ import annotations

from pathlib import Path

import torch

from fedlib.core.errors import FedlibError
from fedlib.data.paths import corrupt_file, missing_dataset

COLUMNS = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
           "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
           "hours-per-week", "native-country")
NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
CATEGORICAL = tuple(c for c in COLUMNS if c not in NUMERIC)
DROPPED = ("fnlwgt", "education-num", "native-country")
FEATURES = tuple(c for c in COLUMNS if c not in DROPPED)  # the 11 FedQS features
LABELS = {"<=50K": 0, ">50K": 1}
FILES = ("adult.data", "adult.test")


def locate(root: Path, name: str = "adult"):
    looked = []
    for base in (root / "adult", root):
        looked += [base / f for f in FILES]
        if all((base / f).is_file() for f in FILES):
            return base, "uci"
    for base in (root / "adult", root):  # [issue 44] a file that is there is never "not found"
        there = [f for f in FILES if (base / f).exists()]
        if there:
            gone = [f for f in FILES if f not in there or not (base / f).is_file()]
            raise FedlibError(f"dataset {name!r} under {base} is damaged: {', '.join(there)} is there, but "
                              f"{', '.join(gone)} is missing or not a file",
                              f"download it again with `fedlib data fetch {name} --force` (or copy both files)")
    raise missing_dataset(name, looked, root)


def sources(source: Path, layout: str) -> list[Path]:
    return [source / f for f in FILES]


def _read(path: Path):
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise corrupt_file(path, "Adult file", err) from None
    rows, labels = [], []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("|"):
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != len(COLUMNS) + 1:
            raise corrupt_file(f"{path}:{lineno}", "Adult row",
                               f"{len(fields)} fields, expected {len(COLUMNS) + 1}")
        label = fields[-1].rstrip(".")
        if label not in LABELS:
            raise corrupt_file(f"{path}:{lineno}", "Adult row", f"unknown label {fields[-1]!r}")
        row = dict(zip(COLUMNS, fields[:-1]))
        for c in NUMERIC:
            try:
                row[c] = int(row[c])
            except ValueError:
                raise corrupt_file(f"{path}:{lineno}", "Adult row",
                                   f"{c} is {row[c]!r}, not an integer") from None
        rows.append(row)
        labels.append(LABELS[label])
    if not rows:
        raise corrupt_file(path, "Adult file", "no data rows")
    return rows, labels


# rows of the UCI files [issue 33]. A copy with fewer rows is truncated and refused, unless it is a
# hand-made sample of under SAMPLE_ROWS rows (the loaders' tests write such files) [D]; a copy with
# more rows (an edited one) is read, and its fingerprint keys its runs
KNOWN_ROWS = {"adult.data": 32561, "adult.test": 16281}
SAMPLE_ROWS = 1000


def check_rows(path: Path, rows: int) -> None:
    known = KNOWN_ROWS.get(path.name)
    if known is not None and SAMPLE_ROWS <= rows < known:
        raise FedlibError(f"UCI Adult file {path} holds {rows:,} rows, the UCI file {known:,}: the copy is "
                          "truncated", "download it again with `fedlib data fetch adult --force`, or copy "
                          "the whole file")


def build(source: Path, layout: str) -> dict:
    """Parsed table: numerics (int64), categorical codes (sorted train categories), labels."""
    train, train_y = _read(source / FILES[0])
    test, test_y = _read(source / FILES[1])
    check_rows(source / FILES[0], len(train))
    check_rows(source / FILES[1], len(test))
    cats = {c: sorted({r[c] for r in train}) for c in CATEGORICAL}
    index = {c: {v: i for i, v in enumerate(cats[c])} for c in CATEGORICAL}

    def table(rows):
        num = torch.tensor([[r[c] for c in NUMERIC] for r in rows], dtype=torch.long)
        cat = torch.tensor([[index[c].get(r[c], len(cats[c])) for c in CATEGORICAL] for r in rows],
                           dtype=torch.long)
        return num, cat

    tr_num, tr_cat = table(train)
    te_num, te_cat = table(test)
    return {"train_num": tr_num, "train_cat": tr_cat, "train_y": torch.tensor(train_y),
            "test_num": te_num, "test_cat": te_cat, "test_y": torch.tensor(test_y),
            "categories": cats}


def _col(payload, split, name):
    if name in NUMERIC:
        return payload[f"{split}_num"][:, NUMERIC.index(name)]
    return payload[f"{split}_cat"][:, CATEGORICAL.index(name)]


def _stats(x: torch.Tensor):
    x = x.double()
    std = x.std(dim=0, unbiased=False)
    return x.mean(dim=0), torch.where(std > 0, std, torch.ones_like(std))


def materialise(payload: dict, onehot: bool = False) -> dict:
    """Split tensors of ``adult`` (11 integer-coded features) or ``adult_onehot``."""
    cats = payload["categories"]
    xs, names = {}, []
    if not onehot:
        names = list(FEATURES)
        for split in ("train", "test"):
            xs[split] = torch.stack([_col(payload, split, c) for c in FEATURES], 1).float()
        mean, std = _stats(xs["train"])
        mean, std = tuple(mean.tolist()), tuple(std.tolist())
    else:
        numeric = [c for c in FEATURES if c in NUMERIC]
        mu, sd = _stats(torch.stack([_col(payload, "train", c) for c in numeric], 1))
        for split in ("train", "test"):
            blocks = [((torch.stack([_col(payload, split, c) for c in numeric], 1).double() - mu)
                       / sd).float()]
            for c in FEATURES:
                if c in CATEGORICAL:
                    k = len(cats[c])
                    code = _col(payload, split, c)
                    oh = torch.zeros(len(code), k + 1)
                    oh[torch.arange(len(code)), code] = 1.0
                    blocks.append(oh[:, :k])  # column k = unseen category -> all zeros
            xs[split] = torch.cat(blocks, 1)
        names = numeric + [f"{c}={v}" for c in FEATURES if c in CATEGORICAL for v in cats[c]]
        mean, std = (), ()
    meta = {"feature_names": names, "categories": cats, "classes": ["<=50K", ">50K"],
            "attributes": {"sex": list(cats["sex"]), "race": list(cats["race"])},
            "sex": _col(payload, "train", "sex").clone(), "race": _col(payload, "train", "race").clone(),
            "test_sex": _col(payload, "test", "sex").clone(),
            "test_race": _col(payload, "test", "race").clone()}
    return {"train_x": xs["train"], "train_y": payload["train_y"], "test_x": xs["test"],
            "test_y": payload["test_y"], "num_classes": 2, "meta": meta, "mean": mean, "std": std}
