#!/bin/bash
# CPU figures on the GPU machine's host (call C2): PyTorch CPU and llmk OpenMP,
# GPT-2 124M backward, side by side; matmul's GEMMs alone.
set -u
H=$(cd "$(dirname "$0")" && pwd); cd /tmp; tar xJf $H/pack.tar.xz
export OMP_NUM_THREADS=16 OMP_PROC_BIND=false PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=/tmp/lib/openmp:/tmp/lib
G=/tmp/bin/llmk-gpt2-backward; BEFORE=/tmp/bin/llmk-gpt2-backward-before
gpt2() { echo "=== $*"; timeout 200 "$@" 2>&1 | grep -v "^grad\.\|^losses\|^gradient " | tail -19; }
{
for cfg in "4 64" "8 256"; do
  set -- $cfg; B=$1; T=$2; d=/tmp/g$B-$T
  echo "##### B $B T $T"
  timeout 240 python3 $H/gpt2_torch.py --config 124M --B $B --T $T --device cpu --out $d --repeat 5 --warmup 1 2>&1 | tail -6
  cp $d/times.json $OUT/torch-B$B-T$T.json 2>/dev/null
  gpt2 $G --input $d/gpt2.bin --repeats 5
  OPENBLAS_CORETYPE=SapphireRapids gpt2 $G --input $d/gpt2.bin --repeats 5
  if [ $B = 4 ]; then
    OPENBLAS_CORETYPE=SkylakeX gpt2 $G --input $d/gpt2.bin --repeats 5
    gpt2 $BEFORE --input $d/gpt2.bin --repeats 5 --impl matmul_backward=tiled
  fi
  gpt2 $G --input $d/gpt2.bin --repeats 5 --precision bf16
done
} 2>&1 | tee $OUT/gpt2.txt
for M in 256 2048; do
  OPENBLAS_CORETYPE=SapphireRapids timeout 100 /tmp/bin/llmk-perf --backend openmp --threads 16 --B 1 --T $M --C 768 --OC 3072 --impl tiled,kokkoskernels --budget 1 --json $OUT/mm-$M.json 2>&1 | tail -8
  timeout 60 /tmp/bin/llmk-perf-before --backend openmp --threads 16 --B 1 --T $M --C 768 --OC 3072 --impl tiled --budget 1 --no-peers 2>&1 | tail -4
done 2>&1 | tee $OUT/matmul.txt
