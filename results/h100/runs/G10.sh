#!/bin/bash
# GPU call G10: matmul_forward (cublaslt, kokkoskernels, tiled, naive) on the
# Cuda build of its working tree, from the packs .gpu-carry/g10*.tar.xz:
# bin/ (the Cuda suite; in a later pack llmk-perf, and llmk-gpt2-backward
# where built), lib/ (the host libraries), and where built before/
# (llmk-gpt2-backward of the commit before) and host/ (an OpenMP llmk-perf).
# PART 1: (1) the Cuda suite's matmul_forward, matmul_backward (its cuBLASLt
# epilogues moved onto the widened gemm.hpp Epilogue) and the GEMM wrapper's
# tests, in 8 shards; (2) compute-sanitizer memcheck over the forward
# operations' Accuracy (matmul_forward, gelu_forward, layernorm_forward),
# racecheck over tiled's and layernorm_forward rows'.
# PART 2: (3) llmk-perf matmul_forward --backend cuda, fp32 and bf16,
# without and with --gelu, and encoder_forward --zipf, PyTorch's rows
# imported (torch_baseline.py matmul_forward, encoder_forward); the
# where the packs have them (4) GPT-2 124M's whole backward,
# after (bin/) and before (before/) alternately, bf16 and fp32; (5) on the
# host's 16 cores matmul_forward --backend openmp (host/) beside PyTorch's
# CPU rows. PART 3: the encoder's Cuda tests, forward and backward, and
# compute-sanitizer memcheck over encoder_forward's.
# Output: $OUT/g10.tar.gz.
set -u
R=$PWD; O=/tmp/o10; mkdir -p /tmp/p $O
for f in $R/.gpu-carry/g10*.tar.xz; do (cd /tmp/p && tar xJf $f); done
PART=${1:-1}  # 1: steps 1-2; 2: steps 3-5 (each pack has what its part needs)
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1 LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $O/machine.txt
save() { tar czf $OUT/g10.tar.gz -C $O .; }
t0=$SECONDS
if [ "$PART" = 1 ]; then
F='matmul_forward/*:matmul_backward/*:*Cublas*:-*Huge*:*Large*'
{ pids=()
  for i in 0 1 2 3 4 5 6 7; do
    GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i OMP_NUM_THREADS=2 timeout 170 /tmp/p/bin/llmk_tests_cuda \
      --gtest_brief=1 --gtest_filter="$F" > $O/suite-$i.log 2>&1 & pids+=($!)
  done
  for i in 0 1 2 3 4 5 6 7; do wait ${pids[$i]}; echo "shard $i exit $?"; done
  grep -hE '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED' $O/suite-*.log | sort | uniq -c
} 2>&1 | tee $O/suite.txt
echo "suite: $((SECONDS - t0)) s"; save
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
san() {  # san NAME TOOL FILTER
  timeout 150 $CS --tool $2 --error-exitcode 9 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 \
    --gtest_filter="$3" > $O/sanitizer-$1.log 2>&1
  echo "=== $1 exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $O/sanitizer-$1.log | tail -4; }
san memcheck memcheck 'matmul_forward/Accuracy.*:gelu_forward/Accuracy.*:layernorm_forward/Accuracy.*:GeluForwardInPlace.*' &
san racecheck racecheck 'matmul_forward/Accuracy.tiled_*:layernorm_forward/Accuracy.rows_*:gelu_forward/Accuracy.packed_*'
wait; echo "sanitizers: $((SECONDS - t0)) s"; save; exit 0
fi
if [ "$PART" = 3 ]; then
# PART 3: the encoder's Cuda tests (forward and backward) and a memcheck of
# encoder_forward's (a suite built after encoder_forward's registration).
timeout 120 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 --gtest_filter='encoder_forward/*:encoder_backward/*' \
  > $O/suite-encoder.log 2>&1; echo "=== encoder suite exit $?"; tail -4 $O/suite-encoder.log
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 $CS --tool memcheck --error-exitcode 9 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 \
  --gtest_filter='encoder_forward/Accuracy.*:encoder_forward/Unchecked.*:encoder_forward/BadTokens.*' \
  > $O/sanitizer-encoder.log 2>&1; echo "=== memcheck encoder_forward exit $?"
grep -E "ERROR SUMMARY|PASSED|FAILED" $O/sanitizer-encoder.log | tail -3; save
exit 0
fi
# PART 2: the GPU rows (on a later call: bin/llmk-perf built after the suite).
for g in "" --gelu; do
  n=matmul_forward${g:+-gelu}
  timeout 150 python3 $R/perf/torch_baseline.py matmul_forward $g --precision all \
    --json $O/torch-$n.json > $O/torch-$n.txt 2>&1; tail -6 $O/torch-$n.txt
  i=; [ -s $O/torch-$n.json ] && i="--import $O/torch-$n.json"
  timeout 120 /tmp/p/bin/llmk-perf matmul_forward $g --backend cuda --precision all --budget 1 $i \
    --json $O/$n.json > $O/$n.txt 2>/dev/null
  echo "=== $n (exit $?)"; grep -E "^[a-z_:-]+ +Cuda" $O/$n.txt | cut -c1-150; save
done
# encoder_forward, Zipf tokens (PyTorch's draw), fp32 and bf16.
timeout 120 python3 $R/perf/torch_baseline.py encoder_forward --precision all \
  --json $O/torch-encoder_forward.json > $O/torch-encoder_forward.txt 2>&1; tail -6 $O/torch-encoder_forward.txt
i=; [ -s $O/torch-encoder_forward.json ] && i="--import $O/torch-encoder_forward.json"
timeout 120 /tmp/p/bin/llmk-perf encoder_forward --zipf --backend cuda --precision all --budget 1 $i \
  --json $O/encoder_forward.json > $O/encoder_forward.txt 2>/dev/null
echo "=== encoder_forward (exit $?)"; grep -E "^[a-z_:-]+ +Cuda" $O/encoder_forward.txt | cut -c1-150; save
[ -x /tmp/p/bin/llmk-gpt2-backward ] && timeout 150 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --out /tmp/g --repeat 10 --no-compile 2>&1 | tail -2
gp() { echo "=== $1 $2"; timeout 40 $1/llmk-gpt2-backward --input /tmp/g/gpt2.bin --precision $2 \
        --repeats 20 2>&1 | grep -v "^grad\."; }
# before/ only where the pack has it (else compare with the last call's figures on the same GPU kind).
b() { [ -x /tmp/p/before/llmk-gpt2-backward ] && gp /tmp/p/before $1; }
if [ -x /tmp/p/bin/llmk-gpt2-backward ]; then
  { gp /tmp/p/bin bf16; b bf16; gp /tmp/p/bin bf16; b bf16; gp /tmp/p/bin fp32; b fp32; } \
    > $O/gpt2-before-after.txt 2>&1
  grep -E "^===|no fences|within|exceed" $O/gpt2-before-after.txt; save
fi
export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores OPENBLAS_CORETYPE=SkylakeX
for g in "" --gelu; do
  [ -x /tmp/p/host/llmk-perf ] || break
  n=cpu-matmul_forward${g:+-gelu}
  timeout 100 python3 $R/perf/torch_baseline.py matmul_forward $g --device cpu --threads 16 --T 256 \
    --precision all --json $O/torch-$n.json > $O/torch-$n.txt 2>&1; tail -4 $O/torch-$n.txt
  i=; [ -s $O/torch-$n.json ] && i="--import $O/torch-$n.json"
  timeout 100 /tmp/p/host/llmk-perf matmul_forward $g --backend openmp --threads 16 --T 256 \
    --precision all --budget 1 $i --json $O/$n.json > $O/$n.txt 2>/dev/null
  echo "=== $n (exit $?)"; grep -E "^[a-z_:-]+ +OpenMP" $O/$n.txt | cut -c1-150; save
done
echo "all: $((SECONDS - t0)) s"; save
