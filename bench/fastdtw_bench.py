"""FastDTW (issue 33): tswarp.fastdtw beside the fastdtw package (0.3.4) in the same run, on
the same machine, float64, random walks, its default distance (|x - y|, tswarp's
cost='abs'); the paths are compared too. The package's pure-Python module (what pip builds
in an isolated environment, requirements-dev's install) and, where present, its Cython
build (pip install cython; pip install --no-build-isolation --force-reinstall fastdtw).

    python bench/fastdtw_bench.py [--lengths 1000 10000 100000] [--radii 1 10]
"""

import argparse
import os
import platform
import time

import numpy as np

import tswarp


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lengths", type=int, nargs="*", default=[1000, 10000, 100000])
    ap.add_argument("--radii", type=int, nargs="*", default=[1, 10])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    import importlib
    # import_module: the package's __init__ shadows its modules' names with its functions
    fastdtw_py = importlib.import_module("fastdtw.fastdtw").fastdtw
    try:
        fastdtw_cy = importlib.import_module("fastdtw._fastdtw").fastdtw
    except ImportError:
        fastdtw_cy = None

    rng = np.random.default_rng(args.seed)
    print(f"tswarp {tswarp.__version__}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores; seed {args.seed}")
    print()
    print("| n = m | radius | fastdtw (Python) s | fastdtw (Cython) s | tswarp s | "
          "tswarp cells/s | vs Python | vs Cython | tswarp = Python (path, cost) | Cython cost / "
          "Python cost |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in args.lengths:
        a = rng.normal(size=n).cumsum()
        b = rng.normal(size=n).cumsum()
        for r in args.radii:
            t0 = time.perf_counter()
            cost_p, path_p = fastdtw_py(a, b, radius=r)
            tp = time.perf_counter() - t0
            tc = None
            if fastdtw_cy is not None:
                t0 = time.perf_counter()
                cost_c, path_c = fastdtw_cy(a, b, radius=r)
                tc = time.perf_counter() - t0
            best = None
            for _ in range(3):
                t0 = time.perf_counter()
                path_t, cost_t = tswarp.fastdtw(a, b, r, cost="abs")
                t = time.perf_counter() - t0
                best = t if best is None else min(best, t)
            same = (np.array_equal(np.asarray(path_p), path_t)
                    and abs(cost_p - cost_t) <= 1e-9 * abs(cost_p))
            # the Cython build of 0.3.4 returns other paths than its Python module (higher
            # costs on these walks): reported as its cost over the Python one's
            ccost = f"{cost_c / cost_p:.3f}" if tc is not None else "-"
            cells = 2.0 * n * (4 * r + 4)  # about the finest level's window
            tcs = f"{tc:.4f}" if tc is not None else "-"
            vcy = f"{tc / best:.0f}x" if tc is not None else "-"
            print(f"| {n} | {r} | {tp:.3f} | {tcs} | {best:.5f} | {cells / best:.3g} | "
                  f"{tp / best:.0f}x | {vcy} | {'yes' if same else 'NO'} | {ccost} |")


if __name__ == "__main__":
    main()
