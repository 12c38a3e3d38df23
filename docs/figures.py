"""The README's figures (make figures): written to docs/images/ from the shipped GunPoint and
series made here, with the library's own plot functions, so they show what users get.

    python docs/figures.py [OUT_DIR]
"""

import pathlib
import sys

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

import tswarp  # noqa: E402
from tswarp.datasets import load_gunpoint  # noqa: E402
from tswarp.shapelets import ShapeletTreeClassifier  # noqa: E402


def main(out: pathlib.Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    X, y = load_gunpoint("train")
    a, b = X[0], X[3]
    path, cost = tswarp.dtw_path(a, b)
    fig = tswarp.plot.warping(a, b, path, title=f"GunPoint 0 / 3: DTW {cost:.3f}")
    fig.savefig(out / "warping.png", dpi=70)

    path_r, _ = tswarp.dtw_path(a, b, radius=20)
    fig = tswarp.plot.cost_matrix(a, b, path_r, radius=20)
    fig.savefig(out / "cost_matrix.png", dpi=70)

    t = np.linspace(0, 24, 900)
    x = np.sin(t) + 0.3 * np.sin(3.1 * t)
    ref = np.interp(np.linspace(0, 24, 1100), t, x)
    seg_path, segs = tswarp.segmental_dtw(x, ref, 8, "strict", return_segments=True)
    fig = tswarp.plot.segmental(x, ref, seg_path, segs)
    fig.savefig(out / "segmental.png", dpi=70)

    clf = ShapeletTreeClassifier(min_length=20, max_length=40, length_step=10).fit(X, y)
    Xt, _ = load_gunpoint("test")
    fig = tswarp.plot.shapelet(clf, Xt, index=0, title="GunPoint: the tree's shapelets")
    fig.savefig(out / "shapelets.png", dpi=70)
    print(f"wrote {', '.join(sorted(p.name for p in out.glob('*.png')))} to {out}")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else
         pathlib.Path(__file__).resolve().parent / "images")
