"""tswarp.datasets: the shipped GunPoint, and load_ucr / load_uea from a folder, the cache or
a download. The download path runs against an HTTP server the test starts on 127.0.0.1 (no
network is needed): the real download code, its checks (zip CRC, pinned and known SHA-256,
truncation), the cache and its integrity record, and the errors a user gets.
"""

import hashlib
import http.server
import io
import os
import pathlib
import shutil
import threading
import zipfile

import numpy as np
import pytest

import tswarp
from tswarp import datasets
from tswarp.datasets import load_gunpoint, load_ucr, load_uea


@pytest.fixture
def server(tmp_path):
    """An HTTP server on 127.0.0.1 serving tmp_path/www; yields (base_url, www, hits)."""
    www = tmp_path / "www"
    www.mkdir()
    hits = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(www), **k)

        def log_message(self, *args):
            hits.append(self.path)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/", www, hits
    httpd.shutdown()
    httpd.server_close()


def _zip(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _gunpoint_as(name):
    """GunPoint's files under another problem name (aeon's zip layout: the files at the
    top, or in a folder)."""
    src = datasets.DATA_DIR / "GunPoint"
    return {f"{name}/{name}_TRAIN.ts": (src / "GunPoint_TRAIN.ts").read_bytes(),
            f"{name}/{name}_TEST.ts": (src / "GunPoint_TEST.ts").read_bytes()}


def test_gunpoint_shipped_and_checksummed():
    X, y = load_ucr("GunPoint")
    Xg, yg = load_gunpoint("train")
    np.testing.assert_array_equal(X, Xg)
    np.testing.assert_array_equal(y, yg)
    for split in ("train", "test"):
        p = datasets.gunpoint_path(split)
        assert hashlib.sha256(p.read_bytes()).hexdigest() == \
            datasets.CHECKSUMS["GunPoint"][p.name]


def test_download_cache_and_checks(server, tmp_path, monkeypatch):
    base, www, hits = server
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    digest = _zip(www / "Toy.zip", _gunpoint_as("Toy"))
    seen = []
    X, y = load_ucr("Toy", "test", base_url=base, sha256=digest,
                    progress=lambda d, t: seen.append((d, t)))
    Xt, yt = load_gunpoint("test")
    np.testing.assert_array_equal(X, Xt)
    np.testing.assert_array_equal(y, yt)
    assert hits == ["/Toy.zip"] and seen and seen[-1][0] == seen[-1][1]
    folder = tmp_path / "cache" / "tswarp" / "datasets" / "Toy"
    assert (folder / "Toy_TRAIN.ts").is_file() and (folder / ".sha256").is_file()
    # cached: no second download, the train split from the same archive
    X2, _ = load_ucr("Toy", "train", base_url=base)
    assert hits == ["/Toy.zip"]
    np.testing.assert_array_equal(X2, load_gunpoint("train")[0])
    # the multivariate loader gives tswarp's layout with a dimension axis
    Xm, _ = load_uea("Toy", base_url=base)
    assert Xm.shape == (50, 150, 1)
    # a cached file that changed since its download is reported
    with open(folder / "Toy_TRAIN.ts", "a") as f:
        f.write("\n")
    with pytest.raises(ValueError, match="no longer matches the SHA-256"):
        load_ucr("Toy", base_url=base)


def test_download_errors(server, tmp_path):
    base, www, hits = server
    home = tmp_path / "home"
    # not on the server
    with pytest.raises(FileNotFoundError, match="404"):
        load_ucr("Missing", data_home=home, base_url=base)
    # pinned digest that differs: nothing kept
    _zip(www / "Toy.zip", _gunpoint_as("Toy"))
    with pytest.raises(ValueError, match="not the pinned"):
        load_ucr("Toy", data_home=home, base_url=base, sha256="0" * 64)
    assert not (home / "Toy" / "Toy_TRAIN.ts").exists()
    # a known file's digest that differs (a GunPoint that is not GunPoint)
    bad = _gunpoint_as("GunPoint")
    bad["GunPoint/GunPoint_TRAIN.ts"] += b"\n"
    _zip(www / "GunPoint.zip", bad)
    with pytest.raises(ValueError, match="not the known"):
        load_ucr("GunPoint", data_home=home, base_url=base)
    # a corrupt archive
    (www / "Broken.zip").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ValueError, match="not a valid zip"):
        load_ucr("Broken", data_home=home, base_url=base)
    # an archive without the problem's files
    _zip(www / "Other.zip", {"readme.txt": b"hello"})
    with pytest.raises(ValueError, match="holds none of"):
        load_ucr("Other", data_home=home, base_url=base)
    # no server at all: a ConnectionError saying where to put the files
    with pytest.raises(ConnectionError, match="unpack it into"):
        load_ucr("Toy2", data_home=home, base_url="http://127.0.0.1:9/", timeout=5)
    with pytest.raises(FileNotFoundError, match="download=False"):
        load_ucr("Toy2", data_home=home, download=False)
    for bad_name in ("", "../x", "a/b", ".hidden"):
        with pytest.raises(ValueError, match="name"):
            load_ucr(bad_name, data_home=home, download=False)
    with pytest.raises(ValueError, match="split"):
        load_ucr("GunPoint", "validation")
    with pytest.raises(TypeError, match="download"):
        load_ucr("Toy", data_home=home, download="no")


def test_local_folders_ts_and_tsv(tmp_path, monkeypatch):
    """A folder of the archive's files: .ts (aeon's), the UCR archive's .tsv, a ragged
    problem (a list of series), and TSWARP_DATA as the default folder."""
    X, y = load_gunpoint("train")
    folder = tmp_path / "UCRArchive_2018" / "Tab"
    folder.mkdir(parents=True)
    for split, (A, b) in (("TRAIN", (X, y)), ("TEST", load_gunpoint("test"))):
        with open(folder / f"Tab_{split}.tsv", "w") as f:
            for row, lab in zip(A, b):
                f.write("\t".join([str(lab)] + [repr(float(v)) for v in row]) + "\n")
    Xa, ya = load_ucr("Tab", data_home=tmp_path / "UCRArchive_2018", download=False)
    np.testing.assert_array_equal(Xa, X)
    np.testing.assert_array_equal(ya, y)
    monkeypatch.setenv("TSWARP_DATA", str(tmp_path / "UCRArchive_2018"))
    Xb, _ = load_ucr("Tab", "test", download=False)
    assert Xb.shape == (150, 150)
    (folder / "Rag_TRAIN.tsv").write_text("1\t0.5\t1.5\t2.5\n2\t1.0\t2.0\tNaN\n")
    Xr, yr = load_ucr("Rag", data_home=folder, download=False)
    assert isinstance(Xr, list) and [len(x) for x in Xr] == [3, 2] and yr.tolist() == [1, 2]
    D = tswarp.cdist(Xr)
    assert D.shape == (2, 2)
