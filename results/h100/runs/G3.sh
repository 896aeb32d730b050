#!/bin/bash
# Call G3 (asked of the H200 kind, run on an H100). GPU: llmk-perf's shared subcommand
# (perf/harness/op_benchmark.hpp) for gelu, layer norm and the encoder on
# Cuda, every precision, their llm.c-style peers beside, device time and
# the host's part of each call; the CUDA API calls of one call (nsys, where
# the machine has it). Host CPU (16 Xeon cores): GPT-2 124M's backward
# (B 4, T 64) with the thread-collapse check (--check-threads), fp32 and
# bf16 with `auto`, and planted: Debian's pthreads OpenBLAS under
# kokkoskernels. pack.tar.xz: bin-gpu/ (Cuda llmk-perf), bin-cpu/ (OpenMP
# llmk-gpt2-backward, llmk-perf), lib/ (their non-libc libraries),
# lib-pthread/ (the pthreads libopenblas.so.0); all stripped.
set -u
R=$PWD  # the repository's root (examples/gpt2/gpt2_torch.py)
cd /tmp && mkdir -p p && tar xJf $1 -C p
export PYTHONUNBUFFERED=1
L() { LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 "$@"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
P=/tmp/p/bin-gpu/llmk-perf
{ for op in gelu_backward layernorm_backward encoder_backward; do
    extra=; [ $op = encoder_backward ] && extra=--zipf
    OMP_PROC_BIND=false L timeout 100 $P $op --backend cuda --precision all --device-time $extra \
      --json $OUT/G3-$op.json 2>&1 | grep -v "^\[\|\.\.\. "
  done; } > $OUT/G3-ops.txt 2>&1
grep -E "^(packed|naive|warp_rows|blocked|sorted|block_sort|peer:)" $OUT/G3-ops.txt | cut -c1-130
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  { for op in "gelu_backward --C 768 --impl packed" "layernorm_backward --impl warp_rows"; do
      echo "=== $op"; OMP_PROC_BIND=false L timeout 120 $NSYS profile -o /tmp/ns -f true --stats=false \
        $P $op --backend cuda --B 1 --T 64 --repeat 200 --budget 0.2 --no-peers --no-check > /dev/null 2>&1
      timeout 120 $NSYS stats -r cuda_api_sum -f csv /tmp/ns.nsys-rep 2>/dev/null | head -25
    done; } > $OUT/G3-nsys.txt 2>&1
  cut -c1-160 $OUT/G3-nsys.txt | head -60
else echo "no nsys here"; fi
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores OPENBLAS_CORETYPE=SkylakeX
G=/tmp/p/bin-cpu/llmk-gpt2-backward
timeout 200 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --B 4 --T 64 --device cpu \
  --out /tmp/g --no-compile --repeat 3 --warmup 1 2>&1 | tail -3
run() {  # run LIBS command...: its output without the per-tensor lines, and its exit status
  local lib=$1; shift; echo "=== $*"
  LD_LIBRARY_PATH=$lib timeout 150 "$@" > /tmp/o.txt 2>&1; local rc=$?
  grep -v "^grad\.\|^losses\|^gradient \|^name" /tmp/o.txt; echo "rc=$rc"
}
{ run /tmp/p/lib $G --input /tmp/g/gpt2.bin --repeats 5 --check-threads
  run /tmp/p/lib $G --input /tmp/g/gpt2.bin --repeats 5 --precision bf16 --check-threads
  run /tmp/p/lib $G --input /tmp/g/gpt2.bin --repeats 5 --impl matmul_backward=kokkoskernels --check-threads
  echo "##### planted: the pthreads OpenBLAS"
  run /tmp/p/lib-pthread:/tmp/p/lib $G --input /tmp/g/gpt2.bin --repeats 3 \
    --impl matmul_backward=kokkoskernels --check-threads
} > $OUT/G3-gpt2-cpu.txt 2>&1
cp /tmp/g/times.json $OUT/G3-torch-cpu-B4-T64.json
grep -E "^===|^#####|^host BLAS|ratio|layernorm|attention  |encoder  |backward \(no|PyTorch|within|COLLAPSE|judged|rc=" $OUT/G3-gpt2-cpu.txt
