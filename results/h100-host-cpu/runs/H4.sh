#!/bin/bash
# Call H4 on the device machine's host CPU (16 cores): matmul tiled's dweight
# on tiles of 128 × 384 (ops/matmul_backward/tiled.hpp's DweightTuning).
# (1) perf/dev/tiled_host_bench.cpp: the shipped tuning (dinp 128 × 768,
# dweight 128 × 384) and the variants beside OpenBLAS, with the 16-thread FMA
# peak; (2) GPT-2 124M's whole backward at B 4 T 64 and B 8 T 256: PyTorch
# eager fp32 and bf16 autocast (gpt2_torch.py, which writes the input), llmk
# auto fp32, matmul tiled fp32, auto bf16; (3) torch.compile at B 4 T 64 last
# (its compile under a time limit). .gpu-carry/$1.tar.xz (default h4): bin/
# (the OpenMP build's llmk-gpt2-backward, thb; stripped), lib/. Everything
# lands in $OUT/$1.tar.gz (the device returns at most 8 files). Call H5 ran
# `H4.sh h5`: the binaries after tiled's GELU factor went through a row loop
# and "auto" took tiled for fp32.
set -u
PACK=${1:-h4}
R=$PWD; O=/tmp/o4; mkdir -p /tmp/h4 $O && cd /tmp/h4 && tar xJf $R/.gpu-carry/$PACK.tar.xz
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores PYTHONUNBUFFERED=1 \
  OPENBLAS_CORETYPE=SkylakeX LD_LIBRARY_PATH=/tmp/h4/lib
{ lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|MHz|BogoMIPS|L2|L3" | cut -c1-200
  date -u; python3 -c "import torch; print('torch', torch.__version__)"; } > $O/machine.txt 2>&1
timeout 150 /tmp/h4/bin/thb 2048 3 > $O/tiled-host.txt 2>&1
grep -E "peak|openblas|shipped" $O/tiled-host.txt | cut -c1-190
run() { echo "=== $1"; timeout 90 /tmp/h4/bin/llmk-gpt2-backward --input $G/gpt2.bin "${@:2}" > /tmp/out.txt 2>&1
        echo "exit $?"; grep -v "^grad\.\|^losses\|^gradient " /tmp/out.txt; }
for bt in "4 64 5" "8 256 3"; do
  set -- $bt; G=/tmp/g$1
  timeout 200 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --B $1 --T $2 --device cpu \
    --out $G --no-compile --repeat 3 --warmup 1 > $O/torch-B$1-T$2.txt 2>&1
  cp $G/times.json $O/torch-B$1-T$2.json
  { run "auto fp32" --repeats $3
    run "matmul tiled fp32" --impl matmul_backward=tiled --repeats $3
    run "auto bf16" --precision bf16 --repeats $3
  } > $O/gpt2-B$1-T$2.txt 2>&1
  grep -E "^===|no fences|PyTorch|within|exceed" $O/gpt2-B$1-T$2.txt
done
timeout 240 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --B 4 --T 64 --device cpu \
  --out /tmp/gc --repeat 3 --warmup 1 > $O/torch-compile-B4-T64.txt 2>&1
cp /tmp/gc/times.json $O/torch-compile-B4-T64.json 2>/dev/null; tail -6 $O/torch-compile-B4-T64.txt
tar czf $OUT/$PACK.tar.gz -C $O .
