#!/usr/bin/env bash
# Set up everything needed (first run: a few minutes), build llmk and run its
# test suite with CTest.
#
# usage: scripts/test.sh [--backend openmp|cuda] [--large] [extra ctest arguments]
#   --large  also run the tests labelled `large` (the seed shape; slow on a CPU)
# Without a GPU, the Cuda tests of a cuda build report themselves skipped.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
llmk_parse_backend "$@"
# Kokkos asks for a binding policy; unit tests run best unbound.
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}

ctest_args=(--output-on-failure -j "$LLMK_JOBS")
large=0
for a in "${REST_ARGS[@]}"; do
  case $a in
    --large) large=1 ;;
    *) ctest_args+=("$a") ;;
  esac
done
[ $large = 1 ] || ctest_args+=(-LE large)

llmk_setup_and_build "$BACKEND"
llmk_log "ctest ${ctest_args[*]}"
cd "$LLMK_BUILD_DIR" && ctest "${ctest_args[@]}"
