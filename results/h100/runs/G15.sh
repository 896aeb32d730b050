#!/bin/bash
# GPU call G15 (either card; the reply names it), in parts, one call each:
#   G15.sh gpu   (1) the optimizer operations' Cuda tests (adamw, squared_norm,
#                their Large shapes too), compute-sanitizer memcheck over both
#                and racecheck over squared_norm's team reductions; (2)
#                llmk-perf adamw (± master weights) and squared_norm on Cuda
#                beside PyTorch's rows; (3) GPT-2 124M's whole backward, bf16
#                and fp32, beside PyTorch eager.
#   G15.sh cpu   on the host's 16 cores, bound: adamw (± master) and
#                squared_norm with llmk-perf --backend openmp beside PyTorch's
#                CPU rows.
#   G15.sh all   gpu's (1) and (2), then cpu's, then gpu's (3) where the
#                call's 560 s leave room (one machine start for all).
#   G15.sh short gpu's (1) and (2) alone.
# Binaries: .gpu-carry/g15.tar.xz (bin/: the Cuda configuration's
# llmk_tests_cuda, llmk-perf, llmk-gpt2-backward; host/: the OpenMP
# configuration's llmk-perf, -march=native on a Zen 4 dev machine; lib/).
# Output: $OUT/g15-<part>.tar.gz, written after each step.
set -u
part=$1
R=$PWD; O=/tmp/o15-$part; mkdir -p /tmp/p $O
[ -x /tmp/p/bin/llmk-perf ] || (cd /tmp/p && tar xJf $R/.gpu-carry/g15.tar.xz)
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1 LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $O/machine.txt
save() { tar czf $OUT/g15-$part.tar.gz -C $O .; }
t0=$SECONDS
gpu_tests_and_perf() {
  F='adamw/*:AdamW*:squared_norm/*'
  timeout 120 /tmp/p/bin/llmk_tests_cuda --gtest_filter="$F" > $O/suite-optimizer.log 2>&1
  echo "=== optimizer suite exit $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $O/suite-optimizer.log | head -12
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  timeout 100 $CS --tool memcheck --error-exitcode 9 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 \
    --gtest_filter="$F:-*Large*:*Concurrency*" > $O/sanitizer-memcheck.log 2>&1
  echo "=== memcheck exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/sanitizer-memcheck.log | tail -3
  timeout 60 $CS --tool racecheck --error-exitcode 9 /tmp/p/bin/llmk_tests_cuda --gtest_brief=1 \
    --gtest_filter='squared_norm/Accuracy.*:squared_norm/Determinism.*' > $O/sanitizer-racecheck.log 2>&1
  echo "=== racecheck exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $O/sanitizer-racecheck.log | tail -3
  echo "tests: $((SECONDS - t0)) s"; save
  gpu() {  # gpu NAME OP ARGS (both sides)
    local n=$1 op=$2; shift 2
    timeout 60 python3 $R/perf/torch_baseline.py $op --precision all "$@" \
      --json $O/torch-$n.json > $O/torch-$n.txt 2>&1; tail -4 $O/torch-$n.txt
    local i=; [ -s $O/torch-$n.json ] && i="--import $O/torch-$n.json"
    timeout 40 /tmp/p/bin/llmk-perf $op --backend cuda --precision all --budget 1 "$@" $i \
      --json $O/$n.json > $O/$n.txt 2>/dev/null
    timeout 40 /tmp/p/bin/llmk-perf $op --backend cuda --precision all --budget 1 "$@" \
      --device-time --json $O/$n-device.json > $O/$n-device.txt 2>/dev/null
    echo "=== $n"; grep -hE "^[a-z_:-]+\*? +Cuda" $O/$n.txt $O/$n-device.txt | cut -c1-140; save; }
  gpu adamw adamw
  gpu adamw-master adamw --master
  gpu squared_norm squared_norm
}
gpt2() {
  timeout 120 python3 $R/examples/gpt2/gpt2_torch.py --config 124M --out /tmp/g --repeat 10 --no-compile 2>&1 | tail -3
  cp /tmp/g/times.json $O/gpt2-torch-times.json 2>/dev/null
  g() { echo "=== $1"; timeout 40 /tmp/p/bin/llmk-gpt2-backward --input /tmp/g/gpt2.bin --precision $1 \
          --repeats 20 2>&1 | grep -v "^grad\."; }
  { g bf16; g fp32; } > $O/gpt2.txt 2>&1
  grep -E "^===|no fences|within|exceed" $O/gpt2.txt; rm -rf /tmp/g
}
host_perf() {
  export OMP_NUM_THREADS=16 OMP_PROC_BIND=spread OMP_PLACES=cores OPENBLAS_CORETYPE=SkylakeX
  { lscpu | grep -E "Model name|^CPU\(s\)|MHz|L2|L3|Flags" | cut -c1-300; date -u; } > $O/host-machine.txt 2>&1
  cpu() {  # cpu NAME OP ARGS (both sides; torch_baseline.py ignores llmk-perf's)
    local n=$1 op=$2; shift 2
    timeout 80 python3 $R/perf/torch_baseline.py $op --device cpu --threads 16 --precision all \
      --repeat 20 --warmup 3 "$@" \
      --json $O/cpu-torch-$n.json > $O/cpu-torch-$n.txt 2>&1
    tail -4 $O/cpu-torch-$n.txt
    local i=; [ -s $O/cpu-torch-$n.json ] && i="--import $O/cpu-torch-$n.json"
    timeout 60 /tmp/p/host/llmk-perf $op --backend openmp --threads 16 --precision all --budget 1 "$@" $i \
      --json $O/cpu-$n.json > $O/cpu-$n.txt 2>/dev/null
    echo "=== cpu $n (exit $?)"; grep -E "^[a-z_:-]+\*? +OpenMP|^peer" $O/cpu-$n.txt | cut -c1-150; save; }
  cpu adamw adamw
  cpu adamw-master adamw --master
  cpu squared_norm squared_norm
}
case $part in
  gpu) gpu_tests_and_perf; gpt2 ;;
  cpu) host_perf ;;
  all) gpu_tests_and_perf; host_perf; [ $SECONDS -lt 330 ] && gpt2 ;;
  short) gpu_tests_and_perf ;;
esac
echo "$part: $((SECONDS - t0)) s"; save
