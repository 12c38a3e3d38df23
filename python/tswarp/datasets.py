"""Datasets: the shipped GunPoint, and the UCR and UEA archives from a folder, a cache or
the archive's website.

GunPoint (UCR archive, Ratanamahatana and Keogh; files as bundled by aeon, see data/README.md in
the repository) is stored once, inside the package at ``tswarp/data/GunPoint/``, so that the same
files serve a source checkout and an installed wheel.

:func:`load_ucr` (univariate problems) and :func:`load_uea` (multivariate ones) read a
problem's TRAIN or TEST split in the archives' formats: aeon/sktime ``.ts`` files (what
timeseriesclassification.com distributes) or the UCR archive's ``.tsv`` files
(``UCRArchive_2018``). They look, in order, in

1. ``data_home`` (or the environment variable ``TSWARP_DATA``) if given: a folder holding
   ``<name>/<name>_TRAIN.ts`` (or ``.tsv``), or those files directly;
2. the cache, ``~/.cache/tswarp/datasets`` (``XDG_CACHE_HOME`` respected);

and otherwise download ``<name>.zip`` from timeseriesclassification.com (the URL aeon's
loaders use), check it and keep it unpacked in the cache (or ``data_home``). The check: the
zip's CRCs, and its SHA-256 against the one pinned with ``sha256=`` or in :data:`CHECKSUMS`
when known; the digest of what was downloaded is kept beside the files
(``<name>/.sha256``), and a later load that finds files which no longer match it says so.
Machines without a network get a message saying where to put the files.
"""

from __future__ import annotations

import hashlib
import io
import os
import pathlib
import secrets
import shutil
import urllib.error
import urllib.request
import zipfile
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from .io import read_ts, read_ucr_tsv

__all__ = ["DATA_DIR", "ARCHIVE_URL", "CHECKSUMS", "gunpoint_path", "load_gunpoint",
           "load_ucr", "load_uea", "dataset_path", "cache_dir"]

# Next to this module both in a checkout (python/tswarp/data) and when installed
# (site-packages/tswarp/data): scikit-build-core copies the whole package folder into the wheel.
DATA_DIR = pathlib.Path(__file__).resolve().parent / "data"

# aeon's loaders download the same files from here (aeon.datasets._data_loaders).
ARCHIVE_URL = "https://timeseriesclassification.com/aeon-toolkit/"

# SHA-256 of a problem's files, when known: {name: {file name: digest}} (GunPoint's: the
# files aeon bundles, data/README.md). A downloaded file with a known digest must have it;
# the zip archive itself is checked against the digest pinned with the loaders' sha256=.
CHECKSUMS: Dict[str, Dict[str, str]] = {
    "GunPoint": {
        "GunPoint_TRAIN.ts": "f842401779fd9800d247d8b33121a1a4643710a19b24917dbdd9a060ca8630d5",
        "GunPoint_TEST.ts": "79332750788a6227b325b96bd0d70130c8eb707b9731f8d7dec62b7a7d36017e",
    },
}

_SPLITS = ("train", "test")
Series = Union[np.ndarray, List[np.ndarray]]


def gunpoint_path(split: str = "train") -> pathlib.Path:
    """Path of the shipped GunPoint ``.ts`` file for ``split`` ("train" or "test")."""
    _check_split(split)
    path = DATA_DIR / "GunPoint" / f"GunPoint_{split.upper()}.ts"
    if not path.is_file():
        raise FileNotFoundError(f"the shipped dataset file {path} is missing; reinstall tswarp")
    return path


def load_gunpoint(split: str = "train") -> Tuple[np.ndarray, np.ndarray]:
    """Load GunPoint: ``X`` float64 of shape (n, 150), ``y`` int64 labels (1 = Gun, 2 = Point).

    The train split has 50 series, the test split 150. Univariate, equal length, z-normalised
    as in the UCR archive.
    """
    X, y = read_ts(gunpoint_path(split))
    assert isinstance(X, np.ndarray) and y is not None  # equal lengths, labelled
    return X, y


def _check_split(split: Any) -> str:
    if not isinstance(split, str):
        raise TypeError(f"split must be a str, got {type(split).__name__}")
    if split.lower() not in _SPLITS:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    return split.lower()


def _check_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    if not name or any(c in name for c in "/\\:") or name in (".", "..") or name.startswith("."):
        raise ValueError(f"name must be a dataset name such as 'GunPoint', got {name!r}")
    return name


def cache_dir() -> pathlib.Path:
    """Where downloaded problems are kept: $XDG_CACHE_HOME/tswarp/datasets, by default
    ~/.cache/tswarp/datasets."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "tswarp" / "datasets"


def _homes(data_home: Optional[Union[str, os.PathLike]]) -> List[pathlib.Path]:
    homes = []
    if data_home is not None:
        homes.append(pathlib.Path(data_home))
    elif os.environ.get("TSWARP_DATA"):
        homes.append(pathlib.Path(os.environ["TSWARP_DATA"]))
    homes.append(cache_dir())
    return homes


def _find(name: str, split: str, homes: List[pathlib.Path]) -> Optional[pathlib.Path]:
    base = f"{name}_{split.upper()}"
    for home in homes:
        for folder in (home / name, home):
            for ext in (".ts", ".tsv"):
                p = folder / (base + ext)
                if p.is_file():
                    return p
    return None


def dataset_path(name: str, split: str = "train", *,
                 data_home: Optional[Union[str, os.PathLike]] = None,
                 download: bool = True, base_url: Optional[str] = None,
                 sha256: Optional[str] = None, timeout: float = 60.0,
                 progress: Any = False) -> pathlib.Path:
    """The file of a problem's split (see the module's docstring for where it is looked
    for), downloaded first when it is nowhere and ``download`` is True."""
    from ._conventions import check_bool, check_real
    name, split = _check_name(name), _check_split(split)
    download = check_bool(download, "download")
    timeout = check_real(timeout, "timeout", low=0.0, strict=True)
    if sha256 is not None and (not isinstance(sha256, str) or len(sha256) != 64
                               or any(c not in "0123456789abcdefABCDEF" for c in sha256)):
        raise ValueError(f"sha256 must be 64 hexadecimal digits, got {sha256!r}")
    if name == "GunPoint" and data_home is None and not os.environ.get("TSWARP_DATA"):
        return gunpoint_path(split)
    homes = _homes(data_home)
    found = _find(name, split, homes)
    if found is not None:
        _verify_cached(found.parent, name)
        return found
    target = homes[0] if data_home is not None else cache_dir()
    if not download:
        raise FileNotFoundError(
            f"dataset {name!r}: no {name}_{split.upper()}.ts or .tsv in "
            f"{' or '.join(str(h) for h in homes)}, and download=False")
    _download(name, target, base_url or ARCHIVE_URL, sha256, timeout, progress)
    found = _find(name, split, [target])
    if found is None:
        raise FileNotFoundError(f"dataset {name!r}: the archive holds no {name}_"
                                f"{split.upper()}.ts or .tsv")
    return found


def _sha256_file(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _verify_cached(folder: pathlib.Path, name: str) -> None:
    """Files a download left: each still has the digest recorded at download time."""
    record = folder / ".sha256"
    if not record.is_file():
        return
    for line in record.read_text().splitlines():
        digest, _, fname = line.partition("  ")
        if not fname or fname.endswith(".zip"):
            continue
        p = folder / fname
        if p.is_file() and _sha256_file(p) != digest:
            raise ValueError(f"dataset {name!r}: {p} no longer matches the SHA-256 recorded when "
                             f"it was downloaded ({record}); delete {folder} to download it "
                             "again")


def _download(name: str, target: pathlib.Path, base_url: str, sha256: Optional[str],
              timeout: float, progress: Any) -> None:
    from ._progress import make_progress
    url = base_url.rstrip("/") + "/" + name + ".zip"
    folder = target / name
    folder.mkdir(parents=True, exist_ok=True)
    hint = (f"download it from {url} yourself and unpack it into {folder} (or pass "
            "data_home=), or pass download=False to read only local files")
    bar = make_progress(progress, f"download {name}", "bytes")
    try:
        req = urllib.request.Request(url, headers={"User-Agent": "tswarp"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            total = int(resp.headers.get("Content-Length") or 0)
            buf = io.BytesIO()
            while True:
                block = resp.read(1 << 16)
                if not block:
                    break
                buf.write(block)
                if bar is not None and total:
                    bar(min(buf.tell(), total), total)
    except urllib.error.HTTPError as e:
        raise FileNotFoundError(f"dataset {name!r}: {url} answered {e.code} {e.reason}; is the "
                                f"name right (it is case-sensitive)? Else {hint}") from None
    except (urllib.error.URLError, OSError, TimeoutError) as e:
        reason = getattr(e, "reason", e)
        raise ConnectionError(f"dataset {name!r}: cannot download {url} ({reason}); {hint}") \
            from None
    finally:
        if bar is not None and hasattr(bar, "close"):
            bar.close()
    data = buf.getvalue()
    if total and len(data) != total:
        raise ConnectionError(f"dataset {name!r}: the download of {url} stopped after "
                              f"{len(data)} of {total} bytes; {hint}")
    digest = hashlib.sha256(data).hexdigest()
    if sha256 is not None and digest.lower() != sha256.lower():
        raise ValueError(f"dataset {name!r}: {url} has SHA-256 {digest}, not the pinned "
                         f"{sha256.lower()}; nothing was kept")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        bad = zf.testzip()
    except zipfile.BadZipFile as e:
        raise ValueError(f"dataset {name!r}: {url} is not a valid zip archive ({e}); nothing "
                         "was kept") from None
    if bad is not None:
        raise ValueError(f"dataset {name!r}: {url}: {bad} fails its CRC check; nothing was kept")
    wanted = {f"{name}_{s.upper()}{ext}" for s in _SPLITS for ext in (".ts", ".tsv")}
    members = {pathlib.PurePosixPath(i.filename).name: i for i in zf.infolist()
               if not i.is_dir() and pathlib.PurePosixPath(i.filename).name in wanted}
    if not members:
        raise ValueError(f"dataset {name!r}: {url} holds none of {sorted(wanted)}; nothing was "
                         "kept")
    known = CHECKSUMS.get(name, {})
    lines = [f"{digest}  {name}.zip"]
    for fname, info in sorted(members.items()):
        content = zf.read(info)
        fdig = hashlib.sha256(content).hexdigest()
        if fname in known and known[fname] != fdig:
            raise ValueError(f"dataset {name!r}: {fname} from {url} has SHA-256 {fdig}, not the "
                             f"known {known[fname]}; nothing was kept")
        # written through a temporary file: a crash never leaves half a file to be read
        tmp = folder / f".{fname}.{secrets.token_hex(4)}.tmp"
        tmp.write_bytes(content)
        os.replace(tmp, folder / fname)
        lines.append(f"{fdig}  {fname}")
    (folder / ".sha256").write_text("\n".join(lines) + "\n")


def _load(name: str, split: str, data_home, download, base_url, sha256, timeout, progress,
          multivariate: bool) -> Tuple[Series, np.ndarray]:
    path = dataset_path(name, split, data_home=data_home, download=download,
                        base_url=base_url, sha256=sha256, timeout=timeout, progress=progress)
    X, y = read_ucr_tsv(path) if path.suffix == ".tsv" else read_ts(path)
    if y is None:
        raise ValueError(f"dataset {name!r}: {path} holds no class labels")
    if multivariate and isinstance(X, np.ndarray) and X.ndim == 2:
        X = X[:, :, None]  # the UEA loader always gives (n, len, d)
    elif multivariate and isinstance(X, list):
        X = [x[:, None] if x.ndim == 1 else x for x in X]
    return X, y


def load_ucr(name: str, split: str = "train", *,
             data_home: Optional[Union[str, os.PathLike]] = None, download: bool = True,
             base_url: Optional[str] = None, sha256: Optional[str] = None,
             timeout: float = 60.0, progress: Any = False) -> Tuple[Series, np.ndarray]:
    """A problem of the UCR archive (univariate): ``(X, y)`` of one split.

    Parameters
    ----------
    name : str
        The problem's name, as the archive spells it ("GunPoint", "ECG200", ...). GunPoint
        is shipped with tswarp and needs no download.
    split : {"train", "test"}
    data_home : path, optional
        A folder with the archive's files (``<name>/<name>_TRAIN.ts`` or ``.tsv``, or the
        files directly); default the environment variable ``TSWARP_DATA``, then the cache.
    download : bool, default True
        Download a problem found nowhere (from ``base_url``, default :data:`ARCHIVE_URL`,
        ``<name>.zip``), into ``data_home`` when given, else the cache.
    sha256 : str, optional
        The zip archive's SHA-256: a download that differs is refused.
    timeout : float, default 60
        Seconds the download may wait for the server.
    progress : bool or callable
        A bar of the bytes downloaded on stderr.

    Returns
    -------
    X : ndarray (n, len) when the series have one length, else a list of (len_i,) arrays
        (multivariate problems: (n, len, d) or (len_i, d) arrays, tswarp's layout)
    y : ndarray of labels (int64 when they are integers, else str)

    Raises
    ------
    FileNotFoundError
        The problem is nowhere and ``download=False``, or the archive has no such name.
    ConnectionError
        The download failed (no network, a truncated transfer); the message says where to
        put the files by hand.
    ValueError
        A bad name or split, a corrupt or mismatching archive (nothing is kept), or cached
        files that changed since their download.
    """
    return _load(name, split, data_home, download, base_url, sha256, timeout, progress, False)


def load_uea(name: str, split: str = "train", *,
             data_home: Optional[Union[str, os.PathLike]] = None, download: bool = True,
             base_url: Optional[str] = None, sha256: Optional[str] = None,
             timeout: float = 60.0, progress: Any = False) -> Tuple[Series, np.ndarray]:
    """A problem of the UEA multivariate archive ("BasicMotions", "JapaneseVowels", ...):
    ``(X, y)`` of one split, X in tswarp's layout: (n, len, d), or a list of (len_i, d)
    arrays when the lengths differ (always with a dimension axis). Arguments, the places
    looked in and the errors as :func:`load_ucr`."""
    return _load(name, split, data_home, download, base_url, sha256, timeout, progress, True)
