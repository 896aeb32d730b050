#!/bin/bash
# GPU call G12 (asked for either card, given an H200): encoder_forward's packed kernel with its index arithmetic in
# 32 bits (a3ae537's build: .gpu-carry/g12.tar.xz, bin/ the Cuda suite and
# llmk-perf): (1) the encoder's Cuda tests (forward and backward) and
# compute-sanitizer memcheck over encoder_forward's; (2) llmk-perf
# encoder_forward --zipf, fp32 and bf16: device time without the tokens'
# check (G11's table before the change), then call time with and without it,
# PyTorch's rows re-timed and imported. Output: $OUT/g12.tar.gz.
set -u
R=$PWD; O=/tmp/o12; mkdir -p /tmp/p $O
(cd /tmp/p && tar xJf $R/.gpu-carry/g12.tar.xz)
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1 LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $O/machine.txt
save() { tar czf $OUT/g12.tar.gz -C $O .; }
timeout 120 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 --gtest_filter='encoder_forward/*:encoder_backward/*' \
  > $O/suite-encoder.log 2>&1; echo "=== encoder suite exit $?"; tail -3 $O/suite-encoder.log
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 $CS --tool memcheck --error-exitcode 9 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 \
  --gtest_filter='encoder_forward/*:-*Large*' > $O/sanitizer-encoder.log 2>&1
echo "=== memcheck encoder_forward exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/sanitizer-encoder.log | tail -3; save
timeout 120 python3 $R/perf/torch_baseline.py encoder_forward --precision all \
  --json $O/torch-encoder_forward.json > $O/torch-encoder_forward.txt 2>&1; tail -6 $O/torch-encoder_forward.txt
i=; [ -s $O/torch-encoder_forward.json ] && i="--import $O/torch-encoder_forward.json"
perf() {  # perf NAME ARGS...
  local n=$1; shift
  timeout 100 /tmp/p/bin/llmk-perf encoder_forward --zipf --backend cuda --precision all --budget 1 "$@" \
    --json $O/$n.json > $O/$n.txt 2>/dev/null
  echo "=== $n (exit $?)"; grep -E "^[a-z_:-]+\*? +Cuda" $O/$n.txt | cut -c1-130; save; }
perf encoder_forward-unchecked-device --no-token-check --device-time --no-peers
perf encoder_forward $i
perf encoder_forward-unchecked --no-token-check $i
