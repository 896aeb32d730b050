#!/usr/bin/env bash
# Builds perf/dev/tiled_host_bench.cpp against an OpenMP Kokkos (arg 1: its
# prefix) into arg 2 (an executable path) and arg 2 + "-zmm" (the same with
# GCC preferring 512-bit vectors: -march=native alone keeps 256 on the
# AVX-512 CPUs GCC 12 knows). Debian's OpenMP OpenBLAS, as llmk's build.
set -euo pipefail
prefix=$1 out=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
blas=/usr/lib/x86_64-linux-gnu/openblas-openmp
build() {
  g++ -O3 -std=c++17 -march=native -fopenmp "$@" -I"$root/src" -I"$prefix/include" \
    -I/usr/include/x86_64-linux-gnu/openblas-openmp "$root/perf/dev/tiled_host_bench.cpp" \
    -L"$prefix/lib" -lkokkoscore -ldl -L"$blas" -Wl,-rpath,"$blas" -lopenblas
}
build -o "$out" &
build -mprefer-vector-width=512 -o "$out-zmm"
wait
