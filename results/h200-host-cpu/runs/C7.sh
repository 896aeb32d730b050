#!/bin/bash
# Call C7 on the GPU machine's host: matmul's "onednn" (oneDNN 2.6.3, Debian's
# libdnnl2 on libgomp) beside kokkoskernels (OpenBLAS 0.3.21) and tiled. Its
# contract tests on OpenMP; llmk-perf at GPT-2 124M's CPU shapes (M = 2048);
# oneDNN's verbose lines (which kernels it dispatched); GPT-2 124M's whole
# backward with matmul auto (fp32: kokkoskernels, bf16: onednn) against onednn
# in fp32 and the previous bf16 choice (tiled).
# Binaries of the onednn branch, built with -march=native on a Zen 4 dev
# machine, stripped and carried with their libraries (pack.tar.xz: bin/, lib/).
set -u
H=$(cd "$(dirname "$0")" && pwd); cd /tmp; tar xJf $H/pack.tar.xz
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores PYTHONUNBUFFERED=1 OPENBLAS_CORETYPE=SkylakeX
L() { LD_LIBRARY_PATH=/tmp/lib "$@"; }  # the carried libraries for llmk's binaries only (not python3's)
P=/tmp/bin/llmk-perf G=/tmp/bin/llmk-gpt2-backward
{ lscpu | grep -E "Model name|^CPU\(s\)|Flags" | cut -c1-400; date -u
  L timeout 150 /tmp/bin/llmk_tests_openmp --gtest_filter='*matmul*onednn*:HostBlas.*:-*HugeRows*' 2>&1 |
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? (from .* )?ran|^\[  FAILED|Failure" | head -40
} > $OUT/tests.txt 2>&1
L env ONEDNN_VERBOSE=1 DNNL_VERBOSE=1 timeout 30 $P --threads 16 --B 8 --T 256 --C 768 --OC 768 --impl onednn --precision fp32,bf16,bf16-fp32grad --budget 0.2 --repeat 2 --warmup 0 --no-check --no-peers 2>&1 |
  grep -E "^(dnnl|onednn)_verbose" | cut -d, -f1-7 | sort | uniq -c > $OUT/verbose.txt
mkdir -p /tmp/mm
{ for s in "768 2304" "768 768" "768 3072" "3072 768" "768 50304"; do
    set -- $s; echo "=== C $1 OC $2"
    L timeout 50 $P --threads 16 --B 8 --T 256 --C $1 --OC $2 --impl onednn,kokkoskernels,tiled --precision fp32,bf16 --budget 1 --no-check --no-peers --json /tmp/mm/mm-C$1-OC$2.json 2>&1 | grep -A9 "^llmk-perf:"
  done; } > $OUT/matmul.txt 2>&1
tar cf $OUT/mm-json.tar -C /tmp mm
gpt2() { echo "=== $*"; L timeout 90 "$@" 2>&1 | grep -v "^grad\.\|^losses\|^gradient " ; }
{ for cfg in "8 256" "4 64"; do
    set -- $cfg; B=$1; T=$2; d=/tmp/g$B-$T; echo "##### B $B T $T"
    timeout 150 python3 $H/gpt2_torch.py --config 124M --B $B --T $T --device cpu --out $d --no-compile --repeat 3 --warmup 1 2>&1 | tail -4
    cp $d/times.json $OUT/torch-B$B-T$T.json
    if [ $B = 8 ]; then
      gpt2 $G --input $d/gpt2.bin --repeats 5
      gpt2 $G --input $d/gpt2.bin --repeats 5 --impl matmul_backward=onednn
      gpt2 $G --input $d/gpt2.bin --repeats 3 --precision bf16
    else
      gpt2 $G --input $d/gpt2.bin --repeats 5 --precision bf16
      gpt2 $G --input $d/gpt2.bin --repeats 5 --precision bf16 --impl matmul_backward=tiled
      gpt2 $G --input $d/gpt2.bin --repeats 5
      gpt2 $G --input $d/gpt2.bin --repeats 5 --impl matmul_backward=onednn
    fi
  done; } > $OUT/gpt2.txt 2>&1
echo done; cat $OUT/tests.txt $OUT/verbose.txt; grep -E "^=== |^onednn|^kokkoskernels|^tiled" $OUT/matmul.txt; grep -E "^=== |^#####|llmk backward|PyTorch backward|^implementations|within|exceed" $OUT/gpt2.txt
