#!/bin/bash
# CPU figures on the GPU machine's host (call C3): PyTorch CPU and llmk OpenMP
# (OpenBLAS on OpenMP, host fast math), GPT-2 124M backward side by side.
set -u
H=$(cd "$(dirname "$0")" && pwd); cd /tmp; tar xJf $H/pack.tar.xz
export OMP_NUM_THREADS=16 OMP_PROC_BIND=false PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=/tmp/lib/openmp:/tmp/lib
G=/tmp/bin/llmk-gpt2-backward
gpt2() { echo "=== $*"; timeout 150 "$@" 2>&1 | grep -v "^grad\.\|^losses\|^gradient \|^time (\|^step (" ; }
{
for cfg in "4 64" "8 256"; do
  set -- $cfg; B=$1; T=$2; d=/tmp/g$B-$T
  echo "##### B $B T $T"
  timeout 200 python3 $H/gpt2_torch.py --config 124M --B $B --T $T --device cpu --out $d --repeat 5 --warmup 1 2>&1 | tail -6
  cp $d/times.json $OUT/torch-B$B-T$T.json 2>/dev/null
  gpt2 $G --input $d/gpt2.bin --repeats 5
  OPENBLAS_CORETYPE=SkylakeX gpt2 $G --input $d/gpt2.bin --repeats 5
  OPENBLAS_CORETYPE=SkylakeX gpt2 $G --input $d/gpt2.bin --repeats 5 --precision bf16
done
} 2>&1 | tee $OUT/gpt2.txt
{
OPENBLAS_CORETYPE=SkylakeX timeout 60 /tmp/bin/llmk-perf gelu_backward --backend openmp --threads 16 --B 8 --T 256 --C 3072 --budget 1 --json $OUT/gelu.json
OPENBLAS_CORETYPE=SkylakeX timeout 60 /tmp/bin/llmk-perf classifier_backward --backend openmp --threads 16 --B 8 --T 256 --budget 1 --json $OUT/classifier.json
} 2>&1 | tee $OUT/ops.txt
