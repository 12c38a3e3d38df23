"""How much the transform + linear classifier's accuracy depends on the candidate lengths,
the selection and the ridge's regularisation (issue 6: ACSF1's gap to aeon's STC), and the
study's transform + linear classifier itself: --select, each dataset's settings chosen by
CV on its training set among the rows. The study's eighteen rows (bench/RESULTS.md, the
third menu; the rows come in the order of --grids, then the combinations):

    python dev/shapelets_grid_study.py --from-sets bench/out/sets.npz --device cuda \
        --grids G0,G1,G3,G4,G0~dist,G0~bin,G0~raw,G0~both --combos G0+G1+G3+G4 \
        --alphas "" --classifiers ridge,ridge-acc --cv-seeds 0,1,2 --select

For each dataset and each length grid, ShapeletTransform(features=("distance",
"occurrence")) is fitted once on the training set and once on each fold of a stratified
5-fold split of it (shuffled, --cv-seeds), and the features are kept; then every
classifier below runs on the same features:

    ridge       StandardScaler + RidgeClassifierCV(alphas=logspace(-3, 3, 10)): the study's
                (its alpha chosen by the leave-one-out squared error)
    ridge-aN    StandardScaler + RidgeClassifier(alpha=N), N from --alphas
    ridge-acc   StandardScaler + RidgeClassifierCV(alphas=logspace(-3, 3, 10),
                scoring="accuracy"): alpha chosen by the leave-one-out accuracy
    +split      the study's ridge with each shapelet's split outcome (d <= threshold, 0/1)
                added as a third block of features

Each row prints the test accuracy and, in brackets, the mean accuracy over the folds (the
figure that may choose a configuration without looking at a test set); the mean over the
datasets closes the row. --combos adds rows whose features are the grids' features side by
side (e.g. G0+G1). --per-series-cap N adds rows where each training series gives at most N
of the kept shapelets (the transform's 'auto' k of the best, a cap applied to its ranked
list of every non-overlapping candidate). --select closes the table with one more row: for
each dataset, the row above with the best mean CV accuracy (ties: the earlier row), its test
accuracy and which row it was; a choice made on the training set alone. --classifiers limits
the classifiers (e.g. ridge,ridge-acc).

--save-fits FILE keeps every fit's features (an .npz), and --load-fits FILE,.. reads them back
in place of the fits they hold, so the classifiers can be studied on a machine without a GPU.

Grids (L: the longest training series; as bench/shapelets_cpu.py, G0 is the study's):
    G0  L/20 .. L step L/12     G1  L/40 .. L step L/24
    G3  L/20 .. L/2 step L/24   G4  L/40 .. L/4 step L/48     ALL  3 .. L step 1
    R   7, 9, 11 (RDST's lengths, meant with dilations)
A grid name may end in @D1-D2-.. (the transform's dilations, e.g. G0@1-2-4) or @pow2 (1, 2,
4, .. up to L / min_length): each dilation searched over the grid's lengths that fit; and
then in ~ and options joined by '.': bin, ShapeletTransform(one_vs_rest=True), STC's binary
shapelets (each candidate judged on its series' class against the rest, k // C kept from each
class's series); dist, the distance features alone (no occurrences); raw,
ShapeletTransform(normalize=False), shapelets compared as they are (not z-normalised: RDST's
other half); both, normalize='both', the k best of the two kinds together. E.g.
G0~bin.dist, G0~raw.

    PYTHONPATH=<site> python dev/shapelets_grid_study.py --from-sets bench/out/sets.npz \
        --device cuda --grids G0,G1,G3,G4 --combos G0+G1,G0+G1+G3+G4 --cv-seeds 0,1

(the sets file from `bench/shapelets_cpu.py --save-sets FILE --datasets ...` where aeon and
tslearn are installed). Not part of CI: ACSF1 alone takes a minute per grid on an H100.

Found (2026-11-24): with the settings chosen by CV on each training set (--select), the
transform + ridge is within 2 points of aeon's ShapeletTransformClassifier or above it on
all eleven datasets (bench/RESULTS.md, "Shapelets"); one-vs-rest by default and longer
length grids did not pay (bench/HISTORY.md).
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import shapelets_cpu as sc  # noqa: E402  (load(), --from-sets)

GRIDS = {
    "G0": lambda L: (max(3, L // 20), None, max(1, L // 12)),
    "G1": lambda L: (max(3, L // 40), None, max(1, L // 24)),
    "G3": lambda L: (max(3, L // 20), L // 2, max(1, L // 24)),
    "G4": lambda L: (max(3, L // 40), max(4, L // 4), max(1, L // 48)),
    "ALL": lambda L: (3, None, 1),
    "R": lambda L: (7, 11, 2),
}


def grid_args(name, L):
    """'G0@1-2-4' -> (min_length, max_length, length_step, dilations)."""
    base, _, dil = name.partition("@")
    minl, maxl, step = GRIDS[base](L)
    if not dil:
        return minl, maxl, step, 1
    if dil == "pow2":
        ds = [2 ** e for e in range(0, 64) if 2 ** e <= L // minl]
    else:
        ds = [int(d) for d in dil.split("-")]
    if maxl is not None and maxl > L:
        maxl = L
    return minl, maxl, step, tuple(ds)


def _longest(X):
    return X.shape[-1] if isinstance(X, np.ndarray) else max(len(x) for x in X)


def _take(X, idx):
    return X[idx] if isinstance(X, np.ndarray) else [X[i] for i in idx]


def features(X, y, Xe, grid, device, cap):
    """(train features, eval features, thresholds) of one fit; cap: per-series cap or None;
    a grid name ending in ~ and options (module docstring): bin, dist."""
    from tswarp.shapelets import ShapeletTransform
    grid, _, opts = grid.partition("~")
    opts = set(opts.split(".")) - {""}
    known = {"bin", "dist", "raw", "both"}
    if opts - known or {"raw", "both"} <= opts:
        raise SystemExit(f"unknown or clashing grid options {sorted(opts)}")
    # the grid fits the longest training series: shorter series (of either set) slide
    # along the shapelets longer than them (include/tswarp.h)
    L = _longest(X)
    minl, maxl, step, dil = grid_args(grid, L)
    maxl = L if maxl is None else maxl
    k = min(10 * len(y), 1000)
    st = ShapeletTransform(n_shapelets=k if cap is None else 10**6, min_length=minl,
                           max_length=maxl, length_step=step, dilation=dil, device=device,
                           one_vs_rest="bin" in opts,
                           normalize=False if "raw" in opts else
                           "both" if "both" in opts else True,
                           features=("distance",) if "dist" in opts else
                           ("distance", "occurrence")).fit(X, y)
    if cap is not None:  # the ranked list of every non-overlapping candidate, capped
        seen, keep = {}, []
        for s in st.shapelets_:
            key = (s.series, s.channel)
            if seen.get(key, 0) < cap and len(keep) < k:
                seen[key] = seen.get(key, 0) + 1
                keep.append(s)
        st.shapelets_, st.n_shapelets_ = keep, len(keep)
    thr = np.array([s.threshold for s in st.shapelets_])
    # float32, as --save-fits keeps them: a table from saved fits is the table of the run
    return st.transform(X).astype(np.float32), st.transform(Xe).astype(np.float32), thr


def classifiers(alphas):
    from sklearn.linear_model import RidgeClassifier, RidgeClassifierCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    out = {"ridge": (lambda: make_pipeline(StandardScaler(), RidgeClassifierCV(
        alphas=np.logspace(-3, 3, 10))), False)}
    for a in alphas:
        out[f"ridge-a{a:g}"] = (lambda a=a: make_pipeline(StandardScaler(),
                                                          RidgeClassifier(alpha=a)), False)
    out["ridge-acc"] = (lambda: make_pipeline(StandardScaler(), RidgeClassifierCV(
        alphas=np.logspace(-3, 3, 10), scoring="accuracy")), False)
    out["+split"] = (out["ridge"][0], True)
    return out


def save_fits(fits, path):
    arrays = {}
    for (name, g, cap, tag), parts in fits.items():
        for i, v in enumerate(parts):
            v = np.asarray(v)
            if v.dtype == object:
                v = v.astype(str)
            arrays[f"{name}|{g}|{cap}|{tag}|{i}"] = v
    np.savez(path, **arrays)  # not compressed: it is written again after each grid
    print(f"# wrote {path} ({os.path.getsize(path) / 2**20:.1f} MiB, {len(fits)} fits)")


def load_fits(paths):
    fits = {}
    for path in paths:
        with np.load(path, allow_pickle=False) as f:
            for key in f.files:
                name, g, cap, tag, i = key.split("|")
                k = (name, g, None if cap == "None" else int(cap), tag)
                fits.setdefault(k, [None] * 5)[int(i)] = f[key]
    return {k: tuple(v) for k, v in fits.items()}


def score(parts, make, split):
    """parts: [(Ftr, Fev, thr, ytr, yev)] of one fit per grid, side by side."""
    def block(F, thr):
        k = len(thr)
        return np.hstack([F, (F[:, :k] <= thr).astype(float)]) if split else F
    A = np.hstack([block(p[0], p[2]) for p in parts])
    B = np.hstack([block(p[1], p[2]) for p in parts])
    m = make().fit(A, parts[0][3])
    return float(np.mean(m.predict(B) == np.asarray(parts[0][4])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from-sets", metavar="FILE")
    ap.add_argument("--datasets",
                    default="ACSF1,ArrowHead,ItalyPowerDemand,GunPoint,Trace,OSULeaf,BasicMotions")
    ap.add_argument("--grids", default="G0,G1,G3,G4")
    ap.add_argument("--combos", default="", help="e.g. G0+G1,G0+G1+G3+G4")
    ap.add_argument("--cv-seeds", default="0")
    ap.add_argument("--alphas", default="1,10,100")
    ap.add_argument("--per-series-cap", default="", help="e.g. 10")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--classifiers", default="", help="e.g. ridge,ridge-acc (default: all)")
    ap.add_argument("--select", action="store_true",
                    help="a last row: each dataset's row of best mean CV accuracy")
    ap.add_argument("--save-fits", metavar="FILE")
    ap.add_argument("--load-fits", default="", metavar="FILE,..")
    a = ap.parse_args()
    from sklearn.model_selection import StratifiedKFold
    warnings.filterwarnings("ignore", category=UserWarning)
    if a.from_sets:
        sc._SETS = np.load(a.from_sets, allow_pickle=False)
    names = [d for d in a.datasets.split(",") if d]
    grids = [g for g in a.grids.split(",") if g]
    combos = [tuple(c.split("+")) for c in a.combos.split(",") if c]
    seeds = [int(s) for s in a.cv_seeds.split(",") if s]
    caps = [int(c) for c in a.per_series_cap.split(",") if c]
    clfs = classifiers([float(x) for x in a.alphas.split(",") if x])
    if a.classifiers:
        clfs = {c: clfs[c] for c in a.classifiers.split(",")}
    need = sorted(set(grids) | {g for c in combos for g in c})
    # (dataset, grid, cap, split) -> (Ftr, Fev, thr, ytr, yev)
    fits = load_fits([p for p in a.load_fits.split(",") if p])
    for name in names:
        Xtr, ytr, Xte, yte = sc.load(name)
        ytr, yte = np.asarray(ytr), np.asarray(yte)
        splits = [("test", np.arange(len(ytr)), None)]
        for s in seeds:
            folds = StratifiedKFold(5, shuffle=True, random_state=s)
            splits += [(f"s{s}f{f}", tr, te) for f, (tr, te) in
                       enumerate(folds.split(np.zeros(len(ytr)), ytr))]
        for g in need:
            for cap in [None] + [c for c in caps if g in grids]:
                if all((name, g, cap, tag) in fits for tag, _, _ in splits) or (
                        g.endswith("~dist") and g[:-5] in need):  # derived below
                    continue
                t = time.perf_counter()
                for tag, tr, te in splits:
                    Xe, ye = (Xte, yte) if te is None else (_take(Xtr, te), ytr[te])
                    Ftr, Fev, thr = features(_take(Xtr, tr), ytr[tr], Xe, g, a.device, cap)
                    fits[(name, g, cap, tag)] = (Ftr, Fev, thr, ytr[tr], ye)
                print(f"# {name} {g}{'' if cap is None else f' cap {cap}'}: {len(splits)} fits "
                      f"in {time.perf_counter() - t:.1f} s", flush=True)
                if a.save_fits:  # after each grid: a run cut short keeps what it did
                    save_fits(fits, a.save_fits)
    for (name, g, cap, tag), (Ftr, Fev, thr, y1, y2) in list(fits.items()):
        # a distance-only grid is the first block of its grid's fits (the same shapelets)
        if f"{g}~dist" in need and "~" not in g:
            fits[(name, f"{g}~dist", cap, tag)] = (Ftr[:, :len(thr)], Fev[:, :len(thr)], thr,
                                                   y1, y2)
    cv_tags = [f"s{s}f{f}" for s in seeds for f in range(5)]
    rows = [((g,), None, c) for g in grids for c in clfs]
    rows += [((g,), cap, "ridge") for g in grids for cap in caps]
    rows += [(c, None, c2) for c in combos for c2 in clfs if c2 != "+split"]
    print(f"\ntest accuracy (mean over the {len(cv_tags)} CV folds of the training set)")
    print(f"{'features':<14} {'classifier':<11} " + " ".join(f"{n[:16]:>17}" for n in names)
          + "   mean test (CV)")
    table = []  # per row: [(test, cv)] per dataset
    for gs, cap, c in rows:
        make, split = clfs[c]
        cells, tests, cvs = [], [], []
        for name in names:
            test = score([fits[(name, g, cap, "test")] for g in gs], make, split)
            cv = np.mean([score([fits[(name, g, cap, t)] for g in gs], make, split)
                          for t in cv_tags]) if cv_tags else float("nan")
            tests.append(test)
            cvs.append(cv)
            cells.append(f"{test:.3f} ({cv:.3f})")
        label = "+".join(gs) + ("" if cap is None else f" cap{cap}")
        table.append((f"{label} {c}", list(zip(tests, cvs))))
        print(f"{label:<14} {c:<11} " + " ".join(f"{x:>17}" for x in cells)
              + f"   {np.mean(tests):.4f} ({np.mean(cvs):.4f})", flush=True)
    if a.select and table:
        picks = [max(range(len(table)), key=lambda r: (table[r][1][j][1], -r))
                 for j in range(len(names))]
        tests = [table[r][1][j][0] for j, r in enumerate(picks)]
        cvs = [table[r][1][j][1] for j, r in enumerate(picks)]
        print(f"{'CV choice':<26} " + " ".join(f"{f'{t:.3f} ({v:.3f})':>17}" for t, v in
                                              zip(tests, cvs))
              + f"   {np.mean(tests):.4f} ({np.mean(cvs):.4f})")
        for n, r in zip(names, picks):
            print(f"#   {n}: {table[r][0]}")


if __name__ == "__main__":
    main()
