#!/bin/bash
# GPU call G6: the two forward operations (gelu_forward, layernorm_forward)
# and the framework's defaults, on 3144c74's Cuda build (bin/). (1)
# llmk_tests_cuda in 8 gtest shards of 200 s without the Large and Huge
# cases (every operation's contract tests, the forward ones' included); (2)
# llmk-perf gelu_forward and layernorm_forward --backend cuda --precision
# all, from an idle GPU and --device-time, beside peer:llmc-style and
# peer:copy, and PyTorch's rows imported (torch_baseline.py <op>: eager and
# torch.compile); gelu_backward and
# layernorm_backward again (their CUDA peers moved onto
# perf/harness/llmc_cuda.hpp). .gpu-carry/g7.tar.xz (/tmp/pack_g7.sh's
# pack, stripped). Output: $OUT/g6.tar.gz, written after each step.
set -u
R=$PWD; O=/tmp/o6; mkdir -p /tmp/p $O && cd /tmp/p && tar xJf $R/.gpu-carry/g7.tar.xz
export LD_LIBRARY_PATH=/tmp/p/lib:/usr/local/cuda/lib64 OMP_PROC_BIND=false PYTHONUNBUFFERED=1 LLMK_EXPECT_GPU=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee $O/machine.txt
save() { tar czf $OUT/g6.tar.gz -C $O .; }
t0=$SECONDS
{ pids=()  # (started in the block that waits for them)
  for i in 0 1 2 3 4 5 6 7; do
    GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i OMP_NUM_THREADS=2 timeout 200 /tmp/p/bin/llmk_tests_cuda \
      --gtest_brief=1 --gtest_filter='-*Huge*:*Large*' > $O/llmk_tests_cuda-$i.log 2>&1 & pids+=($!)
  done
  for i in 0 1 2 3 4 5 6 7; do wait ${pids[$i]}; echo "shard $i exit $?"; done
  grep -hE '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED' $O/llmk_tests_cuda-*.log | sort | uniq -c
} 2>&1 | tee $O/suite.txt
echo "suite: $((SECONDS - t0)) s"; save
for op in gelu_forward layernorm_forward; do
  c=768; [ $op = gelu_forward ] && c=3072
  timeout 120 python3 $R/perf/torch_baseline.py $op --C $c --precision all \
    --json $O/torch-$op.json > $O/torch-$op.txt 2>&1
  tail -5 $O/torch-$op.txt; save
done
perf() {  # perf NAME OP ARGS...
  timeout 90 /tmp/p/bin/llmk-perf $2 --backend cuda --precision all --budget 1 "${@:3}" \
    --json $O/$1.json > $O/$1.txt 2>/dev/null
  echo "=== $1 (exit $?)"; grep -E "^[a-z_:-]+ +Cuda" $O/$1.txt | cut -c1-150; save; }
imp() { [ -s $O/torch-$1.json ] && echo "--import $O/torch-$1.json"; }
perf gelu_forward gelu_forward $(imp gelu_forward)
perf gelu_forward-device gelu_forward --device-time
perf layernorm_forward layernorm_forward $(imp layernorm_forward)
perf layernorm_forward-device layernorm_forward --device-time
perf gelu_backward gelu_backward --device-time
perf layernorm_backward layernorm_backward --device-time
echo "all: $((SECONDS - t0)) s"; save
