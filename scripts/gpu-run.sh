#!/usr/bin/env bash
# Runs on the GPU machine, from a bundle made by scripts/gpu-bundle.sh.
#
# usage: run.sh [tests] [sanitize] [perf] [perf-layernorm] [perf-attention] [perf-classifier]
#               [perf-encoder]
#               [-- llmk-perf arguments]
#        (default: tests sanitize perf perf-layernorm perf-attention)
#   tests     every test binary, each in $LLMK_TEST_SHARDS (8) gtest shards side
#             by side; the large (seed-shape) tests on Cuda and across backends,
#             not on the host-only binaries (slow there, and CI runs them)
#   sanitize  compute-sanitizer memcheck over the Cuda tests on small shapes,
#             racecheck over the layernorm and recompute attention tests (team
#             scratch, barriers)
#   perf      the PyTorch peer, then llmk-perf on Cuda at the seed shape
#   perf-layernorm  the same for llmk-perf layernorm_backward, every precision,
#             at GPT-2's C = 768 and 1600 (B = 8, T = 1024)
#   perf-attention  llmk-perf attention_backward, cublas, materialized and the
#             recompute variant's flash_mma_ds, flash_mma and flash, every precision, at B = 8,
#             T = 1024 and B = 2, T = 4096, with PyTorch's SDPA rows imported
#   gpt2      (not by default) the GPT-2 example at 124M, B 8, T 1024: gpt2_torch.py
#             writes its file (~8 GB) into $GPT2_DIR (default /tmp/llmk-gpt2, not
#             $OUT: too large to bring back), then llmk-gpt2-backward compares every
#             gradient with autograd's and times the backward, bf16 and fp32
#   perf-classifier  the PyTorch peer, then llmk-perf classifier_backward, fp32
#             and bf16, at GPT-2's B = 8, T = 1024, V = 50257, Vp = 50304 (not
#             a default step)
#   perf-encoder  the PyTorch peer, then llmk-perf encoder_backward, every
#             precision, at GPT-2's B = 8, T = 1024, C = 768, V = 50257: zipf
#             tokens (the peer's, imported), then uniform ones (not a default step)
# Logs and JSON go to $OUT (if set) or ./results.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
results=${OUT:-$here/results}
mkdir -p "$results"
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}  # see scripts/perf.sh
# This machine has the GPU: a test binary that finds no usable CUDA device
# fails instead of skipping (tests/test_main.cpp).
export LLMK_EXPECT_GPU=1

steps=() perf_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --) shift; perf_args=("$@"); break ;;
    *) steps+=("$1"); shift ;;
  esac
done
[ ${#steps[@]} -gt 0 ] || steps=(tests sanitize perf perf-layernorm perf-attention)

status=0
note() { printf '\n=== %s\n' "$*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv || true

for step in "${steps[@]}"; do
  case $step in
    tests)
      for t in "$here"/bin/llmk_tests_*; do
        name=$(basename "$t") filter='*'
        case $name in *_cuda|*_backends) ;; *) filter='-*Large*' ;; esac
        # In $LLMK_TEST_SHARDS gtest shards side by side (default 8): the
        # float64 references are CPU work, and one process at a time ran the
        # Cuda binary past a 10-minute call; 8 shards ran all but HugeRows
        # in 107 s on the H200's 16 cores (results/h200/h200-suite-cuda-sharded-F2.txt).
        shards=${LLMK_TEST_SHARDS:-8} pids=()
        note "$name (--gtest_filter=$filter, $shards shards)"
        for ((i = 0; i < shards; ++i)); do
          GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i OMP_PROC_BIND=false OMP_NUM_THREADS=2 \
            "$t" --gtest_brief=1 --gtest_filter="$filter" \
            --gtest_output="xml:$results/$name-shard$i.xml" > "$results/$name-shard$i.log" 2>&1 &
          pids+=($!)
        done
        for ((i = 0; i < shards; ++i)); do
          wait "${pids[$i]}" || { echo "FAILED: $name shard $i (exit $?)"; status=1; }
          grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$results/$name-shard$i.log"
        done
      done ;;
    sanitize)
      note "compute-sanitizer memcheck: llmk_tests_cuda, small shapes"
      # (not attention_backward_recompute's T = 16384: its forward alone is
      # 10¹² multiply-adds)
      compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
        "$here/bin/llmk_tests_cuda" --gtest_brief=1 \
        --gtest_filter='-*Large*:attention_backward_recompute/HugeRows.*:classifier_backward.HugeRows' \
        2>&1 | tee "$results/memcheck.log" | tail -n 25
      [ "${PIPESTATUS[0]}" = 0 ] || { echo "FAILED: memcheck"; status=1; }
      note "compute-sanitizer racecheck: llmk_tests_cuda, layernorm, recompute attention"
      compute-sanitizer --tool racecheck --error-exitcode 3 --print-limit 20 \
        "$here/bin/llmk_tests_cuda" --gtest_brief=1 \
        --gtest_filter='layernorm_backward/*:attention_flash/*:attention_backward_recompute/*:classifier_*-*Large*:*HugeRows*' \
        2>&1 | tee "$results/racecheck.log" | tail -n 25
      [ "${PIPESTATUS[0]}" = 0 ] || { echo "FAILED: racecheck"; status=1; } ;;
    perf)
      note "PyTorch peer"
      python3 "$here/torch_baseline.py" --json "$results/torch.json" "${perf_args[@]}" || status=1
      note "llmk-perf (Cuda)"
      "$here/bin/llmk-perf" --backend cuda --import "$results/torch.json" \
        --json "$results/perf-cuda.json" "${perf_args[@]}" || status=1 ;;
    perf-layernorm)
      for C in 768 1600; do
        note "PyTorch peer, layernorm_backward C=$C"
        python3 "$here/torch_baseline.py" layernorm_backward --C "$C" --precision all \
          --json "$results/torch-layernorm-C$C.json" || status=1
        note "llmk-perf layernorm_backward (Cuda) C=$C"
        "$here/bin/llmk-perf" layernorm_backward --backend cuda --C "$C" --precision all \
          --import "$results/torch-layernorm-C$C.json" \
          --json "$results/perf-layernorm-C$C.json" || status=1
      done ;;
    perf-attention)
      for shape in "8 1024" "2 4096"; do
        set -- $shape
        note "PyTorch peer, attention_backward B=$1 T=$2"
        python3 "$here/torch_baseline.py" attention_backward --B "$1" --T "$2" --precision all \
          --no-compile --json "$results/torch-attention-B$1-T$2.json" || status=1
        note "llmk-perf attention_backward (Cuda) B=$1 T=$2"
        "$here/bin/llmk-perf" attention_backward --backend cuda --B "$1" --T "$2" \
          --impl cublas,materialized,flash_mma_ds,flash_mma,flash --precision all --device-time \
          --overwrite-dqkv \
          --import "$results/torch-attention-B$1-T$2.json" \
          --json "$results/perf-attention-B$1-T$2.json" || status=1
      done ;;
    gpt2)
      gpt2_dir=${GPT2_DIR:-/tmp/llmk-gpt2}
      note "GPT-2 124M: PyTorch's file into $gpt2_dir"
      python3 "$here/gpt2_torch.py" --config 124M --out "$gpt2_dir" 2>&1 |
        tee "$results/gpt2-torch.log" || status=1
      cp "$gpt2_dir/times.json" "$results/gpt2-torch-times.json" || status=1
      for precision in bf16 fp32; do
        note "llmk-gpt2-backward 124M $precision"
        "$here/bin/llmk-gpt2-backward" --input "$gpt2_dir/gpt2.bin" --precision "$precision" \
          2>&1 | tee "$results/gpt2-$precision.log"
        [ "${PIPESTATUS[0]}" = 0 ] || { echo "FAILED: gpt2 $precision"; status=1; }
      done ;;
    perf-classifier)
      note "PyTorch peer, classifier_backward"
      python3 "$here/torch_baseline.py" classifier_backward --precision all \
        --json "$results/torch-classifier.json" || status=1
      note "llmk-perf classifier_backward (Cuda)"
      "$here/bin/llmk-perf" classifier_backward --backend cuda --precision all \
        --import "$results/torch-classifier.json" \
        --json "$results/perf-classifier.json" || status=1 ;;
    perf-encoder)
      note "PyTorch peer, encoder_backward"
      python3 "$here/torch_baseline.py" encoder_backward --B 8 --T 1024 --C 768 --V 50257 \
        --precision all --json "$results/torch-encoder.json" || status=1
      note "llmk-perf encoder_backward (Cuda), zipf tokens"
      "$here/bin/llmk-perf" encoder_backward --backend cuda --precision all --zipf \
        --import "$results/torch-encoder.json" --json "$results/perf-encoder-zipf.json" || status=1
      note "llmk-perf encoder_backward (Cuda), uniform tokens"
      "$here/bin/llmk-perf" encoder_backward --backend cuda --precision all \
        --json "$results/perf-encoder-uniform.json" || status=1 ;;
    *) echo "unknown step '$step'"; status=2 ;;
  esac
done
exit $status
