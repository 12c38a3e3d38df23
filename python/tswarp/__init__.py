"""tswarp: elastic time-series measures (DTW, TWED, Soft-DTW) on CPU and NVIDIA GPUs.

The functions are the C extension's own (``tswarp._tswarp``), so a call on two short
series costs about a microsecond::

    >>> import numpy as np, tswarp
    >>> a, b = np.sin(np.linspace(0, 6, 50)), np.sin(np.linspace(0.3, 6, 60))
    >>> d = tswarp.dtw(a, b)                             # one pair, float
    >>> D = tswarp.cdist([a, b], [a], metric="twed")     # (2, 1) matrix
    >>> P = tswarp.pdist([a, b, a[:20]], condensed=True) # scipy's condensed form

``device="cuda"`` computes on an NVIDIA GPU; CuPy arrays and PyTorch CUDA tensors are used in
place and the results come back as arrays of the same library on the same GPU (see the
README's "GPU (CUDA)" section). Neither library is imported by ``import tswarp``.

Alignment paths: ``tswarp.dtw_path``, ``tswarp.subsequence_dtw``, ``tswarp.segmental_dtw``,
``tswarp.plot.alignment``.

GPU memory that tswarp keeps cached between calls: ``tswarp.empty_cache()`` (see the README).

See ``help(tswarp.dtw)``, ``help(tswarp.cdist)`` and ``tswarp.info()``.
"""

from ._tswarp import (
    METRICS,
    CudaError,
    NoDeviceError,
    __version__,
    adtw,
    alignment_path,
    cdist,
    ddtw,
    distance,
    dtw,
    edr,
    empty_cache,
    erp,
    fastdtw,
    info,
    lcss,
    msm,
    paired,
    pdist,
    shape_dtw,
    soft_dtw,
    twed,
    wddtw,
    wdtw,
)
from ._align import Match, dtw_path, segmental_dtw, subsequence_dtw
from ._sdtw import soft_dtw_barycenter, soft_dtw_grad
from ._dba import dtw_barycenter_averaging, elastic_barycenter_average
from . import plot
from ._knn import envelope, knn, lb_enhanced, lb_improved, lb_keogh, lb_kim, lb_webb, search

__all__ = [
    "METRICS",
    "CudaError",
    "NoDeviceError",
    "__version__",
    "cdist",
    "distance",
    "dtw",
    "dtw_path",
    "empty_cache",
    "info",
    "paired",
    "pdist",
    "soft_dtw",
    "twed",
    "wdtw",
    "ddtw",
    "wddtw",
    "adtw",
    "erp",
    "edr",
    "lcss",
    "msm",
    "shape_dtw",
    "fastdtw",
    "alignment_path",
    "Match",
    "subsequence_dtw",
    "segmental_dtw",
    "soft_dtw_grad",
    "soft_dtw_barycenter",
    "dtw_barycenter_averaging",
    "elastic_barycenter_average",
    "plot",
    "neighbors",
    "cluster",
    "store",
    "dask",
    "knn",
    "search",
    "envelope",
    "lb_kim",
    "lb_keogh",
    "lb_improved",
    "lb_enhanced",
    "lb_webb",
]

# Public under the package name (help(), repr, pickling by reference as tswarp.dtw).
for _f in (cdist, distance, dtw, dtw_path, empty_cache, info, paired, pdist, soft_dtw, twed,
           wdtw, ddtw, wddtw, adtw, erp, edr, lcss, msm, shape_dtw, fastdtw, alignment_path):
    _f.__module__ = __name__
del _f


def __getattr__(name):
    # tswarp.neighbors (the estimators, with scikit-learn) loads on first use: import tswarp
    # stays light (a command-line call starts in a fraction of a second).
    if name in ("neighbors", "cluster", "store", "dask"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
