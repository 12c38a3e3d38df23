"""Figures of alignments (matplotlib, imported only when a function here is called).

``import tswarp`` does not import matplotlib: this module imports it inside each function.
"""

from __future__ import annotations

import numpy as np

__all__ = ["alignment", "shapelet"]

_COSTS = ("sqeuclidean", "euclidean", "abs", "cosine")


def _as_2d(x, name):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"{name} must be one series, shaped (len,) or (len, d); got shape {x.shape}")
    return x


def _cost_image(a, b, cost, max_pixels):
    """Local costs on a grid of at most max_pixels x max_pixels sampled cells."""
    ri = np.unique(np.linspace(0, len(a) - 1, min(len(a), max_pixels)).round().astype(np.int64))
    cj = np.unique(np.linspace(0, len(b) - 1, min(len(b), max_pixels)).round().astype(np.int64))
    x, y = a[ri], b[cj]
    if cost == "cosine":
        nx, ny = np.linalg.norm(x, axis=1), np.linalg.norm(y, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            c = 1.0 - (x @ y.T) / np.outer(nx, ny)
        zx, zy = nx == 0, ny == 0
        c[np.logical_or.outer(zx, zy)] = 1.0
        c[np.logical_and.outer(zx, zy)] = 0.0
    elif cost == "abs":
        c = np.abs(x[:, None, :] - y[None, :, :]).sum(-1)
    else:
        c = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
        if cost == "euclidean":
            c = np.sqrt(c)
    return c, ri, cj


def alignment(a, b, path, *, cost="sqeuclidean", max_pixels=500, title=None):
    """Plot two series and a warping path over a downsampled local-cost image.

    Parameters
    ----------
    a, b : array-like, shape (n,) or (n, d) and (m,) or (m, d)
        The aligned series (multivariate series are drawn dimension by dimension).
    path : array-like, shape (L, 2)
        (i, j) pairs, e.g. from :func:`tswarp.dtw_path`.
    cost : {'sqeuclidean', 'euclidean', 'abs', 'cosine'}
        Local cost of the background image.
    max_pixels : int
        The image samples at most this many rows and columns of the cost grid.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        Cost image with the path (centre), b along the top, a along the left.
    """
    import matplotlib.pyplot as plt  # lazily: import tswarp must not import matplotlib

    if cost not in _COSTS:
        raise ValueError(f"cost must be one of {', '.join(map(repr, _COSTS))}, got {cost!r}")
    if not isinstance(max_pixels, (int, np.integer)) or isinstance(max_pixels, bool) or max_pixels < 2:
        raise ValueError(f"max_pixels must be an int >= 2, got {max_pixels!r}")
    A, B = _as_2d(a, "a"), _as_2d(b, "b")
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"a has dimension {A.shape[1]} but b has dimension {B.shape[1]}")
    P = np.asarray(path)
    if P.ndim != 2 or P.shape[1] != 2 or P.shape[0] == 0:
        raise ValueError(f"path must have shape (L, 2), got {P.shape}")
    if P[:, 0].min() < 0 or P[:, 0].max() >= len(A) or P[:, 1].min() < 0 or P[:, 1].max() >= len(B):
        raise ValueError("path has indices outside a or b")
    C, ri, cj = _cost_image(A, B, cost, int(max_pixels))

    fig = plt.figure(figsize=(7, 7))
    grid = fig.add_gridspec(2, 2, width_ratios=(1, 4), height_ratios=(1, 4), wspace=0.05,
                            hspace=0.05)
    ax_img = fig.add_subplot(grid[1, 1])
    ax_top = fig.add_subplot(grid[0, 1], sharex=ax_img)
    ax_left = fig.add_subplot(grid[1, 0], sharey=ax_img)
    ax_img.imshow(C, origin="lower", aspect="auto", cmap="viridis", interpolation="nearest",
                  extent=(cj[0] - 0.5, cj[-1] + 0.5, ri[0] - 0.5, ri[-1] + 0.5))
    ax_img.plot(P[:, 1], P[:, 0], color="w", lw=1.2)
    ax_img.set_xlabel("b index")
    ax_img.tick_params(labelleft=False)
    ax_top.plot(np.arange(len(B)), B, lw=0.8)
    ax_top.tick_params(labelbottom=False)
    ax_top.set_ylabel("b")
    ax_left.plot(A, np.arange(len(A)), lw=0.8)
    ax_left.invert_xaxis()
    ax_left.set_ylabel("a index")
    if title:
        fig.suptitle(title)
    return fig


def shapelet(model, X, *, index=0, max_shapelets=8, title=None, layout=None):
    """Draw series X[index] and each shapelet of a fitted model where it matches best.

    model: a fitted ``tswarp.shapelets.ShapeletTreeClassifier`` (the shapelets of its nodes,
    root first), ``ShapeletTransform`` (best first), a ``Shapelet`` or a list of them. Each
    shapelet is drawn over its best-matching window, rescaled to that window's mean and
    standard deviation (the distance compares z-normalised shapes), or as it is for a
    shapelet that is not normalised (``Shapelet.normalized`` False: its values are what the
    distance compares), labelled with its distance. Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt  # lazily: import tswarp must not import matplotlib

    from ._conventions import check_layout
    from .shapelets import Shapelet, _univariate, shapelet_distances

    if isinstance(model, Shapelet):
        shapes = [model]
    elif isinstance(model, (list, tuple)):
        shapes = list(model)
    elif hasattr(model, "tree_"):
        shapes = [s for rule in model.shapelets_ for s in rule["shapelets"]]
    elif hasattr(model, "shapelets_"):
        shapes = list(model.shapelets_)
    else:
        raise TypeError("model must be a fitted ShapeletTreeClassifier or ShapeletTransform, "
                        f"a Shapelet or a list of them; got {type(model).__name__}")
    if not shapes:
        raise ValueError("the model holds no shapelets (a tree that is a single leaf)")
    if isinstance(max_shapelets, bool) or not isinstance(max_shapelets, (int, np.integer)) \
            or max_shapelets < 1:
        raise ValueError(f"max_shapelets must be a positive int, got {max_shapelets!r}")
    shapes = shapes[:max_shapelets]
    series = _univariate(X, check_layout(layout))
    if not 0 <= index < len(series):
        raise ValueError(f"index {index} is out of range: X holds {len(series)} series")
    x = series.series(index)
    dil = [getattr(s, "dilation", 1) for s in shapes]
    norm = [getattr(s, "normalized", True) for s in shapes]
    D, P = shapelet_distances([s.values for s in shapes], [x], return_positions=True,
                              dilations=dil, normalize=norm)
    fig, ax = plt.subplots(figsize=(9, 3.5))
    ax.plot(np.arange(len(x)), x, color="0.3", lw=1.0, label=f"X[{index}]")
    for k, s in enumerate(shapes):
        u, n, d = int(P[0, k]), len(s.values), dil[k]
        span = (n - 1) * d + 1
        # the shapelet's points on the series' time axis; u < 0: the series is shorter and
        # lies along the shapelet, which then overhangs it (the overlap is what matched)
        at = np.arange(u, u + span, d)
        inside = (at >= 0) & (at < len(x))
        w = x[at[inside]]
        v = np.asarray(s.values, dtype=np.float64)
        sd = v[inside].std()
        if not norm[k]:
            shape = v
        elif sd > 0:
            shape = (v - v[inside].mean()) / sd * w.std() + w.mean()
        else:
            shape = np.full(n, w.mean())
        step = f":{d}" if d > 1 else ""
        ax.plot(at, shape, lw=2.0, marker="." if d > 1 else None,
                label=f"X[{s.series}][{s.start}:{s.start + span}{step}]  d={D[0, k]:.3f}")
    ax.set_xlabel("time")
    ax.legend(fontsize="small", loc="best")
    ax.set_title(title or f"shapelets on series {index}")
    fig.tight_layout()
    return fig
