"""fetch(): downloads from (local file://) URLs, verifies checksums, unpacks; offline errors."""

from __future__ import annotations

import hashlib
import io
import tarfile
import urllib.error

import pytest

import fedlib.data.fetch as fetch_mod
from fedlib.data import load_dataset
from fedlib.data.fetch import Download
from fedlib.core.errors import FedlibError


def _tarball(path, members: dict):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return hashlib.md5(path.read_bytes()).hexdigest()


def test_fetch_downloads_verifies_and_unpacks(tmp_path, monkeypatch):
    src = tmp_path / "src.tar.gz"
    md5 = _tarball(src, {"cifar-10-batches-py/readme.html": b"hello"})
    monkeypatch.setitem(fetch_mod.SOURCES, "cifar10", ("cifar10", [
        Download(src.as_uri(), "cifar-10-python.tar.gz", md5=md5, extract=True,
                 creates="cifar-10-batches-py")]))
    out = fetch_mod.fetch("cifar10", tmp_path / "data", progress=None)
    assert out == tmp_path / "data" / "cifar10"
    assert (out / "cifar-10-batches-py" / "readme.html").read_bytes() == b"hello"
    assert not list(out.glob("*.part"))
    # present and valid -> not downloaded again (the source may even be gone)
    src.unlink()
    fetch_mod.fetch("cifar10", tmp_path / "data", progress=None)


def test_fetch_adult_then_load(tmp_path, monkeypatch):
    from test_data_loaders import make_adult

    make_adult(tmp_path / "src")
    files = []
    for name in ("adult.data", "adult.test"):
        p = tmp_path / "src" / "adult" / name
        files.append(Download(p.as_uri(), name, sha256=hashlib.sha256(p.read_bytes()).hexdigest()))
    monkeypatch.setitem(fetch_mod.SOURCES, "adult", ("adult", files))
    fetch_mod.fetch("adult", tmp_path / "data", progress=None)
    ds = load_dataset("adult", tmp_path / "data", cache_dir=tmp_path / "cache")
    assert ds.num_train == 4 and ds.num_test == 2


def test_fetch_checksum_mismatch_is_an_error(tmp_path, monkeypatch):
    src = tmp_path / "adult.data"
    src.write_bytes(b"1,2,3\n")
    monkeypatch.setitem(fetch_mod.SOURCES, "adult", ("adult", [
        Download(src.as_uri(), "adult.data", sha256="0" * 64)]))
    with pytest.raises(FedlibError, match="damaged: sha256"):
        fetch_mod.fetch("adult", tmp_path / "data", progress=None)
    assert not (tmp_path / "data" / "adult" / "adult.data").exists()
    assert not list((tmp_path / "data" / "adult").glob("*.part"))


def test_fetch_without_network_says_what_to_do(tmp_path, monkeypatch):
    def offline(*a, **k):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(fetch_mod.urllib.request, "urlopen", offline)
    with pytest.raises(FedlibError) as e:
        fetch_mod.fetch("cifar100", tmp_path, progress=None)
    msg = str(e.value)
    assert "cannot download https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz" in msg
    assert "no network" in msg and "by hand" in msg and "FEDLIB_DATA" in msg


def test_fetch_bad_archive_and_unknown_name(tmp_path, monkeypatch):
    src = tmp_path / "bad.zip"
    src.write_bytes(b"PK-not-a-zip")
    monkeypatch.setitem(fetch_mod.SOURCES, "tinyimagenet", ("tinyimagenet", [
        Download(src.as_uri(), "tiny-imagenet-200.zip", extract=True, creates="tiny-imagenet-200")]))
    with pytest.raises(FedlibError, match="cannot unpack"):
        fetch_mod.fetch("tinyimagenet", tmp_path / "data", progress=None)
    with pytest.raises(FedlibError, match="unknown dataset"):
        fetch_mod.fetch("imagenet", tmp_path)


def test_fetch_refuses_escaping_tar_members(tmp_path, monkeypatch):
    src = tmp_path / "evil.tar.gz"
    md5 = _tarball(src, {"../../escaped.txt": b"x"})
    monkeypatch.setitem(fetch_mod.SOURCES, "cifar100", ("cifar100", [
        Download(src.as_uri(), "cifar-100-python.tar.gz", md5=md5, extract=True)]))
    with pytest.raises(FedlibError, match="cannot unpack"):
        fetch_mod.fetch("cifar100", tmp_path / "data", progress=None)
    assert not (tmp_path / "escaped.txt").exists()


def test_every_dataset_has_official_sources():
    from fedlib.data import DATASETS

    for name in DATASETS:
        folder, files = fetch_mod.SOURCES[name]
        assert files and all(f.url.startswith(("https://", "http://")) for f in files)
    assert len(fetch_mod.SOURCES["shakespeare"][1]) == 42


def test_cli_fetch(tmp_path, monkeypatch, capsys):
    from fedlib.cli import main

    src = tmp_path / "adult.names"
    src.write_text("names")
    monkeypatch.setitem(fetch_mod.SOURCES, "adult", ("adult", [Download(src.as_uri(), "adult.names")]))
    assert main(["data", "fetch", "adult", "--root", str(tmp_path / "d")]) == 0
    assert (tmp_path / "d" / "adult" / "adult.names").read_text() == "names"
    assert "adult is in" in capsys.readouterr().out


def test_safe_extract_checks_members_where_tarfile_has_no_filters(tmp_path, monkeypatch):
    """Python < 3.11.4 (Debian 12's 3.11.2) has no ``extractall(filter=...)``: the same refusal by hand."""
    import tarfile

    from fedlib.data.fetch import safe_extract

    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    good, evil = tmp_path / "good.tar.gz", tmp_path / "evil.tar.gz"
    _tarball(good, {"a/b.txt": b"x"})
    _tarball(evil, {"../escaped.txt": b"x"})
    with tarfile.open(good) as t:
        safe_extract(t, tmp_path / "out")
    assert (tmp_path / "out" / "a" / "b.txt").read_bytes() == b"x"
    with tarfile.open(evil) as t, pytest.raises(tarfile.TarError, match="outside"):
        safe_extract(t, tmp_path / "out")
    assert not (tmp_path / "escaped.txt").exists()
