#!/bin/bash
# matmul_backward at GPT-2 124M's five products (B 8, T 256: M = 2048) on a
# 2-core development machine: onednn, kokkoskernels and tiled, fp32 and bf16
# (the files cpu-matmul-onednn-*-a/-b: two runs of this). Run from the
# repository root after an OpenMP build; $1: where the JSON files go.
set -u
out=${1:-/tmp/onednn_mm}; mkdir -p "$out"
export OMP_NUM_THREADS=2 OMP_PROC_BIND=spread OMP_PLACES=cores OPENBLAS_CORETYPE=SkylakeX
P=${LLMK_PERF:-build/openmp/perf/llmk-perf}
for s in "768 2304" "768 768" "768 3072" "3072 768" "768 50304"; do
  set -- $s; echo "=== C $1 OC $2 (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  $P --threads 2 --B 8 --T 256 --C $1 --OC $2 --impl onednn,kokkoskernels,tiled --precision fp32,bf16 \
     --budget 3 --no-peers --json "$out/mm-C$1-OC$2.json" 2>&1 | grep -A11 "^llmk-perf:"
done
