"""Shapelets on the CPU: exhaustive search speed against a straightforward C baseline, and
accuracy / fit time of the shapelet tree, the logical tree and the transform + a linear
classifier next to aeon's ShapeletTransformClassifier and RDSTClassifier.

    PYTHONPATH=<site> python bench/shapelets_cpu.py [--quick] [--datasets GunPoint,...]

Part 1 (speed): tswarp.shapelets.find_shapelet against bench/shapelet_naive.c (compiled
here with cc -O2; one thread, eq. 2 per window, O(l) per window), on GunPoint train with a
subset of lengths, both answers printed and compared; then tswarp on every length.
"Cells" = window evaluations = sum over candidates (i, s, l) and series j of the windows u.
Part 2 (accuracy): datasets that aeon ships (load_* works offline) and Trace from tslearn
if its cache has it. Runs for minutes; not part of CI.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def cells(lengths, cand_lengths):
    n = len(lengths)
    tot = 0
    for l in cand_lengths:
        starts = sum(max(0, L - l + 1) for L in lengths)
        tot += starts * starts if len(set(lengths)) == 1 else starts * sum(max(0, L - l + 1) for L in lengths)
    return tot


def naive(X, codes, C, minl, maxl, step):
    exe = os.path.join(tempfile.gettempdir(), "tswarp_shapelet_naive")
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(HERE, "shapelet_naive.c"), "-lm"], check=True)
    lines = [f"{len(X)} {C} {minl} {maxl} {step}"]
    for x, c in zip(X, codes):
        lines.append(f"{c} {len(x)} " + " ".join(repr(float(v)) for v in x))
    t = time.perf_counter()
    out = subprocess.run([exe], input="\n".join(lines), capture_output=True, text=True, check=True)
    sec = time.perf_counter() - t
    f = out.stdout.split()
    return (int(f[0]), int(f[1]), int(f[2]), float(f[3]), float(f[4]), float(f[5])), sec


def speed(quick):
    from tswarp.datasets import load_gunpoint
    from tswarp.shapelets import find_shapelet

    X, y = load_gunpoint("train")
    codes = np.unique(y, return_inverse=True)[1]
    minl, maxl, step = (10, 150, 35) if quick else (10, 150, 20)
    lens = list(range(minl, maxl + 1, step))
    n_cells = cells([X.shape[1]] * len(X), lens)
    print(f"## speed: GunPoint train (50 x 150), lengths {minl}..{maxl} step {step} "
          f"({len(lens)} lengths), {n_cells:.3g} window evaluations")
    print(f"{'implementation':<28} {'time s':>9} {'Mcells/s':>10} {'ratio':>7}  answer (series, start, length, gain)")
    ref, t_naive = naive(X, codes, 2, minl, maxl, step)
    print(f"{'naive C (1 thread)':<28} {t_naive:>9.3f} {n_cells / t_naive / 1e6:>10.1f} {1.0:>7.1f}  {ref[:3]} {ref[4]:.6f}")
    for jobs in (1, None):
        t = time.perf_counter()
        s = find_shapelet(X, y, min_length=minl, max_length=maxl, length_step=step, n_jobs=jobs)
        sec = time.perf_counter() - t
        same = (s.series, s.start, s.length) == ref[:3] and abs(s.gain - ref[4]) < 1e-12
        name = f"tswarp ({'1 thread' if jobs == 1 else 'all threads'})"
        print(f"{name:<28} {sec:>9.3f} {n_cells / sec / 1e6:>10.1f} {t_naive / sec:>7.1f}  "
              f"{(s.series, s.start, s.length)} {s.gain:.6f} {'same' if same else 'DIFFERENT'}")
    if not quick:
        all_l = list(range(3, 151))
        t = time.perf_counter()
        s = find_shapelet(X, y, min_length=3)
        sec = time.perf_counter() - t
        n = cells([150] * 50, all_l)
        print(f"{'tswarp, every length 3..150':<28} {sec:>9.3f} {n / sec / 1e6:>10.1f} {'':>7}  "
              f"{(s.series, s.start, s.length)} {s.gain:.6f}")


def load(name):
    if name == "Trace":
        from tslearn.datasets import UCR_UEA_datasets
        Xtr, ytr, Xte, yte = UCR_UEA_datasets().load_dataset("Trace")
        if Xtr is None:
            raise RuntimeError("tslearn has no offline copy of Trace")
        return Xtr[:, :, 0], ytr, Xte[:, :, 0], yte
    import aeon.datasets as ad
    f = getattr(ad, f"load_{''.join('_' + c.lower() if c.isupper() else c for c in name).lstrip('_')}", None)
    if f is None:
        f = lambda split: ad.load_classification(name, split=split)  # noqa: E731
    Xtr, ytr = f(split="train")
    Xte, yte = f(split="test")
    squeeze = lambda X: X[:, 0, :] if isinstance(X, np.ndarray) else [np.asarray(x)[0] for x in X]  # noqa: E731
    return squeeze(Xtr), ytr, squeeze(Xte), yte


def accuracy(datasets, quick):
    from sklearn.linear_model import RidgeClassifierCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from tswarp.shapelets import ShapeletTransform, ShapeletTreeClassifier

    print("\n## accuracy and fit time (test accuracy; fit seconds)")
    print(f"{'dataset':<18} {'method':<34} {'accuracy':>9} {'fit s':>9}")
    for name in datasets:
        try:
            Xtr, ytr, Xte, yte = load(name)
        except Exception as e:  # noqa: BLE001
            print(f"{name:<18} (not available offline: {e})")
            continue
        L = min(len(x) for x in Xtr)
        step = max(1, L // 12)  # about 12 lengths
        minl = max(3, L // 20)
        models = [
            ("tswarp tree", lambda: ShapeletTreeClassifier(min_length=minl, length_step=step)),
            ("tswarp logical tree", lambda: ShapeletTreeClassifier(min_length=minl, length_step=step, logical=True)),
            ("tswarp transform+ridge", lambda: make_pipeline(
                ShapeletTransform(n_shapelets=100, min_length=minl, length_step=step),
                StandardScaler(), RidgeClassifierCV(alphas=np.logspace(-3, 3, 10)))),
        ]
        try:
            from aeon.classification.shapelet_based import RDSTClassifier, ShapeletTransformClassifier
            models.append(("aeon ShapeletTransformClassifier", lambda: ShapeletTransformClassifier(
                n_shapelet_samples=2000 if quick else 10000, random_state=0)))
            models.append(("aeon RDSTClassifier", lambda: RDSTClassifier(random_state=0)))
        except ImportError:
            pass
        for label, make in models:
            clf = make()
            aeon_model = label.startswith("aeon")
            fx = (lambda X: np.asarray(X)[:, None, :]) if aeon_model else (lambda X: X)
            t = time.perf_counter()
            clf.fit(fx(Xtr), ytr)
            sec = time.perf_counter() - t
            acc = float(np.mean(np.asarray(clf.predict(fx(Xte))) == np.asarray(yte)))
            print(f"{name:<18} {label:<34} {acc:>9.4f} {sec:>9.2f}", flush=True)
        print(f"{'':<18} (tswarp lengths {minl}..{L} step {step})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--datasets", default="GunPoint,ItalyPowerDemand,ArrowHead,Trace")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--skip-accuracy", action="store_true")
    a = ap.parse_args()
    import tswarp
    info = tswarp.info()
    print(f"tswarp {tswarp.__version__}, {info.get('threads')} threads, SIMD {info.get('simd')}; "
          f"{os.cpu_count()} CPUs")
    if not a.skip_speed:
        speed(a.quick)
    if not a.skip_accuracy:
        accuracy(a.datasets.split(","), a.quick)


if __name__ == "__main__":
    sys.exit(main())
