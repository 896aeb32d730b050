#!/bin/bash
# GPU call G18 (either card; it ran on an H100 80GB HBM3), in parts, one machine start:
#   (1) adamw's and squared_norm's Cuda tests (AdamWSteps.ClippedOnDevice and
#       the device norm's refusals new), layernorm_forward's (warp_rows new)
#       and llmk-gpt2-train's tiny self-check on Cuda (fp32, bf16: every
#       step's loss against the float64 reference's); layernorm_forward's perf
#       rows (warp_rows, rows, llm.c's algorithm), device time;
#   (2) GPT-2 124M from one random checkpoint on one synthetic token file,
#       B 8, T 1024, 20 steps of llm.c's recipe (lr 6e-4, warmup 5, cosine to
#       10 %, weight decay 0.1, clipping 1.0): llmk bf16 (the optimizer now one
#       squared_norm + two adamw launches, clipping on the device), its fenced
#       phases, then gpt2_train_torch.py on the same files, torch.compile and
#       eager bf16 autocast, each comparing its losses with llmk's;
#   (3) ncu's kernel durations over llmk's bf16 steps 2-3 (where the step's
#       time goes, kernel by kernel);
#   (4) exp: attention_forward's flash_mma with 8 warps against 4 (binaries
#       built from the tree with the kernel templated on its warps);
#   (5) fp32 124M llmk and PyTorch eager fp32; (6) the host's 16 cores:
#       llmk-gpt2-train (OpenMP) fp32 and bf16, B 4 T 64, beside PyTorch's
#       CPU eager (fp32, bf16 autocast); encoder_backward's host rows
#       (by rows now) against the host's copy.
# Binaries: .gpu-carry/g18.tar.xz (bin/: the Cuda configuration's
# llmk-gpt2-train and llmk_tests_cuda linked from test_adamw.cpp and
# test_squared_norm.cpp and test_layernorm_backward.cpp, llmk-perf; host/: the
# OpenMP llmk-gpt2-train and llmk-perf; exp/; lib/).
# Run in the order (1), (2) without eager, (4), (6), (2b) eager and llmk
# again, (3), (5): the device budget was short. Output: $OUT/g18.tar.gz,
# rewritten after each part.
set -u
R=$PWD; O=/tmp/o18; mkdir -p /tmp/p $O /tmp/t
(cd /tmp/p && tar xJf $R/.gpu-carry/g18.tar.xz)
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1 LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $O/machine.txt
save() { tar czf $OUT/g18.tar.gz -C $O .; }
TRAIN="--B 8 --T 1024 --steps 20 --lr 6e-4 --warmup 5 --final-lr-frac 0.1 --weight-decay 0.1 --grad-clip 1.0"
# (1)
timeout 90 /tmp/p/bin/llmk_tests_cuda --gtest_filter='adamw/*:AdamW*:squared_norm/*:SquaredNorm*:layernorm_forward/*' > $O/suite.log 2>&1
echo "=== suite exit $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $O/suite.log | head -8
for p in fp32 bf16; do timeout 60 /tmp/p/bin/llmk-gpt2-train --tiny-selfcheck --precision $p; done > $O/tiny-selfcheck.txt 2>&1
grep -E "passed|FAILED" $O/tiny-selfcheck.txt
timeout 60 /tmp/p/bin/llmk-perf layernorm_forward --backend cuda --precision all --budget 1 --device-time \
  --json $O/layernorm_forward.json > $O/layernorm_forward.txt 2>&1
echo "=== perf layernorm_forward (exit $?)"; grep -E "^[a-z_:'. -]+\*? +Cuda|llm" $O/layernorm_forward.txt | cut -c1-150
save
# (2)
/tmp/p/bin/llmk-gpt2-train --write-tokens /tmp/t/train.bin --count 1000000 --V 50257 > /dev/null
timeout 60 /tmp/p/bin/llmk-gpt2-train --train /tmp/t/train.bin --steps 0 --save /tmp/t/init.bin | tail -1
M="--model /tmp/t/init.bin --train /tmp/t/train.bin $TRAIN --val-every 0"
timeout 90 /tmp/p/bin/llmk-gpt2-train $M --precision bf16 --losses-out $O/llmk-bf16.json > $O/llmk-bf16.txt 2>&1
echo "=== llmk bf16 (exit $?)"; grep -E "^step +(1|5|20)/|summary" $O/llmk-bf16.txt
timeout 90 /tmp/p/bin/llmk-gpt2-train $M --precision bf16 --steps 6 --time-phases > $O/llmk-bf16-phases.txt 2>&1
grep -E "^phases" $O/llmk-bf16-phases.txt
save
for c in --compile; do n=torch-$([ -n "$c" ] && echo compile || echo eager)-bf16
  timeout 240 python3 $R/examples/gpt2/gpt2_train_torch.py --model /tmp/t/init.bin --train /tmp/t/train.bin \
    $TRAIN --precision bf16 $c --json $O/$n.json --compare $O/llmk-bf16.json --tolerance 2e-2 > $O/$n.txt 2>&1
  echo "=== $n (exit $?)"; grep -E "summary|passed|FAILED|Error" $O/$n.txt | cut -c1-200
  save
done
# (4)
for w in 4 8 4 8; do
  LLMK_FWD_WARPS=$w timeout 60 /tmp/p/exp/llmk-perf-fwd8 attention_forward --backend cuda --precision bf16 \
    --impl flash_mma --budget 1 --device-time --json $O/exp-warps$w.json > $O/exp-warps$w.txt 2>/dev/null
  echo "=== warps $w"; grep -E "^flash_mma" $O/exp-warps$w.txt | cut -c1-120
done
timeout 120 /tmp/p/exp/llmk_tests_fwd8 --gtest_filter='attention_forward/*' > $O/exp-suite.log 2>&1
echo "=== exp suite (8 warps) exit $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $O/exp-suite.log | head -6
save
# (6)
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores
{ lscpu | grep -E "Model name|^CPU\(s\)|MHz|L2|L3" | cut -c1-200; date -u; } > $O/host-machine.txt 2>&1
C="--model /tmp/t/init.bin --train /tmp/t/train.bin --B 4 --T 64 --steps 10 --lr 6e-4 --warmup 5 --final-lr-frac 0.1 --weight-decay 0.1"
timeout 120 /tmp/p/host/llmk-gpt2-train $C --val-every 0 --losses-out $O/cpu-llmk-fp32.json > $O/cpu-llmk-fp32.txt 2>&1
echo "=== cpu llmk fp32 (exit $?)"; grep -E "summary" $O/cpu-llmk-fp32.txt
timeout 120 /tmp/p/host/llmk-gpt2-train $C --val-every 0 --time-phases > $O/cpu-llmk-fp32-phases.txt 2>&1
grep -E "^phases" $O/cpu-llmk-fp32-phases.txt
timeout 150 python3 $R/examples/gpt2/gpt2_train_torch.py $C --device cpu --threads 16 \
  --json $O/cpu-torch-eager-fp32.json --compare $O/cpu-llmk-fp32.json --tolerance 1e-3 > $O/cpu-torch-eager-fp32.txt 2>&1
echo "=== cpu torch eager fp32 (exit $?)"; grep -E "summary|passed|FAILED|Error" $O/cpu-torch-eager-fp32.txt | cut -c1-200
save
timeout 60 /tmp/p/host/llmk-perf encoder_backward --backend openmp --threads 16 --precision all --budget 1 \
  --json $O/cpu-encoder_backward.json > $O/cpu-encoder_backward.txt 2>&1
echo "=== cpu encoder_backward (exit $?)"; grep -E "^(sorted|peer:copy) " $O/cpu-encoder_backward.txt | cut -c1-110
save
timeout 120 /tmp/p/host/llmk-gpt2-train $C --precision bf16 --val-every 0 --losses-out $O/cpu-llmk-bf16.json > $O/cpu-llmk-bf16.txt 2>&1
echo "=== cpu llmk bf16 (exit $?)"; grep -E "summary" $O/cpu-llmk-bf16.txt
timeout 150 python3 $R/examples/gpt2/gpt2_train_torch.py $C --precision bf16 --device cpu --threads 16 \
  --json $O/cpu-torch-eager-bf16.json --compare $O/cpu-llmk-bf16.json --tolerance 2e-2 > $O/cpu-torch-eager-bf16.txt 2>&1
echo "=== cpu torch eager bf16 (exit $?)"; grep -E "summary|passed|FAILED|Error" $O/cpu-torch-eager-bf16.txt | cut -c1-200
save
# (2b) PyTorch eager bf16, llmk bf16 again
n=torch-eager-bf16
timeout 240 python3 $R/examples/gpt2/gpt2_train_torch.py --model /tmp/t/init.bin --train /tmp/t/train.bin \
  $TRAIN --precision bf16 --json $O/$n.json --compare $O/llmk-bf16.json --tolerance 2e-2 > $O/$n.txt 2>&1
echo "=== $n (exit $?)"; grep -E "summary|passed|FAILED|Error" $O/$n.txt | cut -c1-200
save
timeout 90 /tmp/p/bin/llmk-gpt2-train $M --precision bf16 --losses-out $O/llmk-bf16-again.json > $O/llmk-bf16-again.txt 2>&1
echo "=== llmk bf16 again"; grep -E "summary" $O/llmk-bf16-again.txt
save
# (3)
timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-units base \
  /tmp/p/bin/llmk-gpt2-train $M --precision bf16 --steps 3 > $O/ncu-bf16.csv 2> $O/ncu-bf16.err
echo "=== ncu (exit $?) $(wc -l < $O/ncu-bf16.csv) lines"
save
# (5)
timeout 120 /tmp/p/bin/llmk-gpt2-train $M --precision fp32 --losses-out $O/llmk-fp32.json > $O/llmk-fp32.txt 2>&1
echo "=== llmk fp32 (exit $?)"; grep -E "summary" $O/llmk-fp32.txt
timeout 200 python3 $R/examples/gpt2/gpt2_train_torch.py --model /tmp/t/init.bin --train /tmp/t/train.bin \
  $TRAIN --precision fp32 --json $O/torch-eager-fp32.json --compare $O/llmk-fp32.json --tolerance 1e-3 > $O/torch-eager-fp32.txt 2>&1
echo "=== torch eager fp32 (exit $?)"; grep -E "summary|passed|FAILED|Error" $O/torch-eager-fp32.txt | cut -c1-200
save
