#!/bin/bash
# GPU machine calls G21a and G21b (nvidia-h200 asked; one lease):
#   a: the whole Cuda suite but Large and HugeRows, 8 gtest shards side by
#      side (line-buffered: a shard cut by its timeout keeps what it printed);
#   b: attention_forward/* with Large and attention_backward_recompute's
#      FeedsRecompute tests, compute-sanitizer memcheck over
#      attention_forward/* without Large; attention_forward bf16 B 8 T 1024
#      with PyTorch's SDPA imported (call and device time); GPT-2 124M B 8
#      T 1024 bf16 training, 20 steps of llm.c's recipe: old/ (G20's binary
#      with LLMK_EXPERIMENT_FWD_ONE_TILE=1, the forward kernel before) and
#      bin/ alternately, torch.compile between them (losses compared).
# Binaries: .gpu-carry/g21.tar.xz (bin/: the Cuda configuration of this
# tree, Kokkos 3.4.01; old/: G20's llmk-gpt2-train). Output: $OUT/g21<part>.tar.gz.
set -u
part=$1
R=$PWD; O=/tmp/o21$part; mkdir -p /tmp/p $O /tmp/t
[ -x /tmp/p/bin/llmk-perf ] || (cd /tmp/p && tar xJf $R/.gpu-carry/g21.tar.xz)
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 PYTHONUNBUFFERED=1 OMP_PROC_BIND=false LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $O/machine.txt
save() { tar czf $OUT/g21$part.tar.gz -C $O .; }
t0=$SECONDS
B=/tmp/p/bin
if [ $part = a ]; then
  for s in 0 1 2 3 4 5 6 7; do
    GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 285 stdbuf -oL $B/llmk_tests_cuda \
      --gtest_filter='-*Large*:*HugeRows*' > $O/suite-shard$s.log 2>&1 &
  done
  wait
  echo "=== suite"
  for s in 0 1 2 3 4 5 6 7; do
    echo "shard $s: $(grep -c '^\[       OK \]' $O/suite-shard$s.log) ok, $(grep -c '^\[  FAILED  \]' $O/suite-shard$s.log) failed, $(grep -c '^\[  SKIPPED \]' $O/suite-shard$s.log) skipped; $(grep -E 'tests from .* ran' $O/suite-shard$s.log | tail -1)"
  done
  grep -h '^\[  FAILED  \]' $O/suite-shard*.log | sort -u | head -20
  for s in 0 1 2 3 4 5 6 7; do gzip -f $O/suite-shard$s.log; done
else
  timeout 120 $B/llmk_tests_cuda --gtest_filter='attention_forward/*:*FeedsRecompute*' > $O/suite-attention_forward.log 2>&1
  echo "=== attention_forward suite exit $?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests from .* ran" $O/suite-attention_forward.log | head -8
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  timeout 90 $CS --tool memcheck --error-exitcode 9 $B/llmk_tests_cuda --gtest_brief=1 \
    --gtest_filter='attention_forward/*:-*Large*:*Concurrency*' > $O/memcheck.log 2>&1
  echo "=== memcheck exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck.log | tail -3
  save
  timeout 90 python3 $R/perf/torch_baseline.py attention_forward --precision bf16 \
    --json $O/torch-attention_forward.json > $O/torch-attention_forward.txt 2>&1
  i=; [ -s $O/torch-attention_forward.json ] && i="--import $O/torch-attention_forward.json"
  timeout 60 $B/llmk-perf attention_forward --backend cuda --precision bf16 --budget 1 $i \
    --json $O/attention_forward.json > $O/attention_forward.txt 2>/dev/null
  timeout 60 $B/llmk-perf attention_forward --backend cuda --precision bf16 --budget 1 --device-time \
    --json $O/attention_forward-device.json > $O/attention_forward-device.txt 2>/dev/null
  echo "=== attention_forward"; grep -hE "^[a-z_:-]+\*? +Cuda" $O/attention_forward.txt $O/attention_forward-device.txt | cut -c1-140
  save
  $B/llmk-gpt2-train --write-tokens /tmp/t/train.bin --count 1000000 --V 50257 > /dev/null
  timeout 60 $B/llmk-gpt2-train --train /tmp/t/train.bin --steps 0 --save /tmp/t/init.bin | tail -1
  TRAIN="--B 8 --T 1024 --steps 20 --lr 6e-4 --warmup 5 --final-lr-frac 0.1 --weight-decay 0.1 --grad-clip 1.0"
  M="--model /tmp/t/init.bin --train /tmp/t/train.bin $TRAIN --val-every 0"
  train() {  # $1: bin or old, $2: label, then the environment
    local b=$1 l=$2; shift 2
    env "$@" timeout 90 /tmp/p/$b/llmk-gpt2-train $M --precision bf16 --losses-out $O/llmk-bf16-$l.json > $O/llmk-bf16-$l.txt 2>&1
    echo "=== llmk bf16 $l (exit $?)"; grep -E "summary" $O/llmk-bf16-$l.txt
  }
  train old before LLMK_EXPERIMENT_FWD_ONE_TILE=1; train bin after X=1
  timeout 240 python3 $R/examples/gpt2/gpt2_train_torch.py --model /tmp/t/init.bin --train /tmp/t/train.bin \
    $TRAIN --precision bf16 --compile --json $O/torch-compile-bf16.json --compare $O/llmk-bf16-after.json \
    --tolerance 2e-2 > $O/torch-compile-bf16.txt 2>&1
  echo "=== torch compile bf16 (exit $?)"; grep -E "summary|passed|FAILED|Error" $O/torch-compile-bf16.txt | cut -c1-200
  train bin after-again X=1; train old before-again LLMK_EXPERIMENT_FWD_ONE_TILE=1
fi
echo "$part: $((SECONDS - t0)) s"; save
