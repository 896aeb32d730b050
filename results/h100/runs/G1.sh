#!/bin/bash
# GPU call G1: the Cuda suite (llmk_tests_cuda, llmk_tests_backends) in 8 shards,
# then compute-sanitizer memcheck over the declared operations' Cuda tests.
set -u
H=$(cd "$(dirname "$0")" && pwd); mkdir -p /tmp/p && cd /tmp/p && tar xJf $H/pack.tar.xz
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee $OUT/machine.txt
t0=$SECONDS
for t in llmk_tests_cuda llmk_tests_backends; do
  filter='-*matmul_backward*HugeRows*'
  pids=()
  for i in 0 1 2 3 4 5 6 7; do
    GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i OMP_NUM_THREADS=2 timeout 270 /tmp/p/bin/$t --gtest_brief=1 \
      --gtest_filter="$filter" > /tmp/p/$t-$i.log 2>&1 & pids+=($!)
  done
  for i in 0 1 2 3 4 5 6 7; do wait ${pids[$i]}; echo "$t shard $i exit $?"; done
  cat /tmp/p/$t-*.log > $OUT/$t.log
  grep -hE '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED' /tmp/p/$t-*.log | sort | uniq -c
done 2>&1 | tee $OUT/suite.txt
echo "suite: $((SECONDS - t0)) s"
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 \
  --gtest_filter='*gelu*:*Gelu*:*layernorm*:*Layernorm*:*encoder*:*Encoder*:*classifier*:*Classifier*-*Large*:*HugeRows*' > $OUT/memcheck.log 2>&1
echo "memcheck exit $? ($((SECONDS - t0)) s)"; tail -n 6 $OUT/memcheck.log
