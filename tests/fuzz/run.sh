#!/usr/bin/env bash
# Build the libFuzzer harnesses (clang, ASan + UBSan, CPU only) and run each for a fixed
# budget over its committed corpus (tests/fuzz/corpus/<name>, read only) plus the inputs it
# finds in this run (build-fuzz/found/<name>). A crash, leak, sanitizer report or timeout
# fails the script and leaves the input in build-fuzz/ (replay: build-fuzz/tests/fuzz/<name>
# <file>).
#
#   tests/fuzz/run.sh [SECONDS_PER_HARNESS]     default 30 (FUZZ_SECONDS)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD:-$src/build-fuzz}
seconds=${1:-${FUZZ_SECONDS:-30}}
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
cc=${FUZZ_CC:-$(command -v clang || true)}
if [ -z "$cc" ]; then
    echo "tests/fuzz/run.sh: clang not found (libFuzzer needs it): apt-get install clang" >&2
    exit 1
fi
echo "== libFuzzer build in $build ($cc)"
cmake -S "$src" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$cc" \
    -DTSWARP_CUDA=OFF -DTSWARP_SANITIZE=ON -DTSWARP_FUZZ=ON -DTSWARP_BUILD_TESTS=OFF \
    -DTSWARP_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" --parallel "${JOBS:-$(nproc 2>/dev/null || echo 2)}" --target fuzz_api fuzz_shapelet
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
rm -f "$build"/crash-* "$build"/leak-* "$build"/timeout-* "$build"/oom-*
for name in fuzz_api fuzz_shapelet; do
    found="$build/found/$name"
    mkdir -p "$found"
    echo "== $name: $seconds s over tests/fuzz/corpus/$name"
    (cd "$build" && "$build/tests/fuzz/$name" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 "$found" "$src/tests/fuzz/corpus/$name" \
        2>&1 | grep -E "^#[0-9]+ +DONE|stat::number_of_executed_units|ERROR|SUMMARY|Test unit written|runtime error" || true)
    # libFuzzer's exit status is lost in the pipe: a crash leaves crash-*/leak-*/timeout-*
    shopt -s nullglob
    bad=("$build"/crash-* "$build"/leak-* "$build"/timeout-* "$build"/oom-*)
    shopt -u nullglob
    if [ ${#bad[@]} -gt 0 ]; then
        echo "tests/fuzz/run.sh: $name found failing inputs: ${bad[*]}" >&2
        exit 1
    fi
done
echo "== fuzzing: no failures"
