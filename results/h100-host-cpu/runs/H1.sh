#!/bin/bash
# Call H1 on the device machine's host CPU (16 cores): (1) the tiled GEMM's
# host tunings against OpenBLAS at GPT-2 124M's matmul shapes, M = 2048
# (perf/dev/tiled_host_bench.cpp); (2) the thread-collapse check of
# llmk-gpt2-backward at GPT-2 124M, B 4, T 64, fp32: matmul auto, kokkoskernels,
# and kokkoskernels on Debian's pthreads OpenBLAS (the plant), bound and unbound;
# (3) the whole backward with matmul tiled (the AVX-512 micro-tile) beside auto.
# Binaries built with -march=native on the Zen 4 dev machine, stripped, carried
# with their libraries (.gpu-carry/h1.tar.xz: bin/, lib/, libpth/).
set -u
R=$PWD; cd /tmp; tar xJf $R/.gpu-carry/h1.tar.xz
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores PYTHONUNBUFFERED=1 OPENBLAS_CORETYPE=SkylakeX
L() { LD_LIBRARY_PATH=/tmp/lib "$@"; }
{ lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|MHz|BogoMIPS|L2|L3|Flags" | cut -c1-300
  nvidia-smi -L; date -u; } > $OUT/machine.txt 2>&1
L timeout 150 /tmp/bin/thb 2048 3 > $OUT/tiled-host.txt 2>&1
timeout 90 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --B 4 --T 64 --device cpu --out /tmp/g --no-compile --repeat 3 --warmup 1 > $OUT/torch.txt 2>&1
cp /tmp/g/times.json $OUT/torch-B4-T64.json
G="/tmp/bin/llmk-gpt2-backward --input /tmp/g/gpt2.bin --repeats 3 --check-threads"
# run TITLE LIBS ARGS...: the example with LD_LIBRARY_PATH=LIBS, its exit status
# (1: a step collapsed, 77: the machine was not left to it).
run() { echo "=== $1"; LD_LIBRARY_PATH=$2 timeout 80 $G "${@:3}" > /tmp/out.txt 2>&1; echo "exit $?"
        grep -v "^grad\.\|^losses\|^gradient " /tmp/out.txt; }
{ run "auto, bound" /tmp/lib
  run "kokkoskernels, bound" /tmp/lib --impl matmul_backward=kokkoskernels
  run "kokkoskernels, pthreads OpenBLAS (plant), bound" /tmp/libpth:/tmp/lib --impl matmul_backward=kokkoskernels
  export OMP_PROC_BIND=false; unset OMP_PLACES
  run "kokkoskernels, pthreads OpenBLAS (plant), unbound" /tmp/libpth:/tmp/lib --impl matmul_backward=kokkoskernels
  run "auto, unbound" /tmp/lib
} > $OUT/collapse.txt 2>&1
export OMP_PROC_BIND=spread OMP_PLACES=cores
G="/tmp/bin/llmk-gpt2-backward --input /tmp/g/gpt2.bin --repeats 5"
{ run "matmul tiled, bound" /tmp/lib --impl matmul_backward=tiled
  run "auto, bound" /tmp/lib
} > $OUT/gpt2-tiled.txt 2>&1
