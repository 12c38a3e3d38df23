# shellcheck shell=bash
# Sourced by the A/B scripts (dev/gpu_sdtw_ab.sh, dev/gpu_path_ab.sh):
#   ab_build OLD OUT TEST
# builds the library of the older tree OLD in build-old and this tree's library and its GPU
# test TEST in build-new (TSWARP_CUDA_TUNING=OFF, sm_90), in parallel, 8 jobs each; the
# logs go to OUT. Prints each build's exit status and the seconds both took.
# (A helper of the two A/B experiments; it found nothing by itself.)
ab_build() {
    local old=$1 out=$2 test=$3 t0
    local cf=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DTSWARP_CUDA=ON -DTSWARP_CUDA_TUNING=OFF
        -DCMAKE_CUDA_ARCHITECTURES=90-real)
    t0=$(date +%s)
    (cmake -S "$old" -B build-old "${cf[@]}" -DTSWARP_BUILD_TESTS=OFF >/dev/null &&
        cmake --build build-old --target tswarp -j8 >"$out/build-old.log" 2>&1
        echo "old build rc $?") &
    cmake -S . -B build-new "${cf[@]}" -DTSWARP_BUILD_TESTS=ON >/dev/null &&
        cmake --build build-new --target tswarp "$test" -j8 >"$out/build-new.log" 2>&1
    echo "new build rc $?"
    wait
    echo "builds $(($(date +%s) - t0)) s"
}
