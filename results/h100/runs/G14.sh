#!/bin/bash
# GPU call G14 (either card; the reply names it), in parts, one call each:
#   G14.sh gpu   (1) the forward operations' Cuda tests and compute-sanitizer
#                memcheck over residual_forward's; (2) llmk-perf
#                residual_forward on Cuda beside PyTorch's rows, call and
#                device time; (3) GPT-2 124M's whole backward, bf16 and fp32,
#                beside PyTorch eager.
#   G14.sh cpu   on the host's 16 cores, bound: residual_forward,
#                encoder_forward, matmul_forward (± GELU) with llmk-perf
#                --backend openmp beside PyTorch's CPU rows.
# Binaries: .gpu-carry/g14.tar.xz (bin/: the Cuda configuration's
# llmk_tests_cuda, llmk-perf, llmk-gpt2-backward; host/: the OpenMP
# configuration's llmk-perf, -march=native on a Zen 4 dev machine; lib/).
# Output: $OUT/g14-<part>.tar.gz, written after each step.
set -u
part=$1
R=$PWD; O=/tmp/o14-$part; mkdir -p /tmp/p $O
[ -x /tmp/p/bin/llmk-perf ] || (cd /tmp/p && tar xJf $R/.gpu-carry/g14.tar.xz)
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1 LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $O/machine.txt
save() { tar czf $OUT/g14-$part.tar.gz -C $O .; }
t0=$SECONDS
if [ "$part" = gpu ]; then
  F='residual_forward/*:ResidualForward*:gelu_forward/*:layernorm_forward/*:encoder_forward/*:matmul_forward/*'
  timeout 200 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 --gtest_filter="$F" > $O/suite-forward.log 2>&1
  echo "=== forward suite exit $?"; tail -3 $O/suite-forward.log
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  timeout 100 $CS --tool memcheck --error-exitcode 9 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 \
    --gtest_filter='residual_forward/*:ResidualForward*:-*Large*' > $O/sanitizer-residual.log 2>&1
  echo "=== memcheck residual_forward exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/sanitizer-residual.log | tail -3
  echo "tests: $((SECONDS - t0)) s"; save
  timeout 80 python3 $R/perf/torch_baseline.py residual_forward --precision all \
    --json $O/torch-residual_forward.json > $O/torch-residual_forward.txt 2>&1; tail -6 $O/torch-residual_forward.txt
  i=; [ -s $O/torch-residual_forward.json ] && i="--import $O/torch-residual_forward.json"
  timeout 40 /tmp/p/bin/llmk-perf residual_forward --backend cuda --precision all --budget 1 $i \
    --json $O/residual_forward.json > $O/residual_forward.txt 2>/dev/null
  timeout 40 /tmp/p/bin/llmk-perf residual_forward --backend cuda --precision all --budget 1 \
    --device-time --json $O/residual_forward-device.json > $O/residual_forward-device.txt 2>/dev/null
  echo "=== residual_forward"; grep -hE "^[a-z_:-]+\*? +Cuda" $O/residual_forward.txt $O/residual_forward-device.txt | cut -c1-130; save
  timeout 120 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --out /tmp/g --repeat 10 --no-compile 2>&1 | tail -3
  cp /tmp/g/times.json $O/gpt2-torch-times.json 2>/dev/null
  g() { echo "=== $1"; timeout 40 /tmp/p/bin/llmk-gpt2-backward --input /tmp/g/gpt2.bin --precision $1 \
          --repeats 20 2>&1 | grep -v "^grad\."; }
  { g bf16; g fp32; } > $O/gpt2.txt 2>&1
  grep -E "^===|no fences|within|exceed" $O/gpt2.txt; rm -rf /tmp/g
elif [ "$part" = cpu ]; then
  export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores OPENBLAS_CORETYPE=SkylakeX
  { lscpu | grep -E "Model name|^CPU\(s\)|MHz|L2|L3|Flags" | cut -c1-300; date -u; } > $O/host-machine.txt 2>&1
  cpu() {  # cpu NAME OP "TORCH-ONLY OPTIONS" ARGS (both sides; torch_baseline.py ignores llmk-perf's)
    local n=$1 op=$2 t=$3; shift 3
    timeout 100 python3 $R/perf/torch_baseline.py $op --device cpu --threads 16 --precision all $t "$@" \
      --json $O/cpu-torch-$n.json > $O/cpu-torch-$n.txt 2>&1
    tail -3 $O/cpu-torch-$n.txt
    local i=; [ -s $O/cpu-torch-$n.json ] && i="--import $O/cpu-torch-$n.json"
    timeout 80 /tmp/p/host/llmk-perf $op --backend openmp --threads 16 --precision all --budget 1 "$@" $i \
      --json $O/cpu-$n.json > $O/cpu-$n.txt 2>/dev/null
    echo "=== cpu $n (exit $?)"; grep -E "^[a-z_:-]+\*? +OpenMP|^peer" $O/cpu-$n.txt | cut -c1-150; save; }
  cpu residual_forward residual_forward ""
  cpu encoder_forward encoder_forward "" --zipf
  cpu matmul_forward matmul_forward --no-compile --impl tiled,kokkoskernels
  cpu matmul_forward-gelu matmul_forward --no-compile --gelu --impl tiled,kokkoskernels
fi
echo "$part: $((SECONDS - t0)) s"; save
