#!/usr/bin/env bash
# Set up everything needed (first run: a few minutes), build the perf driver and
# run it: by default at the seed shape (B=8, T=1024, C=768, OC=3072) on the
# backend's default execution space, printing the comparison table.
#
# usage: scripts/perf.sh [--backend openmp|cuda] [llmk-perf arguments, see --help]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
llmk_parse_backend "$@"
# Pin OpenMP threads, one per core, as Kokkos recommends for timing.
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
llmk_setup_and_build "$BACKEND" llmk-perf
"$LLMK_BUILD_DIR/perf/llmk-perf" "${REST_ARGS[@]}"
