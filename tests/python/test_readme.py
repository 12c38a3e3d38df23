"""Every example of README.md runs as written.

Each ```python block runs on its own, in a fresh namespace and an empty folder (so it must
load or make its data); a block whose first line says it needs a CUDA GPU runs where one is
(the GPU machine's stage, tests/gpu/run.sh) and is reported skipped elsewhere. Each ```sh
block of tswarp commands runs line by line in an empty folder with the installed tswarp on
PATH (so its files are the shipped ones or made by the block). The blocks that install or
build (make, pip) are the README's own commands, which CI runs itself.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import tswarp

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def _blocks(lang):
    text = README.read_text()
    out = []
    for m in BLOCK.finditer(text):
        if m.group(1) == lang:
            line = text[:m.start()].count("\n") + 1
            gpu = m.group(2).startswith("# needs a CUDA GPU")
            out.append(pytest.param(m.group(2), id=f"line{line}" + ("-needs_a_gpu" if gpu else "")))
    return out


def _has_gpu():
    info = tswarp.info()
    if not info.get("cuda_devices"):
        return False
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("code", _blocks("python"))
def test_python_block(code, tmp_path, monkeypatch):
    if code.startswith("# needs a CUDA GPU") and not _has_gpu():
        pytest.skip("the block needs a CUDA GPU and CuPy (run on the GPU machine)")
    for mod in ("matplotlib", "scipy", "sklearn", "torch"):
        if re.search(rf"\b{mod}\b|plot|shapelets|barycenter|learn", code) and mod != "torch":
            pytest.importorskip(mod)
    if "torch" in code:
        pytest.importorskip("torch")
    if "matplotlib" in sys.modules or "plot" in code:
        pytest.importorskip("matplotlib").use("Agg")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})


def _is_install(code):
    return all(re.match(r"(make|pip|TSWARP_CUDA=\S+ pip|CUDAARCHS=\S+ pip)\b", ln)
               for ln in code.splitlines() if ln.strip())


@pytest.mark.parametrize("code", _blocks("sh"))
def test_shell_block(code, tmp_path):
    if _is_install(code):
        pytest.skip("the README's install and build commands: CI runs `make test` itself")
    bindir = os.path.dirname(shutil.which("tswarp") or os.path.join(
        os.path.dirname(sys.executable), "tswarp"))
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + bindir +
               os.pathsep + os.environ.get("PATH", ""), MPLBACKEND="Agg")
    for line in code.splitlines():
        cmd = line.split("  #")[0].strip()
        if not cmd or cmd.startswith("#"):
            continue
        assert re.match(r"(tswarp|python) ", cmd), f"a README command that is not tswarp's: {cmd}"
        if cmd.startswith("python "):
            cmd = f"{sys.executable} {cmd[len('python '):]}"
        r = subprocess.run(cmd, shell=True, cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, f"{cmd}\nstdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-2000:]}"
