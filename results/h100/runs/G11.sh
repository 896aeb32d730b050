#!/bin/bash
# GPU call G11, after G10 (its pack .gpu-carry/g10b.tar.xz: llmk-perf of the
# same build): the device time of matmul_forward (± --gelu) and of
# encoder_forward with and without the tokens' check (--no-token-check),
# fp32 and bf16, PyTorch's rows of G10 not imported (its device-time
# figures are the -kernels rows). Output: $OUT/g11.tar.gz.
set -u
R=$PWD; O=/tmp/o11; mkdir -p /tmp/p $O
(cd /tmp/p && tar xJf $R/.gpu-carry/g10b.tar.xz)
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $O/machine.txt
save() { tar czf $OUT/g11.tar.gz -C $O .; }
run() {  # run NAME ARGS...
  local n=$1; shift
  timeout 100 /tmp/p/bin/llmk-perf "$@" --backend cuda --precision all --budget 1 --device-time \
    --no-peers --json $O/$n.json > $O/$n.txt 2>/dev/null
  echo "=== $n (exit $?)"; grep -E "^[a-z_:-]+ +Cuda" $O/$n.txt | cut -c1-130; save; }
run matmul_forward-device matmul_forward --impl cublaslt,tiled
run matmul_forward-gelu-device matmul_forward --gelu --impl cublaslt,tiled
run encoder_forward-device encoder_forward --zipf
run encoder_forward-unchecked-device encoder_forward --zipf --no-token-check
# and the call time (the host's part included) without the check
timeout 100 /tmp/p/bin/llmk-perf encoder_forward --zipf --no-token-check --backend cuda --precision all \
  --budget 1 --no-peers --json $O/encoder_forward-unchecked.json > $O/encoder_forward-unchecked.txt 2>/dev/null
echo "=== encoder_forward-unchecked (exit $?)"; grep -E "^[a-z_:-]+ +Cuda" $O/encoder_forward-unchecked.txt | cut -c1-130; save
