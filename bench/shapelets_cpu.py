"""Shapelets on the CPU: exhaustive search speed against a straightforward C baseline, and
accuracy / fit time of the shapelet tree, the logical tree and the transform + a linear
classifier next to aeon's ShapeletTransformClassifier and RDSTClassifier.

    PYTHONPATH=<site> python bench/shapelets_cpu.py [--quick] [--datasets GunPoint,...]

Part 1 (speed): tswarp.shapelets.find_shapelet against bench/shapelet_naive.c (compiled
here with cc -O2; one thread, eq. 2 per window, O(l) per window), on GunPoint train with a
subset of lengths, both answers printed and compared; then tswarp on every length; then
every length 3..L against the baseline, one thread each (--all-lengths, default
ItalyPowerDemand; GunPoint costs the baseline several minutes), shapelet, threshold, gain
and gap compared.
"Cells" = window evaluations = sum over candidates (i, s, l) and series j of the windows u.
Part 2 (accuracy): datasets that aeon ships (load_* works offline) and Trace from tslearn's
offline cache. aeon's STC with its defaults (but for --quick) and random_state 0 ..
--stc-seeds - 1. Runs for many minutes; not part of CI.

For a machine without aeon or tslearn (the GPU machine): --save-sets FILE writes the chosen
--datasets, loaded as part 2 loads them, to one .npz (keys "<name>/X_train", "<name>/y_train",
"<name>/X_test", "<name>/y_test"; a ragged X as "<name>/X_train.values" + ".lengths"; read
with allow_pickle=False) and exits; --from-sets FILE reads them back instead of aeon/tslearn.
--device picks the device of the tswarp models (cuda, or auto with a GPU: a small warm-up
search, distance and tree fit first, so the CUDA context is not in the first fit's time),
--skip-peers leaves out aeon's models, --json-out FILE also writes the accuracy rows as JSON
(rewritten after each row):

    PYTHONPATH=<site> python bench/shapelets_cpu.py --skip-speed --datasets OSULeaf \
        --from-sets bench/out/shapelet_sets.npz --device cuda --skip-peers --json-out rows.json
"""
import argparse
import json
import os
import platform
import resource
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


def naive(X, codes, C, minl, maxl, step, cpu=False):
    """The baseline's answer and wall seconds (with cpu=True: and its CPU seconds)."""
    exe = os.path.join(tempfile.gettempdir(), "tswarp_shapelet_naive")
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(HERE, "shapelet_naive.c"), "-lm"], check=True)
    lines = [f"{len(X)} {C} {minl} {maxl} {step}"]
    for x, c in zip(X, codes):
        lines.append(f"{c} {len(x)} " + " ".join(repr(float(v)) for v in x))
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    t = time.perf_counter()
    out = subprocess.run([exe], input="\n".join(lines), capture_output=True, text=True, check=True)
    sec = time.perf_counter() - t
    csec = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - c0
    f = out.stdout.split()
    ans = (int(f[0]), int(f[1]), int(f[2]), float(f[3]), float(f[4]), float(f[5]))
    return (ans, sec, csec) if cpu else (ans, sec)


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


def speed_all_lengths(names, reps):
    """Every length 3..L (the exhaustive search of the issue's target), one thread on both
    sides, on the training sets of names; wall and CPU seconds (CPU: user time of the
    process, less sensitive to other load on a shared machine), best of reps for tswarp."""
    from tswarp.shapelets import find_shapelet

    print("\n## speed, every length 3..L, 1 thread each (time s: wall / CPU)")
    print(f"{'dataset':<18} {'implementation':<22} {'wall s':>9} {'CPU s':>9} {'Mcells/s':>9} "
          f"{'ratio':>6}  answer (series, start, length) threshold gain gap")
    for name in names:
        X, y, _, _ = load(name)
        X = np.asarray(X)
        codes = np.unique(y, return_inverse=True)[1]
        L = X.shape[1]
        n_cells = cells([L] * len(X), range(3, L + 1))
        ref, t_naive, c_naive = naive(X, codes, int(codes.max()) + 1, 3, L, 1, cpu=True)
        print(f"{name:<18} {'naive C':<22} {t_naive:>9.3f} {c_naive:>9.3f} "
              f"{n_cells / c_naive / 1e6:>9.1f} {1.0:>6.1f}  {ref[:3]} {ref[3]:.17g} "
              f"{ref[4]:.17g} {ref[5]:.17g}", flush=True)
        for jobs in (1, None):
            best = None
            for _ in range(reps):
                c0 = time.process_time()
                t = time.perf_counter()
                s = find_shapelet(X, y, min_length=3, n_jobs=jobs, device="cpu")
                sec, csec = time.perf_counter() - t, time.process_time() - c0
                best = (sec, csec) if best is None or csec < best[1] else best
            sec, csec = best
            same = ((s.series, s.start, s.length) == ref[:3] and abs(s.gain - ref[4]) < 1e-12
                    and abs(s.threshold - ref[3]) < 1e-7 and abs(s.gap - ref[5]) < 1e-7)
            label = "tswarp, 1 thread" if jobs == 1 else "tswarp, all threads"
            ratio = (c_naive / csec) if jobs == 1 else (t_naive / sec)
            print(f"{name:<18} {label:<22} {sec:>9.3f} {csec:>9.3f} "
                  f"{n_cells / (csec if jobs == 1 else sec) / 1e6:>9.1f} {ratio:>6.1f}  "
                  f"{(s.series, s.start, s.length)} {s.threshold:.17g} {s.gain:.17g} "
                  f"{s.gap:.17g} {'same' if same else 'DIFFERENT'}", flush=True)
        print(f"{'':<18} ({n_cells:.3g} window evaluations; ratio 1 thread: CPU time, "
              "all threads: wall time)")


_SETS = None  # the --from-sets file (np.load, allow_pickle=False) once opened


def _ragged(X):
    return not (isinstance(X, np.ndarray) and X.ndim in (2, 3) and X.dtype != object)


def save_sets(names, path):
    """Write the datasets as load() returns them to one .npz that needs no pickle."""
    arrays = {}
    for name in names:
        Xtr, ytr, Xte, yte = load(name)
        for part, X, y in (("train", Xtr, ytr), ("test", Xte, yte)):
            if _ragged(X):  # 1-D series, or (channels, len_i) ones joined along time
                arrays[f"{name}/X_{part}.values"] = np.concatenate(
                    [np.asarray(x, np.float64) for x in X], axis=-1)
                arrays[f"{name}/X_{part}.lengths"] = np.array([np.shape(x)[-1] for x in X],
                                                              np.int64)
            else:
                arrays[f"{name}/X_{part}"] = np.asarray(X, np.float64)
            y = np.asarray(y)
            arrays[f"{name}/y_{part}"] = y.astype(str) if y.dtype == object else y
        print(f"{name}: train {np.shape(Xtr) if not _ragged(Xtr) else len(Xtr)}, "
              f"test {np.shape(Xte) if not _ragged(Xte) else len(Xte)}, "
              f"labels {arrays[f'{name}/y_train'].dtype}")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    np.savez_compressed(path, **arrays)
    with np.load(path, allow_pickle=False) as f:  # it must read back without pickle
        for k, v in arrays.items():
            if not np.array_equal(f[k], v):
                raise RuntimeError(f"{path}: {k} did not round-trip")
    print(f"wrote {path} ({os.path.getsize(path) / 2**20:.2f} MiB, {len(arrays)} arrays)")


def _from_sets(name):
    def get(key):
        if f"{name}/{key}" in _SETS.files:
            return _SETS[f"{name}/{key}"]
        values, lengths = _SETS[f"{name}/{key}.values"], _SETS[f"{name}/{key}.lengths"]
        return np.split(values, np.cumsum(lengths)[:-1], axis=-1)

    if f"{name}/y_train" not in _SETS.files:
        raise KeyError(f"{name} is not in the --from-sets file")
    return get("X_train"), _SETS[f"{name}/y_train"], get("X_test"), _SETS[f"{name}/y_test"]


def load(name):
    if _SETS is not None:
        return _from_sets(name)
    if name == "Trace":  # tslearn ships it (tslearn/.cached_datasets/Trace.npz): offline
        from tslearn.datasets import CachedDatasets
        Xtr, ytr, Xte, yte = CachedDatasets().load_dataset("Trace")
        return Xtr[:, :, 0], ytr, Xte[:, :, 0], yte
    import aeon.datasets as ad
    f = getattr(ad, f"load_{''.join('_' + c.lower() if c.isupper() else c for c in name).lstrip('_')}", None)
    if f is None:
        f = lambda split: ad.load_classification(name, split=split)  # noqa: E731
    Xtr, ytr = f(split="train")
    Xte, yte = f(split="test")
    def squeeze(X):
        """univariate: (n, len) or a list of 1-D series; multivariate (BasicMotions): (n, c,
        len), or (JapaneseVowels) a list of (c, len_i) arrays."""
        if isinstance(X, np.ndarray):
            return X[:, 0, :] if X.shape[1] == 1 else X
        return [np.asarray(x)[0] if np.shape(x)[0] == 1 else np.asarray(x) for x in X]
    return squeeze(Xtr), ytr, squeeze(Xte), yte


def accuracy(datasets, quick, stc_seeds=1, old_transform=False, only=(), device="auto",
             peers=True, rows=None, cv=False):
    """The accuracy table; each row also given to rows.add (a JsonRows) when given. cv: the
    tswarp transforms also get a 5-fold cross-validated accuracy on the training set
    (stratified, shuffled with seed 0; the shapelets searched again in each fold), the
    figure that chose features=('distance', 'occurrence') without looking at test sets."""
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
        # series of unequal lengths (a list): L the shortest; (channels, len_i) items are
        # multivariate, as a 3-d array is
        L = Xtr.shape[-1] if isinstance(Xtr, np.ndarray) else min(np.shape(x)[-1] for x in Xtr)
        multi = np.ndim(Xtr[0]) == 2
        step = max(1, L // 12)  # about 12 lengths
        minl = max(3, L // 20)
        models = [
            ("tswarp tree", lambda: ShapeletTreeClassifier(min_length=minl, length_step=step,
                                                           device=device)),
            ("tswarp logical tree", lambda: ShapeletTreeClassifier(
                min_length=minl, length_step=step, logical=True, device=device)),
            # n_shapelets: the default ('auto': 10 per training series, at most 1000)
            ("tswarp transform+ridge", lambda: make_pipeline(
                ShapeletTransform(min_length=minl, length_step=step, device=device),
                StandardScaler(), RidgeClassifierCV(alphas=np.logspace(-3, 3, 10)))),
            # the same shapelets, their occurrences as well (features=...)
            ("tswarp transform(dist+occ)+ridge", lambda: make_pipeline(
                ShapeletTransform(min_length=minl, length_step=step, device=device,
                                  features=("distance", "occurrence")),
                StandardScaler(), RidgeClassifierCV(alphas=np.logspace(-3, 3, 10)))),
        ]
        if old_transform:  # the study's configuration before the 'auto' default
            models.append(("tswarp transform(100)+ridge", lambda: make_pipeline(
                ShapeletTransform(n_shapelets=100, min_length=minl, length_step=step,
                                  device=device),
                StandardScaler(), RidgeClassifierCV(alphas=np.logspace(-3, 3, 10)))))
        try:
            if not peers:
                raise ImportError("--skip-peers")
            from aeon.classification.shapelet_based import RDSTClassifier, ShapeletTransformClassifier
            # defaults (n_shapelet_samples=10000, rotation forest) but for --quick
            for seed in range(stc_seeds):
                models.append((f"aeon ShapeletTransformClassifier" + (f" seed {seed}" if seed else ""),
                               lambda seed=seed: ShapeletTransformClassifier(
                                   **({"n_shapelet_samples": 2000} if quick else {}),
                                   random_state=seed)))
            models.append(("aeon RDSTClassifier", lambda: RDSTClassifier(random_state=0)))
        except ImportError:
            pass
        for label, make in models:
            if only and not any(o in label for o in only):
                continue
            clf = make()
            aeon_model = label.startswith("aeon")
            if multi and "tree" in label:
                continue  # the trees take univariate series; the transform takes channels
            fx = _aeon_layout if aeon_model and not multi else (lambda X: X)
            t = time.perf_counter()
            clf.fit(fx(Xtr), ytr)
            sec = time.perf_counter() - t
            acc = float(np.mean(np.asarray(clf.predict(fx(Xte))) == np.asarray(yte)))
            cv_acc = None
            if cv and "transform" in label:
                from sklearn.model_selection import StratifiedKFold, cross_val_score
                folds = StratifiedKFold(5, shuffle=True, random_state=0)
                cv_acc = float(np.mean(cross_val_score(make(), Xtr, ytr, cv=folds)))
            print(f"{name:<18} {label:<34} {acc:>9.4f} {sec:>9.2f}"
                  + (f"   (CV on train {cv_acc:.4f})" if cv_acc is not None else ""), flush=True)
            if rows is not None:
                rows.add({"dataset": name, "method": label, "accuracy": acc, "fit_s": sec,
                          "cv_train": cv_acc,
                          "device": "cpu" if aeon_model else device,
                          "n_train": len(Xtr), "n_test": len(Xte), "length": L,
                          "tswarp_lengths": None if aeon_model else [minl, L, step]})
        print(f"{'':<18} (tswarp lengths {minl}..{L} step {step})")


def _aeon_layout(X):
    """Univariate series as aeon takes them: (n, 1, len), or for series of unequal lengths a
    list of (1, len_i) arrays."""
    if isinstance(X, np.ndarray) and X.ndim == 2:
        return X[:, None, :]
    return [np.asarray(x, dtype=np.float64)[None, :] for x in X]


class JsonRows:
    """The --json-out file, rewritten after each row so a run cut short keeps its rows."""

    def __init__(self, path, meta):
        self.path, self.meta, self.rows = path, meta, []

    def add(self, row):
        self.rows.append(row)
        self.write()

    def write(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"meta": self.meta, "rows": self.rows}, f, indent=1)
        os.replace(tmp, self.path)


def warm_up(device):
    """One small search, distance and logical-tree fit on device, so the first timed fit does
    not pay for the CUDA context and lazy kernel loading; returns its seconds."""
    from tswarp.shapelets import ShapeletTransform, ShapeletTreeClassifier, find_shapelet

    rng = np.random.default_rng(0)
    X = rng.standard_normal((8, 32))
    y = np.repeat([0, 1], 4)
    t = time.perf_counter()
    find_shapelet(X, y, min_length=3, max_length=12, device=device)
    ShapeletTreeClassifier(min_length=4, max_length=10, logical=True, device=device).fit(X, y)
    ShapeletTransform(n_shapelets=4, min_length=4, max_length=10, device=device).fit_transform(X, y)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--datasets", default="GunPoint,ItalyPowerDemand,ArrowHead,Trace")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--skip-accuracy", action="store_true")
    ap.add_argument("--all-lengths", default="ItalyPowerDemand",
                    help="datasets for the every-length speed test against the naive C "
                         "(GunPoint: several minutes of naive C); '' skips it")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--stc-seeds", type=int, default=1,
                    help="aeon STC fitted with random_state 0 .. N-1 (its variance)")
    ap.add_argument("--only", default="",
                    help="comma-separated parts of method names to run (e.g. 'aeon,tswarp tree')")
    ap.add_argument("--old-transform", action="store_true",
                    help="also the transform with n_shapelets=100 (the earlier study)")
    ap.add_argument("--save-sets", metavar="FILE",
                    help="write the --datasets (as part 2 loads them) to FILE (.npz) and exit")
    ap.add_argument("--from-sets", metavar="FILE",
                    help="load the datasets from a --save-sets FILE instead of aeon/tslearn")
    ap.add_argument("--device", default="auto",
                    help="device of the tswarp models: auto (default), cpu, cuda or cuda:N")
    ap.add_argument("--skip-peers", action="store_true",
                    help="leave out aeon's STC and RDST (a machine without aeon)")
    ap.add_argument("--json-out", metavar="FILE",
                    help="also write the accuracy rows (dataset, method, accuracy, fit_s, "
                         "device, ...) to FILE as JSON")
    ap.add_argument("--cv", action="store_true",
                    help="also 5-fold cross-validation on the training set for the tswarp "
                         "transforms (the model selection, made without the test sets)")
    a = ap.parse_args()
    if a.save_sets:
        save_sets(a.datasets.split(","), a.save_sets)
        return 0
    if a.from_sets:
        global _SETS
        _SETS = np.load(a.from_sets, allow_pickle=False)
    import tswarp
    info = tswarp.info()
    print(f"tswarp {tswarp.__version__}, {info.get('threads')} threads, SIMD {info.get('simd')}; "
          f"{os.cpu_count()} CPUs; tswarp models on device {a.device!r}"
          + (f"; GPUs {info.get('gpus')}" if info.get("gpus") else "")
          + (f"; datasets from {a.from_sets}" if a.from_sets else ""))
    if a.device.startswith("cuda") or (a.device == "auto" and info.get("cuda_devices")):
        print(f"warm-up (CUDA context, kernel loading) before the timed fits: "
              f"{warm_up(a.device):.2f} s, not counted in any fit time")
    rows = None
    if a.json_out:
        rows = JsonRows(a.json_out, {
            "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
            "host": platform.node(), "cpus": os.cpu_count(), "tswarp": tswarp.__version__,
            "tswarp_info": info, "device": a.device, "argv": sys.argv[1:],
            "datasets_from": a.from_sets or "aeon/tslearn"})
        rows.write()
    if not a.skip_speed:
        speed(a.quick)
        if a.all_lengths:
            speed_all_lengths(a.all_lengths.split(","), a.reps)
    if not a.skip_accuracy:
        accuracy(a.datasets.split(","), a.quick, a.stc_seeds, a.old_transform,
                 [o for o in a.only.split(",") if o], a.device, not a.skip_peers, rows, a.cv)


if __name__ == "__main__":
    sys.exit(main())
