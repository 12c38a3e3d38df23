"""Optional dependencies: imported where a feature needs them, with one line naming the
extra that installs them when they are missing.

``import tswarp`` needs numpy only. The extras of pyproject.toml add the rest:
``plot`` (matplotlib: tswarp.plot, ``--plot``), ``sklearn`` (scikit-learn and scipy: the
shapelet estimators, soft-DTW barycenters and k-means), ``torch`` (PyTorch: tswarp.torch),
``all`` (every one of them).
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["require", "MissingDependency", "EXTRAS"]

# module -> (extra, the PyPI package)
EXTRAS = {
    "matplotlib": ("plot", "matplotlib"),
    "sklearn": ("sklearn", "scikit-learn"),
    "scipy": ("sklearn", "scipy"),
    "torch": ("torch", "torch"),
}


class MissingDependency(ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


def require(module: str, feature: str) -> ModuleType:
    """Import ``module`` (or a submodule, e.g. 'scipy.optimize') for ``feature``, or raise
    MissingDependency with one line saying what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        top = module.split(".")[0]
        if e.name is not None and e.name.split(".")[0] != top:
            raise  # the module is there but one of its own imports failed: say that
        extra, package = EXTRAS.get(top, (None, top))
        how = (f"pip install 'tswarp[{extra}]' (or pip install {package})" if extra
               else f"pip install {package}")
        raise MissingDependency(f"{feature} needs {package}, which is not installed: {how}",
                                name=top) from None
