#!/bin/bash
# GPU call G4: the session's changes (attention's two entries on spec.hpp, the
# generic queries, the instance overloads in the headers) before (9668646)
# and after, in one run: (1) the attention tests of the Cuda suite in 4
# shards; (2) the host's part of a call (llmk-perf --device-time, "host us")
# for attention, layer norm and GELU, before and after alternately; (3) GPT-2
# 124M's whole backward (bf16 twice each way, fp32 once). (1) runs where the
# pack has llmk_tests_cuda. Binaries of the Cuda
# configuration of scripts/common.sh (Kokkos 3.4.01, stripped): .gpu-carry/g4.tar.xz
# (bin/: after; bin-before/: before).
set -u
R=$PWD; mkdir -p /tmp/p && cd /tmp/p && tar xJf $R/.gpu-carry/g4.tar.xz
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1 LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee $OUT/machine.txt
t0=$SECONDS
if [ -x /tmp/p/bin/llmk_tests_cuda ]; then
pids=()
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i OMP_NUM_THREADS=2 timeout 150 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 \
    --gtest_filter='*attention*:*Attention*' > /tmp/p/suite-$i.log 2>&1 & pids+=($!)
done
for i in 0 1 2 3; do wait ${pids[$i]}; echo "shard $i exit $?"; done > $OUT/attention-suite.txt 2>&1
cat /tmp/p/suite-*.log >> $OUT/attention-suite.txt
grep -hE '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED' /tmp/p/suite-*.log | sort | uniq -c
echo "suite: $((SECONDS - t0)) s"
fi
host() {  # host WHO OP EXTRA...
  timeout 50 /tmp/p/$1/llmk-perf $2 --backend cuda --precision bf16,fp32 --device-time --budget 0.4 --no-peers \
    "${@:3}" --json $OUT/host-$2-$1.json 2>/dev/null | grep -v "^\[" ; }
{ for who in bin bin-before bin bin-before; do
    echo "=== $who"
    host $who attention_backward --impl flash_mma_ds,cublas --overwrite-dqkv
    host $who layernorm_backward --impl warp_rows
    host $who gelu_backward --impl packed
  done; } > $OUT/host-part.txt 2>&1
echo "host part: $((SECONDS - t0)) s"
timeout 150 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --out /tmp/g --repeat 10 --no-compile 2>&1 | tail -3
cp /tmp/g/times.json $OUT/gpt2-torch-times.json 2>/dev/null
{ for round in 1 2; do for who in bin bin-before; do
    echo "=== $who bf16 round $round"
    timeout 40 /tmp/p/$who/llmk-gpt2-backward --input /tmp/g/gpt2.bin --precision bf16 --repeats 20 2>&1 | grep -v "^grad\."
  done; done
  for who in bin bin-before; do
    echo "=== $who fp32"
    timeout 40 /tmp/p/$who/llmk-gpt2-backward --input /tmp/g/gpt2.bin --precision fp32 --repeats 10 2>&1 | grep -v "^grad\."
  done; } > $OUT/gpt2-before-after.txt 2>&1
grep -E "^===|backward|within|exceed" $OUT/gpt2-before-after.txt
echo "all: $((SECONDS - t0)) s"
