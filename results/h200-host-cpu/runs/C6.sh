#!/bin/bash
# Call C6 on the GPU machine: the Cuda tests of the changed kernels in 8
# shards (the float64 references are CPU work), then layer norm and encoder
# on 16 OpenMP threads.
set -u
H=$(cd "$(dirname "$0")" && pwd); cd /tmp; tar xJf $H/pack.tar.xz
export OMP_NUM_THREADS=2 OMP_PROC_BIND=false OPENBLAS_CORETYPE=SkylakeX
export LD_LIBRARY_PATH=/tmp/lib/openmp:/tmp/lib
F='attention_flash*:*attention_backward_recompute*:*gelu_backward*:*classifier*:matmul_backward/*kokkoskernels*'
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 280 /tmp/bin/llmk_tests_cuda --gtest_filter="$F" > $OUT/cuda-shard$i.txt 2>&1 &
done
wait
grep -h -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests ran|SKIPPED \]" $OUT/cuda-shard*.txt | sort | uniq -c | head -30
export OMP_NUM_THREADS=16
P=/tmp/bin/llmk-perf
{
timeout 90 $P layernorm_backward --backend openmp --threads 16 --B 8 --T 256 --precision fp32,bf16 --budget 1 2>&1 | grep -A12 "^impl"
timeout 90 $P encoder_backward --backend openmp --threads 16 --B 8 --T 256 --precision fp32 --budget 1 2>&1 | grep -A8 "^impl"
} 2>&1 | tee $OUT/ln-enc.txt
