#!/usr/bin/env bash
# Everything GPU in one run on a machine with an NVIDIA GPU; needs no network or registry.
#
#   tests/gpu/run.sh
#
# Environment (all optional): BUILD (build folder, default <repo>/build-gpu), ARCHS
# (CMAKE_CUDA_ARCHITECTURES, default 90-real), PYTHON (default python3), JOBS (default nproc),
# BUDGET (seconds for the whole run, default 530: each stage's time limit is cut to what is
# left), RACECHECK_SECTIONS (test_cuda sections under racecheck, default pairs,long,batch;
# "-": test_cuda not at all), RACECHECK_TESTS (the other GPU tests under racecheck, by name,
# comma-separated, e.g. test_cuda_sdtw; default all),
# OUT (where the logs go; default $BUILD/logs only), SKIP_STAGES (comma-separated stage names
# not to run, e.g. SKIP_STAGES=memcheck,racecheck; reported as "skipped", not as failures),
# ONLY_STAGES (comma-separated: run these stages only; the others are reported as skipped).
#
# The whole suite does not fit one 600-second device call: run it as these calls, in order,
# on one warm machine (its ignored build outputs, build-gpu/ and its venv, stay between
# calls, so the build stage of a later call is incremental and the python stage's venv is
# reused by the pytest stages). Timings are H200 / H100 measurements of 2026-11-27 where
# given; BUDGET keeps each call inside its limit and reports a stage cut short as failed.
#   1 core     ONLY_STAGES=versions,build,ctest-c,ctest-gpu,memcheck,python,pytest-gpu
#              TUNING=OFF BUDGET=560      build 97 s, ctest-gpu, memcheck, pytest-gpu:
#              340 s in all (H200)
#   2 race-a   ONLY_STAGES=build,racecheck RACECHECK_SECTIONS=pairs,long,batch
#              RACECHECK_TESTS=test_cuda_path,test_cuda_shapelet BUDGET=560
#   3 race-b   ONLY_STAGES=build,racecheck RACECHECK_SECTIONS=- RACECHECK_TESTS=test_cuda_sdtw
#              BUDGET=560 (racecheck of the soft-DTW tests alone needed more than 150 s)
#   4 pytest   ONLY_STAGES=pytest BUDGET=560 (the rest of tests/python, on the GPU machine)
#   5 bench    ONLY_STAGES=build,bench,bench-align,bench-sdtw,bench-shapelets BUDGET=560
# Calls 2 to 5 are needed for a release and after changes to the code they exercise; a
# change to kernels needs at least call 1 and the benchmark of what it touched.
#
# Stages; a failing stage is reported and the later ones still run:
#   versions    nvidia-smi, nvcc, cmake, compute-sanitizer, Python packages
#   build       cmake Release, TSWARP_CUDA=ON, TSWARP_CUDA_TUNING=$TUNING (default ON: the tuning shapes of
#               dev/pair_shapes.py), CMAKE_CUDA_ARCHITECTURES=$ARCHS, -j$JOBS
#   ctest-c     the C tests (ctest -LE gpu)
#   ctest-gpu   tests/gpu/test_cuda (ctest -L gpu): GPU against CPU, faults, threads; then
#               test_cuda_path (quick) with the path forward's split mode off and mixed
#   memcheck    compute-sanitizer memcheck (with leak check) over test_cuda, quick sizes
#   racecheck   compute-sanitizer racecheck over the kernel sections of test_cuda, quick
#   python      pip install . into a venv (--no-build-isolation --no-deps --no-index), built
#               in the background from the start (its time overlaps the stages above)
#   pytest-gpu  tests/python/test_gpu.py, the GPU tests of test_readme.py and test_neighbors.py,
#               and tests/python/test_gpu_family.py (the elastic family)
#   pytest      the rest of tests/python (the tests that need aeon, tslearn or dtaidistance
#               skip when those are missing)
#   bench       bench/gpu_bench.py (the issue's performance table)
#   bench-align bench/gpu_align.py (exact alignment paths: 100k and 1M x 12 against targets)
#   bench-sdtw  bench/gpu_sdtw_grad.py (soft-DTW forward + backward through tswarp.torch;
#               SDTW_SCAN=1: with --scan, the split's stripe heights)
#   bench-shapelets bench/gpu_shapelets.py (exhaustive shapelet search: GunPoint, OSULeaf)
# The summary comes last (and in $OUT/summary.txt). Exit status 1 if any stage failed.
# shellcheck disable=SC2317  # the st_* functions run through `bash -c` (exported)
set -o pipefail
set -u

START=$(date +%s)
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$SRC/build-gpu}
ARCHS=${ARCHS:-90-real}
PYTHON=${PYTHON:-python3}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
BUDGET=${BUDGET:-530}
RACECHECK_SECTIONS=${RACECHECK_SECTIONS:-pairs,long,batch}
RACECHECK_TESTS=${RACECHECK_TESTS:-}
SKIP_STAGES=${SKIP_STAGES:-}
ONLY_STAGES=${ONLY_STAGES:-}
TUNING=${TUNING:-ON} # OFF: without the long-pair kernel's tuning shapes (a shorter build)
LOGS=$BUILD/logs
VENV=$BUILD/venv
mkdir -p "$LOGS"
rm -f "$LOGS"/*.log "$LOGS"/*.rc "$LOGS"/bench.md # (pyenv stays: a later call with ONLY_STAGES reuses the venv)

# nvcc and compute-sanitizer: PATH, else the toolkit's usual places.
if ! command -v nvcc >/dev/null 2>&1; then
    for d in /usr/local/cuda/bin /usr/local/cuda-*/bin /opt/cuda/bin; do
        [ -x "$d/nvcc" ] && PATH=$d:$PATH && break
    done
fi
CUDACXX=${CUDACXX:-$(command -v nvcc || true)}
SANITIZER=$(command -v compute-sanitizer 2>/dev/null || true)
if [ -z "$SANITIZER" ]; then
    for f in "$(dirname "${CUDACXX:-/usr/local/cuda/bin/nvcc}")/compute-sanitizer" \
        /usr/local/cuda/compute-sanitizer/compute-sanitizer /usr/local/cuda*/bin/compute-sanitizer; do
        [ -x "$f" ] && SANITIZER=$f && break
    done
fi
if [ -z "$SANITIZER" ]; then
    SANITIZER=$(find /usr/local /opt -maxdepth 6 -name compute-sanitizer -type f -perm -u+x 2>/dev/null | head -n 1)
fi
SDTW_SCAN=${SDTW_SCAN:-}
export SRC BUILD ARCHS PYTHON JOBS LOGS VENV PATH CUDACXX SANITIZER RACECHECK_SECTIONS RACECHECK_TESTS TUNING SDTW_SCAN
export PYTHONUNBUFFERED=1 PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1

NAMES=()
declare -A STATUS SECS NOTE
FAILED=0

now() { date +%s; }
left() { echo $((BUDGET - ($(now) - START))); }

# record NAME RC SECONDS LIMIT: status from an exit code (124/137: the time limit)
record() {
    local name=$1 rc=$2 secs=$3 limit=$4
    NAMES+=("$name")
    SECS[$name]=$secs
    if [ "$rc" = 0 ]; then
        STATUS[$name]=ok
    elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        STATUS[$name]="TIMEOUT(${limit}s)"
        FAILED=1
    else
        STATUS[$name]="FAIL($rc)"
        FAILED=1
    fi
    printf '== %-10s %s in %ss\n' "$name" "${STATUS[$name]}" "$secs"
}

# stage NAME LIMIT FUNCTION: runs the exported function under `timeout`, logging to
# $LOGS/NAME.log, with its limit cut to the time left (20 s kept for the summary).
skipped() {
    local why=
    case ",$SKIP_STAGES," in *",$1,"*) why=SKIP_STAGES ;; esac
    if [ -n "$ONLY_STAGES" ]; then
        case ",$ONLY_STAGES," in *",$1,"*) ;; *) why=ONLY_STAGES ;; esac
    fi
    if [ -n "$why" ]; then
        NAMES+=("$1")
        STATUS[$1]=skipped
        SECS[$1]=0
        echo "== $1: skipped ($why)"
        return 0
    fi
    return 1
}

stage() {
    local name=$1 limit=$2 fn=$3 rem start rc
    skipped "$name" && return
    rem=$(($(left) - 20))
    [ "$limit" -gt "$rem" ] && limit=$rem
    if [ "$limit" -lt 10 ]; then
        NAMES+=("$name")
        STATUS[$name]="NO-TIME"
        SECS[$name]=0
        FAILED=1
        echo "== $name: skipped, no time left"
        return
    fi
    echo "== $name (limit ${limit}s)"
    start=$(now)
    timeout -k 10 "$limit" bash -c "$fn" >"$LOGS/$name.log" 2>&1
    rc=$?
    record "$name" "$rc" $(($(now) - start)) "$limit"
}

# ---- stage bodies (run in a child bash: exported) ----------------------------------------------
st_versions() {
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "host: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
    nvidia-smi || echo "nvidia-smi failed"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || true
    echo "nvcc: ${CUDACXX:-none}"
    [ -n "${CUDACXX:-}" ] && "$CUDACXX" --version
    cmake --version | head -n 1
    command -v ninja >/dev/null && echo "ninja $(ninja --version)"
    echo "compute-sanitizer: ${SANITIZER:-not found}"
    [ -n "${SANITIZER:-}" ] && "$SANITIZER" --version | tail -n 2
    "$PYTHON" - <<'EOF'
import importlib, sys
print("python", sys.version.split()[0], sys.executable)
for m in ("numpy", "torch", "cupy", "pytest", "scikit_build_core", "pip",
          "aeon", "tslearn", "dtaidistance"):
    try:
        mod = importlib.import_module(m)
        print(f"  {m} {getattr(mod, '__version__', '?')}")
    except Exception as e:
        print(f"  {m}: not importable ({type(e).__name__})")
try:
    import torch
    print("  torch.cuda:", torch.cuda.is_available(), torch.version.cuda,
          torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
except Exception as e:
    print("  torch.cuda: error", e)
EOF
}

st_build() {
    local gen=()
    command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
    cmake -S "$SRC" -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DTSWARP_CUDA=ON -DTSWARP_CUDA_TUNING="$TUNING" \
        -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" -DTSWARP_BUILD_TESTS=ON ${CUDACXX:+-DCMAKE_CUDA_COMPILER="$CUDACXX"} &&
        cmake --build "$BUILD" --parallel "$JOBS" &&
        test -x "$BUILD/tests/gpu/test_cuda"
}

st_ctest_c() {
    ctest --test-dir "$BUILD" --output-on-failure -j 4 -LE gpu --timeout 300
}

st_ctest_gpu() {
    ctest --test-dir "$BUILD" --output-on-failure -V -L gpu --timeout 400 || return 1
    # skipped (exit 77) on a GPU machine means the GPU was not seen: a failure here
    if grep -q "Skipped\|SKIP:" "$LOGS/ctest-gpu.log"; then
        echo "run.sh: test_cuda was SKIPPED on this machine (no GPU visible?)"
        return 3
    fi
    # the path forward pass's fused mode (every diagonal) and the two modes mixed
    # (src/cuda/path.cu, split_tiles): the test's grids alone run every diagonal split
    local k
    for k in 0 3; do
        echo "== test_cuda_path, TSWARP_CUDA_PATH_SPLIT=$k (quick)"
        TSWARP_TEST_QUICK=1 TSWARP_CUDA_PATH_SPLIT=$k "$BUILD/tests/gpu/test_cuda_path" || return 1
    done
}

# The other GPU test programs (tests/gpu/test_cuda_*: soft-DTW gradients, paths), quick.
other_gpu_tests() { ls "$BUILD"/tests/gpu/test_cuda_* 2>/dev/null | grep -v '\.' || true; }

st_memcheck() {
    [ -n "${SANITIZER:-}" ] || { echo "compute-sanitizer not found"; return 2; }
    local rc=0 t
    TSWARP_TEST_QUICK=1 TSWARP_GPU_TEST_SKIP=oom \
        "$SANITIZER" --tool memcheck --leak-check full --report-api-errors no \
        --error-exitcode 99 --print-limit 30 "$BUILD/tests/gpu/test_cuda" || rc=1
    for t in $(other_gpu_tests); do
        echo "== memcheck $t"
        TSWARP_TEST_QUICK=1 "$SANITIZER" --tool memcheck --leak-check full \
            --report-api-errors no --error-exitcode 99 --print-limit 30 "$t" || rc=1
    done
    return $rc
}

st_racecheck() {
    [ -n "${SANITIZER:-}" ] || { echo "compute-sanitizer not found"; return 2; }
    local rc=0 t
    if [ "$RACECHECK_SECTIONS" != "-" ]; then
        TSWARP_TEST_QUICK=1 TSWARP_GPU_TEST_ONLY="$RACECHECK_SECTIONS" \
            "$SANITIZER" --tool racecheck --racecheck-report all --report-api-errors no \
            --error-exitcode 99 --print-limit 30 "$BUILD/tests/gpu/test_cuda" || rc=1
    fi
    for t in $(other_gpu_tests); do
        [ -z "$RACECHECK_TESTS" ] || [[ ",$RACECHECK_TESTS," == *",$(basename "$t"),"* ]] ||
            continue
        echo "== racecheck $t"
        TSWARP_TEST_QUICK=1 "$SANITIZER" --tool racecheck --racecheck-report all \
            --report-api-errors no --error-exitcode 99 --print-limit 30 "$t" || rc=1
    done
    return $rc
}

# pip install into a venv that sees this python's packages (torch, cupy, numpy, pytest,
# scikit-build-core, pip). python3 may itself be a venv (the GPU image's is), whose
# --system-site-packages would reach the base interpreter, not that venv: a .pth file adds
# this python's site-packages instead. Fallback: pip --target and PYTHONPATH.
st_python() {
    local vpy="" target="" purelib
    rm -rf "$VENV" "$BUILD/pysite" "$LOGS/pyenv"
    if "$PYTHON" -m venv --without-pip --system-site-packages "$VENV"; then
        purelib=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') &&
            "$PYTHON" -c 'import site, sys
paths = site.getsitepackages() + [site.getusersitepackages()]
open(sys.argv[1], "w").write("\n".join(paths) + "\n")' "$purelib/_tswarp_parent_site.pth" &&
            "$VENV/bin/python" -c 'import pip, numpy, scikit_build_core' && vpy=$VENV/bin/python
    fi
    # (scikit-build-core's build folder under $BUILD, not the repository's build/py-*)
    local args=(--no-build-isolation --no-deps --no-index -v
        --config-settings=build-dir="$BUILD/py-build"
        --config-settings=cmake.define.TSWARP_CUDA=ON
        --config-settings=cmake.define.TSWARP_CUDA_TUNING="$TUNING"
        --config-settings=cmake.define.CMAKE_CUDA_ARCHITECTURES="$ARCHS")
    export CMAKE_BUILD_PARALLEL_LEVEL=$(((JOBS + 1) / 2))
    if [ -n "$vpy" ]; then
        echo "venv: $VENV (parent site-packages through _tswarp_parent_site.pth)"
        (cd /tmp && "$vpy" -m pip install "${args[@]}" "$SRC") || return 1
        echo "PY=$vpy" >"$LOGS/pyenv"
    else
        target=$BUILD/pysite
        echo "venv unusable: pip --target $target"
        (cd /tmp && "$PYTHON" -m pip install "${args[@]}" --target "$target" "$SRC") || return 1
        vpy=$(command -v "$PYTHON")
        printf 'PY=%s\nexport PYTHONPATH=%s\n' "$vpy" "$target" >"$LOGS/pyenv"
    fi
    # shellcheck disable=SC1091
    . "$LOGS/pyenv"
    (cd /tmp && "$PY" -c 'import tswarp, json; print(tswarp.__file__); print(json.dumps(tswarp.info(), default=str))')
}

load_py() {
    [ -f "$LOGS/pyenv" ] || { echo "no Python install (stage python failed)"; return 1; }
    # shellcheck disable=SC1091
    . "$LOGS/pyenv"
    PYTEST_EXTRA=()
    if "$PY" -c 'import pytest_timeout' 2>/dev/null; then
        PYTEST_EXTRA=(--timeout=300)
    fi
    echo "python: $PY"
}

st_pytest_gpu() {
    load_py || return 1
    [ -f "$SRC/tests/python/test_gpu.py" ] || { echo "tests/python/test_gpu.py is missing"; return 2; }
    # and the README's GPU example (tests/python/test_readme.py runs it where a GPU is), and
    # knn and search on the GPU (test_neighbors.py: *_on_the_gpu_*), DBA's batch (test_dba.py)
    cd "$SRC" && "$PY" -m pytest -q -rs -p no:cacheprovider "${PYTEST_EXTRA[@]}" \
        tests/python/test_gpu.py tests/python/test_readme.py tests/python/test_neighbors.py \
        tests/python/test_dba.py \
        -k "test_gpu or needs_a_gpu or on_the_gpu" &&
        "$PY" -m pytest -q -rs -p no:cacheprovider "${PYTEST_EXTRA[@]}" \
            tests/python/test_gpu_family.py # the elastic family, GPU against CPU
}

st_pytest() {
    load_py || return 1
    cd "$SRC" && "$PY" -m pytest -q -rs -p no:cacheprovider "${PYTEST_EXTRA[@]}" tests/python \
        --ignore=tests/python/test_gpu.py --ignore=tests/python/test_gpu_family.py
}

st_bench() {
    load_py || return 1
    cd "$SRC" && "$PY" bench/gpu_bench.py --markdown-out "$LOGS/bench.md"
}

st_bench_align() {
    load_py || return 1
    cd "$SRC" && "$PY" bench/gpu_align.py --markdown
}

st_bench_sdtw() {
    load_py || return 1
    cd "$SRC" && "$PY" bench/gpu_sdtw_grad.py --markdown-out "$LOGS/bench_sdtw.md" ${SDTW_SCAN:+--scan}
}

st_bench_shapelets() {
    load_py || return 1
    cd "$SRC" && "$PY" bench/gpu_shapelets.py --markdown-out "$LOGS/bench_shapelets.md"
}

export -f other_gpu_tests st_versions st_build st_ctest_c st_ctest_gpu st_memcheck st_racecheck st_python \
    load_py st_pytest_gpu st_pytest st_bench st_bench_align st_bench_sdtw st_bench_shapelets

# ---- the run --------------------------------------------------------------------------------
echo "tests/gpu/run.sh: $SRC -> $BUILD, archs $ARCHS, $JOBS jobs, budget ${BUDGET}s, logs $LOGS"
stage versions 60 st_versions

# The Python package builds in the background (scikit-build-core compiles the library
# again: a few nvcc processes) while the C build, the C tests and the sanitizers run.
PY_START=$(now)
PY_LIMIT=$(($(left) - 150))
[ "$PY_LIMIT" -gt 420 ] && PY_LIMIT=420
PY_PID=
if ! [[ ",$SKIP_STAGES," == *",python,"* ]] &&
    { [ -z "$ONLY_STAGES" ] || [[ ",$ONLY_STAGES," == *",python,"* ]]; }; then
    (timeout -k 10 "$PY_LIMIT" bash -c st_python >"$LOGS/python.log" 2>&1
        echo "$? $(($(date +%s) - PY_START))" >"$LOGS/python.rc") &
    PY_PID=$!
fi

stage build 300 st_build
stage ctest-c 150 st_ctest_c
stage ctest-gpu 240 st_ctest_gpu
stage memcheck 150 st_memcheck
stage racecheck 240 st_racecheck
if [ -n "$PY_PID" ]; then
    wait "$PY_PID"
    read -r PY_RC PY_SECS <"$LOGS/python.rc" 2>/dev/null || { PY_RC=1; PY_SECS=$(($(now) - PY_START)); }
    record python "$PY_RC" "$PY_SECS" "$PY_LIMIT"
else
    skipped python
fi
stage pytest-gpu 240 st_pytest_gpu
stage pytest 420 st_pytest
stage bench 150 st_bench
stage bench-align 120 st_bench_align
stage bench-sdtw 120 st_bench_sdtw
stage bench-shapelets 120 st_bench_shapelets

# ---- summary ----------------------------------------------------------------------------------
note() { NOTE[$1]=$(grep -a -E "$2" "$LOGS/$1.log" 2>/dev/null | tail -n 1 | cut -c1-110); }
note ctest-c 'tests passed|No tests were found'
note ctest-gpu '[0-9]+ passed, [0-9]+ failed|SKIPPED'
note memcheck 'ERROR SUMMARY|[0-9]+ passed, [0-9]+ failed'
note racecheck 'RACECHECK SUMMARY|ERROR SUMMARY'
note python 'Successfully installed|error:|ERROR'
note pytest-gpu '[0-9]+ (passed|failed|skipped|error)'
note pytest '[0-9]+ (passed|failed|skipped|error)'
note build 'error|Linking .*test_cuda|Built target test_cuda'
note bench '^# errors|^# tswarp has no'
note bench-shapelets '\| (PASS|MISS) \||^# tswarp has no'
if [ -f "$LOGS/bench.md" ]; then
    NOTE[bench]="targets: $(grep -c '| PASS |' "$LOGS/bench.md") PASS, $(grep -c '| MISS |' "$LOGS/bench.md") MISS ${NOTE[bench]:-}"
fi
MEMCHECK_TESTS=$(grep -a -E '^[0-9]+ passed, [0-9]+ failed' "$LOGS/memcheck.log" 2>/dev/null | tail -n 1)
[ -n "$MEMCHECK_TESTS" ] && NOTE[memcheck]="${NOTE[memcheck]:-} (test: $MEMCHECK_TESTS)"

{
    echo
    echo "==================== tests/gpu/run.sh summary ===================="
    gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
    nvcc_v=$("${CUDACXX:-nvcc}" --version 2>/dev/null | grep -o 'release [0-9.]*' | head -n 1)
    echo "machine: ${gpu:-no nvidia-smi}; $(nproc) cores; nvcc ${nvcc_v:-?}; archs $ARCHS;" \
        "$(date -u '+%Y-%m-%d %H:%M UTC'); total $(($(now) - START)) s"
    printf '%-11s %-16s %6s  %s\n' stage status seconds note
    for n in "${NAMES[@]}"; do
        printf '%-11s %-16s %6s  %s\n' "$n" "${STATUS[$n]}" "${SECS[$n]}" "${NOTE[$n]:-}"
    done
    if [ -f "$LOGS/ctest-gpu.log" ]; then
        echo "-- test_cuda --"
        grep -a -o '\[gpu\].*' "$LOGS/ctest-gpu.log" | cut -c1-150 | tail -n 40
        grep -a -E 'CHECK|GPU .* vs CPU|detail' "$LOGS/ctest-gpu.log" | head -n 12 | cut -c1-220
    fi
    for n in "${NAMES[@]}"; do
        case "${STATUS[$n]}" in
        ok | skipped) ;;
        *)
            echo "-- $n: ${STATUS[$n]}, end of $n.log --"
            [ "$n" = ctest-gpu ] && continue
            tail -n 25 "$LOGS/$n.log" 2>/dev/null | cut -c1-200 | tail -c 1800
            ;;
        esac
    done
    for n in pytest-gpu pytest; do
        [ -f "$LOGS/$n.log" ] || continue
        skips=$(grep -a -E '^SKIPPED \[[0-9]+\]' "$LOGS/$n.log" |
            sed -E 's/^SKIPPED \[([0-9]+)\] [^:]+(:[0-9]+)?: /\1\t/' |
            awk -F'\t' '{n[$2] += $1} END {for (r in n) printf "%6d  %s\n", n[r], r}' |
            sort -rn | head -n 8)
        [ -n "$skips" ] && { echo "-- $n: skipped tests by reason --"; echo "$skips" | cut -c1-160; }
    done
    if [ -f "$LOGS/bench.log" ]; then
        echo "-- bench/gpu_bench.py --"
        grep -a -v '^\s*$' "$LOGS/bench.log" | tail -n 40 | cut -c1-250
    fi
    if [ "$FAILED" = 0 ]; then
        echo "overall: OK"
    else
        echo "overall: FAILED ($(for n in "${NAMES[@]}"; do case "${STATUS[$n]}" in ok | skipped) ;; *) printf '%s ' "$n" ;; esac; done))"
    fi
} >"$LOGS/summary.txt"

if [ -n "${OUT:-}" ] && mkdir -p "$OUT" 2>/dev/null; then
    cp "$LOGS/summary.txt" "$OUT/summary.txt"
    [ -f "$LOGS/bench.md" ] && cp "$LOGS/bench.md" "$OUT/bench.md"
    [ -f "$LOGS/bench_shapelets.md" ] && cp "$LOGS/bench_shapelets.md" "$OUT/bench_shapelets.md"
    [ -f "$LOGS/ctest-gpu.log" ] && tail -c 4000000 "$LOGS/ctest-gpu.log" >"$OUT/ctest-gpu.log"
    tar -C "$LOGS" -czf "$OUT/gpu_run_logs.tar.gz" --exclude=summary.txt . 2>/dev/null
fi
cat "$LOGS/summary.txt"
exit $FAILED
