"""Loaders on small generated files in each official layout, the tensor cache, every error path."""

from __future__ import annotations

import io
import json
import os
import pickle
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from fedlib.cli import main as cli_main
from fedlib.data import DATASETS, cache_root, data_root, dataset_info, load_dataset
from fedlib.data import shakespeare as shk
from fedlib.core.errors import FedlibError
from fedlib.data.fetch import safe_extract

CIFAR10_NAMES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
                 "truck"]


# ----------------------------------------------------------------------------- generators
def _images(n, seed, size=32):
    return np.random.default_rng(seed).integers(0, 256, (n, 3, size, size), dtype=np.uint8)


def _dump(obj, path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=2)


def make_cifar10_pickles(root: Path, per_batch=4) -> dict:
    d = root / "cifar10" / "cifar-10-batches-py"
    xs, ys = [], []
    for i in range(1, 6):
        x = _images(per_batch, i)
        y = [(i + j) % 10 for j in range(per_batch)]
        _dump({b"batch_label": b"training batch", b"labels": y, b"data": x.reshape(per_batch, -1),
               b"filenames": [b"f%d.png" % j for j in range(per_batch)]}, d / f"data_batch_{i}")
        xs.append(x)
        ys += y
    tx, ty = _images(3, 99), [9, 0, 5]
    _dump({b"labels": ty, b"data": tx.reshape(3, -1)}, d / "test_batch")
    _dump({b"label_names": [n.encode() for n in CIFAR10_NAMES], b"num_cases_per_batch": per_batch},
          d / "batches.meta")
    return {"dir": d, "train_x": np.concatenate(xs), "train_y": ys, "test_x": tx, "test_y": ty}


def make_cifar100_pickles(root: Path) -> dict:
    d = root / "cifar100" / "cifar-100-python"
    x, fine = _images(6, 1), [0, 99, 42, 7, 7, 13]
    tx, tfine = _images(2, 2), [99, 1]
    _dump({b"data": x.reshape(6, -1), b"fine_labels": fine, b"coarse_labels": [0] * 6}, d / "train")
    _dump({b"data": tx.reshape(2, -1), b"fine_labels": tfine, b"coarse_labels": [1, 2]}, d / "test")
    _dump({b"fine_label_names": [b"c%02d" % i for i in range(100)],
           b"coarse_label_names": [b"s%d" % i for i in range(20)]}, d / "meta")
    return {"train_x": x, "train_y": fine, "test_x": tx, "test_y": tfine}


def _encode(arr_chw: np.ndarray, fmt: str) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(arr_chw.transpose(1, 2, 0)).save(buf, format=fmt)
    return buf.getvalue()


def make_imagefolder_tar(path: Path, per_class=2, classes=CIFAR10_NAMES, prefix="") -> dict:
    """train/<class>/i.png|jpg, test/<class>/i.png in a tar.gz (PNG: lossless, checkable)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = {}
    with tarfile.open(path, "w:gz") as tar:
        for split, n in (("train", per_class), ("test", 1)):
            for ci, c in enumerate(classes):
                for i in range(n):
                    arr = _images(1, hash((split, ci, i)) % 1000)[0]
                    fmt = "JPEG" if (split == "train" and i == 1) else "PNG"
                    data = _encode(arr, fmt)
                    name = f"{prefix}{split}/{c}/{i:04d}.{'jpg' if fmt == 'JPEG' else 'png'}"
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
                    pixels[name] = arr
    return pixels


def make_tiny(root: Path, wnids=("n02", "n01", "n03"), as_zip=False) -> Path:
    base = root / "tinyimagenet"
    files = {"tiny-imagenet-200/wnids.txt": "\n".join(wnids).encode() + b"\n",
             "tiny-imagenet-200/words.txt": b"".join(f"{w}\tthing {w}\n".encode() for w in wnids)}
    for k, w in enumerate(wnids):
        for i in range(2):
            arr = _images(1, 10 * k + i, size=64)[0]
            if k == 0 and i == 0:  # a greyscale JPEG, as Tiny-ImageNet has some
                from PIL import Image

                buf = io.BytesIO()
                Image.fromarray(arr[0]).save(buf, format="JPEG")
                data = buf.getvalue()
            else:
                data = _encode(arr, "PNG")
            files[f"tiny-imagenet-200/train/{w}/images/{w}_{i}.JPEG"] = data
        files[f"tiny-imagenet-200/train/{w}/{w}_boxes.txt"] = b"x\t0\t0\t1\t1\n"
    ann = []
    for j, w in enumerate(["n03", "n01", "n03"]):
        files[f"tiny-imagenet-200/val/images/val_{j}.JPEG"] = _encode(_images(1, 50 + j, 64)[0], "PNG")
        ann.append(f"val_{j}.JPEG\t{w}\t0\t0\t10\t10")
    files["tiny-imagenet-200/val/val_annotations.txt"] = ("\n".join(ann) + "\n").encode()
    files["tiny-imagenet-200/test/images/test_0.JPEG"] = _encode(_images(1, 77, 64)[0], "PNG")
    base.mkdir(parents=True, exist_ok=True)
    if as_zip:
        with zipfile.ZipFile(base / "tiny-imagenet-200.zip", "w") as z:
            for k, v in files.items():
                z.writestr(k, v)
    else:
        for k, v in files.items():
            (base / k).parent.mkdir(parents=True, exist_ok=True)
            (base / k).write_bytes(v)
    return base


PLAY = """THE TRAGEDY OF TESTING

PERSONS REPRESENTED.

Alpha, a speaker.
Beta, another.

ACT I.

Scene I. A room.

[Enter Alpha and Beta.]

BETA
{b1}

Alpha.
{a1}

[Exit Beta.]

{a_cont}

Alpha.
{a2} [Aside.] {a3}

[Exeunt.]

Some unbracketed stage direction that nobody speaks at all here.
"""


def make_plays(root: Path) -> dict:
    d = root / "shakespeare"
    d.mkdir(parents=True, exist_ok=True)
    a1 = "Now is the winter of our discontent made glorious summer by this sun of York;"
    b1 = ("And all the clouds that lour'd upon our house in the deep bosom of the ocean "
          "buried. Now are our brows bound with victorious wreaths; our bruised arms hung up for "
          "monuments; our stern alarums changed to merry meetings, our dreadful marches to "
          "delightful measures. Grim-visaged war hath smooth'd his wrinkled front.")
    a_cont = "Continued after the exit, still Alpha speaking, with an odd char: @ here."
    a2, a3 = "But I, that am not shaped for sportive tricks,", "nor made to court an amorous looking-glass."
    (d / "testing_gut.txt").write_text(PLAY.format(a1=a1, b1=b1, a_cont=a_cont, a2=a2, a3=a3))
    (d / "poem_gut.txt").write_text("A POEM\n\nFrom fairest creatures we desire increase.\n\n"
                                    "Thou.\nthat art now the world's fresh ornament.\n")
    alpha = " ".join([a1, a_cont, a2, a3]).replace("  ", " ")
    return {"alpha": alpha, "beta": b1}


def make_leaf_json(root: Path) -> dict:
    text_u = ("To be, or not to be, that is the question: whether 'tis nobler in the mind to "
              "suffer the slings and arrows of outrageous fortune, or to take arms against a sea")
    x = [text_u[i:i + 80] for i in range(len(text_u) - 80)]
    y = [text_u[i + 80] for i in range(len(text_u) - 80)]
    # a second user whose windows are not consecutive (sampled), to exercise the general path
    text_v = "O Romeo, Romeo! wherefore art thou Romeo? Deny thy father and refuse thy name! " * 3
    xv = [text_v[i:i + 80] for i in range(0, len(text_v) - 81, 7)]
    yv = [text_v[i + 80] for i in range(0, len(text_v) - 81, 7)]
    data = {"users": ["HAMLET_HAMLET", "ROMEO_JULIET"], "hierarchies": ["HAMLET", "ROMEO"],
            "num_samples": [len(x), len(xv)],
            "user_data": {"HAMLET_HAMLET": {"x": x, "y": y}, "ROMEO_JULIET": {"x": xv, "y": yv}}}
    d = root / "shakespeare"
    d.mkdir(parents=True, exist_ok=True)
    (d / "all_data.json").write_text(json.dumps(data))
    return {"x": x, "y": y, "xv": xv, "yv": yv}


ADULT_ROWS = [
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K",
    "50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, <=50K",
    "38, Private, 215646, HS-grad, 9, Divorced, Handlers-cleaners, Not-in-family, Black, Female, 0, 0, 40, ?, >50K",
    "53, ?, 234721, 11th, 7, Married-civ-spouse, ?, Husband, Asian-Pac-Islander, Male, 0, 0, 40, United-States, >50K",
]


def make_adult(root: Path, test_extra="") -> Path:
    d = root / "adult"
    d.mkdir(parents=True, exist_ok=True)
    (d / "adult.data").write_text("\n".join(ADULT_ROWS) + "\n\n")
    test = ["|1x3 Cross validator",
            "25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Male, 0, 0, 40, United-States, <=50K.",
            "44, Never-worked, 160323, Some-college, 10, Married-civ-spouse, ?, Husband, Other, Female, 7688, 0, 40, United-States, >50K."]
    (d / "adult.test").write_text("\n".join(test) + "\n" + test_extra)
    return d


@pytest.fixture()
def root(tmp_path, monkeypatch):
    """An empty data folder with its cache in a separate tmp folder."""
    r = tmp_path / "data"
    r.mkdir()
    monkeypatch.setenv("FEDLIB_DATA", str(r))
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    return r


# ----------------------------------------------------------------------------- roots
def test_roots_follow_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path / "d"))
    monkeypatch.delenv("FEDLIB_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert data_root() == tmp_path / "d"
    assert cache_root() == tmp_path / "xdg" / "fedlib"  # the user's cache folder, never the data's (issue 59)
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    monkeypatch.delenv("FEDLIB_DATA")
    assert data_root() == Path("data")


def test_cache_root_is_never_inside_the_data_folder_unless_asked(tmp_path, monkeypatch):
    import sys

    monkeypatch.delenv("FEDLIB_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    if sys.platform.startswith("linux"):
        assert cache_root(tmp_path) == Path.home() / ".cache" / "fedlib"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # not absolute: ignored, as the spec says
    assert not str(cache_root(tmp_path)).startswith(str(tmp_path))
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))  # asked for
    assert cache_root() == tmp_path / "cache"


# ----------------------------------------------------------------------------- CIFAR
def test_cifar10_pickles_exact_pixels_labels_and_names(root):
    ref = make_cifar10_pickles(root)
    ds = load_dataset("cifar10")
    assert ds.kind == "image" and ds.num_classes == 10
    assert ds.train_x.dtype == torch.uint8 and ds.train_x.shape == (20, 3, 32, 32)
    assert torch.equal(ds.train_x, torch.from_numpy(ref["train_x"]))
    assert ds.train_y.tolist() == ref["train_y"]
    assert torch.equal(ds.test_x, torch.from_numpy(ref["test_x"]))
    assert ds.test_y.tolist() == ref["test_y"]
    assert ds.meta["classes"] == CIFAR10_NAMES and ds.meta["layout"] == "pickle"
    assert ds.input_shape == (3, 32, 32) and ds.num_train == 20 and ds.num_test == 3
    mean = ref["train_x"].astype(np.float64).mean(axis=(0, 2, 3)) / 255
    assert np.allclose(ds.mean, mean, atol=1e-5)


def test_cifar10_official_tarball_is_read_without_unpacking(root):
    ref = make_cifar10_pickles(root / "tmp")
    with tarfile.open(root / "cifar10-src.tar.gz", "w:gz") as tar:
        tar.add(ref["dir"], arcname="cifar-10-batches-py")
    (root / "cifar10").mkdir()
    os.replace(root / "cifar10-src.tar.gz", root / "cifar10" / "cifar-10-python.tar.gz")
    ds = load_dataset("cifar10")
    assert ds.meta["layout"] == "pickle" and ds.meta["source"].endswith("cifar-10-python.tar.gz")
    assert torch.equal(ds.train_x, torch.from_numpy(ref["train_x"]))


def test_cifar100_pickles_use_fine_labels(root):
    ref = make_cifar100_pickles(root)
    ds = load_dataset("cifar100")
    assert ds.num_classes == 100
    assert ds.train_y.tolist() == ref["train_y"] and ds.test_y.tolist() == ref["test_y"]
    assert torch.equal(ds.train_x, torch.from_numpy(ref["train_x"]))
    assert ds.meta["classes"][99] == "c99"


def test_imagefolder_tar_read_directly_sorted_classes(root):
    pixels = make_imagefolder_tar(root / "cifar10" / "cifar10-jpg.tar.gz", prefix="./")
    ds = load_dataset("cifar10")
    assert ds.meta["layout"] == "imagefolder" and ds.meta["classes"] == CIFAR10_NAMES
    assert ds.num_train == 20 and ds.num_test == 10
    assert ds.train_y.tolist() == [c for c in range(10) for _ in range(2)]
    assert ds.class_counts().tolist() == [2] * 10
    png = pixels["./train/bird/0000.png"]  # lossless: exact
    assert torch.equal(ds.train_x[4], torch.from_numpy(png))
    jpg = pixels["./train/bird/0001.jpg"].astype(float)  # JPEG of noise: same image, lossy
    assert np.corrcoef(ds.train_x[5].numpy().ravel().astype(float), jpg.ravel())[0, 1] > 0.5


def test_imagefolder_directory_layout(root):
    tarpath = root / "x.tar.gz"
    make_imagefolder_tar(tarpath, per_class=1)
    with tarfile.open(tarpath) as t:
        safe_extract(t, root / "cifar10")
    tarpath.unlink()
    ds = load_dataset("cifar10")
    assert ds.meta["layout"] == "imagefolder" and ds.num_train == 10 and ds.num_test == 10


def test_imagefolder_wrong_class_count_is_an_error(root):
    make_imagefolder_tar(root / "cifar10" / "c.tar.gz", classes=["a", "b", "c"])
    with pytest.raises(FedlibError, match="found 3 class folders under train/, expected 10"):
        load_dataset("cifar10")


# ----------------------------------------------------------------------------- Tiny-ImageNet
@pytest.mark.parametrize("as_zip", [False, True])
def test_tiny_imagenet_official_layout(root, as_zip):
    make_tiny(root, as_zip=as_zip)
    ds = load_dataset("tinyimagenet")
    assert ds.meta["classes"] == ["n01", "n02", "n03"]  # sorted wnids = ImageFolder order
    assert ds.meta["class_names"][0] == "thing n01"
    assert ds.train_x.shape == (6, 3, 64, 64) and ds.test_x.shape == (3, 3, 64, 64)
    assert ds.train_y.tolist() == [0, 0, 1, 1, 2, 2]
    assert sorted(ds.test_y.tolist()) == [0, 2, 2]
    grey = ds.train_x[2]  # n02_0: the greyscale JPEG, converted to 3 equal channels
    assert torch.equal(grey[0], grey[1]) and torch.equal(grey[1], grey[2])
    x, _ = ds.batch(torch.arange(6), train=True, generator=torch.Generator().manual_seed(0))
    assert x.shape == (6, 3, 64, 64)


# ----------------------------------------------------------------------------- Shakespeare
def test_gutenberg_parser_roles_speeches_and_directions(root):
    ref = make_plays(root)
    roles = shk.parse_play((root / "shakespeare" / "testing_gut.txt").read_text())
    assert set(roles) == {"Alpha", "BETA"}  # no cast list, headings or unspoken text
    alpha = " ".join(roles["Alpha"])
    assert alpha == ref["alpha"] and "[" not in alpha and "Aside" not in alpha
    assert roles["BETA"] == [ref["beta"]]
    assert shk.parse_play((root / "shakespeare" / "poem_gut.txt").read_text()) == {}


def test_shakespeare_windows_time_split_and_no_target_overlap(root):
    ref = make_plays(root)
    ds = load_dataset("shakespeare", min_samples_per_role=10)
    assert ds.kind == "text" and ds.num_classes == 80 and ds.input_shape == (80,)
    assert ds.meta["roles"] == ["testing/BETA", "testing/Alpha"]
    assert ds.train_x.dtype == torch.long
    for rid, key in ((0, "beta"), (1, "alpha")):
        ids = torch.from_numpy(shk.encode(ref[key]).astype(np.int64))
        n = len(ids) - 80
        tr = (ds.meta["train_role"] == rid).nonzero().flatten()
        te = (ds.meta["test_role"] == rid).nonzero().flatten()
        assert len(tr) == int(0.8 * n) and len(tr) + len(te) == n
        for k, i in enumerate(tr.tolist()):  # window k of the role, in time order
            assert torch.equal(ds.train_x[i], ids[k:k + 80]) and ds.train_y[i] == ids[k + 80]
        for k, i in enumerate(te.tolist(), start=len(tr)):
            assert torch.equal(ds.test_x[i], ids[k:k + 80]) and ds.test_y[i] == ids[k + 80]
    # the odd character '@' maps to the fixed unknown symbol
    assert shk.encode("@")[0] == shk.ALPHABET.index("}") == 79
    assert shk.decode(shk.encode("Hi, you.")) == "Hi, you."
    x, y = ds.batch(torch.tensor([0, 1]), train=True)
    assert x.dtype == torch.long and x.shape == (2, 80) and y.shape == (2,)


def test_shakespeare_min_and_max_samples_per_role(root):
    make_plays(root)
    full = load_dataset("shakespeare", min_samples_per_role=10)
    n_alpha = int((full.meta["train_role"] == 0).sum() + (full.meta["test_role"] == 0).sum())
    n_beta = int((full.meta["train_role"] == 1).sum() + (full.meta["test_role"] == 1).sum())
    only_big = load_dataset("shakespeare", min_samples_per_role=max(n_alpha, n_beta))
    assert len(only_big.meta["roles"]) == 1
    capped = load_dataset("shakespeare", min_samples_per_role=10, max_samples_per_role=50)
    counts = torch.bincount(capped.meta["train_role"]) + torch.bincount(capped.meta["test_role"])
    assert counts.tolist() == [50, 50]
    assert torch.bincount(capped.meta["train_role"]).tolist() == [40, 40]
    # capped windows are a time-ordered subset of the full ones, train still before test
    full_tr = {tuple(r) for r in full.train_x[full.meta["train_role"] == 1].tolist()}
    assert {tuple(r) for r in capped.train_x[capped.meta["train_role"] == 1].tolist()} <= full_tr
    assert capped.meta["converted"] is False  # options apply at load time, one cache


def test_leaf_json_layout(root):
    ref = make_leaf_json(root)
    ds = load_dataset("shakespeare", min_samples_per_role=5)
    assert ds.meta["layout"] == "leaf" and ds.meta["roles"] == ["HAMLET_HAMLET", "ROMEO_JULIET"]
    for rid, (xs, ys) in enumerate(((ref["x"], ref["y"]), (ref["xv"], ref["yv"]))):
        n_tr = int(0.8 * len(xs))
        tr = ds.train_x[ds.meta["train_role"] == rid]
        te = ds.test_x[ds.meta["test_role"] == rid]
        assert [shk.decode(r) for r in tr] == xs[:n_tr]
        assert [shk.decode(r) for r in te] == xs[n_tr:]
        assert shk.decode(ds.train_y[ds.meta["train_role"] == rid]) == "".join(ys[:n_tr])


# ----------------------------------------------------------------------------- Adult
def test_adult_features_codes_and_attributes(root):
    make_adult(root)
    ds = load_dataset("adult")
    assert ds.kind == "tabular" and ds.num_classes == 2 and ds.input_shape == (11,)
    assert ds.num_train == 4 and ds.num_test == 2
    assert ds.meta["feature_names"] == ["age", "workclass", "education", "marital-status",
                                        "occupation", "relationship", "race", "sex",
                                        "capital-gain", "capital-loss", "hours-per-week"]
    assert ds.train_x.dtype == torch.float32
    cats = ds.meta["categories"]
    assert cats["workclass"] == ["?", "Private", "Self-emp-not-inc", "State-gov"]  # sorted, '?' kept
    assert ds.train_x[0].tolist() == [39, 3, 1, 2, 1, 1, 2, 1, 2174, 0, 40]
    assert ds.train_y.tolist() == [0, 0, 1, 1] and ds.test_y.tolist() == [0, 1]
    assert ds.test_x[1, 1] == len(cats["workclass"])  # unseen test category -> extra code
    assert ds.meta["attributes"]["sex"] == ["Female", "Male"]
    assert ds.meta["sex"].tolist() == [1, 1, 0, 1] and ds.meta["test_sex"].tolist() == [1, 0]
    assert ds.meta["race"].tolist() == [2, 2, 1, 0]  # Asian-Pac, Black, White sorted
    assert ds.normalize == "none"
    x, _ = ds.batch(torch.arange(4), train=True)
    assert torch.equal(x, ds.train_x)
    ds.normalize = "dataset"
    z, _ = ds.batch(torch.arange(4), train=True)
    assert torch.allclose(z.mean(0), torch.zeros(11), atol=1e-5)


def test_adult_onehot(root):
    make_adult(root)
    ds = load_dataset("adult_onehot")
    names = ds.meta["feature_names"]
    assert names[:4] == ["age", "capital-gain", "capital-loss", "hours-per-week"]
    assert ds.input_shape == (len(names),)
    assert torch.allclose(ds.train_x[:, :4].mean(0), torch.zeros(4), atol=1e-5)
    block = [i for i, n in enumerate(names) if n.startswith("workclass=")]
    assert ds.train_x[:, block].sum(1).tolist() == [1, 1, 1, 1]
    assert ds.test_x[1, block].sum() == 0  # 'Never-worked' unseen in train -> all zeros
    assert ds.train_x[0, names.index("race=White")] == 1


# ----------------------------------------------------------------------------- cache
def test_cache_reused_rebuilt_when_corrupt_or_source_changes(root, tmp_path):
    make_cifar10_pickles(root)
    first = load_dataset("cifar10")
    assert first.meta["converted"] is True
    cache = Path(first.meta["cache"])
    assert cache.parent == tmp_path / "cache"
    again = load_dataset("cifar10")
    assert again.meta["converted"] is False and torch.equal(again.train_x, first.train_x)
    cache.write_bytes(cache.read_bytes()[: cache.stat().st_size // 2])  # truncated
    fixed = load_dataset("cifar10")
    assert fixed.meta["converted"] is True and torch.equal(fixed.train_x, first.train_x)
    # flip a byte inside the stored pixels: the checksum catches it
    blob = torch.load(cache, weights_only=True)
    blob["payload"]["train_x"][0, 0, 0, 0] ^= 1
    torch.save(blob, cache)
    assert load_dataset("cifar10").meta["converted"] is True
    # a changed source file (size/mtime) invalidates the cache
    make_cifar10_pickles(root, per_batch=5)
    changed = load_dataset("cifar10")
    assert changed.meta["converted"] is True and changed.num_train == 25


def test_cache_dir_argument_and_device(root, tmp_path):
    make_adult(root)
    ds = load_dataset("adult", cache_dir=tmp_path / "elsewhere", device="cpu")
    assert Path(ds.meta["cache"]).parent == tmp_path / "elsewhere"
    moved = ds.to("cpu")
    assert moved.meta["sex"].device.type == "cpu" and moved.train_x.device.type == "cpu"


# ----------------------------------------------------------------------------- errors
def test_unknown_dataset_lists_valid_names():
    with pytest.raises(FedlibError) as e:
        load_dataset("mnist")
    for n in DATASETS:
        assert n in str(e.value)


@pytest.mark.parametrize("name", DATASETS)
def test_missing_dataset_names_paths_and_fix(root, name):
    with pytest.raises(FedlibError) as e:
        load_dataset(name)
    msg = str(e.value)
    assert repr(name) in msg and str(root) in msg
    assert "FEDLIB_DATA" in msg and "fedlib data fetch" in msg


def test_unknown_option(root):
    make_adult(root)
    with pytest.raises(FedlibError, match="has no option"):
        load_dataset("adult", max_samples_per_role=3)


def test_corrupt_tar(root):
    (root / "cifar10").mkdir()
    (root / "cifar10" / "cifar10-jpg.tar.gz").write_bytes(b"\x1f\x8b" + os.urandom(500))
    with pytest.raises(FedlibError, match="cannot read archive .*cifar10-jpg.tar.gz"):
        load_dataset("cifar10")


def test_truncated_tar(root):
    good = root / "g.tar.gz"
    make_imagefolder_tar(good)
    (root / "cifar10").mkdir()
    data = good.read_bytes()
    (root / "cifar10" / "c.tar.gz").write_bytes(data[: len(data) // 2])
    good.unlink()
    with pytest.raises(FedlibError, match="cannot read archive"):
        load_dataset("cifar10")


def test_truncated_pickle(root):
    ref = make_cifar10_pickles(root)
    p = ref["dir"] / "data_batch_3"
    p.write_bytes(p.read_bytes()[:100])
    with pytest.raises(FedlibError, match="cannot read CIFAR pickle .*data_batch_3"):
        load_dataset("cifar10")


def test_pickle_with_code_is_refused(root):
    ref = make_cifar10_pickles(root)
    (ref["dir"] / "test_batch").write_bytes(pickle.dumps({"data": os.system}))
    with pytest.raises(FedlibError, match="refusing to load"):
        load_dataset("cifar10")


def test_missing_pickle_batch(root):
    ref = make_cifar10_pickles(root)
    (ref["dir"] / "data_batch_5").unlink()
    with pytest.raises(FedlibError, match="data_batch_5"):
        load_dataset("cifar10")


def test_bad_image_in_tar(root):
    path = root / "cifar10" / "c.tar.gz"
    path.parent.mkdir()
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (("train/a/0.jpg", b"\xff\xd8not a jpeg"), ("test/a/0.png", b"junk")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with pytest.raises(FedlibError, match="expected 10"):
        load_dataset("cifar10")  # class-count check comes first
    from fedlib.data.files import FileTree, decode_images

    with pytest.raises(FedlibError, match="cannot read image .*train/a/0.jpg"):
        decode_images(FileTree(path), ["train/a/0.jpg"])


@pytest.mark.parametrize("row, match", [
    ("1, 2, 3\n", "3 fields, expected 15"),
    ("x, Private, 1, HS-grad, 9, Divorced, Sales, Husband, White, Male, 0, 0, 40, Cuba, <=50K.\n",
     "age is 'x'"),
    ("30, Private, 1, HS-grad, 9, Divorced, Sales, Husband, White, Male, 0, 0, 40, Cuba, maybe\n",
     "unknown label"),
])
def test_bad_csv_row(root, row, match):
    make_adult(root, test_extra=row)
    with pytest.raises(FedlibError, match=match) as e:
        load_dataset("adult")
    assert "adult.test:4" in str(e.value)  # file and line


def test_bad_leaf_json(root):
    (root / "shakespeare").mkdir()
    (root / "shakespeare" / "all_data.json").write_text('{"users": ["a"], "user_da')
    with pytest.raises(FedlibError, match="cannot read LEAF all_data.json"):
        load_dataset("shakespeare")


def test_tiny_bad_annotation(root):
    base = make_tiny(root)
    ann = base / "tiny-imagenet-200" / "val" / "val_annotations.txt"
    ann.write_text("val_0.JPEG\tn99\t0\t0\t1\t1\n")
    with pytest.raises(FedlibError, match="line 1"):
        load_dataset("tinyimagenet")


# ----------------------------------------------------------------------------- info + CLI
def test_dataset_info_and_cli(root, capsys):
    make_cifar10_pickles(root)
    make_adult(root)
    make_plays(root)
    info = dataset_info("cifar10")
    assert info["num_train"] == 20 and info["num_classes"] == 10 and not info["balanced"]
    assert cli_main(["data", "info", "adult", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["num_train"] == 4 and out["attributes"]["sex"] == {"Female": 1, "Male": 3}
    assert cli_main(["data", "info", "cifar10"]) == 0
    assert "20 train / 3 test, 10 classes" in capsys.readouterr().out
    assert cli_main(["data", "info", "shakespeare"]) == 0  # both roles have >= 100 samples
    assert "2 roles from 1 plays" in capsys.readouterr().out
    assert cli_main(["data", "info", "tinyimagenet"]) == 2
    err = capsys.readouterr().err
    assert "fedlib: error: dataset 'tinyimagenet' not found" in err
