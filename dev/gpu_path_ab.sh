#!/usr/bin/env bash
# A/B timing of the CUDA alignment path (src/cuda/path.cu) on a GPU machine: the library of
# an older tree against this one's, side by side in one run (dev/gpu_path_driver.c, the
# cases alternated), after test_cuda_path (quick) on this tree with each split mode; then
# test_cuda_path in full and, quick, under compute-sanitizer memcheck (FULL_S, MEMCHECK_S:
# their time limits; SKIP_MEMCHECK=1: not at all). BIG=1 adds one 1M x 12 call a tree.
#
#   git archive <commit> | tar -x -C ab-old     # the older tree (untracked, so the device
#   OUT=<logs> bash dev/gpu_path_ab.sh ab-old  # tool's copy of the working tree has it)
#   KNOBS="VAR=value:driver args;..."            # timed on the new tree only
#
# Builds both (TSWARP_CUDA_TUNING=OFF, sm_90) in parallel, 8 jobs each (dev/ab_build.sh).
# Found with it (H100, 2026-11-23/24): one wave a launch (9.2 KB of shared memory a block
# instead of 25.1 KB) and leaner steps met the 100k x 12 cosine p05 target; each tree's path
# is checked by a hash of its cells (bench/HISTORY.md, "Exact paths: one wave a launch").
set -u
export PATH=$PATH:/usr/local/cuda/bin
OLD=${1:-ab-old}
OUT=${OUT:-build-ab}
ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT"
T0=$(date +%s)
# shellcheck source=dev/ab_build.sh
. "$(dirname "${BASH_SOURCE[0]}")/ab_build.sh"
ab_build "$OLD" "$OUT" test_cuda_path
for v in old new; do
    gcc -O2 dev/gpu_path_driver.c -Iinclude -Lbuild-$v -ltswarp \
        -Wl,-rpath,"$PWD/build-$v" -o build-$v/pd || echo "driver $v failed"
done
for k in "TSWARP_CUDA_PATH_SPLIT=1024" "TSWARP_CUDA_PATH_SPLIT=0" "TSWARP_CUDA_PATH_SPLIT=3"; do
    env "$k" TSWARP_TEST_QUICK=1 timeout 60 build-new/tests/gpu/test_cuda_path \
        >"$OUT/test_cuda_path_split${k#*=}.log" 2>&1
    echo "test_cuda_path quick $k rc $? $(tail -1 "$OUT/test_cuda_path_split${k#*=}.log")"
done
CASES=${CASES:-"100000 12 p05 cosine auto 5;100000 12 p05 cosine linear 3;100000 12 symmetric1 sqeuclidean auto 5;20000 12 p05 cosine auto 9"}
IFS=';' read -r -a cases <<<"$CASES"
IFS=';' read -r -a knobs <<<"${KNOBS:-}"
for round in $(seq "$ROUNDS"); do
    for c in "${cases[@]}"; do
        for v in old new; do
            # shellcheck disable=SC2086  # $c is the driver's arguments
            echo "round $round $v $(timeout 60 build-$v/pd $c 2>&1)"
        done
    done
    for k in "${knobs[@]}"; do
        # shellcheck disable=SC2086
        echo "round $round new ${k%%:*} $(env ${k%%:*} timeout 60 build-new/pd ${k#*:} 2>&1)"
    done
done | tee "$OUT/ab.txt"
if [ -n "${BIG:-}" ]; then
    for v in old new; do
        echo "1M $v $(timeout 100 build-$v/pd 1000000 12 p05 cosine auto 1 2>&1)"
    done | tee -a "$OUT/ab.txt"
fi
echo "timings done $(($(date +%s) - T0)) s"
timeout "${FULL_S:-100}" build-new/tests/gpu/test_cuda_path >"$OUT/test_cuda_path.log" 2>&1
echo "test_cuda_path (full) rc $? $(tail -1 "$OUT/test_cuda_path.log")"
SAN=$(command -v compute-sanitizer || find /usr/local/cuda*/bin -name compute-sanitizer 2>/dev/null | head -1)
if [ -n "$SAN" ] && [ -z "${SKIP_MEMCHECK:-}" ]; then
    TSWARP_TEST_QUICK=1 timeout "${MEMCHECK_S:-150}" "$SAN" --tool memcheck --leak-check full \
        build-new/tests/gpu/test_cuda_path >"$OUT/memcheck_path.log" 2>&1
    echo "memcheck test_cuda_path (quick) rc $? $(grep 'ERROR SUMMARY' "$OUT/memcheck_path.log")"
fi
echo "total $(($(date +%s) - T0)) s"
