#!/bin/bash
# Call H6, after G5 in the same device call: GPT-2 124M's backward at B 8,
# T 256 on the host CPU (16 threads, bound), PyTorch eager and llmk `auto`
# (matmul tiled since 2c787ce) alternately, so that a drift of the host's
# speed shows: torch, llmk fp32, llmk bf16, torch again, llmk fp32 again.
# Binaries: .gpu-carry/h5.tar.xz (2c787ce's OpenMP build, as H5). Output:
# $OUT/h6.tar.gz, written again after each step (the call may end first).
set -u
R=$PWD; O=/tmp/o6; mkdir -p /tmp/h6 $O && cd /tmp/h6 && tar xJf $R/.gpu-carry/h5.tar.xz
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores PYTHONUNBUFFERED=1 \
  OPENBLAS_CORETYPE=SkylakeX LD_LIBRARY_PATH=/tmp/h6/lib
{ lscpu | grep -E "Model name|^CPU\(s\)|MHz|BogoMIPS|L2|L3"; date -u; } > $O/machine.txt 2>&1
torch() { timeout 100 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --B 8 --T 256 --device cpu \
    --out /tmp/g6 --no-compile --repeat 3 --warmup 1 > $O/torch-$1.txt 2>&1
  cp /tmp/g6/times.json $O/torch-$1.json; grep "PyTorch backward" $O/torch-$1.txt; }
llmk() { echo "=== llmk $1"; timeout 60 /tmp/h6/bin/llmk-gpt2-backward --input /tmp/g6/gpt2.bin \
    --repeats 3 "${@:2}" 2>&1 | grep -v "^grad\.\|^losses\|^gradient " > $O/llmk-$1.txt
  grep -E "no fences|within|exceed" $O/llmk-$1.txt; }
save() { tar czf $OUT/h6.tar.gz -C $O .; }
torch 1; llmk fp32-1; save; llmk bf16 --precision bf16; save; torch 2; save; llmk fp32-2; save
