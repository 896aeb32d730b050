#!/bin/bash
# GPU call G16 (either card; the reply names it), in parts:
#   G16.sh gpu   (1) attention_forward's Cuda tests and the recompute
#                backward's (whose flash_mma tiles moved to a shared header
#                and whose flash dq products became the forward's too),
#                compute-sanitizer memcheck over attention_forward without
#                Large and racecheck over its Accuracy tests (shared-memory
#                tiles); (2) llmk-perf attention_forward on Cuda beside
#                PyTorch's scaled_dot_product_attention (call time, then
#                device time), and attention_backward's recompute rows
#                (flash_mma_ds, flash_mma, flash) as a check that they kept
#                their figures.
#                (3) GPT-2 124M (gpt2_torch.py's file and its forward and
#                backward times, eager): llmk-gpt2-backward --forward, bf16
#                and fp32: llmk's whole forward against PyTorch's
#                activations, timed, then the backward from it.
#   G16.sh cpu   on the host's 16 cores, bound: attention_forward with
#                llmk-perf --backend openmp beside PyTorch's CPU rows.
#   G16.sh all   both, one machine start.
# Binaries: .gpu-carry/g16.tar.xz (bin/: the Cuda configuration's
# llmk_tests_cuda linked from test_attention_forward.cpp and
# test_attention_recompute.cpp, llmk-perf, llmk-gpt2-backward; host/: the OpenMP configuration's
# llmk-perf, -march=native on the development machine; lib/).
# Output: $OUT/g16-<part>.tar.gz, written after each step.
set -u
part=$1
R=$PWD; O=/tmp/o16-$part; mkdir -p /tmp/p $O
[ -x /tmp/p/bin/llmk-perf ] || (cd /tmp/p && tar xJf $R/.gpu-carry/g16.tar.xz)
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1 LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $O/machine.txt
save() { tar czf $OUT/g16-$part.tar.gz -C $O .; }
t0=$SECONDS
gpu_tests_and_perf() {
  F='attention_forward/*:attention_backward_recompute/*'
  timeout 150 /tmp/p/bin/llmk_tests_cuda --gtest_filter="$F" > $O/suite-attention.log 2>&1
  echo "=== attention suite exit $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $O/suite-attention.log | head -12
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  timeout 100 $CS --tool memcheck --error-exitcode 9 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 \
    --gtest_filter='attention_forward/*:-*Large*:*Concurrency*' > $O/sanitizer-memcheck.log 2>&1
  echo "=== memcheck exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/sanitizer-memcheck.log | tail -3
  timeout 80 $CS --tool racecheck --error-exitcode 9 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 \
    --gtest_filter='attention_forward/Accuracy.*' > $O/sanitizer-racecheck.log 2>&1
  echo "=== racecheck exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $O/sanitizer-racecheck.log | tail -3
  echo "tests: $((SECONDS - t0)) s"; save
  timeout 90 python3 $R/perf/torch_baseline.py attention_forward --precision all \
    --json $O/torch-attention_forward.json > $O/torch-attention_forward.txt 2>&1
  tail -5 $O/torch-attention_forward.txt
  i=; [ -s $O/torch-attention_forward.json ] && i="--import $O/torch-attention_forward.json"
  timeout 60 /tmp/p/bin/llmk-perf attention_forward --backend cuda --precision all --budget 1 $i \
    --json $O/attention_forward.json > $O/attention_forward.txt 2>/dev/null
  timeout 60 /tmp/p/bin/llmk-perf attention_forward --backend cuda --precision all --budget 1 \
    --device-time --json $O/attention_forward-device.json > $O/attention_forward-device.txt 2>/dev/null
  timeout 90 /tmp/p/bin/llmk-perf attention_backward --backend cuda --precision all --budget 1 \
    --impl flash_mma_ds,flash_mma,flash --overwrite-dqkv \
    --json $O/attention_backward_recompute.json > $O/attention_backward_recompute.txt 2>/dev/null
  echo "=== perf"; grep -hE "^[a-z_:-]+\*? +Cuda" $O/attention_forward.txt $O/attention_forward-device.txt \
    $O/attention_backward_recompute.txt | cut -c1-150; save
}
gpt2() {
  timeout 200 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --out /tmp/g --repeat 10 \
    --no-compile 2>&1 | tail -6
  cp /tmp/g/times.json $O/gpt2-torch-times.json 2>/dev/null
  g() { echo "=== $1"; timeout 60 /tmp/p/bin/llmk-gpt2-backward --input /tmp/g/gpt2.bin --precision $1 \
          --forward --repeats 20 2>&1 | grep -v "^grad\."; }
  { g bf16; g fp32; } > $O/gpt2.txt 2>&1
  grep -E "^===|llmk forward|FAIL|within|no fences" $O/gpt2.txt; rm -rf /tmp/g; save
}
host_perf() {
  export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores
  { lscpu | grep -E "Model name|^CPU\(s\)|MHz|L2|L3|Flags" | cut -c1-300; date -u; } > $O/host-machine.txt 2>&1
  timeout 120 python3 $R/perf/torch_baseline.py attention_forward --device cpu --threads 16 \
    --precision all --repeat 20 --warmup 3 \
    --json $O/cpu-torch-attention_forward.json > $O/cpu-torch-attention_forward.txt 2>&1
  tail -4 $O/cpu-torch-attention_forward.txt
  i=; [ -s $O/cpu-torch-attention_forward.json ] && i="--import $O/cpu-torch-attention_forward.json"
  timeout 90 /tmp/p/host/llmk-perf attention_forward --backend openmp --threads 16 --precision all \
    --budget 1 $i --json $O/cpu-attention_forward.json > $O/cpu-attention_forward.txt 2>/dev/null
  echo "=== cpu attention_forward (exit $?)"; grep -E "^[a-z_:-]+\*? +OpenMP|^peer" $O/cpu-attention_forward.txt | cut -c1-150; save
}
case $part in
  gpu) gpu_tests_and_perf; gpt2 ;;
  cpu) host_perf ;;
  all) gpu_tests_and_perf; gpt2; host_perf ;;
esac
echo "$part: $((SECONDS - t0)) s"; save
