#!/usr/bin/env bash
# Set up everything needed (first run: a few minutes), build the perf driver and
# run it: by default at the seed shape (B=8, T=1024, C=768, OC=3072) on the
# backend's default execution space, printing the comparison table.
#
# usage: scripts/perf.sh [--backend openmp|cuda] [--kokkos 3.4.01|4.6.01]
#                        [llmk-perf arguments, see --help]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
llmk_parse_backend "$@"
# Leave OpenMP threads unbound: OpenBLAS's own threads (the openblas peer and
# KokkosKernels' gemm) inherit the binding of the thread that starts them, and
# bound to Kokkos' first core they ran at half speed (1.05 s against 0.54 s).
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}
llmk_setup_and_build "$BACKEND" "$KOKKOS_VERSION" llmk-perf
"$LLMK_BUILD_DIR/perf/llmk-perf" "${REST_ARGS[@]}"
