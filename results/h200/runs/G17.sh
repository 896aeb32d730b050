#!/bin/bash
# GPU call G17 (either card; the reply names it), in parts:
#   G17.sh gpu   (1) llmk-gpt2-train's tiny self-check on Cuda (fp32, bf16:
#                every step's loss against the float64 reference's),
#                adamw's Cuda tests (bf16-fp32grad new) and classifier_forward's
#                (new), and classifier_forward's rows beside PyTorch's
#                F.cross_entropy (reduction 'none'); (2) GPT-2 124M from
#                one random checkpoint (llmk-gpt2-train --steps 0 --save) on
#                one synthetic token file (--write-tokens), B 8, T 1024, 20
#                steps of llm.c's recipe (lr 6e-4, warmup 5, cosine to 10 %,
#                weight decay 0.1, clipping 1.0): llmk fp32 and bf16, then
#                gpt2_train_torch.py on the same files, eager fp32 and bf16
#                autocast, torch.compile bf16, each comparing its losses with
#                llmk's step by step and its step time.
#   G17.sh cpu   the host's 16 cores: llmk-gpt2-train (OpenMP) fp32, B 4,
#                T 64, 10 steps, beside PyTorch's CPU eager fp32.
#   G17.sh exp   an experiment, not in the tree: attention_forward's flash_mma
#                with 8 warps (128 queries a block sharing each key and value
#                tile) against the shipped 4: its Cuda tests with 8, and
#                llmk-perf attention_forward bf16 with LLMK_FWD_WARPS=4 and 8
#                (exp/: binaries built from the shipped tree with the kernel
#                templated on its warps).
#   G17.sh all   gpu, cpu, classifier_forward's perf rows (part perf) and
#                exp, in that order of need, one machine start.
# Binaries: .gpu-carry/g17.tar.xz (bin/: the Cuda configuration's
# llmk-gpt2-train, llmk-perf and llmk_tests_cuda linked from test_adamw.cpp
# and test_classifier_forward.cpp; host/: the
# OpenMP configuration's llmk-gpt2-train; lib/).
# Output: $OUT/g17-<part>.tar.gz, written after each step.
set -u
part=$1
R=$PWD; O=/tmp/o17-$part; mkdir -p /tmp/p $O /tmp/t
[ -x /tmp/p/bin/llmk-gpt2-train ] || (cd /tmp/p && tar xJf $R/.gpu-carry/g17.tar.xz)
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1 LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $O/machine.txt
save() { tar czf $OUT/g17-$part.tar.gz -C $O .; }
TRAIN="--B 8 --T 1024 --steps 20 --lr 6e-4 --warmup 5 --final-lr-frac 0.1 --weight-decay 0.1 --grad-clip 1.0"
gpu() {
  for p in fp32 bf16; do timeout 60 /tmp/p/bin/llmk-gpt2-train --tiny-selfcheck --precision $p; done > $O/tiny-selfcheck.txt 2>&1
  grep -E "passed|FAILED" $O/tiny-selfcheck.txt
  timeout 90 /tmp/p/bin/llmk_tests_cuda --gtest_filter='adamw/*:AdamW*:classifier_forward/*:ClassifierForward*' > $O/suite.log 2>&1
  echo "=== suite exit $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $O/suite.log | head -8
  save
  /tmp/p/bin/llmk-gpt2-train --write-tokens /tmp/t/train.bin --count 1000000 --V 50257 > /dev/null
  timeout 60 /tmp/p/bin/llmk-gpt2-train --train /tmp/t/train.bin --steps 0 --save /tmp/t/init.bin | tail -1
  for p in fp32 bf16; do
    timeout 90 /tmp/p/bin/llmk-gpt2-train --model /tmp/t/init.bin --train /tmp/t/train.bin $TRAIN \
      --precision $p --val-every 0 --losses-out $O/llmk-$p.json > $O/llmk-$p.txt 2>&1
    echo "=== llmk $p (exit $?)"; grep -E "^step +(1|5|20)/|summary" $O/llmk-$p.txt
    timeout 90 /tmp/p/bin/llmk-gpt2-train --model /tmp/t/init.bin --train /tmp/t/train.bin $TRAIN \
      --precision $p --val-every 0 --steps 6 --time-phases > $O/llmk-$p-phases.txt 2>&1
    grep -E "^phases" $O/llmk-$p-phases.txt
  done
  save
  tol() { [ $1 = fp32 ] && echo 1e-3 || echo 2e-2; }
  for run in "fp32" "bf16" "bf16 --compile"; do
    set -- $run; p=$1; c=${2:-}; n=torch-$([ -n "$c" ] && echo compile || echo eager)-$p
    timeout 240 python3 $R/examples/gpt2/gpt2_train_torch.py --model /tmp/t/init.bin --train /tmp/t/train.bin \
      $TRAIN --precision $p $c --json $O/$n.json --compare $O/llmk-$p.json --tolerance $(tol $p) > $O/$n.txt 2>&1
    echo "=== $n (exit $?)"; grep -E "summary|passed|FAILED|Error" $O/$n.txt | cut -c1-200
    save
  done
}
classifier_perf() {
  timeout 90 python3 $R/perf/torch_baseline.py classifier_forward --precision all \
    --json $O/torch-classifier_forward.json > $O/torch-classifier_forward.txt 2>&1
  tail -4 $O/torch-classifier_forward.txt
  i=; [ -s $O/torch-classifier_forward.json ] && i="--import $O/torch-classifier_forward.json"
  timeout 60 /tmp/p/bin/llmk-perf classifier_forward --backend cuda --precision all --budget 1 $i \
    --json $O/classifier_forward.json > $O/classifier_forward.txt 2>/dev/null
  echo "=== perf"; grep -E "^[a-z_:-]+\*? +Cuda" $O/classifier_forward.txt | cut -c1-150
  save
}
cpu() {
  export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores
  { lscpu | grep -E "Model name|^CPU\(s\)|MHz|L2|L3" | cut -c1-200; date -u; } > $O/host-machine.txt 2>&1
  [ -s /tmp/t/init.bin ] || { /tmp/p/host/llmk-gpt2-train --write-tokens /tmp/t/train.bin --count 1000000 --V 50257 >/dev/null
    /tmp/p/host/llmk-gpt2-train --train /tmp/t/train.bin --steps 0 --save /tmp/t/init.bin | tail -1; }
  C="--B 4 --T 64 --steps 10 --lr 6e-4 --warmup 5 --final-lr-frac 0.1 --weight-decay 0.1"
  timeout 120 /tmp/p/host/llmk-gpt2-train --model /tmp/t/init.bin --train /tmp/t/train.bin $C \
    --val-every 0 --losses-out $O/cpu-llmk-fp32.json > $O/cpu-llmk-fp32.txt 2>&1
  echo "=== cpu llmk fp32 (exit $?)"; grep -E "summary" $O/cpu-llmk-fp32.txt
  timeout 120 /tmp/p/host/llmk-gpt2-train --model /tmp/t/init.bin --train /tmp/t/train.bin $C \
    --val-every 0 --time-phases > $O/cpu-llmk-fp32-phases.txt 2>&1
  grep -E "^phases" $O/cpu-llmk-fp32-phases.txt
  timeout 150 python3 $R/examples/gpt2/gpt2_train_torch.py --model /tmp/t/init.bin --train /tmp/t/train.bin \
    $C --device cpu --threads 16 --json $O/cpu-torch-eager-fp32.json --compare $O/cpu-llmk-fp32.json \
    --tolerance 1e-3 > $O/cpu-torch-eager-fp32.txt 2>&1
  echo "=== cpu torch eager fp32 (exit $?)"; grep -E "summary|passed|FAILED|Error" $O/cpu-torch-eager-fp32.txt | cut -c1-200
  save
}
exp() {
  timeout 120 /tmp/p/exp/llmk_tests_fwd8 --gtest_filter='attention_forward/*' > $O/exp-suite.log 2>&1
  echo "=== exp suite (8 warps) exit $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $O/exp-suite.log | head -6
  for w in 4 8 4 8; do
    LLMK_FWD_WARPS=$w timeout 60 /tmp/p/exp/llmk-perf-fwd8 attention_forward --backend cuda --precision bf16 \
      --impl flash_mma --budget 1 --device-time --json $O/exp-warps$w.json > $O/exp-warps$w.txt 2>/dev/null
    echo "=== warps $w"; grep -E "^flash_mma" $O/exp-warps$w.txt | cut -c1-120
  done
  save
}
case $part in
  gpu) gpu ;;
  cpu) cpu ;;
  exp) exp ;;
  all) gpu; part=cpu; O=/tmp/o17-cpu; mkdir -p $O; cpu
       part=perf; O=/tmp/o17-perf; mkdir -p $O; classifier_perf
       part=exp; O=/tmp/o17-exp; mkdir -p $O; exp ;;
esac
