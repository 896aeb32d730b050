#!/usr/bin/env bash
# Builds perf/dev/host_part_bench.cpp against an installed llmk (arg 1: its
# prefix, e.g. `cmake --install build/openmp --prefix /tmp/llmk`; arg 2: the
# Kokkos prefix it was built with) into arg 3 (a build folder), and runs it.
set -euo pipefail
llmk=$1 kokkos=$2 build=$3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mkdir -p "$build"
cat > "$build/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(host_part_bench LANGUAGES CXX)
find_package(llmk REQUIRED)
add_executable(host_part_bench $root/perf/dev/host_part_bench.cpp)
target_link_libraries(host_part_bench PRIVATE llmk::llmk)
CMAKE
cmake -S "$build" -B "$build/b" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=$llmk;$kokkos" > /dev/null
cmake --build "$build/b" > /dev/null
OMP_NUM_THREADS=1 OMP_PROC_BIND=false "$build/b/host_part_bench"
