#!/bin/bash
# CPU figures on the GPU machine's host (call C1): PyTorch CPU and llmk OpenMP
# (binaries of 33eb711, built on the 2-core Zen 4 machine with -march=native),
# GPT-2 124M backward, with Debian's pthreads and OpenMP builds of OpenBLAS 0.3.21
# swapped in by LD_LIBRARY_PATH. pack.tar.xz: bin/ (stripped binaries), lib/.
set -u
H=$(cd "$(dirname "$0")" && pwd); cd /tmp; tar xJf $H/pack.tar.xz
export OMP_NUM_THREADS=16 OMP_PROC_BIND=false PYTHONUNBUFFERED=1
lscpu > $OUT/lscpu.txt; nproc >> $OUT/lscpu.txt; free -g >> $OUT/lscpu.txt
run_llmk() { # tag lib args...
  local tag=$1 lib=$2; shift 2
  echo "=== $tag"
  LD_LIBRARY_PATH=/tmp/lib/$lib:/tmp/lib timeout 240 /tmp/bin/llmk-gpt2-backward-before "$@" 2>&1 | grep -v "^grad\.\|^losses" | tail -22
}
for cfg in "4 64" "8 256"; do
  set -- $cfg; B=$1; T=$2; d=/tmp/g$B-$T
  echo "##### B $B T $T"
  timeout 300 python3 $H/gpt2_torch.py --config 124M --B $B --T $T --device cpu --out $d --repeat 10 --warmup 2 2>&1 | tail -15
  cp $d/times.json $OUT/torch-B$B-T$T.json 2>/dev/null
  run_llmk "llmk before: pthread OpenBLAS, auto" pthread --input $d/gpt2.bin --repeats 10
  run_llmk "llmk: OpenMP OpenBLAS, auto" openmp --input $d/gpt2.bin --repeats 10
  run_llmk "llmk: OpenMP OpenBLAS, matmul tiled" openmp --input $d/gpt2.bin --repeats 10 --impl matmul_backward=tiled
done 2>&1 | tee $OUT/gpt2.txt
