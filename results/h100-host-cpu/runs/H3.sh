#!/bin/bash
# Call H3 on the device machine's host CPU (16 cores): (1) perf/dev/tiled_host_bench.cpp
# with its FMA peak measured over 2·10⁷ iterations a run (.gpu-carry/h2.tar.xz;
# H1's 2·10⁶ ran too short); (2) GPT-2 124M's whole backward at B 8 T 256:
# PyTorch eager fp32 and bf16 autocast (gpt2_torch.py, which also writes the
# input), llmk with every implementation auto (fp32, bf16) and with matmul
# tiled (fp32). llmk's binaries are H1's (.gpu-carry/h1.tar.xz: 6339301's
# code; what came after changed no host kernel).
set -u
R=$PWD; cd /tmp; mkdir -p h2; tar xJf $R/.gpu-carry/h1.tar.xz; tar xJf $R/.gpu-carry/h2.tar.xz -C h2
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores PYTHONUNBUFFERED=1 OPENBLAS_CORETYPE=SkylakeX
{ lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|MHz|BogoMIPS|L2|L3" | cut -c1-200
  nvidia-smi -L; date -u; } > $OUT/machine.txt 2>&1
LD_LIBRARY_PATH=/tmp/h2/lib timeout 130 /tmp/h2/thb 2048 2 > $OUT/tiled-host.txt 2>&1
timeout 200 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --B 8 --T 256 --device cpu \
  --out /tmp/g --no-compile --repeat 3 --warmup 1 > $OUT/torch.txt 2>&1
cp /tmp/g/times.json $OUT/torch-B8-T256.json
G="/tmp/bin/llmk-gpt2-backward --input /tmp/g/gpt2.bin --repeats 3"
run() { echo "=== $1"; LD_LIBRARY_PATH=/tmp/lib timeout 75 $G "${@:2}" > /tmp/out.txt 2>&1; echo "exit $?"
        grep -v "^grad\.\|^losses\|^gradient " /tmp/out.txt; }
{ run "auto fp32"
  run "matmul tiled fp32" --impl matmul_backward=tiled
  run "auto bf16" --precision bf16
} > $OUT/gpt2-B8-T256.txt 2>&1
