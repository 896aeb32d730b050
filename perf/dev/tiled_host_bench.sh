#!/usr/bin/env bash
# Builds perf/dev/tiled_host_bench.cpp against an OpenMP Kokkos (arg 1: its
# prefix) into arg 2 (an executable path), -march=native as llmk's OpenMP
# build (GCC 12 emits 512-bit FMAs there already), on Debian's OpenMP OpenBLAS.
set -euo pipefail
prefix=$1 out=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
blas=/usr/lib/x86_64-linux-gnu/openblas-openmp
g++ -O3 -std=c++17 -march=native -fopenmp -I"$root/src" -I"$prefix/include" \
  -I/usr/include/x86_64-linux-gnu/openblas-openmp "$root/perf/dev/tiled_host_bench.cpp" \
  -L"$prefix/lib" -lkokkoscore -ldl -L"$blas" -Wl,-rpath,"$blas" -lopenblas -o "$out"
