#!/bin/bash
# CPU figures on the GPU machine's host (call C4): GPT-2 124M's backward,
# PyTorch CPU and llmk OpenMP side by side (llmk with vectorized host element
# loops and register-blocked host flash attention), and binding with one pool.
set -u
H=$(cd "$(dirname "$0")" && pwd); cd /tmp; tar xJf $H/pack.tar.xz
export OMP_NUM_THREADS=16 OMP_PROC_BIND=false PYTHONUNBUFFERED=1 OPENBLAS_CORETYPE=SkylakeX
export LD_LIBRARY_PATH=/tmp/lib/openmp:/tmp/lib
G=/tmp/bin/llmk-gpt2-backward
gpt2() { echo "=== $*"; timeout 150 "$@" 2>&1 | grep -v "^grad\.\|^losses\|^gradient " ; }
{
for cfg in "4 64" "8 256"; do
  set -- $cfg; B=$1; T=$2; d=/tmp/g$B-$T
  echo "##### B $B T $T"
  timeout 200 python3 $H/gpt2_torch.py --config 124M --B $B --T $T --device cpu --out $d --repeat 5 --warmup 1 2>&1 | tail -6
  cp $d/times.json $OUT/torch-B$B-T$T.json 2>/dev/null
  gpt2 $G --input $d/gpt2.bin --repeats 5
  gpt2 $G --input $d/gpt2.bin --repeats 5 --precision bf16
done
echo "##### binding, B 8 T 256 fp32"
OMP_PROC_BIND=close OMP_PLACES=cores gpt2 $G --input /tmp/g8-256/gpt2.bin --repeats 5
OMP_PROC_BIND=spread OMP_PLACES=cores gpt2 $G --input /tmp/g8-256/gpt2.bin --repeats 5
} 2>&1 | tee $OUT/gpt2.txt
