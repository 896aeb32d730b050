#!/bin/bash
# GPU call G2: the host's part of a call (llmk-perf's "host us", the GPU kept
# busy), then GPT-2 124M's whole backward before (f86938b) and after, in one run.
set -u
H=$(cd "$(dirname "$0")" && pwd); mkdir -p /tmp/p && cd /tmp/p && tar xJf $H/pack.tar.xz
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1
P=/tmp/p/bin/llmk-perf
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
for op in layernorm_backward gelu_backward encoder_backward classifier_backward matmul_backward attention_backward; do
  extra=; [ $op = attention_backward ] && extra="--impl flash_mma_ds,cublas --overwrite-dqkv"
  [ $op = matmul_backward ] && extra="--impl auto,cublaslt,tiled --no-peers"
  timeout 60 $P $op --backend cuda --precision bf16,fp32 --device-time --budget 0.5 --no-peers $extra \
    --json $OUT/host-$op.json 2>/dev/null | grep -v "^\[" ; done > $OUT/host-part.txt 2>&1
cat $OUT/host-part.txt | grep -E "^[a-z_]+.*(bf16|fp32) " | cut -c1-110
timeout 240 python3 $H/gpt2_torch.py --config 124M --out /tmp/g --repeat 10 --no-compile 2>&1 | tail -3
G=/tmp/p/bin/llmk-gpt2-backward
{ for round in 1 2; do for who in after before; do
    g=$G; [ $who = before ] && g=$G-before
    echo "=== $who bf16 round $round"; timeout 60 $g --input /tmp/g/gpt2.bin --precision bf16 --repeats 20 2>&1 | grep -v "^grad\."
  done; done
  for who in after before; do
    g=$G; [ $who = before ] && g=$G-before
    echo "=== $who fp32"; timeout 60 $g --input /tmp/g/gpt2.bin --precision fp32 --repeats 10 2>&1 | grep -v "^grad\."
  done; } > $OUT/gpt2.txt 2>&1
cp /tmp/g/times.json $OUT/gpt2-torch-times.json
grep -E "^===|backward|within|exceed" $OUT/gpt2.txt
