"""The figures of tswarp.plot, rendered headless (Agg) and looked at: the image has the
expected size, is not blank, and carries the titles, colorbars and marks it promises.
`tswarp align --plot` and `tswarp shapelets --plot` write them through the CLI.
"""

import numpy as np
import pytest

import tswarp
from tswarp.datasets import load_gunpoint

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")


def _image(fig, tmp_path, name):
    """The PNG the figure saves, as an (h, w, 4) float array; checks it is not blank."""
    import matplotlib.image as mpimg
    path = tmp_path / f"{name}.png"
    fig.savefig(path, dpi=60)
    img = mpimg.imread(path)
    w, h = fig.get_size_inches() * 60
    assert img.shape[:2] == (round(h), round(w)), img.shape
    rgb = img[:, :, :3]
    assert rgb.std() > 0.05, f"{name}: the image is (nearly) blank"
    # a figure that draws something draws some non-grey colour (series, paths, colormaps)
    assert np.abs(rgb - rgb.mean(axis=2, keepdims=True)).max() > 0.2, name
    return img


def test_warping(tmp_path, rng):
    a = np.sin(np.linspace(0, 6, 60)) + 0.1 * rng.standard_normal(60)
    b = np.sin(np.linspace(0.5, 6, 80))
    path, _ = tswarp.dtw_path(a, b)
    fig = tswarp.plot.warping(a, b, path)
    _image(fig, tmp_path, "warping")
    assert len(fig.axes) == 2
    # one connecting line per pair of the path (at most max_lines)
    lines = [p for p in fig.artists if type(p).__name__ == "ConnectionPatch"]
    assert len(lines) == len(path)
    fig = tswarp.plot.warping(a, b, path, max_lines=10)
    assert 5 <= len([p for p in fig.artists if type(p).__name__ == "ConnectionPatch"]) <= 10
    X = rng.standard_normal((2, 3, 40))  # multivariate, aeon's layout: one dim drawn
    p2, _ = tswarp.dtw_path(X[0], X[1], layout="channels_first")
    _image(tswarp.plot.warping(X[0], X[1], p2, dim=2, layout="channels_first"), tmp_path, "w3")
    with pytest.raises(ValueError, match="dim=3"):
        tswarp.plot.warping(X[0], X[1], p2, dim=3, layout="channels_first")
    with pytest.raises(ValueError, match="path has indices"):
        tswarp.plot.warping(a, b, path + 100)


def test_cost_matrix(tmp_path, rng):
    a, b = rng.standard_normal((50, 2)), rng.standard_normal((40, 2))
    for kw in ({}, {"cost": "cosine"}, {"step": "p05"}, {"radius": 3},
               {"itakura_max_slope": 2.0}, {"accumulated": False}):
        path, c = tswarp.dtw_path(a, b, accumulated=True, **{k: v for k, v in kw.items()
                                                             if k != "accumulated"})
        fig = tswarp.plot.cost_matrix(a, b, path, **kw)
        _image(fig, tmp_path, "cm")
        assert len(fig.axes) == 4  # matrix, two series, colorbar
        cbar = fig.axes[3].get_ylabel()
        title = fig._suptitle.get_text()
        if kw.get("accumulated", True):
            assert cbar == "accumulated cost D"
            # the drawn matrix is the path's: its last cell is the path's cost
            assert f"D = {c:.6g}" in title, (kw, title, c)
        else:
            assert cbar == "local cost c"
        assert kw.get("cost", "sqeuclidean") in title and kw.get("step", "symmetric1") in title
    # beyond max_cells: the local costs, said in the title
    fig = tswarp.plot.cost_matrix(a, b, path, max_cells=100)
    assert "local costs" in fig._suptitle.get_text()
    with pytest.raises(ValueError, match="cost"):
        tswarp.plot.cost_matrix(a, b, path, cost="nope")
    with pytest.raises(ValueError, match="step"):
        tswarp.plot.cost_matrix(a, b, path, step="p07")
    with pytest.raises(TypeError, match="accumulated"):
        tswarp.plot.cost_matrix(a, b, path, accumulated="yes")
    # alignment() keeps working: the local-cost image with the path
    fig = tswarp.plot.alignment(a, b, path, cost="cosine", max_pixels=20)
    assert fig.axes[3].get_ylabel() == "local cost c"


def test_segmental(tmp_path, rng):
    x = np.sin(np.linspace(0, 20, 300))
    y = np.sin(np.linspace(0, 20, 360))
    path, segs = tswarp.segmental_dtw(x, y, 6, "strict", return_segments=True)
    fig = tswarp.plot.segmental(x, y, path, segs)
    _image(fig, tmp_path, "seg")
    ax = fig.axes[0]
    assert "6 fragments" in ax.get_xlabel()
    marks = [ln for ln in ax.lines if ln.get_marker() == "o"]
    assert len(marks) == 6  # each fragment's start and end in b
    with pytest.raises(ValueError, match="segments is empty"):
        tswarp.plot.segmental(x, y, path, [])


def test_shapelets_drawn_at_the_series_scale(tmp_path):
    """A shapelet is drawn over its best match with the window's mean and std: it stays
    within the series' range (the old drawing overshot it 2-3x), labelled with its class,
    distance and threshold."""
    from tswarp.shapelets import ShapeletTransform, ShapeletTreeClassifier
    X, y = load_gunpoint("train")
    Xt, _ = load_gunpoint("test")
    clf = ShapeletTreeClassifier(min_length=20, max_length=40, length_step=10).fit(X, y)
    for model in (clf, ShapeletTransform(n_shapelets=4, min_length=20, max_length=40,
                                         length_step=10).fit(X, y)):
        for index in (0, 7):
            fig = tswarp.plot.shapelet(model, Xt, index=index)
            _image(fig, tmp_path, "shp")
            ax = fig.axes[0]
            series, *shapes = ax.lines
            lo, hi = series.get_ydata().min(), series.get_ydata().max()
            span = hi - lo
            for ln in shapes:
                v = ln.get_ydata()
                assert v.min() >= lo - 0.5 * span and v.max() <= hi + 0.5 * span
            labels = [t.get_text() for t in ax.get_legend().get_texts()]
            assert all("class " in t and "threshold" in t for t in labels[1:]), labels
    # multivariate: one panel per channel the shapelets use
    rng = np.random.default_rng(3)
    Xm = rng.standard_normal((12, 30, 2)).cumsum(axis=1)
    ym = np.repeat([0, 1], 6)
    Xm[ym == 1, 5:12, 1] += 5
    st = ShapeletTransform(n_shapelets=4, min_length=5, max_length=10).fit(Xm, ym)
    fig = tswarp.plot.shapelet(st, Xm, index=1)
    _image(fig, tmp_path, "shpm")
    assert len(fig.axes) == len({s.channel for s in st.shapelets_})


def test_cli_plot_titles(tmp_path, rng, capsys):
    from tswarp.cli import main
    a, b = rng.normal(size=(1, 80, 2)), rng.normal(size=(1, 100, 2))
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    png = tmp_path / "p.png"
    assert main(["align", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "--cost", "abs",
                 "--plot", str(png), "--out", str(tmp_path / "p.csv")]) == 0
    assert png.stat().st_size > 1000
    # the title carries the files, rows, steps and cost: rendered through the library the
    # CLI calls, checked on the figure itself
    import matplotlib.pyplot as plt
    figs = []
    orig = plt.Figure.savefig

    def keep(self, *args, **kwargs):
        figs.append(self._suptitle.get_text())
        return orig(self, *args, **kwargs)

    plt.Figure.savefig = keep
    try:
        assert main(["align", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "--cost", "abs",
                     "--plot", str(png)]) == 0
    finally:
        plt.Figure.savefig = orig
    assert figs and "a.npy" in figs[0] and "b.npy" in figs[0] and "abs cost" in figs[0] \
        and "symmetric1" in figs[0], figs
    capsys.readouterr()
    # a bad --plot is refused before any work
    assert main(["align", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"),
                 "--plot", str(tmp_path / "nope" / "x.png")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["align", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"),
                 "--plot", str(tmp_path / "x.xyz")]) == 2
    assert "expected an image file name" in capsys.readouterr().err
