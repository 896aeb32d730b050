#!/usr/bin/env bash
# Set up everything needed (first run: a few minutes), build the perf driver
# llmk-perf and run it: by default matmul_backward at the seed shape (B=8,
# T=1024, C=768, OC=3072) on the build's default execution space, printing
# the comparison table (every row checked against float64, then timed).
#
# usage: scripts/perf.sh [--backend openmp|cuda] [--kokkos 3.4.01|4.6.01]
#                        [SUBCOMMAND] [llmk-perf options]
#   --backend   the build: openmp (default) or cuda (Kokkos::Cuda, sm_90)
#   --kokkos    the Kokkos version to build against (default 3.4.01)
#   SUBCOMMAND  matmul_backward (default), layernorm_backward, attention_backward,
#               classifier_backward, gelu_backward, encoder_backward
#   llmk-perf options, e.g.:
#     --impl NAMES|all|auto   --precision LIST|all   --B --T --C ... (the shape)
#     --repeat N  --warmup N  --budget S  --max-call S  --threads N
#     --json PATH  --import PATH  --no-check  --no-peers  --device-time
# Every option, its default and each subcommand's: docs/cli.md; after a build,
# build/<backend>/perf/llmk-perf [SUBCOMMAND] --help (with this build's
# implementations). -h, --help: this text (nothing installed or built).
set -euo pipefail
for arg in "$@"; do
  case $arg in -h|--help) sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
done
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
llmk_parse_backend "$@"
# Leave OpenMP threads unbound: OpenBLAS's own threads (the openblas peer and
# KokkosKernels' gemm) inherit the binding of the thread that starts them, and
# bound to Kokkos' first core they ran at half speed (1.05 s against 0.54 s).
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}
llmk_setup_and_build "$BACKEND" "$KOKKOS_VERSION" llmk-perf
"$LLMK_BUILD_DIR/perf/llmk-perf" "${REST_ARGS[@]}"
