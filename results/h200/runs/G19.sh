#!/bin/bash
# GPU machine call G19 (either card; it ran on an H200), in parts, one machine start:
#   (1) the host's 16 cores: gelu_backward, classifier_backward and
#       gelu_forward (fp32, llmk-perf --backend openmp, their copy rows
#       beside them), the OpenMP build before commit 8ec2535 (old/: G18's
#       binaries: tanh through exp, two exponentials per logit) and at
#       e123d0d (host/: tanh's and the softmaxes' exponentials for
#       non-positive arguments, one per logit), alternately, twice each;
#   (2) the host: llmk-gpt2-train fp32 B 4 T 64, new and old, and PyTorch
#       eager fp32 on the same checkpoint and tokens (losses compared);
#   (3) the GPU: GPT-2 124M B 8 T 1024 bf16, 20 steps of llm.c's recipe,
#       llmk (HEAD's Cuda build) then torch.compile on the same files
#       (losses compared), then llmk again;
#   (4) ncu: the fp32 step's kernels (2 steps).
# Run in the order (1), (3), (2), (4): the device budget was short.
# Binaries: .gpu-carry/g19.tar.xz (bin/ Cuda llmk-gpt2-train; host/ and old/
# OpenMP llmk-perf and llmk-gpt2-train; lib/). Output: $OUT/g19.tar.gz,
# rewritten after each part.
set -u
R=$PWD; O=/tmp/o19; mkdir -p /tmp/p $O /tmp/t
(cd /tmp/p && tar xJf $R/.gpu-carry/g19.tar.xz)
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $O/machine.txt
save() { tar czf $OUT/g19.tar.gz -C $O .; }
# (1)
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores
{ lscpu | grep -E "Model name|^CPU\(s\)|MHz|L2|L3" | cut -c1-200; date -u; } > $O/host-machine.txt 2>&1
ops() {  # $1: old or host, $2: run label
  timeout 60 /tmp/p/$1/llmk-perf gelu_backward --backend openmp --threads 16 --B 8 --T 256 --impl packed \
    --budget 1 --json $O/cpu-gelu_backward-$1-$2.json > $O/cpu-gelu_backward-$1-$2.txt 2>&1
  timeout 60 /tmp/p/$1/llmk-perf classifier_backward --backend openmp --threads 16 --B 8 --T 256 --impl fused \
    --budget 1 --json $O/cpu-classifier_backward-$1-$2.json > $O/cpu-classifier_backward-$1-$2.txt 2>&1
  timeout 60 /tmp/p/$1/llmk-perf gelu_forward --backend openmp --threads 16 --B 8 --T 1024 --impl packed \
    --budget 1 --json $O/cpu-gelu_forward-$1-$2.json > $O/cpu-gelu_forward-$1-$2.txt 2>&1
  echo "=== $1 $2"; grep -hE "^(packed|fused|peer:copy) " $O/cpu-*-$1-$2.txt | cut -c1-100
}
ops old a; ops host a; ops old b; ops host b
save
/tmp/p/host/llmk-gpt2-train --write-tokens /tmp/t/train.bin --count 1000000 --V 50257 > /dev/null
timeout 60 /tmp/p/host/llmk-gpt2-train --train /tmp/t/train.bin --steps 0 --save /tmp/t/init.bin | tail -1
# (3)
export OMP_PROC_BIND=false LLMK_EXPECT_GPU=1
TRAIN="--B 8 --T 1024 --steps 20 --lr 6e-4 --warmup 5 --final-lr-frac 0.1 --weight-decay 0.1 --grad-clip 1.0"
M="--model /tmp/t/init.bin --train /tmp/t/train.bin $TRAIN --val-every 0"
timeout 90 /tmp/p/bin/llmk-gpt2-train $M --precision bf16 --losses-out $O/llmk-bf16.json > $O/llmk-bf16.txt 2>&1
echo "=== llmk bf16 (exit $?)"; grep -E "^step +(1|5|20)/|summary" $O/llmk-bf16.txt
save
timeout 240 python3 $R/examples/gpt2/gpt2_train_torch.py --model /tmp/t/init.bin --train /tmp/t/train.bin \
  $TRAIN --precision bf16 --compile --json $O/torch-compile-bf16.json --compare $O/llmk-bf16.json --tolerance 2e-2 > $O/torch-compile-bf16.txt 2>&1
echo "=== torch compile bf16 (exit $?)"; grep -E "summary|passed|FAILED|Error" $O/torch-compile-bf16.txt | cut -c1-200
save
timeout 90 /tmp/p/bin/llmk-gpt2-train $M --precision bf16 --losses-out $O/llmk-bf16-again.json > $O/llmk-bf16-again.txt 2>&1
echo "=== llmk bf16 again"; grep -E "summary" $O/llmk-bf16-again.txt
save
# (2)
export OMP_PROC_BIND=spread
C="--model /tmp/t/init.bin --train /tmp/t/train.bin --B 4 --T 64 --steps 10 --lr 6e-4 --warmup 5 --final-lr-frac 0.1 --weight-decay 0.1"
for b in host old; do
  timeout 120 /tmp/p/$b/llmk-gpt2-train $C --val-every 0 --losses-out $O/cpu-llmk-fp32-$b.json > $O/cpu-llmk-fp32-$b.txt 2>&1
  echo "=== cpu llmk fp32 $b (exit $?)"; grep -E "summary" $O/cpu-llmk-fp32-$b.txt
done
timeout 150 python3 $R/examples/gpt2/gpt2_train_torch.py $C --device cpu --threads 16 \
  --json $O/cpu-torch-eager-fp32.json --compare $O/cpu-llmk-fp32-host.json --tolerance 1e-3 > $O/cpu-torch-eager-fp32.txt 2>&1
echo "=== cpu torch eager fp32 (exit $?)"; grep -E "summary|passed|FAILED|Error" $O/cpu-torch-eager-fp32.txt | cut -c1-200
save
# (4) where the fp32 step goes: ncu's kernel durations over llmk's fp32 steps
timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-units base \
  /tmp/p/bin/llmk-gpt2-train $M --precision fp32 --steps 2 > $O/ncu-fp32.csv 2> $O/ncu-fp32.err
echo "=== ncu fp32 (exit $?) $(wc -l < $O/ncu-fp32.csv) lines"
save
