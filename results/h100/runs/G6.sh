#!/bin/bash
# GPU call G6: matmul_backward on spec.hpp and attention's shared helpers
# (e12143c's code, bin/) against 2c787ce (bin-before/, G5's): (1)
# llmk_tests_cuda in 8 gtest shards of 150 s without the Large and Huge
# cases; (2) GPT-2 124M's whole backward, bf16 after, before, after, and
# fp32 after. .gpu-carry/g6.tar.xz: the Cuda configuration of
# scripts/common.sh from CI's clean clone, stripped. Output: $OUT/g6.tar.gz.
set -u
R=$PWD; O=/tmp/o6g; mkdir -p /tmp/p6 $O && cd /tmp/p6 && tar xJf $R/.gpu-carry/g6.tar.xz
export LD_LIBRARY_PATH=/tmp/p6/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1 LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee $O/machine.txt
t0=$SECONDS; pids=()
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i OMP_NUM_THREADS=2 timeout 150 /tmp/p6/bin/llmk_tests_cuda \
    --gtest_brief=1 --gtest_filter='-*Huge*:*Large*' > $O/llmk_tests_cuda-$i.log 2>&1 & pids+=($!)
done
{ for i in 0 1 2 3 4 5 6 7; do wait ${pids[$i]}; echo "shard $i exit $?"; done
  grep -hE '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED' $O/llmk_tests_cuda-*.log | sort | uniq -c
} 2>&1 | tee $O/suite.txt
echo "suite: $((SECONDS - t0)) s"
tar czf $OUT/g6.tar.gz -C $O .
timeout 150 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --out /tmp/g --repeat 10 --no-compile 2>&1 | tail -3
g() { echo "=== $1 $2"; timeout 40 /tmp/p6/$1/llmk-gpt2-backward --input /tmp/g/gpt2.bin --precision $2 \
        --repeats 20 2>&1 | grep -v "^grad\."; }
{ g bin bf16; g bin-before bf16; g bin bf16; g bin fp32; } > $O/gpt2-before-after.txt 2>&1
grep -E "^===|no fences|within|exceed" $O/gpt2-before-after.txt
echo "all: $((SECONDS - t0)) s"
tar czf $OUT/g6.tar.gz -C $O .
