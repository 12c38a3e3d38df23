#!/usr/bin/env bash
# A/B timing of the soft-DTW gradient kernels on a GPU machine: the library of an older tree
# against this one's, side by side in one run (dev/gpu_sdtw_ncu_driver.c on device arrays,
# the cases alternated three times), after test_cuda_sdtw on this tree.
#
#   git archive <commit> | tar -x -C ab-old     # the older tree (untracked, so the device
#   OUT=<logs> bash dev/gpu_sdtw_ab.sh ab-old  # tool's copy of the working tree has it)
#   (KNOBS, below: developer knobs timed on the new tree only)
#
# Builds both (TSWARP_CUDA_TUNING=OFF, sm_90) in parallel, 8 jobs each (dev/ab_build.sh).
# Found with it (H100, 2026-11-23): the soft-DTW gradient kernels' step and block-shape
# changes (one row a lane up to 16 warps; launch bounds per instance: 512 threads for every
# instance capped the registers and slowed B=32 N=1024 from 1.65 to 1.93 ms).
set -u
OLD=${1:-ab-old}
OUT=${OUT:-build-ab}
mkdir -p "$OUT"
# shellcheck source=dev/ab_build.sh
. "$(dirname "${BASH_SOURCE[0]}")/ab_build.sh"
ab_build "$OLD" "$OUT" test_cuda_sdtw
timeout 60 build-new/tests/gpu/test_cuda_sdtw >"$OUT/test_cuda_sdtw.log" 2>&1
echo "test_cuda_sdtw rc $?"
tail -2 "$OUT/test_cuda_sdtw.log"
for v in old new; do
    gcc -O2 dev/gpu_sdtw_ncu_driver.c -Iinclude -I/usr/local/cuda/include -Lbuild-$v -ltswarp \
        -L/usr/local/cuda/lib64 -lcudart -Wl,-rpath,"$PWD/build-$v" -o build-$v/prof ||
        echo "driver $v failed"
done
for round in 1 2 3; do
    for c in "64 512 1 30" "64 512 0 30" "16 1024 1 20" "512 256 1 30" "128 256 1 30" \
        "32 1024 1 20" "4 8192 1 3"; do
        for v in old new; do
            # shellcheck disable=SC2086  # $c is the driver's arguments
            echo "round $round $v $(timeout 20 build-$v/prof $c)"
        done
    done
    # KNOBS: "VAR=value:driver args" entries run on the new tree only, e.g.
    # KNOBS="TSWARP_SDTW_WF_RB=2:64 512 1 30;TSWARP_SDTW_WF_SPLIT=256:64 512 1 30"
    IFS=';' read -r -a knobs <<<"${KNOBS:-}"
    for k in "${knobs[@]}"; do
        # shellcheck disable=SC2086
        echo "round $round new ${k%%:*} $(env ${k%%:*} timeout 20 build-new/prof ${k#*:})"
    done
done | tee "$OUT/ab.txt"
