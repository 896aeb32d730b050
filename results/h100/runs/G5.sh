#!/bin/bash
# GPU call G5: the entry's binding without strings on its success path
# (core/op/entry.hpp: each argument's symbols expanded once at compile time,
# messages built only on a mismatch) and matmul tiled's host dweight tuning.
# (1) llmk_tests_cuda in 8 gtest shards of 200 s and llmk_tests_backends in
# 4 where the pack has it (the Large and Huge cases left out: the entry's change is host-side
# validation, which every other case goes through); (2) the host's part of a call (llmk-perf --device-time, "host us")
# for attention, layer norm and GELU, before (9668646, bin-before/) and
# after (bin/), alternately, twice; (3) GPT-2 124M's whole backward, bf16
# twice each way and fp32 once. .gpu-carry/g5.tar.xz: the Cuda configuration
# of scripts/common.sh (Kokkos 3.4.01), stripped. Everything lands in
# $OUT/g5.tar.gz (the device returns at most 8 files).
set -u
R=$PWD; O=/tmp/o5; mkdir -p /tmp/p $O && cd /tmp/p && tar xJf $R/.gpu-carry/g5.tar.xz
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1 LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee $O/machine.txt
t0=$SECONDS
for t in "llmk_tests_cuda 8" "llmk_tests_backends 4"; do
  set -- $t; pids=(); [ -x /tmp/p/bin/$1 ] || continue
  for ((i = 0; i < $2; i++)); do
    GTEST_TOTAL_SHARDS=$2 GTEST_SHARD_INDEX=$i OMP_NUM_THREADS=2 timeout 200 /tmp/p/bin/$1 \
      --gtest_brief=1 --gtest_filter='-*Huge*:*Large*' > $O/$1-$i.log 2>&1 & pids+=($!)
  done
  for ((i = 0; i < $2; i++)); do wait ${pids[$i]}; echo "$1 shard $i exit $?"; done
  grep -hE '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED' $O/$1-*.log | sort | uniq -c
done 2>&1 | tee $O/suite.txt
echo "suite: $((SECONDS - t0)) s"
host() {  # host WHO ROUND OP EXTRA...
  timeout 50 /tmp/p/$1/llmk-perf $3 --backend cuda --precision bf16,fp32 --device-time --budget 0.4 \
    --no-peers "${@:4}" --json $O/host-$3-$1-$2.json 2>/dev/null | grep -v "^\[" ; }
{ for round in 1 2; do for who in bin bin-before; do
    echo "=== $who round $round"
    host $who $round attention_backward --impl flash_mma_ds,cublas --overwrite-dqkv
    host $who $round layernorm_backward --impl warp_rows
    host $who $round gelu_backward --impl packed
  done; done; } > $O/host-part.txt 2>&1
grep -E "^===|^(flash_mma_ds|cublas|warp_rows|packed) " $O/host-part.txt | cut -c1-110
echo "host part: $((SECONDS - t0)) s"
timeout 150 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --out /tmp/g --repeat 10 --no-compile 2>&1 | tail -3
cp /tmp/g/times.json $O/gpt2-torch-times.json 2>/dev/null
{ for round in 1 2; do for who in bin bin-before; do
    echo "=== $who bf16 round $round"
    timeout 40 /tmp/p/$who/llmk-gpt2-backward --input /tmp/g/gpt2.bin --precision bf16 --repeats 20 2>&1 | grep -v "^grad\."
  done; done
  for who in bin bin-before; do
    echo "=== $who fp32"
    timeout 40 /tmp/p/$who/llmk-gpt2-backward --input /tmp/g/gpt2.bin --precision fp32 --repeats 10 2>&1 | grep -v "^grad\."
  done; } > $O/gpt2-before-after.txt 2>&1
grep -E "^===|no fences|within|exceed" $O/gpt2-before-after.txt
echo "all: $((SECONDS - t0)) s"
tar czf $OUT/g5.tar.gz -C $O .
