"""The figures people know from dtaidistance, librosa and aeon (matplotlib, imported only
when a function here is called; ``pip install 'tswarp[plot]'``).

* :func:`warping`: two series, one above the other, with a line between every pair of
  points the path aligns (dtaidistance's ``plot_warping``), for any measure with a path.
* :func:`cost_matrix`: the accumulated-cost matrix D (or the local costs) with a colorbar,
  the path over it and the two series along its sides; the title names the step pattern,
  the local cost and the distance. The matrix is the one the path was computed on: the
  same local cost, step pattern and window (:func:`alignment` is its former name).
* :func:`segmental`: a segmental DTW path over the cost matrix with each fragment's rows
  and its start and end in ``b`` marked.
* :func:`shapelet`: a series with each shapelet of a model drawn where it matches best,
  at the series' scale, labelled with its distance, threshold and class.

Every function returns the matplotlib Figure (save it with ``fig.savefig``); none shows it.
Series are in tswarp's layout, (len,) or (len, d), or aeon's with
``layout='channels_first'``.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

__all__ = ["warping", "cost_matrix", "alignment", "segmental", "shapelet"]

_COSTS = ("sqeuclidean", "euclidean", "abs", "cosine")
_STEPS = ("symmetric1", "p05", "p05_query")


def _pyplot(feature):
    """matplotlib.pyplot, imported on first use (import tswarp must not import it)."""
    from ._optional import require
    return require("matplotlib.pyplot", feature)


def _as_2d(x, name, code=0):
    from ._conventions import as_series
    x = np.asarray(as_series(x, name, code))
    if x.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {x.dtype}")
    x = x.astype(np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"{name} must be one series, shaped (len,) or (len, d); got shape "
                         f"{x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return x


def _pair(a, b, layout):
    from ._conventions import check_layout
    code = check_layout(layout)
    A, B = _as_2d(a, "a", code), _as_2d(b, "b", code)
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"a has dimension {A.shape[1]} but b has dimension {B.shape[1]}")
    return A, B


def _path(path, n, m):
    P = np.asarray(path)
    if hasattr(path, "get") and not isinstance(path, np.ndarray):  # CuPy
        P = np.asarray(path.get())
    elif type(path).__module__.startswith("torch"):
        P = path.detach().cpu().numpy()
    if P.ndim != 2 or P.shape[1] != 2 or P.shape[0] == 0:
        raise ValueError(f"path must have shape (L, 2), got {P.shape}")
    if P.dtype.kind not in "iu":
        raise TypeError(f"path must hold integers, got dtype {P.dtype}")
    if P[:, 0].min() < 0 or P[:, 0].max() >= n or P[:, 1].min() < 0 or P[:, 1].max() >= m:
        raise ValueError("path has indices outside a or b")
    return P.astype(np.int64)


def _check_choice(value, name, choices):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")


def _int_at_least(value, name, low):
    from ._conventions import check_int
    return check_int(value, name, low)


# ---- local and accumulated costs -------------------------------------------------------------


def local_costs(a, b, cost="sqeuclidean"):
    """The (n, m) local costs c(i, j) of tswarp's costs (include/tswarp.h, tsw_cost)."""
    if cost == "cosine":
        na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            c = 1.0 - (a @ b.T) / np.outer(na, nb)
        za, zb = na == 0, nb == 0
        c[np.logical_or.outer(za, zb)] = 1.0
        c[np.logical_and.outer(za, zb)] = 0.0
        return c
    if cost == "abs":
        return np.abs(a[:, None, :] - b[None, :, :]).sum(-1)
    c = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    return np.sqrt(c) if cost == "euclidean" else c


def _admissible(n, m, window, radius, itakura_max_slope):
    """Boolean (n, m) mask of the window (the definitions of include/tswarp.h)."""
    from ._conventions import band
    kind, value = band(window, radius, itakura_max_slope)
    if kind == 0:
        return None
    i, j = np.arange(n)[:, None], np.arange(m)[None, :]
    if kind in (1, 2):
        r = int(value) if kind == 1 else int(np.floor(value * min(n, m)))
        return (j - i >= -r - max(0, n - m)) & (j - i <= r + max(0, m - n))
    # Itakura (tslearn's mask): column j admits rows [lo_j, hi_j)
    s = float(value)
    lo_s, hi_s = (1.0 / s) * (n / m), s * (n / m)
    jj = np.arange(m, dtype=np.float64)
    r2 = lambda x: np.rint(x * 100.0) / 100.0  # noqa: E731
    lo = np.ceil(np.maximum(r2(lo_s * jj), r2((n - 1) - hi_s * (m - 1) + hi_s * jj)))
    hi = np.floor(np.minimum(r2(hi_s * jj), r2((n - 1) - lo_s * (m - 1) + lo_s * jj)) + 1)
    mask = np.zeros((n, m), dtype=bool)
    for col in range(m):
        mask[max(int(lo[col]), 0):max(int(hi[col]), 0), col] = True
    return mask


def accumulated_costs(C, step="symmetric1", mask=None):
    """The accumulated-cost matrix D of the step pattern over local costs C (librosa's
    recurrence, include/tswarp.h "Alignment"), +inf where no path reaches or the mask
    refuses; row by row in numpy (the figure's, not the library's rounding)."""
    n, m = C.shape
    inf = np.inf
    C = np.where(mask, C, inf) if mask is not None else C
    D = np.full((n, m), inf)
    if step == "symmetric1":
        # D(i, j) = c(i, j) + min(D(i-1, j-1), D(i-1, j), D(i, j-1)): with S the running sum
        # of the row's costs, D(i, j) = S(j) + min over k <= j of (best(k) - S(k-1)), best(k)
        # the entry from row i-1 at column k; in runs of admissible cells
        prev = np.full(m, inf)
        for i in range(n):
            if i == 0:
                best = np.full(m, inf)
                best[0] = 0.0
            else:
                diag = np.concatenate([[inf], prev[:-1]])
                best = np.minimum(prev, diag)
            row = np.full(m, inf)
            ok = np.isfinite(C[i])
            j = 0
            while j < m:
                if not ok[j]:
                    j += 1
                    continue
                k = j
                while k < m and ok[k]:
                    k += 1
                S = np.cumsum(C[i, j:k])
                Sm1 = np.concatenate([[0.0], S[:-1]])
                row[j:k] = S + np.minimum.accumulate(best[j:k] - Sm1)
                j = k
            D[i] = prev = row
        return D
    w = (2.0, 3.0, 3.0) if step == "p05" else (1.0, 1.0, 2.0)
    D[0, 0] = C[0, 0]
    for i in range(1, n):
        cand = np.full(m, inf)
        cand[1:] = D[i - 1, :-1] + w[0] * C[i, 1:]
        cand[2:] = np.minimum(cand[2:], D[i - 1, :-2] + w[1] * C[i, 2:])
        if i >= 2:
            cand[1:] = np.minimum(cand[1:], D[i - 2, :-1] + w[2] * C[i, 1:])
        D[i] = cand
    return D


def _sample(n, max_pixels):
    return np.unique(np.linspace(0, n - 1, min(n, max_pixels)).round().astype(np.int64))


# ---- the figures ------------------------------------------------------------------------------


def warping(a, b, path, *, dim=0, title=None, layout=None, figsize=(9, 4.5), max_lines=2000):
    """Two series with a line between the points each path pair aligns (dtaidistance's
    ``plot_warping``).

    Parameters
    ----------
    a, b : array-like, (n,) or (n, d) and (m,) or (m, d)
    path : array-like (L, 2) of (i, j) pairs, e.g. :func:`tswarp.dtw_path`'s
    dim : int, default 0
        The dimension drawn, for multivariate series.
    max_lines : int, default 2000
        At most this many connecting lines (every k-th pair of a longer path).
    """
    plt = _pyplot("tswarp.plot.warping")
    from matplotlib.patches import ConnectionPatch

    A, B = _pair(a, b, layout)
    P = _path(path, len(A), len(B))
    dim = _int_at_least(dim, "dim", 0)
    if dim >= A.shape[1]:
        raise ValueError(f"dim={dim} is out of range: the series have {A.shape[1]} dims")
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=figsize, sharex=True)
    ax1.plot(A[:, dim], color="C0", lw=1.2)
    ax2.plot(B[:, dim], color="C1", lw=1.2)
    ax1.set_ylabel("a" + (f"[:, {dim}]" if A.shape[1] > 1 else ""))
    ax2.set_ylabel("b" + (f"[:, {dim}]" if B.shape[1] > 1 else ""))
    ax2.set_xlabel("time")
    step = max(1, -(-len(P) // _int_at_least(max_lines, "max_lines", 1)))
    for i, j in P[::step]:
        fig.add_artist(ConnectionPatch(xyA=(i, A[i, dim]), coordsA=ax1.transData,
                                       xyB=(j, B[j, dim]), coordsB=ax2.transData,
                                       color="0.6", lw=0.5, alpha=0.8))
    fig.suptitle(title or f"warping path: {len(P)} pairs, a {len(A)} points, b {len(B)} points")
    return fig


def cost_matrix(a, b, path=None, *, cost="sqeuclidean", step="symmetric1", window=None,
                radius=None, itakura_max_slope=None, accumulated=True, max_pixels=500,
                max_cells=4_000_000, title=None, layout=None, figsize=(7.5, 7)):
    """The accumulated-cost matrix with a colorbar, the path and the series on its sides.

    Parameters
    ----------
    a, b : array-like, (n,) or (n, d) and (m,) or (m, d)
    path : array-like (L, 2), optional
        Drawn over the matrix.
    cost, step, window, radius, itakura_max_slope
        The local cost, step pattern and window of the path (as :func:`tswarp.dtw_path`):
        the matrix drawn is the one the path was computed on (refused cells are blank).
    accumulated : bool, default True
        Draw D, the accumulated cost; False draws the local costs c(i, j).
    max_pixels : int, default 500
        The image samples at most this many rows and columns.
    max_cells : int, default 4,000,000
        D is computed (in numpy, row by row) only up to this many cells; beyond, the local
        costs are drawn and the title says so.

    The title names the step pattern, the local cost and the distance (D(n-1, m-1), and its
    square root for the sqeuclidean cost: :func:`tswarp.dtw`'s value).
    """
    plt = _pyplot("tswarp.plot.cost_matrix")
    from ._conventions import check_bool

    _check_choice(cost, "cost", _COSTS)
    _check_choice(step, "step", _STEPS)
    accumulated = check_bool(accumulated, "accumulated")
    max_pixels = _int_at_least(max_pixels, "max_pixels", 2)
    max_cells = _int_at_least(max_cells, "max_cells", 1)
    A, B = _pair(a, b, layout)
    n, m = len(A), len(B)
    P = None if path is None else _path(path, n, m)
    mask = _admissible(n, m, window, radius, itakura_max_slope)
    full = n * m <= max_cells
    if full:
        C = local_costs(A, B, cost)
        M = accumulated_costs(C, step, mask) if accumulated else (
            np.where(mask, C, np.nan) if mask is not None else C)
        ri, cj = _sample(n, max_pixels), _sample(m, max_pixels)
        img = M[np.ix_(ri, cj)]
    else:
        ri, cj = _sample(n, max_pixels), _sample(m, max_pixels)
        img = local_costs(A[ri], B[cj], cost)
        if mask is not None:
            img = np.where(mask[np.ix_(ri, cj)], img, np.nan)
    img = np.where(np.isfinite(img), img, np.nan)
    what = "accumulated cost D" if (accumulated and full) else "local cost c"

    fig = plt.figure(figsize=figsize)
    grid = fig.add_gridspec(2, 3, width_ratios=(1, 4, 0.18), height_ratios=(1, 4),
                            wspace=0.06, hspace=0.06)
    ax = fig.add_subplot(grid[1, 1])
    ax_top = fig.add_subplot(grid[0, 1], sharex=ax)
    ax_left = fig.add_subplot(grid[1, 0], sharey=ax)
    cax = fig.add_subplot(grid[1, 2])
    im = ax.imshow(img, origin="lower", aspect="auto", cmap="viridis", interpolation="nearest",
                   extent=(cj[0] - 0.5, cj[-1] + 0.5, ri[0] - 0.5, ri[-1] + 0.5))
    fig.colorbar(im, cax=cax, label=what)
    if P is not None:
        ax.plot(P[:, 1], P[:, 0], color="w", lw=1.3)
    ax.set_xlabel("b index")
    ax.tick_params(labelleft=False)
    ax_top.plot(np.arange(m), B, lw=0.8)
    ax_top.tick_params(labelbottom=False)
    ax_top.set_ylabel("b")
    ax_left.plot(A, np.arange(n), lw=0.8)
    ax_left.invert_xaxis()
    ax_left.set_ylabel("a index")
    if title is None:
        title = f"DTW, {step} steps, {cost} cost"
        if full and accumulated and np.isfinite(M[-1, -1]):
            end = float(M[-1, -1])
            title += (f": D = {end:.6g}, distance {np.sqrt(end):.6g}" if cost == "sqeuclidean"
                      else f": D = {end:.6g}")
        if not full:
            title += f" (local costs: {n * m:,} cells > max_cells)"
    fig.suptitle(title)
    return fig


def alignment(a, b, path, *, cost="sqeuclidean", max_pixels=500, title=None, layout=None):
    """A path over the local-cost image with the series on its sides (the figure of
    ``tswarp align --plot`` before :func:`cost_matrix`, which it now draws with
    ``accumulated=False``)."""
    return cost_matrix(a, b, path, cost=cost, accumulated=False, max_pixels=max_pixels,
                       title=title, layout=layout)


def segmental(a, b, path, segments, *, cost="sqeuclidean", step="p05_query", max_pixels=500,
              title=None, layout=None):
    """A segmental DTW path (:func:`tswarp.segmental_dtw` with ``return_segments=True``)
    over the local costs, each fragment's rows shaded in turn and its start and end in b
    marked."""
    fig = cost_matrix(a, b, None, cost=cost, step=step, accumulated=False,
                      max_pixels=max_pixels, title=title, layout=layout)
    ax = fig.axes[0]
    A, B = _pair(a, b, layout)
    P = _path(path, len(A), len(B))
    segs = list(segments)
    if not segs:
        raise ValueError("segments is empty")
    for f, s in enumerate(segs):
        rows = s.path[:, 0] if getattr(s, "path", None) is not None else None
        lo = int(rows.min()) if rows is not None and len(rows) else None
        hi = int(rows.max()) if rows is not None and len(rows) else None
        if lo is not None:
            ax.axhspan(lo - 0.5, hi + 0.5, color="w" if f % 2 else "k", alpha=0.08, lw=0)
            ax.axhline(lo - 0.5, color="w", lw=0.6, ls=":")
            ax.plot([s.start, s.end], [lo, hi], "o", color="C3", ms=3.5)
    ax.plot(P[:, 1], P[:, 0], ".", color="w", ms=1.2)
    ax.set_xlabel(f"b index ({len(segs)} fragments: boundaries dotted, starts and ends in "
                  "b marked)")
    return fig


def shapelet(model, X, *, index=0, max_shapelets=8, title=None, layout=None):
    """Draw series X[index] and each shapelet of a fitted model where it matches best.

    model: a fitted ``tswarp.shapelets.ShapeletTreeClassifier`` (the shapelets of its nodes,
    root first), ``ShapeletTransform`` (best first), a ``Shapelet`` or a list of them. Each
    shapelet is drawn at the series' scale over its best-matching window: a z-normalised
    shapelet (what the distance compares is its shape) spans that window's range, one that
    is not normalised is drawn as it is. Its label gives where it comes from,
    its class (the label of the series it was taken from, when the model knows it), its
    distance to this series and the threshold of its split (``d <= threshold``: the series
    is on the shapelet's side). Multivariate shapelets are drawn on their own channel.
    Returns the matplotlib Figure.
    """
    plt = _pyplot("tswarp.plot.shapelet")

    from ._conventions import check_layout
    from .shapelets import Shapelet, _channels, _as_series, shapelet_distances

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
    max_shapelets = _int_at_least(max_shapelets, "max_shapelets", 1)
    shapes = shapes[:max_shapelets]
    code = check_layout(layout)
    chans, parts = _channels(X, code)
    series = [_as_series(p, "X") for p in parts]
    index = _int_at_least(index, "index", 0)
    if index >= len(series[0]):
        raise ValueError(f"index {index} is out of range: X holds {len(series[0])} series")
    n_ch = len(series)
    used = sorted({getattr(s, "channel", 0) for s in shapes})
    if max(used) >= n_ch:
        raise ValueError(f"a shapelet of channel {max(used)} but X has {n_ch} channel(s)")
    fig, axes = plt.subplots(len(used), 1, figsize=(9, 3.2 * len(used)), squeeze=False,
                             sharex=True)
    for row, c in enumerate(used):
        ax = axes[row, 0]
        x = series[c].series(index)
        ax.plot(np.arange(len(x)), x, color="0.3", lw=1.0,
                label=f"X[{index}]" + (f" channel {c}" if n_ch > 1 else ""))
        mine = [s for s in shapes if getattr(s, "channel", 0) == c]
        dil = [getattr(s, "dilation", 1) for s in mine]
        norm = [getattr(s, "normalized", True) for s in mine]
        D, P = shapelet_distances([s.values for s in mine], [x], return_positions=True,
                                  dilations=dil, normalize=norm)
        for k, s in enumerate(mine):
            u, n, d = int(P[0, k]), len(s.values), dil[k]
            span = (n - 1) * d + 1
            # the shapelet's points on the series' time axis; u < 0: the series is shorter
            # and lies along the shapelet, which then overhangs it (the overlap matched)
            at = np.arange(u, u + span, d)
            inside = (at >= 0) & (at < len(x))
            v = np.asarray(s.values, dtype=np.float64)
            w = x[at[inside]]
            if not norm[k]:
                shape = v
            else:
                # the compared part (the whole shapelet, or its overlap with a shorter
                # series) mapped onto the matched window's range: the series' scale (a
                # z-score's extremes times the window's std would overshoot the series
                # wherever the two shapes differ)
                vi = v[inside]
                vr, wr = np.ptp(vi), np.ptp(w)
                shape = (v - vi.min()) / vr * wr + w.min() if vr > 0 else \
                    np.full(n, w.mean())
            lab = getattr(s, "label", None)
            cls = f", class {lab!r}" if lab is not None else ""
            step = f":{d}" if d > 1 else ""
            side = "<=" if D[0, k] <= s.threshold else ">"
            ax.plot(at, shape, lw=2.0, marker="." if d > 1 else None,
                    label=f"X[{s.series}][{s.start}:{s.start + span}{step}]{cls}: "
                          f"d={D[0, k]:.3f} {side} threshold {s.threshold:.3f}")
        ax.legend(fontsize="small", loc="best")
        ax.set_ylabel("value")
    axes[-1, 0].set_xlabel("time")
    fig.suptitle(title or f"shapelets on series {index}")
    fig.tight_layout()
    return fig
