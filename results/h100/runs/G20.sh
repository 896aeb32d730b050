#!/bin/bash
# GPU machine calls G20a and G20b (nvidia-h200, one lease; `G20.sh a` runs
# parts 1-3, `G20.sh b` parts 4-6):
#   (1) the Cuda suite: attention_forward/* with its Large shapes (the new
#       two-m-tile forward kernel), compute-sanitizer memcheck and racecheck
#       over attention_forward/*, then the whole suite without Large and
#       HugeRows in 8 gtest shards side by side;
#   (2) attention_forward bf16, B 8 T 1024: PyTorch's SDPA imported, llmk
#       call and device time with the shipped kernel (two m-tiles a warp),
#       LLMK_EXPERIMENT_FWD_TILES1 (the same kernel, one m-tile) and
#       LLMK_EXPERIMENT_FWD_ONE_TILE (the kernel before this change);
#   (3) GPT-2 124M B 8 T 1024 bf16 training, 20 steps of llm.c's recipe:
#       llmk with the kernel before (ONE_TILE) and after, alternately,
#       torch.compile between them (losses compared);
#   (4) llmk-perf matmul_backward (seed shape) and attention_backward
#       (B 8 T 1024 bf16, device time): old/ (d761377, before the shared perf
#       harness took these subcommands) and bin/ alternately;
#   (5) the host's 16 cores: encoder_backward and gelu_forward rows (OpenMP);
#   (6) ncu kernel times over 2 llmk bf16 steps.
# Binaries: .gpu-carry/g20.tar.xz (bin/: the Cuda configuration of this
# tree, Kokkos 3.4.01; old/: G17's llmk-perf; host/: the OpenMP
# configuration's llmk-perf, -march=native on the development machine;
# lib/). Output: $OUT/g20.tar.gz, rewritten after each part.
set -u
part=$1
R=$PWD; O=/tmp/o20$part; mkdir -p /tmp/p $O /tmp/t
[ -x /tmp/p/bin/llmk-perf ] || (cd /tmp/p && tar xJf $R/.gpu-carry/g20.tar.xz)
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 PYTHONUNBUFFERED=1 OMP_PROC_BIND=false LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $O/machine.txt
save() { tar czf $OUT/g20$part.tar.gz -C $O .; }
t0=$SECONDS
B=/tmp/p/bin
TRAIN="--B 8 --T 1024 --steps 20 --lr 6e-4 --warmup 5 --final-lr-frac 0.1 --weight-decay 0.1 --grad-clip 1.0"
M="--model /tmp/t/init.bin --train /tmp/t/train.bin $TRAIN --val-every 0"
if [ $part = a ]; then
# (1)
timeout 120 $B/llmk_tests_cuda --gtest_filter='attention_forward/*' > $O/suite-attention_forward.log 2>&1
echo "=== attention_forward suite exit $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $O/suite-attention_forward.log | head -12
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 90 $CS --tool memcheck --error-exitcode 9 $B/llmk_tests_cuda --gtest_brief=1 \
  --gtest_filter='attention_forward/*:-*Large*:*Concurrency*' > $O/memcheck.log 2>&1
echo "=== memcheck exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck.log | tail -3
timeout 60 $CS --tool racecheck --error-exitcode 9 $B/llmk_tests_cuda --gtest_brief=1 \
  --gtest_filter='attention_forward/Accuracy.*' > $O/racecheck.log 2>&1
echo "=== racecheck exit $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" $O/racecheck.log | tail -3
save
for s in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 200 $B/llmk_tests_cuda --gtest_brief=1 \
    --gtest_filter='-*Large*:*HugeRows*' > $O/suite-shard$s.log 2>&1 &
done
wait
echo "=== suite"; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|tests from .* ran" $O/suite-shard*.log | sort | uniq -c | head -30
echo "tests: $((SECONDS - t0)) s"; save
# (2)
timeout 90 python3 $R/perf/torch_baseline.py attention_forward --precision bf16 \
  --json $O/torch-attention_forward.json > $O/torch-attention_forward.txt 2>&1
tail -3 $O/torch-attention_forward.txt
i=; [ -s $O/torch-attention_forward.json ] && i="--import $O/torch-attention_forward.json"
fwd() {  # $1: label, then the environment
  local l=$1; shift
  env "$@" timeout 60 $B/llmk-perf attention_forward --backend cuda --precision bf16 --budget 1 $i \
    --json $O/attention_forward-$l.json > $O/attention_forward-$l.txt 2>/dev/null
  env "$@" timeout 60 $B/llmk-perf attention_forward --backend cuda --precision bf16 --budget 1 --device-time \
    --no-peers --json $O/attention_forward-$l-device.json > $O/attention_forward-$l-device.txt 2>/dev/null
  echo "=== attention_forward $l"; grep -hE "^[a-z_:-]+\*? +Cuda|^peer" $O/attention_forward-$l.txt $O/attention_forward-$l-device.txt | cut -c1-140
}
fwd two X=1; fwd one-tile LLMK_EXPERIMENT_FWD_ONE_TILE=1; fwd tiles1 LLMK_EXPERIMENT_FWD_TILES1=1; fwd two-again X=1
save
# (3)
$B/llmk-gpt2-train --write-tokens /tmp/t/train.bin --count 1000000 --V 50257 > /dev/null
timeout 60 $B/llmk-gpt2-train --train /tmp/t/train.bin --steps 0 --save /tmp/t/init.bin | tail -1
train() {  # $1: label, then the environment
  local l=$1; shift
  env "$@" timeout 90 $B/llmk-gpt2-train $M --precision bf16 --losses-out $O/llmk-bf16-$l.json > $O/llmk-bf16-$l.txt 2>&1
  echo "=== llmk bf16 $l (exit $?)"; grep -E "summary" $O/llmk-bf16-$l.txt
}
train before LLMK_EXPERIMENT_FWD_ONE_TILE=1; train after X=1
timeout 240 python3 $R/examples/gpt2/gpt2_train_torch.py --model /tmp/t/init.bin --train /tmp/t/train.bin \
  $TRAIN --precision bf16 --compile --json $O/torch-compile-bf16.json --compare $O/llmk-bf16-after.json \
  --tolerance 2e-2 > $O/torch-compile-bf16.txt 2>&1
echo "=== torch compile bf16 (exit $?)"; grep -E "summary|passed|FAILED|Error" $O/torch-compile-bf16.txt | cut -c1-200
train after-again X=1; train before-again LLMK_EXPERIMENT_FWD_ONE_TILE=1
save
else
# (4)
perf_pair() {  # $1: old or bin, $2: label
  timeout 90 /tmp/p/$1/llmk-perf matmul_backward --backend cuda --precision fp32,tf32,bf16 --overwrite-dinp \
    --budget 1 --json $O/matmul_backward-$1-$2.json > $O/matmul_backward-$1-$2.txt 2>&1
  timeout 90 /tmp/p/$1/llmk-perf attention_backward --backend cuda --precision bf16 --overwrite-dqkv \
    --impl flash_mma_ds,flash_mma,cublas --device-time --budget 1 \
    --json $O/attention_backward-$1-$2.json > $O/attention_backward-$1-$2.txt 2>&1
  echo "=== perf $1 $2"; grep -hE "^[a-z_:-]+\*? +Cuda|^peer" $O/matmul_backward-$1-$2.txt $O/attention_backward-$1-$2.txt | cut -c1-140
}
perf_pair old a; perf_pair bin a; perf_pair old b; perf_pair bin b
save
# (5)
( export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores
  { lscpu | grep -E "Model name|^CPU\(s\)|MHz|L2|L3" | cut -c1-200; date -u; } > $O/host-machine.txt 2>&1
  for r in a b; do
    timeout 60 /tmp/p/host/llmk-perf encoder_backward --backend openmp --threads 16 --precision all --budget 1 \
      --json $O/cpu-encoder_backward-$r.json > $O/cpu-encoder_backward-$r.txt 2>&1
    timeout 60 /tmp/p/host/llmk-perf encoder_backward --backend openmp --threads 16 --precision all --budget 1 \
      --zipf --json $O/cpu-encoder_backward-zipf-$r.json > $O/cpu-encoder_backward-zipf-$r.txt 2>&1
    timeout 60 /tmp/p/host/llmk-perf gelu_forward --backend openmp --threads 16 --B 8 --T 1024 --precision all \
      --budget 1 --json $O/cpu-gelu_forward-$r.json > $O/cpu-gelu_forward-$r.txt 2>&1
    echo "=== cpu $r"; grep -hE "^[a-z_:-]+\*? +OpenMP|^peer:copy" $O/cpu-encoder_backward-$r.txt \
      $O/cpu-encoder_backward-zipf-$r.txt $O/cpu-gelu_forward-$r.txt | cut -c1-120
  done )
save
# (6)
[ -s /tmp/t/init.bin ] || { $B/llmk-gpt2-train --write-tokens /tmp/t/train.bin --count 1000000 --V 50257 > /dev/null;
  $B/llmk-gpt2-train --train /tmp/t/train.bin --steps 0 --save /tmp/t/init.bin > /dev/null; }
LLMK_EXPERIMENT_FWD_TILES1=1 timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-units base \
  $B/llmk-gpt2-train $M --precision bf16 --steps 2 > $O/ncu-bf16.csv 2> $O/ncu-bf16.err
echo "=== ncu bf16 (exit $?) $(wc -l < $O/ncu-bf16.csv) lines"
fi
echo "$part: $((SECONDS - t0)) s"; save
