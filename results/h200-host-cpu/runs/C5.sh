#!/bin/bash
# Call C5 on the GPU machine: the Cuda tests of the changed kernels (their
# host tunings run on Cuda too); matmul's kokkoskernels at GPT-2 124M's CPU
# shapes on OpenBLAS 0.3.21 (SkylakeX) and on BLIS 0.9.0 (Debian's OpenMP
# build, preloaded); then each operation beside PyTorch's CPU rows.
set -u
H=$(cd "$(dirname "$0")" && pwd); cd /tmp; tar xJf $H/pack.tar.xz
export OMP_NUM_THREADS=16 OMP_PROC_BIND=false PYTHONUNBUFFERED=1 OPENBLAS_CORETYPE=SkylakeX
export LD_LIBRARY_PATH=/tmp/lib/openmp:/tmp/lib
timeout 150 /tmp/bin/llmk_tests_cuda --gtest_filter='attention_flash*:*attention_backward_recompute*:*gelu_backward*:*classifier*' 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" | head -20 | tee $OUT/cuda-tests.txt
P=/tmp/bin/llmk-perf
{
for OC in 3072 50304; do
  echo "=== OpenBLAS, OC $OC"
  timeout 60 $P --backend openmp --threads 16 --B 8 --T 256 --C 768 --OC $OC --impl kokkoskernels,tiled --budget 2 --no-check 2>&1 | grep -A8 "^impl"
  echo "=== BLIS, OC $OC"
  LD_PRELOAD=/tmp/lib/blis/libblis.so.4 timeout 60 $P --backend openmp --threads 16 --B 8 --T 256 --C 768 --OC $OC --impl kokkoskernels --budget 2 --no-check 2>&1 | grep -A8 "host BLAS\|^impl"
done
} 2>&1 | tee $OUT/blas.txt
cd $H/perf && LLMK_PERF=$P LLMK_PERF_ARGS="--budget 1" timeout 330 bash torch_cpu_rows.sh $OUT/ops --ops gelu_backward,classifier_backward,attention_backward,layernorm_backward,encoder_backward --precision fp32,bf16 2>&1 | tail -150 > $OUT/ops.txt
echo "rc $?"; grep -h -A12 "^impl" $OUT/ops/*-llmk.txt 2>/dev/null | head -120
