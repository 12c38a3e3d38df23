#!/usr/bin/env bash
# Install tswarp into a temporary prefix and build examples/distance_matrix.c against the
# INSTALLED library twice: with pkg-config on a plain compiler line, and with a small CMake
# project using find_package(tswarp) (tswarp::tswarp and tswarp::tswarp_static). Runs every
# binary. Nothing is written outside a temporary directory, which is removed at exit.
#
#   tests/c/install_test.sh [SOURCE_DIR [BUILD_DIR]]
# With BUILD_DIR (ctest passes its own build tree) that tree is installed; without it the
# library is configured and built from scratch in the temporary directory.
set -euo pipefail

src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
build=${2:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tswarp-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cc=${CC:-cc}
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)

step() { printf '== %s\n' "$*"; }

if [ -z "$build" ]; then
    build=$tmp/build
    step "configure and build the library in $build"
    cmake -S "$src" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DTSWARP_BUILD_TESTS=OFF -DTSWARP_BUILD_EXAMPLES=OFF >"$tmp/configure.log" ||
        { cat "$tmp/configure.log"; exit 1; }
    cmake --build "$build" --parallel 2 --target tswarp tswarp_static
fi

step "install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
libdir=$(dirname "$(find "$prefix" -name 'tswarp.pc' -path '*/pkgconfig/*' | head -n 1)")
libdir=${libdir%/pkgconfig}
for f in "$prefix/include/tswarp.h" "$libdir/pkgconfig/tswarp.pc" \
         "$libdir/cmake/tswarp/tswarpConfig.cmake" "$libdir/cmake/tswarp/tswarpConfigVersion.cmake"; do
    [ -f "$f" ] || { echo "missing after install: $f"; exit 1; }
done
ls "$libdir"/libtswarp.so* >/dev/null 2>&1 || { echo "missing: shared library in $libdir"; exit 1; }
[ -f "$libdir/libtswarp.a" ] || { echo "missing: $libdir/libtswarp.a"; exit 1; }

# Only the installed tree may be used from here on: copy the example out of the sources.
cp "$src/examples/distance_matrix.c" "$tmp/distance_matrix.c"

step "pkg-config"
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
version=$(pkg-config --modversion tswarp)
echo "pkg-config tswarp version $version"
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror "$tmp/distance_matrix.c" -o "$tmp/example_pkgconfig" \
    $(pkg-config --cflags --libs tswarp) -Wl,-rpath,"$libdir"
"$tmp/example_pkgconfig" >"$tmp/pkgconfig.out"
grep -q "^tswarp $version," "$tmp/pkgconfig.out" ||
    { echo "the installed library does not report version $version:"; cat "$tmp/pkgconfig.out"; exit 1; }
cat "$tmp/pkgconfig.out"

step "find_package(tswarp)"
mkdir -p "$tmp/consumer"
cp "$tmp/distance_matrix.c" "$tmp/consumer/"
cat >"$tmp/consumer/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(tswarp_consumer LANGUAGES C)
find_package(tswarp 0.1 REQUIRED)
add_executable(example_shared distance_matrix.c)
target_link_libraries(example_shared PRIVATE tswarp::tswarp)
add_executable(example_static distance_matrix.c)
target_link_libraries(example_static PRIVATE tswarp::tswarp_static)
EOF
cmake -S "$tmp/consumer" -B "$tmp/consumer/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$tmp/consumer.log" || { cat "$tmp/consumer.log"; exit 1; }
cmake --build "$tmp/consumer/build"
"$tmp/consumer/build/example_shared" >/dev/null
"$tmp/consumer/build/example_static" >/dev/null
# the static build must not depend on the shared library
if ldd "$tmp/consumer/build/example_static" | grep -q libtswarp; then
    echo "example_static links libtswarp.so"; exit 1
fi
step "install test passed"
