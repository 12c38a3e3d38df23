"""Shared fixtures of the tswarp Python tests.

Random inputs: every test that draws data takes the `rng` fixture, a generator seeded
afresh from os.urandom on every run, so that each CI run explores new inputs. The seed is
an attribute of the generator (`rng.seed`, quoted in assertion messages) and is attached
to the report of any failing test; TSWARP_TEST_SEED=<seed> replays that run.

The tests must exercise the extension that `pip install .` built, never the source tree
python/tswarp (which has no compiled module): the session fixture below checks that.
"""

import os
import pathlib

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

_SEED_KEY = pytest.StashKey[int]()


class SeededGenerator(np.random.Generator):
    """numpy Generator that remembers its seed, so messages can quote it."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.seed = seed


def _fresh_seed():
    env = os.environ.get("TSWARP_TEST_SEED")
    if env:
        return int(env)
    return int.from_bytes(os.urandom(8), "little")


@pytest.fixture
def rng(request):
    seed = _fresh_seed()
    request.node.stash[_SEED_KEY] = seed
    # junit-xml and --report-log keep it too, for failures seen only in CI artifacts
    request.node.user_properties.append(("rng_seed", seed))
    return SeededGenerator(seed)


@pytest.hookimpl(hookwrapper=True)  # old-style wrapper: works on pytest 7 as well
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    seed = item.stash.get(_SEED_KEY, None)
    if seed is not None and report.failed:
        report.sections.append(
            (
                "tswarp random seed",
                f"seed = {seed}\nreplay: TSWARP_TEST_SEED={seed} python -m pytest '{item.nodeid}'",
            )
        )


@pytest.fixture(scope="session", autouse=True)
def installed_tswarp():
    """The tswarp under test: the installed package with its compiled extension."""
    import tswarp

    path = pathlib.Path(tswarp.__file__).resolve()
    source_dir = REPO / "python" / "tswarp"
    assert source_dir not in path.parents, (
        f"tests imported the source tree {path}; install the package "
        "(pip install --no-build-isolation --no-deps .) and run from the repository root"
    )
    import tswarp._tswarp  # noqa: F401  (the compiled module must load)

    return tswarp


def outputs_by_simd_level(code, caps):
    """Run `code` (which prints tswarp.info()['simd'], a space, then its results) in a fresh
    process for each TSWARP_SIMD cap ("" for none: the CPU's own level); returns
    {level: the results printed}."""
    import subprocess
    import sys
    outs = {}
    for cap in caps:
        env = dict(os.environ)
        env.pop("TSWARP_SIMD", None)
        if cap:
            env["TSWARP_SIMD"] = cap
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, check=True)
        level, rest = r.stdout.split(" ", 1)
        outs[level] = rest
    return outs


def peer(module_name):
    """Import a reference library or skip the test that needs it, saying which one."""
    return pytest.importorskip(module_name, reason=f"peer library {module_name} not installed")


@pytest.fixture(scope="session")
def tslearn_metrics():
    return peer("tslearn.metrics")


@pytest.fixture(scope="session")
def aeon_distances():
    return peer("aeon.distances")


@pytest.fixture(scope="session")
def dtaidistance():
    return peer("dtaidistance")


class _ChannelsLast:
    """tswarp with layout='channels_last' given to every call that takes it (unless the
    call gives its own). The value tests draw random series in tswarp's layout, some of
    them shorter than their dimension, which the default layout check would refuse as
    possibly aeon's: these tests are about values, tests/python/test_layout.py about the
    layout."""

    _TAKES = frozenset({"dtw", "twed", "soft_dtw", "distance", "cdist", "pdist", "paired",
                        "dtw_path", "subsequence_dtw", "segmental_dtw", "soft_dtw_grad",
                        "soft_dtw_barycenter"})

    _ALIGN = frozenset({"dtw_path", "subsequence_dtw", "segmental_dtw"})

    def __init__(self, module, accumulated):
        self._module = module
        self._accumulated = accumulated

    def __getattr__(self, name):
        obj = getattr(self._module, name)
        if name not in self._TAKES:
            return obj

        def call(*args, **kwargs):
            kwargs.setdefault("layout", "channels_last")
            if self._accumulated and name in self._ALIGN:
                kwargs.setdefault("accumulated", True)
            return obj(*args, **kwargs)

        call.__name__ = name
        return call


def channels_last(module, accumulated=False):
    """See _ChannelsLast. accumulated=True: the alignment functions also report accumulated
    costs D(n-1, m-1) (librosa's), what the alignment tests compare with their brute force;
    tests/python/test_layout.py checks the default (dtw()'s rule)."""
    return _ChannelsLast(module, accumulated)


def _default_sigint():
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def popen_interruptible(args, **kwargs):
    """subprocess.Popen for a child that the test interrupts with SIGINT.

    A shell that starts a job in the background (`make test &`, some CI runners) makes it
    ignore SIGINT, and children inherit that: Python would then never raise
    KeyboardInterrupt. The child gets the default disposition back, so its interpreter
    installs its Ctrl-C handler as it does in a terminal.
    """
    import subprocess

    return subprocess.Popen(args, preexec_fn=_default_sigint, **kwargs)


def unit_rows(x, dtype):
    """The cosine cost's inputs as the library makes them (src/cosine.c): each point divided
    by its largest |component|, then by the root of its sum of squares, in float64, then
    narrowed to dtype; zero points stay zero. The brute forces compute the cosine cost of
    these, so that they match the kernels bit for bit."""
    x = np.asarray(x, dtype)
    x = x.reshape(len(x), -1).astype(np.float64)
    mx = np.abs(x).max(axis=1) if x.shape[1] else np.zeros(len(x))
    out = np.zeros_like(x)
    nz = mx > 0
    w = x[nz] / mx[nz, None]
    s = np.zeros(w.shape[0])
    for k in range(w.shape[1]):  # summed in order, as the C loop
        s += w[:, k] * w[:, k]
    inv = 1.0 / np.sqrt(s)
    out[nz] = x[nz] / mx[nz, None] * inv[:, None]
    return out.astype(dtype)
