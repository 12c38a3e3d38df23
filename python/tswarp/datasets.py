"""Loaders for the datasets shipped with tswarp.

GunPoint (UCR archive, Ratanamahatana and Keogh; files as bundled by aeon, see data/README.md in
the repository) is stored once, inside the package at ``tswarp/data/GunPoint/``, so that the same
files serve a source checkout and an installed wheel.
"""

from __future__ import annotations

import pathlib
from typing import Tuple

import numpy as np

from .io import read_ts

__all__ = ["DATA_DIR", "gunpoint_path", "load_gunpoint"]

# Next to this module both in a checkout (python/tswarp/data) and when installed
# (site-packages/tswarp/data): scikit-build-core copies the whole package folder into the wheel.
DATA_DIR = pathlib.Path(__file__).resolve().parent / "data"

_SPLITS = ("train", "test")


def gunpoint_path(split: str = "train") -> pathlib.Path:
    """Path of the shipped GunPoint ``.ts`` file for ``split`` ("train" or "test")."""
    if split not in _SPLITS:
        raise ValueError(f"split: expected 'train' or 'test', got {split!r}")
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
