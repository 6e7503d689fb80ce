"""Image datasets: CIFAR-10, CIFAR-100 (spec §7 CV task) and Tiny-ImageNet.

Layouts read (folder or the archive itself, see :mod:`fedlib.data.files`):

* CIFAR python pickles, as torchvision downloads them: ``cifar-10-batches-py/`` (``data_batch_1..5``,
  ``test_batch``, ``batches.meta``) and ``cifar-100-python/`` (``train``, ``test``, ``meta``; fine
  labels), or the ``cifar-10-python.tar.gz`` / ``cifar-100-python.tar.gz`` tarballs unopened.
  Pickles are read with a restricted unpickler that only builds numpy arrays.
* torchvision ``ImageFolder``: ``train/<class>/*.jpg`` and ``test/<class>/*.jpg`` (or ``val/``),
  in a folder or an archive, e.g. ``cifar10/cifar10-jpg.tar.gz``. Labels are the sorted class
  folder names (for CIFAR this is the official label order).
* Tiny-ImageNet ``tiny-imagenet-200/``: ``wnids.txt``, ``train/<wnid>/images/*.JPEG``,
  ``val/images/*.JPEG`` + ``val/val_annotations.txt`` (the labelled val split serves as test set;
  the official test split has no labels). Labels are the sorted wnids (= ImageFolder order).

Images are stored ``uint8`` NCHW, in sorted file-name order within each class.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path, PurePosixPath

import numpy as np
import torch

from fedlib.data.files import FileTree, decode_images, is_archive, is_image
from fedlib.data.paths import corrupt_file, missing_dataset

CIFAR = {
    "cifar10": {"dir": "cifar-10-batches-py", "tar": "cifar-10-python.tar.gz", "classes": 10,
                "train": [f"data_batch_{i}" for i in range(1, 6)], "test": ["test_batch"],
                "meta": "batches.meta", "names_key": "label_names", "label_key": "labels"},
    "cifar100": {"dir": "cifar-100-python", "tar": "cifar-100-python.tar.gz", "classes": 100,
                 "train": ["train"], "test": ["test"], "meta": "meta",
                 "names_key": "fine_label_names", "label_key": "fine_labels"},
}
TINY_DIR = "tiny-imagenet-200"
TINY_ZIP = "tiny-imagenet-200.zip"


# ----------------------------------------------------------------------------- helpers
def channel_stats(x: torch.Tensor) -> tuple[tuple, tuple]:
    """Exact per-channel mean and std in [0, 1] units of a uint8 (N, C, H, W) tensor
    (from a 256-bin histogram per channel: no float copy of the images)."""
    levels = torch.arange(256, dtype=torch.float64) / 255.0
    mean, std = [], []
    for c in range(x.shape[1]):
        hist = torch.bincount(x[:, c].reshape(-1), minlength=256).to(torch.float64)
        n = max(1.0, float(hist.sum()))
        m = float((hist * levels).sum()) / n
        v = max(0.0, float((hist * levels * levels).sum()) / n - m * m)
        mean.append(round(m, 6))
        std.append(round(v ** 0.5, 6))
    return tuple(mean), tuple(std)


def image_payload(train_x, train_y, test_x, test_y, num_classes, meta) -> dict:
    train_x = torch.from_numpy(train_x) if isinstance(train_x, np.ndarray) else train_x
    test_x = torch.from_numpy(test_x) if isinstance(test_x, np.ndarray) else test_x
    mean, std = channel_stats(train_x)
    return {"train_x": train_x, "train_y": torch.as_tensor(train_y, dtype=torch.long),
            "test_x": test_x, "test_y": torch.as_tensor(test_y, dtype=torch.long),
            "num_classes": int(num_classes), "meta": meta, "mean": mean, "std": std}


class _NumpyOnlyUnpickler(pickle.Unpickler):
    """Unpickler for the CIFAR batches: numpy arrays and plain containers, nothing else."""

    ALLOWED = {("numpy", "ndarray"), ("numpy", "dtype"),
               ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
               ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
               ("_codecs", "encode")}  # how protocol-2 pickles from Python 3 store bytes

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a data file")


def _unpickle(tree: FileTree, name: str) -> dict:
    raw = tree.read(name)
    try:
        obj = _NumpyOnlyUnpickler(io.BytesIO(raw), encoding="bytes").load()
    except Exception as err:  # truncated/garbled: EOFError, UnpicklingError, ValueError, ...
        raise corrupt_file(f"{tree.path}:{name}", "CIFAR pickle", err) from None
    if not isinstance(obj, dict):
        raise corrupt_file(f"{tree.path}:{name}", "CIFAR pickle", "not a dict")
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in obj.items()}


def _find_member(names: list[str], base: str) -> str | None:
    """The member whose last path component is ``base`` (pickles may sit under a folder)."""
    hits = [n for n in names if PurePosixPath(n).name == base]
    return min(hits, key=len) if hits else None


# ----------------------------------------------------------------------------- CIFAR
def locate_cifar(name: str, root: Path):
    """(source, layout) for CIFAR-10/100 under ``root``; raises the missing-dataset error."""
    spec = CIFAR[name]
    sub = root / name
    looked = [sub / spec["dir"], root / spec["dir"], sub / spec["tar"], root / spec["tar"],
              sub / "train", sub / "<archive with train/<class>/*.jpg>"]
    for cand in looked[:2]:
        if cand.is_dir():
            return cand, "pickle"
    for cand in looked[2:4]:
        if cand.is_file():
            return cand, "archive"
    if (sub / "train").is_dir():
        return sub, "imagefolder"
    if sub.is_dir():
        archives = sorted(p for p in sub.iterdir() if is_archive(p))
        if archives:
            return archives[0], "archive"
    raise missing_dataset(name, looked, root)


def build_cifar(name: str, source: Path, layout: str) -> dict:
    spec = CIFAR[name]
    tree = FileTree(source)
    with tree:
        names = tree.names()
        if layout == "pickle" or (layout == "archive" and _find_member(names, spec["train"][0])):
            return _cifar_from_pickles(name, tree)
        return _from_imagefolder(name, tree, spec["classes"], size=32)


def _cifar_from_pickles(name: str, tree: FileTree) -> dict:
    spec = CIFAR[name]
    names = tree.names()

    def part(files):
        xs, ys = [], []
        for f in files:
            member = _find_member(names, f)
            if member is None:
                raise corrupt_file(tree.path, f"{name} folder", f"{f!r} is missing")
            d = _unpickle(tree, member)
            try:
                x = np.asarray(d["data"], dtype=np.uint8).reshape(-1, 3, 32, 32)
                y = np.asarray(d[spec["label_key"]], dtype=np.int64)
            except (KeyError, ValueError) as err:
                raise corrupt_file(f"{tree.path}:{member}", "CIFAR pickle",
                                   f"bad content ({err})") from None
            if len(x) != len(y) or (len(y) and (y.min() < 0 or y.max() >= spec["classes"])):
                raise corrupt_file(f"{tree.path}:{member}", "CIFAR pickle",
                                   "labels do not match the images")
            xs.append(x)
            ys.append(y)
        return np.concatenate(xs), np.concatenate(ys)

    train_x, train_y = part(spec["train"])
    test_x, test_y = part(spec["test"])
    classes = [str(i) for i in range(spec["classes"])]
    member = _find_member(names, spec["meta"])
    if member is not None:
        meta = _unpickle(tree, member)
        got = meta.get(spec["names_key"])
        if got is not None and len(got) == spec["classes"]:
            classes = [c.decode() if isinstance(c, bytes) else str(c) for c in got]
    return image_payload(train_x, train_y, test_x, test_y, spec["classes"],
                         {"classes": classes, "layout": "pickle"})


def _from_imagefolder(name: str, tree: FileTree, num_classes: int, size: int) -> dict:
    """``<split>/<class>/<file>`` anywhere in the tree (an optional top folder is fine)."""
    by_split: dict[str, list[tuple[str, str]]] = {"train": [], "test": []}
    for n in tree.names():
        parts = PurePosixPath(n).parts
        if len(parts) >= 3 and is_image(n):
            split = {"train": "train", "test": "test", "val": "test"}.get(parts[-3])
            if split:
                by_split[split].append((parts[-2], n))
    if not by_split["train"] or not by_split["test"]:
        raise corrupt_file(tree.path, f"{name} image folder",
                           "expected train/<class>/<image> and test/<class>/<image> files")
    classes = sorted({c for c, _ in by_split["train"]})
    if len(classes) != num_classes:
        raise corrupt_file(tree.path, f"{name} image folder",
                           f"found {len(classes)} class folders under train/, expected {num_classes}")
    index = {c: i for i, c in enumerate(classes)}
    out = []
    for split in ("train", "test"):
        items = sorted(by_split[split], key=lambda t: (index.get(t[0], -1), t[1]))
        unknown = sorted({c for c, _ in items if c not in index})
        if unknown:
            raise corrupt_file(tree.path, f"{name} image folder",
                               f"{split}/ has classes missing from train/: {unknown[:5]}")
        out.append(decode_images(tree, [n for _, n in items], size=size))
        out.append(np.array([index[c] for c, _ in items], dtype=np.int64))
    return image_payload(out[0], out[1], out[2], out[3], num_classes,
                         {"classes": classes, "layout": "imagefolder"})


# ----------------------------------------------------------------------------- Tiny-ImageNet
def locate_tiny(root: Path):
    sub = root / "tinyimagenet"
    looked = [sub / TINY_DIR, root / TINY_DIR, sub, sub / TINY_ZIP, root / TINY_ZIP]
    for cand in looked[:3]:
        if (cand / "wnids.txt").is_file():
            return cand, "folder"
    for cand in looked[3:]:
        if cand.is_file():
            return cand, "archive"
    raise missing_dataset("tinyimagenet", [looked[0], looked[1], looked[2] / "wnids.txt",
                                           looked[3], looked[4]], root)


def build_tiny(source: Path, layout: str) -> dict:
    with FileTree(source) as tree:
        names = tree.names()
        wn = _find_member(names, "wnids.txt")
        if wn is None:
            raise corrupt_file(source, "Tiny-ImageNet", "wnids.txt is missing")
        prefix = wn[: -len("wnids.txt")]
        wnids = sorted({w.strip() for w in tree.read(wn).decode().split() if w.strip()})
        index = {w: i for i, w in enumerate(wnids)}
        train = []
        for n in names:
            p = PurePosixPath(n[len(prefix):]).parts if n.startswith(prefix) else ()
            if len(p) == 4 and p[0] == "train" and p[2] == "images" and is_image(n):
                if p[1] not in index:
                    raise corrupt_file(source, "Tiny-ImageNet", f"train class {p[1]} not in wnids.txt")
                train.append((index[p[1]], n))
        ann = prefix + "val/val_annotations.txt"
        if ann not in names:
            raise corrupt_file(source, "Tiny-ImageNet", "val/val_annotations.txt is missing")
        test = []
        for lineno, line in enumerate(tree.read(ann).decode().splitlines(), 1):
            if not line.strip():
                continue
            f = line.split("\t")
            if len(f) < 2 or f[1] not in index:
                raise corrupt_file(f"{source}:{ann}", "Tiny-ImageNet annotations",
                                   f"line {lineno} is not '<file>\\t<wnid>...' with a known wnid")
            test.append((index[f[1]], prefix + "val/images/" + f[0]))
        if not train or not test:
            raise corrupt_file(source, "Tiny-ImageNet", "no train or val images found")
        train.sort()
        test.sort()
        words = {}
        wt = prefix + "words.txt"
        if wt in names:
            for line in tree.read(wt).decode(errors="replace").splitlines():
                k, _, v = line.partition("\t")
                words[k] = v.strip()
        meta = {"classes": wnids, "class_names": [words.get(w, w) for w in wnids],
                "layout": "tiny-imagenet"}
        return image_payload(decode_images(tree, [n for _, n in train], size=64),
                             [c for c, _ in train],
                             decode_images(tree, [n for _, n in test], size=64),
                             [c for c, _ in test], len(wnids), meta)
