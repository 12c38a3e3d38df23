#!/usr/bin/env bash
# The C tests under AddressSanitizer + UndefinedBehaviorSanitizer, then under valgrind.
#
#   tests/c/sanitize.sh [BUILD_DIR [SANITIZE_DIR]]
#   BUILD_DIR     a normal (uninstrumented) build for valgrind; default build/, configured
#                 and built here if its test programs are missing
#   SANITIZE_DIR  the -DTSWARP_SANITIZE=ON build; default build-sanitize/
# Valgrind runs with TSWARP_TEST_QUICK=1 (smaller random sizes). Only definite and
# indirect leaks are errors: libgomp keeps its thread pool and per-thread data alive until
# exit ("still reachable" / "possibly lost"), which is not a leak of ours.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
sanitize=${2:-$src/build-sanitize}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)

step() { printf '== %s\n' "$*"; }

step "ASan + UBSan build in $sanitize"
# RelWithDebInfo: optimised like the real library, with line numbers in reports.
# Without the CUDA backend: ASan's shadow memory and the CUDA runtime do not mix, and the
# CUDA host layer is checked on a GPU machine (compute-sanitizer, tests/gpu/run.sh); the
# valgrind run below uses the normal build, CUDA backend included.
cmake -S "$src" -B "$sanitize" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTSWARP_SANITIZE=ON -DTSWARP_BUILD_TESTS=ON -DTSWARP_CUDA=OFF >/dev/null
cmake --build "$sanitize" --parallel "$jobs"
step "ctest under ASan + UBSan"
# detect_leaks: LeakSanitizer checks every test; halt_on_error keeps failures loud.
failed=0
TSWARP_TEST_SANITIZE=1 \
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    ctest --test-dir "$sanitize" --output-on-failure -j "$jobs" -E '^install$' || failed=1

if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind not found: skipping the valgrind run" >&2
    exit 1
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
    step "configure and build $build for valgrind"
    cmake -S "$src" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DTSWARP_BUILD_TESTS=ON >/dev/null
fi
cmake --build "$build" --parallel "$jobs" >/dev/null
tests=()
for t in "$build"/tests/c/test_*; do
    [ -f "$t" ] && [ -x "$t" ] && tests+=("$t")
done

step "valgrind (memcheck) over ${#tests[@]} C test programs"
for t in "${tests[@]}"; do
    name=$(basename "$t")
    start=$(date +%s)
    # --vex-guest-max-insns=25 (default 50): shorter translation blocks, because the
    # unrolled AVX2 kernels otherwise exhaust VEX's spill slots ("N_SPILL64S is too low").
    if TSWARP_TEST_QUICK=1 valgrind --quiet --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
        --track-origins=yes --vex-guest-max-insns=25 "$t" >"$t.valgrind.log" 2>&1; then
        echo "valgrind $name: ok ($(tail -n 1 "$t.valgrind.log"), $(($(date +%s) - start)) s)"
    else
        echo "valgrind $name: FAILED (log $t.valgrind.log)"
        tail -n 40 "$t.valgrind.log"
        failed=1
    fi
done
[ "$failed" = 0 ] && step "sanitizers and valgrind: no errors" || step "sanitizers or valgrind: FAILED"
exit $failed
