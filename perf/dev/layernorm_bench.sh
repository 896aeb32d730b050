#!/usr/bin/env bash
# Builds perf/dev/layernorm_bench.cpp against a CUDA Kokkos (arg 1: its
# prefix) into arg 2 (an executable path). Run the executable on the GPU.
set -euo pipefail
prefix=$1 out=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
"$prefix/bin/nvcc_wrapper" -O3 -std=c++17 ${LLMK_NVCC_FLAGS:-} -arch=sm_90 --expt-extended-lambda --expt-relaxed-constexpr -Xcompiler -fopenmp \
  -I"$root/src" -I"$prefix/include" "$root/perf/dev/layernorm_bench.cpp" \
  -L"$prefix/lib" -lkokkoscore -ldl -lcuda -Xcompiler -fopenmp -o "$out" -Xlinker -rpath -Xlinker '$ORIGIN'
